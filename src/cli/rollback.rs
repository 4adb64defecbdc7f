//! `hlctl rollback`: undo an unfinished tune's pending changes, else the
//! last tune or `set --persist`.

use clap::Args;

use super::exit;
use super::global::Global;
use super::output::print_json;
use crate::tune::change::show;

/// Restore the state from before the last tune or `set --persist`.
///
/// If a tune did not finish (its process was killed, or the daemon died
/// mid-change), its journalled values are restored first. Otherwise the
/// last finished tune or persisted `set` of IFACE (or of every interface)
/// is undone: the live settings get their values from before it, and
/// sysctl.d/90-hlctl.conf, the NIC state file and what hlctl wrote into the
/// network manager's files (the ifupdown stanza's lines, networkd drop-ins,
/// the NetworkManager profile's keys, hlctl's netplan file) are put back as
/// they were. Only the latest one is kept per interface.
///
/// Exit codes: 0 restored (or nothing to do); 1 restoring failed.
#[derive(Debug, Args)]
pub(crate) struct RollbackArgs {
    /// The interface [default: every interface with a pending or last tune].
    #[arg(value_name = "IFACE")]
    pub(crate) interface: Option<String>,
}

pub(crate) fn run(global: &Global, args: RollbackArgs) -> i32 {
    match super::kept::rollback(global, args.interface.as_deref()) {
        Ok(r) => {
            let failed = r.pending_restored.iter().any(|p| !p.errors.is_empty());
            if global.json {
                print_json(&r);
            } else if r.pending_restored.is_empty() && r.undone.is_empty() {
                println!("Nothing to roll back.");
            } else {
                for p in &r.pending_restored {
                    let what: Vec<String> = p
                        .original
                        .settings()
                        .iter()
                        .map(|(k, v)| format!("{k} {}", show(v)))
                        .collect();
                    println!(
                        "{}: restored the pending changes of tune {} ({}): {}",
                        p.interface,
                        p.tune_id,
                        p.why,
                        what.join(", ")
                    );
                    for e in &p.errors {
                        println!("  failed: {e}");
                    }
                }
                for u in &r.undone {
                    let what: Vec<String> = u
                        .restored
                        .settings()
                        .iter()
                        .map(|(k, v)| format!("{k} {}", show(v)))
                        .collect();
                    let which = if u.tune_id.starts_with("set-") {
                        "the last `set --persist`".to_string()
                    } else {
                        format!("tune {}", u.tune_id)
                    };
                    println!("{}: undid {which}: {}", u.interface, what.join(", "));
                    for f in &u.files {
                        println!("  restored {f}");
                    }
                }
            }
            if failed { exit::FAILED } else { exit::OK }
        }
        Err(e) => e.report(),
    }
}
