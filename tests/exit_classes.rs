//! One error → exit rule (`hlctl::class`): every verb × every error class it
//! can produce here, run both ways — in process (`--local`, inside the
//! lab's namespace) and through hlctld on a private bus with the real
//! polkitd serving that namespace — with the same exit code and the same
//! first line of the message. Real veths, a real refusal of the veth driver,
//! a real refused connection; nothing faked. `--nocapture` prints the table
//! (verb × class → exit code, in process / through hlctld).

mod common;

use std::process::{Command, Output};

use common::bus::{DaemonLab, HLCTL, TempUser};

/// The first line hlctl printed on stderr, without the notes that say
/// where it runs (else, for a change that ran and failed, stdout's).
fn first_line(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr);
    let out = String::from_utf8_lossy(&o.stdout);
    err.lines()
        .find(|l| !l.contains("not reachable") && !l.contains("warning") && !progress(l))
        .or_else(|| out.lines().next())
        .unwrap_or_default()
        .to_string()
}

/// A progress line (`hlctl:    0.0 s   0 %  failed`), not the message.
fn progress(l: &str) -> bool {
    l.strip_prefix("hlctl:").is_some_and(|r| {
        r.trim_start().starts_with(|c: char| c.is_ascii_digit()) && r.contains(" % ")
    })
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// One row: how to produce the class in process and through hlctld.
struct Case {
    verb: &'static str,
    class: &'static str,
    code: i32,
    args: Vec<String>,
    /// The same first line both ways (false only where the two paths are
    /// refused by different parties: polkit vs the kernel or `--local`).
    same_text: bool,
}

fn case(verb: &'static str, class: &'static str, code: i32, args: &[&str]) -> Case {
    Case {
        verb,
        class,
        code,
        args: args.iter().map(|s| s.to_string()).collect(),
        same_text: true,
    }
}

/// In process, inside the lab's namespace, as root (or `user`).
fn in_process(lab: &DaemonLab, user: Option<&TempUser>, args: &[String]) -> Output {
    let state = lab.state.path().join("local-state");
    let mut c = Command::new("ip");
    c.args(["netns", "exec", &lab.ns.name]);
    if let Some(u) = user {
        c.arg("setpriv")
            .arg(format!("--reuid={}", u.uid))
            .arg(format!("--regid={}", u.gid))
            .arg("--clear-groups");
    }
    c.arg(HLCTL).arg("--local");
    if user.is_none() {
        c.arg("--state-dir").arg(&state);
    }
    c.args(args).env("HOME", "/").output().unwrap()
}

fn through_hlctld(lab: &DaemonLab, user: Option<&TempUser>, args: &[String]) -> Output {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    match user {
        Some(u) => lab.rig.hlctl_as(u.uid, u.gid, &a),
        None => lab.rig.hlctl(&a),
    }
}

fn cases(a: &str) -> Vec<Case> {
    let peer = "127.0.0.1:1";
    vec![
        case("show", "no such interface", 2, &["show", "nosuch0"]),
        case(
            "set",
            "no such interface",
            2,
            &["set", "nosuch0", "mtu", "1400"],
        ),
        case("set", "invalid input", 2, &["set", a, "mtu", "70000"]),
        case(
            "set",
            "driver refusing",
            1,
            &["set", a, "link", "speed", "1000"],
        ),
        case(
            "sysctl",
            "invalid input",
            2,
            &["sysctl", "net.core.rmem_max=lots"],
        ),
        case(
            "doctor",
            "no such interface",
            2,
            &["doctor", "-i", "nosuch0", "--stress", "0"],
        ),
        case(
            "tune",
            "no such interface",
            2,
            &["tune", "nosuch0", "--peer", "127.0.0.1:1", "--yes"],
        ),
        case(
            "tune",
            "invalid input",
            2,
            &["tune", a, "--peer", "no host:1", "--yes"],
        ),
        case(
            "bench net",
            "failed measurement",
            1,
            &[
                "bench",
                "net",
                "-c",
                "127.0.0.1",
                "--port",
                "1",
                "--time",
                "1",
            ],
        ),
        case(
            "check",
            "failed measurement",
            1,
            &[
                "check",
                "--peer",
                peer,
                "--no-cpu",
                "--busy-window",
                "0",
                "--time",
                "1",
            ],
        ),
        case(
            "check",
            "invalid input",
            2,
            &["check", "--peer", "no host:1"],
        ),
        case(
            "report",
            "invalid input",
            2,
            &["report", "--peer", "no host:1"],
        ),
    ]
}

/// `args` as an unprivileged user towards a bus that does not answer.
fn hlctld_gone(user: &TempUser, args: &[&str]) -> Output {
    Command::new("setpriv")
        .arg(format!("--reuid={}", user.uid))
        .arg(format!("--regid={}", user.gid))
        .arg("--clear-groups")
        .arg(HLCTL)
        .args(["--bus", "unix:path=/nonexistent/hlctl-bus"])
        .args(args)
        .env_remove("HLCTL_LOCAL")
        .env("HOME", "/")
        .output()
        .unwrap()
}

#[test]
fn every_verb_exits_the_same_in_process_and_through_hlctld() {
    let lab = DaemonLab::new(&[]);
    let user = TempUser::new();
    let mut table = vec![format!(
        "{:<10} {:<20} {:>10} {:>14}",
        "verb", "class", "in process", "through hlctld"
    )];
    let mut wrong = Vec::new();
    let mut all = cases(&lab.a);
    // Not permitted: an unprivileged user changing a link (hlctld: polkit
    // says no; in process: --local needs root). Different parties refuse,
    // so the words differ; the code does not.
    for (verb, args) in [
        ("set", vec!["set", lab.a.as_str(), "mtu", "1400"]),
        (
            "tune",
            vec!["tune", lab.a.as_str(), "--peer", "127.0.0.1:1", "--yes"],
        ),
        (
            "sysctl",
            vec!["sysctl", "net.ipv4.tcp_rmem=4096 131072 6291456"],
        ),
    ] {
        let mut np = case(verb, "not permitted", 3, &args);
        np.same_text = false;
        all.push(np);
    }
    for c in &all {
        let as_user = (c.class == "not permitted").then_some(&user);
        let local = in_process(&lab, as_user, &c.args);
        let bus = through_hlctld(&lab, as_user, &c.args);
        let (l, b) = (local.status.code(), bus.status.code());
        table.push(format!(
            "{:<10} {:<20} {:>10} {:>14}",
            c.verb,
            c.class,
            l.unwrap_or(-1),
            b.unwrap_or(-1)
        ));
        if l != Some(c.code) || b != Some(c.code) {
            wrong.push(format!(
                "{} {}: want {}\nin process: {}\nthrough hlctld: {}",
                c.verb,
                c.class,
                c.code,
                text(&local),
                text(&bus)
            ));
        } else if c.same_text && first_line(&local) != first_line(&bus) {
            wrong.push(format!(
                "{} {}: first lines differ:\n  in process:     {}\n  through hlctld: {}",
                c.verb,
                c.class,
                first_line(&local),
                first_line(&bus)
            ));
        }
    }
    // hlctld gone: the bus named does not answer; only the path through
    // hlctld has it (in process there is no hlctld to lose). Every verb that
    // changes something or runs a job needs hlctld for an unprivileged user.
    for args in [
        vec!["set", lab.a.as_str(), "mtu", "1400"],
        vec!["sysctl", "net.ipv4.tcp_rmem=4096 131072 6291456"],
        vec!["tune", lab.a.as_str(), "--peer", "127.0.0.1:1", "--yes"],
        vec!["doctor", "--stress", "0"],
        vec![
            "bench",
            "net",
            "-c",
            "127.0.0.1",
            "--port",
            "1",
            "--time",
            "1",
        ],
        vec!["check", "--peer", "127.0.0.1:1", "--no-cpu"],
        vec!["report", "--peer", "127.0.0.1:1"],
    ] {
        let gone = hlctld_gone(&user, &args);
        let verb = if args[0] == "bench" {
            "bench net"
        } else {
            args[0]
        };
        if gone.status.code() != Some(4) {
            wrong.push(format!("{verb}, hlctld gone: want 4\n{}", text(&gone)));
        }
        table.push(format!(
            "{:<10} {:<20} {:>10} {:>14}",
            verb,
            "hlctld gone",
            "-",
            gone.status.code().unwrap_or(-1)
        ));
    }
    println!("{}", table.join("\n"));
    assert!(
        wrong.is_empty(),
        "{}\ndaemon log:\n{}",
        wrong.join("\n\n"),
        lab.log()
    );
}
