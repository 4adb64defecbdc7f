//! What the NFS client's RPCs of one transfer took: the per-operation
//! counters of `/proc/self/mountstats` for the transfer's mount, read
//! before and after it. A server that writes each WRITE (or COMMIT) to its
//! disk before it answers (a `sync` export, exportfs's default) shows
//! there as WRITEs far slower per byte than the READs of the same file,
//! which it answers from memory ([`crate::protocol::settings`]).

use serde::{Deserialize, Serialize};

use crate::mounted::unescape;

/// One transfer's RPCs: its own operation's (WRITE or READ) and, for a
/// write, the COMMITs that made unstable WRITEs stable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NfsRpcs {
    /// WRITE or READ RPCs completed.
    pub ops: u64,
    /// Their round trips, send to reply, summed in milliseconds.
    pub rtt_ms: u64,
    /// COMMIT RPCs completed (none for a read).
    pub commits: u64,
    pub commit_rtt_ms: u64,
}

impl NfsRpcs {
    /// Milliseconds the client waited on the server's answers.
    pub(crate) fn waited_ms(&self) -> u64 {
        self.rtt_ms + self.commit_rtt_ms
    }
}

/// One operation's counters: ops, then the round trips in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct OpCounters {
    ops: u64,
    rtt_ms: u64,
}

/// The counters of WRITE, READ and COMMIT on one mount at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Snapshot {
    write: OpCounters,
    read: OpCounters,
    commit: OpCounters,
}

impl Snapshot {
    /// The mount at `mount_point` now; None when it is not an NFS mount
    /// or the kernel gives no per-op statistics.
    pub(crate) fn take(mount_point: &str) -> Option<Snapshot> {
        let text = std::fs::read_to_string("/proc/self/mountstats").ok()?;
        parse(&text, mount_point)
    }

    /// What happened between `self` and `later`, for a write (WRITE and
    /// COMMIT) or a read (READ).
    pub(crate) fn until(&self, later: &Snapshot, write: bool) -> NfsRpcs {
        let d = |a: OpCounters, b: OpCounters| OpCounters {
            ops: b.ops.saturating_sub(a.ops),
            rtt_ms: b.rtt_ms.saturating_sub(a.rtt_ms),
        };
        let (data, commit) = if write {
            (d(self.write, later.write), d(self.commit, later.commit))
        } else {
            (d(self.read, later.read), OpCounters::default())
        };
        NfsRpcs {
            ops: data.ops,
            rtt_ms: data.rtt_ms,
            commits: commit.ops,
            commit_rtt_ms: commit.rtt_ms,
        }
    }
}

/// The per-op counters of the mount at `mount_point` in `mountstats`'s
/// text: its `device … mounted on POINT with fstype nfs…` block, whose
/// per-op lines read `NAME: ops transmissions timeouts bytes_sent
/// bytes_received queue rtt execute [errors]` (times in ms, cumulative).
pub(crate) fn parse(text: &str, mount_point: &str) -> Option<Snapshot> {
    let mut lines = text.lines().skip_while(|l| !is_header_of(l, mount_point));
    lines.next()?;
    let mut snap = Snapshot::default();
    let mut any = false;
    for line in lines.take_while(|l| !l.starts_with("device ")) {
        let Some((name, rest)) = line.trim().split_once(':') else {
            continue;
        };
        let n: Vec<u64> = rest
            .split_whitespace()
            .map_while(|w| w.parse().ok())
            .collect();
        let (Some(&ops), Some(&rtt_ms)) = (n.first(), n.get(6)) else {
            continue;
        };
        let c = OpCounters { ops, rtt_ms };
        match name {
            "WRITE" => snap.write = c,
            "READ" => snap.read = c,
            "COMMIT" => snap.commit = c,
            _ => continue,
        }
        any = true;
    }
    any.then_some(snap)
}

fn is_header_of(line: &str, mount_point: &str) -> bool {
    device_line(line).is_some_and(|(point, fs)| point == mount_point && fs.starts_with("nfs"))
}

/// A `device SOURCE mounted on POINT with fstype FS …` line's mount point
/// (unescaped) and the rest from its filesystem type on.
pub(crate) fn device_line(line: &str) -> Option<(String, &str)> {
    let (_, after) = line.strip_prefix("device ")?.split_once(" mounted on ")?;
    let (point, fs) = after.split_once(" with fstype ")?;
    Some((unescape(point), fs))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In the layout Debian 12's kernel (6.1) prints: an NFSv4.2 mount
    /// beside a tmpfs and a second NFS mount; the figures are the test's.
    const TEXT: &str = "\
device tmpfs mounted on /tmp with fstype tmpfs
device 10.0.0.1:/sync mounted on /mnt/my\\040sync with fstype nfs4 statvers=1.1
\topts:\trw,vers=4.2,rsize=1048576,wsize=1048576
\tper-op statistics
\t        NULL: 1 1 0 44 24 0 0 0 0
\t        READ: 32 32 0 5504 33558528 3 181 186 0
\t       WRITE: 32 32 0 33560064 5120 1 1722 1729 0
\t      COMMIT: 0 0 0 0 0 0 0 0 0
\t        OPEN: 1 1 0 300 400 0 2 2 0
device 10.0.0.1:/async mounted on /mnt/async with fstype nfs4 statvers=1.1
\tper-op statistics
\t       WRITE: 5 5 0 100 100 0 9 9 0
";

    #[test]
    fn a_mounts_own_block_is_read_by_its_unescaped_point() {
        let s = parse(TEXT, "/mnt/my sync").unwrap();
        assert_eq!(
            s.write,
            OpCounters {
                ops: 32,
                rtt_ms: 1722
            }
        );
        assert_eq!(
            s.read,
            OpCounters {
                ops: 32,
                rtt_ms: 181
            }
        );
        assert_eq!(s.commit, OpCounters::default());
        let a = parse(TEXT, "/mnt/async").unwrap();
        assert_eq!(a.write, OpCounters { ops: 5, rtt_ms: 9 });
        assert!(parse(TEXT, "/tmp").is_none(), "tmpfs is not NFS");
        assert!(parse(TEXT, "/mnt/none").is_none());
    }

    #[test]
    fn a_write_counts_its_writes_and_commits_and_a_read_its_reads() {
        let before = parse(TEXT, "/mnt/my sync").unwrap();
        let mut after = before;
        after.write.ops += 4;
        after.write.rtt_ms += 200;
        after.commit = OpCounters { ops: 1, rtt_ms: 50 };
        after.read.ops += 9;
        let w = before.until(&after, true);
        assert_eq!(
            (w.ops, w.rtt_ms, w.commits, w.commit_rtt_ms),
            (4, 200, 1, 50)
        );
        assert_eq!(w.waited_ms(), 250);
        let r = before.until(&after, false);
        assert_eq!((r.ops, r.rtt_ms, r.commits), (9, 0, 0));
    }
}
