//! hlctld's memory: a daemon that mostly waits should hold little, and give
//! back what a burst of requests used (`benches/daemon_memory.sh` measures it).
//!
//! - **One malloc arena.** glibc gives every thread that allocates an arena of
//!   its own (up to eight per core), and each arena keeps the memory its
//!   thread freed. hlctld's threads (the runtime, the blocking pool that reads
//!   links, the netlink monitors, benchmark and tune jobs) allocate outside
//!   their hot loops only, so sharing the main heap costs nothing measurable
//!   and keeps all free memory where [`trim`] can return it.
//! - **Trim when a thread ends.** The blocking pool's threads end a few
//!   seconds after a burst of requests; their heap memory is free by then and
//!   goes back to the kernel (`malloc_trim`).
//! - **Unmap the code start-up ran.** Start-up (arguments, every link read
//!   through netlink and ethtool, the objects registered, the persisted
//!   settings re-applied) runs code an idle daemon never runs again, and the
//!   kernel maps 16 pages around each page a fault needs (fault-around):
//!   4.3 of the 5.4 MiB of hlctld's code stayed mapped, most of its idle
//!   RSS. [`unmap_code`] drops the mappings (`MADV_DONTNEED` on the
//!   executable's read-only code; the pages stay in the page cache, clean
//!   and reclaimable, and what runs again faults back in), once start-up is
//!   done and again with each trim after a burst.

/// Keep every thread on glibc's main arena. Call before any thread is started.
pub(crate) fn one_arena() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only changes a malloc tunable; it is called before the
    // daemon starts its threads.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// Return the heap's free pages to the kernel, and drop the code mappings
/// the burst that just ended faulted in ([`unmap_code`]).
pub(crate) fn trim() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only releases free memory of the allocator.
    unsafe {
        libc::malloc_trim(0);
    }
    unmap_code();
}

/// Drop this process's mappings of its own executable's code (the `r-xp`
/// mappings of `/proc/self/exe`); returns the bytes unmapped. Only code:
/// it is never written, so the next use maps the same bytes again from the
/// page cache. Data, RELRO and heap are never touched.
pub(crate) fn unmap_code() -> usize {
    let (Ok(maps), Ok(exe)) = (
        std::fs::read_to_string("/proc/self/maps"),
        std::fs::read_link("/proc/self/exe"),
    ) else {
        return 0;
    };
    code_ranges(&maps, &exe.to_string_lossy())
        .into_iter()
        .map(|(start, end)| {
            // SAFETY: [start, end) is a whole private, read-only, executable
            // file mapping of this process, as /proc/self/maps lists it;
            // MADV_DONTNEED only zaps its page-table entries, and a later
            // access faults the unchanged file pages back in.
            let r = unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED)
            };
            if r == 0 { end - start } else { 0 }
        })
        .sum()
}

/// The `r-xp` ranges of `exe` in a /proc/PID/maps text.
fn code_ranges(maps: &str, exe: &str) -> Vec<(usize, usize)> {
    maps.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.splitn(6, ' ').collect();
            if f.len() < 6 || f[1] != "r-xp" || f[5].trim_start() != exe {
                return None;
            }
            let (s, e) = f[0].split_once('-')?;
            Some((
                usize::from_str_radix(s, 16).ok()?,
                usize::from_str_radix(e, 16).ok()?,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_executables_code_is_chosen() {
        let maps = "\
55d0a000-55d0b000 r--p 00000000 fe:00 42    /usr/sbin/hlctld
55d0b000-55d0f000 r-xp 00001000 fe:00 42    /usr/sbin/hlctld
55d0f000-55d10000 r--p 00005000 fe:00 42    /usr/sbin/hlctld
55d10000-55d11000 rw-p 00006000 fe:00 42    /usr/sbin/hlctld
7f00a000-7f00c000 r-xp 00000000 fe:00 7     /usr/lib/x86_64-linux-gnu/libc.so.6
7f00d000-7f00e000 r-xp 00000000 00:00 0
7fff0000-7fff1000 r-xp 00000000 00:00 0     [vdso]
";
        assert_eq!(
            code_ranges(maps, "/usr/sbin/hlctld"),
            [(0x55d0b000, 0x55d0f000)]
        );
        assert!(code_ranges(maps, "/usr/sbin/hlctld (deleted)").is_empty());
    }

    /// The code of this very test binary, unmapped while it runs: the test
    /// goes on (its code faults back in) and the count is its code's size.
    #[test]
    fn unmapping_the_running_code_is_harmless() {
        let n = unmap_code();
        assert!(n > 0, "no code mapping of /proc/self/exe found");
        // Running on after the unmapping means the code came back; the
        // second call finds the same mappings.
        assert_eq!(unmap_code(), n);
    }
}
