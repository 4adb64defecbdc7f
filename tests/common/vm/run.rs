//! Running qemu with a hard timeout; a guard kills it (by pid) on any exit.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::VmOutput;

/// Kills and reaps qemu unless it already exited: a panicking test or an
/// overrun never leaves a VM behind.
pub struct QemuGuard(pub Child);

impl Drop for QemuGuard {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            // Child::kill sends SIGKILL to this child's pid only.
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Read a pipe to its end on a thread; echo it to stderr when `echo`.
pub fn drain(pipe: impl Read + Send + 'static, echo: bool) -> JoinHandle<Vec<u8>> {
    drain_into(pipe, echo, Vec::new())
}

/// Read a pipe to its end on a thread into `sink` (written as it comes);
/// echo it to stderr when `echo`.
pub fn drain_into<W: Write + Send + 'static>(
    mut pipe: impl Read + Send + 'static,
    echo: bool,
    mut sink: W,
) -> JoinHandle<W> {
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            if echo {
                let _ = std::io::stderr().write_all(&buf[..n]);
            }
            let _ = sink.write_all(&buf[..n]);
        }
        sink
    })
}

/// Boot qemu-system-x86_64 with `args` (inside namespace `netns` if given)
/// and wait for it to power off, at most `timeout`.
pub fn run_qemu(netns: Option<&str>, args: &[String], timeout: Duration) -> VmOutput {
    let echo = std::env::var_os("HLCTL_VM_VERBOSE").is_some_and(|v| v != "0");
    let started = Instant::now();
    let child = spawn_qemu(netns, args, Stdio::null());
    let qemu_pid = child.id();
    let mut guard = QemuGuard(child);
    let out = drain(guard.0.stdout.take().expect("qemu stdout"), echo);
    let err = drain(guard.0.stderr.take().expect("qemu stderr"), echo);

    let mut timed_out = false;
    loop {
        match guard.0.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() >= timeout => {
                timed_out = true;
                break;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => panic!("waiting for qemu: {e}"),
        }
    }
    drop(guard); // kills qemu if it overran; its pipes then close
    let elapsed = started.elapsed();
    let serial = String::from_utf8_lossy(&out.join().unwrap_or_default()).replace('\r', "");
    let qemu_stderr = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
    VmOutput {
        guest_rc: VmOutput::parse_guest_rc(&serial),
        serial,
        qemu_stderr,
        timed_out,
        elapsed,
        qemu_pid,
    }
}

/// Start qemu-system-x86_64 with `args` (inside namespace `netns` if given),
/// stdout and stderr piped; it is killed when this process dies.
pub fn spawn_qemu(netns: Option<&str>, args: &[String], stdin: Stdio) -> Child {
    let mut cmd = match netns {
        // `ip netns exec` execs qemu in place: the child's pid is qemu's.
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns, "qemu-system-x86_64"]);
            c
        }
        None => Command::new("qemu-system-x86_64"),
    };
    cmd.args(args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // If the test process dies (Ctrl-C, SIGKILL) before the guard runs, the
    // kernel kills qemu too (parent-death signal; it fires when this thread
    // ends, which is after the guard anyway). `ip netns exec` keeps it
    // across its exec.
    // SAFETY: the closure only makes one async-signal-safe prctl call.
    unsafe {
        cmd.pre_exec(|| {
            nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
                .map_err(std::io::Error::from)
        });
    }
    cmd.spawn().unwrap_or_else(|e| {
        panic!("cannot start qemu-system-x86_64 (apt-get install qemu-system-x86): {e}")
    })
}
