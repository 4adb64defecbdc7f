//! The SSH transport: the user's own `ssh` (their ssh_config, keys and
//! agent; `BatchMode=yes`, so never a password prompt) runs `cat > FILE`
//! and then `cat FILE` on the server, with the test file streamed through
//! its stdin and stdout. Each direction is timed from its first byte (the
//! last look, every 5 ms, before ssh's I/O counter moved past its `-v`
//! lines) to ssh's exit: the connection's key exchange and login are left
//! out, as a throughput's figure should, and so is the server's start of
//! `cat` for a read (0.17 s from the command to the first byte on an idle
//! 2-core machine: 5 % of an 8 MiB read at 20 Mbit/s). A write's first
//! byte is ssh reading its input, which it does at once, a channel window
//! ahead of the server: its figure still holds the server's start. A plain
//! exec channel rather than sftp: any server with a shell answers it, and
//! it measures what scp and sftp ride on (the cipher, the channel window)
//! without sftp's own request pipelining on top.
//!
//! The remote file is removed at the end, also on error or cancel
//! ([`RemoteFile`]).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{Direction, FileError, FileReport, SshTarget, Transfer, kex, tick};
use crate::bench::progress::{Cancel, Progress};

/// How often a transfer looks at ssh (exit, progress, cancel).
const POLL: Duration = Duration::from_millis(5);

/// ssh's line when the session starts the remote command.
const SENDING: &str = "debug1: Sending command";

/// What ssh's I/O counter may move past its start before the data moves:
/// its own `-v` lines (a few hundred bytes; the data comes in channel
/// packets of 16-32 KiB).
const CHATTER: u64 = 4096;

static NEXT: AtomicU64 = AtomicU64::new(0);

/// Write then read `size` bytes over SSH to `t`.
pub(crate) fn run(
    t: &SshTarget,
    size: u64,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<FileReport, FileError> {
    let mut remote = RemoteFile::new(t);
    let (write, verbose) = write(t, &remote.path, size, progress, cancel)?;
    let (read, _) = read(t, &remote.path, size, progress, cancel)?;
    remote.remove()?;
    Ok(FileReport {
        protocol: "ssh".into(),
        place: t.label(),
        server: Some(t.host.clone()),
        size_bytes: size,
        write,
        read,
        ssh: kex::parse(&verbose),
        mount: None,
        io: None,
        cancelled: false,
    })
}

/// The ssh command for `remote` on `t` (`-v` to read the algorithms and
/// the start of the command from its stderr).
fn command(t: &SshTarget, remote: &str, verbose: bool) -> Command {
    let mut c = Command::new("ssh");
    if verbose {
        c.arg("-v");
    }
    c.args(["-T", "-o", "BatchMode=yes", "-o", "ClearAllForwardings=yes"]);
    c.args(["-o", "Compression=no"]);
    if let Some(f) = &t.config {
        c.arg("-F").arg(f);
    }
    if let Some(p) = t.port {
        c.arg("-p").arg(p.to_string());
    }
    if let Some(cipher) = &t.cipher {
        c.arg("-c").arg(cipher);
    }
    c.arg("--").arg(t.destination()).arg(remote);
    c.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

/// `'text'` for a POSIX shell.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// A running ssh whose stderr is read by a thread: its text so far, and a
/// message when the command was sent (or stderr ended without it).
struct Session {
    child: Child,
    stderr: Arc<Mutex<String>>,
    started: mpsc::Receiver<bool>,
}

impl Session {
    fn spawn(mut cmd: Command) -> Result<Session, FileError> {
        let mut child = cmd.spawn().map_err(FileError::SpawnSsh)?;
        let err = child.stderr.take().expect("stderr is piped");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (tx, started) = mpsc::channel();
        let text = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut told = false;
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if !told && line.starts_with(SENDING) {
                    told = true;
                    let _ = tx.send(true);
                }
                let mut t = text.lock().unwrap_or_else(|p| p.into_inner());
                t.push_str(&line);
                t.push('\n');
            }
            let _ = tx.send(false);
        });
        Ok(Session {
            child,
            stderr,
            started,
        })
    }

    /// Wait until the remote command was sent; false when ssh gave up first.
    fn wait_started(&self) -> bool {
        self.started.recv().unwrap_or(false)
    }

    fn text(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// ssh's CPU time so far (user + system), from `/proc/PID/stat`.
    fn cpu_now(&self) -> Option<Duration> {
        let text = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).ok()?;
        let s = crate::cpu::tasks::parse(&text).ok()?;
        let hz = crate::cpu::tasks::ticks_per_second();
        Some(Duration::from_secs_f64((s.utime + s.stime) as f64 / hz))
    }

    /// Reap ssh: its exit status and the CPU time it used in all.
    fn finish(self) -> (i32, Duration, String) {
        let pid = self.child.id() as libc::pid_t;
        let (status, cpu) = wait4(pid, 0).unwrap_or((-1, Duration::ZERO));
        (status, cpu, self.text_when_closed())
    }

    /// ssh's exit status and CPU time once it has exited (reaped then).
    fn try_wait(&self) -> Option<(i32, Duration)> {
        wait4(self.child.id() as libc::pid_t, libc::WNOHANG)
    }

    /// Its stderr's text once the reading thread saw its end.
    fn text_when_closed(&self) -> String {
        let _ = self.started.recv_timeout(Duration::from_secs(5));
        self.text()
    }

    /// Bytes ssh read from its stdin (a write) or wrote out (a read) so
    /// far, from `/proc/PID/io` (`rchar`, `wchar`); its own few hundred
    /// bytes of `-v` lines are in `wchar` too, which only moves the
    /// progress, not the figure.
    fn moved(&self, direction: Direction) -> u64 {
        let key = match direction {
            Direction::Write => "rchar: ",
            Direction::Read => "wchar: ",
        };
        std::fs::read_to_string(format!("/proc/{}/io", self.child.id()))
            .ok()
            .and_then(|t| {
                t.lines()
                    .find_map(|l| l.strip_prefix(key).and_then(|v| v.trim().parse().ok()))
            })
            .unwrap_or(0)
    }

    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `wait4(2)` with `flags`: the child's exit status (128 + signal when
/// killed) and its rusage's user + system time; None while it runs
/// (`WNOHANG`). A failed wait reads as status -1.
fn wait4(pid: libc::pid_t, flags: libc::c_int) -> Option<(i32, Duration)> {
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: status and ru are valid for writes; pid is our own child,
        // not yet reaped (std's Child never waited for it).
        let r = unsafe { libc::wait4(pid, &mut status, flags, &mut ru) };
        if r == pid {
            break;
        }
        if r == 0 {
            return None;
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return Some((-1, Duration::ZERO));
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    Some((code, tv(ru.ru_utime) + tv(ru.ru_stime)))
}

/// Why ssh gave up: a refused key (BatchMode) or another failure.
fn failed(t: &SshTarget, what: &'static str, status: i32, text: &str) -> FileError {
    let detail = text
        .lines()
        .filter(|l| !l.starts_with("debug") && !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    if text.contains("Permission denied") || text.contains("Too many authentication failures") {
        return FileError::SshAuth {
            host: t.destination(),
            detail,
        };
    }
    FileError::Ssh {
        host: t.destination(),
        what,
        status,
        detail,
    }
}

/// `cat > FILE` on the server, fed `size` bytes.
fn write(
    t: &SshTarget,
    path: &str,
    size: u64,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<(Transfer, String), FileError> {
    let mut cmd = command(t, &format!("cat > {}", quote(path)), true);
    cmd.stdin(zeros(size)?);
    transfer(t, cmd, Direction::Write, size, progress, cancel)
}

/// `cat FILE` on the server, read to the end into /dev/null.
fn read(
    t: &SshTarget,
    path: &str,
    size: u64,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<(Transfer, String), FileError> {
    let cmd = command(t, &format!("cat {}", quote(path)), true);
    transfer(t, cmd, Direction::Read, size, progress, cancel)
}

/// `size` bytes for ssh's stdin without a pipe or RAM: a sparse memfd
/// (reading its hole costs no memory). Zeros travel as any bytes do with
/// compression off (`command` forces `Compression=no`).
fn zeros(size: u64) -> Result<Stdio, FileError> {
    use nix::sys::memfd::{MFdFlags, memfd_create};
    let fd = memfd_create("hlctl-bench-file", MFdFlags::MFD_CLOEXEC)
        .map_err(|e| FileError::SpawnSsh(e.into()))?;
    let file = std::fs::File::from(fd);
    file.set_len(size).map_err(FileError::SpawnSsh)?;
    Ok(Stdio::from(file))
}

/// Run `cmd`, timed from the command's start to ssh's exit, its progress
/// read from ssh's own I/O counters (`/proc/PID/io`).
fn transfer(
    t: &SshTarget,
    cmd: Command,
    direction: Direction,
    size: u64,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<(Transfer, String), FileError> {
    let what = match direction {
        Direction::Write => "writing the test file",
        Direction::Read => "reading the test file",
    };
    let s = Session::spawn(cmd)?;
    if !s.wait_started() {
        let (status, _, text) = s.finish();
        return Err(failed(t, what, status, &text));
    }
    let cpu0 = s.cpu_now().unwrap_or_default();
    let (status, cpu, start) = match follow(&s, direction, size, progress, cancel) {
        Some(done) => done,
        None => {
            s.kill();
            return Err(FileError::Cancelled);
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    let text = s.text_when_closed();
    if status != 0 {
        return Err(failed(t, what, status, &text));
    }
    let mut tr = Transfer::new(direction, size, seconds);
    tr.client_cores = Some(cores(cpu, cpu0, seconds));
    Ok((tr, text))
}

/// Wait for ssh's exit, telling progress each 64 MiB: its exit status,
/// its CPU time and when the data started to move (the last look before
/// the counter moved past [`CHATTER`]; the first look when it never did,
/// as when `/proc` hides the counter); None when cancelled.
fn follow(
    s: &Session,
    direction: Direction,
    size: u64,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Option<(i32, Duration, Instant)> {
    const STEP: u64 = 64 << 20;
    let quiet = s.moved(direction) + CHATTER;
    let first = Instant::now();
    let mut still = first;
    let mut start = None;
    let mut told = 0u64;
    loop {
        if cancel.is_cancelled() {
            return None;
        }
        let looked = Instant::now();
        if let Some((status, cpu)) = s.try_wait() {
            tick(progress, direction, size, size);
            return Some((status, cpu, start.unwrap_or(first)));
        }
        let counter = s.moved(direction);
        match start {
            None if counter <= quiet => still = looked,
            None => start = Some(still),
            Some(_) => {}
        }
        let moved = counter.min(size) / STEP * STEP;
        if moved > told {
            told = moved;
            tick(progress, direction, moved, size);
        }
        std::thread::sleep(POLL);
    }
}

/// CPU seconds used during the transfer over its wall time: cores busy.
fn cores(total: Duration, before: Duration, seconds: f64) -> f64 {
    if seconds <= 0.0 {
        return 0.0;
    }
    total.saturating_sub(before).as_secs_f64() / seconds
}

/// The test file on the server; removed when dropped unless removed already.
struct RemoteFile {
    target: SshTarget,
    path: String,
    removed: bool,
}

impl RemoteFile {
    fn new(t: &SshTarget) -> RemoteFile {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| {
                h.trim()
                    .replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "")
            })
            .unwrap_or_default();
        let name = format!(".hlctl-bench-file-{host}-{}-{n}", std::process::id());
        let path = match t.dir.as_str() {
            "" => name,
            "/" => format!("/{name}"),
            d => format!("{d}/{name}"),
        };
        RemoteFile {
            target: t.clone(),
            path,
            removed: false,
        }
    }

    /// `rm -f FILE` on the server.
    fn remove(&mut self) -> Result<(), FileError> {
        self.removed = true;
        let cmd = command(
            &self.target,
            &format!("rm -f -- {}", quote(&self.path)),
            false,
        );
        let s = Session::spawn(cmd)?;
        let (status, _, text) = s.finish();
        if status != 0 {
            return Err(failed(
                &self.target,
                "removing the test file",
                status,
                &text,
            ));
        }
        Ok(())
    }
}

impl Drop for RemoteFile {
    fn drop(&mut self) {
        if !self.removed {
            let _ = self.remove();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_name_is_quoted_for_the_shell() {
        assert_eq!(quote("/srv/a b"), "'/srv/a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn a_refused_key_is_said_as_such() {
        let t = SshTarget::parse("ssh://u@nas/x").unwrap();
        let e = failed(
            &t,
            "w",
            255,
            "debug1: x\nu@nas: Permission denied (publickey).\n",
        );
        assert!(matches!(e, FileError::SshAuth { .. }), "{e}");
        let msg = e.to_string();
        assert!(msg.contains("never asks a password"), "{msg}");
        assert!(msg.contains("Permission denied (publickey)"), "{msg}");
        assert!(!msg.contains("debug1"), "{msg}");
    }
}
