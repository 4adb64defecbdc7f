//! The docs cannot go stale on the command line (issue 30): every `hlctl …`
//! line in a code block of README.md and docs/*.md parses with the real
//! argument definitions (a flag that was renamed or never existed fails
//! here), and the README's first two commands are the scripts that exist.

use clap::Parser;

mod common;

use common::docs::{commands, doc_files, words};

#[test]
fn every_hlctl_line_in_the_docs_parses() {
    let mut bad = Vec::new();
    let mut seen = 0;
    for f in doc_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        for (line, argv) in commands(&text) {
            seen += 1;
            if let Err(e) = hlctl::cli::args::Cli::try_parse_from(&argv) {
                if matches!(
                    e.kind(),
                    clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
                ) {
                    continue;
                }
                let first = e.to_string().lines().next().unwrap_or_default().to_string();
                bad.push(format!(
                    "{}:{line}: {}: {first}",
                    f.display(),
                    argv.join(" ")
                ));
            }
        }
    }
    assert!(
        seen >= 20,
        "only {seen} hlctl lines found: is the extractor broken?"
    );
    assert!(bad.is_empty(), "stale examples:\n{}", bad.join("\n"));
}

#[test]
fn the_extractor_catches_a_flag_that_does_not_exist() {
    let text = "```sh\n$ sudo hlctl doctor --peer nas --no-such-flag | tee x  # why\n```\n";
    let c = commands(text);
    assert_eq!(c.len(), 1);
    assert_eq!(
        c[0].1,
        ["hlctl", "doctor", "--peer", "nas", "--no-such-flag"]
    );
    assert!(hlctl::cli::args::Cli::try_parse_from(&c[0].1).is_err());
    let quoted = words("hlctl sysctl net.ipv4.tcp_rmem='4096 131072 16777216' --persist");
    assert_eq!(quoted[2], "net.ipv4.tcp_rmem=4096 131072 16777216");
}

#[test]
fn the_readme_starts_with_the_demo_and_the_tests() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let first: Vec<&str> = readme
        .lines()
        .skip_while(|l| !l.starts_with("```"))
        .skip(1)
        .take(2)
        .collect();
    assert!(first[0].starts_with("scripts/demo.sh"), "{first:?}");
    assert!(first[1].starts_with("scripts/test.sh"), "{first:?}");
    for script in ["scripts/demo.sh", "scripts/test.sh"] {
        assert!(root.join(script).exists(), "{script}");
    }
    let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap();
    assert!(
        ci.contains("scripts/test.sh"),
        "CI runs the README's test command"
    );
    assert!(readme.lines().count() <= 200, "README over 200 lines");
}

/// The README's first two lines, as the shell would run them (up to the
/// comment).
fn first_two_lines() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    readme
        .lines()
        .skip_while(|l| !l.starts_with("```"))
        .skip(1)
        .take(2)
        .map(|l| l.split('#').next().unwrap().trim().to_string())
        .collect()
}

fn root() -> &'static std::path::Path {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A directory of symlinks to the few programs the scripts' first lines
/// use, and no `sudo`: the PATH of a Proxmox VE host's root shell; `extra`
/// adds scripts of the test's own.
fn path_without_sudo(extra: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for tool in ["bash", "sh", "id", "dirname", "realpath", "env"] {
        let found = ["/usr/bin", "/bin"]
            .iter()
            .map(|d| std::path::Path::new(d).join(tool))
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("{tool} not in /usr/bin or /bin"));
        std::os::unix::fs::symlink(found, dir.path().join(tool)).unwrap();
    }
    for (name, body) in extra {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    dir
}

/// `line` run by bash in the checkout with only `path` as PATH, as root or
/// as nobody, with `HLCTL_ROOT_CHECK_ONLY=1` so that a script stops once it
/// runs as root (scripts/as-root.sh).
fn run_line(line: &str, path: &std::path::Path, as_nobody: bool) -> std::process::Output {
    let mut cmd = if as_nobody {
        let mut c = std::process::Command::new("/usr/bin/setpriv");
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "/bin/bash",
            "-c",
            line,
        ]);
        c
    } else {
        let mut c = std::process::Command::new("/bin/bash");
        c.args(["-c", line]);
        c
    };
    cmd.current_dir(root())
        .env_clear()
        .env("PATH", path)
        .env("HLCTL_ROOT_CHECK_ONLY", "1")
        .output()
        .unwrap()
}

/// Issue 38: on a Proxmox VE host one works as root and sudo is not
/// installed, so a first line that starts with `sudo` fails with "sudo:
/// command not found". As root with no sudo on PATH each line must reach its
/// script as root; as a user (nobody) it must hand the script to sudo (a
/// stub sudo here, that only prints what it was asked to run).
#[test]
fn the_first_two_lines_run_as_root_without_sudo_and_through_sudo_otherwise() {
    common::require_root("runs the README's first lines as root and as nobody");
    let lines = first_two_lines();
    assert_eq!(lines.len(), 2, "{lines:?}");
    let plain = path_without_sudo(&[]);
    let stub = path_without_sudo(&[("sudo", "#!/bin/sh\necho \"stub sudo: $*\"\n")]);
    for line in &lines {
        let o = run_line(line, plain.path(), false);
        let (out, err) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        assert!(
            o.status.success(),
            "{line:?} as root without sudo: {out}{err}"
        );
        assert!(out.contains(": as root"), "{line:?}: {out}{err}");
        let script = line.split_whitespace().next().unwrap();
        let o = run_line(line, stub.path(), true);
        let out = String::from_utf8_lossy(&o.stdout);
        let want = format!("stub sudo: -- {}", root().join(script).display());
        assert!(
            out.contains(&want),
            "{line:?} as nobody: {out}{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
