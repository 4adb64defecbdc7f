//! The operations on links: `show`, `set` (validate, snapshot, apply, read
//! back, restore on failure; persist when asked).

use crate::nic::error::NicError;
use crate::nic::model::{ChangeSet, Interface};
use crate::nic::netlink::Netlink;
use crate::nic::set::SetReply;
use crate::paths::Paths;
use crate::tune::change::Change;
use crate::tune::persist::{LastTune, NicBefore};

/// `show`: the named interfaces, or all of them (physical first), each with
/// the network managers that own its settings.
pub(crate) fn show(
    nl: &mut Netlink,
    paths: &Paths,
    names: &[String],
) -> Result<Vec<Interface>, NicError> {
    let mut list = crate::nic::read::interfaces(nl, names)?;
    crate::nic::owner::annotate(&crate::nic::owner::Roots::new(paths), &mut list);
    Ok(list)
}

/// `set`: apply (or plan) `cs` on `iface`; when `persist`, write it where
/// the link's network managers read it, record it in hlctl's state file,
/// and keep what `hlctl rollback IFACE` needs to undo it (live values and
/// files), as a tune's record.
pub(crate) fn set(
    nl: &mut Netlink,
    paths: &Paths,
    iface: &str,
    cs: &ChangeSet,
    dry_run: bool,
    persist: bool,
) -> Result<SetReply, NicError> {
    let undo = if persist && !dry_run {
        Some(undo_record(nl, paths, iface, cs)?)
    } else {
        None
    };
    let mut reply = crate::nic::set::apply_and_persist(nl, paths, iface, cs, dry_run, persist)?;
    if let Some(last) = undo.filter(|_| reply.persisted.is_some())
        && let Err(e) = crate::tune::persist::save_last(paths, &last)
    {
        reply.persist_error = Some(format!(
            "persisted, but `hlctl rollback` cannot undo it: {e}"
        ));
    }
    Ok(reply)
}

/// What undoes a persisted `set`: the values `iface` holds now for the
/// settings of `cs`, and its entry in hlctl's state file (with the keys
/// written into the managers' files).
fn undo_record(
    nl: &mut Netlink,
    paths: &Paths,
    iface: &str,
    cs: &ChangeSet,
) -> Result<LastTune, NicError> {
    let now = crate::nic::read::interface(nl, iface)?;
    let state = crate::nic::persist::State::load(&paths.nic_state_file())?;
    let entry = state.find(iface, now.mac.as_deref());
    let ts = crate::host::now_unix();
    Ok(LastTune {
        tune_id: format!("set-{ts}"),
        ts,
        interface: iface.to_string(),
        mac: now.mac.clone(),
        original: Change {
            nic: crate::nic::registry::held(&now, cs),
            ..Default::default()
        },
        kept: Change {
            nic: cs.clone(),
            ..Default::default()
        },
        sysctl_file_before: None,
        nic_state_before: Some(NicBefore {
            entry: entry.map(|e| e.settings.clone()),
            stack: Default::default(),
            placed: [(
                iface.to_string(),
                entry.map(|e| e.placed.clone()).unwrap_or_default(),
            )]
            .into(),
        }),
    })
}

/// Why `export` has nothing to write.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExportError {
    #[error(transparent)]
    State(#[from] NicError),
    #[error(
        "{iface}: no persisted settings in {file} (persist some with `hlctl set {iface} ... --persist`)"
    )]
    NotPersisted { iface: String, file: String },
}

/// `export IFACE`: the persisted settings of `iface` as a systemd `.link`
/// file (found by the live MAC when the link is there, so a rename does not
/// lose them; else by name).
pub(crate) fn export(paths: &Paths, iface: &str) -> Result<String, ExportError> {
    let file = paths.nic_state_file();
    let state = crate::nic::persist::State::load(&file)?;
    let mac = Netlink::new()
        .ok()
        .and_then(|mut nl| crate::nic::read::interface(&mut nl, iface).ok())
        .and_then(|i| i.mac);
    let entry = state
        .find(iface, mac.as_deref())
        .ok_or_else(|| ExportError::NotPersisted {
            iface: iface.to_string(),
            file: file.display().to_string(),
        })?;
    Ok(crate::nic::export::systemd_link(
        iface,
        entry.mac.as_deref(),
        &entry.settings,
    ))
}
