//! The installable files: bus policy, polkit actions, introspection XML, the
//! activation file and the systemd unit, checked with the real tools.

mod common;

use common::run;

use std::path::Path;

fn file(p: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(p)
        .display()
        .to_string()
}

#[test]
fn xml_files_are_well_formed() {
    for f in [
        "dbus/org.hlctl.Daemon1.conf",
        "polkit/org.hlctl.Daemon1.policy",
        "dbus/org.hlctl.Daemon1.xml",
    ] {
        let out = run("xmllint", &["--noout", &file(f)]);
        assert!(
            out.status.success(),
            "{f}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // A broken file is caught (the check can fail).
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.policy");
    std::fs::write(&bad, "<policyconfig><action></policyconfig>").unwrap();
    assert!(
        !run("xmllint", &["--noout", bad.to_str().unwrap()])
            .status
            .success()
    );
}

#[test]
fn bus_policy_lets_only_root_own_the_name_and_anyone_call() {
    let conf = std::fs::read_to_string(file("dbus/org.hlctl.Daemon1.conf")).unwrap();
    let own: Vec<&str> = conf.lines().filter(|l| l.contains("own=")).collect();
    assert_eq!(own, ["    <allow own=\"org.hlctl.Daemon1\"/>"]);
    let root = conf.find("<policy user=\"root\">").unwrap();
    let default = conf.find("<policy context=\"default\">").unwrap();
    let own_at = conf.find("allow own=").unwrap();
    assert!(
        root < own_at && own_at < default,
        "own is granted in the root policy only"
    );
    assert!(conf[default..].contains("<allow send_destination=\"org.hlctl.Daemon1\"/>"));
    let svc = std::fs::read_to_string(file("dbus/org.hlctl.Daemon1.service")).unwrap();
    for line in [
        "Name=org.hlctl.Daemon1",
        "User=root",
        "SystemdService=hlctld.service",
    ] {
        assert!(svc.lines().any(|l| l == line), "{line} missing");
    }
}

#[test]
fn polkit_actions_are_the_daemons_and_need_an_admin() {
    let policy = std::fs::read_to_string(file("polkit/org.hlctl.Daemon1.policy")).unwrap();
    let ids: Vec<&str> = policy
        .split("<action id=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .collect();
    let mut want: Vec<&str> = hlctl::dbus::daemon::auth::Action::ALL
        .iter()
        .map(|a| a.id())
        .collect();
    want.sort();
    let mut got = ids.clone();
    got.sort();
    assert_eq!(got, want);
    for chunk in policy.split("<action id=\"").skip(1) {
        for who in ["allow_any", "allow_inactive", "allow_active"] {
            assert!(
                chunk.contains(&format!("<{who}>auth_admin_keep</{who}>")),
                "{}: {who} must be auth_admin_keep",
                chunk.split('"').next().unwrap_or("")
            );
        }
    }
}

#[test]
fn systemd_unit_verifies() {
    // `verify` checks that ExecStart= exists: point a copy at the built daemon.
    let unit = std::fs::read_to_string(file("systemd/hlctld.service")).unwrap();
    assert!(unit.lines().any(|l| l == "ExecStart=/usr/sbin/hlctld"));
    assert!(unit.lines().any(|l| l == "Type=notify"));
    assert!(unit.lines().any(|l| l == "BusName=org.hlctl.Daemon1"));
    assert!(
        !unit.contains("PrivateNetwork="),
        "a NIC daemon cannot use PrivateNetwork"
    );
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("hlctld.service");
    std::fs::write(
        &copy,
        unit.replace(
            "ExecStart=/usr/sbin/hlctld",
            &format!("ExecStart={}", env!("CARGO_BIN_EXE_hlctld")),
        ),
    )
    .unwrap();
    // --man=no: the pages Documentation= names come with the .deb;
    // tests/deb_package.rs verifies the installed unit with them.
    let out = run(
        "systemd-analyze",
        &["verify", "--man=no", copy.to_str().unwrap()],
    );
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A broken unit is caught.
    std::fs::write(&copy, unit.replace("Type=notify", "Type=bogus")).unwrap();
    let out = run(
        "systemd-analyze",
        &["verify", "--man=no", copy.to_str().unwrap()],
    );
    assert!(!out.stderr.is_empty(), "a bad Type= went unnoticed");
}

#[test]
fn systemd_unit_exposure_is_at_most_4() {
    let out = run(
        "systemd-analyze",
        &["security", "--offline=yes", &file("systemd/hlctld.service")],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let level: f64 = text
        .lines()
        .find_map(|l| l.split("Overall exposure level for hlctld.service:").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no exposure level in:\n{text}"));
    println!("exposure {level}");
    assert!(level <= 4.0, "exposure {level} > 4.0:\n{text}");
    assert!(level > 0.0);
}

/// Every method's comment in the published XML lists the errors it can
/// return, each one a name the daemon sends.
#[test]
fn every_method_documents_its_errors() {
    const KNOWN: &[&str] = &[
        "NotAuthorized",
        "InteractiveAuthorizationRequired",
        "NoSuchInterface",
        "NotSupported",
        "InvalidArgument",
        "Busy",
        "InvalidState",
        "LimitExceeded",
        "Failed",
    ];
    let xml = std::fs::read_to_string(file("dbus/org.hlctl.Daemon1.xml")).unwrap();
    let mut comment = String::new();
    let mut methods = 0;
    for line in xml.lines() {
        let t = line.trim();
        if t.starts_with("<!--") {
            comment.clear();
        }
        comment.push_str(t);
        comment.push('\n');
        if let Some(rest) = t.strip_prefix("<method name=\"") {
            methods += 1;
            let name = rest.split('"').next().unwrap();
            let errors = comment
                .lines()
                .find_map(|l| l.strip_prefix("Errors: "))
                .unwrap_or_else(|| panic!("{name}: no `Errors:` line in its comment"));
            for word in errors.split(", ") {
                let e = word.split([' ', '.']).next().unwrap();
                assert!(
                    KNOWN.contains(&e),
                    "{name}: unknown error {e:?} in {errors:?}"
                );
            }
        }
    }
    assert!(methods >= 16, "only {methods} methods found");
}
