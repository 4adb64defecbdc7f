//! Reading and writing `/proc/sys` (the view of the calling thread's network namespace).

use std::io;
use std::path::{Path, PathBuf};

/// `net.ipv4.tcp_rmem` → `<proc_sys>/net/ipv4/tcp_rmem`.
pub(crate) fn key_path(proc_sys: &Path, key: &str) -> PathBuf {
    proc_sys.join(key.replace('.', "/"))
}

/// The current value, whitespace-normalised; `Ok(None)` when the key does not
/// exist here (e.g. a global key seen from inside a network namespace).
pub(crate) fn read(proc_sys: &Path, key: &str) -> io::Result<Option<String>> {
    match std::fs::read_to_string(key_path(proc_sys, key)) {
        Ok(s) => Ok(Some(super::keys::normalise(&s))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Write a value (the kernel accepts tabs or spaces between triplet fields).
pub(crate) fn write(proc_sys: &Path, key: &str, value: &str) -> io::Result<()> {
    std::fs::write(key_path(proc_sys, key), format!("{value}\n"))
}

/// Key names must be dotted words: no `..`, no slashes, nothing that escapes `/proc/sys`.
pub(crate) fn is_well_formed(key: &str) -> bool {
    !key.is_empty()
        && key.split('.').all(|part| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_map_to_proc_paths_and_cannot_escape() {
        assert_eq!(
            key_path(Path::new("/proc/sys"), "net.ipv4.tcp_rmem"),
            PathBuf::from("/proc/sys/net/ipv4/tcp_rmem")
        );
        assert!(is_well_formed("net.ipv4.conf.eth0-1.mtu"));
        assert!(!is_well_formed("net..ipv4"));
        assert!(!is_well_formed("net/../../etc/passwd"));
        assert!(!is_well_formed(""));
    }
}
