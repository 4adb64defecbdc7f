//! `hlctl sysctl`: show or change the network-tuning sysctls.

use clap::Args;
use serde_json::json;

use super::exit;
use super::global::Global;
use super::output::{print_json, table};
use crate::sysctl::set::SysctlReply;
use crate::sysctl::{self, SysctlError};

/// Show or change network sysctls.
///
/// With no KEY, shows the network-tuning set (buffer sizes, backlog,
/// congestion control, TCP options). KEY shows one key; KEY=VALUE changes it.
/// All assignments are validated first (numbers in range, triplets such as
/// tcp_rmem need min ≤ default ≤ max, a congestion control must be available,
/// only keys under net.); values are compared whitespace-normalised. Each
/// write is read back; if one fails, the earlier ones are restored.
///
/// With --persist the values also go to 90-hlctl.conf in sysctl.d (written
/// atomically, other lines kept). At boot, files sorting after it and
/// /etc/sysctl.conf win over it: hlctl names any such file that sets the same key.
///
/// Inside a network namespace, the per-namespace net.* values are shown and changed.
#[derive(Debug, Args)]
pub(crate) struct SysctlArgs {
    /// KEY to show, or KEY=VALUE to set (quote values with spaces: 'net.ipv4.tcp_rmem=4096 131072 16777216').
    #[arg(value_name = "KEY[=VALUE]")]
    pub(crate) items: Vec<String>,

    /// Also write the values to sysctl.d/90-hlctl.conf so they hold after a reboot.
    #[arg(long)]
    pub(crate) persist: bool,

    /// Validate and show what would change; change nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,

    /// Keep the values only when Enter is pressed within SECONDS (default
    /// 120); otherwise, on Ctrl-C, SIGTERM or SIGHUP, or when hlctl dies,
    /// the previous values are restored. With --persist, persisted only once
    /// kept. Standard input at its end never confirms. Give it after the
    /// values (`--try 30`) or as `--try=30`.
    #[arg(long = "try", value_name = "SECONDS", num_args = 0..=1,
          default_missing_value = "120",
          value_parser = crate::units::at_least(1u32))]
    pub(crate) try_s: Option<u32>,
}

pub(crate) fn run(global: &Global, args: SysctlArgs) -> i32 {
    if let Some(hint) = unquoted_value(&args.items).or_else(|| unknown_key(&args.items)) {
        eprintln!("hlctl sysctl: {hint}");
        return exit::INVALID;
    }
    let (sets, gets): (Vec<&String>, Vec<&String>) =
        args.items.iter().partition(|i| i.contains('='));
    let need = if sets.is_empty() {
        super::backend::Need::Nothing
    } else {
        super::backend::Need::Privilege
    };
    let mut backend = match super::backend::Backend::select(global, need) {
        Ok(b) => b,
        Err(e) => return e.report(),
    };
    if sets.is_empty() {
        return match backend.sysctl_show(&args.items) {
            Ok(entries) => show(global, &entries),
            Err(e) => e.report(),
        };
    }
    if !gets.is_empty() {
        return mixed(&gets);
    }
    let assignments: Vec<(String, String)> = sets
        .iter()
        .filter_map(|s| {
            s.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.to_string()))
        })
        .collect();
    let mode = crate::ops::try_change::ChangeMode::new(args.dry_run, args.persist, args.try_s);
    if let Some(secs) = mode.try_seconds() {
        return sysctl_try(global, &mut backend, &assignments, mode.persist, secs);
    }
    match backend.sysctl_set(&assignments, mode.dry_run, mode.persist) {
        Ok(reply) if reply.dry_run => planned(global, &reply),
        Ok(reply) => changed(global, &reply),
        Err(e) => e.report(),
    }
}

/// `sysctl KEY=VALUE... --try SECONDS`: written, kept only once Enter is pressed.
fn sysctl_try(
    global: &Global,
    backend: &mut super::backend::Backend,
    assignments: &[(String, String)],
    persist: bool,
    secs: u32,
) -> i32 {
    let begun = match backend.sysctl_try(assignments, persist, secs) {
        Ok(b) => b,
        Err(e) => return e.report(),
    };
    let code = match &begun.0.failed {
        None => exit::OK,
        Some(_) => exit::FAILED,
    };
    let shown = super::try_wait::Shown {
        json: global.json,
        code,
        text: &changed_text,
    };
    super::try_wait::run(backend, secs, begun, shown)
}

/// `hlctl sysctl [KEY...]`: the values, with what each key is about.
fn show(global: &Global, entries: &[sysctl::Entry]) -> i32 {
    if global.json {
        print_json(&json!({ "sysctls": entries }));
        return exit::OK;
    }
    let mut rows = vec![vec!["key".to_string(), "value".into(), "".into()]];
    for e in entries {
        rows.push(vec![
            e.key.clone(),
            e.value
                .clone()
                .unwrap_or_else(|| "(not present here)".into()),
            e.about.map(|a| format!("# {a}")).unwrap_or_default(),
        ]);
    }
    print!("{}", table(&rows));
    exit::OK
}

/// Reads and writes in one call: refused, naming each read.
/// A value of several numbers the shell split into words
/// (`net.ipv4.tcp_rmem 4096 131072 16777216`, or `…=4096 131072 16777216`
/// unquoted): one message with the quoting, instead of one error per word.
fn unquoted_value(items: &[String]) -> Option<String> {
    let numeric = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_digit());
    let at = items.iter().position(|w| numeric(w))?;
    let key_word = items.get(at.checked_sub(1)?)?;
    if numeric(key_word) {
        return None;
    }
    let numbers: Vec<&str> = items[at..]
        .iter()
        .take_while(|w| numeric(w))
        .map(String::as_str)
        .collect();
    let (key, first) = match key_word.split_once('=') {
        Some((k, v)) => (k.trim(), Some(v.trim())),
        None => (key_word.trim(), None),
    };
    let value: Vec<&str> = first.into_iter().chain(numbers).collect();
    Some(format!(
        "the value of {key} is {} numbers, which the shell passed as separate words: \
         quote it as one, `hlctl sysctl '{key}={}'`",
        value.len(),
        value.join(" ")
    ))
}

/// A key outside net. that the tuning set knows under its full name
/// (`tcp_rmem`): "did you mean net.ipv4.tcp_rmem?".
fn unknown_key(items: &[String]) -> Option<String> {
    items.iter().find_map(|item| {
        let key = item
            .split_once('=')
            .map_or(item.as_str(), |(k, _)| k)
            .trim();
        if key.starts_with("net.") {
            return None;
        }
        let near = sysctl::keys::closest(key);
        (!near.is_empty()).then(|| {
            format!(
                "unknown key {key} (hlctl manages the keys under net.): did you mean {}?",
                near.join(" or ")
            )
        })
    })
}

fn mixed(gets: &[&String]) -> i32 {
    let problems = gets
        .iter()
        .map(|g| {
            crate::problem::Problem::new(
                g.as_str(),
                None,
                "mix of reads and writes: give KEY=VALUE for every key, or only keys to show",
            )
        })
        .collect();
    super::fail(&SysctlError::Invalid(problems), exit::INVALID)
}

/// `--dry-run`: what would change.
fn planned(global: &Global, reply: &SysctlReply) -> i32 {
    if global.json {
        print_json(&json!({ "dry_run": true, "changes": reply.changes }));
    } else {
        println!("dry run: nothing changed");
        print!("{}", change_table(&reply.changes));
    }
    exit::OK
}

/// What changed, what failed and was restored, where it was persisted and
/// which files override it at boot.
fn changed(global: &Global, reply: &SysctlReply) -> i32 {
    let mut code = match &reply.failed {
        None => exit::OK,
        Some(f) if f.contains("ermission denied") || f.contains("not permitted") => {
            exit::NOT_PERMITTED
        }
        Some(_) => exit::FAILED,
    };
    if let Some(e) = &reply.persist_error {
        eprintln!("hlctl: the values are applied but could not be persisted: {e}");
        code = exit::FAILED;
    }
    if global.json {
        print_json(
            &json!({ "dry_run": false, "changes": reply.changes, "failed": reply.failed,
            "restore_errors": reply.restore_errors, "persisted": reply.persisted,
            "overridden_by": reply.overridden_by }),
        );
    } else {
        print!("{}", changed_text(reply));
    }
    code
}

fn changed_text(reply: &SysctlReply) -> String {
    let mut s = String::new();
    if let Some(f) = &reply.failed {
        s += &format!("FAILED: {f}\n");
        if reply.restore_errors.is_empty() {
            s += "every value written before the failure was restored\n";
        } else {
            s += &format!("restore incomplete: {:?}\n", reply.restore_errors);
        }
    }
    s += &change_table(&reply.changes);
    if let Some(p) = &reply.persisted {
        s += &format!("persisted in {}\n", crate::mounted::shown(p));
    }
    for o in &reply.overridden_by {
        s += &format!(
            "warning: {} sets {} = {} and is applied after {} at boot, so its value wins\n",
            o.path.display(),
            o.key,
            o.value,
            crate::paths::SYSCTL_FILE
        );
    }
    s
}

fn change_table(changes: &[sysctl::Change]) -> String {
    let mut rows = vec![vec![
        "key".to_string(),
        "before".into(),
        "requested".into(),
        "after".into(),
    ]];
    for c in changes {
        let after = c.after.clone().unwrap_or_else(|| "-".into());
        let mark = if c.after.is_some() && !c.matches() {
            " (DIFFERS)"
        } else {
            ""
        };
        rows.push(vec![
            c.key.clone(),
            c.before.clone(),
            c.requested.clone(),
            format!("{after}{mark}"),
        ]);
    }
    table(&rows)
}
