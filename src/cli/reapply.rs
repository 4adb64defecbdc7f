//! `hlctl reapply`: put the persisted settings back without hlctld — for a
//! NAS's boot task (no systemd, no system bus) or a container.

use clap::Args;

use super::exit;
use super::global::Global;
use super::output::print_json;
use crate::nic::netlink::Netlink;
use crate::ops::reapply::{self, LinkResult, Report};

/// Re-apply the persisted NIC settings and sysctls, in this process.
///
/// What `set --persist`, `sysctl --persist` and `tune` persisted is put
/// back: the NIC settings of STATE_DIR/nic-settings.json on each link that
/// has an entry (matched by MAC address first, then by name) and the
/// sysctls of SYSCTL_DIR/90-hlctl.conf, each key on its own. hlctld does the
/// same at start and on hot-plug; this is for boxes without it: a NAS's
/// boot task (Synology DSM Task Scheduler "Triggered task: Boot-up", TrueNAS
/// SCALE "Init/Shutdown Scripts", Unraid's `go` file or User Scripts) or a
/// container started with `--network host --cap-add NET_ADMIN`. Each
/// setting is logged (before -> after); settings another program keeps
/// setting back (noted by hlctld) are left alone. Needs CAP_NET_ADMIN (root).
///
/// With --watch it keeps running after that: every link that appears
/// (hot-plug, a driver reload, a re-created device) gets its persisted
/// settings again, from the kernel's link notifications; no system bus is
/// needed. --json then prints one JSON object per line: the first pass's
/// report, then one per link re-applied.
///
/// Exit codes: 0 everything put back (or nothing persisted); 1 something
/// failed (each failure is named on stderr); 3 not permitted.
#[derive(Debug, Args)]
pub(crate) struct ReapplyArgs {
    /// Keep running and re-apply the settings of each link that appears.
    #[arg(long)]
    pub(crate) watch: bool,
}

pub(crate) fn run(global: &Global, args: ReapplyArgs) -> i32 {
    let paths = global.paths();
    let mut nl = match Netlink::new() {
        Ok(nl) => nl,
        Err(e) => return super::fail(&e, exit::FAILED),
    };
    let report = reapply::all(&mut nl, &paths);
    if global.json && args.watch {
        println!("{}", serde_json::to_string(&report).unwrap_or_default());
    } else if global.json {
        print_json(&report);
    } else {
        print_report(&report);
    }
    for f in &report.failed {
        eprintln!("hlctl: reapply: failed: {f}");
    }
    let code = if report.failed.is_empty() {
        exit::OK
    } else {
        exit::FAILED
    };
    if !args.watch {
        return code;
    }
    let json = global.json;
    let r = reapply::watch(&mut nl, &paths, |l| {
        if json {
            println!("{}", serde_json::to_string(&l).unwrap_or_default());
        } else {
            print_link(&l);
        }
        if let Some(f) = l.failure() {
            eprintln!("hlctl: reapply: failed: {f}");
        }
    });
    match r {
        Ok(()) => code,
        Err(e) => super::fail(&e, super::nic_exit_code(&e)),
    }
}

fn print_report(r: &Report) {
    for j in &r.restored {
        println!(
            "{}: restored what {} left unconfirmed ({}){}",
            j.interface,
            j.tune_id,
            j.why,
            if j.errors.is_empty() { "" } else { ": failed" }
        );
    }
    if r.links.is_empty() && r.sysctls.is_empty() {
        println!("Nothing persisted ({}, {}).", r.state_file, r.sysctl_file);
    }
    r.links.iter().for_each(print_link);
    for a in &r.absent {
        println!(
            "{a}: persisted, but no such link here now (re-applied when it appears with --watch or hlctld)"
        );
    }
    for s in &r.sysctls {
        let now = s.after.as_deref().or(s.before.as_deref()).unwrap_or("?");
        match &s.error {
            Some(e) => println!("sysctl {} = {}: failed: {e}", s.key, s.value),
            None => println!(
                "sysctl {} = {} (was {})",
                s.key,
                now,
                s.before.as_deref().unwrap_or("?")
            ),
        }
    }
}

fn print_link(l: &LinkResult) {
    for s in l.outcome.iter().flat_map(|o| &o.settings) {
        let after = s.after.as_ref().map_or("-".to_string(), |v| v.to_string());
        println!(
            "{}: {} {} -> {} ({:?})",
            l.interface, s.setting, s.before, after, s.status
        );
    }
    for (k, why) in &l.not_reapplied {
        println!("{}: {k} left alone: {why}", l.interface);
    }
    if let Some(f) = l.failure() {
        println!("failed: {f}");
    }
}
