//! What hlctl keeps, from the command line: the verbs that read it
//! (history, baselines, compare, status) or change it (baseline save,
//! rollback), through hlctld or in this process as [`Backend::select`]
//! decides for every verb (reads open to everyone, changes through polkit),
//! and the warning when a row of work done in this process could not be
//! stored. Both paths return the same types, so output and exit codes do not
//! depend on the path.

use std::collections::HashMap;

use zbus::Variant;

use super::backend::{Backend, Need};
use super::error::CliError;
use super::exit;
use super::global::Global;
use super::remote::{Remote, remote_error};
use crate::dbus::wire::error::Error as WireError;
use crate::dbus::wire::records::{self, HistoryFilter};
use crate::history::compare::{BaselineInfo, Comparison};
use crate::history::store::StoredResult;
use crate::history::{HistoryError, Kind};
use crate::ops::bench::Ran;
use crate::ops::records as ops;
use crate::ops::row_store::Stored;
use crate::paths::Paths;
use crate::tune::rollback::RollbackReport;
use crate::tune::status::Status;
use crate::usage::answer::UsageAnswer;

enum Where {
    Local(Paths),
    Bus(Remote),
}

/// Where the work happens: [`Backend::select`]'s one rule.
fn select(global: &Global, need: Need) -> Result<Where, CliError> {
    Ok(match Backend::select(global, need)? {
        Backend::Local { paths, .. } => Where::Local(*paths),
        Backend::Bus(r) => Where::Bus(r),
    })
}

/// The exit code of a history failure: the caller's mistake (2) or not (1).
pub(crate) fn history_code(e: &HistoryError) -> i32 {
    e.class().exit_code()
}

fn local_err(e: HistoryError) -> CliError {
    CliError::new(e.to_string(), history_code(&e))
}

fn wire_err(e: WireError) -> CliError {
    match e {
        WireError::InvalidArgument(m) => CliError::new(m, exit::INVALID),
        WireError::Failed(m) => CliError::new(m, exit::FAILED),
        other => CliError::new(format!("{other:?}"), exit::FAILED),
    }
}

/// `hlctl history`: stored results, newest first.
pub(crate) fn history(
    global: &Global,
    filter: HistoryFilter,
) -> Result<Vec<StoredResult>, CliError> {
    match select(global, Need::Nothing)? {
        Where::Local(p) => {
            ops::history(&p, filter.kind, filter.since, filter.limit).map_err(local_err)
        }
        Where::Bus(r) => {
            let rows =
                r.rt.block_on(r.manager.list_history(filter.encode()))
                    .map_err(remote_error)?;
            rows.iter()
                .map(|m| records::decode_row(m).map_err(wire_err))
                .collect()
        }
    }
}

/// `hlctl baseline list`.
pub(crate) fn baselines(global: &Global) -> Result<Vec<BaselineInfo>, CliError> {
    match select(global, Need::Nothing)? {
        Where::Local(p) => ops::baselines(&p).map_err(local_err),
        Where::Bus(r) => {
            let rows =
                r.rt.block_on(r.manager.list_baselines())
                    .map_err(remote_error)?;
            rows.iter()
                .map(|m| records::decode_baseline(m).map_err(wire_err))
                .collect()
        }
    }
}

/// `hlctl baseline save NAME`: how many metrics it holds.
pub(crate) fn save_baseline(global: &Global, name: &str) -> Result<usize, CliError> {
    match select(global, Need::Nothing)? {
        Where::Local(p) => ops::save_baseline(&p, name).map_err(local_err),
        Where::Bus(r) => {
            r.rt.block_on(r.manager.save_baseline(name))
                .map(|n| n as usize)
                .map_err(remote_error)
        }
    }
}

/// `hlctl compare [NAME]`.
pub(crate) fn compare(
    global: &Global,
    name: Option<&str>,
    threshold: f64,
) -> Result<Comparison, CliError> {
    match select(global, Need::Nothing)? {
        Where::Local(p) => ops::compare(&p, name, threshold).map_err(local_err),
        Where::Bus(r) => {
            let mut opts: HashMap<&str, Variant<'_>> = HashMap::new();
            opts.insert("threshold", Variant::F64(threshold));
            let m =
                r.rt.block_on(r.manager.compare(name.unwrap_or(""), opts))
                    .map_err(remote_error)?;
            records::decode_comparison(&m).map_err(wire_err)
        }
    }
}

/// `hlctl usage [IFACE] [--days N]`.
pub(crate) fn usage(
    global: &Global,
    iface: Option<&str>,
    days: u32,
) -> Result<UsageAnswer, CliError> {
    match select(global, Need::Nothing)? {
        Where::Local(p) => crate::ops::usage::usage(&p, iface, days).map_err(local_err),
        Where::Bus(r) => {
            let mut opts: HashMap<&str, Variant<'_>> = HashMap::new();
            opts.insert("days", Variant::U32(days));
            let m =
                r.rt.block_on(r.manager.usage(iface.unwrap_or(""), opts))
                    .map_err(remote_error)?;
            records::decode_usage(&m).map_err(wire_err)
        }
    }
}

/// `hlctl status`.
pub(crate) fn status(global: &Global) -> Result<Status, CliError> {
    match select(global, Need::Nothing)? {
        Where::Local(p) => Ok(ops::status(&p)),
        Where::Bus(r) => {
            let m =
                r.rt.block_on(r.manager.tune_status())
                    .map_err(remote_error)?;
            records::decode_status(&m).map_err(wire_err)
        }
    }
}

/// `hlctl rollback [IFACE]`.
pub(crate) fn rollback(global: &Global, iface: Option<&str>) -> Result<RollbackReport, CliError> {
    match select(global, Need::Privilege)? {
        Where::Local(p) => {
            ops::rollback(&p, iface).map_err(|e| CliError::new(e.to_string(), exit::FAILED))
        }
        Where::Bus(r) => {
            let m =
                r.rt.block_on(r.manager.rollback(iface.unwrap_or("")))
                    .map_err(remote_error)?;
            records::decode_rollback(&m).map_err(wire_err)
        }
    }
}

/// The `--kind` of `hlctl history`, checked.
pub(crate) fn kind(s: Option<&str>) -> Result<Option<Kind>, CliError> {
    s.map(Kind::parse).transpose().map_err(local_err)
}

fn warn(stored: &Stored) {
    if let Some(w) = stored.warning() {
        super::unstored::say(&w);
    }
}

/// The report of an operation run in this process, after warning when its
/// row could not be stored.
pub(crate) fn warn_unstored<R>(ran: Ran<R>) -> R {
    warn(&ran.stored);
    ran.report
}
