//! The protocol settings that hold a network filesystem back, per
//! direction, from its mount options: NFS `sync` (every write waits for
//! the server's disk), `rsize`/`wsize` below 1 MiB (the Linux client's
//! maximum), one TCP connection without `nconnect` where the network has
//! room; CIFS `rsize`/`wsize` below 1 MiB and `cache=none` (no read-ahead);
//! and, from a transfer's own RPCs, an NFS server that writes to its disk
//! before it answers (a `sync` export).

use crate::bench::file::mount_facts::{is_nfs, is_smb};
use crate::bench::file::{Direction, FileReport, MountFacts, Transfer};

const ONE_MIB: u64 = 1 << 20;
/// WRITEs this many times slower per byte than READs of the same file...
const SYNC_SLOWER: f64 = 4.0;
/// ... and at least this slow (500 MB/s on the server's side): an `async`
/// export answers a WRITE from memory, at a copy's cost.
const SYNC_MS_PER_MIB: f64 = 2.0;
/// ... while the client spent at least this share of the write waiting on
/// them.
const SYNC_WAITED: f64 = 0.5;

/// One setting that costs speed and what to do about it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Setting {
    pub(crate) said: String,
    pub(crate) advice: String,
}

/// What of `f`'s mount and server slows `direction` (`network_room`: as
/// for [`costly`]).
pub(crate) fn of_report(f: &FileReport, direction: Direction, network_room: bool) -> Vec<Setting> {
    let mut out = f
        .mount
        .as_ref()
        .map(|m| costly(m, direction, network_room))
        .unwrap_or_default();
    if direction == Direction::Write {
        out.extend(server_sync(&f.write, &f.read));
    }
    out
}

/// The NFS server writes each WRITE (or COMMIT) to its disk before it
/// answers, as a `sync` export (exportfs's default) does: the write's
/// RPCs ([`crate::bench::file::nfs_rpc`]) took [`SYNC_SLOWER`] times the
/// read's per byte, at least [`SYNC_MS_PER_MIB`], and held the client for
/// [`SYNC_WAITED`] of the write or more. The export's options are not
/// visible from the client; this is their effect.
pub(crate) fn server_sync(write: &Transfer, read: &Transfer) -> Option<Setting> {
    let (w, r) = (write.nfs_rpcs?, read.nfs_rpcs?);
    let mib = |bytes: u64| bytes as f64 / ONE_MIB as f64;
    if w.ops == 0 || r.ops == 0 || write.bytes == 0 || read.bytes == 0 || write.seconds <= 0.0 {
        return None;
    }
    let w_ms = w.waited_ms() as f64 / mib(write.bytes);
    let r_ms = r.waited_ms() as f64 / mib(read.bytes);
    let waited = w.waited_ms() as f64 / (write.seconds * 1000.0);
    if w_ms < SYNC_MS_PER_MIB || w_ms < SYNC_SLOWER * r_ms || waited < SYNC_WAITED {
        return None;
    }
    let commits = if w.commits > 0 { " and COMMIT" } else { "" };
    Some(Setting {
        said: format!(
            "the server writes to its disk before it answers: its WRITE{commits} round trips \
             took {w_ms:.1} ms per MiB written against {r_ms:.1} ms per MiB read \
             (mountstats), holding the client for {:.0} % of the write: a `sync` export \
             (exportfs's default)",
            100.0 * waited.min(1.0)
        ),
        advice: "on the server, export it `async` (writes answered from memory; the last \
                 seconds of them are lost if the server crashes), or give it a faster disk"
            .into(),
    })
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
