//! Validate, apply and optionally persist sysctl assignments: the one call
//! behind both `hlctl sysctl K=V --local` and the daemon's `SetSysctl`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::persist::{self, Override};
use super::{Change, SysctlError};
use crate::paths::Paths;

/// The result of a sysctl change request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SysctlReply {
    pub(crate) dry_run: bool,
    pub(crate) changes: Vec<Change>,
    /// The write that failed; every earlier write was restored.
    pub(crate) failed: Option<String>,
    pub(crate) restore_errors: BTreeMap<String, String>,
    /// The sysctl.d file the values were written to.
    pub(crate) persisted: Option<String>,
    /// Files applied after ours at boot that set the same keys.
    pub(crate) overridden_by: Vec<Override>,
    /// The values were applied but could not be persisted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) persist_error: Option<String>,
}

/// Validate every assignment (nothing changes on a problem), then apply
/// unless `dry_run` (`applied` runs once the writes and their restore on a
/// failure are done), then persist when asked and everything applied.
pub(crate) fn set(
    paths: &Paths,
    assignments: &[(String, String)],
    dry_run: bool,
    persist_it: bool,
    applied: impl FnOnce(),
) -> Result<SysctlReply, SysctlError> {
    let plan = super::plan(paths, assignments)?;
    if dry_run {
        return Ok(SysctlReply {
            dry_run: true,
            changes: plan,
            ..Default::default()
        });
    }
    let outcome = super::apply(paths, plan);
    applied();
    let mut reply = SysctlReply {
        dry_run: false,
        changes: outcome.changes,
        failed: outcome.failed,
        restore_errors: outcome.restore_errors,
        ..Default::default()
    };
    if persist_it && reply.failed.is_none() {
        let values: BTreeMap<String, String> = reply
            .changes
            .iter()
            .map(|c| (c.key.clone(), c.requested.clone()))
            .collect();
        match persist::persist(paths, &values) {
            Ok(p) => {
                reply.persisted = Some(p.display().to_string());
                reply.overridden_by =
                    persist::overrides(paths, &values.keys().cloned().collect::<Vec<_>>());
            }
            Err(e) => reply.persist_error = Some(e.to_string()),
        }
    }
    Ok(reply)
}
