//! The path MTU towards a peer: the largest don't-fragment echo that comes back.
//! Each size is tried twice (a lost reply is not a too-small path).

use std::io;
use std::net::IpAddr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::icmp::Pinger;

/// The result of a path MTU search.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PathMtu {
    /// The MTU of the interface the probes left by.
    pub(crate) local_mtu: u32,
    /// The largest packet (bytes, IP header included) that reached the peer and came back.
    pub(crate) path_mtu: u32,
    /// The smallest packet that did not come back, when one was tried.
    pub(crate) smallest_lost: Option<u32>,
    pub(crate) probes: u32,
}

/// The smallest MTU every IPv4 path carries (RFC 791 says 68; 576 is what hosts must accept).
const FLOOR_V4: u32 = 576;
const FLOOR_V6: u32 = 1280;

struct Prober {
    p: Pinger,
    timeout: Duration,
    probes: u32,
}

impl Prober {
    /// Some(true) reached, Some(false) lost, None when the local MTU is smaller.
    fn reaches(&mut self, size: u32) -> io::Result<Option<bool>> {
        for _ in 0..2 {
            self.probes += 1;
            match self.p.echo(size as usize, self.timeout) {
                Ok(Some(_)) => return Ok(Some(true)),
                Ok(None) => {}
                Err(e) if e.raw_os_error() == Some(libc::EMSGSIZE) => return Ok(None),
                Err(e) => return Err(e),
            }
        }
        Ok(Some(false))
    }
}

/// Does a don't-fragment packet of `size` bytes reach `dest` and come back?
/// `Ok(false)` also when the local interface cannot send it.
pub(crate) fn reaches(dest: IpAddr, size: u32, timeout: Duration) -> io::Result<bool> {
    let p = Pinger::new(dest)?;
    p.set_dont_fragment()?;
    let mut pr = Prober {
        p,
        timeout,
        probes: 0,
    };
    Ok(pr.reaches(size)? == Some(true))
}

/// Search the path MTU to `dest` between the protocol's floor and `local_mtu`.
/// `Err(NotFound)` when even the smallest probe gets no answer (the peer does
/// not answer echo requests: nothing can be said about the path).
pub(crate) fn probe(dest: IpAddr, local_mtu: u32, timeout: Duration) -> io::Result<PathMtu> {
    let p = Pinger::new(dest)?;
    p.set_dont_fragment()?;
    let mut pr = Prober {
        p,
        timeout,
        probes: 0,
    };
    let floor = if dest.is_ipv6() { FLOOR_V6 } else { FLOOR_V4 }.min(local_mtu);
    if pr.reaches(floor)? != Some(true) {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("{dest} does not answer ICMP echo requests"),
        ));
    }
    let mut out = PathMtu {
        local_mtu,
        path_mtu: floor,
        smallest_lost: None,
        probes: 0,
    };
    match pr.reaches(local_mtu)? {
        Some(true) => out.path_mtu = local_mtu,
        r => {
            // Binary search: lo reaches, hi does not.
            let (mut lo, mut hi) = (floor, local_mtu);
            if r == Some(false) {
                out.smallest_lost = Some(local_mtu);
            }
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                match pr.reaches(mid)? {
                    Some(true) => lo = mid,
                    _ => {
                        hi = mid;
                        out.smallest_lost = Some(mid);
                    }
                }
            }
            out.path_mtu = lo;
        }
    }
    out.probes = pr.probes;
    Ok(out)
}
