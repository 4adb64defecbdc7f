//! What `hlctl status` shows: pending tune checkpoints with their deadlines,
//! and the last finished tune of each interface (what `hlctl rollback` would
//! undo). Read in-process or by hlctld for any local user.

use serde::{Deserialize, Serialize};

use super::checkpoint::{self, Journal};
use super::persist::{self, LastTune};
use crate::paths::Paths;

/// A tune's checkpoint that is applied and not yet confirmed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Pending {
    #[serde(flatten)]
    pub(crate) journal: Journal,
    /// Seconds until the deadline (negative: passed).
    pub(crate) seconds_left: f64,
    pub(crate) owner_alive: bool,
}

/// A persisted setting hlctld stopped re-applying: another program sets it
/// back (from the NIC state file).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Conflict {
    pub(crate) interface: String,
    pub(crate) setting: String,
    pub(crate) why: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Status {
    pub(crate) pending: Vec<Pending>,
    pub(crate) last_tunes: Vec<LastTune>,
    #[serde(default)]
    pub(crate) conflicts: Vec<Conflict>,
}

/// The pending checkpoints and the last tunes under `paths`.
pub(crate) fn status(paths: &Paths) -> Status {
    let now = checkpoint::now_ms();
    let pending = checkpoint::all(paths)
        .into_iter()
        .map(|(_, j)| Pending {
            seconds_left: (j.deadline_ms - now) as f64 / 1000.0,
            owner_alive: j.owner_alive(),
            journal: j,
        })
        .collect();
    Status {
        pending,
        last_tunes: last_tunes(paths),
        conflicts: conflicts(paths),
    }
}

fn conflicts(paths: &Paths) -> Vec<Conflict> {
    let Ok(state) = crate::nic::persist::State::load(&paths.nic_state_file()) else {
        return Vec::new();
    };
    state
        .interfaces
        .iter()
        .flat_map(|e| {
            e.conflicts.iter().map(|(setting, why)| Conflict {
                interface: e.name.clone(),
                setting: setting.clone(),
                why: why.clone(),
            })
        })
        .collect()
}

fn last_tunes(paths: &Paths) -> Vec<LastTune> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(checkpoint::dir(paths)) {
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if let Some(i) = n
                .strip_prefix("last-")
                .and_then(|x| x.strip_suffix(".json"))
                && let Ok(Some(l)) = persist::load_last(paths, i)
            {
                out.push(l);
            }
        }
    }
    out.sort_by(|a, b| a.interface.cmp(&b.interface));
    out
}
