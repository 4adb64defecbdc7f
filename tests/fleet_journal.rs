//! A regression goes to the journal at warning priority with hlctl's
//! MESSAGE_ID, so `journalctl MESSAGE_ID=...` lists it. PID 1 is not systemd
//! here: a real systemd-journald runs in a private mount namespace (its own
//! tmpfs on /run), started and stopped by pid by the test's script. The
//! regression is planted in the data (a baseline 100 times faster than the
//! disk), because what is tested is where it is logged.

mod common;

use common::output_text as text;

use std::process::Command;

use common::lab::HLCTL;

const MESSAGE_ID: &str = "5f1c2a7e9b3d4c60a8e1f2d3c4b5a697";

#[test]
fn a_regression_is_in_the_journal_under_our_message_id() {
    common::require_root("this test");
    let journald = "/lib/systemd/systemd-journald";
    assert!(
        std::path::Path::new(journald).exists(),
        "{journald} missing (package systemd, scripts/setup.sh)"
    );
    let host = common::fleet::DiskCheckHost::new("baseline = \"good\"\n");
    let hl = |args: &[&str]| host.hlctl(args);
    let (state, conf) = (&host.state, &host.conf);
    let o = hl(&["check"]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", text(&o));
    let o = hl(&["baseline", "save", "good"]);
    assert!(o.status.success(), "{}", text(&o));
    let db = rusqlite::Connection::open(state.join("history.db")).unwrap();
    db.execute(
        "UPDATE baseline_metrics SET value = value * 100 WHERE name = 'disk seq-write'",
        [],
    )
    .unwrap();
    drop(db);

    let script = format!(
        r#"set -u
mount -t tmpfs tmpfs /run
# Never the host's persistent journal either.
[ ! -d /var/log/journal ] || mount -t tmpfs tmpfs /var/log/journal
mkdir -p /run/systemd/journal /run/log/journal
{journald} & jpid=$!
trap 'kill $jpid; wait $jpid' EXIT
for i in $(seq 100); do [ -S /run/systemd/journal/socket ] && break; sleep 0.1; done
"{HLCTL}" --state-dir "{state}" --config "{conf}" check 2>/tmp/stderr.$$ >/dev/null
echo "hlctl-exit=$?"
echo "hlctl-stderr=$(cat /tmp/stderr.$$ | tr '\n' ' ')"; rm -f /tmp/stderr.$$
sleep 0.5
journalctl --no-pager -o json MESSAGE_ID={MESSAGE_ID}
"#,
        state = state.display(),
        conf = conf.display(),
    );
    let o = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "bash", "-c", &script])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(out.contains("hlctl-exit=1"), "{}", text(&o));
    let stderr_line = out
        .lines()
        .find(|l| l.starts_with("hlctl-stderr="))
        .unwrap();
    assert!(
        !stderr_line.contains("regression:"),
        "with journald there, the regression goes to the journal: {stderr_line}"
    );
    let entries: Vec<serde_json::Value> = out
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The planted one; 1-second disk runs on a busy machine may add others.
    for e in &entries {
        assert_eq!(e["MESSAGE_ID"], MESSAGE_ID);
        assert_eq!(e["PRIORITY"], "4");
        assert_eq!(e["SYSLOG_IDENTIFIER"], "hlctl");
    }
    let e = entries
        .iter()
        .find(|e| e["HLCTL_METRIC"] == "disk seq-write")
        .unwrap_or_else(|| panic!("{}", text(&o)));
    let msg = e["MESSAGE"].as_str().unwrap();
    assert!(
        msg.starts_with("regression: disk seq-write → ") && msg.contains("REGRESSION"),
        "{msg}"
    );
    println!("journalctl MESSAGE_ID={MESSAGE_ID}: {msg}");
}
