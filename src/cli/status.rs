//! `hlctl status`: pending tune checkpoints and their deadlines, and the last tunes.

use clap::Args;

use super::exit;
use super::global::Global;
use super::output::{print_json, table};
use crate::tune::checkpoint::Phase;

/// Show pending tuning checkpoints (applied, not yet confirmed) with their
/// deadlines, the last finished tune or persisted `set` of each interface
/// (what `hlctl rollback` would undo), and the persisted settings hlctld
/// stopped re-applying because another program (a network manager) sets
/// them back (`!` lines; JSON `conflicts`).
#[derive(Debug, Args)]
pub(crate) struct StatusArgs {}

pub(crate) fn run(global: &Global, _args: StatusArgs) -> i32 {
    let st = match super::kept::status(global) {
        Ok(s) => s,
        Err(e) => return e.report(),
    };
    if global.json {
        print_json(&st);
        return exit::OK;
    }
    print_pending(&st.pending);
    for l in &st.last_tunes {
        let what: Vec<String> = l
            .kept
            .settings()
            .iter()
            .map(|(k, v)| format!("{k}={}", crate::tune::change::show(v)))
            .collect();
        let which = if l.tune_id.starts_with("set-") {
            "Last persisted set"
        } else {
            "Last tune"
        };
        println!(
            "{which} of {} ({}): kept {}",
            l.interface,
            crate::history::store::format_ts(l.ts),
            if what.is_empty() {
                "nothing".into()
            } else {
                what.join(", ")
            }
        );
    }
    for c in &st.conflicts {
        println!(
            "! {} {}: not re-applied any more: {}",
            c.interface, c.setting, c.why
        );
    }
    exit::OK
}

/// The pending checkpoints as a table, or that there are none.
fn print_pending(pending: &[crate::tune::status::Pending]) {
    if pending.is_empty() {
        println!("No pending checkpoints.");
    } else {
        let mut rows = vec![vec![
            "interface".to_string(),
            "tune".into(),
            "phase".into(),
            "deadline".into(),
            "owner".into(),
            "would restore".into(),
        ]];
        for p in pending {
            let phase = match &p.journal.phase {
                Phase::Trying { candidate } => format!("trying {candidate}"),
                Phase::Settled => "between candidates".into(),
                Phase::AwaitingConfirm => "awaiting confirmation".into(),
            };
            let what: Vec<String> = p
                .journal
                .original
                .settings()
                .iter()
                .map(|(k, v)| format!("{k}={}", crate::tune::change::show(v)))
                .collect();
            rows.push(vec![
                p.journal.interface.clone(),
                p.journal.tune_id.clone(),
                phase,
                if p.seconds_left >= 0.0 {
                    format!("in {:.0} s", p.seconds_left)
                } else {
                    format!("passed {:.0} s ago", -p.seconds_left)
                },
                format!(
                    "pid {} {}",
                    p.journal.owner_pid,
                    if p.owner_alive { "running" } else { "gone" }
                ),
                what.join(", "),
            ]);
        }
        print!("{}", table(&rows));
    }
}
