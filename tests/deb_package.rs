//! The Debian package: built with cargo-deb (`scripts/build-deb.sh`), its
//! fields and files, lintian; and installed on this machine, where the
//! installed hlctld serves `hlctl show` to an unprivileged user on a private
//! system bus with the installed bus policy and polkit actions. The clean
//! Debian 12 root is `tests/deb_root.rs`.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use common::NetNs;
use common::bus::Rig;
use common::deb::{VERBATIM, deb, expected_files, ok, repo_file, run, took};

const NOBODY: (u32, u32) = (65534, 65534);

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
    // groupadd/groupdel for the `hlctl` group (postinst, postrm).
    assert!(deps.contains(&"passwd"), "{depends}");
    assert_eq!(deps.len(), 4, "only what hlctl needs: {depends}");
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
    let overridden: BTreeSet<String> =
        std::fs::read_to_string(repo_file("packaging/lintian-overrides"))
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
    common::require_root("this test");
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
