//! Full and read-only disks under hlctl's state directory (issue 39, part
//! 3): a change that journals first (`set --try`) stops before it changes
//! anything when the journal cannot be written; a change that persists
//! (`set --persist`) stays applied and says plainly that it could not be
//! persisted, naming the file and the errno's text; when space returns the
//! next write succeeds. Real veths in a test namespace; the state directory
//! is a real tmpfs of the test's own (filled to the last byte, or mounted
//! read-only), mounted on a temporary directory and unmounted at the end.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::lab::NsLab as Lab;
use serde_json::Value;

/// A tmpfs of the test's own, unmounted when dropped (also when the test fails).
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// A 64 KiB tmpfs on `dir`, `ro` or filled until ENOSPC.
    fn mount(dir: &Path, read_only: bool) -> Tmpfs {
        std::fs::create_dir_all(dir).unwrap();
        let opts = if read_only { "ro,size=64k" } else { "size=64k" };
        let st = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                opts,
                "hlctl-test",
                dir.to_str().unwrap(),
            ])
            .status()
            .unwrap();
        assert!(st.success(), "mount tmpfs on {}", dir.display());
        let t = Tmpfs(dir.to_path_buf());
        if !read_only {
            t.fill();
        }
        t
    }

    /// A 1 MiB tmpfs on `dir` (room for a history database), empty and
    /// writable: fill it or make it read-only once the test has put its
    /// files there.
    fn empty(dir: &Path) -> Tmpfs {
        std::fs::create_dir_all(dir).unwrap();
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "hlctl-test"])
            .arg(dir)
            .status()
            .unwrap();
        assert!(st.success(), "mount tmpfs on {}", dir.display());
        Tmpfs(dir.to_path_buf())
    }

    /// Remount it read-only (EROFS from now on).
    fn read_only(&self) {
        let st = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(&self.0)
            .status()
            .unwrap();
        assert!(st.success(), "remount {} read-only", self.0.display());
    }

    /// Every file in it with its bytes (the filler left out).
    fn files(&self) -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<(String, Vec<u8>)> = walk(&self.0)
            .into_iter()
            .filter(|p| !p.ends_with("filler"))
            .map(|p| {
                let name = p.strip_prefix(&self.0).unwrap().display().to_string();
                (name, std::fs::read(&p).unwrap())
            })
            .collect();
        v.sort();
        v
    }

    /// Write a filler file until the filesystem refuses with ENOSPC.
    fn fill(&self) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.0.join("filler")).unwrap();
        let block = [0u8; 4096];
        loop {
            match f.write(&block) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{e}");
                    break;
                }
            }
        }
        // The last partial block, byte by byte.
        while f.write(&[0u8]).is_ok_and(|n| n == 1) {}
    }

    /// Space again: the filler goes.
    fn free(&self) {
        std::fs::remove_file(self.0.join("filler")).unwrap();
    }
}

/// Every regular file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            v.extend(walk(&p));
        } else {
            v.push(p);
        }
    }
    v
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

fn mtu(lab: &Lab, iface: &str) -> u64 {
    let out = lab.ns.exec(&["ip", "-j", "link", "show", "dev", iface]);
    serde_json::from_slice::<Value>(&out.stdout).unwrap()[0]["mtu"]
        .as_u64()
        .unwrap()
}

fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `set --try` journals the values it overwrites before it changes them:
/// with no room (or no write) for the journal it changes nothing and says
/// which file and why.
#[test]
fn a_try_whose_journal_cannot_be_written_changes_nothing() {
    for (read_only, why) in [
        (false, "No space left on device"),
        (true, "Read-only file system"),
    ] {
        let lab = Lab::new();
        let a = lab.a.as_str();
        let _fs = Tmpfs::mount(&lab.dir.path().join("state"), read_only);
        let before = mtu(&lab, a);
        let out = lab.hlctl(&["--local", "set", a, "mtu", "9000", "--try", "30"]);
        let said = text(&out);
        eprintln!("set --try, state dir {why}: {said}");
        assert!(
            !out.status.success(),
            "set --try succeeded on a {why} state dir:\n{said}"
        );
        assert!(
            said.contains(why),
            "the error does not say {why:?}:\n{said}"
        );
        assert!(said.contains("nothing was changed"), "{said}");
        assert!(
            said.contains(lab.dir.path().join("state").to_str().unwrap()),
            "names no file:\n{said}"
        );
        assert_eq!(mtu(&lab, a), before, "{why}: the MTU was changed:\n{said}");
    }
}

/// `set --persist` on a full state directory: applied, not persisted, said
/// so with the file and errno (exit 1); once space returns, the same
/// command persists without anything restarted.
#[test]
fn a_persist_on_a_full_disk_is_applied_said_and_persisted_once_space_returns() {
    let lab = Lab::new();
    let a = lab.a.as_str();
    let fs = Tmpfs::mount(&lab.dir.path().join("state"), false);
    let out = lab.hlctl(&["--local", "set", a, "mtu", "4000", "--persist"]);
    let said = text(&out);
    eprintln!("set --persist, state dir full: {said}");
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("could not be persisted"), "{said}");
    assert!(said.contains("nic-settings.json"), "{said}");
    assert!(said.contains("No space left on device"), "{said}");
    assert_eq!(mtu(&lab, a), 4000, "the live change stays");
    fs.free();
    let r = lab.json(&["--local", "set", a, "mtu", "4000", "--persist"]);
    assert!(
        r["persisted"]
            .as_str()
            .unwrap()
            .ends_with("nic-settings.json"),
        "{r}"
    );
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(lab.dir.path().join("state/nic-settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(state["interfaces"][0]["settings"]["mtu"], 4000, "{state}");
}

/// The same on a read-only state directory (EROFS).
#[test]
fn a_persist_on_a_read_only_disk_is_applied_and_said() {
    let lab = Lab::new();
    let a = lab.a.as_str();
    let _fs = Tmpfs::mount(&lab.dir.path().join("state"), true);
    let out = lab.hlctl(&["--local", "set", a, "mtu", "4000", "--persist"]);
    let said = text(&out);
    eprintln!("set --persist, state dir read-only: {said}");
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("could not be persisted"), "{said}");
    assert!(said.contains("Read-only file system"), "{said}");
    assert_eq!(mtu(&lab, a), 4000, "the live change stays");
}

/// Every file of `before` byte for byte in `after`, and nothing new but
/// SQLite's own side files of no content: an empty write-ahead log (no
/// frame in it) and the shared-memory index that SQLite rebuilds from it.
fn unchanged(before: &[(String, Vec<u8>)], after: &[(String, Vec<u8>)]) -> bool {
    let kept = before.iter().all(|f| after.contains(f));
    let new_ok = after
        .iter()
        .filter(|f| !before.contains(f))
        .all(|(n, b)| (n == "history.db-wal" && b.is_empty()) || n == "history.db-shm");
    kept && new_ok
}

/// The names and sizes of a state directory's files, for a message.
fn listing(files: &[(String, Vec<u8>)]) -> Vec<(String, usize)> {
    files.iter().map(|(n, b)| (n.clone(), b.len())).collect()
}

/// A write to the history database (a benchmark's row, `baseline save`)
/// on a full or read-only state directory: the command says that the
/// record could not be written, the file and why, exits 1 (failed), and
/// every file there stays byte for byte as it was; once space returns the
/// next one is stored.
#[test]
fn history_rows_and_baselines_on_a_full_or_read_only_disk_are_refused_whole() {
    let bench = ["--local", "bench", "cpu", "--time", "0.3", "--threads", "1"];
    for (read_only, why) in [
        (false, "No space left on device"),
        (true, "Read-only file system"),
    ] {
        let lab = Lab::new();
        let state = lab.dir.path().join("state");
        let fs = Tmpfs::empty(&state);
        let first = lab.hlctl(&bench);
        assert!(first.status.success(), "{}", text(&first));
        if read_only {
            fs.read_only();
        } else {
            fs.fill();
        }
        let before = fs.files();
        assert!(
            before.iter().any(|(n, _)| n == "history.db"),
            "{:?}",
            listing(&before)
        );
        for (what, args) in [
            ("bench cpu", &bench[..]),
            (
                "baseline save",
                &["--local", "baseline", "save", "before"][..],
            ),
        ] {
            let out = lab.hlctl(args);
            let said = text(&out);
            eprintln!(
                "{what}, state dir {why}: exit {:?}: {said}",
                out.status.code()
            );
            assert_eq!(out.status.code(), Some(1), "{what}, {why}:\n{said}");
            assert!(said.contains(why), "{what}: does not say {why:?}:\n{said}");
            assert!(
                said.contains(state.join("history.db").to_str().unwrap()),
                "{what}: names no file:\n{said}"
            );
            let after = fs.files();
            assert!(
                unchanged(&before, &after),
                "{what}, {why}: the state directory changed: {:?} -> {:?}",
                listing(&before),
                listing(&after)
            );
        }
        if !read_only {
            fs.free();
            let r = lab.json(&["--local", "baseline", "save", "after"]);
            assert!(r["metrics"].as_u64().unwrap() > 0, "{r}");
            let out = lab.hlctl(&bench);
            assert!(out.status.success(), "space again: {}", text(&out));
            let h = lab.json(&["--local", "history", "--kind", "cpu"]);
            assert_eq!(h["results"].as_array().unwrap().len(), 2, "{h}");
            let db = rusqlite::Connection::open(state.join("history.db")).unwrap();
            let ok: String = db
                .query_row("PRAGMA integrity_check", [], |r| r.get(0))
                .unwrap();
            assert_eq!(ok, "ok");
        }
    }
}

/// What a tune could change in `here`: the veth's offloads and MTU, and
/// the TCP buffer sysctls of the namespace.
fn tunables(lab: &common::lab::Lab) -> String {
    let k = lab.here.exec(&["ethtool", "-k", &lab.a]);
    let s = lab.here.exec(&[
        "sysctl",
        "net.ipv4.tcp_wmem",
        "net.ipv4.tcp_rmem",
        "net.ipv4.tcp_congestion_control",
    ]);
    format!(
        "mtu {}\n{}{}",
        lab.mtu(),
        String::from_utf8_lossy(&k.stdout),
        String::from_utf8_lossy(&s.stdout)
    )
}

/// A tune journals the values a candidate overwrites before it applies
/// it: with no room (or no write) for the journal it stops before it
/// changes anything, says which file and why, and exits 1 (failed).
#[test]
fn a_tune_whose_journal_cannot_be_written_changes_nothing() {
    let _serial = common::lab::serial();
    for (read_only, why) in [
        (false, "No space left on device"),
        (true, "Read-only file system"),
    ] {
        let lab = common::lab::Lab::new();
        // Something to tune: offloads off and a small send buffer.
        lab.here.exec(&[
            "ethtool", "-K", &lab.a, "gso", "off", "tso", "off", "sg", "off",
        ]);
        lab.here
            .exec(&["sysctl", "-qw", "net.ipv4.tcp_wmem=4096 16384 65536"]);
        let srv = lab.iperf3_server();
        let peer = lab.peer_arg(&srv);
        let fs = Tmpfs::mount(&lab.state_dir(), read_only);
        let files = fs.files();
        let before = tunables(&lab);
        let out = lab.hlctl(&[
            "--local", "tune", &lab.a, "--peer", &peer, "--yes", "--runs", "1", "--time", "1",
            "--no-mtu",
        ]);
        let said = text(&out);
        eprintln!(
            "tune, state dir {why}: exit {:?}: {said}",
            out.status.code()
        );
        assert_eq!(out.status.code(), Some(1), "{why}:\n{said}");
        assert!(said.contains(why), "does not say {why:?}:\n{said}");
        assert!(
            said.contains(lab.state_dir().to_str().unwrap()),
            "names no file:\n{said}"
        );
        assert_eq!(tunables(&lab), before, "{why}: the tune changed something");
        assert!(said.contains("nothing was changed"), "{said}");
        // Only the tune directory's lock (empty; taken before the journal).
        let mut left = fs.files();
        left.retain(|f| !(f.0 == "tune/lock" && f.1.is_empty()));
        assert_eq!(left, files, "{why}: a file was left in the state directory");
        assert!(!lab.sysctl_dir().join("90-hlctl.conf").exists());
    }
}

/// Through hlctld the same: a benchmark hlctld ran but could not store
/// (its state directory full) makes the client say so, with the file and
/// errno, and exit 1, as the run in this process does; on a read-only
/// state directory hlctld refuses it before it runs (exit 1, the
/// measurement lock and EROFS named).
#[test]
fn a_benchmark_through_hlctld_that_cannot_be_stored_says_so_and_exits_1() {
    for (read_only, why) in [
        (false, "No space left on device"),
        (true, "Read-only file system"),
    ] {
        // The state directory is mounted before hlctld starts: hlctld runs
        // under `ip netns exec`, in a mount namespace of its own.
        let rig = common::bus::Rig::start();
        let ns = common::NetNs::new();
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let fs = Tmpfs::empty(&state);
        // The measurement lock is there (as after any earlier benchmark):
        // without it a read-only state dir refuses the benchmark before it
        // runs, naming the lock file.
        std::fs::write(state.join("measure.lock"), "").unwrap();
        if read_only {
            fs.read_only();
        } else {
            fs.fill();
        }
        let daemon = rig.daemon(&ns, dir.path(), &[]);
        let out = rig.hlctl(&["bench", "cpu", "--time", "0.3", "--threads", "1"]);
        let said = text(&out);
        eprintln!(
            "bench cpu through hlctld, state dir {why}: exit {:?}: {said}",
            out.status.code()
        );
        assert_eq!(
            out.status.code(),
            Some(1),
            "{why}:\n{said}\n{}",
            daemon.log()
        );
        assert!(said.contains(why), "does not say {why:?}:\n{said}");
        if read_only {
            // hlctld cannot take the measurement lock in its state
            // directory: refused before anything ran, the lock named.
            assert!(
                said.contains(state.join("measure.lock").to_str().unwrap()),
                "names no file:\n{said}"
            );
            continue;
        }
        assert!(said.contains("could not be stored"), "{said}");
        assert!(
            said.contains(state.join("history.db").to_str().unwrap()),
            "names no file:\n{said}"
        );
        assert!(
            said.contains("events/s"),
            "the result is still shown:\n{said}"
        );
    }
}
