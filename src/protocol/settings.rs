//! The protocol settings that hold a network filesystem back, per
//! direction, from its mount options: NFS `sync` (every write waits for
//! the server's disk), `rsize`/`wsize` below 1 MiB (the Linux client's
//! maximum), one TCP connection without `nconnect` where the network has
//! room; CIFS `rsize`/`wsize` below 1 MiB and `cache=none` (no read-ahead).

use crate::bench::file::mount_facts::{is_nfs, is_smb};
use crate::bench::file::{Direction, MountFacts};

const ONE_MIB: u64 = 1 << 20;

/// One setting that costs speed and what to do about it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Setting {
    pub(crate) said: String,
    pub(crate) advice: String,
}

/// The settings of `m` that slow `direction`; `network_room` when raw TCP
/// carries more than twice the transfer (then one connection may be it).
pub(crate) fn costly(m: &MountFacts, direction: Direction, network_room: bool) -> Vec<Setting> {
    let mut out = Vec::new();
    let size_key = match direction {
        Direction::Write => "wsize",
        Direction::Read => "rsize",
    };
    let nfs = is_nfs(&m.fs_type);
    if !nfs && !is_smb(&m.fs_type) {
        return out;
    }
    if let Some(n) = m.bytes(size_key).filter(|&n| n < ONE_MIB) {
        out.push(Setting {
            said: format!("{size_key}={n}, below 1 MiB"),
            advice: format!("mount with {size_key}=1048576"),
        });
    }
    if nfs && direction == Direction::Write && m.option("sync").is_some() {
        out.push(Setting {
            said: "the mount's sync: every write waits for the server's disk".into(),
            advice: "mount without sync (async is the client's default)".into(),
        });
    }
    if nfs && network_room && m.option("nconnect").is_none() {
        out.push(Setting {
            said: "one TCP connection (no nconnect)".into(),
            advice: "mount with nconnect=4 (Linux 5.3 and later)".into(),
        });
    }
    if !nfs && direction == Direction::Read && m.option("cache") == Some("none") {
        out.push(Setting {
            said: "cache=none: no read-ahead".into(),
            advice: "mount with cache=strict unless O_DIRECT is what the application wants".into(),
        });
    }
    out
}
