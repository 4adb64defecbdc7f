//! A test that cannot run fails or is `#[ignore = "reason"]`d, never passes
//! silently (issue 38): tests that returned early when not root passed with
//! a line on stderr nobody reads. The suite runs as root (scripts/test.sh
//! runs itself through sudo, CI is root), so such a test now fails with
//! `common::require_root`'s "did not run: ... needs root", and cargo's
//! summary counts every one ("N failed"). This reads every `tests/**/*.rs`
//! file and fails on a test that returns early after a root check or on a
//! helper that decides to skip.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The lines of `text` where a silent skip starts: a `skip_unless_root`
/// (definition or call), or a root check (`is_root()`) whose next three
/// lines return instead of failing.
fn silent_skips(text: &str) -> Vec<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let needle = ["skip", "_unless_root"].concat();
    (0..lines.len())
        .filter(|&i| {
            let l = lines[i];
            if l.contains(&needle) {
                return true;
            }
            l.contains("is_root()")
                && !l.contains("assert")
                && lines[i..lines.len().min(i + 4)]
                    .iter()
                    .any(|n| n.trim_start().starts_with("return;") || n.contains("{ return; }"))
        })
        .map(|i| i + 1)
        .collect()
}

#[test]
fn no_test_passes_when_it_could_not_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("tests"), &mut files);
    assert!(files.len() > 20, "only {} test files found", files.len());
    let me = Path::new(file!()).file_name().unwrap();
    let mut bad = Vec::new();
    for f in files.iter().filter(|f| f.file_name() != Some(me)) {
        let text = std::fs::read_to_string(f).unwrap();
        for line in silent_skips(&text) {
            bad.push(format!(
                "{}:{line}",
                f.strip_prefix(root).unwrap().display()
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "tests that pass silently when they cannot run (use common::require_root, or #[ignore = \"why\"]):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_scan_finds_a_skip_and_leaves_a_failure_alone() {
    let skip = "fn t() {\n    if !common::is_root() {\n        eprintln!(\"skipped\");\n        return;\n    }\n}\n";
    assert_eq!(silent_skips(skip), [2]);
    let fail = "fn t() {\n    if !common::is_root() {\n        panic!(\"needs root\");\n    }\n}\n";
    assert!(silent_skips(fail).is_empty());
    let call = format!(
        "    if common::{}(\"x\") {{",
        ["skip", "_unless_root"].concat()
    );
    assert_eq!(silent_skips(&call), [1]);
}
