//! Memory load: write a pattern over a buffer, read it all back and compare, repeat.
//!
//! Pass `p` stores `pattern(i, p)` in word `i`; odd passes store the complement of the
//! pass before, so every bit is written both ways. The whole buffer is written before it
//! is read back, so the data goes through RAM rather than staying in a cache.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use serde::Serialize;

/// Words handled between two looks at the stop flag (1 MiB).
const CHUNK: usize = (1 << 20) / 8;

/// The value of word `i` in pass `pass`.
#[inline(always)]
pub(crate) fn pattern(i: u64, pass: u64) -> u64 {
    let base =
        i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (pass / 2).wrapping_mul(0xd6e8_feb8_6659_fd93);
    if pass % 2 == 1 { !base } else { base }
}

/// Write pass `pass`'s pattern into `buf` (word 0 of `buf` is word `first` of the region).
pub fn fill(buf: &mut [u64], first: u64, pass: u64) {
    for (k, w) in buf.iter_mut().enumerate() {
        *w = pattern(first + k as u64, pass);
    }
}

/// Count the words of `buf` that differ from pass `pass`'s pattern; the first one found
/// is returned too (its index in `buf`, expected, found).
pub fn verify(buf: &[u64], first: u64, pass: u64) -> (u64, Option<(usize, u64, u64)>) {
    let mut bad = 0;
    let mut first_bad = None;
    for (k, &w) in buf.iter().enumerate() {
        let want = pattern(first + k as u64, pass);
        if w != want {
            bad += 1;
            first_bad.get_or_insert((k, want, w));
        }
    }
    (bad, first_bad)
}

/// A word that read back wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub(crate) struct Mismatch {
    pub(crate) worker: usize,
    pub(crate) byte_offset: u64,
    pub(crate) expected: u64,
    pub(crate) found: u64,
}

/// What one memory worker did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub(crate) struct MemoryWorker {
    pub(crate) bytes: u64,
    pub(crate) passes: u64,
    pub(crate) bytes_written: u64,
    pub(crate) bytes_verified: u64,
    pub(crate) mismatches: u64,
    pub(crate) first_mismatch: Option<Mismatch>,
}

/// Allocate `words` zeroed words, or `None` when the memory is not there (no abort).
/// The kernel hands out zero pages lazily; the first fill faults them in.
fn alloc_words(words: usize) -> Option<Vec<u64>> {
    if words == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u64>(words).ok()?;
    // SAFETY: non-zero size.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<u64>();
    if ptr.is_null() {
        return None;
    }
    // SAFETY: allocated by the global allocator with exactly this layout (capacity =
    // length = words), and zeroed, which is a valid u64.
    Some(unsafe { Vec::from_raw_parts(ptr, words, words) })
}

/// Run until `stop`; `progress` counts bytes written + verified. After a stop, the part
/// written in the pass under way is still verified (a bounded amount), so a short run
/// verifies something too. `Err(bytes)` when the buffer cannot be allocated.
pub(crate) fn worker(
    index: usize,
    bytes: u64,
    stop: &AtomicBool,
    progress: &AtomicU64,
) -> Result<MemoryWorker, u64> {
    let words = (bytes / 8) as usize;
    let mut buf = alloc_words(words).ok_or(bytes)?;
    let mut out = MemoryWorker {
        bytes: words as u64 * 8,
        ..Default::default()
    };
    let mut pass = 0u64;
    while words > 0 && !stop.load(Ordering::Relaxed) {
        let mut filled = 0usize;
        for chunk in buf.chunks_mut(CHUNK) {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            fill(chunk, filled as u64, pass);
            filled += chunk.len();
            progress.fetch_add(chunk.len() as u64 * 8, Ordering::Relaxed);
        }
        out.bytes_written += filled as u64 * 8;
        // Whatever the compiler knows about the writes, the reads below must happen.
        black_box(&mut buf);
        let mut checked = 0usize;
        for chunk in buf[..filled].chunks(CHUNK) {
            let (bad, first) = verify(chunk, checked as u64, pass);
            if bad > 0 {
                out.mismatches += bad;
                if let (None, Some((k, expected, found))) = (out.first_mismatch, first) {
                    let byte_offset = (checked + k) as u64 * 8;
                    out.first_mismatch = Some(Mismatch {
                        worker: index,
                        byte_offset,
                        expected,
                        found,
                    });
                }
            }
            checked += chunk.len();
            progress.fetch_add(chunk.len() as u64 * 8, Ordering::Relaxed);
        }
        out.bytes_verified += checked as u64 * 8;
        if filled == words {
            out.passes += 1;
        }
        pass += 1;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_finds_a_flipped_bit() {
        let mut buf = vec![0u64; 1000];
        fill(&mut buf, 0, 3);
        assert_eq!(verify(&buf, 0, 3).0, 0);
        buf[417] ^= 1 << 9;
        let (bad, first) = verify(&buf, 0, 3);
        assert_eq!(bad, 1);
        assert_eq!(first.map(|f| f.0), Some(417));
        // Consecutive passes differ in every word.
        assert!((0..1000).all(|i| pattern(i, 4) != pattern(i, 5)));
    }
}
