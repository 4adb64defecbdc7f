//! The loop behind `hlctl bench file`'s encryption and signing figures:
//! seal a buffer in place with one AEAD (or sign it with SMB3's MAC), again
//! and again, until a time is up. It lives in
//! a crate of its own because RustCrypto's ciphers are generic: their code
//! is instantiated in the crate that names the concrete type, and at
//! hlctl's `opt-level = "s"` AES-128-GCM sealed 1.2 Gbit/s where the same
//! loop at opt-level 3 seals 5.3 (OpenSSL: 5.6) on the same CPU. hlctl's
//! Cargo.toml builds this crate at opt-level 3 in every profile.

use std::time::{Duration, Instant};

use aes_gcm::aead::{AeadInPlace, KeyInit};
use aes_gcm::{Aes128Gcm, Aes256Gcm};
use ccm::consts::{U12, U16};
use chacha20poly1305::ChaCha20Poly1305;
use cmac::{Cmac, Mac};

/// AES-128-CCM with SMB3's 16-byte tag and a 12-byte nonce (3-byte length
/// field: messages up to 16 MiB).
type Aes128Ccm = ccm::Ccm<aes::Aes128, U16, U12>;

/// The AEADs this crate seals with, and the MAC it signs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Aes128Gcm,
    Aes128Ccm,
    Aes256Gcm,
    ChaCha20Poly1305,
    /// AES-128-CMAC (RFC 4493), SMB 3's signing: a MAC over the buffer,
    /// which is left as it is. CBC-MAC is serial: one block at a time.
    Aes128Cmac,
}

/// Seal `buf` in place with `kind` until `time` is up or `stop()` says so
/// (at least once); the bytes sealed and the time it took.
pub fn seal_for(
    kind: Kind,
    buf: &mut [u8],
    time: Duration,
    stop: &dyn Fn() -> bool,
) -> (u64, Duration) {
    match kind {
        Kind::Aes128Gcm => run(&Aes128Gcm::new(&[7u8; 16].into()), buf, time, stop),
        Kind::Aes256Gcm => run(&Aes256Gcm::new(&[7u8; 32].into()), buf, time, stop),
        Kind::Aes128Ccm => run(&Aes128Ccm::new(&[7u8; 16].into()), buf, time, stop),
        Kind::ChaCha20Poly1305 => run(&ChaCha20Poly1305::new(&[7u8; 32].into()), buf, time, stop),
        Kind::Aes128Cmac => sign(&[7u8; 16], buf, time, stop),
    }
}

/// Seal `buf` once with `kind`'s test key and the all-zero nonce: the tag.
pub fn seal_once(kind: Kind, buf: &mut [u8]) -> Vec<u8> {
    fn one<A: AeadInPlace>(c: &A, buf: &mut [u8]) -> Vec<u8> {
        let nonce = aes_gcm::aead::Nonce::<A>::default();
        c.encrypt_in_place_detached(&nonce, b"", buf)
            .map(|t| t.to_vec())
            .unwrap_or_default()
    }
    match kind {
        Kind::Aes128Gcm => one(&Aes128Gcm::new(&[0u8; 16].into()), buf),
        Kind::Aes256Gcm => one(&Aes256Gcm::new(&[0u8; 32].into()), buf),
        Kind::Aes128Ccm => one(&Aes128Ccm::new(&[0u8; 16].into()), buf),
        Kind::ChaCha20Poly1305 => one(&ChaCha20Poly1305::new(&[0u8; 32].into()), buf),
        Kind::Aes128Cmac => cmac_tag(&[0u8; 16], buf).to_vec(),
    }
}

/// The AES-128-CMAC tag of `msg` under `key`.
pub fn cmac_tag(key: &[u8; 16], msg: &[u8]) -> [u8; 16] {
    let mut mac = keyed(key);
    mac.update(msg);
    mac.finalize().into_bytes().into()
}

fn keyed(key: &[u8; 16]) -> Cmac<aes::Aes128> {
    // A 16-byte key is always the right length for AES-128.
    <Cmac<aes::Aes128> as KeyInit>::new(key.into())
}

/// Sign `buf` with AES-128-CMAC until `time` is up, as [`run`] seals.
fn sign(key: &[u8; 16], buf: &[u8], time: Duration, stop: &dyn Fn() -> bool) -> (u64, Duration) {
    let start = Instant::now();
    let mac = keyed(key);
    let mut bytes = 0u64;
    loop {
        let mut m = mac.clone();
        m.update(buf);
        // The tag is dropped, as the AEADs' are; black_box keeps the work.
        std::hint::black_box(m.finalize());
        bytes += buf.len() as u64;
        let took = start.elapsed();
        if took >= time || stop() {
            return (bytes, took);
        }
    }
}

fn run<A: AeadInPlace>(
    cipher: &A,
    buf: &mut [u8],
    time: Duration,
    stop: &dyn Fn() -> bool,
) -> (u64, Duration) {
    let start = Instant::now();
    let mut bytes = 0u64;
    let mut counter = 0u64;
    loop {
        counter += 1;
        let mut nonce = aes_gcm::aead::Nonce::<A>::default();
        let n = nonce.len().min(8);
        nonce[..n].copy_from_slice(&counter.to_le_bytes()[..n]);
        // The tag is dropped: only the sealing's cost is measured. A
        // message over the AEAD's limit (CCM here: 16 MiB) seals nothing.
        if cipher.encrypt_in_place_detached(&nonce, b"", buf).is_err() {
            return (bytes, start.elapsed());
        }
        bytes += buf.len() as u64;
        let took = start.elapsed();
        if took >= time || stop() {
            return (bytes, took);
        }
    }
}
