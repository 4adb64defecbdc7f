//! `--dir`: the filesystem holding a directory, and for NFS its options
//! (rsize/wsize below 1 MiB, `sync`, the protocol version), from
//! `/proc/self/mountinfo`.

use std::collections::BTreeMap;
use std::path::Path;

use super::finding::{Finding, Outcome, Severity};
use super::inputs::MountData;

/// `\040` and friends: mountinfo escapes spaces, tabs, newlines, backslashes.
fn unescape(s: &str) -> String {
    let mut out = String::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            out.push(char::from_u32(v).unwrap_or('?'));
            i += 4;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

fn options(s: &str, into: &mut BTreeMap<String, Option<String>>) {
    for o in s.split(',').filter(|o| !o.is_empty()) {
        match o.split_once('=') {
            Some((k, v)) => into.insert(k.to_string(), Some(v.to_string())),
            None => into.insert(o.to_string(), None),
        };
    }
}

/// Parse mountinfo text into (mount point, fs type, source, options).
pub fn parse(text: &str) -> Vec<MountData> {
    text.lines()
        .filter_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let lf: Vec<&str> = left.split(' ').collect();
            let rf: Vec<&str> = right.split(' ').collect();
            let mut opts = BTreeMap::new();
            options(lf.get(5)?, &mut opts);
            options(rf.get(2).copied().unwrap_or(""), &mut opts);
            Some(MountData {
                dir: String::new(),
                mount_point: unescape(lf.get(4)?),
                fs_type: rf.first()?.to_string(),
                source: unescape(rf.get(1).copied().unwrap_or("")),
                options: opts,
            })
        })
        .collect()
}

/// The mount holding `dir` (longest mount point that is a prefix; the last
/// one mounted there wins).
pub fn find(mounts: &[MountData], dir: &Path) -> Option<MountData> {
    let mut best: Option<&MountData> = None;
    for m in mounts {
        if dir.starts_with(&m.mount_point)
            && best.is_none_or(|b| m.mount_point.len() >= b.mount_point.len())
        {
            best = Some(m);
        }
    }
    best.cloned().map(|mut m| {
        m.dir = dir.display().to_string();
        m
    })
}

/// Look `dir` up in this process's mount table.
pub fn lookup(dir: &str) -> Result<MountData, (String, String)> {
    let canon = std::fs::canonicalize(dir).map_err(|e| (dir.to_string(), format!("{dir}: {e}")))?;
    let text = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| (dir.to_string(), format!("/proc/self/mountinfo: {e}")))?;
    find(&parse(&text), &canon).ok_or_else(|| (dir.to_string(), "no mount holds it".into()))
}

const ONE_MIB: u64 = 1 << 20;

pub fn check(m: &MountData, out: &mut Outcome) {
    let what = format!("{} ({} on {})", m.dir, m.fs_type, m.mount_point);
    if !m.fs_type.starts_with("nfs") {
        out.pass("filesystem", None, what);
        return;
    }
    let num = |k: &str| {
        m.options
            .get(k)
            .cloned()
            .flatten()
            .and_then(|v| v.parse::<u64>().ok())
    };
    let remount = |extra: &str| {
        format!(
            "# remount with {extra}: mount -o remount,{extra} {} (or edit its fstab line)",
            m.mount_point
        )
    };
    let mut small = Vec::new();
    for k in ["rsize", "wsize"] {
        if let Some(v) = num(k)
            && v < ONE_MIB
        {
            small.push((k, v));
        }
    }
    if !small.is_empty() {
        let mut f = Finding::new(
            "nfs-small-rsize-wsize",
            Severity::Warning,
            None,
            format!("{}: NFS transfers in blocks below 1 MiB", m.dir),
        )
        .evidence("mount", &what)
        .evidence("source", &m.source);
        for (k, v) in &small {
            f = f.evidence(k, v);
        }
        out.find(
            f.why("each NFS read/write RPC moves at most rsize/wsize bytes: small blocks mean many round trips per MiB, which caps sequential throughput")
                .fix(remount("rsize=1048576,wsize=1048576")),
        );
    }
    if m.options.contains_key("sync") {
        out.find(
            Finding::new("nfs-sync", Severity::Warning, None, format!("{}: NFS mounted sync", m.dir))
                .evidence("mount", &what)
                .evidence("options", "sync")
                .why("with sync every write waits for the server to commit it before the next one starts")
                .fix(remount("async")),
        );
    }
    let vers = m.options.get("vers").cloned().flatten().unwrap_or_default();
    if vers == "3" || vers == "4.0" || vers == "4" || vers == "2" {
        out.find(
            Finding::new("nfs-old-version", Severity::Info, None, format!("{}: NFS version {vers}", m.dir))
                .evidence("mount", &what)
                .evidence("vers", &vers)
                .why("NFS 4.1/4.2 add sessions, parallel slots and server-side copy; older versions serialise more and lack them")
                .fix(remount("vers=4.2")),
        );
    }
    if small.is_empty()
        && !m.options.contains_key("sync")
        && !matches!(vers.as_str(), "2" | "3" | "4" | "4.0")
    {
        out.pass(
            "nfs-options",
            None,
            format!(
                "{what}: vers={vers}, rsize={}, wsize={}",
                num("rsize").unwrap_or(0),
                num("wsize").unwrap_or(0)
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INFO: &str = "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n\
        40 22 0:45 / /mnt/nas rw,relatime shared:30 - nfs4 192.168.2.129:/volume1/nfs01 rw,sync,vers=4.0,rsize=131072,wsize=131072,namlen=255,proto=tcp\n\
        41 22 0:46 / /mnt/my\\040disk rw - xfs /dev/sdb1 rw\n";

    #[test]
    fn nfs_options_and_plain_filesystems() {
        let all = parse(INFO);
        assert_eq!(all.len(), 3);
        assert_eq!(all[2].mount_point, "/mnt/my disk");
        let m = find(&all, Path::new("/mnt/nas/media")).unwrap();
        assert_eq!(m.fs_type, "nfs4");
        let mut out = Outcome::default();
        check(&m, &mut out);
        let ids: Vec<&str> = out.findings.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(
            ids,
            ["nfs-small-rsize-wsize", "nfs-sync", "nfs-old-version"]
        );
        let m = find(&all, Path::new("/home/x")).unwrap();
        let mut out = Outcome::default();
        check(&m, &mut out);
        assert!(out.findings.is_empty());
        assert_eq!(out.passed[0].check, "filesystem");
    }
}
