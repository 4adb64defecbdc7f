//! iperf3's RSA user authentication (iperf3 built with OpenSSL: `iperf3
//! --version` lists "authentication"), both roles.
//!
//! The client encrypts `user: U\npwd:  P\nts:   T` with the server's public
//! key ([`token`]) and sends it as the parameter block's `authtoken`; the
//! server decrypts it with its private key, refuses a timestamp more than
//! `--time-skew-threshold` seconds (default 10) from its own clock, and looks
//! the user up in the authorized users file ([`users`]). Every refusal reaches
//! the client as iperf3's error 142, "test authorization failed"; the server's
//! log says which check failed.
//!
//! Padding: iperf3 up to 3.16 encrypts with PKCS#1 v1.5 only; 3.17 made OAEP
//! (SHA-1, OpenSSL's default) the default and added `--use-pkcs1-padding` for
//! the older peers. Both ends must agree: [`Padding::Pkcs1`] against 3.12–3.16,
//! [`Padding::Oaep`] against 3.17 and later (and between hlctl's ends).
//!
//! Beyond iperf3: a token the server has accepted once is refused when it
//! comes again within its validity window (iperf3 does not check replays).

pub(crate) mod token;
pub(crate) mod users;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rsa::{RsaPrivateKey, RsaPublicKey};
use sha2::{Digest, Sha256};

use token::Credentials;
use users::Verdict;

/// iperf3's "test authorization failed".
pub(crate) const IEAUTHTEST: i32 = 142;
/// iperf3's default `--time-skew-threshold` (seconds).
pub const DEFAULT_TIME_SKEW_S: u32 = 10;

/// The RSA padding of the token.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Padding {
    /// OAEP with SHA-1: iperf3 3.17 and later by default.
    #[default]
    Oaep,
    /// PKCS#1 v1.5: iperf3 3.12–3.16, and 3.17+ with `--use-pkcs1-padding`.
    Pkcs1,
}

/// Why credentials or keys cannot be used (before any test).
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("cannot read {what} {}: {source}", path.display())]
    Read {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not {what} in PEM ({detail})", path.display())]
    BadKey {
        what: &'static str,
        path: PathBuf,
        detail: String,
    },
    #[error("invalid {what}: {why}")]
    BadCredential { what: &'static str, why: String },
    #[error("cannot encrypt the authentication token: {0}")]
    Encrypt(String),
}

/// Why the server refused a client's token. The client hears only
/// "test authorization failed" (iperf3's error 142), as from iperf3.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Refusal {
    #[error("the client sent no credentials (no authtoken)")]
    NoToken,
    #[error(
        "the token does not decrypt with this server's private key and {0:?} padding \
         (another key, or the other padding: iperf3 3.12-3.16 clients need --use-pkcs1-padding here)"
    )]
    Undecryptable(Padding),
    #[error(
        "user '{user}': the token's time {ts} is {skew} s from this server's clock (threshold {threshold} s)"
    )]
    Skew {
        user: String,
        ts: i64,
        skew: i64,
        threshold: u32,
    },
    #[error("unknown user '{0}'")]
    UnknownUser(String),
    #[error("user '{0}': wrong password")]
    WrongPassword(String),
    #[error("user '{0}': this token was accepted before (a replay)")]
    Replayed(String),
    #[error("cannot read the authorized users file {path}: {why}")]
    UsersFile { path: String, why: String },
}

/// A client's credentials and the server's public key (`--username`,
/// `IPERF3_PASSWORD`, `--rsa-public-key-path`, `--use-pkcs1-padding`).
#[derive(Clone, PartialEq)]
pub struct ClientAuth {
    username: String,
    password: String,
    key: RsaPublicKey,
    padding: Padding,
}

impl std::fmt::Debug for ClientAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientAuth")
            .field("username", &self.username)
            .field("password", &"<hidden>")
            .field("padding", &self.padding)
            .finish()
    }
}

/// A user name or password the token's text can carry: iperf3's server
/// reads each as one word.
fn check_word(what: &'static str, s: &str) -> Result<(), AuthError> {
    let why = if s.is_empty() {
        "it is empty"
    } else if s.chars().any(char::is_whitespace) {
        "it contains white space, which iperf3's token cannot carry"
    } else {
        return Ok(());
    };
    Err(AuthError::BadCredential {
        what,
        why: why.into(),
    })
}

impl ClientAuth {
    /// Credentials for the server whose public key is in `public_key`.
    pub fn load(
        username: &str,
        password: &str,
        public_key: &Path,
        padding: Padding,
    ) -> Result<ClientAuth, AuthError> {
        check_word("user name", username)?;
        check_word("password", password)?;
        Ok(ClientAuth {
            username: username.into(),
            password: password.into(),
            key: read_public_key(public_key)?,
            padding,
        })
    }

    /// A fresh token, stamped `now` (Unix seconds).
    pub(crate) fn token(&self, now: i64) -> Result<String, AuthError> {
        let c = Credentials {
            username: self.username.clone(),
            password: self.password.clone(),
            ts: now,
        };
        token::encode(&c, &self.key, self.padding)
    }
}

/// The server's side: its private key, the users file, the skew allowed,
/// and the tokens accepted within their validity window.
pub struct ServerAuth {
    key: RsaPrivateKey,
    users: PathBuf,
    skew_s: u32,
    padding: Padding,
    /// (the token's time, SHA-256 of its ciphertext), oldest first.
    accepted: Mutex<VecDeque<(i64, [u8; 32])>>,
}

impl std::fmt::Debug for ServerAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerAuth")
            .field("users", &self.users)
            .field("skew_s", &self.skew_s)
            .field("padding", &self.padding)
            .finish()
    }
}

impl PartialEq for ServerAuth {
    fn eq(&self, o: &ServerAuth) -> bool {
        self.key == o.key
            && self.users == o.users
            && self.skew_s == o.skew_s
            && self.padding == o.padding
    }
}

impl ServerAuth {
    /// Load the private key; the users file must be readable now (it is
    /// read again at each test).
    pub fn load(
        private_key: &Path,
        users: &Path,
        skew_s: u32,
        padding: Padding,
    ) -> Result<ServerAuth, AuthError> {
        let key = read_private_key(private_key)?;
        users::read(users).map_err(|source| AuthError::Read {
            what: "the authorized users file",
            path: users.into(),
            source,
        })?;
        Ok(ServerAuth {
            key,
            users: users.into(),
            skew_s: skew_s.max(1),
            padding,
            accepted: Mutex::new(VecDeque::new()),
        })
    }

    /// Check a client's `authtoken` at `now` (Unix seconds): the user name
    /// when accepted.
    pub(crate) fn check(&self, authtoken: Option<&str>, now: i64) -> Result<String, Refusal> {
        let sealed = authtoken
            .and_then(token::ciphertext)
            .ok_or(Refusal::NoToken)?;
        let c = token::decode(&sealed, &self.key, self.padding)
            .ok_or(Refusal::Undecryptable(self.padding))?;
        let skew = now - c.ts;
        if skew.abs() > i64::from(self.skew_s) {
            return Err(Refusal::Skew {
                user: c.username,
                ts: c.ts,
                skew,
                threshold: self.skew_s,
            });
        }
        let text = users::read(&self.users).map_err(|e| Refusal::UsersFile {
            path: self.users.display().to_string(),
            why: e.to_string(),
        })?;
        match users::judge(&text, &c.username, &c.password) {
            Verdict::Accepted => {}
            Verdict::WrongPassword => return Err(Refusal::WrongPassword(c.username)),
            Verdict::UnknownUser => return Err(Refusal::UnknownUser(c.username)),
        }
        self.first_use(&sealed, c.ts, now)
            .then_some(c.username.clone())
            .ok_or(Refusal::Replayed(c.username))
    }

    /// Remember an accepted token; false if it was accepted before.
    fn first_use(&self, sealed: &[u8], ts: i64, now: i64) -> bool {
        let id: [u8; 32] = Sha256::digest(sealed).into();
        let mut seen = self.accepted.lock().unwrap_or_else(|p| p.into_inner());
        let oldest_valid = now - i64::from(self.skew_s);
        seen.retain(|&(t, _)| t >= oldest_valid);
        if seen.iter().any(|&(_, s)| s == id) {
            return false;
        }
        seen.push_back((ts, id));
        true
    }
}

/// A client's view of the server's error 142: what to check, by what it sent.
pub(crate) fn explain_refusal(
    e: crate::bench::net::NetError,
    sent: Option<&ClientAuth>,
) -> crate::bench::net::NetError {
    use crate::bench::net::NetError;
    let hint = match (&e, sent) {
        (
            NetError::ServerError {
                i_errno: IEAUTHTEST,
                ..
            },
            None,
        ) => "the server requires credentials: give --username and --rsa-public-key-path \
             (the server's public key), and the password in IPERF3_PASSWORD"
            .to_string(),
        (
            NetError::ServerError {
                i_errno: IEAUTHTEST,
                ..
            },
            Some(a),
        ) => format!(
            "user '{}': check the password (IPERF3_PASSWORD), that the user is in the \
             server's authorized users file, the server's public key, the clocks (iperf3 \
             allows 10 s by default) and the padding: {}",
            a.username,
            match a.padding {
                Padding::Oaep =>
                    "OAEP was sent; an iperf3 3.12-3.16 server needs --use-pkcs1-padding",
                Padding::Pkcs1 =>
                    "PKCS#1 v1.5 was sent (--use-pkcs1-padding); iperf3 3.17+ and hlctl serve without that flag need it left out",
            }
        ),
        _ => return e,
    };
    NetError::AuthRejected { hint }
}

fn read_pem(what: &'static str, path: &Path) -> Result<String, AuthError> {
    std::fs::read_to_string(path).map_err(|source| AuthError::Read {
        what,
        path: path.into(),
        source,
    })
}

/// A public key as `openssl rsa -pubout` writes it (`BEGIN PUBLIC KEY`),
/// or PKCS#1's `BEGIN RSA PUBLIC KEY`.
fn read_public_key(path: &Path) -> Result<RsaPublicKey, AuthError> {
    use rsa::pkcs1::DecodeRsaPublicKey;
    use rsa::pkcs8::DecodePublicKey;
    let pem = read_pem("the RSA public key", path)?;
    RsaPublicKey::from_public_key_pem(&pem)
        .or_else(|e| RsaPublicKey::from_pkcs1_pem(&pem).map_err(|_| e))
        .map_err(|e| AuthError::BadKey {
            what: "an RSA public key",
            path: path.into(),
            detail: e.to_string(),
        })
}

/// A private key as `openssl genrsa` writes it (OpenSSL 3: `BEGIN PRIVATE
/// KEY`; 1.1: `BEGIN RSA PRIVATE KEY`), unencrypted.
fn read_private_key(path: &Path) -> Result<RsaPrivateKey, AuthError> {
    use rsa::pkcs1::DecodeRsaPrivateKey;
    use rsa::pkcs8::DecodePrivateKey;
    let pem = read_pem("the RSA private key", path)?;
    RsaPrivateKey::from_pkcs8_pem(&pem)
        .or_else(|e| RsaPrivateKey::from_pkcs1_pem(&pem).map_err(|_| e))
        .map_err(|e| AuthError::BadKey {
            what: "an unencrypted RSA private key",
            path: path.into(),
            detail: e.to_string(),
        })
}

#[cfg(test)]
mod tests;
