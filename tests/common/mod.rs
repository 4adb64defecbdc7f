//! Shared test rig: throw-away network namespaces with veth pairs.
//!
//! Every namespace gets a unique name and is deleted by its guard's `Drop`,
//! so a failing test still cleans up. A test process killed by a signal runs
//! no `Drop`: the next test process removes the namespaces it left behind
//! ([`NetNs::new`]), and the daemons a test starts die with it
//! ([`die_with_test`]). Nothing here touches the host's own interfaces,
//! routes or sysctls.

#![allow(dead_code)]

pub mod fs;

use std::path::Path;
use std::process::{Child, Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

/// qemu VM rig with Debian's kernel and real NIC drivers (see vm.rs).
pub mod bus;
pub mod deb;
pub mod docs;
pub mod ethtool;
pub mod fleet;
pub mod lab;
pub mod net;
pub mod npm;
pub mod report;
pub mod sshd;
pub mod static_bin;
pub mod sysvm;
pub mod vm;

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A unique short name: prefix, this process's pid, a counter (interface
/// names are limited to 15 bytes: a 2-letter prefix, 7 digits of pid, `x`
/// and the counter fit).
pub fn unique(prefix: &str) -> String {
    let n = COUNTER.fetch_add(1, Ordering::SeqCst);
    format!("{prefix}{}x{n}", std::process::id())
}

/// Make `cmd`'s process get SIGKILL when the test thread that starts it ends,
/// also when the test process is killed and no `Drop` runs (`ip netns exec`
/// keeps the setting across its exec).
pub fn die_with_test(cmd: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure makes one async-signal-safe prctl call.
    unsafe {
        cmd.pre_exec(|| {
            nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
                .map_err(std::io::Error::from)
        })
    }
}

/// The pid in a namespace name made by [`NetNs::new`] (`hlt<pid>x<n>`).
fn owner_pid(name: &str) -> Option<u32> {
    let (pid, n) = name.strip_prefix("hlt")?.split_once('x')?;
    n.parse::<u32>().ok()?;
    pid.parse().ok()
}

/// Remove the namespaces of test processes that are gone (killed by a
/// timeout, Ctrl-C or SIGKILL: no `Drop` ran; a VM's tap went with its qemu,
/// so such a namespace is often empty). Once per test process; a namespace
/// whose process still runs is left alone.
fn remove_orphaned_namespaces() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let Ok(dir) = std::fs::read_dir("/run/netns") else {
            return;
        };
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = owner_pid(&name) else {
                continue;
            };
            if Path::new(&format!("/proc/{pid}")).exists() {
                continue;
            }
            let gone = Command::new("ip")
                .args(["netns", "del", &name])
                .output()
                .is_ok_and(|o| o.status.success());
            eprintln!(
                "test rig: namespace {name} of test process {pid}, which is gone: {}",
                if gone {
                    "removed"
                } else {
                    "could not remove it"
                }
            );
        }
    });
}

/// True when the test runs as root (netns tests need it).
/// `flock` on `path` (created if missing): `None` only when a non-blocking
/// `arg` finds it taken.
pub fn flock_file(
    path: impl AsRef<Path>,
    arg: nix::fcntl::FlockArg,
) -> Option<nix::fcntl::Flock<std::fs::File>> {
    let path = path.as_ref();
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    match nix::fcntl::Flock::lock(f, arg) {
        Ok(l) => Some(l),
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => None,
        Err((_, e)) => panic!("flock {}: {e}", path.display()),
    }
}

/// The exclusive lock of a cache that test binaries fill at once (held
/// until dropped; blocks until granted).
pub fn cache_lock(path: impl AsRef<Path>) -> nix::fcntl::Flock<std::fs::File> {
    flock_file(path, nix::fcntl::FlockArg::LockExclusive).expect("a blocking flock")
}

pub fn is_root() -> bool {
    nix::unistd::Uid::effective().is_root()
}

/// Fail plainly, naming what needs it, when a test that needs root runs without
/// it (instead of failing deep inside `ip`, `mount` or the bus). Never a skip
/// that passes: the suite needs root (scripts/test.sh runs itself through
/// sudo), so a test that cannot run fails, and cargo's summary counts it
/// (tests/no_silent_skip.rs keeps it so).
pub fn require_root(what: &str) {
    assert!(
        is_root(),
        "did not run: {what} needs root (the suite runs as root: scripts/test.sh, or cargo test as root)"
    );
}

/// Run a command, panicking with its output when it fails.
pub fn sh(args: &[&str]) -> Output {
    let out = die_with_test(&mut Command::new(args[0]))
        .args(&args[1..])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {args:?}: {e}"));
    assert!(
        out.status.success(),
        "{args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The hlctl binary under test.
pub const HLCTL: &str = env!("CARGO_BIN_EXE_hlctl");

/// Run a command, returning its output (unchecked); a missing program fails
/// the test with a pointer to scripts/setup.sh.
pub fn run(cmd: &str, args: &[&str]) -> Output {
    Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd}: {e} (scripts/setup.sh installs it)"))
}

/// `hlctl ARGS` on the host (no namespace, no state directory), unchecked.
pub fn hlctl(args: &[&str]) -> Output {
    run(HLCTL, args)
}

/// A child process killed (if still running) and reaped when dropped: its pid
/// is never signalled after it was reaped. The one guard for processes a test
/// spawns ([`bus::Proc`] and [`lab::ChildGuard`] are this type).
pub struct ChildGuard(pub Child);

impl ChildGuard {
    pub fn pid(&self) -> u32 {
        self.0.id()
    }

    /// SIGKILL now (a crash), and reap.
    pub fn kill9(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill(); // SIGKILL to this child's pid only
        }
        let _ = self.0.wait();
    }
}

/// The interface names of a `show --json` report, in its order.
pub fn interface_names(show: &serde_json::Value) -> Vec<&str> {
    show["interfaces"]
        .as_array()
        .expect("show --json has interfaces")
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect()
}

/// A finished command's exit code, stdout and stderr, for assertion messages.
pub fn output_text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A network namespace that is deleted when dropped.
pub struct NetNs {
    pub name: String,
}

impl NetNs {
    pub fn new() -> Self {
        remove_orphaned_namespaces();
        let name = unique("hlt");
        sh(&["ip", "netns", "add", &name]);
        let ns = NetNs { name };
        ns.ip(&["link", "set", "lo", "up"]);
        ns
    }

    /// `ip -n NS ARGS...`
    pub fn ip(&self, args: &[&str]) -> Output {
        let mut v = vec!["ip", "-n", self.name.as_str()];
        v.extend_from_slice(args);
        sh(&v)
    }

    /// Run any command inside the namespace (`ip netns exec NS ...`), checked.
    pub fn exec(&self, args: &[&str]) -> Output {
        let mut v = vec!["ip", "netns", "exec", self.name.as_str()];
        v.extend_from_slice(args);
        sh(&v)
    }

    /// Run any command inside the namespace, unchecked.
    pub fn exec_raw(&self, args: &[&str]) -> Output {
        die_with_test(&mut Command::new("ip"))
            .args(["netns", "exec", self.name.as_str()])
            .args(args)
            .output()
            .expect("run ip netns exec")
    }

    /// Names that resolve inside this namespace only: `text` becomes
    /// /etc/netns/NS/hosts, which `ip netns exec` binds over /etc/hosts for
    /// what it runs. Removed with the namespace.
    pub fn hosts(&self, text: &str) {
        let dir = format!("/etc/netns/{}", self.name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(format!("{dir}/hosts"), text).unwrap();
    }

    /// Create a veth pair `a`–`b` inside this namespace, both up.
    pub fn veth(&self, a: &str, b: &str) {
        self.ip(&["link", "add", a, "type", "veth", "peer", "name", b]);
        self.ip(&["link", "set", a, "up"]);
        self.ip(&["link", "set", b, "up"]);
    }

    /// Move the calling thread into this namespace (for in-process netlink tests).
    /// Use it on a dedicated thread: the thread stays in the namespace.
    pub fn enter_current_thread(&self) {
        let f = std::fs::File::open(format!("/run/netns/{}", self.name)).expect("open netns");
        nix::sched::setns(f, nix::sched::CloneFlags::CLONE_NEWNET).expect("setns");
    }

    /// Run `f` on a fresh thread inside this namespace and return its result.
    pub fn run_in<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> T {
        let path = format!("/run/netns/{}", self.name);
        std::thread::spawn(move || {
            let file = std::fs::File::open(path).expect("open netns");
            nix::sched::setns(file, nix::sched::CloneFlags::CLONE_NEWNET).expect("setns");
            f()
        })
        .join()
        .expect("thread in netns panicked")
    }
}

impl Drop for NetNs {
    fn drop(&mut self) {
        // Deleting the namespace destroys the veth pairs inside it.
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .output();
        // NetNs::hosts's files, if any.
        let _ = std::fs::remove_dir_all(format!("/etc/netns/{}", self.name));
    }
}

/// The resident memory of process `pid`, in KiB (`VmRSS`).
pub fn rss_kib(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// `pid`'s resident memory once it is at most `limit` KiB, or its last
/// reading when `within` passes first: hlctld gives a burst's memory back
/// when the blocking threads that served it end, seconds after the burst.
pub fn rss_settled_kib(pid: u32, limit: u64, within: std::time::Duration) -> u64 {
    let deadline = std::time::Instant::now() + within;
    loop {
        let rss = rss_kib(pid);
        if rss <= limit || std::time::Instant::now() >= deadline {
            return rss;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}
