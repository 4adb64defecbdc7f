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

/// Told when the writes of a set start and when they are over, as
/// [`crate::nic::apply::Guard`] is for a link: `ops::sysctl` journals the
/// values that several writes overwrite, for whoever starts next.
pub(crate) trait Guard {
    /// Before the first write: the validated plan (each key's value now).
    fn begin(&mut self, plan: &[Change]);
    /// After the writes (applied, or restored after a failure).
    fn end(&mut self);
}

/// No journal (a try's writes are journalled by the try).
pub(crate) struct Unguarded;

impl Guard for Unguarded {
    fn begin(&mut self, _: &[Change]) {}
    fn end(&mut self) {}
}

/// Validate every assignment (nothing changes on a problem), then apply
/// unless `dry_run` (inside `guard`), then persist when asked and
/// everything applied.
pub(crate) fn set(
    paths: &Paths,
    assignments: &[(String, String)],
    dry_run: bool,
    persist_it: bool,
    guard: &mut dyn Guard,
) -> Result<SysctlReply, SysctlError> {
    let plan = super::plan(paths, assignments)?;
    if dry_run {
        return Ok(SysctlReply {
            dry_run: true,
            changes: plan,
            ..Default::default()
        });
    }
    guard.begin(&plan);
    let outcome = super::apply(paths, plan);
    guard.end();
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
