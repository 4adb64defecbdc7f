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
/// the network managers that own its settings and its queue layout.
pub(crate) fn show(
    nl: &mut Netlink,
    paths: &Paths,
    names: &[String],
) -> Result<Vec<Interface>, NicError> {
    let mut list = crate::nic::read::interfaces(nl, names)?;
    crate::nic::owner::annotate(&crate::nic::owner::Roots::new(paths), &mut list);
    let names: Vec<&str> = list.iter().map(|i| i.name.as_str()).collect();
    let layouts = queues(&names);
    for (i, q) in list.iter_mut().zip(layouts) {
        i.queues = Some(q);
    }
    Ok(list)
}

/// `show`'s queue and interrupt layout of each of `ifaces` (sysfs and
/// procfs as this process sees them, RSS by ethtool netlink), in their order, with the host-wide
/// part read once for all of them: the in-process `show` and hlctld's
/// `Link.Describe()` and `Manager.DescribeLinks` all take it from here
/// (hlctld on one blocking thread for the whole call, not one per link).
pub(crate) fn queues<S: AsRef<str>>(ifaces: &[S]) -> Vec<crate::cpu::layout::QueueLayout> {
    let host = crate::cpu::layout::host();
    let mut nl = Netlink::new().ok();
    ifaces
        .iter()
        .map(|i| {
            let mut q = crate::cpu::layout::read_with(&host, i.as_ref());
            q.rss = nl.as_mut().and_then(|nl| nl.rss(i.as_ref()).ok().flatten());
            q
        })
        .collect()
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
    // The devices under a bridge or bond whose MTU the set may also persist
    // (nic::set::ports_at_mtu): their entries and manager keys as they are.
    let below: Vec<String> = match (cs.mtu, &now.stack) {
        (Some(_), Some(st)) => st.below(iface).iter().map(|m| m.name.clone()).collect(),
        _ => Vec::new(),
    };
    let placed_of = |n: &str, mac: Option<&str>| {
        let e = state.find(n, mac);
        (
            n.to_string(),
            e.map(|e| e.placed.clone()).unwrap_or_default(),
        )
    };
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
            stack: below
                .iter()
                .map(|n| (n.clone(), state.find(n, None).map(|e| e.settings.clone())))
                .collect(),
            placed: std::iter::once(placed_of(iface, now.mac.as_deref()))
                .chain(below.iter().map(|n| placed_of(n, None)))
                .collect(),
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
    #[error("{iface}: no persisted RPS or XPS in {file}: a udev rule would write nothing")]
    NothingForUdev { iface: String, file: String },
}

/// `export IFACE`: the persisted settings of `iface` as a systemd `.link`
/// file, or (`udev`) their RPS as a udev rule (found by the live MAC when
/// the link is there, so a rename does not lose them; else by name).
pub(crate) fn export(paths: &Paths, iface: &str, udev: bool) -> Result<String, ExportError> {
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
    let (mac, cs) = (entry.mac.as_deref(), &entry.settings);
    if !udev {
        return Ok(crate::nic::export::systemd_link(iface, mac, cs));
    }
    crate::nic::export::udev_rule(iface, mac, cs).ok_or_else(|| ExportError::NothingForUdev {
        iface: iface.to_string(),
        file: file.display().to_string(),
    })
}
