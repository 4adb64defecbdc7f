//! Host names of peers to addresses, also in the static build.
//!
//! A statically linked glibc program cannot load the NSS modules
//! (`libnss_files`, `libnss_dns`) that `getaddrinfo` uses for host names:
//! on a box without them (a `scratch` image, a chroot) every name fails, and
//! on a box with another glibc they are the wrong version. So the static
//! build (`crt-static`) never asks NSS: it reads `/etc/hosts`, then asks the
//! `nameserver`s of `/etc/resolv.conf` (A and AAAA over UDP). The dynamic
//! build asks `getaddrinfo` and uses the same two sources only when that
//! fails. Numeric addresses never need either.

mod dns;
mod hosts;

use std::io;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::Path;
use std::time::Duration;

/// Where the fallback looks; tests point it at files of their own.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sources<'a> {
    pub(crate) hosts: &'a Path,
    pub(crate) resolv_conf: &'a Path,
    pub(crate) timeout: Duration,
}

/// The system's files.
pub(crate) fn system() -> Sources<'static> {
    Sources {
        hosts: Path::new("/etc/hosts"),
        resolv_conf: Path::new("/etc/resolv.conf"),
        timeout: Duration::from_secs(2),
    }
}

/// Every address of `host` (a name or a numeric address) with `port`.
pub(crate) fn socket_addrs(host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    if cfg!(target_feature = "crt-static") {
        return lookup(host, port, &system());
    }
    match (host, port).to_socket_addrs() {
        Ok(a) => Ok(a.collect()),
        Err(e) => lookup(host, port, &system()).map_err(|_| e),
    }
}

/// `/etc/hosts`, then DNS, without NSS.
pub(crate) fn lookup(host: &str, port: u16, src: &Sources) -> io::Result<Vec<SocketAddr>> {
    let name = host.trim_end_matches('.');
    let mut ips = hosts::lookup(src.hosts, name);
    if ips.is_empty() {
        ips = dns::lookup(src.resolv_conf, host, src.timeout)?;
    }
    if ips.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "{host}: not in {} and no address from the name servers of {}",
                src.hosts.display(),
                src.resolv_conf.display()
            ),
        ));
    }
    Ok(ips
        .into_iter()
        .map(|ip| SocketAddr::new(ip, port))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_addresses_need_no_lookup() {
        assert_eq!(
            socket_addrs("127.0.0.1", 5201).unwrap(),
            vec!["127.0.0.1:5201".parse().unwrap()]
        );
        assert_eq!(
            socket_addrs("::1", 1).unwrap(),
            vec!["[::1]:1".parse().unwrap()]
        );
    }

    #[test]
    fn a_name_in_no_source_names_both_sources() {
        let d = tempfile::tempdir().unwrap();
        let (h, r) = (d.path().join("hosts"), d.path().join("resolv.conf"));
        std::fs::write(&h, "10.0.0.1 other\n").unwrap();
        std::fs::write(&r, "# no name server\n").unwrap();
        let src = Sources {
            hosts: &h,
            resolv_conf: &r,
            timeout: Duration::from_millis(200),
        };
        let e = lookup("nas", 5201, &src).unwrap_err().to_string();
        assert!(
            e.contains("nas: not in") && e.contains("resolv.conf"),
            "{e}"
        );
        std::fs::write(&h, "10.0.0.1 other\n10.0.0.2 nas.lan nas\n").unwrap();
        assert_eq!(
            lookup("nas.", 7, &src).unwrap(),
            vec!["10.0.0.2:7".parse().unwrap()]
        );
    }
}
