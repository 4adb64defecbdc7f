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

/// Keep every thread on glibc's main arena. Call before any thread is started.
pub(crate) fn one_arena() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only changes a malloc tunable; it is called before the
    // daemon starts its threads.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// Return the heap's free pages to the kernel.
pub(crate) fn trim() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only releases free memory of the allocator.
    unsafe {
        libc::malloc_trim(0);
    }
}
