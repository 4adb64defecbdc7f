//! The operations on what hlctl keeps: the history, baselines, a
//! comparison, the tune status and rollback. Reads open the database
//! read-write only to migrate it; nothing here records a row.

use crate::history::compare::{BaselineInfo, Comparison};
use crate::history::store::StoredResult;
use crate::history::{History, HistoryError, Kind};
use crate::host::HostInfo;
use crate::paths::Paths;
use crate::tune::TuneError;
use crate::tune::rollback::RollbackReport;
use crate::tune::status::Status;

pub(super) fn open(paths: &Paths) -> Result<History, HistoryError> {
    History::open(&paths.state_dir)
}

/// `history`: stored results, newest first.
pub(crate) fn history(
    paths: &Paths,
    kind: Option<Kind>,
    since: Option<i64>,
    limit: u32,
) -> Result<Vec<StoredResult>, HistoryError> {
    open(paths)?.list(kind, since, limit)
}

/// `baseline list`.
pub(crate) fn baselines(paths: &Paths) -> Result<Vec<BaselineInfo>, HistoryError> {
    open(paths)?.baselines()
}

/// `baseline save NAME`: how many metrics it holds.
pub(crate) fn save_baseline(paths: &Paths, name: &str) -> Result<usize, HistoryError> {
    open(paths)
        .map_err(HistoryError::into_write)?
        .save_baseline(name, &HostInfo::current())
}

/// `compare [NAME]`.
pub(crate) fn compare(
    paths: &Paths,
    name: Option<&str>,
    threshold: f64,
) -> Result<Comparison, HistoryError> {
    open(paths)?.compare(name, threshold)
}

/// `status`: pending tune checkpoints and the last tune of each interface.
pub(crate) fn status(paths: &Paths) -> Status {
    crate::tune::status::status(paths)
}

/// `rollback [IFACE]`.
pub(crate) fn rollback(paths: &Paths, iface: Option<&str>) -> Result<RollbackReport, TuneError> {
    crate::tune::rollback::rollback(paths, iface)
}
