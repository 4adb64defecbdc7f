//! scripts/test_timing.sh, which runs the suite for scripts/test.sh: its
//! lanes and its closing summary, the last thing CI sees. The summary runs
//! under test.sh's `set -euo pipefail`, and its exit code is the suite's: a
//! CI run where every binary passed once exited 1 there (a `grep -l` that
//! found no failing binary ended the script before the "suite:" line). These
//! tests feed it fabricated results and fabricated binaries (small shell
//! scripts that print what a test binary would: no test binary runs here).

use std::path::Path;
use std::process::Command;

/// Write one fabricated result: NAME.log with `result` as its harness line
/// (none when empty), NAME.log.rc with `rc`.
fn result(dir: &Path, name: &str, result: &str, rc: i32) {
    std::fs::write(
        dir.join(format!("{name}.log")),
        format!("running\n{result}\n"),
    )
    .unwrap();
    std::fs::write(dir.join(format!("{name}.log.rc")), format!("{rc}\n")).unwrap();
}

/// Source the script as test.sh does, with `dir` as its results, and run
/// `call`: (exit code, stdout).
fn sourced(dir: &Path, call: &str) -> (i32, String) {
    let script = format!(
        "set -euo pipefail; cd {root}; RESULTS_DIR={dir} TIMES_FILE={dir}/times; \
         . scripts/test_timing.sh; {call}",
        root = env!("CARGO_MANIFEST_DIR"),
        dir = dir.display()
    );
    let o = Command::new("bash").args(["-c", &script]).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    eprintln!("{out}{}", String::from_utf8_lossy(&o.stderr));
    (o.status.code().unwrap_or(-1), out)
}

fn summary(dir: &Path) -> (i32, String) {
    sourced(dir, "print_summary")
}

#[test]
fn fabricated_all_passing_results_exit_0_with_the_suite_line() {
    let dir = tempfile::tempdir().unwrap();
    result(
        dir.path(),
        "a",
        "test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured",
        0,
    );
    result(
        dir.path(),
        "b",
        "test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured",
        0,
    );
    let (rc, out) = summary(dir.path());
    assert_eq!(rc, 0, "{out}");
    assert!(
        out.contains("suite: 5 passed, 0 failed, 1 skipped"),
        "{out}"
    );
    assert!(!out.contains("failing test binaries"), "{out}");
}

#[test]
fn fabricated_failures_exit_1_and_are_named() {
    let dir = tempfile::tempdir().unwrap();
    result(
        dir.path(),
        "good",
        "test result: ok. 4 passed; 0 failed; 0 ignored; 0 measured",
        0,
    );
    result(
        dir.path(),
        "bad",
        "test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured",
        101,
    );
    // A binary that died before its harness printed a result (a signal, a
    // panic outside a test): one failure.
    result(dir.path(), "killed", "", 137);
    let (rc, out) = summary(dir.path());
    assert_eq!(rc, 1, "{out}");
    assert!(
        out.contains("suite: 5 passed, 3 failed, 0 skipped"),
        "{out}"
    );
    assert!(out.contains("failing test binaries: bad killed"), "{out}");
    assert!(
        out.contains("ended without a test result (counted as one failure each): killed"),
        "{out}"
    );
}

/// A fabricated test binary: marks its start and end in `marks`, sleeps
/// `secs`, prints a harness result line.
fn binary(dir: &Path, name: &str, secs: u32) -> std::path::PathBuf {
    let p = dir.join(format!("bin-{name}"));
    let marks = dir.join("marks");
    std::fs::write(
        &p,
        format!(
            "#!/bin/sh\necho start {name} >>{m}\nsleep {secs}\necho end {name} >>{m}\n\
             echo 'test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured'\n",
            m = marks.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    p
}

#[test]
fn two_lanes_take_fabricated_binaries_from_one_queue_longest_first() {
    let dir = tempfile::tempdir().unwrap();
    // The queue as run_test_binaries writes it: budget, label, executable,
    // longest budget first.
    let queue: String = [
        ("long", 300, 4),
        ("mid", 200, 2),
        ("short1", 20, 1),
        ("short2", 20, 1),
    ]
    .iter()
    .map(|&(name, budget, secs)| {
        format!(
            "{budget} {name} {}\n",
            binary(dir.path(), name, secs).display()
        )
    })
    .collect();
    std::fs::write(dir.path().join("queue"), queue).unwrap();
    let (rc, out) = sourced(
        dir.path(),
        "q=$RESULTS_DIR/queue; run_queue_lane $q & a=$!; run_queue_lane $q & b=$!; wait $a $b; print_summary",
    );
    assert_eq!(rc, 0, "{out}");
    assert!(
        out.contains("suite: 4 passed, 0 failed, 0 skipped"),
        "{out}"
    );
    let marks = std::fs::read_to_string(dir.path().join("marks")).unwrap();
    let lines: Vec<&str> = marks.lines().collect();
    // Each binary ran once.
    for name in ["long", "mid", "short1", "short2"] {
        assert_eq!(
            lines
                .iter()
                .filter(|l| **l == format!("start {name}"))
                .count(),
            1,
            "{marks}"
        );
    }
    // The two longest started first, side by side (both before either ended).
    assert_eq!(
        &lines[..2]
            .iter()
            .copied()
            .collect::<std::collections::BTreeSet<_>>(),
        &["start long", "start mid"].into_iter().collect(),
        "{marks}"
    );
    // The short ones filled in while the long one still ran.
    let pos = |m: &str| lines.iter().position(|l| *l == m).unwrap();
    assert!(pos("start short1") < pos("end long"), "{marks}");
    // Every binary's output printed whole, once.
    assert_eq!(out.matches("==== ").count(), 4, "{out}");
}
