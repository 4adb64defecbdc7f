//! The SSH transport: the user's own `ssh` (their ssh_config, keys and
//! agent; `BatchMode=yes`, so never a password prompt) runs `cat > FILE`
//! and then `cat FILE` on the server, with the test file streamed through
//! its stdin and stdout. Each direction is timed from the moment ssh sends
//! the command (`ssh -v`'s "Sending command") to the last byte: the
//! connection's key exchange and login are left out, as a throughput's
//! figure should. A plain exec channel rather than sftp: any server with a
//! shell answers it, and it measures what scp and sftp ride on (the cipher,
//! the channel window) without sftp's own request pipelining on top.
//!
//! The remote file is removed at the end, also on error or cancel
//! ([`RemoteFile`]).

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{CHUNK, Direction, FileError, FileReport, SshTarget, Transfer, kex, tick};
use crate::bench::buffer::AlignedBuf;
use crate::bench::progress::{Cancel, Progress};

/// ssh's line when the session starts the remote command.
const SENDING: &str = "debug1: Sending command";

static NEXT: AtomicU64 = AtomicU64::new(0);

/// Write then read `size` bytes over SSH to `t`.
pub(crate) fn run(
    t: &SshTarget,
    size: u64,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<FileReport, FileError> {
    let mut remote = RemoteFile::new(t);
    let mut buf = AlignedBuf::new(CHUNK).map_err(FileError::SpawnSsh)?;
    buf.fill_random(0xf11e ^ size);
    let (write, verbose) = write(t, &remote.path, size, &buf, progress, cancel)?;
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
    c.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
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
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        (hz > 0).then(|| Duration::from_secs_f64((s.utime + s.stime) as f64 / hz as f64))
    }

    /// Reap ssh: its exit status and the CPU time it used in all.
    fn finish(self) -> (i32, Duration, String) {
        let (status, cpu) = wait4(self.child.id() as libc::pid_t);
        // Let the stderr thread read to the end before the text is taken.
        let _ = self.started.recv_timeout(Duration::from_secs(5));
        let text = self.text();
        (status, cpu, text)
    }

    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `wait4(2)`: the child's exit status (128 + signal when killed) and its
/// rusage's user + system time.
fn wait4(pid: libc::pid_t) -> (i32, Duration) {
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: status and ru are valid for writes; pid is our own child,
        // not yet reaped (std's Child never waited for it).
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            break;
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return (-1, Duration::ZERO);
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    (code, tv(ru.ru_utime) + tv(ru.ru_stime))
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
    buf: &AlignedBuf,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<(Transfer, String), FileError> {
    let mut cmd = command(t, &format!("cat > {}", quote(path)), true);
    cmd.stdin(Stdio::piped());
    let mut s = Session::spawn(cmd)?;
    let mut stdin = s.child.stdin.take().expect("stdin is piped");
    if !s.wait_started() {
        drop(stdin);
        let (status, _, text) = s.finish();
        return Err(failed(t, "starting the write", status, &text));
    }
    let cpu0 = s.cpu_now().unwrap_or_default();
    let start = Instant::now();
    let mut done = 0u64;
    while done < size {
        if cancel.is_cancelled() {
            s.kill();
            return Err(FileError::Cancelled);
        }
        if stdin.write_all(buf.as_slice()).is_err() {
            break; // ssh is gone: its status and stderr say why
        }
        done += CHUNK as u64;
        tick(progress, Direction::Write, done, size);
    }
    drop(stdin);
    let (status, cpu, text) = s.finish();
    let seconds = start.elapsed().as_secs_f64();
    if status != 0 {
        return Err(failed(t, "writing the test file", status, &text));
    }
    if done != size {
        let (host, what, got, want) = (t.destination(), "write", done, size);
        return Err(FileError::Short { host, what, got, want });
    }
    let mut tr = Transfer::new(Direction::Write, done, seconds);
    tr.client_cores = Some(cores(cpu, cpu0, seconds));
    Ok((tr, text))
}

/// `cat FILE` on the server, read to the end.
fn read(
    t: &SshTarget,
    path: &str,
    size: u64,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<(Transfer, String), FileError> {
    let mut cmd = command(t, &format!("cat {}", quote(path)), true);
    cmd.stdout(Stdio::piped());
    let mut s = Session::spawn(cmd)?;
    let mut stdout = s.child.stdout.take().expect("stdout is piped");
    if !s.wait_started() {
        drop(stdout);
        let (status, _, text) = s.finish();
        return Err(failed(t, "starting the read", status, &text));
    }
    let cpu0 = s.cpu_now().unwrap_or_default();
    let start = Instant::now();
    let done = match drain(&mut stdout, size, progress, cancel) {
        Ok(n) => n,
        Err(e) => {
            s.kill();
            return Err(e);
        }
    };
    let (status, cpu, text) = s.finish();
    let seconds = start.elapsed().as_secs_f64();
    if status != 0 {
        return Err(failed(t, "reading the test file", status, &text));
    }
    if done != size {
        let (host, what, got, want) = (t.destination(), "read", done, size);
        return Err(FileError::Short { host, what, got, want });
    }
    let mut tr = Transfer::new(Direction::Read, done, seconds);
    tr.client_cores = Some(cores(cpu, cpu0, seconds));
    Ok((tr, text))
}

/// Read `out` to its end, counting.
fn drain(
    out: &mut ChildStdout,
    size: u64,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<u64, FileError> {
    let mut buf = vec![0u8; CHUNK];
    let mut done = 0u64;
    let mut told = 0u64;
    loop {
        if cancel.is_cancelled() {
            return Err(FileError::Cancelled);
        }
        let n = match out.read(&mut buf) {
            Ok(0) => return Ok(done),
            Ok(n) => n as u64,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return Ok(done),
        };
        done += n;
        if done / (CHUNK as u64) > told {
            told = done / CHUNK as u64;
            tick(progress, Direction::Read, told * CHUNK as u64, size);
        }
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
            .map(|h| h.trim().replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', ""))
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
        let cmd = command(&self.target, &format!("rm -f -- {}", quote(&self.path)), false);
        let s = Session::spawn(cmd)?;
        let (status, _, text) = s.finish();
        if status != 0 {
            return Err(failed(&self.target, "removing the test file", status, &text));
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
        let e = failed(&t, "w", 255, "debug1: x\nu@nas: Permission denied (publickey).\n");
        assert!(matches!(e, FileError::SshAuth { .. }), "{e}");
        let msg = e.to_string();
        assert!(msg.contains("never asks a password"), "{msg}");
        assert!(msg.contains("Permission denied (publickey)"), "{msg}");
        assert!(!msg.contains("debug1"), "{msg}");
    }
}
