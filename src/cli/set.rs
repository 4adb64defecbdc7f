//! `hlctl set`: change NIC settings as one validated, restorable change set.

use clap::Args;

use super::args::Global;
use super::exit;
use super::output::{print_json, table};
use crate::nic::apply::Outcome;
use crate::nic::change;
use crate::nic::diff::Status;

/// Change NIC settings; several groups in one command form one change set.
///
/// Settings (ethtool-like words):
///   mtu N | txqueuelen N
///   ring [rx N] [tx N] [rx-mini N] [rx-jumbo N]
///   pause [autoneg on|off] [rx on|off] [tx on|off]
///   feature NAME on|off ...   (kernel names like rx-gro, or ethtool's short
///                              names gro gso tso lro sg rx tx rxvlan txvlan ntuple rxhash ufo)
///   link [speed N] [duplex half|full] [autoneg on|off] [advertise MODE...]
///   channels [rx N] [tx N] [other N] [combined N]
///   coalesce [rx-usecs N] [tx-usecs N] [rx-frames N] [tx-frames N]
///            [adaptive-rx on|off] [adaptive-tx on|off]
///
/// Everything is validated against what the device reports before anything
/// is touched; all problems are listed at once (exit 2, nothing changed).
/// Then exactly what will change is snapshotted, applied in a safe order
/// (link last) and read back: the result shows before → requested → after and
/// flags values the driver rounded or ignored. If any step fails, everything
/// already applied is restored (exit 1). Not permitted: exit 3.
///
/// Example: hlctl set eth2 ring rx 4096 tx 4096 feature gro on mtu 9000
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct SetArgs {
    /// The interface to change.
    #[arg(value_name = "IFACE")]
    pub interface: String,

    /// Settings, as above.
    #[arg(value_name = "SETTING", required = true, num_args = 1.., allow_hyphen_values = true, trailing_var_arg = true)]
    pub settings: Vec<String>,

    /// Validate and print what would change; change nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Also record the settings in the state file, so hlctld re-applies them
    /// at start and when the interface appears again.
    #[arg(long)]
    pub persist: bool,
}

pub fn run(global: &Global, args: SetArgs) -> i32 {
    // Flags may also appear among the settings words (`set eth0 mtu 9000 --dry-run`).
    let mut dry_run = args.dry_run;
    let mut persist_it = args.persist;
    let mut json = global.json;
    let words: Vec<String> = args
        .settings
        .into_iter()
        .filter(|w| match w.as_str() {
            "--dry-run" => {
                dry_run = true;
                false
            }
            "--persist" => {
                persist_it = true;
                false
            }
            "--json" | "-J" => {
                json = true;
                false
            }
            _ => true,
        })
        .collect();
    let cs = match change::parse(&words) {
        Ok(cs) => cs,
        Err(problems) => {
            let e = crate::nic::error::NicError::Invalid {
                iface: args.interface.clone(),
                problems,
            };
            return super::fail(&e, exit::INVALID);
        }
    };
    let mut backend = match super::backend::Backend::select(global) {
        Ok(b) => b,
        Err(e) => return e.report(),
    };
    let reply = match backend.set(&args.interface, &cs, dry_run, persist_it) {
        Ok(r) => r,
        Err(e) => return e.report(),
    };
    let mut code = outcome_code(&reply.outcome);
    if let Some(e) = &reply.persist_error {
        eprintln!("hlctl: the settings are applied but could not be persisted: {e}");
        code = exit::FAILED;
    }
    if json {
        let mut v = serde_json::to_value(&reply).expect("reply serialises");
        if let Some(m) = v.as_object_mut() {
            m.remove("persist_error");
        }
        print_json(&v);
    } else {
        print!("{}", render(&reply.outcome));
        if let Some(p) = &reply.persisted {
            println!("persisted in {p}");
        }
    }
    code
}

/// Exit code of an outcome: 0 ok, 3 not permitted, 1 other failures.
pub fn outcome_code(o: &Outcome) -> i32 {
    match &o.failure {
        None => exit::OK,
        Some(f) if f.errno == libc::EPERM || f.errno == libc::EACCES => exit::NOT_PERMITTED,
        Some(_) => exit::FAILED,
    }
}

fn show(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "-".into(),
        serde_json::Value::Array(a) => a.iter().map(show).collect::<Vec<_>>().join(" "),
        other => other.to_string(),
    }
}

/// The before → requested → after table, and the failure and restore story.
pub fn render(o: &Outcome) -> String {
    let mut out = String::new();
    let changed = o
        .settings
        .iter()
        .filter(|s| {
            matches!(
                s.status,
                Status::Changed | Status::Adjusted | Status::Planned
            )
        })
        .count();
    let head = match (&o.failure, o.dry_run) {
        (Some(f), _) => format!("{}: FAILED at {}: {}\n", o.interface, f.step, f.error),
        (None, true) => format!(
            "{}: dry run, {changed} setting(s) would change, nothing changed\n",
            o.interface
        ),
        (None, false) => format!("{}: {changed} setting(s) changed\n", o.interface),
    };
    out.push_str(&head);
    let mut rows = vec![vec![
        "setting".to_string(),
        "before".into(),
        "requested".into(),
        "after".into(),
        "status".into(),
    ]];
    for s in &o.settings {
        let status = match s.status {
            Status::Planned => "would change",
            Status::Unchanged => "unchanged",
            Status::Changed => "changed",
            Status::Adjusted => "ADJUSTED by the driver",
            Status::Restored => "restored",
            Status::NotApplied => "not applied (failed)",
            Status::RestoreFailed => "RESTORE FAILED",
        };
        rows.push(vec![
            s.setting.clone(),
            show(&s.before),
            show(&s.requested),
            s.after.as_ref().map_or("-".into(), show),
            status.into(),
        ]);
    }
    for l in table(&rows).lines() {
        out.push_str(&format!("  {l}\n"));
    }
    if o.failure.is_some() {
        if o.restore_errors.is_empty() {
            out.push_str("  everything applied before the failure was restored\n");
        } else {
            out.push_str(&format!(
                "  restore incomplete: {}\n",
                o.restore_errors.join("; ")
            ));
        }
    }
    out
}
