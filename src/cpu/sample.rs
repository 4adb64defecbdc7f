//! Snapshots of the per-CPU counters, taken before and after a transfer;
//! [`Sampler`] pairs them into a [`CoreReport`]. A file that cannot be read
//! or parsed leaves its part of the report empty, never the transfer failed.

use super::interrupts::DeviceIds;
use super::report::{CoreReport, between};
use super::snapshot::Snapshot;

/// Started before a transfer, finished after it.
pub(crate) struct Sampler {
    device: Option<DeviceIds>,
    before: Snapshot,
}

impl Sampler {
    /// `ifname`: the device the transfer goes through, whose queue
    /// vectors the report follows (none for loopback or when unknown).
    pub(crate) fn start(ifname: Option<&str>) -> Sampler {
        let device = ifname.filter(|n| *n != "lo").map(super::device::ids);
        Sampler {
            device,
            before: Snapshot::take(),
        }
    }

    pub(crate) fn finish(self) -> CoreReport {
        between(&self.before, &Snapshot::take(), self.device.as_ref())
    }
}

/// Whether sampling is switched off (`HLCTL_NO_CPU_SAMPLING=1`): for the
/// benchmark that measures what it costs (benches/cpu_sampling.sh).
pub(crate) fn disabled() -> bool {
    std::env::var_os("HLCTL_NO_CPU_SAMPLING").is_some_and(|v| v == "1")
}

/// `f` with a sampler around it, unless sampling is off.
pub(crate) fn around<T>(ifname: Option<&str>, f: impl FnOnce() -> T) -> (T, Option<CoreReport>) {
    if disabled() {
        return (f(), None);
    }
    let s = Sampler::start(ifname);
    let out = f();
    (out, Some(s.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::snapshot::read;
    use crate::cpu::tasks;

    fn my_ticks() -> u64 {
        let t = tasks::parse(&read("/proc/thread-self/stat")).unwrap();
        t.utime + t.stime
    }

    #[test]
    fn a_busy_thread_of_this_process_is_counted_apart_and_on_the_cpus() {
        let s = Sampler::start(Some("lo"));
        let (start, mut x) = (my_ticks(), 0u64);
        // 20 ticks of this thread's own CPU time, however long the machine's
        // other work makes that take.
        while my_ticks() < start + 20 {
            for _ in 0..100_000 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        }
        let r = s.finish();
        let hz = tasks::ticks_per_second();
        let ticks = |percent: f64| percent / 100.0 * r.seconds * hz;
        // Shares are printed to 0.1 %: on a loaded machine, where the 20
        // ticks take many seconds, that rounding is worth several ticks.
        let at_least_20 = |percent: f64| ticks(percent + 0.05) >= 19.9;
        let own = r.own.as_ref().expect("this process's stat");
        assert!(at_least_20(own.percent), "{own:?} over {} s", r.seconds);
        let me = tasks::parse(&read("/proc/thread-self/stat")).unwrap().id;
        match own.threads.iter().find(|t| t.tid == me) {
            Some(mine) => assert!(at_least_20(mine.percent), "{mine:?}"),
            // Left out only when the list holds its 8 busiest threads, each
            // busier than this one (other tests run beside this one), or
            // when this thread's share is under the 1 % the list starts at.
            None => {
                let share = 20.0 / (r.seconds * hz) * 100.0;
                let full =
                    own.threads.len() == 8 && own.threads.iter().all(|t| t.percent + 0.05 >= share);
                assert!(full || share < 1.05, "{share} % missing from {own:?}");
            }
        }
        // The CPUs were busy at least that long in all.
        let busy: f64 = r.cpus.iter().map(|c| ticks(c.busy_percent + 0.05)).sum();
        assert!(busy >= 17.0, "{:?}", r.cpus);
        assert!(r.device.is_none(), "loopback has no queues");
    }
}
