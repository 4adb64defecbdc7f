//! The Debian package under test, and clean Debian 12 roots to install it in.
//!
//! [`deb`] builds the package once per test process with
//! `scripts/build-deb.sh --dev` (the dev-profile binaries `cargo test` has
//! already built, stripped: no second full build). [`DebianRoot`] is a fresh
//! `debootstrap --variant=minbase bookworm` root with dbus, polkitd and
//! systemd, extracted from a tarball cached under /var/tmp (made once with
//! debootstrap from the Debian registry, about 90 s; then about 1 s a root).
//! Commands run chrooted inside new mount, pid and network namespaces: the
//! mounts they need (/proc, /dev, a tmpfs /run) and every process they start
//! (dbus-daemon, polkitd, hlctld) vanish with the namespaces, whatever
//! happens, and nothing can touch this machine's network.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Instant;

const SUITE: &str = "bookworm";

/// How a cached Debian 12 root is made: `debootstrap --variant=minbase
/// --include=INCLUDE bookworm`, packed as a tarball in `cache_dir`.
pub struct RootRecipe {
    /// Packages besides minbase, comma-separated.
    pub include: &'static str,
    /// Where the tarball (and the roots unpacked from it) live.
    pub cache_dir: &'static str,
    /// Bump when the recipe changes.
    pub version: u32,
    /// A script run chrooted in the root, after the system image's own
    /// customisation, when a booted VM image is made of it
    /// (`tests/common/sysvm.rs`); empty for none.
    pub image_customize: &'static str,
}

/// The package tests' root: what hlctl depends on, and systemd for
/// `systemd-analyze verify` (libpam-systemd: polkitd's logind, which
/// debootstrap cannot pick from an alternative by itself).
pub const PACKAGE_ROOT: RootRecipe = RootRecipe {
    include: "dbus,polkitd,systemd,libpam-systemd",
    cache_dir: "/var/tmp/hlctl-deb-test",
    version: 1,
    image_customize: "",
};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Elapsed time since `t`, for the log (`--nocapture` shows it).
pub fn took(what: &str, t: Instant) {
    eprintln!("deb test: {what} took {:.1} s", t.elapsed().as_secs_f64());
}

/// The .deb, built once per test process.
pub fn deb() -> &'static Path {
    static DEB: OnceLock<PathBuf> = OnceLock::new();
    DEB.get_or_init(|| {
        let t = Instant::now();
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("deb");
        let _ = std::fs::remove_dir_all(&out);
        let o = Command::new("bash")
            .arg(repo().join("scripts/build-deb.sh"))
            .args(["--dev", "--out"])
            .arg(&out)
            .output()
            .expect("run scripts/build-deb.sh");
        assert!(
            o.status.success(),
            "scripts/build-deb.sh --dev failed:\n{}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        took("building the .deb (scripts/build-deb.sh --dev)", t);
        let debs: Vec<PathBuf> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "deb"))
            .collect();
        assert_eq!(debs.len(), 1, "expected one .deb in {out:?}: {debs:?}");
        debs[0].clone()
    })
}

pub use super::run;

/// Panic with the output unless `o` succeeded; return stdout as text.
pub fn ok(what: &str, o: &Output) -> String {
    assert!(
        o.status.success(),
        "{what} failed ({:?}):\n{}\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A file of the repository.
pub fn repo_file(p: &str) -> PathBuf {
    repo().join(p)
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
pub fn expected_files() -> BTreeSet<String> {
    let mut files: BTreeSet<String> = [
        "usr/bin/hlctl",
        "usr/sbin/hlctld",
        "usr/lib/systemd/system/hlctld.service",
        "usr/lib/systemd/system/hlctl-check.service",
        "usr/lib/systemd/system/hlctl-check.timer",
        "usr/lib/systemd/system/hlctl-check-boot.service",
        "usr/lib/systemd/system/hlctl-serve.socket",
        "usr/lib/systemd/system/hlctl-serve.service",
        "usr/lib/systemd/system-generators/hlctl-generator",
        "etc/hlctl/hlctl.toml",
        "usr/share/man/man5/hlctl.toml.5.gz",
        "usr/share/hlctl/hlctl-dashboard.json",
        "usr/share/hlctl/hlctl-alerts.yml",
        "usr/share/hlctl/hlctl-alerts.test.yml",
        "usr/share/dbus-1/system.d/org.hlctl.Daemon1.conf",
        "usr/share/dbus-1/system-services/org.hlctl.Daemon1.service",
        "usr/share/dbus-1/interfaces/org.hlctl.Daemon1.xml",
        "usr/share/polkit-1/actions/org.hlctl.Daemon1.policy",
        "usr/share/polkit-1/rules.d/60-hlctl.rules",
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
    // The Cockpit page (issue 27): every file of packaging/cockpit/hlctl.
    for e in std::fs::read_dir(repo().join("packaging/cockpit/hlctl")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        files.insert(format!("usr/share/cockpit/hlctl/{name}"));
    }
    // and PatternFly's CSS, bundled by scripts/bundle-patternfly.sh (issue 41).
    files.insert("usr/share/cockpit/hlctl/patternfly.css".to_string());
    let mut cli =
        <hlctl::cli::args::Cli as clap::CommandFactory>::command().disable_help_subcommand(true);
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
pub const VERBATIM: &[(&str, &str)] = &[
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
    (
        "systemd/hlctl-check.timer",
        "usr/lib/systemd/system/hlctl-check.timer",
    ),
    (
        "systemd/hlctl-serve.socket",
        "usr/lib/systemd/system/hlctl-serve.socket",
    ),
    ("packaging/hlctl.toml", "etc/hlctl/hlctl.toml"),
    (
        "packaging/cockpit/hlctl/manifest.json",
        "usr/share/cockpit/hlctl/manifest.json",
    ),
    (
        "packaging/cockpit/hlctl/index.html",
        "usr/share/cockpit/hlctl/index.html",
    ),
    (
        "packaging/fleet/hlctl-dashboard.json",
        "usr/share/hlctl/hlctl-dashboard.json",
    ),
    (
        "packaging/fleet/hlctl-alerts.yml",
        "usr/share/hlctl/hlctl-alerts.yml",
    ),
    (
        "polkit/60-hlctl.rules",
        "usr/share/polkit-1/rules.d/60-hlctl.rules",
    ),
];

/// A fresh Debian 12 root in a temporary directory under /var/tmp, removed
/// when dropped.
pub struct DebianRoot {
    dir: tempfile::TempDir,
}

impl DebianRoot {
    pub fn fresh() -> DebianRoot {
        DebianRoot::fresh_from(&PACKAGE_ROOT)
    }

    /// A fresh root made by `recipe`, unpacked under its cache directory.
    pub fn fresh_from(recipe: &RootRecipe) -> DebianRoot {
        let tarball = cached_tarball(recipe);
        let t = Instant::now();
        let dir = tempfile::Builder::new()
            .prefix("hlctl-deb-root")
            .tempdir_in(recipe.cache_dir)
            .unwrap();
        let o = run(
            "tar",
            &[
                "-C",
                dir.path().to_str().unwrap(),
                "-xf",
                tarball.to_str().unwrap(),
            ],
        );
        ok("unpacking the cached Debian root", &o);
        took("unpacking a Debian 12 root", t);
        DebianRoot { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `p` (an absolute path inside the root) on this machine.
    pub fn join(&self, p: &str) -> PathBuf {
        self.path().join(p.trim_start_matches('/'))
    }

    /// Run `script` with /bin/sh chrooted into the root, in new mount, pid
    /// and network namespaces (with /proc, /dev and a tmpfs /run mounted).
    /// Everything it starts is killed when it ends.
    pub fn sh(&self, script: &str) -> Output {
        let setup = r#"set -e
R=$1; shift
mount -t proc proc "$R/proc"
mount --rbind /dev "$R/dev"
mount -t tmpfs tmpfs "$R/run"
exec chroot "$R" /bin/sh -c "$1""#;
        Command::new("unshare")
            .args([
                "--mount",
                "--pid",
                "--fork",
                "--net",
                "--propagation",
                "private",
                "/bin/sh",
                "-c",
                setup,
                "sh",
            ])
            .arg(self.path())
            .arg(script)
            .env_clear()
            .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
            .env("LANG", "C.UTF-8")
            .env("DEBIAN_FRONTEND", "noninteractive")
            .output()
            .expect("run unshare")
    }

    /// Every path in the root (relative, with `-> target` for symlinks),
    /// except the API file systems and /tmp.
    pub fn files(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        walk(self.path(), self.path(), &mut out);
        out
    }
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        if ["proc", "sys", "dev", "run", "tmp"].contains(&rel.as_str()) {
            continue;
        }
        let meta = std::fs::symlink_metadata(&p).unwrap();
        if meta.file_type().is_symlink() {
            let to = std::fs::read_link(&p).unwrap();
            out.insert(format!("{rel} -> {}", to.display()));
        } else {
            out.insert(rel);
            if meta.is_dir() {
                walk(root, &p, out);
            }
        }
    }
}

/// The cached root tarball of `recipe`, made with debootstrap when missing
/// (under a lock, so parallel test runs make it once).
pub fn cached_tarball(recipe: &RootRecipe) -> PathBuf {
    let cache_dir = recipe.cache_dir;
    std::fs::create_dir_all(cache_dir).unwrap();
    let tarball = Path::new(cache_dir).join(format!(
        "debian12-{SUITE}-minbase-v{}-{}.tar",
        recipe.version,
        recipe.include.replace(',', "+")
    ));
    let _lock = super::cache_lock(Path::new(cache_dir).join(".lock"));
    if tarball.exists() {
        return tarball;
    }
    let t = Instant::now();
    let mirror = std::env::var("HLCTL_DEBIAN_MIRROR")
        .unwrap_or_else(|_| "http://deb.debian.org/debian".to_string());
    let build = tempfile::Builder::new()
        .prefix("debootstrap")
        .tempdir_in(cache_dir)
        .unwrap();
    let root = build.path().join("root");
    // In a private mount namespace: mounts debootstrap makes inside the root
    // go away with it even when it fails half-way.
    let o = run(
        "unshare",
        &[
            "--mount",
            "--propagation",
            "private",
            "debootstrap",
            "--variant=minbase",
            &format!("--include={}", recipe.include),
            SUITE,
            root.to_str().unwrap(),
            &mirror,
        ],
    );
    ok(&format!("debootstrap {SUITE} from {mirror}"), &o);
    // The downloaded packages are not part of a clean root.
    for e in std::fs::read_dir(root.join("var/cache/apt/archives")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "deb") {
            std::fs::remove_file(p).unwrap();
        }
    }
    let part = tarball.with_extension("tar.part");
    let o = run(
        "tar",
        &[
            "-C",
            root.to_str().unwrap(),
            "-cf",
            part.to_str().unwrap(),
            ".",
        ],
    );
    ok("packing the Debian root", &o);
    std::fs::rename(&part, &tarball).unwrap();
    took("debootstrap of the Debian 12 root (once; cached)", t);
    tarball
}
