//! The UDP datagram header and the receiver's accounting (loss, reordering,
//! RFC 1889 jitter), exactly as iperf3 counts them.

/// Bytes of header with a 32-bit counter; 16 with a 64-bit one.
pub(crate) const HEADER_32: usize = 12;
pub(crate) const HEADER_64: usize = 16;

/// The header fields of one datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) sec: u32,
    pub(crate) usec: u32,
    pub(crate) seq: u64,
}

impl Header {
    /// Write into the start of `buf` (big-endian); `buf` must hold the header.
    pub(crate) fn write(&self, buf: &mut [u8], counters_64bit: bool) {
        buf[0..4].copy_from_slice(&self.sec.to_be_bytes());
        buf[4..8].copy_from_slice(&self.usec.to_be_bytes());
        if counters_64bit {
            buf[8..16].copy_from_slice(&self.seq.to_be_bytes());
        } else {
            buf[8..12].copy_from_slice(&(self.seq as u32).to_be_bytes());
        }
    }

    /// Read from a datagram; `None` if it is too short to hold a header.
    pub(crate) fn read(buf: &[u8], counters_64bit: bool) -> Option<Header> {
        let be32 = |i: usize| -> Option<u32> {
            Some(u32::from_be_bytes(buf.get(i..i + 4)?.try_into().ok()?))
        };
        let sec = be32(0)?;
        let usec = be32(4)?;
        let seq = if counters_64bit {
            u64::from_be_bytes(buf.get(8..16)?.try_into().ok()?)
        } else {
            be32(8)? as u64
        };
        Some(Header { sec, usec, seq })
    }

    pub(crate) fn sent_s(&self) -> f64 {
        self.sec as f64 + self.usec as f64 / 1e6
    }
}

/// CLOCK_MONOTONIC now as (seconds, microseconds): iperf3 3.12's clock.
pub(crate) fn monotonic_now() -> (u32, u32) {
    // SAFETY: an all-zero timespec is valid; clock_gettime fills it in.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: `ts` is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u32, (ts.tv_nsec / 1000) as u32)
}

/// Receiver state of one UDP stream.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RecvAccounting {
    /// Highest sequence number seen (iperf3's `packet_count`).
    pub(crate) highest: u64,
    /// Lost datagrams (iperf3's `cnt_error`).
    pub(crate) lost: i64,
    pub(crate) out_of_order: u64,
    /// Jitter in seconds.
    pub(crate) jitter_s: f64,
    prev_transit: Option<f64>,
}

impl RecvAccounting {
    /// Account one datagram with sequence `seq` whose transit time (arrival on
    /// our clock minus the sender's timestamp) is `transit_s`.
    pub(crate) fn on_datagram(&mut self, seq: u64, transit_s: f64) {
        if seq > self.highest {
            if seq > self.highest + 1 {
                self.lost += (seq - 1 - self.highest) as i64;
            }
            self.highest = seq;
        } else {
            self.out_of_order += 1;
            if self.lost > 0 {
                self.lost -= 1;
            }
        }
        let prev = self.prev_transit.unwrap_or(transit_s);
        let d = (transit_s - prev).abs();
        self.prev_transit = Some(transit_s);
        self.jitter_s += (d - self.jitter_s) / 16.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_matches_capture() {
        // Observed on the wire: 0000020d 00007c8a 00000001
        let h = Header::read(&[0, 0, 2, 0x0d, 0, 0, 0x7c, 0x8a, 0, 0, 0, 1, 9, 9], false).unwrap();
        assert_eq!(
            h,
            Header {
                sec: 525,
                usec: 0x7c8a,
                seq: 1
            }
        );
        let mut buf = [0u8; 16];
        h.write(&mut buf, true);
        assert_eq!(
            &buf,
            &[0, 0, 2, 0x0d, 0, 0, 0x7c, 0x8a, 0, 0, 0, 0, 0, 0, 0, 1]
        );
        assert_eq!(Header::read(&buf, true), Some(h));
        assert_eq!(Header::read(&buf[..11], false), None);
        assert_eq!(Header::read(&buf[..15], true), None);
    }

    #[test]
    fn loss_and_reordering_like_iperf3() {
        let mut a = RecvAccounting::default();
        for seq in [1, 2, 5, 3, 6, 6] {
            a.on_datagram(seq, 0.001);
        }
        // 5 after 2: 2 lost; 3 late: out of order, one loss taken back;
        // 6 again: out of order, another loss taken back.
        assert_eq!(a.highest, 6);
        assert_eq!(a.out_of_order, 2);
        assert_eq!(a.lost, 0);
        let mut b = RecvAccounting::default();
        b.on_datagram(10, 0.0);
        assert_eq!(b.lost, 9);
        b.on_datagram(3, 0.0);
        assert_eq!(b.lost, 8);
    }

    #[test]
    fn jitter_rfc1889() {
        let mut a = RecvAccounting::default();
        a.on_datagram(1, 0.010);
        assert_eq!(a.jitter_s, 0.0);
        a.on_datagram(2, 0.026);
        assert!((a.jitter_s - 0.001).abs() < 1e-12);
        a.on_datagram(3, 0.026);
        assert!((a.jitter_s - 0.001 * 15.0 / 16.0).abs() < 1e-12);
    }
}
