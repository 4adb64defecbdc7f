//! Which AEAD a transfer's encryption runs, from what the protocol said:
//! SSH's negotiated cipher (`ssh -v`); SMB3's encryption, asked by the
//! mount (`seal`) or required by the server for the share (seen in
//! `/proc/fs/cifs/DebugData`, which also gives the dialect the connection
//! negotiated; the mount's `vers` when it cannot be read). 3.0 and 3.0.2
//! can only use AES-128-CCM; 3.1.1 negotiates AES-128-GCM first, as Linux's
//! cifs and Samba order them, or AES-256-GCM when cifs' `require_gcm_256`
//! is set. The kernel does not print the cipher itself. A mount that only
//! signs is named with its MAC: AES-128-CMAC, measured per core like the
//! AEADs, from SMB 3.0 on; HMAC-SHA256 (not measured) before.

use crate::bench::crypto::Aead;
use crate::bench::file::{Direction, FileReport, MountFacts};

/// The encryption a transfer paid for.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Encryption {
    /// As the protocol names it (`chacha20-poly1305@openssh.com`,
    /// `AES-128-CCM via seal`).
    pub(crate) named: String,
    /// The AEAD (or signing MAC) this CPU measured for it; None for one
    /// hlctl does not measure (CTR with a separate MAC, HMAC-SHA256).
    pub(crate) aead: Option<Aead>,
}

/// The AEAD of an OpenSSH cipher name.
pub(crate) fn of_ssh(cipher: &str) -> Option<Aead> {
    match cipher {
        "chacha20-poly1305@openssh.com" => Some(Aead::ChaCha20Poly1305),
        "aes128-gcm@openssh.com" => Some(Aead::Aes128Gcm),
        "aes256-gcm@openssh.com" => Some(Aead::Aes256Gcm),
        _ => None,
    }
}

/// OpenSSH's name of an AEAD, for advice (`-c NAME`).
pub(crate) fn ssh_name(a: Aead) -> Option<&'static str> {
    match a {
        Aead::ChaCha20Poly1305 => Some("chacha20-poly1305@openssh.com"),
        Aead::Aes128Gcm => Some("aes128-gcm@openssh.com"),
        Aead::Aes256Gcm => Some("aes256-gcm@openssh.com"),
        Aead::Aes128Ccm | Aead::Aes128Cmac => None,
    }
}

/// The encryption of `f`'s transfer in `direction`, if any.
pub(crate) fn of(f: &FileReport, direction: Direction) -> Option<Encryption> {
    if let Some(ssh) = &f.ssh {
        let named = match direction {
            Direction::Write => &ssh.cipher_client_to_server,
            Direction::Read => &ssh.cipher_server_to_client,
        };
        return Some(Encryption {
            named: named.clone(),
            aead: of_ssh(named),
        });
    }
    of_mount(f.mount.as_ref()?)
}

/// The encryption of a mount's traffic: SMB3's, asked by `seal` or
/// required by the server, with the AEAD its dialect can use; else its
/// signing, when the mount asks for it (`sign`, or its connection signs).
pub(crate) fn of_mount(m: &MountFacts) -> Option<Encryption> {
    if !crate::bench::file::mount_facts::is_smb(&m.fs_type) {
        return None;
    }
    let seal = m.option("seal").is_some();
    let smb = m.smb.as_ref();
    let server = smb.is_some_and(|s| s.server_encrypts);
    let dialect = smb.and_then(|s| s.dialect.as_deref());
    if !seal && !server && !smb.is_some_and(|s| s.encrypted) {
        let how = if m.option("sign").is_some() {
            "via sign"
        } else if smb.is_some_and(|s| s.signed) {
            "(the connection signs)"
        } else {
            return None;
        };
        return Some(signing(dialect.or(m.option("vers")), how));
    }
    let gcm_256_only = smb.is_some_and(|s| s.gcm_256_only);
    let aead = match dialect.or(m.option("vers")).unwrap_or("") {
        "3" | "3.0" | "3.02" | "3.0.2" => Aead::Aes128Ccm,
        _ if gcm_256_only => Aead::Aes256Gcm,
        _ => Aead::Aes128Gcm,
    };
    let how = if seal {
        "via seal"
    } else if server {
        "required by the server for this share"
    } else {
        "(the client encrypts this share)"
    };
    Some(Encryption {
        named: format!("{} {how}", aead.name().to_uppercase()),
        aead: Some(aead),
    })
}

/// A mount that signs but does not encrypt (`sign`, or its connection
/// `signed` in DebugData): AES-128-CMAC from SMB 3.0 on (Linux's cifs
/// does not offer 3.1.1's AES-GMAC signing unless told to), measured per
/// core; HMAC-SHA256 before, not measured.
fn signing(dialect: Option<&str>, how: &str) -> Encryption {
    let (mac, aead) = if dialect.is_some_and(|d| d.starts_with('2') || d == "1.0") {
        ("HMAC-SHA256", None)
    } else {
        ("AES-128-CMAC", Some(Aead::Aes128Cmac))
    };
    Encryption {
        named: format!("{mac} signing {how}"),
        aead,
    }
}
