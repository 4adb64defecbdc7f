//! iperf3's authentication token: the text `user: U\npwd:  P\nts:   T`
//! (T the client's clock in Unix seconds), encrypted with the server's RSA
//! public key and sent base64-encoded (no line breaks) as the parameter
//! block's `authtoken`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rsa::{Oaep, Pkcs1v15Encrypt, RsaPrivateKey, RsaPublicKey};

use super::{AuthError, Padding};

/// What a token carries.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Credentials {
    pub(crate) username: String,
    pub(crate) password: String,
    /// The client's clock when it made the token (Unix seconds).
    pub(crate) ts: i64,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .field("password", &"<hidden>")
            .field("ts", &self.ts)
            .finish()
    }
}

/// The token's text, as iperf3 writes it.
pub(crate) fn plaintext(c: &Credentials) -> String {
    format!("user: {}\npwd:  {}\nts:   {}", c.username, c.password, c.ts)
}

/// Read the token's text as iperf3's `sscanf` does: a word after `user:`,
/// one after `pwd:`, a number after `ts:`, any white space between.
pub(crate) fn parse(text: &str) -> Option<Credentials> {
    let rest = text.trim_start().strip_prefix("user:")?;
    let (username, rest) = word(rest)?;
    let rest = rest.trim_start().strip_prefix("pwd:")?;
    let (password, rest) = word(rest)?;
    let rest = rest.trim_start().strip_prefix("ts:")?.trim_start();
    let end = rest
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && (c == '-' || c == '+'))))
        .map_or(rest.len(), |(i, _)| i);
    let ts = rest[..end].parse().ok()?;
    Some(Credentials {
        username: username.into(),
        password: password.into(),
        ts,
    })
}

/// The next run of non-space characters, and what follows it.
fn word(s: &str) -> Option<(&str, &str)> {
    let s = s.trim_start();
    let end = s.find(char::is_whitespace).unwrap_or(s.len());
    (end > 0).then(|| (&s[..end], &s[end..]))
}

/// The token for `c`, for the server holding `key`'s private half.
pub(crate) fn encode(
    c: &Credentials,
    key: &RsaPublicKey,
    padding: Padding,
) -> Result<String, AuthError> {
    let text = plaintext(c);
    let mut rng = rsa::rand_core::OsRng;
    let sealed = match padding {
        Padding::Oaep => key.encrypt(&mut rng, Oaep::new::<sha1::Sha1>(), text.as_bytes()),
        Padding::Pkcs1 => key.encrypt(&mut rng, Pkcs1v15Encrypt, text.as_bytes()),
    }
    .map_err(|e| AuthError::Encrypt(e.to_string()))?;
    Ok(STANDARD.encode(sealed))
}

/// The ciphertext a token carries (base64 decoded), or `None`.
pub(crate) fn ciphertext(token: &str) -> Option<Vec<u8>> {
    STANDARD.decode(token.trim()).ok()
}

/// The credentials in `sealed`, if it decrypts with `key` and `padding` and
/// reads as a token.
pub(crate) fn decode(sealed: &[u8], key: &RsaPrivateKey, padding: Padding) -> Option<Credentials> {
    let text = match padding {
        Padding::Oaep => key.decrypt(Oaep::new::<sha1::Sha1>(), sealed),
        Padding::Pkcs1 => key.decrypt(Pkcs1v15Encrypt, sealed),
    }
    .ok()?;
    parse(std::str::from_utf8(&text).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trips_and_reads_like_sscanf() {
        let c = Credentials {
            username: "mario".into(),
            password: "rossi".into(),
            ts: 1_764_000_000,
        };
        assert_eq!(plaintext(&c), "user: mario\npwd:  rossi\nts:   1764000000");
        assert_eq!(parse(&plaintext(&c)), Some(c));
        let loose = parse("user:a\npwd: b ts: -5trailing").unwrap();
        assert_eq!(
            (loose.username.as_str(), loose.password.as_str(), loose.ts),
            ("a", "b", -5)
        );
        assert_eq!(parse("user: a\npwd:  \nts:   1"), None);
        assert_eq!(parse("user: a\npwd:  b\nts:   x"), None);
    }
}
