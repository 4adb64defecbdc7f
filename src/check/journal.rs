//! Regressions to the journal, at warning priority, with hlctl's own
//! MESSAGE_ID, so `journalctl MESSAGE_ID=5f1c2a7e9b3d4c60a8e1f2d3c4b5a697`
//! lists every regression a check ever saw. Without journald (containers,
//! CI) the same line goes to stderr.

use std::os::unix::net::UnixDatagram;

/// The MESSAGE_ID of "a check found a regression".
pub(crate) const REGRESSION_MESSAGE_ID: &str = "5f1c2a7e9b3d4c60a8e1f2d3c4b5a697";

const JOURNALD_SOCKET: &str = "/run/systemd/journal/socket";

/// One journal field; values with a newline use the binary form.
fn field(out: &mut Vec<u8>, name: &str, value: &str) {
    out.extend_from_slice(name.as_bytes());
    if value.contains('\n') {
        out.push(b'\n');
        out.extend_from_slice(&(value.len() as u64).to_le_bytes());
        out.extend_from_slice(value.as_bytes());
    } else {
        out.push(b'=');
        out.extend_from_slice(value.as_bytes());
    }
    out.push(b'\n');
}

/// The native-protocol datagram of one regression.
pub(crate) fn entry(message: &str, metric: &str, subject: &str) -> Vec<u8> {
    let mut d = Vec::new();
    field(&mut d, "MESSAGE", message);
    field(&mut d, "MESSAGE_ID", REGRESSION_MESSAGE_ID);
    field(&mut d, "PRIORITY", "4");
    field(&mut d, "SYSLOG_IDENTIFIER", "hlctl");
    field(&mut d, "HLCTL_METRIC", metric);
    field(&mut d, "HLCTL_SUBJECT", subject);
    d
}

/// Log one regression; returns where it went (`journald` or `stderr`).
pub(crate) fn regression(message: &str, metric: &str, subject: &str) -> &'static str {
    if let Ok(s) = UnixDatagram::unbound()
        && s.send_to(&entry(message, metric, subject), JOURNALD_SOCKET)
            .is_ok()
    {
        return "journald";
    }
    eprintln!("hlctl check: warning: {message}");
    "stderr"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_of_a_regression() {
        let d = entry("net upload → nas: −80%", "net upload", "nas:5201");
        let t = String::from_utf8(d).unwrap();
        assert!(t.starts_with("MESSAGE=net upload → nas: −80%\n"));
        assert!(t.contains(&format!("MESSAGE_ID={REGRESSION_MESSAGE_ID}\nPRIORITY=4\n")));
        let mut b = Vec::new();
        field(&mut b, "MESSAGE", "a\nb");
        assert_eq!(b, b"MESSAGE\n\x03\0\0\0\0\0\0\0a\nb\n");
    }
}
