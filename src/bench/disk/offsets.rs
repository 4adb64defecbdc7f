//! Which block each I/O goes to, and whether it reads or writes.
//!
//! Sequential jobs walk the file from the start, wrapping around. Random jobs visit every
//! block exactly once per pass, like fio's random map, using a keyed bijection of the
//! block numbers (no per-block memory): a mix of additions, odd multiplications and
//! xor-shifts on `k`-bit numbers, cycle-walked into `[0, nblocks)`. Each pass has its
//! own key. The generator is shared by all threads of a job (an atomic counter).

use std::sync::atomic::{AtomicU64, Ordering};

use super::RwMode;

pub(crate) struct OffsetGen {
    rw: RwMode,
    nblocks: u64,
    bs: u64,
    rwmix_read: u8,
    /// Stop after one pass (`size` bytes) instead of looping.
    one_pass: bool,
    bits: u32,
    seed: u64,
    next: AtomicU64,
}

/// One I/O to issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Io {
    pub(crate) offset: u64,
    pub(crate) write: bool,
}

impl OffsetGen {
    pub(crate) fn new(
        rw: RwMode,
        nblocks: u64,
        bs: u64,
        rwmix_read: u8,
        one_pass: bool,
        job: u32,
    ) -> Self {
        let bits = 64 - nblocks.saturating_sub(1).leading_zeros();
        Self {
            rw,
            nblocks: nblocks.max(1),
            bs,
            rwmix_read,
            one_pass,
            bits,
            seed: mix64(0x4c61_6e65_u64 ^ u64::from(job).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
            next: AtomicU64::new(0),
        }
    }

    /// The next I/O, or `None` when a one-pass job has covered its file.
    pub(crate) fn next(&self) -> Option<Io> {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        if self.one_pass && i >= self.nblocks {
            return None;
        }
        let pass = i / self.nblocks;
        let idx = i % self.nblocks;
        let block = if self.rw.is_random() {
            self.permute(idx, pass)
        } else {
            idx
        };
        let write = match self.rw {
            RwMode::Read | RwMode::RandRead => false,
            RwMode::Write | RwMode::RandWrite => true,
            RwMode::RandRw => (mix64(i ^ self.seed) % 100) >= u64::from(self.rwmix_read),
        };
        Some(Io {
            offset: block * self.bs,
            write,
        })
    }

    /// A bijection of `[0, nblocks)` chosen by `pass`.
    fn permute(&self, idx: u64, pass: u64) -> u64 {
        if self.bits == 0 {
            return 0;
        }
        let key = mix64(self.seed ^ pass.wrapping_mul(0xbf58_476d_1ce4_e5b9));
        let mut x = idx;
        loop {
            x = self.round(x, key);
            if x < self.nblocks {
                return x;
            }
        }
    }

    /// A bijection of the `bits`-bit numbers.
    fn round(&self, mut x: u64, key: u64) -> u64 {
        let mask = if self.bits >= 64 {
            u64::MAX
        } else {
            (1u64 << self.bits) - 1
        };
        let shift = (self.bits / 2).max(1);
        for r in 0..3u32 {
            x = x.wrapping_add(key.rotate_left(r * 21)) & mask;
            x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15 | 1) & mask;
            x ^= x >> shift;
        }
        x & mask
    }
}

/// SplitMix64's finaliser: a good 64-bit mixing function.
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_pass_visits_every_block_once() {
        for n in [1u64, 2, 3, 7, 8, 1000, 4097] {
            let g = OffsetGen::new(RwMode::RandRead, n, 4096, 50, true, 0);
            let mut seen = vec![false; n as usize];
            while let Some(io) = g.next() {
                let b = (io.offset / 4096) as usize;
                assert!(!seen[b], "block {b} twice (n={n})");
                seen[b] = true;
            }
            assert!(seen.iter().all(|&s| s), "n={n}");
        }
    }

    #[test]
    fn random_is_not_sequential_and_mix_ratio_holds() {
        let g = OffsetGen::new(RwMode::RandRw, 1 << 16, 4096, 70, false, 1);
        let ios: Vec<Io> = (0..20_000).map(|_| g.next().unwrap()).collect();
        let seq = ios
            .windows(2)
            .filter(|w| w[1].offset == w[0].offset + 4096)
            .count();
        assert!(seq < 100, "{seq} sequential neighbours");
        let reads = ios.iter().filter(|io| !io.write).count();
        assert!(
            (13_000..15_000).contains(&reads),
            "{reads} reads of 20000 at 70%"
        );
    }
}
