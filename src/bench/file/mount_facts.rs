//! What a directory's mount says about the protocol under it: the type,
//! the server, and the options that set a network filesystem's speed (NFS
//! `rsize`/`wsize`/`nconnect`/`sync`/`vers`; CIFS `rsize`/`wsize`/`cache=`/
//! `seal`/`sign`/`vers`/`multichannel`), from `/proc/self/mountinfo`
//! ([`crate::mounted`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::smb_debug::{self, SmbShare};
use crate::mounted::MountData;

/// The mount a `--dir` run went through.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MountFacts {
    pub mount_point: String,
    pub fs_type: String,
    pub source: String,
    /// The server's name or address (`nas` of `nas:/tank` or `//nas/media`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The options that matter for the protocol's speed, as mounted.
    pub options: BTreeMap<String, String>,
    /// SMB: the share as the kernel's client has it (dialect, encryption),
    /// from `/proc/fs/cifs/DebugData`; none when that cannot be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smb: Option<SmbShare>,
}

/// The options kept for each protocol.
const NFS_KEYS: &[&str] = &[
    "vers", "rsize", "wsize", "nconnect", "sync", "proto", "hard", "soft",
];
const CIFS_KEYS: &[&str] = &[
    "vers",
    "rsize",
    "wsize",
    "cache",
    "seal",
    "sign",
    "multichannel",
    "max_channels",
    "esize",
];

impl MountFacts {
    /// The facts of a live mount: its options, and for SMB its share as
    /// the kernel's client has it now.
    pub(crate) fn of(m: &MountData) -> MountFacts {
        let mut f = MountFacts::of_options(m);
        if is_smb(&f.fs_type) {
            f.smb = smb_debug::live(&f.source);
        }
        f
    }

    /// The facts the mount's line alone gives.
    pub(crate) fn of_options(m: &MountData) -> MountFacts {
        let keys: &[&str] = if is_nfs(&m.fs_type) {
            NFS_KEYS
        } else if is_smb(&m.fs_type) {
            CIFS_KEYS
        } else {
            &[]
        };
        let options = m
            .options
            .iter()
            .filter(|(k, _)| keys.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone().unwrap_or_default()))
            .collect();
        MountFacts {
            mount_point: m.mount_point.clone(),
            fs_type: m.fs_type.clone(),
            source: m.source.clone(),
            server: server_of(&m.fs_type, &m.source),
            options,
            smb: None,
        }
    }

    pub(crate) fn is_network(&self) -> bool {
        is_nfs(&self.fs_type) || is_smb(&self.fs_type)
    }

    /// An option's value (`""` for a flag), None when not mounted with it.
    pub(crate) fn option(&self, key: &str) -> Option<&str> {
        self.options.get(key).map(String::as_str)
    }

    /// A size option in bytes (`rsize=1048576`).
    pub(crate) fn bytes(&self, key: &str) -> Option<u64> {
        self.option(key).and_then(|v| v.parse().ok())
    }

    /// `key=value,flag` of the kept options, for history rows and tables.
    pub(crate) fn options_text(&self) -> String {
        self.options
            .iter()
            .map(|(k, v)| {
                if v.is_empty() {
                    k.clone()
                } else {
                    format!("{k}={v}")
                }
            })
            .collect::<Vec<_>>()
            .join(",")
    }
}

pub(crate) fn is_nfs(fs_type: &str) -> bool {
    fs_type == "nfs" || fs_type == "nfs4"
}

pub(crate) fn is_smb(fs_type: &str) -> bool {
    fs_type == "cifs" || fs_type == "smb3"
}

/// The server of an NFS (`host:/path`, `[v6]:/path`) or CIFS
/// (`//host/share`) source.
fn server_of(fs_type: &str, source: &str) -> Option<String> {
    let host = if is_nfs(fs_type) {
        let (h, _) = source.rsplit_once(":/")?;
        h.trim_start_matches('[').trim_end_matches(']')
    } else if is_smb(fs_type) {
        source.strip_prefix("//")?.split('/').next()?
    } else {
        return None;
    };
    (!host.is_empty()).then(|| host.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mount(fs: &str, source: &str, opts: &str) -> MountData {
        let line = format!("36 25 0:44 / /mnt/m rw,relatime - {fs} {source} {opts}");
        crate::mounted::parse(&line).remove(0)
    }

    #[test]
    fn nfs_and_cifs_options_and_servers_are_read() {
        let n = MountFacts::of(&mount(
            "nfs4",
            "nas:/tank/media",
            "rw,vers=4.2,rsize=131072,wsize=131072,hard,proto=tcp,timeo=600,addr=10.0.0.2",
        ));
        assert_eq!(n.server.as_deref(), Some("nas"));
        assert_eq!(n.bytes("rsize"), Some(131_072));
        assert_eq!(n.option("nconnect"), None);
        assert_eq!(
            n.options_text(),
            "hard,proto=tcp,rsize=131072,vers=4.2,wsize=131072"
        );
        let c = MountFacts::of(&mount(
            "cifs",
            "//10.0.0.3/media",
            "rw,vers=3.0,cache=strict,seal,rsize=4194304,wsize=4194304,uid=0",
        ));
        assert_eq!(c.server.as_deref(), Some("10.0.0.3"));
        assert_eq!(c.option("seal"), Some(""));
        assert!(c.is_network());
        let v6 = MountFacts::of(&mount("nfs", "[fd00::2]:/srv", "rw,vers=3"));
        assert_eq!(v6.server.as_deref(), Some("fd00::2"));
        let local = MountFacts::of(&mount("ext4", "/dev/vda", "rw"));
        assert_eq!((local.server, local.options.len()), (None, 0));
    }
}
