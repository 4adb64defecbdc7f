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
    assert!(first[0].starts_with("sudo scripts/demo.sh"), "{first:?}");
    assert!(first[1].starts_with("sudo scripts/test.sh"), "{first:?}");
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
