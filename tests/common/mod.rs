//! Shared test rig: throw-away network namespaces with veth pairs.
//!
//! Every namespace gets a unique name and is deleted by its guard's `Drop`,
//! so a failing test still cleans up. Nothing here touches the host's own
//! interfaces, routes or sysctls.

#![allow(dead_code)]

pub mod fs;

use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

/// qemu VM rig with Debian's kernel and real NIC drivers (see vm.rs).
pub mod bus;
pub mod deb;
pub mod ethtool;
pub mod lab;
pub mod sysvm;
pub mod vm;

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A unique short name (interface names are limited to 15 bytes).
pub fn unique(prefix: &str) -> String {
    let n = COUNTER.fetch_add(1, Ordering::SeqCst);
    format!("{prefix}{}x{n}", std::process::id() % 100_000)
}

/// True when the test runs as root (netns tests need it).
pub fn is_root() -> bool {
    nix::unistd::Uid::effective().is_root()
}

/// Run a command, panicking with its output when it fails.
pub fn sh(args: &[&str]) -> Output {
    let out = Command::new(args[0])
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

/// A network namespace that is deleted when dropped.
pub struct NetNs {
    pub name: String,
}

impl NetNs {
    pub fn new() -> Self {
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
        Command::new("ip")
            .args(["netns", "exec", self.name.as_str()])
            .args(args)
            .output()
            .expect("run ip netns exec")
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
    }
}
