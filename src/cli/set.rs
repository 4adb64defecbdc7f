//! `hlctl set`: change NIC settings as one validated, restorable change set.

use clap::Args;

use super::error::CliError;
use super::exit;
use super::global::Global;
use super::output::{print_json, table};
use crate::nic::apply::Outcome;
use crate::nic::change;
use crate::nic::diff::Status;

/// Change NIC settings; several groups in one command form one change set.
///
/// Settings (ethtool-like words):
///   mtu N | txqueuelen N
///   gso-max-size N            (largest GSO packet in bytes, up to the device's TSO limit)
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
pub(crate) struct SetArgs {
    /// The interface to change.
    #[arg(value_name = "IFACE")]
    pub(crate) interface: String,

    /// Settings, as above.
    #[arg(value_name = "SETTING", required = true, num_args = 1.., allow_hyphen_values = true, trailing_var_arg = true)]
    pub(crate) settings: Vec<String>,

    /// Validate and print what would change; change nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,

    /// Also record the settings in the state file, so hlctld re-applies them
    /// at start and when the interface appears again.
    #[arg(long)]
    pub(crate) persist: bool,

    /// Keep the change only when Enter is pressed within SECONDS (default
    /// 120); otherwise, on Ctrl-C, SIGTERM or SIGHUP, or when hlctl dies,
    /// the previous settings are restored. With --persist, persisted only
    /// once kept. Standard input at its end never confirms. Give it after
    /// the settings (`--try 30`) or as `--try=30`.
    #[arg(long = "try", value_name = "SECONDS", num_args = 0..=1,
          default_missing_value = "120",
          value_parser = crate::units::at_least(1u32))]
    pub(crate) try_s: Option<u32>,
}

/// The flags that may also appear among the settings words.
#[derive(Debug, Default)]
struct Flags {
    dry_run: bool,
    persist: bool,
    json: bool,
    try_s: Option<u32>,
}

/// Take the flags out of the settings words (`set eth0 mtu 9000 --dry-run`,
/// `... --try`, `... --try 30`, `... --try=30`).
fn take_flags(words: Vec<String>, f: &mut Flags) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut it = words.into_iter().peekable();
    while let Some(w) = it.next() {
        match w.as_str() {
            "--dry-run" => f.dry_run = true,
            "--persist" => f.persist = true,
            "--json" | "-J" => f.json = true,
            "--try" => {
                let secs = it.next_if(|n| n.parse::<u32>().is_ok());
                f.try_s = Some(secs.map_or(crate::ops::try_change::DEFAULT_SECONDS, |n| {
                    n.parse().unwrap_or_default()
                }));
            }
            _ => match w.strip_prefix("--try=") {
                Some(n) => {
                    let secs = n
                        .parse()
                        .map_err(|_| format!("--try={n}: not a number of seconds"))?;
                    f.try_s = Some(secs);
                }
                None => out.push(w),
            },
        }
    }
    if f.try_s == Some(0) {
        return Err("--try 0: give the seconds to wait for Enter (at least 1)".into());
    }
    Ok(out)
}

pub(crate) fn run(global: &Global, args: SetArgs) -> i32 {
    let mut f = Flags {
        dry_run: args.dry_run,
        persist: args.persist,
        json: global.json,
        try_s: args.try_s,
    };
    let words = match take_flags(args.settings, &mut f) {
        Ok(w) => w,
        Err(e) => return CliError::new(e, exit::INVALID).report(),
    };
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
    let mut backend = match super::backend::Backend::select(global, super::backend::Need::Privilege)
    {
        Ok(b) => b,
        Err(e) => return e.report(),
    };
    let mode = crate::ops::try_change::ChangeMode::new(f.dry_run, f.persist, f.try_s);
    if let Some(secs) = mode.try_seconds() {
        return set_try(&mut backend, &args.interface, &cs, &f, secs);
    }
    let reply = match backend.set(&args.interface, &cs, mode.dry_run, mode.persist) {
        Ok(r) => r,
        Err(e) => return e.report(),
    };
    let mut code = outcome_code(&reply.outcome);
    if let Some(e) = &reply.persist_error {
        eprintln!("hlctl: the settings are applied but could not be persisted: {e}");
        code = exit::FAILED;
    }
    if f.json {
        let mut v = serde_json::to_value(&reply).expect("reply serialises");
        if let Some(m) = v.as_object_mut() {
            m.remove("persist_error");
        }
        print_json(&v);
    } else {
        print!("{}", render(&reply.outcome));
        if let Some(p) = &reply.persisted {
            println!("persisted in {}", crate::mounted::shown(p));
        }
        for t in &reply.persisted_through {
            println!("persisted through the network manager: {t}");
        }
    }
    code
}

/// `set ... --try SECONDS`: applied, kept only once Enter is pressed.
fn set_try(
    backend: &mut super::backend::Backend,
    iface: &str,
    cs: &crate::nic::model::ChangeSet,
    f: &Flags,
    secs: u32,
) -> i32 {
    let begun = match backend.set_try(iface, cs, f.persist, secs) {
        Ok(b) => b,
        Err(e) => return e.report(),
    };
    let shown = super::try_wait::Shown {
        json: f.json,
        code: outcome_code(&begun.0.outcome),
        text: &|r: &crate::nic::set::SetReply| render(&r.outcome),
    };
    super::try_wait::run(backend, secs, begun, shown)
}

/// Exit code of an outcome: 0 ok, 3 not permitted, 1 other failures.
pub(crate) fn outcome_code(o: &Outcome) -> i32 {
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

/// What a status reads as in the table.
fn label(status: Status) -> &'static str {
    match status {
        Status::Planned => "would change",
        Status::Unchanged => "unchanged",
        Status::Changed => "changed",
        Status::Adjusted => "ADJUSTED by the driver",
        Status::Restored => "restored",
        Status::NotApplied => "not applied (failed)",
        Status::RestoreFailed => "RESTORE FAILED",
        Status::Followed => "changed by the kernel",
    }
}

/// The first line: what changed, counting only settings the kernel now holds
/// differently, then the other statuses (`nothing changed (2 ADJUSTED by the driver)`).
fn headline(o: &Outcome) -> String {
    let n = o.summary.changed;
    if let Some(f) = &o.failure {
        return format!("{}: FAILED at {}: {}", o.interface, f.step, f.error);
    }
    if o.dry_run {
        return format!(
            "{}: dry run, {n} setting(s) would change, nothing changed",
            o.interface
        );
    }
    let what = match n {
        0 => "nothing changed".to_string(),
        n => format!("{n} setting(s) changed"),
    };
    let others: Vec<String> = o
        .summary
        .statuses
        .iter()
        .filter(|(s, _)| **s != Status::Changed)
        .map(|(s, k)| format!("{k} {}", label(*s)))
        .collect();
    if others.is_empty() {
        format!("{}: {what}", o.interface)
    } else {
        format!("{}: {what} ({})", o.interface, others.join(", "))
    }
}

/// The before → requested → after table, and the failure and restore story.
pub(crate) fn render(o: &Outcome) -> String {
    let mut out = format!("{}\n", headline(o));
    let mut rows = vec![vec![
        "setting".to_string(),
        "before".into(),
        "requested".into(),
        "after".into(),
        "status".into(),
    ]];
    for s in &o.settings {
        let status = match &s.reason {
            Some(why) => format!("{} ({why})", label(s.status)),
            None => label(s.status).to_string(),
        };
        rows.push(vec![
            s.setting.clone(),
            show(&s.before),
            show(&s.requested),
            s.after.as_ref().map_or("-".into(), show),
            status,
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::nic::diff::{SettingResult, summarize};

    fn row(setting: &str, before: &str, requested: &str, after: &str) -> SettingResult {
        let (b, a) = (json!(before), json!(after));
        let status = if a == json!(requested) {
            Status::Changed
        } else {
            Status::Adjusted
        };
        SettingResult {
            setting: setting.into(),
            before: b,
            requested: json!(requested),
            after: Some(a),
            status,
            reason: (setting.starts_with("pause") && status == Status::Adjusted)
                .then(|| "pause autoneg is on: the negotiation decides".into()),
        }
    }

    fn outcome(settings: Vec<SettingResult>) -> Outcome {
        Outcome {
            interface: "eth0".into(),
            dry_run: false,
            summary: summarize(&settings, false),
            settings,
            failure: None,
            restore_errors: Vec::new(),
        }
    }

    #[test]
    fn settings_the_driver_kept_are_not_counted_and_say_why() {
        let o = outcome(vec![
            row("pause rx", "on", "off", "on"),
            row("pause tx", "on", "off", "on"),
        ]);
        let text = render(&o);
        let mut lines = text.lines();
        assert_eq!(
            lines.next(),
            Some("eth0: nothing changed (2 ADJUSTED by the driver)"),
            "{text}"
        );
        assert!(!text.contains("setting(s) changed"), "{text}");
        let rows: Vec<&str> = lines.filter(|l| l.contains("ADJUSTED")).collect();
        assert_eq!(rows.len(), 2, "{text}");
        assert!(
            rows.iter().all(|l| l.ends_with(
                "ADJUSTED by the driver (pause autoneg is on: the negotiation decides)"
            )),
            "{text}"
        );
        // The JSON carries the same counts and the reason.
        let v = serde_json::to_value(&o).unwrap();
        assert_eq!(
            v["summary"],
            json!({"changed": 0, "statuses": {"adjusted": 2}})
        );
        assert_eq!(
            v["settings"][0]["reason"],
            json!("pause autoneg is on: the negotiation decides")
        );
    }

    #[test]
    fn try_is_taken_from_the_settings_words() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let mut f = Flags::default();
        let rest = take_flags(words(&["mtu", "1400", "--try", "--persist"]), &mut f).unwrap();
        assert_eq!(rest, ["mtu", "1400"]);
        assert_eq!((f.try_s, f.persist), (Some(120), true));
        let mut f = Flags::default();
        let rest = take_flags(words(&["mtu", "1400", "--try", "3"]), &mut f).unwrap();
        assert_eq!((rest.len(), f.try_s), (2, Some(3)));
        let mut f = Flags::default();
        take_flags(words(&["mtu", "1400", "--try=7"]), &mut f).unwrap();
        assert_eq!(f.try_s, Some(7));
        assert!(take_flags(words(&["mtu", "1", "--try=x"]), &mut Flags::default()).is_err());
        assert!(take_flags(words(&["mtu", "1", "--try", "0"]), &mut Flags::default()).is_err());
    }

    #[test]
    fn headline_counts_what_changed_and_names_the_rest() {
        let o = outcome(vec![
            row("mtu", "1500", "9000", "9000"),
            row("ring rx", "256", "4000", "4096"),
        ]);
        assert!(
            render(&o).starts_with("eth0: 2 setting(s) changed (1 ADJUSTED by the driver)\n"),
            "{}",
            render(&o)
        );
        let o = outcome(vec![row("mtu", "1500", "9000", "9000")]);
        assert!(render(&o).starts_with("eth0: 1 setting(s) changed\n"));
        // Round trip through the daemon's JSON: the same text.
        let back: Outcome = serde_json::from_value(serde_json::to_value(&o).unwrap()).unwrap();
        assert_eq!(render(&back), render(&o));
    }
}
