//! The Debian package: built with cargo-deb (`scripts/build-deb.sh`), checked
//! by lintian, installed into a clean Debian 12 root (debootstrap) where it
//! works with that root's own dbus-daemon, polkitd and systemd-analyze, then
//! upgraded, removed and purged without a trace; and installed on this machine,
//! where the installed hlctld serves `hlctl show` to an unprivileged user on a
//! private system bus with the installed bus policy and polkit actions.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use clap::CommandFactory;
use common::NetNs;
use common::bus::Rig;
use common::deb::{DebianRoot, deb, ok, run, took};
use hlctl::dbus::auth::Action;

const NOBODY: (u32, u32) = (65534, 65534);

fn repo(p: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

/// The man page of every visible subcommand, from the clap definitions:
/// `hlctl-show`, `hlctl-bench-cpu`...
fn subcommand_pages(cmd: &clap::Command, prefix: &str, out: &mut Vec<String>) {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("{prefix}-{}", sub.get_name());
        out.push(name.clone());
        subcommand_pages(sub, &name, out);
    }
}

/// Every regular file the package must install, and nothing else.
fn expected_files() -> BTreeSet<String> {
    let mut files: BTreeSet<String> = [
        "usr/bin/hlctl",
        "usr/sbin/hlctld",
        "usr/lib/systemd/system/hlctld.service",
        "usr/share/dbus-1/system.d/org.hlctl.Daemon1.conf",
        "usr/share/dbus-1/system-services/org.hlctl.Daemon1.service",
        "usr/share/dbus-1/interfaces/org.hlctl.Daemon1.xml",
        "usr/share/polkit-1/actions/org.hlctl.Daemon1.policy",
        "usr/share/man/man1/hlctl.1.gz",
        "usr/share/man/man8/hlctld.8.gz",
        "usr/share/bash-completion/completions/hlctl",
        "usr/share/zsh/vendor-completions/_hlctl",
        "usr/share/fish/vendor_completions.d/hlctl.fish",
        "usr/share/doc/hlctl/copyright",
        "usr/share/doc/hlctl/changelog.Debian.gz",
        "usr/share/doc/hlctl/README.md",
        "usr/share/doc/hlctl/README.Debian",
        "usr/share/lintian/overrides/hlctl",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut cli = hlctl::cli::args::Cli::command().disable_help_subcommand(true);
    cli.build();
    let mut pages = Vec::new();
    subcommand_pages(&cli, "hlctl", &mut pages);
    assert!(pages.iter().any(|p| p == "hlctl-show"), "{pages:?}");
    for p in pages {
        files.insert(format!("usr/share/man/man1/{p}.1.gz"));
    }
    files
}

/// Files installed verbatim from the repository: (repo path, installed path).
const VERBATIM: &[(&str, &str)] = &[
    (
        "systemd/hlctld.service",
        "usr/lib/systemd/system/hlctld.service",
    ),
    (
        "dbus/org.hlctl.Daemon1.conf",
        "usr/share/dbus-1/system.d/org.hlctl.Daemon1.conf",
    ),
    (
        "dbus/org.hlctl.Daemon1.service",
        "usr/share/dbus-1/system-services/org.hlctl.Daemon1.service",
    ),
    (
        "dbus/org.hlctl.Daemon1.xml",
        "usr/share/dbus-1/interfaces/org.hlctl.Daemon1.xml",
    ),
    (
        "polkit/org.hlctl.Daemon1.policy",
        "usr/share/polkit-1/actions/org.hlctl.Daemon1.policy",
    ),
];

fn field(deb: &Path, name: &str) -> String {
    let o = run("dpkg-deb", &["-f", deb.to_str().unwrap(), name]);
    ok("dpkg-deb -f", &o).trim().to_string()
}

#[test]
fn package_fields_files_and_lintian() {
    let deb = deb();
    // Control fields.
    assert_eq!(field(deb, "Package"), "hlctl");
    assert_eq!(
        field(deb, "Version"),
        format!("{}-1", env!("CARGO_PKG_VERSION"))
    );
    let arch = ok("dpkg", &run("dpkg", &["--print-architecture"]));
    assert_eq!(field(deb, "Architecture"), arch.trim());
    assert_eq!(field(deb, "Section"), "net");
    assert_eq!(field(deb, "Priority"), "optional");
    let depends = field(deb, "Depends");
    let deps: Vec<&str> = depends.split(", ").collect();
    assert!(
        deps.iter().any(|d| d.starts_with("libc6 (>= ")),
        "{depends}"
    );
    assert!(
        deps.contains(&"default-dbus-system-bus | dbus-system-bus"),
        "{depends}"
    );
    assert!(deps.contains(&"polkitd | policykit-1"), "{depends}");
    assert_eq!(deps.len(), 3, "only what hlctl needs: {depends}");
    let description = field(deb, "Description");
    let short = description.lines().next().unwrap();
    assert!(short.len() <= 80 && short.contains("network"), "{short}");

    // Exactly the expected regular files (symlinks and directories aside).
    let list = ok(
        "dpkg-deb -c",
        &run("dpkg-deb", &["-c", deb.to_str().unwrap()]),
    );
    let files: BTreeSet<String> = list
        .lines()
        .filter(|l| l.starts_with('-'))
        .filter_map(|l| l.split_whitespace().last())
        .map(|p| p.trim_start_matches("./").to_string())
        .collect();
    assert_eq!(files, expected_files(), "the package's files:\n{list}");
    for exe in ["./usr/bin/hlctl", "./usr/sbin/hlctld"] {
        assert!(
            list.lines()
                .any(|l| l.starts_with("-rwxr-xr-x 0/0 ") && l.ends_with(exe)),
            "{exe} is not 0755 owned by root:\n{list}"
        );
    }

    // lintian: no error, no warning (the accepted ones are overridden in
    // packaging/lintian-overrides, each with its reason). Pedantic and info
    // tags are printed for the log.
    let lintian = |args: &[&str]| {
        let t = Instant::now();
        let mut v = args.to_vec();
        v.push(deb.to_str().unwrap());
        let o = run("lintian", &v);
        took("lintian", t);
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        println!("lintian {args:?}:\n{text}");
        (o, text)
    };
    let (o, text) = lintian(&["--fail-on", "error,warning", "--pedantic", "--display-info"]);
    assert!(
        o.status.success(),
        "lintian failed ({:?}):\n{text}\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with("E: ") || l.starts_with("W: ")),
        "{text}"
    );
    // Without the overrides, lintian reports exactly the overridden warnings
    // (so it did read the package, and no override hides anything else).
    let (_, text) = lintian(&["--no-override"]);
    let overridden: BTreeSet<String> = std::fs::read_to_string(repo("packaging/lintian-overrides"))
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("hlctl: "))
        .map(|t| t.split_whitespace().next().unwrap_or("").to_string())
        .collect();
    let reported: BTreeSet<String> = text
        .lines()
        .filter_map(|l| {
            l.strip_prefix("W: hlctl: ")
                .or(l.strip_prefix("E: hlctl: "))
        })
        .map(|t| t.split_whitespace().next().unwrap_or("").to_string())
        .collect();
    assert!(!overridden.is_empty());
    assert_eq!(reported, overridden, "{text}");
}

#[test]
fn installs_into_a_clean_debian_12_root_works_there_and_purges_clean() {
    let deb = deb();
    let root = DebianRoot::fresh();
    let before = root.files();
    std::fs::copy(deb, root.join("/tmp/hlctl.deb")).unwrap();

    // Install.
    let t = Instant::now();
    let o = root.sh("dpkg -i /tmp/hlctl.deb");
    ok("dpkg -i in the Debian 12 root", &o);
    took("dpkg -i in the root", t);
    for f in expected_files() {
        assert!(root.join(&f).is_file(), "{f} was not installed");
    }
    for (src, dst) in VERBATIM {
        assert_eq!(
            std::fs::read(root.join(dst)).unwrap(),
            std::fs::read(repo(src)).unwrap(),
            "{dst} differs from {src}"
        );
    }
    // Enabled (no systemd runs in a chroot: enabled, not started).
    let wants = root.join("/etc/systemd/system/multi-user.target.wants/hlctld.service");
    assert!(
        wants.symlink_metadata().is_ok(),
        "hlctld.service not enabled"
    );
    let owned = std::fs::read_to_string(root.join("/var/lib/dpkg/info/hlctl.list")).unwrap();
    assert!(owned.lines().any(|l| l == "/usr/sbin/hlctld"), "{owned}");

    // The installed programs run; systemd finds the unit by name in its own
    // search path and accepts it.
    let o = root.sh("hlctl --version && hlctld --version && hlctl --help && \
         systemd-analyze verify --man=no hlctld.service");
    let out = ok("hlctl --version/--help, systemd-analyze verify", &o);
    let version = format!("hlctl {}", env!("CARGO_PKG_VERSION"));
    assert!(out.lines().any(|l| l == version), "{out}");
    assert!(
        out.lines()
            .any(|l| l == format!("hlctld {}", env!("CARGO_PKG_VERSION"))),
        "{out}"
    );
    assert!(out.contains("Usage: hlctl [OPTIONS] <COMMAND>"), "{out}");
    assert!(
        String::from_utf8_lossy(&o.stderr).trim().is_empty(),
        "systemd-analyze verify complained:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );

    works_with_the_roots_own_bus_and_polkit(&root);

    // Upgrade (reinstall: prerm upgrade, postinst configure OLD-VERSION) keeps
    // what hlctl persisted.
    let settings = root.join("/var/lib/hlctl/nic-settings.json");
    let sysctl = root.join("/etc/sysctl.d/90-hlctl.conf");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, "{\"kept\": true}\n").unwrap();
    std::fs::write(&sysctl, "net.core.somaxconn = 4096\n").unwrap();
    let o = root.sh("dpkg -i /tmp/hlctl.deb");
    let out = ok("reinstalling (upgrade path)", &o);
    let v = format!("{}-1", env!("CARGO_PKG_VERSION"));
    assert!(
        out.contains(&format!("Unpacking hlctl ({v}) over ({v})")),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        "{\"kept\": true}\n"
    );
    assert!(sysctl.exists());

    // Remove: the programs go, the persisted settings stay.
    ok("dpkg -r", &root.sh("dpkg -r hlctl"));
    assert!(!root.join("/usr/bin/hlctl").exists());
    assert!(
        !root
            .join("/usr/share/dbus-1/system.d/org.hlctl.Daemon1.conf")
            .exists()
    );
    assert!(settings.exists() && sysctl.exists());

    // Purge: the persisted settings go too, and the user is told that live
    // settings stay until reboot.
    let o = root.sh("dpkg -P hlctl");
    ok("dpkg -P", &o);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains("stay in effect until the next reboot"),
        "{said}"
    );
    assert!(!settings.exists() && !sysctl.exists());

    // Nothing left behind.
    let after = root.files();
    let added: Vec<_> = after.difference(&before).collect();
    let lost: Vec<_> = before.difference(&after).collect();
    assert!(
        added.is_empty() && lost.is_empty(),
        "purge left {added:?}, lost {lost:?}"
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

/// Installs the .deb on this machine; purges it again when dropped (unless it
/// was installed before). Holds the system files lock exclusively meanwhile.
struct HostInstall {
    was_installed: bool,
    _lock: nix::fcntl::Flock<std::fs::File>,
}

impl HostInstall {
    fn new(deb: &Path) -> HostInstall {
        let lock = common::bus::system_files_lock(true);
        let status = run("dpkg-query", &["-W", "-f=${Status}", "hlctl"]);
        let was_installed = String::from_utf8_lossy(&status.stdout) == "install ok installed";
        let guard = HostInstall {
            was_installed,
            _lock: lock,
        };
        ok(
            "dpkg -i on this machine",
            &dpkg(&["-i", deb.to_str().unwrap()]),
        );
        guard
    }
}

/// `dpkg ARGS` on this machine, waiting (up to 2 minutes) while another
/// package operation (someone's apt-get) holds dpkg's lock.
fn dpkg(args: &[&str]) -> std::process::Output {
    let deadline = Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let o = Command::new("dpkg")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .output()
            .unwrap();
        let locked = String::from_utf8_lossy(&o.stderr).contains("lock");
        if o.status.success() || !locked || Instant::now() > deadline {
            return o;
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

impl Drop for HostInstall {
    fn drop(&mut self) {
        if !self.was_installed {
            let o = dpkg(&["--purge", "hlctl"]);
            if !o.status.success() {
                eprintln!(
                    "dpkg --purge hlctl failed: {}",
                    String::from_utf8_lossy(&o.stderr)
                );
            }
        }
    }
}

#[test]
fn installed_on_this_machine_hlctld_serves_hlctl_show_to_an_unprivileged_user() {
    assert!(common::is_root(), "needs root (CI runs as root)");
    let deb = deb();
    let t = Instant::now();
    let install = HostInstall::new(deb);
    took("dpkg -i on this machine", t);
    for f in VERBATIM.iter().map(|(_, d)| format!("/{d}")) {
        let o = run("dpkg", &["-S", &f]);
        assert!(ok("dpkg -S", &o).starts_with("hlctl: "), "{f} not owned");
    }

    // The installed unit, with the installed man pages its Documentation= names.
    let o = run(
        "systemd-analyze",
        &["verify", "/usr/lib/systemd/system/hlctld.service"],
    );
    assert!(
        o.status.success() && o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    // A private system bus and polkitd reading the installed bus policy and
    // polkit actions (nothing copied from the repository), the installed
    // hlctld serving a veth pair in a test namespace.
    let rig = Rig::with_installed_files();
    let o = Command::new("pkaction")
        .args(["--action-id", "org.hlctl.Daemon1.apply-settings"])
        .env("DBUS_SYSTEM_BUS_ADDRESS", &rig.address)
        .output()
        .unwrap();
    ok("pkaction for the installed action", &o);
    let ns = NetNs::new();
    let (a, b) = (common::unique("pa"), common::unique("pb"));
    ns.veth(&a, &b);
    let state = tempfile::tempdir().unwrap();
    let daemon = rig.daemon_exe("/usr/sbin/hlctld", &ns, state.path(), &[]);

    let (uid, gid) = NOBODY;
    let o = rig.hlctl_exe_as("/usr/bin/hlctl", uid, gid, &["show", &a]);
    let out = ok(&format!("hlctl show as nobody\n{}", daemon.log()), &o);
    assert!(out.starts_with(&format!("{a}: ifindex ")), "{out}");
    assert!(out.contains("driver veth"), "{out}");
    println!("{out}");

    let json = |args: &[&str]| -> serde_json::Value {
        let o = rig.hlctl_exe_as("/usr/bin/hlctl", uid, gid, args);
        serde_json::from_str(&ok("hlctl --json show as nobody", &o)).unwrap()
    };
    let v = json(&["--json", "show", &a]);
    assert_eq!(v["interfaces"][0]["name"], a.as_str());
    assert_eq!(v["interfaces"][0]["mtu"], 1500);

    // A change by the same user is refused by polkit: nothing changed.
    let o = rig.hlctl_exe_as("/usr/bin/hlctl", uid, gid, &["set", &a, "mtu", "1400"]);
    assert_eq!(o.status.code(), Some(3), "{o:?}");
    let v = json(&["--json", "show", &a]);
    assert_eq!(v["interfaces"][0]["mtu"], 1500);

    drop(daemon);
    drop(rig);
    let was_installed = install.was_installed;
    drop(install);
    if !was_installed {
        let status = run("dpkg-query", &["-W", "-f=${Status}", "hlctl"]);
        let now = String::from_utf8_lossy(&status.stdout).into_owned();
        assert!(
            now.is_empty() || now.contains("not-installed"),
            "hlctl still on this machine after the test: {now:?}"
        );
        assert!(!Path::new("/usr/sbin/hlctld").exists());
    }
}
