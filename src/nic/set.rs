//! Apply a change set and optionally persist it: the one call behind both
//! `hlctl set --local` and the daemon's `Link.ApplyChanges`.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::nic::apply::{self, Outcome};
use crate::nic::error::NicError;
use crate::nic::model::ChangeSet;
use crate::nic::netlink::Netlink;
use crate::nic::{persist, read, validate};

/// The result of a `set`: the change-set outcome and where it was persisted.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct SetReply {
    #[serde(flatten)]
    pub(crate) outcome: Outcome,
    /// The state file the settings were recorded in (`--persist`).
    pub(crate) persisted: Option<String>,
    /// The settings were applied but could not be persisted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) persist_error: Option<String>,
}

/// Validate and apply `cs` to `name` (or only plan it when `dry_run`); when
/// `persist` and everything applied, record the validated settings in `state_file`.
pub(crate) fn apply_and_persist(
    nl: &mut Netlink,
    state_file: &Path,
    name: &str,
    cs: &ChangeSet,
    dry_run: bool,
    persist_it: bool,
) -> Result<SetReply, NicError> {
    let outcome = apply::apply(nl, name, cs, dry_run)?;
    let mut reply = SetReply {
        outcome,
        persisted: None,
        persist_error: None,
    };
    if persist_it && !dry_run && reply.outcome.ok() {
        match record(nl, state_file, name, cs) {
            Ok(()) => reply.persisted = Some(state_file.display().to_string()),
            Err(e) => reply.persist_error = Some(e.to_string()),
        }
    }
    Ok(reply)
}

fn record(nl: &mut Netlink, state_file: &Path, name: &str, cs: &ChangeSet) -> Result<(), NicError> {
    let iface = read::interface(nl, name)?;
    // Store kernel names (`rx-gro`, not `gro`), so re-applying never depends on aliases.
    let cs = validate::validate(&iface, cs).map_err(|problems| NicError::Invalid {
        iface: name.to_string(),
        problems,
    })?;
    persist::record(state_file, name, iface.mac.as_deref(), &cs)
}
