//! A stub DNS client for the static build: A and AAAA questions over UDP to
//! the `nameserver`s of `/etc/resolv.conf`, in order, for the names its
//! `search` (or `domain`) list and `options ndots:N` make of the name, as
//! glibc does ([`candidates`]): `nas` on a LAN whose DHCP gives `search lan`
//! is `nas.lan`. No TCP fallback.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::path::Path;
use std::time::Duration;

const TYPE_A: u16 = 1;
const TYPE_AAAA: u16 = 28;

/// The addresses the first answering name server gives for the first of
/// `name`'s [`candidates`] that has any (`name` may end in `.`: absolute).
pub(super) fn lookup(resolv_conf: &Path, name: &str, timeout: Duration) -> io::Result<Vec<IpAddr>> {
    let text = std::fs::read_to_string(resolv_conf).unwrap_or_default();
    let servers = nameservers(&text);
    let mut last = None;
    for candidate in candidates(&text, name) {
        for s in &servers {
            match ask(SocketAddr::new(*s, 53), &candidate, timeout) {
                Ok(ips) if !ips.is_empty() => return Ok(ips),
                Ok(_) => {}
                Err(e) => last = Some(e),
            }
        }
    }
    last.map_or(Ok(Vec::new()), Err)
}

/// The names to ask for `name`, in order, as glibc's resolver makes them
/// from resolv.conf: an absolute name (ending in `.`) alone; a name with at
/// least `ndots` dots (`options ndots:N`, default 1, at most 15) as it is,
/// then with each domain of the `search` list (or `domain`; the last such
/// line counts) appended; a name with fewer dots the other way round.
pub(super) fn candidates(text: &str, name: &str) -> Vec<String> {
    if let Some(absolute) = name.strip_suffix('.') {
        return vec![absolute.to_string()];
    }
    let (mut search, mut ndots) = (Vec::new(), 1usize);
    for l in text.lines() {
        let mut w = l.split_whitespace();
        match w.next() {
            Some("search" | "domain") => {
                search = w
                    .map(|d| d.trim_end_matches('.'))
                    .filter(|d| !d.is_empty())
                    .map(|d| format!("{name}.{d}"))
                    .collect();
            }
            Some("options") => {
                for o in w {
                    if let Some(n) = o.strip_prefix("ndots:") {
                        ndots = n.parse().unwrap_or(1).min(15);
                    }
                }
            }
            _ => {}
        }
    }
    if name.matches('.').count() >= ndots {
        search.insert(0, name.to_string());
    } else {
        search.push(name.to_string());
    }
    search
}

pub(super) fn nameservers(text: &str) -> Vec<IpAddr> {
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("nameserver")).then(|| w.next()?.parse().ok())?
        })
        .collect()
}

/// Ask one server for A and AAAA records of `name`.
pub(super) fn ask(server: SocketAddr, name: &str, timeout: Duration) -> io::Result<Vec<IpAddr>> {
    let bind: SocketAddr = if server.is_ipv4() {
        "0.0.0.0:0"
    } else {
        "[::]:0"
    }
    .parse()
    .unwrap();
    let sock = UdpSocket::bind(bind)?;
    sock.connect(server)?;
    sock.set_read_timeout(Some(timeout))?;
    let id = (std::process::id() as u16) ^ 0x5a5a;
    for (i, t) in [TYPE_A, TYPE_AAAA].into_iter().enumerate() {
        sock.send(&query(id.wrapping_add(i as u16), name, t)?)?;
    }
    let (mut out, mut answered, mut buf) = (Vec::new(), 0, [0u8; 1500]);
    while answered < 2 {
        let n = sock.recv(&mut buf)?;
        let r = &buf[..n];
        if r.len() < 12 || !(0..2).any(|i| r[..2] == id.wrapping_add(i).to_be_bytes()) {
            continue;
        }
        answered += 1;
        out.extend(answers(r).unwrap_or_default());
    }
    Ok(out)
}

/// A recursive query for one name and type.
pub(super) fn query(id: u16, name: &str, qtype: u16) -> io::Result<Vec<u8>> {
    let mut q = Vec::with_capacity(name.len() + 18);
    q.extend_from_slice(&id.to_be_bytes());
    q.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
    for label in name.split('.') {
        if label.is_empty() || label.len() > 63 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{name}: not a host name"),
            ));
        }
        q.push(label.len() as u8);
        q.extend_from_slice(label.as_bytes());
    }
    q.push(0);
    q.extend_from_slice(&qtype.to_be_bytes());
    q.extend_from_slice(&1u16.to_be_bytes());
    Ok(q)
}

/// Skip a (possibly compressed) name at `at`; the offset after it.
fn skip_name(r: &[u8], mut at: usize) -> Option<usize> {
    loop {
        let len = *r.get(at)? as usize;
        match len {
            0 => return Some(at + 1),
            l if l & 0xc0 == 0xc0 => return Some(at + 2),
            l => at += l + 1,
        }
    }
}

/// The A and AAAA records of a response.
pub(super) fn answers(r: &[u8]) -> Option<Vec<IpAddr>> {
    let be = |at: usize| Some(u16::from_be_bytes([*r.get(at)?, *r.get(at + 1)?]));
    if r[3] & 0x0f != 0 {
        return Some(Vec::new());
    }
    let (qd, an) = (be(4)?, be(6)?);
    let mut at = 12;
    for _ in 0..qd {
        at = skip_name(r, at)? + 4;
    }
    let mut out = Vec::new();
    for _ in 0..an {
        at = skip_name(r, at)?;
        let (t, len) = (be(at)?, be(at + 8)? as usize);
        let data = r.get(at + 10..at + 10 + len)?;
        match (t, len) {
            (TYPE_A, 4) => out.push(IpAddr::V4(Ipv4Addr::from(<[u8; 4]>::try_from(data).ok()?))),
            (TYPE_AAAA, 16) => {
                out.push(IpAddr::V6(Ipv6Addr::from(<[u8; 16]>::try_from(data).ok()?)))
            }
            _ => {}
        }
        at += 10 + len;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_and_ndots_make_the_names_as_glibc_does() {
        let conf = "nameserver 127.0.0.1\nsearch lan home.arpa\n";
        assert_eq!(candidates(conf, "nas"), ["nas.lan", "nas.home.arpa", "nas"]);
        assert_eq!(
            candidates(conf, "nas.lan"),
            ["nas.lan", "nas.lan.lan", "nas.lan.home.arpa"]
        );
        assert_eq!(candidates(conf, "nas.lan."), ["nas.lan"]);
        let ndots = "domain lan\noptions edns0 ndots:2\n";
        assert_eq!(candidates(ndots, "nas.box"), ["nas.box.lan", "nas.box"]);
        assert_eq!(candidates("", "nas"), ["nas"]);
        // The last search or domain line counts.
        assert_eq!(candidates("search a\ndomain b\n", "x"), ["x.b", "x"]);
    }

    /// Issue 38: `hlctl doctor --peer nas` failed where `iperf3 -c nas`
    /// worked on a LAN whose DHCP gives `search lan`. A real dnsmasq that
    /// knows only `nas.lan`, on 127.0.0.1:53 of a network namespace this
    /// test's thread makes, and a resolv.conf of the test's own.
    #[test]
    fn a_short_name_is_found_through_the_search_list_of_a_real_dns_server() {
        assert!(
            nix::unistd::Uid::effective().is_root(),
            "did not run: needs root (a network namespace for dnsmasq)"
        );
        let dnsmasq = "/usr/sbin/dnsmasq";
        assert!(
            Path::new(dnsmasq).exists(),
            "{dnsmasq} missing: scripts/setup.sh installs dnsmasq-base"
        );
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("resolv.conf");
        std::fs::write(&conf, "nameserver 127.0.0.1\nsearch lan\n").unwrap();
        let bare = dir.path().join("bare.conf");
        std::fs::write(&bare, "nameserver 127.0.0.1\n").unwrap();
        let pid_file = dir.path().join("dnsmasq.pid");
        let (conf2, bare2, pid2) = (conf.clone(), bare.clone(), pid_file.clone());
        let got = std::thread::spawn(move || {
            // This thread only: its own network namespace, torn down with it.
            nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNET).unwrap();
            let up = std::process::Command::new("ip")
                .args(["link", "set", "lo", "up"])
                .status()
                .unwrap();
            assert!(up.success());
            let mut server = std::process::Command::new(dnsmasq)
                .args([
                    "--keep-in-foreground",
                    "--no-resolv",
                    "--no-hosts",
                    "--conf-file=/dev/null",
                    "--listen-address=127.0.0.1",
                    "--bind-interfaces",
                    "--port=53",
                    "--user=root",
                    "--host-record=nas.lan,10.77.0.9",
                ])
                .arg(format!("--pid-file={}", pid2.display()))
                .spawn()
                .unwrap();
            let t = Duration::from_millis(300);
            let mut found = Vec::new();
            for _ in 0..50 {
                found = lookup(&conf2, "nas", t).unwrap_or_default();
                if !found.is_empty() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let full = lookup(&bare2, "nas.lan", t).unwrap_or_default();
            let without_search = lookup(&bare2, "nas", t).unwrap_or_default();
            let _ = server.kill();
            let _ = server.wait();
            (found, full, without_search)
        })
        .join()
        .unwrap();
        let want: IpAddr = "10.77.0.9".parse().unwrap();
        assert_eq!(got.1, [want], "the server answers nas.lan");
        assert_eq!(got.0, [want], "nas through search lan");
        assert!(
            got.2.is_empty(),
            "without a search list nas is not found: {:?}",
            got.2
        );
    }

    /// A name server on 127.0.0.1 that answers each question once: an A
    /// record (through a compression pointer) and an AAAA record.
    fn serve_once(sock: UdpSocket) -> std::thread::JoinHandle<Vec<u16>> {
        std::thread::spawn(move || {
            let mut types = Vec::new();
            let mut buf = [0u8; 512];
            for _ in 0..2 {
                let (n, from) = sock.recv_from(&mut buf).unwrap();
                let q = &buf[..n];
                let qtype = u16::from_be_bytes([q[n - 4], q[n - 3]]);
                types.push(qtype);
                let mut r = q.to_vec();
                r[2] |= 0x80;
                r[7] = 1; // one answer
                r.extend_from_slice(&[0xc0, 12]);
                r.extend_from_slice(&qtype.to_be_bytes());
                r.extend_from_slice(&[0, 1, 0, 0, 0, 60]);
                let data: Vec<u8> = if qtype == TYPE_A {
                    vec![192, 0, 2, 7]
                } else {
                    vec![0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7]
                };
                r.extend_from_slice(&(data.len() as u16).to_be_bytes());
                r.extend_from_slice(&data);
                sock.send_to(&r, from).unwrap();
            }
            types
        })
    }

    #[test]
    fn asks_a_and_aaaa_and_reads_both_answers() {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = sock.local_addr().unwrap();
        let server = serve_once(sock);
        let mut ips = ask(addr, "nas.example", Duration::from_secs(2)).unwrap();
        ips.sort();
        assert_eq!(
            ips,
            vec![
                "192.0.2.7".parse::<IpAddr>().unwrap(),
                "2001:db8::7".parse().unwrap()
            ]
        );
        let mut types = server.join().unwrap();
        types.sort();
        assert_eq!(types, vec![TYPE_A, TYPE_AAAA]);
    }

    #[test]
    fn resolv_conf_and_bad_names() {
        let t =
            "search lan\nnameserver 192.0.2.53\n#nameserver 1.1.1.1\nnameserver ::1\noptions x\n";
        assert_eq!(
            nameservers(t),
            vec![
                "192.0.2.53".parse::<IpAddr>().unwrap(),
                "::1".parse().unwrap()
            ]
        );
        assert!(query(1, "a..b", TYPE_A).is_err());
        assert_eq!(
            &query(1, "ab", TYPE_A).unwrap()[12..],
            &[2, b'a', b'b', 0, 0, 1, 0, 1]
        );
        // NXDOMAIN: no addresses.
        let mut r = query(1, "ab", TYPE_A).unwrap();
        r[3] = 0x83;
        assert_eq!(answers(&r), Some(vec![]));
    }
}
