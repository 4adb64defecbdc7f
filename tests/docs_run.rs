//! Every example in README.md and docs/*.md is run (issue 30), in the order
//! a reader meets them, in a lab whose names are the docs' own: a network
//! namespace of this test holding veths named eth0, eth1, eth2 and lab0,
//! a peer namespace behind eth2 that `nas` and `nas.lan` resolve to (via
//! /etc/netns/NS/hosts) with `iperf3 -s` on 5201 and a real sshd on 22
//! and 2222 (throwaway keys: [`common::sshd`]), and `iperf3 -s` on the
//! docs' loopback port. Nothing reaches this machine's interfaces, sysctls
//! or files: every run gets `--state-dir`, `--sysctl-dir` and `--config`
//! in a temporary directory, and the docs' paths (/var/tmp/hlbench,
//! /volume1) are mapped into it.
//!
//! What is checked:
//! - every example ends as the docs say: exit 0, unless the docs show it
//!   failing (a few need a real NIC: on a veth they must fail with the
//!   driver's "not supported", never a usage error);
//! - where the docs show the output (blocks with `$ ` prompts), its first
//!   line matches the real one, numbers and paths aside.
//!
//! `hlctl usage` reads rows a real hlctld stored while the lab was built
//! (it sampled eth2 for two seconds).
//!
//! Run lengths are shortened where an example gives none (`doctor` and
//! `tune` get `--time 1`, `doctor` `--stress 1`), and `bench file` moves
//! 64 MiB with 1 s of raw TCP whatever size the docs give, so the whole run
//! takes about a minute; `bench file` over SSH gets the lab's client config
//! (`--ssh-config`), and the docs' user `me` logs in as the lab's root (the
//! only user the lab's sshd lets in). The commands and their other flags
//! are the docs' own.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::docs::{Example, examples};
use common::sshd::Sshd;
use common::{ChildGuard, NetNs};

const HLCTL: &str = env!("CARGO_BIN_EXE_hlctl");
const HOST_ADDR: &str = "10.93.0.1";
const PEER_ADDR: &str = "10.93.0.2";

/// The lab: the docs' interfaces and peers, in namespaces of this test.
struct Lab {
    ns: NetNs,
    _peer: NetNs,
    _servers: Vec<ChildGuard>,
    sshd: Sshd,
    tmp: tempfile::TempDir,
}

impl Lab {
    fn new() -> Lab {
        let ns = NetNs::new();
        let peer = NetNs::new();
        ns.ip(&[
            "link", "add", "eth2", "type", "veth", "peer", "name", "nas0",
        ]);
        ns.ip(&["link", "set", "nas0", "netns", &peer.name]);
        ns.ip(&["addr", "add", &format!("{HOST_ADDR}/24"), "dev", "eth2"]);
        ns.ip(&["link", "set", "eth2", "up"]);
        peer.ip(&["addr", "add", &format!("{PEER_ADDR}/24"), "dev", "nas0"]);
        peer.ip(&["link", "set", "nas0", "up"]);
        for (a, b) in [("eth0", "veth0"), ("eth1", "veth1"), ("lab0", "veth2")] {
            ns.veth(a, b);
        }
        ns.hosts(&format!(
            "127.0.0.1 localhost\n{PEER_ADDR} nas nas.lan\n{HOST_ADDR} pve\n"
        ));
        let servers = vec![
            iperf3(&peer, PEER_ADDR, 5201),
            iperf3(&ns, "127.0.0.1", 37343),
        ];
        let sshd = Sshd::start_on(Some(&peer), PEER_ADDR, &[22, 2222]);
        // The docs' config-check example shows a file with two mistakes:
        // a peer that is no host name (line 2), an unknown key (line 4).
        let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
        std::fs::write(
            tmp.path().join("hlctl.toml"),
            "[check]\npeers = [\"bad host:1\"]\ncpu = true\ncolour = \"red\"\n",
        )
        .unwrap();
        for d in [
            "state",
            "sysctl.d",
            "hlbench",
            "media",
            "volume1/hlctl/sysctl.d",
            "mnt/tank/media",
            "mnt/media",
            "srv/videos",
        ] {
            std::fs::create_dir_all(tmp.path().join(d)).unwrap();
        }
        sample_usage(&ns, tmp.path());
        Lab {
            ns,
            _peer: peer,
            _servers: servers,
            sshd,
            tmp,
        }
    }

    fn path(&self, p: &str) -> String {
        self.tmp.path().join(p).to_str().unwrap().to_string()
    }

    /// The docs' paths and the lab's, each way.
    fn mapping(&self) -> Vec<(String, String)> {
        vec![
            ("/volume1".into(), self.path("volume1")),
            ("/var/tmp/hlbench".into(), self.path("hlbench")),
            ("/srv/media".into(), self.path("media")),
            ("/srv".into(), self.path("srv")),
            ("/mnt".into(), self.path("mnt")),
            ("/etc/hlctl/hlctl.toml".into(), self.path("hlctl.toml")),
            ("/var/lib/hlctl".into(), self.path("state")),
            ("/etc/sysctl.d".into(), self.path("sysctl.d")),
        ]
    }

    /// The example's words as the lab runs them.
    fn argv(&self, ex: &Example) -> Vec<String> {
        let map = self.mapping();
        let mut v: Vec<String> = ex
            .argv
            .iter()
            .map(|w| {
                map.iter()
                    .fold(w.clone(), |w, (doc, lab)| w.replace(doc.as_str(), lab))
            })
            .collect();
        let has = |v: &[String], f: &str| v.iter().any(|w| w == f);
        let mut global = Vec::new();
        for (flag, dir) in [
            ("--state-dir", "state"),
            ("--sysctl-dir", "sysctl.d"),
            ("--config", "hlctl.toml"),
        ] {
            if !has(&v, flag) {
                global.extend([flag.to_string(), self.path(dir)]);
            }
        }
        if v.get(1).is_some_and(|w| w != "--version") {
            v.splice(1..1, global);
        }
        let verb = v
            .iter()
            .skip(1)
            .find(|w| !w.starts_with('-') && !w.starts_with('/'))
            .cloned();
        for (cmd, flag, value) in [
            ("doctor", "--time", "1"),
            ("doctor", "--stress", "1"),
            ("tune", "--time", "1"),
        ] {
            if verb.as_deref() == Some(cmd) && !has(&v, flag) {
                v.extend([flag.to_string(), value.to_string()]);
            }
        }
        if verb.as_deref() == Some("bench") && has(&v, "file") && !has(&v, "--crypto-only") {
            self.shorten_file_run(&mut v);
        }
        v
    }

    /// `bench file`: 64 MiB and 1 s of raw TCP; over SSH the lab's keys,
    /// and the docs' `me` is the lab's root.
    fn shorten_file_run(&self, v: &mut Vec<String>) {
        for (flag, value) in [("--size", "64M"), ("--net-time", "1")] {
            match v.iter().position(|w| w == flag) {
                Some(i) => v[i + 1] = value.to_string(),
                None => v.extend([flag.to_string(), value.to_string()]),
            }
        }
        if let Some(t) = v.iter_mut().find(|w| w.starts_with("ssh://")) {
            *t = t.replace("ssh://me@", "ssh://root@");
            let config = self.sshd.config().display().to_string();
            v.extend(["--ssh-config".to_string(), config]);
        }
    }

    fn run(&self, ex: &Example) -> Output {
        let argv = self.argv(ex);
        if interactive(&argv) {
            return self.run_on_a_terminal(&argv);
        }
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.ns.name, HLCTL])
            .args(&argv[1..])
            // No hlctld: the examples run in this process, as root.
            .env(
                "DBUS_SYSTEM_BUS_ADDRESS",
                "unix:path=/nonexistent/hlctl-docs",
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // A transcript that shows the change kept was confirmed with Enter.
        let confirm = ex.shown.iter().any(|l| l.contains("kept (confirmed)"));
        cmd.stdin(if confirm {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        let mut child = common::die_with_test(&mut cmd).spawn().unwrap();
        if confirm {
            std::thread::sleep(Duration::from_millis(500));
            let mut stdin = child.stdin.take().unwrap();
            let _ = stdin.write_all(b"\n");
        }
        child.wait_with_output().unwrap()
    }

    /// A tune without `--yes` asks on a terminal: run it on one (`script`
    /// gives it a pty), answer "y" to go ahead and Enter to keep what it
    /// kept, as a user at the keyboard would.
    fn run_on_a_terminal(&self, argv: &[String]) -> Output {
        let quoted: Vec<String> = std::iter::once(HLCTL.to_string())
            .chain(argv[1..].iter().cloned())
            .map(|w| format!("'{}'", w.replace('\'', "'\\''")))
            .collect();
        let mut child = common::die_with_test(Command::new("ip").args([
            "netns",
            "exec",
            &self.ns.name,
            "script",
            "-qec",
            &quoted.join(" "),
            "/dev/null",
        ]))
        .env(
            "DBUS_SYSTEM_BUS_ADDRESS",
            "unix:path=/nonexistent/hlctl-docs",
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let _ = stdin.write_all(b"y\n\n");
        // Kept open until hlctl ends: an early EOF would read as "no".
        let out = child.wait_with_output().unwrap();
        drop(stdin);
        out
    }

    /// `hlctl serve -B 127.0.0.1 -p 0 -1`: its first line, once a client
    /// has run one test against it (so `-1` lets it end).
    fn run_serve(&self, ex: &Example) -> (Output, String) {
        use std::io::BufRead;
        let argv = self.argv(ex);
        let mut child = common::die_with_test(
            Command::new("ip")
                .args(["netns", "exec", &self.ns.name, HLCTL])
                .args(&argv[1..])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped()),
        )
        .spawn()
        .unwrap();
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        out.read_line(&mut first).unwrap();
        let port = first.trim().rsplit(':').next().unwrap().to_string();
        let client = self.ns.exec_raw(&[
            HLCTL,
            "bench",
            "net",
            "-c",
            "127.0.0.1",
            "-p",
            &port,
            "-t",
            "1",
        ]);
        assert!(client.status.success(), "{}", common::output_text(&client));
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut rest);
        let o = child.wait_with_output().unwrap();
        (o, first)
    }
}

/// A command that asks before it changes anything.
/// `hlctl usage eth2` answers from hlctld's samples: a real hlctld on a
/// private bus samples eth2 (a veth: only because `[usage]` names it) for
/// two seconds and stores the minute it was filling when it stops.
fn sample_usage(ns: &NetNs, dir: &Path) {
    let conf = dir.join("usage.toml");
    std::fs::write(&conf, "[usage]\nlinks = [\"eth2:1G\"]\n").unwrap();
    let rig = common::bus::Rig::start();
    let conf = conf.display().to_string();
    let mut d = rig.daemon(
        ns,
        dir,
        &["--config", &conf, "--test-usage-interval-ms", "200"],
    );
    std::thread::sleep(Duration::from_secs(2));
    assert!(d.terminate().success(), "{}", d.log());
}

fn interactive(argv: &[String]) -> bool {
    let has = |f: &str| argv.iter().any(|w| w == f);
    argv.iter().any(|w| w == "tune") && !has("--yes") && !has("-y") && !has("--dry-run")
}

fn iperf3(ns: &NetNs, addr: &str, port: u16) -> ChildGuard {
    let child = common::die_with_test(Command::new("ip").args([
        "netns",
        "exec",
        &ns.name,
        "iperf3",
        "-s",
        "-B",
        addr,
        "-p",
        &port.to_string(),
    ]))
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .expect("iperf3 -s");
    let g = ChildGuard(child);
    let ok = (0..100).any(|_| {
        let o = ns.exec_raw(&["ss", "-Hltn", &format!("sport = :{port}")]);
        let up = !String::from_utf8_lossy(&o.stdout).trim().is_empty();
        if !up {
            std::thread::sleep(Duration::from_millis(50));
        }
        up
    });
    assert!(ok, "iperf3 -s on {addr}:{port} did not start");
    g
}

/// Numbers, runs of spaces, the lab's paths and the host's name and kernel
/// (`doctor on HOST (kernel K)`) do not count.
fn shape(line: &str, map: &[(String, String)]) -> String {
    let mut l = line.to_string();
    if let (Some(a), Some(b)) = (l.find("doctor on "), l.find("), ")) {
        l.replace_range(a + "doctor on ".len()..b + 1, "HOST");
    }
    for (doc, lab) in map {
        l = l.replace(lab.as_str(), doc);
    }
    let mut out = String::new();
    let mut last_digit = false;
    for c in l.chars() {
        let d = c.is_ascii_digit() || (last_digit && c == '.');
        if d && !last_digit {
            out.push('#');
        } else if !d {
            out.push(c);
        }
        last_digit = d;
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first line hlctl printed: stdout's, else stderr's without the
/// in-process note and the progress lines.
fn first_line(o: &Output) -> String {
    let out = String::from_utf8_lossy(&o.stdout);
    if let Some(l) = out.lines().find(|l| !l.trim().is_empty()) {
        return l.to_string();
    }
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .find(|l| !l.contains("hlctld is not reachable") && !is_progress(l))
        .unwrap_or("")
        .to_string()
}

fn is_progress(l: &str) -> bool {
    l.strip_prefix("hlctl: ").is_some_and(|r| {
        r.trim_start()
            .split(' ')
            .next()
            .is_some_and(|w| w.parse::<f64>().is_ok())
    })
}

/// Examples for a real NIC, which a veth must refuse with the driver's
/// own "not supported" (rings, pause): the part of the docs line that
/// marks it and what the refusal says.
const NEEDS_A_NIC: &[(&str, &str)] = &[
    ("ring rx 4096", "ring: not supported by driver veth"),
    ("pause rx off tx off", "pause: not supported by driver veth"),
];

/// Examples the docs show ending non-zero: a line part and the exit code.
const FAILS_IN_THE_DOCS: &[(&str, i32)] = &[
    ("link speed 1000", 1),
    ("config check", 2),
    ("--try 5 < /dev/null", 1),
];

fn check(lab: &Lab, ex: &Example) -> Result<(), String> {
    let where_ = format!("{}:{}: {}", ex.file.display(), ex.line, ex.text);
    let is_serve = ex.argv.get(1).is_some_and(|w| w == "serve");
    let (o, first) = if is_serve {
        lab.run_serve(ex)
    } else {
        let o = lab.run(ex);
        let f = first_line(&o);
        (o, f)
    };
    let text = common::output_text(&o);
    if let Some((_, says)) = NEEDS_A_NIC.iter().find(|(k, _)| ex.text.contains(k)) {
        return if text.contains(says) && o.status.code() != Some(0) {
            Ok(())
        } else {
            Err(format!(
                "{where_}: a veth should refuse it with {says:?}:\n{text}"
            ))
        };
    }
    let want = FAILS_IN_THE_DOCS
        .iter()
        .find(|(k, _)| ex.text.contains(k))
        .map_or(0, |(_, c)| *c);
    if o.status.code() != Some(want) {
        return Err(format!(
            "{where_}: exit {:?}, the docs mean {want}:\n{text}",
            o.status.code()
        ));
    }
    if let Some(doc_first) = ex.shown.iter().find(|l| !l.trim().is_empty()) {
        let map = lab.mapping();
        let (a, b) = (shape(doc_first, &map), shape(&first, &map));
        if a != b {
            return Err(format!(
                "{where_}: the docs show\n  {doc_first}\nhlctl printed\n  {first}\n{text}"
            ));
        }
    }
    extra_checks(ex, &o).map_err(|e| format!("{where_}: {e}"))
}

/// What an example's own pipeline reads from its output; a tune asked on
/// a terminal went ahead (it was answered "y").
fn extra_checks(ex: &Example, o: &Output) -> Result<(), String> {
    if interactive(&ex.argv) {
        let text = String::from_utf8_lossy(&o.stdout);
        if text.contains("Nothing changed.") || !text.contains("Go ahead? [y/N]") {
            return Err(format!("the tune did not go ahead:\n{text}"));
        }
    }
    if ex.text.contains("-J | jq") {
        let v: serde_json::Value =
            serde_json::from_slice(&o.stdout).map_err(|e| format!("not JSON: {e}"))?;
        let bps = v["end"]["sum_received"]["bits_per_second"].as_f64();
        let rtt = v["hlctl"]["rtt_ms"]["mean"].as_f64();
        if !(bps.is_some_and(|b| b > 0.0) && rtt.is_some()) {
            return Err(format!("jq's keys missing: {bps:?} {rtt:?}"));
        }
    }
    Ok(())
}

#[test]
fn every_example_in_the_docs_runs_as_the_docs_say() {
    common::require_root("network namespaces");
    let _serial = common::lab::serial();
    let lab = Lab::new();
    let all = examples();
    assert!(all.len() >= 20, "only {} examples found", all.len());
    let mut bad = Vec::new();
    for ex in &all {
        if let Err(e) = check(&lab, ex) {
            bad.push(e);
        }
    }
    // Most examples show their output, and those were compared.
    let shown = all
        .iter()
        .filter(|e| !e.shown.is_empty() && !NEEDS_A_NIC.iter().any(|(k, _)| e.text.contains(k)))
        .count();
    assert!(shown >= 10, "only {shown} examples with output to compare");
    assert!(
        Path::new(&lab.path("state")).exists(),
        "the lab's state directory went away"
    );
    assert!(
        bad.is_empty(),
        "{} of {} examples:\n\n{}",
        bad.len(),
        all.len(),
        bad.join("\n\n")
    );
}

#[test]
fn shapes_ignore_numbers_spaces_and_paths() {
    let map = vec![("/var/lib/hlctl".to_string(), "/var/tmp/x/state".to_string())];
    assert_eq!(
        shape("lab0: 7 setting(s)  changed (5 changed)", &map),
        shape("lab0: 2 setting(s) changed (13 changed)", &map)
    );
    assert_eq!(
        shape("persisted in /var/tmp/x/state/nic-settings.json", &map),
        "persisted in /var/lib/hlctl/nic-settings.json"
    );
    assert_ne!(
        shape("lab0: 2 setting(s) changed", &map),
        shape("lab0: nothing changed", &map)
    );
    assert_eq!(
        shape(
            "hlctl doctor on pve (kernel 6.8.12-4-pve), interfaces: eth2",
            &map
        ),
        shape(
            "hlctl doctor on vm (kernel 6.18.44-fc), interfaces: eth2",
            &map
        )
    );
    assert!(is_progress("hlctl:    1.0 s  30 %  reading"));
    assert!(!is_progress("hlctl: lab0: invalid settings"));
}
