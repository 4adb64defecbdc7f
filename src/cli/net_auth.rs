//! iperf3's authentication flags, with iperf3's names: the client's
//! (`bench net --username U --rsa-public-key-path FILE [--use-pkcs1-padding]`,
//! the password from `IPERF3_PASSWORD` or asked on the terminal) and the
//! server's (`serve --rsa-private-key-path FILE --authorized-users-path FILE
//! [--time-skew-threshold S] [--use-pkcs1-padding]`).

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;

use crate::bench::net::{ClientAuth, DEFAULT_TIME_SKEW_S, Padding, ServerAuth};

/// The variable iperf3 reads the client's password from.
pub(crate) const PASSWORD_ENV: &str = "IPERF3_PASSWORD";

#[derive(Debug, Args)]
pub(crate) struct ClientAuthArgs {
    /// Authenticate to an iperf3 server that requires it (iperf3's flag):
    /// the user name; the password comes from IPERF3_PASSWORD, else it is
    /// asked on the terminal. Runs the test in this process (the password
    /// never goes to hlctld).
    #[arg(long, value_name = "USER", requires = "rsa_public_key_path")]
    pub(crate) username: Option<String>,
    /// The server's RSA public key in PEM (`openssl rsa -in private.pem
    /// -pubout -out public.pem`), with --username.
    #[arg(long, value_name = "FILE", requires = "username")]
    pub(crate) rsa_public_key_path: Option<PathBuf>,
    /// Encrypt the credentials with PKCS#1 v1.5 padding, as iperf3 3.12–3.16
    /// servers need (3.17+ and `hlctl serve` use OAEP unless given this flag too).
    #[arg(long, requires = "username")]
    pub(crate) use_pkcs1_padding: bool,
}

fn padding(pkcs1: bool) -> Padding {
    if pkcs1 { Padding::Pkcs1 } else { Padding::Oaep }
}

impl ClientAuthArgs {
    /// The credentials these flags give, if any.
    pub(crate) fn load(&self) -> Result<Option<ClientAuth>, String> {
        let (Some(user), Some(key)) = (&self.username, &self.rsa_public_key_path) else {
            return Ok(None);
        };
        let password = password()?;
        ClientAuth::load(user, &password, key, padding(self.use_pkcs1_padding))
            .map(Some)
            .map_err(|e| e.to_string())
    }
}

/// The password as iperf3 takes it: IPERF3_PASSWORD, else asked on the
/// terminal without echo.
fn password() -> Result<String, String> {
    if let Ok(p) = std::env::var(PASSWORD_ENV) {
        return Ok(p);
    }
    if !std::io::stdin().is_terminal() {
        return Err(format!(
            "--username needs a password: set {PASSWORD_ENV} (stdin is not a terminal to ask on)"
        ));
    }
    let _quiet = EchoOff::new();
    eprint!("Password: ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| format!("cannot read the password: {e}"))?;
    eprintln!();
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
}

/// The terminal's echo turned off until dropped.
struct EchoOff(Option<libc::termios>);

impl EchoOff {
    fn new() -> EchoOff {
        let mut t = std::mem::MaybeUninit::<libc::termios>::uninit();
        // SAFETY: tcgetattr fills the termios it is given; fd 0 is stdin.
        if unsafe { libc::tcgetattr(0, t.as_mut_ptr()) } != 0 {
            return EchoOff(None);
        }
        // SAFETY: tcgetattr succeeded, so `t` is initialized.
        let old = unsafe { t.assume_init() };
        let mut quiet = old;
        quiet.c_lflag &= !libc::ECHO;
        // SAFETY: a valid termios for stdin.
        unsafe { libc::tcsetattr(0, libc::TCSAFLUSH, &quiet) };
        EchoOff(Some(old))
    }
}

impl Drop for EchoOff {
    fn drop(&mut self) {
        if let Some(old) = &self.0 {
            // SAFETY: the termios read from stdin before.
            unsafe { libc::tcsetattr(0, libc::TCSAFLUSH, old) };
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct ServerAuthArgs {
    /// Serve only clients that authenticate (iperf3's flag): this server's
    /// RSA private key, PEM, unencrypted (`openssl genrsa -out private.pem
    /// 2048`). With --authorized-users-path.
    #[arg(
        long,
        value_name = "FILE",
        requires = "authorized_users_path",
        env = "HLCTL_SERVE_RSA_PRIVATE_KEY_PATH"
    )]
    pub(crate) rsa_private_key_path: Option<PathBuf>,
    /// The users allowed (iperf3's file): lines `user,HASH`, HASH the hex
    /// SHA-256 of `{user}password` (`printf '%s' '{mario}rossi' | sha256sum`);
    /// read again at each test.
    #[arg(
        long,
        value_name = "FILE",
        requires = "rsa_private_key_path",
        env = "HLCTL_SERVE_AUTHORIZED_USERS_PATH"
    )]
    pub(crate) authorized_users_path: Option<PathBuf>,
    /// Refuse credentials stamped more than this many seconds from this
    /// host's clock (iperf3's flag; 1–86400) [default: 10].
    #[arg(long, value_name = "S", requires = "rsa_private_key_path",
          env = "HLCTL_SERVE_TIME_SKEW_THRESHOLD",
          value_parser = crate::units::ranged(1u32, 86_400))]
    pub(crate) time_skew_threshold: Option<u32>,
    /// Take credentials with PKCS#1 v1.5 padding, as iperf3 3.12–3.16 clients
    /// send them (iperf3's flag; without it OAEP, as 3.17+ and hlctl send).
    #[arg(
        long,
        requires = "rsa_private_key_path",
        env = "HLCTL_SERVE_USE_PKCS1_PADDING"
    )]
    pub(crate) use_pkcs1_padding: bool,
}

impl ServerAuthArgs {
    /// The server's authentication, if these flags ask for it.
    pub(crate) fn load(&self) -> Result<Option<Arc<ServerAuth>>, String> {
        let (Some(key), Some(users)) = (&self.rsa_private_key_path, &self.authorized_users_path)
        else {
            return Ok(None);
        };
        let skew = self.time_skew_threshold.unwrap_or(DEFAULT_TIME_SKEW_S);
        ServerAuth::load(key, users, skew, padding(self.use_pkcs1_padding))
            .map(|a| Some(Arc::new(a)))
            .map_err(|e| e.to_string())
    }
}
