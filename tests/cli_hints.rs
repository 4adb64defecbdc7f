//! Common mistakes get one message that says what to write instead, and
//! change nothing: a host without -c in `bench net`, a sysctl value of
//! several numbers left unquoted, a sysctl key without its `net.` prefix.
//! The sysctl cases run in a network namespace of the test's own (its
//! net.* values are its own), never against this machine's.

mod common;

use std::process::{Command, Output};

use common::NetNs;

const HLCTL: &str = env!("CARGO_BIN_EXE_hlctl");

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The message lines hlctl printed (not its note on where it runs).
fn messages(o: &Output) -> Vec<String> {
    stderr(o)
        .lines()
        .filter(|l| !l.contains("hlctld is not reachable"))
        .map(str::to_string)
        .collect()
}

#[test]
fn bench_net_with_a_bare_host_suggests_dash_c() {
    let state = tempfile::tempdir().unwrap();
    let o = Command::new(HLCTL)
        .arg("--state-dir")
        .arg(state.path())
        .args(["bench", "net", "10.0.0.2"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let m = messages(&o);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(m[0].contains("`hlctl bench net -c 10.0.0.2`"), "{m:?}");
    assert!(
        !state.path().join("history.db").exists(),
        "nothing was measured or stored"
    );
}

fn tcp_rmem(ns: &NetNs) -> String {
    String::from_utf8_lossy(&ns.exec(&["cat", "/proc/sys/net/ipv4/tcp_rmem"]).stdout).into_owned()
}

#[test]
fn sysctl_hints_in_a_namespace_change_nothing() {
    common::require_root("a network namespace");
    let ns = NetNs::new();
    let before = tcp_rmem(&ns);
    let sysctl_dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let run = |words: &[&str]| {
        let mut v = vec![HLCTL, "--state-dir", state.path().to_str().unwrap()];
        v.extend([
            "--sysctl-dir",
            sysctl_dir.path().to_str().unwrap(),
            "sysctl",
        ]);
        v.extend_from_slice(words);
        ns.exec_raw(&v)
    };
    // The value split by the shell, with and without `=`: one message.
    for words in [
        &["net.ipv4.tcp_rmem", "4096", "131072", "16777216"][..],
        &["net.ipv4.tcp_rmem=4096", "131072", "16777216"],
    ] {
        let o = run(words);
        assert_eq!(o.status.code(), Some(2), "{words:?}: {}", stderr(&o));
        let m = messages(&o);
        assert_eq!(m.len(), 1, "one message, not one per word: {m:?}");
        assert!(
            m[0].contains("`hlctl sysctl 'net.ipv4.tcp_rmem=4096 131072 16777216'`"),
            "{m:?}"
        );
    }
    // A key without net.: the close ones.
    let o = run(&["tcp_rmem"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let m = messages(&o);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(m[0].contains("did you mean net.ipv4.tcp_rmem?"), "{m:?}");
    assert_eq!(
        tcp_rmem(&ns),
        before,
        "the namespace's tcp_rmem is unchanged"
    );
    let written: Vec<_> = std::fs::read_dir(sysctl_dir.path()).unwrap().collect();
    assert!(written.is_empty(), "nothing persisted: {written:?}");
}

/// `hlctl show --json | head -1`: a reader that stops early ends hlctl as it
/// ends `ip` (SIGPIPE), never with a panic message. The pipe's read end is
/// closed before hlctl starts, so its first write meets a closed pipe.
#[test]
fn a_closed_pipe_ends_show_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let (read, write) = nix::unistd::pipe().unwrap();
    drop(read);
    let state = tempfile::tempdir().unwrap();
    let o = Command::new(HLCTL)
        .arg("--state-dir")
        .arg(state.path())
        .args(["show", "lo", "--json"])
        .stdout(std::process::Stdio::from(write))
        .output()
        .unwrap();
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    assert_eq!(o.status.signal(), Some(libc::SIGPIPE), "{:?}", o.status);
}

/// An interface that does not exist: the message names the closest ones and
/// lists every interface of the namespace (a namespace of the test's own, so
/// the list is known), for `show` and for `set`, and `set` changes nothing.
#[test]
fn an_unknown_interface_lists_the_ones_there_are() {
    common::require_root("a network namespace");
    let ns = NetNs::new();
    ns.veth("eth1", "vmbr0");
    let state = tempfile::tempdir().unwrap();
    let st = state.path().to_str().unwrap();
    for words in [&["show", "eth2"][..], &["set", "eth2", "mtu", "9000"]] {
        let mut v = vec![HLCTL, "--state-dir", st];
        v.extend_from_slice(words);
        let o = ns.exec_raw(&v);
        assert_eq!(o.status.code(), Some(2), "{words:?}: {}", stderr(&o));
        let m = messages(&o);
        assert_eq!(
            m.last().map(String::as_str),
            Some(
                "hlctl: eth2: no such interface; did you mean eth1? \
                 The interfaces here: eth1, lo, vmbr0"
            ),
            "{words:?}: {m:?}"
        );
    }
    let mtu = ns.exec(&["cat", "/sys/class/net/eth1/mtu"]);
    assert_eq!(String::from_utf8_lossy(&mtu.stdout).trim(), "1500");
}
