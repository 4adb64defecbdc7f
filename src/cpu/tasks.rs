//! `/proc/PID/stat` and `/proc/PID/task/TID/stat`: a process's CPU time
//! (its exited threads included) or a thread's, the CPU it last ran on, and
//! whether it is one of the kernel's own threads.

use super::ProcError;

const FILE: &str = "/proc/PID/stat";

/// One `stat` line's fields that say where the time went.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct TaskStat {
    pub(crate) id: u32,
    /// The thread's name (`comm`, at most 15 bytes; may hold spaces and `)`).
    pub(crate) name: String,
    /// Clock ticks in user mode and in the kernel.
    pub(crate) utime: u64,
    pub(crate) stime: u64,
    /// The CPU it last ran on (field 39).
    pub(crate) processor: Option<u32>,
    /// A kernel thread (`PF_KTHREAD` in field 9's flags): cifsd, a
    /// kworker, rpciod's.
    pub(crate) kernel: bool,
}

/// `PF_KTHREAD` of include/linux/sched.h.
const PF_KTHREAD: u64 = 0x0020_0000;

/// Clock ticks per second (`utime` and `stime` are in these).
pub(crate) fn ticks_per_second() -> f64 {
    // SAFETY: sysconf reads a constant of the C library.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 { hz as f64 } else { 100.0 }
}

/// One `stat` line: `PID (comm) S ppid ...`.
pub(crate) fn parse(text: &str) -> Result<TaskStat, ProcError> {
    let bad = |w: &str| ProcError::new(FILE, 1, w.to_string());
    let (head, tail) = text
        .rsplit_once(')')
        .ok_or_else(|| bad("no \")\" after the name"))?;
    let (id, name) = head
        .split_once('(')
        .ok_or_else(|| bad("no \"(\" before the name"))?;
    let id: u32 = id
        .trim()
        .parse()
        .map_err(|_| bad("the id is not a number"))?;
    let f: Vec<&str> = tail.split_whitespace().collect();
    // Field n of proc_pid_stat(5) is f[n - 3].
    let num = |n: usize| -> Result<u64, ProcError> {
        f.get(n - 3)
            .and_then(|w| w.parse().ok())
            .ok_or_else(|| bad(&format!("field {n} is missing or not a number")))
    };
    Ok(TaskStat {
        id,
        name: name.to_string(),
        utime: num(14)?,
        stime: num(15)?,
        processor: num(39).ok().and_then(|p| u32::try_from(p).ok()),
        kernel: num(9).is_ok_and(|f| f & PF_KTHREAD != 0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_captured_line_and_a_name_with_spaces_and_parentheses() {
        let t = include_str!("../../tests/fixtures/proc/captured-task.stat");
        let s = parse(t).unwrap();
        assert_eq!((s.id, s.name.as_str()), (32377, "cat"));
        // No spaces in "cat": the fields are the plain words of the line.
        let w: Vec<&str> = t.split_whitespace().collect();
        assert_eq!(s.utime, w[13].parse::<u64>().unwrap());
        assert_eq!(s.stime, w[14].parse::<u64>().unwrap());
        assert_eq!(s.processor, Some(w[38].parse().unwrap()));
        assert!(!s.kernel, "cat is not a kernel thread");
        let k = parse("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 3 5 0 0 20 0 1 0 5 0 0").unwrap();
        assert!(k.kernel && (k.utime, k.stime) == (3, 5));
        let s = parse("7 (a b) c)) R 1 1 1 0 -1 0 0 0 0 0 10 20 0 0 20 0 1 0 5 0 0").unwrap();
        assert_eq!(
            (s.name.as_str(), s.utime, s.stime, s.processor),
            ("a b) c)", 10, 20, None)
        );
    }

    #[test]
    fn short_lines_are_refused() {
        assert!(parse("1 (x) R").is_err());
        assert!(parse("x (y) R 1 1 1 0 -1 0 0 0 0 0 1 2").is_err());
    }
}
