//! A file's name as the user who started hlctl's container gave it: inside
//! a container (`caps::in_container`), a path on a bind mount of a host
//! directory (`-v /volume1/hlctl:/var/lib/hlctl`) is shown with where it
//! comes from, read from `/proc/self/mountinfo`: the mount's root (the
//! directory below its filesystem's root) and the filesystem's device, e.g.
//! `/var/lib/hlctl/nic-settings.json (mounted from
//! /volume1/hlctl/nic-settings.json on /dev/md2)`. The kernel names the
//! directory from the root of that device's filesystem, not from the host's
//! `/`: where the device is the host's root filesystem the two are the
//! same; where it is mounted elsewhere on the host (a NAS's `/volume1`),
//! the mount point is left out, so the device is named with it.
//!
//! The mount table itself is read here once ([`parse`], [`find`],
//! [`lookup`]): `doctor --dir` judges a mount's options with it, `bench
//! file --dir` names the protocol and options it measured through.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// `path`, followed inside a container by where it was mounted from
/// (module doc); unchanged outside a container, or where it lies on no bind
/// mount of a directory.
pub(crate) fn shown(path: &str) -> String {
    if !crate::caps::in_container() {
        return path.to_string();
    }
    let origin = std::fs::read_to_string("/proc/self/mountinfo")
        .ok()
        .and_then(|text| origin(&text, Path::new(path)));
    match origin {
        Some(o) => format!("{path} (mounted from {o})"),
        None => path.to_string(),
    }
}

/// Where `path` comes from by the mount holding it in `mountinfo` (the
/// longest mount point above it; the last one mounted there wins): `ROOT/REST
/// on SOURCE`. None when that mount holds a whole filesystem (root `/`: not
/// a directory of the host's), or when no mount holds `path`.
pub(crate) fn origin(mountinfo: &str, path: &Path) -> Option<String> {
    let mut best: Option<(String, String, String)> = None;
    for line in mountinfo.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let f: Vec<&str> = left.split(' ').collect();
        let (Some(root), Some(point)) = (f.get(3), f.get(4)) else {
            continue;
        };
        let (root, point) = (unescape(root), unescape(point));
        let longer = best.as_ref().is_none_or(|b| point.len() >= b.1.len());
        if path.starts_with(&point) && longer {
            let source = unescape(right.split(' ').nth(1).unwrap_or(""));
            best = Some((root, point, source));
        }
    }
    let (root, point, source) = best?;
    if root == "/" {
        return None;
    }
    let rest = path.strip_prefix(&point).ok()?;
    let host = if rest.as_os_str().is_empty() {
        Path::new(&root).to_path_buf()
    } else {
        Path::new(&root).join(rest)
    };
    Some(format!("{} on {source}", host.display()))
}

/// `\040` and friends: mountinfo escapes spaces, tabs, newlines, backslashes.
/// Other bytes pass as they are, so a UTF-8 name stays whole.
pub(crate) fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| b[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)))
            .map(|d| d.iter().fold(0u16, |v, c| v << 3 | u16::from(c - b'0')));
        match octal.and_then(|v| u8::try_from(v).ok()) {
            Some(byte) => {
                out.push(byte);
                i += 4;
            }
            _ => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The mount holding one directory, from `/proc/self/mountinfo`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct MountData {
    pub(crate) dir: String,
    pub(crate) mount_point: String,
    pub(crate) fs_type: String,
    pub(crate) source: String,
    /// Per-mount and superblock options together.
    pub(crate) options: BTreeMap<String, Option<String>>,
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
pub(crate) fn parse(text: &str) -> Vec<MountData> {
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
pub(crate) fn find(mounts: &[MountData], dir: &Path) -> Option<MountData> {
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
pub(crate) fn lookup(dir: &str) -> Result<MountData, (String, String)> {
    let canon = std::fs::canonicalize(dir).map_err(|e| (dir.to_string(), format!("{dir}: {e}")))?;
    let text = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| (dir.to_string(), format!("/proc/self/mountinfo: {e}")))?;
    find(&parse(&text), &canon).ok_or_else(|| (dir.to_string(), "no mount holds it".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A podman container's mountinfo (runc, `-v /tmp/hl vol:/var/lib/hlctl`).
    const INFO: &str = "\
1071 1010 0:98 / / rw,relatime - overlay overlay rw,lowerdir=/var/lib/containers/l
1072 1071 0:100 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
1080 1071 254:0 /tmp/hl\\040vol /var/lib/hlctl rw,relatime - ext4 /dev/vda rw
1081 1071 254:0 /var/lib/containers/storage/overlay-containers/x/userdata/hosts /etc/hosts rw - ext4 /dev/vda rw
1082 1080 0:50 / /var/lib/hlctl/sub rw - tmpfs tmpfs rw
";

    #[test]
    fn a_bind_mounted_directory_is_named_from_its_filesystems_root() {
        let o = |p: &str| origin(INFO, Path::new(p));
        assert_eq!(
            o("/var/lib/hlctl/nic-settings.json").as_deref(),
            Some("/tmp/hl vol/nic-settings.json on /dev/vda")
        );
        assert_eq!(
            o("/var/lib/hlctl").as_deref(),
            Some("/tmp/hl vol on /dev/vda")
        );
        // Not `/var/lib/hlctlx`: whole components only.
        assert_eq!(o("/var/lib/hlctlx/a"), None);
        // The container's own root and a whole filesystem mounted: nothing.
        assert_eq!(o("/etc/sysctl.d/90-hlctl.conf"), None);
        assert_eq!(o("/var/lib/hlctl/sub/history.db"), None);
        assert_eq!(origin("garbage\n", Path::new("/a")), None);
        assert_eq!(
            unescape("/srv/m\\303\\251dia\\040x/\\134"),
            "/srv/média x/\\"
        );
        assert_eq!(unescape("/srv/média"), "/srv/média");
        assert_eq!(unescape("a\\777b\\04"), "a\\777b\\04");
    }
}
