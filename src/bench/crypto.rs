//! What this CPU encrypts per core: AES-128-GCM, AES-128-CCM, AES-256-GCM
//! and ChaCha20-Poly1305 (the AEADs of SMB3 and SSH), sealed in place on a
//! 1 MiB buffer by one thread for a stated time, and what it signs per core
//! with AES-128-CMAC (SMB3's signing), with RustCrypto's crates
//! (AES-NI and CLMUL when the CPU has them, picked at run time), in the
//! `hlctl-seal` crate (built at opt-level 3: see its doc).
//!
//! The figure is what one core can seal (or sign); a transfer whose cipher
//! runs on one core (ssh, one smbd per client) cannot go faster than it.
//! `benches/crypto_vs_openssl.sh` checks it against `openssl speed -evp`
//! (and `-cmac aes-128-cbc`).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::bench::progress::Cancel;

/// Bytes sealed per call.
pub(crate) const BUFFER: usize = 1 << 20;

/// The AEADs measured, and SMB3's signing MAC (not an AEAD: it signs and
/// does not seal, but its cost per core is read the same way).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Aead {
    #[serde(rename = "aes-128-gcm")]
    Aes128Gcm,
    #[serde(rename = "aes-128-ccm")]
    Aes128Ccm,
    #[serde(rename = "aes-256-gcm")]
    Aes256Gcm,
    #[serde(rename = "chacha20-poly1305")]
    ChaCha20Poly1305,
    #[serde(rename = "aes-128-cmac")]
    Aes128Cmac,
}

impl Aead {
    pub(crate) const ALL: [Aead; 5] = [
        Aead::Aes128Gcm,
        Aead::Aes128Ccm,
        Aead::Aes256Gcm,
        Aead::ChaCha20Poly1305,
        Aead::Aes128Cmac,
    ];

    /// Its name as OpenSSL's `-evp` spells it (`aes-128-gcm`).
    fn kind(self) -> hlctl_seal::Kind {
        match self {
            Aead::Aes128Gcm => hlctl_seal::Kind::Aes128Gcm,
            Aead::Aes128Ccm => hlctl_seal::Kind::Aes128Ccm,
            Aead::Aes256Gcm => hlctl_seal::Kind::Aes256Gcm,
            Aead::ChaCha20Poly1305 => hlctl_seal::Kind::ChaCha20Poly1305,
            Aead::Aes128Cmac => hlctl_seal::Kind::Aes128Cmac,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Aead::Aes128Gcm => "aes-128-gcm",
            Aead::Aes128Ccm => "aes-128-ccm",
            Aead::Aes256Gcm => "aes-256-gcm",
            Aead::ChaCha20Poly1305 => "chacha20-poly1305",
            Aead::Aes128Cmac => "aes-128-cmac",
        }
    }

    /// A MAC signs; an AEAD seals.
    pub(crate) fn signs(self) -> bool {
        self == Aead::Aes128Cmac
    }

    /// What one core does with it, as a sentence says it: `signs`, `seals`.
    pub(crate) fn verb(self) -> &'static str {
        if self.signs() { "signs" } else { "seals" }
    }
}

/// One AEAD's speed on one core.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CryptoFigure {
    pub aead: Aead,
    pub bytes: u64,
    pub seconds: f64,
    /// Plaintext sealed (or signed) per second, in Gbit/s.
    pub gbit_per_s: f64,
}

/// Seal `BUFFER` bytes again and again with `aead` for about `time`.
pub(crate) fn measure(aead: Aead, time: Duration, cancel: &Cancel) -> CryptoFigure {
    let mut buf = vec![0x5au8; BUFFER];
    let stop = || cancel.is_cancelled();
    let (bytes, took) = hlctl_seal::seal_for(aead.kind(), &mut buf, time, &stop);
    let seconds = took.as_secs_f64();
    CryptoFigure {
        aead,
        bytes,
        seconds,
        gbit_per_s: if seconds > 0.0 {
            bytes as f64 * 8.0 / seconds / 1e9
        } else {
            0.0
        },
    }
}

/// How long each AEAD is measured beside a transfer (`bench file`, and
/// doctor on a sealed SMB mount).
pub(crate) const PER_AEAD: Duration = Duration::from_millis(300);

/// Every AEAD of [`Aead::ALL`], one after the other, each for `time`.
pub(crate) fn measure_all(time: Duration, cancel: &Cancel) -> Vec<CryptoFigure> {
    Aead::ALL
        .into_iter()
        .take_while(|_| !cancel.is_cancelled())
        .map(|a| measure(a, time, cancel))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_aead_seals_and_its_figure_is_the_bytes_over_the_time() {
        let figures = measure_all(Duration::from_millis(1), &Cancel::new());
        assert_eq!(figures.len(), 5);
        for f in &figures {
            assert!(f.bytes >= BUFFER as u64, "{f:?}");
            let want = f.bytes as f64 * 8.0 / f.seconds / 1e9;
            assert!((f.gbit_per_s - want).abs() < 1e-9, "{f:?}");
        }
        let names: Vec<_> = figures.iter().map(|f| f.aead.name()).collect();
        assert_eq!(
            names,
            [
                "aes-128-gcm",
                "aes-128-ccm",
                "aes-256-gcm",
                "chacha20-poly1305",
                "aes-128-cmac"
            ]
        );
        for a in Aead::ALL {
            assert_eq!(serde_json::to_value(a).unwrap(), a.name());
        }
    }

    #[test]
    fn a_real_seal_matches_the_published_gcm_vector() {
        // NIST GCM test case 2 (K = 0^128, IV = 0^96, P = 0^128).
        let mut p = [0u8; 16];
        let tag = hlctl_seal::seal_once(Aead::Aes128Gcm.kind(), &mut p);
        assert_eq!(p[..4], [0x03, 0x88, 0xda, 0xce]);
        assert_eq!(tag[..4], [0xab, 0x6e, 0x47, 0xd4]);
    }

    #[test]
    fn the_signing_mac_matches_rfc_4493s_vectors() {
        let key = [
            0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf,
            0x4f, 0x3c,
        ];
        // Example 1 (empty message) and 2 (one block).
        let empty = hlctl_seal::cmac_tag(&key, b"");
        assert_eq!(empty[..4], [0xbb, 0x1d, 0x69, 0x29]);
        let block = [
            0x6b, 0xc1, 0xbe, 0xe2, 0x2e, 0x40, 0x9f, 0x96, 0xe9, 0x3d, 0x7e, 0x11, 0x73, 0x93,
            0x17, 0x2a,
        ];
        let one = hlctl_seal::cmac_tag(&key, &block);
        assert_eq!(one[..4], [0x07, 0x0a, 0x16, 0xb4]);
        // Signing leaves the buffer as it was; sealing does not.
        let mut buf = [0x5au8; 32];
        hlctl_seal::seal_once(Aead::Aes128Cmac.kind(), &mut buf);
        assert_eq!(buf, [0x5au8; 32]);
        assert!(Aead::Aes128Cmac.signs() && !Aead::Aes128Gcm.signs());
    }
}
