//! Which AEAD a transfer's encryption runs, from what the protocol said:
//! SSH's negotiated cipher (`ssh -v`), SMB3's `seal` with the dialect of
//! the mount's `vers` (3.0 and 3.0.2 can only use AES-128-CCM; 3.1.1
//! negotiates AES-128-GCM first, as Linux's cifs and Samba order them).
//! `/proc/fs/cifs/DebugData` is not read yet: the dialect comes from the
//! mount options.

use crate::bench::crypto::Aead;
use crate::bench::file::{Direction, FileReport, MountFacts};

/// The encryption a transfer paid for.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Encryption {
    /// As the protocol names it (`chacha20-poly1305@openssh.com`,
    /// `AES-128-CCM via seal`).
    pub(crate) named: String,
    /// The AEAD this CPU measured for it; None for a cipher hlctl does not
    /// measure (CTR with a separate MAC).
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
        Aead::Aes128Ccm => None,
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

/// The encryption a mount's options ask for: SMB3's `seal`, with the AEAD
/// its dialect can use.
pub(crate) fn of_mount(m: &MountFacts) -> Option<Encryption> {
    if !crate::bench::file::mount_facts::is_smb(&m.fs_type) || m.option("seal").is_none() {
        return None;
    }
    let aead = match m.option("vers").unwrap_or("") {
        "3" | "3.0" | "3.02" | "3.0.2" => Aead::Aes128Ccm,
        _ => Aead::Aes128Gcm,
    };
    Some(Encryption {
        named: format!("{} via seal", aead.name().to_uppercase()),
        aead: Some(aead),
    })
}
