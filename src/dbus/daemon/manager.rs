//! `org.hlctl.Daemon1.Manager` at `/org/hlctl/Daemon1`: version,
//! capabilities, the links, the sysctl tuning set and its changes,
//! benchmarks, tune, doctor, report and check as jobs, the history, and link appearance signals.

use std::collections::HashMap;
use std::sync::Arc;

use tracing::{info, warn};
use zbus::message::Header;
use zbus::{Connection, OwnedObjectPath, OwnedVariant, interface};

use super::auth;
use super::state::Daemon;
use super::{bench, job, link, records};
use crate::dbus::wire::bounds;
use crate::dbus::wire::error::{Error, Result};
use crate::dbus::wire::records::Dict;
use crate::dbus::wire::settings::{self, MAX_ENTRIES, MAX_STR};
use crate::dbus::wire::start::{BenchOptions, TuneOptions};
use crate::dbus::wire::sysctl as sysctl_wire;
use crate::dbus::wire::verb;
use crate::ops;
use crate::problem::Problem;
use crate::sysctl::{self, SysctlError};

/// The manager object.
pub(crate) struct Manager {
    pub(crate) daemon: Arc<Daemon>,
}

fn check_strings<'a>(what: &str, items: impl Iterator<Item = &'a str>) -> Result<()> {
    let mut n = 0;
    for s in items {
        n += 1;
        if s.len() > MAX_STR {
            return Err(Error::InvalidArgument(format!(
                "{what}: a string of {} bytes; at most {MAX_STR} allowed",
                s.len()
            )));
        }
    }
    if n > MAX_ENTRIES {
        return Err(Error::InvalidArgument(format!(
            "{what}: {n} entries; at most {MAX_ENTRIES} allowed"
        )));
    }
    Ok(())
}

/// Every `a{sv}` argument within [`crate::dbus::wire::bounds`], before any
/// other look at it.
fn bounded(args: &[(&str, &HashMap<String, OwnedVariant>)]) -> Result<()> {
    args.iter()
        .try_for_each(|(what, m)| bounds::check_dict(what, m))
        .map_err(Error::InvalidArgument)
}

fn no_such(name: &str) -> Error {
    Error::NoSuchInterface(crate::nic::error::NicError::no_such_interface(name).to_string())
}

fn invalid(problems: Vec<Problem>) -> Error {
    Error::InvalidArgument(SysctlError::Invalid(problems).to_string())
}

impl Manager {
    /// The object paths of the named links that exist.
    fn paths_of(&self, names: &[String]) -> Vec<OwnedObjectPath> {
        names
            .iter()
            .filter_map(|n| self.daemon.link_by_name(n))
            .map(|l| link::path(l.ifindex))
            .collect()
    }
}

#[interface(name = "org.hlctl.Daemon1.Manager")]
impl Manager {
    /// The daemon's version.
    #[zbus(property(emits_changed_signal = "const"))]
    fn version(&self) -> String {
        env!("CARGO_PKG_VERSION").to_string()
    }

    /// What this daemon can do: `nic.show`, `nic.apply`, `nic.persist`,
    /// `sysctl.show`, `sysctl.set`, `sysctl.persist`, `jobs`, and
    /// `benchmark.<kind>` for each benchmark it runs.
    #[zbus(property(emits_changed_signal = "const"))]
    fn capabilities(&self) -> Vec<String> {
        let mut c: Vec<String> = [
            "nic.show",
            "nic.apply",
            "nic.persist",
            "nic.monitor",
            "sysctl.show",
            "sysctl.set",
            "sysctl.persist",
            "jobs",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        c.extend(
            crate::dbus::wire::bench::KINDS
                .iter()
                .map(|k| format!("benchmark.{k}")),
        );
        c
    }

    /// Every link's object path, by ifindex.
    #[zbus(property)]
    fn links(&self) -> Vec<OwnedObjectPath> {
        self.daemon
            .all_links()
            .iter()
            .map(|l| link::path(l.ifindex))
            .collect()
    }

    /// The network-tuning sysctls and their current values (keys missing in
    /// this network namespace are left out).
    #[zbus(property(emits_changed_signal = "false"))]
    fn sysctl_tuning_set(&self) -> HashMap<String, String> {
        sysctl::show(self.daemon.paths(), &[])
            .map(|entries| {
                entries
                    .into_iter()
                    .filter_map(|e| Some((e.key, e.value?)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Every job on the bus: running ones, and ended ones for the time their
    /// result can still be read.
    #[zbus(property(emits_changed_signal = "false"))]
    fn jobs(&self) -> Vec<OwnedObjectPath> {
        super::state::lock(&self.daemon.jobs)
            .keys()
            .map(|id| job::path(*id))
            .collect()
    }

    /// The object path of the link named `name`.
    async fn get_link(&self, name: &str) -> Result<OwnedObjectPath> {
        check_strings("name", std::iter::once(name))?;
        self.daemon
            .link_by_name(name)
            .map(|l| link::path(l.ifindex))
            .ok_or_else(|| no_such(name))
    }

    /// Announce every link's `Counters` by `PropertiesChanged` every
    /// `interval_ms` (250 to 60000; 0 withdraws this caller's request) for
    /// as long as the caller stays on the bus. The fastest rate any
    /// connected caller asked for is the one in force; it is returned.
    async fn set_counters_refresh(
        &self,
        interval_ms: u32,
        #[zbus(header)] hdr: Header<'_>,
    ) -> Result<u32> {
        let sender = hdr
            .sender()
            .ok_or_else(|| Error::InvalidArgument("the message has no sender".into()))?;
        self.daemon.counters.ask(sender.as_str(), interval_ms)
    }

    /// The rate at which `Counters` are announced now, in ms (0: not announced).
    #[zbus(property(emits_changed_signal = "false"))]
    fn counters_refresh_ms(&self) -> u32 {
        self.daemon.counters.rate()
    }

    /// The whole `hlctl show` model of the links named in `names` (every
    /// link when empty, physical first) as one JSON array: all links in one
    /// call, however many there are.
    async fn describe_links(&self, names: Vec<String>) -> Result<String> {
        check_strings("names", names.iter().map(String::as_str))?;
        let links = if names.is_empty() {
            self.daemon.all_links()
        } else {
            let found: Result<Vec<_>> = names
                .iter()
                .map(|n| self.daemon.link_by_name(n).ok_or_else(|| no_such(n)))
                .collect();
            found?
        };
        let mut out = link::describe(&self.daemon, &links).await;
        if names.is_empty() {
            out.sort_by_key(|i| (!i.physical, i.ifindex));
        }
        Ok(serde_json::to_string(&out).unwrap_or_else(|_| "[]".into()))
    }

    /// Read sysctls: the given `keys` (under `net.`), or the tuning set when
    /// empty. One row per key: (key, exists, value); a key this kernel or
    /// namespace does not have is (key, false, "").
    async fn show_sysctl(&self, keys: Vec<String>) -> Result<Vec<sysctl_wire::ShowRow>> {
        check_strings("keys", keys.iter().map(String::as_str))?;
        let d = self.daemon.clone();
        let entries = tokio::task::spawn_blocking(move || ops::sysctl::show(d.paths(), &keys))
            .await
            .map_err(|e| Error::Failed(e.to_string()))??;
        Ok(sysctl_wire::encode_show(&entries))
    }

    /// Validate every assignment (nothing changes on any problem), write each
    /// and read it back; restore on failure. Options: `dry_run` (b),
    /// `persist` (b, to sysctl.d/90-hlctl.conf), `rollback_timeout_s` (u:
    /// seconds, 0 or absent for none; as in `Link.ApplyChanges`, with a job
    /// of kind `try:sysctl`, one at a time; the summary then also carries
    /// `job` o). Returns one row per
    /// assignment (key, before, requested, after; after is "" in a dry run or
    /// when it could not be read back) and a summary.
    /// Keys[summary]: dry_run b, failed s, restore_errors a{ss}, persisted s,
    /// persist_error s, overridden_by a(sss).
    /// (failed: the key whose write failed, every earlier write restored, ""
    /// when none; restore_errors: key to why restoring it failed; persisted:
    /// the sysctl.d file written, "" when not persisted; overridden_by: (key,
    /// file, value) of files applied after ours at boot that set the same key.)
    async fn set_sysctl(
        &self,
        values: Vec<(String, String)>,
        options: HashMap<String, OwnedVariant>,
        #[zbus(header)] hdr: Header<'_>,
        #[zbus(connection)] conn: &Connection,
    ) -> Result<(Vec<sysctl_wire::SetRow>, HashMap<String, OwnedVariant>)> {
        check_strings(
            "values",
            values.iter().flat_map(|(k, v)| [k.as_str(), v.as_str()]),
        )?;
        if values.is_empty() {
            return Err(invalid(vec![Problem::new(
                "values",
                None,
                "nothing to set: give KEY=VALUE pairs",
            )]));
        }
        bounded(&[("options", &options)])?;
        let max_try = super::try_job::max_seconds(&self.daemon);
        let mode = settings::decode_change_mode(&options, max_try).map_err(invalid)?;
        let (dry_run, persist, try_s) = (mode.dry_run, mode.persist, mode.try_s);
        let keys: Vec<&str> = values.iter().map(|(k, _)| k.as_str()).collect();
        let caller = if dry_run {
            auth::caller(conn, &hdr).await?
        } else {
            let actions = verb::SYSCTL.actions(persist);
            auth::authorize(conn, &hdr, &actions, &keys.join(" ")).await?
        };
        let d = self.daemon.clone();
        let (reply, pending) = tokio::task::spawn_blocking(move || {
            sysctl_change(d.paths(), &values, (dry_run, persist), try_s)
        })
        .await
        .map_err(|e| Error::Failed(e.to_string()))??;
        if !dry_run {
            log_sysctl(&caller, &reply);
        }
        let mut out = sysctl_wire::encode_set(&reply);
        if let Some(p) = pending {
            let job =
                super::try_job::start(conn, &self.daemon, "sysctl", caller, None, Vec::new(), p)
                    .await?;
            out.1.insert("job".into(), super::try_job::job_value(&job));
        }
        Ok(out)
    }

    /// Start a benchmark as a job. `kind`: one of the `benchmark.<kind>`
    /// capabilities; `params`: the benchmark's parameters, each key optional
    /// but net's host and disk's dir; defaults as in `hlctl bench <kind>`.
    /// Integers may be any D-Bus integer type, seconds a double or an integer.
    /// Params[net]: host s, port q (5201), udp b, time_s u, parallel u,
    /// direction s (forward, reverse or bidir), bitrate_bps t, length u,
    /// window u, omit_s u, interval_s d (0 turns interval reports off),
    /// busy_window_s t (0 to 86400: seconds a busy server is tried again).
    /// Params[cpu]: threads u, time_s d, max_prime u, no_single b.
    /// Params[disk]: dir s (absolute), rw s (read, write, randread,
    /// randwrite, randrw), bs t, size t, iodepth u, jobs u, runtime_s d,
    /// time_based b, direct b, engine s (auto, io_uring, psync),
    /// rwmix_read y.
    /// Params[stress]: time_s d, cpu u, vm u, vm_bytes t, vm_percent d,
    /// interval_s d.
    /// Unknown keys and wrong types are refused, naming the key. Options:
    /// `detached` (b: keep running when the caller leaves the bus), `link`
    /// (s: the interface the benchmark loads; changes to it get `Busy` while
    /// it runs). Returns the job's object path.
    async fn start_benchmark(
        &self,
        kind: &str,
        params: HashMap<String, OwnedVariant>,
        options: HashMap<String, OwnedVariant>,
        #[zbus(header)] hdr: Header<'_>,
        #[zbus(connection)] conn: &Connection,
    ) -> Result<OwnedObjectPath> {
        check_strings("kind", std::iter::once(kind))?;
        bounded(&[("params", &params), ("options", &options)])?;
        let o = BenchOptions::decode(&options)?;
        let link_state = match &o.link {
            Some(name) => Some(
                self.daemon
                    .link_by_name(name)
                    .ok_or_else(|| no_such(name))?,
            ),
            None => None,
        };
        // Every benchmark kind is declared with the same action.
        let actions = verb::BENCH_NET.actions(false);
        let caller = auth::authorize(conn, &hdr, &actions, &format!("benchmark {kind}")).await?;
        let work = bench::prepare(
            kind,
            &params,
            self.daemon.opts.paths.clone(),
            caller.requester(true),
        )?;
        let claim = match &link_state {
            Some(l) => Some(l.claim(format!("a {kind} benchmark (uid {})", caller.uid_text()))?),
            None => None,
        };
        let new = job::NewJob {
            claim,
            objects: link_state.iter().map(|l| link::path(l.ifindex)).collect(),
            ..job::NewJob::measuring(format!("benchmark:{kind}"), caller, o.detached)
        };
        job::start(conn, &self.daemon, new, work).await
    }

    /// Tune a link against a peer as a job: measure, change one setting at a
    /// time, keep only what is proven better, roll back the rest. Options:
    /// `params` (s: JSON object: interface, peer, runs, time_s,
    /// min_gain_percent, confirm_timeout_s, dry_run, no_persist, no_mtu,
    /// tries), `detached` (b). Kept changes wait for `Job.Confirm`; without it
    /// before the confirm timeout they are rolled back. Needs the tune
    /// authorization (and persist unless no_persist). Returns the job's path.
    async fn tune(
        &self,
        options: HashMap<String, OwnedVariant>,
        #[zbus(header)] hdr: Header<'_>,
        #[zbus(connection)] conn: &Connection,
    ) -> Result<OwnedObjectPath> {
        bounded(&[("options", &options)])?;
        let o = TuneOptions::decode(&options)?;
        // Refuse callers without the tune authorization before looking at the params.
        let mut caller = auth::authorize(conn, &hdr, &verb::TUNE.actions(false), "tune").await?;
        let p = super::tune::check(o.params)?;
        let link = self
            .daemon
            .link_by_name(&p.interface)
            .ok_or_else(|| no_such(&p.interface))?;
        if !p.no_persist && !p.dry_run {
            caller = auth::authorize(
                conn,
                &hdr,
                &verb::TUNE.actions(true),
                &format!("tune {}", p.interface),
            )
            .await?;
        }
        let claim = link.claim(format!("a tune (uid {})", caller.uid_text()))?;
        let kind = format!("tune:{}", p.interface);
        let who = caller.requester(true);
        let (work, flag) = super::tune::prepare(p, self.daemon.opts.paths.clone(), who);
        let new = job::NewJob {
            kind,
            owner: caller,
            detached: o.detached,
            claim: Some(claim),
            confirm: Some(flag),
            measures: true,
            objects: vec![link::path(link.ifindex)],
            progress_valid: false,
        };
        job::start(conn, &self.daemon, new, work).await
    }

    /// Diagnose as a job (the findings of `hlctl doctor`). The read-only
    /// checks are open to everyone; every measurement it would make (the
    /// CPU stress with `stress_s` > 0, transfers and probes to `peer`, the
    /// disk run in `dirs` with `disk_size_mib` > 0) needs run-benchmark. A
    /// caller without it gets the read-only checks, with each measurement
    /// left out under `not_checked` saying why. Options (defaults those of
    /// `hlctl doctor`): `interfaces` (as), `peer` (s: HOST[:PORT]), `dirs`
    /// (as, absolute), `runs` (u, 1 to 20), `stress_s` (u, 0 to 600),
    /// `disk_size_mib` (u, 0 to 1048576), `time_s` (u, 1 to 60), `detached`
    /// (b), `workloads` (as: `plex-4k:3`, `need:net=400M,cpu=3000`; judged
    /// in the report's `workloads`, their CPU and random-read runs need
    /// run-benchmark too). The job's result is the doctor's report; it is
    /// stored in the history only when its measurements were authorized (or
    /// the caller is root). Returns the job's path.
    async fn doctor(
        &self,
        options: HashMap<String, OwnedVariant>,
        #[zbus(header)] hdr: Header<'_>,
        #[zbus(connection)] conn: &Connection,
    ) -> Result<OwnedObjectPath> {
        bounded(&[("options", &options)])?;
        let asked = crate::dbus::wire::doctor::DoctorParams::decode(&options)?;
        let grant = super::doctor::authorize(conn, &hdr, asked).await?;
        let new = job::NewJob {
            measures: grant.measures(),
            objects: self.paths_of(&grant.params.request.interfaces),
            ..job::NewJob::measuring("doctor", grant.owner.clone(), grant.params.detached)
        };
        let work = super::doctor::prepare(grant, self.daemon.opts.paths.clone());
        job::start(conn, &self.daemon, new, work).await
    }

    /// Run the benchmark report (network to each peer, disk in each
    /// directory, CPU) as a job (polkit `run-benchmark`). Options (defaults
    /// those of `hlctl report`): `peers` (as, HOST[:PORT]), `dirs` (as,
    /// absolute), `time_s` (u, 1 to 60), `disk_size_mib` (u, 1 to 1048576),
    /// `bench_time_s` (u, 1 to 600), `detached` (b). The job's result is the
    /// report; it is stored in the history. Returns the job's path.
    async fn report(
        &self,
        options: HashMap<String, OwnedVariant>,
        #[zbus(header)] hdr: Header<'_>,
        #[zbus(connection)] conn: &Connection,
    ) -> Result<OwnedObjectPath> {
        bounded(&[("options", &options)])?;
        let p = crate::dbus::wire::report::ReportParams::decode(&options)?;
        let owner = auth::authorize(conn, &hdr, &verb::REPORT.actions(false), "report").await?;
        let who = owner.requester(true);
        let new = job::NewJob::measuring("report", owner, p.detached);
        let work = super::report::prepare(p, self.daemon.opts.paths.clone(), who);
        job::start(conn, &self.daemon, new, work).await
    }

    /// Run the scheduled check (`hlctl check`) as a job (polkit
    /// `run-benchmark`): hlctld's `[check]` configuration with these
    /// overrides: Options, each optional (absent: as configured): `peers` (as,
    /// HOST[:PORT]), `dirs` (as, absolute), `no_cpu` (b), `baseline` (s),
    /// `time_s` (u, 1 to 60), `bench_time_s` (u, 1 to 600), `disk_size_mib`
    /// (u, 1 to 1048576), `busy_window_s` (u, 0 to 86400),
    /// `if_kernel_changed` (b), `detached` (b). The check is stored in the
    /// history under the caller's uid, compared, its regressions logged to
    /// the journal and the Prometheus textfile rewritten; the job's result
    /// is the outcome (`passed` b: no regression, failure or need short).
    /// Returns the job's path.
    async fn check(
        &self,
        options: HashMap<String, OwnedVariant>,
        #[zbus(header)] hdr: Header<'_>,
        #[zbus(connection)] conn: &Connection,
    ) -> Result<OwnedObjectPath> {
        bounded(&[("options", &options)])?;
        let p = crate::dbus::wire::check::CheckParams::decode(&options)?;
        let owner = auth::authorize(conn, &hdr, &verb::CHECK.actions(false), "check").await?;
        let who = owner.requester(true);
        let new = job::NewJob::measuring("check", owner, p.detached);
        let work = super::check::prepare(p, self.daemon.opts.paths.clone(), who);
        job::start(conn, &self.daemon, new, work).await
    }

    /// Stored results, newest first; open to everyone. `filter`: `kind` (s:
    /// net, disk, cpu, doctor, tune, report, check), `since` (x, Unix
    /// seconds), `limit` (u, 1 to 10000, default 50). Each row: `id` x, `ts` x,
    /// `kind` s, `host` s, `kernel` s, `interface` s and `peer` s (when there
    /// is one), `uid` u (who asked; absent in rows stored before it was
    /// recorded), `metrics` a(sssdb) (name, subject, value, unit, higher is
    /// better), `settings` a{ss}, `result_json` s.
    async fn list_history(&self, filter: HashMap<String, OwnedVariant>) -> Result<Vec<Dict>> {
        bounded(&[("filter", &filter)])?;
        records::list_history(&self.daemon, &filter).await
    }

    /// Saved baselines; open to everyone. Each: `name` s, `ts` x, `host` s,
    /// `metrics` u.
    async fn list_baselines(&self) -> Result<Vec<Dict>> {
        records::list_baselines(&self.daemon).await
    }

    /// The latest results against baseline `name` ("" = the newest); open to
    /// everyone. `options`: `threshold` (d, percent, 0..=1000, default 10).
    /// Returns `baseline` s, `baseline_ts` x, `threshold_percent` d,
    /// `regressions` u, `verdicts` a(ssss) (metric, subject, verdict, text),
    /// `json` s (the whole comparison).
    async fn compare(&self, name: &str, options: HashMap<String, OwnedVariant>) -> Result<Dict> {
        check_strings("name", std::iter::once(name))?;
        bounded(&[("options", &options)])?;
        records::compare(&self.daemon, name, &options).await
    }

    /// How busy a link was (hlctld samples every physical link's counters
    /// every 10 s); open to everyone. `iface` "" = every sampled link.
    /// `options`: `days` (u, 1 to 3660, default 30). Returns `links` as,
    /// `verdicts` as (one per link, in the owner's words), `faster_helps` ab
    /// (one per link), `json` s (the whole answer: per direction the peak,
    /// the 95th percentile, the time above 50/80/95 % of the speed, the
    /// bytes, the busiest hours, the verdict's evidence).
    async fn usage(&self, iface: &str, options: HashMap<String, OwnedVariant>) -> Result<Dict> {
        check_strings("iface", std::iter::once(iface))?;
        bounded(&[("options", &options)])?;
        records::usage(&self.daemon, iface, &options).await
    }

    /// Save the latest value of every metric as baseline `name`, replacing an
    /// older one of that name (polkit `save-baseline`). Returns how many
    /// metrics it holds.
    async fn save_baseline(
        &self,
        name: &str,
        #[zbus(header)] hdr: Header<'_>,
        #[zbus(connection)] conn: &Connection,
    ) -> Result<u32> {
        check_strings("name", std::iter::once(name))?;
        records::save_baseline(&self.daemon, conn, &hdr, name).await
    }

    /// Pending tune checkpoints with their deadlines and the last tune of each
    /// interface; open to everyone. Returns `pending` u, `last_tunes` u,
    /// `deadlines` a(ssx) (interface, tune id, deadline in Unix ms), `json` s
    /// (the whole status).
    async fn tune_status(&self) -> Result<Dict> {
        records::tune_status(&self.daemon).await
    }

    /// Restore a pending tune's journal, else undo the last tune of
    /// `interface` ("" = every interface) live and in the persisted files
    /// (polkit `tune`). Returns `pending_restored` u, `undone` u, `failed` b,
    /// `json` s (the whole report).
    async fn rollback(
        &self,
        interface: &str,
        #[zbus(header)] hdr: Header<'_>,
        #[zbus(connection)] conn: &Connection,
    ) -> Result<Dict> {
        check_strings("interface", std::iter::once(interface))?;
        records::rollback(&self.daemon, conn, &hdr, interface).await
    }
}

/// A sysctl change: at once (`try_s` 0), or kept only once confirmed.
fn sysctl_change(
    paths: &crate::paths::Paths,
    values: &[(String, String)],
    (dry_run, persist): (bool, bool),
    try_s: u32,
) -> Result<(sysctl::set::SysctlReply, Option<ops::try_change::Pending>)> {
    if try_s == 0 {
        return Ok((ops::sysctl::set(paths, values, dry_run, persist)?, None));
    }
    let timeout = std::time::Duration::from_secs(try_s.into());
    ops::try_change::begin_sysctl(paths, values, persist, timeout).map_err(super::try_job::error)
}

/// hlctld's log lines of a sysctl change.
fn log_sysctl(caller: &auth::Caller, reply: &sysctl::set::SysctlReply) {
    for c in &reply.changes {
        info!(
            caller_uid = %caller.uid_text(),
            sender = %caller.sender,
            action = "set-sysctl",
            key = %c.key,
            "sysctl {}: {} -> {}",
            c.key,
            c.before,
            c.after.as_deref().unwrap_or("-")
        );
    }
    if let Some(f) = &reply.failed {
        warn!(caller_uid = %caller.uid_text(), "sysctl change failed: {f}");
    }
    if let Some(p) = &reply.persisted {
        info!(caller_uid = %caller.uid_text(), action = "persist", "sysctls persisted in {p}");
    }
}
