//! CPU utilisation of a test, as iperf3 reports it (user, system, total as a
//! percentage of wall time), counted per thread so that a server and a client
//! running in one process (the daemon, the tuner, tests) do not see each other.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// CPU use over a test, in percent of one CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub(crate) struct CpuUtil {
    pub(crate) total: f64,
    pub(crate) user: f64,
    pub(crate) system: f64,
}

/// (user, system) CPU time of the calling thread, in microseconds.
fn thread_times_us() -> (u64, u64) {
    // SAFETY: an all-zero rusage is valid; getrusage fills it in.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid out-pointer for the duration of the call.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    if rc != 0 {
        return (0, 0);
    }
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    (us(ru.ru_utime), us(ru.ru_stime))
}

/// CPU time summed over the threads of one test.
#[derive(Debug, Default)]
pub(crate) struct CpuAccount {
    user_us: AtomicU64,
    system_us: AtomicU64,
}

/// The CPU time of one thread since `start`; add it to an account with `finish`.
pub(crate) struct ThreadCpu {
    user_us: u64,
    system_us: u64,
}

impl ThreadCpu {
    pub(crate) fn start() -> ThreadCpu {
        let (user_us, system_us) = thread_times_us();
        ThreadCpu { user_us, system_us }
    }

    pub(crate) fn finish(self, account: &CpuAccount) {
        let (u, s) = thread_times_us();
        account
            .user_us
            .fetch_add(u.saturating_sub(self.user_us), Ordering::Relaxed);
        account
            .system_us
            .fetch_add(s.saturating_sub(self.system_us), Ordering::Relaxed);
    }
}

impl CpuAccount {
    /// Utilisation over `wall_start..now` from the time accounted so far.
    pub(crate) fn utilisation(&self, wall_start: Instant) -> CpuUtil {
        let wall = wall_start.elapsed().as_secs_f64();
        if wall <= 0.0 {
            return CpuUtil::default();
        }
        let user = self.user_us.load(Ordering::Relaxed) as f64 / 1e6 / wall * 100.0;
        let system = self.system_us.load(Ordering::Relaxed) as f64 / 1e6 / wall * 100.0;
        CpuUtil {
            total: user + system,
            user,
            system,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounts_this_threads_cpu_time() {
        let account = CpuAccount::default();
        let t = ThreadCpu::start();
        let (u0, s0) = thread_times_us();
        let mut x = 0u64;
        loop {
            for _ in 0..100_000 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
            let (u, s) = thread_times_us();
            if u + s >= u0 + s0 + 20_000 {
                break;
            }
        }
        t.finish(&account);
        let used =
            account.user_us.load(Ordering::Relaxed) + account.system_us.load(Ordering::Relaxed);
        assert!(used >= 20_000, "{used}");
        // Another thread's work is not added to this account.
        std::thread::spawn(|| {
            let t = ThreadCpu::start();
            t.finish(&CpuAccount::default());
        })
        .join()
        .unwrap();
        let again =
            account.user_us.load(Ordering::Relaxed) + account.system_us.load(Ordering::Relaxed);
        assert_eq!(used, again);
    }
}
