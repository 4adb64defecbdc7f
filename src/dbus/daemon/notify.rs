//! `sd_notify` without libsystemd: one datagram to `$NOTIFY_SOCKET`.

use std::io;
use std::os::unix::net::{SocketAddr, UnixDatagram};

/// Send `state` (e.g. `READY=1`) to the service manager. Without
/// `NOTIFY_SOCKET` (no systemd, or not `Type=notify`) this does nothing.
pub(crate) fn notify(state: &str) -> io::Result<bool> {
    let Some(target) = std::env::var_os("NOTIFY_SOCKET") else {
        return Ok(false);
    };
    let target = target.to_string_lossy().into_owned();
    let sock = UnixDatagram::unbound()?;
    let addr = match target.strip_prefix('@') {
        Some(name) => {
            use std::os::linux::net::SocketAddrExt;
            SocketAddr::from_abstract_name(name.as_bytes())?
        }
        None => SocketAddr::from_pathname(&target)?,
    };
    sock.send_to_addr(state.as_bytes(), &addr)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    #[test]
    fn sends_to_a_path_socket() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("notify");
        let rx = std::os::unix::net::UnixDatagram::bind(&p).unwrap();
        // SAFETY: this test is the only one touching NOTIFY_SOCKET.
        unsafe { std::env::set_var("NOTIFY_SOCKET", &p) };
        assert!(super::notify("READY=1").unwrap());
        // SAFETY: as above.
        unsafe { std::env::remove_var("NOTIFY_SOCKET") };
        let mut buf = [0u8; 64];
        let n = rx.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"READY=1");
    }
}
