//! A stub DNS client for the static build: A and AAAA questions over UDP to
//! the `nameserver`s of `/etc/resolv.conf`, in order. No search domains, no
//! TCP fallback: a peer's name is a full name or one in `/etc/hosts`.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::path::Path;
use std::time::Duration;

const TYPE_A: u16 = 1;
const TYPE_AAAA: u16 = 28;

/// The addresses the first answering name server gives for `name`.
pub(super) fn lookup(resolv_conf: &Path, name: &str, timeout: Duration) -> io::Result<Vec<IpAddr>> {
    let servers = std::fs::read_to_string(resolv_conf)
        .map(|t| nameservers(&t))
        .unwrap_or_default();
    let mut last = None;
    for s in servers {
        match ask(SocketAddr::new(s, 53), name, timeout) {
            Ok(ips) if !ips.is_empty() => return Ok(ips),
            Ok(_) => {}
            Err(e) => last = Some(e),
        }
    }
    last.map_or(Ok(Vec::new()), Err)
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
