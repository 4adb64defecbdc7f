//! `/proc/stat`'s per-CPU lines: clock ticks spent in user, nice, system,
//! idle, iowait, irq, softirq and steal (and guest time, which the kernel
//! already counts inside user and nice). Only online CPUs have a line.

use super::ProcError;

const FILE: &str = "/proc/stat";

/// One CPU's counters, in clock ticks since boot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CpuTimes {
    pub(crate) user: u64,
    pub(crate) nice: u64,
    pub(crate) system: u64,
    pub(crate) idle: u64,
    pub(crate) iowait: u64,
    pub(crate) irq: u64,
    pub(crate) softirq: u64,
    pub(crate) steal: u64,
}

impl CpuTimes {
    /// Every tick counted (guest time is inside user and nice already).
    pub(crate) fn total(&self) -> u64 {
        [
            self.user,
            self.nice,
            self.system,
            self.idle,
            self.iowait,
            self.irq,
            self.softirq,
            self.steal,
        ]
        .iter()
        .fold(0u64, |a, &b| a.saturating_add(b))
    }

    /// The counters of `self` less those of `earlier` (a counter that went
    /// back, as after a CPU came online again, counts 0).
    pub(crate) fn since(&self, earlier: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user: self.user.saturating_sub(earlier.user),
            nice: self.nice.saturating_sub(earlier.nice),
            system: self.system.saturating_sub(earlier.system),
            idle: self.idle.saturating_sub(earlier.idle),
            iowait: self.iowait.saturating_sub(earlier.iowait),
            irq: self.irq.saturating_sub(earlier.irq),
            softirq: self.softirq.saturating_sub(earlier.softirq),
            steal: self.steal.saturating_sub(earlier.steal),
        }
    }
}

/// The `cpuN` lines, by CPU id (the `cpu` total line and every other line
/// are skipped). Kernels before 2.6.11 printed fewer columns; missing ones are 0.
pub(crate) fn parse(text: &str) -> Result<Vec<(u32, CpuTimes)>, ProcError> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut w = line.split_whitespace();
        let Some(id) = w.next().and_then(|h| h.strip_prefix("cpu")) else {
            continue;
        };
        if id.is_empty() {
            continue;
        }
        let id: u32 = id
            .parse()
            .map_err(|_| ProcError::new(FILE, n + 1, format!("cpu{id:?} is not a CPU number")))?;
        let v: Vec<u64> = w
            .map(|x| x.parse::<u64>())
            .collect::<Result<_, _>>()
            .map_err(|_| ProcError::new(FILE, n + 1, "a counter is not a number"))?;
        if v.len() < 4 {
            return Err(ProcError::new(
                FILE,
                n + 1,
                format!("{} counters, at least 4 expected", v.len()),
            ));
        }
        let at = |i: usize| v.get(i).copied().unwrap_or(0);
        out.push((
            id,
            CpuTimes {
                user: at(0),
                nice: at(1),
                system: at(2),
                idle: at(3),
                iowait: at(4),
                irq: at(5),
                softirq: at(6),
                steal: at(7),
            },
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_captured_file_has_each_online_cpu_and_not_the_total() {
        let t = include_str!("../../tests/fixtures/proc/captured-kvm-2cpu.stat");
        let v = parse(t).unwrap();
        assert_eq!(v.iter().map(|c| c.0).collect::<Vec<_>>(), vec![0, 1]);
        // The total line is the sum of the CPUs' lines (read a moment apart:
        // within a tick per CPU).
        let total: u64 = t
            .lines()
            .next()
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        assert!((v[0].1.user + v[1].1.user).abs_diff(total) <= 2, "{total}");
        assert!(v.iter().all(|c| c.1.idle > 0 && c.1.total() > c.1.idle));
    }

    #[test]
    fn an_offline_cpu_has_no_line_and_the_ids_are_kept() {
        // Written (as Linux prints it with CPU 1 offline on a 4-CPU box).
        let t = "cpu  30 0 20 900 0 1 5 2 0 0\ncpu0 10 0 10 300 0 1 5 1 0 0\n\
                 cpu2 10 0 5 300 0 0 0 1 0 0\ncpu3 10 0 5 300 0 0 0 0 0 0\nintr 5 0\n";
        let v = parse(t).unwrap();
        assert_eq!(v.iter().map(|c| c.0).collect::<Vec<_>>(), vec![0, 2, 3]);
        assert_eq!(v[0].1.softirq, 5);
        assert_eq!(v[1].1.steal, 1);
    }

    #[test]
    fn short_and_bad_lines_are_named() {
        assert_eq!(parse("cpu0 1 2 3 4\n").unwrap()[0].1.idle, 4);
        let e = parse("cpu0 1 2 3\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.to_string().contains("at least 4"), "{e}");
        assert!(parse("cpux 1 2 3 4\n").is_err());
        assert!(parse("cpu0 1 -2 3 4\n").is_err());
    }

    #[test]
    fn a_counter_that_went_back_counts_zero() {
        let a = CpuTimes {
            user: 10,
            idle: 5,
            ..Default::default()
        };
        let b = CpuTimes {
            user: 4,
            idle: 9,
            ..Default::default()
        };
        let d = b.since(&a);
        assert_eq!((d.user, d.idle), (0, 4));
    }
}
