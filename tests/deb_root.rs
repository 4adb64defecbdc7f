//! The .deb in a clean Debian 12 root (debootstrap minbase + dbus, polkitd,
//! systemd): every file lands where dbus, polkit and systemd look, and they
//! find it (the root's own dbus-daemon activates the installed hlctld, its
//! polkitd knows our actions, its systemd-analyze verifies the unit by name);
//! the maintainer scripts start, restart and stop hlctld only where systemd
//! runs; upgrade and remove keep the persisted settings; purge removes them and
//! leaves nothing behind.

mod common;

use std::time::Instant;

use common::deb::{DebianRoot, VERBATIM, deb, expected_files, ok, repo_file, took};
use hlctl::dbus::daemon::auth::Action;

/// Stand-ins put into the root's /usr/local/sbin for the maintainer scripts:
/// `systemctl` and `deb-systemd-invoke` only log their arguments to
/// /tmp/calls (no systemd runs in a chroot), except `systemctl --root=...`,
/// which works on files only (deb-systemd-helper's presets) and runs for real;
/// `dbus-send` logs, then runs the real one.
const FAKES: &[(&str, &str)] = &[
    (
        "systemctl",
        "case \"$*\" in *--root=*) exec /usr/bin/systemctl \"$@\" ;; esac\n\
         echo \"systemctl $*\" >>/tmp/calls\n",
    ),
    (
        "deb-systemd-invoke",
        "echo \"deb-systemd-invoke $*\" >>/tmp/calls\n",
    ),
    (
        "dbus-send",
        "echo \"dbus-send $*\" >>/tmp/calls\nexec /usr/bin/dbus-send \"$@\"\n",
    ),
];

/// Run `script` in the root with the stand-ins first in PATH; with `systemd`,
/// as if systemd ran (`/run/systemd/system` exists) and with the root's own
/// system bus running. Returns (output, the stand-ins' calls).
fn with_fakes(root: &DebianRoot, systemd: bool, script: &str) -> (String, Vec<String>) {
    let calls = root.join("/tmp/calls");
    let _ = std::fs::remove_file(&calls);
    let setup = if systemd {
        "mkdir -p /run/systemd/system /run/dbus && dbus-daemon --system --fork && "
    } else {
        ""
    };
    let o = root.sh(&format!(
        "{setup}PATH=/usr/local/sbin:$PATH; export PATH; {script}"
    ));
    let out = ok(script, &o) + &String::from_utf8_lossy(&o.stderr);
    let calls = std::fs::read_to_string(&calls).unwrap_or_default();
    println!("{script} (systemd: {systemd}) called:\n{calls}");
    (out, calls.lines().map(str::to_string).collect())
}

const RELOAD: &str = "dbus-send --system --type=method_call --dest=org.freedesktop.DBus / org.freedesktop.DBus.ReloadConfig";

/// Position of `call` in `calls`, or panic.
fn at(calls: &[String], call: &str) -> usize {
    calls
        .iter()
        .position(|c| c == call)
        .unwrap_or_else(|| panic!("no `{call}` in {calls:#?}"))
}

#[test]
fn installs_into_a_clean_debian_12_root_works_there_and_purges_clean() {
    let deb = deb();
    let root = DebianRoot::fresh();
    let before = root.files();
    std::fs::copy(deb, root.join("/tmp/hlctl.deb")).unwrap();
    for (name, body) in FAKES {
        let p = root.join(&format!("/usr/local/sbin/{name}"));
        std::fs::write(&p, format!("#!/bin/sh\n{body}")).unwrap();
        std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }

    // Install where no systemd runs (a chroot): enabled, nothing started,
    // nothing reloaded.
    let t = Instant::now();
    let (_, calls) = with_fakes(&root, false, "dpkg -i /tmp/hlctl.deb");
    took("dpkg -i in the root", t);
    assert!(calls.is_empty(), "without systemd: {calls:#?}");
    for f in expected_files() {
        assert!(root.join(&f).is_file(), "{f} was not installed");
    }
    for (src, dst) in VERBATIM {
        assert_eq!(
            std::fs::read(root.join(dst)).unwrap(),
            std::fs::read(repo_file(src)).unwrap(),
            "{dst} differs from {src}"
        );
    }
    assert!(
        root.sh("getent group hlctl").status.success(),
        "the package made no group hlctl"
    );
    let wants = root.join("/etc/systemd/system/multi-user.target.wants/hlctld.service");
    assert!(
        wants.symlink_metadata().is_ok(),
        "hlctld.service not enabled"
    );

    programs_run_and_systemd_accepts_the_unit(&root);
    works_with_the_roots_own_bus_and_polkit(&root);

    // Upgrade (reinstall: prerm upgrade, postinst configure OLD-VERSION) where
    // systemd runs: the bus reloads its configuration, then hlctld restarts;
    // what hlctl persisted stays.
    let settings = root.join("/var/lib/hlctl/nic-settings.json");
    let sysctl = root.join("/etc/sysctl.d/90-hlctl.conf");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, "{\"kept\": true}\n").unwrap();
    std::fs::write(&sysctl, "net.core.somaxconn = 4096\n").unwrap();
    let (out, calls) = with_fakes(&root, true, "dpkg -i /tmp/hlctl.deb");
    let v = format!("{}-1", env!("CARGO_PKG_VERSION"));
    assert!(
        out.contains(&format!("Unpacking hlctl ({v}) over ({v})")),
        "{out}"
    );
    assert!(at(&calls, RELOAD) < at(&calls, "deb-systemd-invoke restart hlctld.service"));
    assert!(!calls.iter().any(|c| c.contains(" stop ")), "{calls:#?}");
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        "{\"kept\": true}\n"
    );
    assert!(sysctl.exists());

    // Remove: hlctld stops, the programs go, the persisted settings stay.
    let (_, calls) = with_fakes(&root, true, "dpkg -r hlctl");
    at(&calls, "deb-systemd-invoke stop hlctld.service");
    at(&calls, RELOAD);
    assert!(!root.join("/usr/bin/hlctl").exists());
    assert!(
        !root
            .join("/usr/share/dbus-1/system.d/org.hlctl.Daemon1.conf")
            .exists()
    );
    assert!(settings.exists() && sysctl.exists());

    // Purge: the persisted settings go too, and the user is told that live
    // settings stay until reboot.
    let (said, _) = with_fakes(&root, true, "dpkg -P hlctl");
    assert!(
        said.contains("stay in effect until the next reboot"),
        "{said}"
    );
    assert!(!settings.exists() && !sysctl.exists());
    // Nobody is in the group hlctl: it goes too (tests/vm_systemd.rs shows
    // it kept while it has a member).
    assert!(said.contains("removed the empty group hlctl"), "{said}");
    assert!(!root.sh("getent group hlctl").status.success());

    // A first installation where systemd runs starts hlctld after the bus
    // has read our policy.
    let (_, calls) = with_fakes(&root, true, "dpkg -i /tmp/hlctl.deb");
    assert!(at(&calls, RELOAD) < at(&calls, "deb-systemd-invoke start hlctld.service"));
    let (_, calls) = with_fakes(&root, false, "dpkg -P hlctl");
    assert!(calls.is_empty(), "without systemd: {calls:#?}");

    // Nothing left behind.
    for (name, _) in FAKES {
        std::fs::remove_file(root.join(&format!("/usr/local/sbin/{name}"))).unwrap();
    }
    let after = root.files();
    let added: Vec<_> = after.difference(&before).collect();
    let lost: Vec<_> = before.difference(&after).collect();
    assert!(
        added.is_empty() && lost.is_empty(),
        "purge left {added:?}, lost {lost:?}"
    );
}

/// The installed programs run; the bash completion loads; systemd finds the
/// unit by name in its own search path and accepts it.
fn programs_run_and_systemd_accepts_the_unit(root: &DebianRoot) {
    let o = root.sh("hlctl --version && hlctld --version && hlctl --help && \
         bash -c '. /usr/share/bash-completion/completions/hlctl && complete -p hlctl' && \
         systemd-analyze verify --man=no hlctld.service");
    let out = ok("hlctl --version/--help, systemd-analyze verify", &o);
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        out.lines().any(|l| l == format!("hlctl {version}")),
        "{out}"
    );
    assert!(
        out.lines().any(|l| l == format!("hlctld {version}")),
        "{out}"
    );
    assert!(out.contains("Usage: hlctl [OPTIONS] <COMMAND>"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("complete ") && l.ends_with(" -F _hlctl hlctl")),
        "the bash completion does not load: {out}"
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).trim().is_empty(),
        "systemd-analyze verify complained:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// In the root: its own dbus-daemon finds the activation file, its polkitd
/// the actions; `nobody` runs `hlctl show`, which starts the installed hlctld
/// through D-Bus activation (the launch helper: no systemd here), and is
/// refused a change by polkit. All inside an empty network namespace.
fn works_with_the_roots_own_bus_and_polkit(root: &DebianRoot) {
    let actions: Vec<&str> = Action::ALL.iter().map(|a| a.id()).collect();
    let script = format!(
        r#"
mkdir -p /run/dbus
dbus-daemon --system --fork || echo "@@dbus=failed"
/usr/lib/polkit-1/polkitd --no-debug >/dev/null 2>&1 &
has() {{ dbus-send --system --print-reply --dest=org.freedesktop.DBus / \
          org.freedesktop.DBus.NameHasOwner "string:$1" 2>/dev/null | grep -q true; }}
i=0; until has org.freedesktop.PolicyKit1; do
    i=$((i+1)); [ $i -lt 200 ] || {{ echo "@@polkit=timeout"; exit 1; }}; sleep 0.1
done
echo "@@activatable"
dbus-send --system --print-reply --dest=org.freedesktop.DBus / \
    org.freedesktop.DBus.ListActivatableNames
for a in {actions}; do pkaction --action-id "$a" >/dev/null; echo "@@pkaction $a=$?"; done
has org.hlctl.Daemon1 && echo "@@daemon-before=yes"
nobody() {{ setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }}
nobody hlctl show lo; echo "@@show=$?"
has org.hlctl.Daemon1 && echo "@@daemon-after=yes"
nobody hlctl --json show lo >/tmp/show.json; echo "@@json=$?"
nobody hlctl set lo mtu 1400; echo "@@set=$?"
nobody hlctl --json show lo >/tmp/show-after.json
"#,
        actions = actions.join(" ")
    );
    let t = Instant::now();
    let o = root.sh(&script);
    took("bus, polkit and activation in the root", t);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let ctx = format!("stdout:\n{out}\nstderr:\n{err}");
    let has = |l: &str| out.lines().any(|x| x == l);
    assert!(
        out.contains("string \"org.hlctl.Daemon1\""),
        "the bus did not find the activation file: {ctx}"
    );
    for a in &actions {
        assert!(has(&format!("@@pkaction {a}=0")), "polkit lacks {a}: {ctx}");
    }
    assert!(!has("@@daemon-before=yes"), "{ctx}");
    assert!(has("@@show=0"), "{ctx}");
    assert!(out.contains("lo: ifindex 1"), "{ctx}");
    assert!(
        has("@@daemon-after=yes"),
        "hlctld was not started by activation: {ctx}"
    );
    assert!(has("@@json=0"), "{ctx}");
    assert!(has("@@set=3"), "nobody's change was not refused: {ctx}");
    assert!(err.contains("not authorized"), "{ctx}");
    let mtu = |f: &str| -> serde_json::Value {
        let text = std::fs::read_to_string(root.join(f)).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["interfaces"][0]["mtu"].clone()
    };
    assert_eq!(mtu("/tmp/show.json"), 65536);
    assert_eq!(mtu("/tmp/show-after.json"), 65536);
}
