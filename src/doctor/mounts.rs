//! `--dir`: the filesystem holding a directory, and for NFS its options
//! (rsize/wsize below 1 MiB, `sync`, the protocol version) and for SMB
//! (`cifs`: `vers`, rsize/wsize, `cache=`, signing and encryption), from
//! `/proc/self/mountinfo`.

use super::finding::{Finding, Outcome, Severity};
use super::inputs::MountData;

pub(crate) use crate::mounted::lookup;

const ONE_MIB: u64 = 1 << 20;

/// What the mount options cost, as findings (empty: nothing to say).
fn problems(m: &MountData) -> Vec<Finding> {
    if m.fs_type.starts_with("nfs") {
        nfs_problems(m)
    } else if is_smb(&m.fs_type) {
        smb_problems(m)
    } else {
        Vec::new()
    }
}

fn is_smb(fs_type: &str) -> bool {
    matches!(fs_type, "cifs" | "smb3")
}

/// The mount option problems of `m`, one line each (for the storage playbook).
pub(crate) fn option_problems(m: &MountData) -> Vec<String> {
    problems(m).into_iter().map(|f| f.title).collect()
}

fn what(m: &MountData) -> String {
    format!("{} ({} on {})", m.dir, m.fs_type, m.mount_point)
}

fn opt(m: &MountData, k: &str) -> Option<String> {
    m.options.get(k).cloned().flatten()
}

fn num(m: &MountData, k: &str) -> Option<u64> {
    opt(m, k).and_then(|v| v.parse::<u64>().ok())
}

fn remount(m: &MountData, extra: &str) -> String {
    format!(
        "# remount with {extra}: mount -o remount,{extra} {} (or edit its fstab line)",
        m.mount_point
    )
}

/// rsize/wsize below 1 MiB (NFS and SMB alike).
fn small_blocks(m: &MountData, id: &str, proto: &str) -> Option<Finding> {
    let small: Vec<(&str, u64)> = ["rsize", "wsize"]
        .into_iter()
        .filter_map(|k| num(m, k).filter(|v| *v < ONE_MIB).map(|v| (k, v)))
        .collect();
    if small.is_empty() {
        return None;
    }
    let mut f = Finding::new(
        id,
        Severity::Warning,
        None,
        format!("{}: {proto} transfers in blocks below 1 MiB", m.dir),
    )
    .evidence("mount", what(m))
    .evidence("source", &m.source);
    for (k, v) in &small {
        f = f.evidence(k, v);
    }
    Some(
        f.why(&format!("each {proto} read/write request moves at most rsize/wsize bytes: small blocks mean many round trips per MiB, which caps sequential throughput"))
            .fix(remount(m, "rsize=1048576,wsize=1048576")),
    )
}

fn nfs_problems(m: &MountData) -> Vec<Finding> {
    let mut v = Vec::new();
    v.extend(small_blocks(m, "nfs-small-rsize-wsize", "NFS"));
    if m.options.contains_key("sync") {
        v.push(
            Finding::new("nfs-sync", Severity::Warning, None, format!("{}: NFS mounted sync", m.dir))
                .evidence("mount", what(m))
                .evidence("options", "sync")
                .why("with sync every write waits for the server to commit it before the next one starts")
                .fix(remount(m, "async")),
        );
    }
    let vers = opt(m, "vers").unwrap_or_default();
    if matches!(vers.as_str(), "2" | "3" | "4" | "4.0") {
        v.push(
            Finding::new("nfs-old-version", Severity::Info, None, format!("{}: NFS version {vers}", m.dir))
                .evidence("mount", what(m))
                .evidence("vers", &vers)
                .why("NFS 4.1/4.2 add sessions, parallel slots and server-side copy; older versions serialise more and lack them")
                .fix(remount(m, "vers=4.2")),
        );
    }
    v
}

fn smb_problems(m: &MountData) -> Vec<Finding> {
    let mut v = Vec::new();
    v.extend(small_blocks(m, "smb-small-rsize-wsize", "SMB"));
    let vers = opt(m, "vers").unwrap_or_default();
    if matches!(vers.as_str(), "1.0" | "2.0" | "2.1") {
        v.push(
            Finding::new("smb-old-version", Severity::Warning, None, format!("{}: SMB version {vers}", m.dir))
                .evidence("mount", what(m))
                .evidence("vers", &vers)
                .why("SMB 1 and 2.x lack multi-credit large transfers and SMB 3's faster signing: they move far less per round trip")
                .fix(remount(m, "vers=3.1.1")),
        );
    }
    if opt(m, "cache").as_deref() == Some("none") {
        v.push(
            Finding::new("smb-cache-none", Severity::Warning, None, format!("{}: SMB mounted cache=none", m.dir))
                .evidence("mount", what(m))
                .evidence("cache", "none")
                .why("without the page cache every read and write goes to the server in small synchronous requests")
                .fix(remount(m, "cache=strict")),
        );
    }
    if m.options.contains_key("seal") {
        v.push(
            Finding::new("smb-encryption", Severity::Info, None, format!("{}: SMB encryption on (seal)", m.dir))
                .evidence("mount", what(m))
                .evidence("options", "seal")
                .why("every byte is encrypted and authenticated by the CPU on both ends: users measured encrypted SMB far slower than plain; keep it where the network is untrusted")
                .fix("# on a trusted LAN: remount without seal (and set `smb encrypt = if_required` or off on the server)"),
        );
    }
    if m.options.contains_key("sign") {
        v.push(
            Finding::new("smb-signing", Severity::Info, None, format!("{}: SMB signing required (sign)", m.dir))
                .evidence("mount", what(m))
                .evidence("options", "sign")
                .why("every request is hashed by the CPU on both ends: cheaper than encryption, still measurable on slow CPUs")
                .fix("# on a trusted LAN: remount without sign (and `server signing = auto` on the server)"),
        );
    }
    v
}

pub(crate) fn check(m: &MountData, out: &mut Outcome) {
    let what = what(m);
    let smb = is_smb(&m.fs_type);
    if !m.fs_type.starts_with("nfs") && !smb {
        out.pass("filesystem", None, what);
        return;
    }
    let found = problems(m);
    if found.is_empty() {
        let vers = opt(m, "vers").unwrap_or_default();
        let mut detail = format!(
            "{what}: vers={vers}, rsize={}, wsize={}",
            num(m, "rsize").unwrap_or(0),
            num(m, "wsize").unwrap_or(0)
        );
        if smb {
            detail += &format!(", cache={}", opt(m, "cache").unwrap_or_default());
        }
        out.pass(
            if smb { "smb-options" } else { "nfs-options" },
            None,
            detail,
        );
    }
    for f in found {
        out.find(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mounted::{find, parse};
    use std::path::Path;

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

    /// The kernel's own text for cifs mounts (as `cifs_show_options` writes it).
    const SMB: &str = "50 22 0:50 / /mnt/smb rw,relatime shared:40 - cifs //nas/media rw,vers=2.1,cache=none,username=u,uid=0,noforceuid,gid=0,noforcegid,addr=10.0.0.2,file_mode=0755,dir_mode=0755,seal,sign,soft,nounix,serverino,mapposix,rsize=65536,wsize=65536,bsize=1048576,retrans=1,echo_interval=60,actimeo=1,closetimeo=1\n\
        51 22 0:51 / /mnt/smb2 rw,relatime shared:41 - cifs //nas/backup rw,vers=3.1.1,cache=strict,username=u,uid=0,noforceuid,gid=0,noforcegid,addr=10.0.0.2,file_mode=0755,dir_mode=0755,soft,nounix,serverino,mapposix,rsize=4194304,wsize=4194304,bsize=1048576,retrans=1,echo_interval=60,actimeo=1,closetimeo=1\n\
        52 22 0:52 / /mnt/nas2 rw,relatime shared:42 - nfs4 10.0.0.2:/v rw,vers=4.2,rsize=1048576,wsize=1048576,namlen=255,hard,proto=tcp,timeo=600,retrans=2,sec=sys,clientaddr=10.0.0.1,local_lock=none,addr=10.0.0.2\n";

    #[test]
    fn smb_options() {
        let all = parse(SMB);
        let m = find(&all, Path::new("/mnt/smb/x")).unwrap();
        let mut out = Outcome::default();
        check(&m, &mut out);
        let ids: Vec<&str> = out.findings.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "smb-small-rsize-wsize",
                "smb-old-version",
                "smb-cache-none",
                "smb-encryption",
                "smb-signing"
            ]
        );
        assert_eq!(option_problems(&m).len(), 5);
        for good in ["/mnt/smb2", "/mnt/nas2"] {
            let m = find(&all, Path::new(good)).unwrap();
            let mut out = Outcome::default();
            check(&m, &mut out);
            assert!(out.findings.is_empty(), "{good}: {:?}", out.findings);
            assert!(option_problems(&m).is_empty());
            assert!(out.passed[0].detail.contains("rsize="), "{:?}", out.passed);
        }
    }
}
