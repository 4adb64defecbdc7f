//! `hlctl rollback [IFACE]`: restore a pending journal (a tune that did not
//! finish), else the state from before the last finished tune, live and in
//! the persisted files.

use serde::{Deserialize, Serialize};

use super::TuneError;
use super::checkpoint::{self, Restored};
use super::persist;
use super::target::apply_live;
use crate::nic::netlink::Netlink;
use crate::paths::Paths;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct RollbackReport {
    /// Journals of unfinished tunes that were restored.
    pub(crate) pending_restored: Vec<Restored>,
    /// The last finished tune that was undone, per interface.
    pub(crate) undone: Vec<Undone>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Undone {
    pub(crate) interface: String,
    pub(crate) tune_id: String,
    pub(crate) restored: super::Change,
    pub(crate) files: Vec<String>,
}

/// Apply a journal's original values for real.
pub(crate) fn restore_journal(
    paths: &Paths,
) -> impl FnMut(&checkpoint::Journal) -> Vec<String> + Send + 'static {
    let paths = paths.clone();
    move |j| match Netlink::new() {
        Err(e) => vec![format!("netlink: {e}")],
        Ok(mut nl) => match apply_live(&mut nl, &paths, &j.interface, &j.original) {
            Ok(()) => Vec::new(),
            Err(e) => vec![e],
        },
    }
}

/// Roll back `iface` (or every interface).
pub(crate) fn rollback(paths: &Paths, iface: Option<&str>) -> Result<RollbackReport, TuneError> {
    let mut restore = restore_journal(paths);
    let pending = checkpoint::restore_now(paths, iface, &mut restore);
    let mut undone = Vec::new();
    if pending.is_empty() {
        let names: Vec<String> = match iface {
            Some(i) => vec![i.to_string()],
            None => std::fs::read_dir(checkpoint::dir(paths))
                .map(|rd| {
                    rd.flatten()
                        .filter_map(|e| {
                            let n = e.file_name().to_string_lossy().into_owned();
                            n.strip_prefix("last-")?
                                .strip_suffix(".json")
                                .map(str::to_string)
                        })
                        .collect()
                })
                .unwrap_or_default(),
        };
        for name in names {
            let Some(last) = persist::load_last(paths, &name)? else {
                continue;
            };
            let mut nl = Netlink::new()
                .map_err(|e| TuneError::Nic(crate::nic::error::NicError::Connect(e)))?;
            apply_live(&mut nl, paths, &last.interface, &last.original)
                .map_err(TuneError::Restore)?;
            let files = persist::unpersist(paths, &last)?;
            let p = persist::last_path(paths, &name);
            std::fs::remove_file(&p).map_err(|e| TuneError::io(&p, e))?;
            undone.push(Undone {
                interface: last.interface,
                tune_id: last.tune_id,
                restored: last.original,
                files,
            });
        }
    }
    Ok(RollbackReport {
        pending_restored: pending,
        undone,
    })
}
