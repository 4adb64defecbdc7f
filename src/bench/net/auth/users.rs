//! iperf3's authorized users file (`--authorized-users-path`): one
//! `username,sha256` line per user, where sha256 is the lower-case hex
//! SHA-256 of `{username}password`; `#` lines, empty lines and lines
//! without a comma are skipped. Read afresh for every test, as iperf3 does.

use std::path::Path;

use sha2::{Digest, Sha256};

/// The hash iperf3 stores for a user's password.
pub(crate) fn salted_hash(username: &str, password: &str) -> String {
    let digest = Sha256::digest(format!("{{{username}}}{password}").as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// What the file says about a user's credentials.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Accepted,
    /// The user has a line, with another hash.
    WrongPassword,
    /// No line names the user.
    UnknownUser,
}

/// Judge `username`/`password` by the file's text.
pub(crate) fn judge(text: &str, username: &str, password: &str) -> Verdict {
    let hash = salted_hash(username, password);
    let mut known = false;
    for line in text.lines() {
        let line = line.split(['\r', '\n']).next().unwrap_or("");
        if line.is_empty() || line.starts_with('#') || !line.contains(',') {
            continue;
        }
        // strtok(3): empty fields between commas do not count.
        let mut fields = line.split(',').filter(|f| !f.is_empty());
        if fields.next() != Some(username) {
            continue;
        }
        if fields.next() == Some(hash.as_str()) {
            return Verdict::Accepted;
        }
        known = true;
    }
    if known {
        Verdict::WrongPassword
    } else {
        Verdict::UnknownUser
    }
}

/// Read the file (at each test: an edit takes effect at the next one).
pub(crate) fn read(path: &Path) -> std::io::Result<String> {
    std::fs::read_to_string(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iperf3s_salting_and_lines() {
        // `echo -n "{mario}rossi" | sha256sum`
        let h = salted_hash("mario", "rossi");
        assert_eq!(
            h,
            "bf7a49a846d44b454a5d11e7acfaf13d138bbe0b7483aa3e050879700572709b"
        );
        assert_ne!(h, salted_hash("mario", "rossj"));
        let file = format!(
            "# users\n\nnocomma\nmario,{h}\r\nluigi,{}\n",
            salted_hash("luigi", "x")
        );
        assert_eq!(judge(&file, "mario", "rossi"), Verdict::Accepted);
        assert_eq!(judge(&file, "luigi", "x"), Verdict::Accepted);
        assert_eq!(judge(&file, "mario", "verdi"), Verdict::WrongPassword);
        assert_eq!(judge(&file, "peach", "rossi"), Verdict::UnknownUser);
        assert_eq!(
            judge(&format!("#mario,{h}\n"), "mario", "rossi"),
            Verdict::UnknownUser
        );
    }
}
