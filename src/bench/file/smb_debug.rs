//! What the kernel's SMB client says of its connections
//! (`/proc/fs/cifs/DebugData`): per share, the dialect its connection
//! negotiated; whether its traffic is encrypted (`Encrypted` after the
//! share's serial number, printed both for a mount with `seal` and for one
//! without it on a share whose server requires encryption); the server's
//! requirement itself (share flag SMB2_SHAREFLAG_ENCRYPT_DATA, 0x8000:
//! Samba's `smb encrypt = required`), which the mount's options never show;
//! and whether the connection signs (`signed` after its dialect: a mount
//! with `sign`, which its options do not show either). Seen on Debian 12's
//! 6.1 with Samba 4.17 (tests/vm_stacks_nfs.rs). DebugData does not say
//! which mount uses which connection: when one share is reached over
//! connections that differ (a second mount of it with `sign`), none is
//! chosen.

use serde::{Deserialize, Serialize};

/// The share flag by which a server requires encryption.
const SHAREFLAG_ENCRYPT_DATA: u32 = 0x8000;

/// One tree connection of the kernel's SMB client.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SmbShare {
    /// `\\server\share` as the kernel prints it.
    pub(crate) unc: String,
    /// The connection's dialect, `3.1.1` for 0x311.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) dialect: Option<String>,
    /// The client encrypts this share's traffic (`Encrypted`).
    pub(crate) encrypted: bool,
    /// The server requires encryption of this share (share flag 0x8000).
    pub(crate) server_encrypts: bool,
    /// The connection signs its messages.
    #[serde(default)]
    pub(crate) signed: bool,
    /// The client takes AES-256-GCM only (cifs' `require_gcm_256`).
    #[serde(default)]
    pub(crate) gcm_256_only: bool,
}

impl SmbShare {
    /// Whether a mount of `source` (`//server/share[/path]`) goes through
    /// this share: server and share compared as SMB does, case aside.
    pub(crate) fn serves(&self, source: &str) -> bool {
        let mount = unc_parts(source.trim_start_matches(['/', '\\']));
        let share = unc_parts(self.unc.trim_start_matches(['/', '\\']));
        mount.is_some() && mount == share
    }
}

/// `server/share` of `server/share/more` (either slash), lower case.
fn unc_parts(s: &str) -> Option<(String, String)> {
    let mut parts = s.split(['/', '\\']).filter(|p| !p.is_empty());
    let server = parts.next()?.to_lowercase();
    let share = parts.next()?.to_lowercase();
    Some((server, share))
}

/// `0x311` → `3.1.1`, `0x302` → `3.0.2`, `0x300` → `3.0`, `0x210` → `2.1`.
fn dialect(hex: &str) -> Option<String> {
    let v = u32::from_str_radix(hex.strip_prefix("0x")?, 16).ok()?;
    let (major, minor, patch) = (v >> 8, (v >> 4) & 0xf, v & 0xf);
    Some(if patch == 0 {
        format!("{major}.{minor}")
    } else {
        format!("{major}.{minor}.{patch}")
    })
}

/// The disk shares of a DebugData text (the IPC$ connections left out).
pub(crate) fn parse(text: &str) -> Vec<SmbShare> {
    let mut out: Vec<SmbShare> = Vec::new();
    let mut conn_dialect: Option<String> = None;
    let mut conn_signed = false;
    let mut current: Option<SmbShare> = None;
    for line in text.lines().map(str::trim) {
        if line.contains("ConnectionId:") {
            out.extend(current.take());
            conn_dialect = None;
            conn_signed = false;
        }
        if let Some(rest) = line.split_once("Dialect ").map(|(_, r)| r) {
            let mut words = rest.split_whitespace();
            conn_dialect = words.next().and_then(dialect);
            conn_signed = words.any(|w| w == "signed");
        }
        if let Some(unc) = share_line(line) {
            out.extend(current.take());
            current = Some(SmbShare {
                unc: unc.to_string(),
                dialect: conn_dialect.clone(),
                signed: conn_signed,
                ..SmbShare::default()
            });
            continue;
        }
        let Some(share) = current.as_mut() else {
            continue;
        };
        if line.contains("Serial Number:") {
            share.encrypted = line.split_whitespace().any(|w| w == "Encrypted");
        }
        if let Some(flags) = line.split_once("Share Flags: 0x").map(|(_, r)| r) {
            let hex: String = flags.chars().take_while(char::is_ascii_hexdigit).collect();
            let flags = u32::from_str_radix(&hex, 16).unwrap_or(0);
            share.server_encrypts = flags & SHAREFLAG_ENCRYPT_DATA != 0;
        }
    }
    out.extend(current);
    out
}

/// `1) \\10.0.0.1\media Mounts: 1 …` → `\\10.0.0.1\media`; IPC$ is none.
fn share_line(line: &str) -> Option<&str> {
    let (n, rest) = line.split_once(") ")?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) || !rest.starts_with("\\\\") {
        return None;
    }
    rest.split_whitespace().next()
}

/// The live share a mount of `source` goes through, if the kernel's SMB
/// client has it (none when `/proc/fs/cifs/DebugData` cannot be read).
pub(crate) fn live(source: &str) -> Option<SmbShare> {
    let text = std::fs::read_to_string("/proc/fs/cifs/DebugData").ok()?;
    let mut share = the_one(parse(&text), source)?;
    share.gcm_256_only = requires_gcm_256();
    Some(share)
}

/// The share `source` goes through, when every connection that reaches it
/// says the same of it.
fn the_one(shares: Vec<SmbShare>, source: &str) -> Option<SmbShare> {
    let mut found = shares.into_iter().filter(|s| s.serves(source));
    let first = found.next()?;
    found.all(|s| s == first).then_some(first)
}

/// Whether the client was told to use AES-256-GCM only
/// (`/sys/module/cifs/parameters/require_gcm_256`).
fn requires_gcm_256() -> bool {
    std::fs::read_to_string("/sys/module/cifs/parameters/require_gcm_256")
        .is_ok_and(|v| v.trim() == "Y")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let p = format!(
            "{}/tests/fixtures/proc/{name}.cifs-DebugData",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
    }

    #[test]
    fn the_captured_connection_has_a_sealed_and_a_plain_share_of_3_1_1() {
        let shares = parse(&fixture("captured-samba-2-shares"));
        assert_eq!(shares.len(), 2, "{shares:?}");
        let sealed = &shares[0];
        assert_eq!(sealed.unc, r"\\10.0.0.1\sealed");
        assert_eq!(sealed.dialect.as_deref(), Some("3.1.1"));
        assert!(sealed.encrypted && sealed.server_encrypts);
        let plain = &shares[1];
        assert_eq!(plain.unc, r"\\10.0.0.1\plain");
        assert!(!plain.encrypted && !plain.server_encrypts);
        assert!(sealed.serves("//10.0.0.1/sealed"));
        assert!(sealed.serves("//10.0.0.1/SEALED/films/2024"));
        assert!(!sealed.serves("//10.0.0.1/plain"));
        assert!(!sealed.serves("//10.0.0.2/sealed"));
    }

    #[test]
    fn each_connection_gives_its_own_shares_their_dialect() {
        let shares = parse(&fixture("captured-samba-3-connections"));
        assert!(shares.len() >= 3, "{shares:?}");
        assert!(shares.iter().all(|s| s.dialect.as_deref() == Some("3.1.1")));
        assert!(shares.iter().all(|s| !s.unc.ends_with("IPC$")));
    }

    #[test]
    fn a_server_that_requires_encryption_is_seen_without_seal() {
        let text = "1) ConnectionId: 0x1 Hostname: nas \nNumber of credits: 8 Dialect 0x302\n\
            \tShares: \n\t1) \\\\nas\\media Mounts: 1 DevInfo: 0x20 Attributes: 0x1006f\n\
            \tPathComponentMax: 255 Status: 1 type: DISK Serial Number: 0x1\n\
            \tShare Capabilities: None\tShare Flags: 0x8030\n";
        let s = &parse(text)[0];
        assert_eq!(s.dialect.as_deref(), Some("3.0.2"));
        assert!(!s.encrypted && s.server_encrypts);
        assert_eq!(dialect("0x300").as_deref(), Some("3.0"));
        assert_eq!(dialect("0x210").as_deref(), Some("2.1"));
        assert_eq!(dialect("311"), None);
    }

    #[test]
    fn a_share_reached_over_a_signed_and_a_plain_connection_is_none_of_them() {
        let conn = |id: u32, signed: &str, serial: &str| {
            format!(
                "{id}) ConnectionId: 0x{id} Hostname: nas \nNumber of credits: 8 Dialect 0x311{signed}\n\
                 \tShares: \n\t1) \\\\nas\\media Mounts: 1 DevInfo: 0x20\n\
                 \tPathComponentMax: 255 Status: 1 type: DISK Serial Number: {serial}\n\
                 \tShare Capabilities: None\tShare Flags: 0x0\n"
            )
        };
        let one = parse(&conn(1, " signed", "0x1"));
        assert!(one[0].signed, "{one:?}");
        assert_eq!(the_one(one.clone(), "//nas/media"), Some(one[0].clone()));
        let two = parse(&(conn(1, " signed", "0x1") + &conn(2, "", "0x1")));
        assert_eq!(two.len(), 2);
        assert!(!two[1].signed);
        assert_eq!(the_one(two, "//nas/media"), None);
        let same = parse(&(conn(1, "", "0x1") + &conn(2, "", "0x1")));
        assert!(the_one(same, "//nas/media").is_some());
    }

    #[test]
    fn nothing_mounted_or_garbage_gives_no_shares() {
        assert!(parse("").is_empty());
        let odd = parse("Servers: \n1) nonsense\n\t1) \\\\x");
        assert_eq!(odd.len(), 1);
        assert_eq!(
            (odd[0].unc.as_str(), odd[0].dialect.as_ref()),
            (r"\\x", None)
        );
        assert!(parse("Display Internal CIFS Data Structures for Debugging\n").is_empty());
    }
}
