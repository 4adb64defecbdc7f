//! The operations on links: `show`, `set` (validate, snapshot, apply, read
//! back, restore on failure; persist when asked).

use std::time::Duration;

use tracing::warn;

use crate::nic::apply::{Guard, Unguarded};
use crate::nic::error::NicError;
use crate::nic::model::{ChangeSet, Interface};
use crate::nic::netlink::Netlink;
use crate::nic::set::SetReply;
use crate::paths::Paths;
use crate::tune::change::Change;
use crate::tune::checkpoint::{Checkpoint, Journal, Phase};
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
    set_guarded(
        nl,
        paths,
        iface,
        cs,
        dry_run,
        persist,
        &mut SetJournal::new(paths),
    )
}

/// [`set`] inside a try's journal, which already holds the snapshot (and
/// whose lock it runs under): no journal of its own.
pub(crate) fn set_in_try(
    nl: &mut Netlink,
    paths: &Paths,
    iface: &str,
    cs: &ChangeSet,
) -> Result<SetReply, NicError> {
    set_guarded(nl, paths, iface, cs, false, false, &mut Unguarded)
}

fn set_guarded(
    nl: &mut Netlink,
    paths: &Paths,
    iface: &str,
    cs: &ChangeSet,
    dry_run: bool,
    persist: bool,
    guard: &mut dyn Guard,
) -> Result<SetReply, NicError> {
    let undo = if persist && !dry_run {
        Some(undo_record(nl, paths, iface, cs)?)
    } else {
        None
    };
    let mut reply =
        crate::nic::set::apply_and_persist(nl, paths, iface, cs, dry_run, persist, guard)?;
    if let Some(last) = undo.filter(|_| reply.persisted.is_some())
        && let Err(e) = crate::tune::persist::save_last(paths, &last)
    {
        reply.persist_error = Some(format!(
            "persisted, but `hlctl rollback` cannot undo it: {e}"
        ));
    }
    Ok(reply)
}

/// The journal of a change set of several kernel requests (issue 39): the
/// snapshot of what it changes, written before its first request and
/// removed after its read-back, so that a crash between two requests (the
/// link half changed) is put back by whoever starts next (hlctld,
/// `hlctl reapply`, `hlctl rollback`). Kept beside a tune's or try's
/// journal of the same link (its own file, `journal-set:IFACE.json`). A
/// journal that cannot be written (a full or read-only disk) does not stop
/// the change: it runs as it did before there was one, and says so.
struct SetJournal<'a> {
    paths: &'a Paths,
    open: Option<Checkpoint>,
}

/// The id prefix of a change set's journal.
pub(crate) const SET_PREFIX: &str = "set-";

/// Long enough for any change set; a running hlctld's watchdog restores
/// the journal of a dead `hlctl --local set` once it passes.
const SET_JOURNAL_TIMEOUT: Duration = Duration::from_secs(300);

impl<'a> SetJournal<'a> {
    fn new(paths: &'a Paths) -> Self {
        SetJournal { paths, open: None }
    }
}

impl Guard for SetJournal<'_> {
    fn begin(&mut self, iface: &Interface, held: &ChangeSet) {
        let name = &iface.name;
        let first = Journal {
            phase: Phase::Trying {
                candidate: "set".into(),
            },
            original: Change {
                nic: held.clone(),
                ..Default::default()
            },
            ..Checkpoint::fresh(name, iface.mac.clone(), SET_JOURNAL_TIMEOUT, SET_PREFIX)
        };
        let key = format!("set:{name}");
        match Checkpoint::begin_keyed(self.paths, &key, SET_JOURNAL_TIMEOUT, first) {
            Ok(cp) => self.open = Some(cp),
            Err(e) => warn!(
                iface = %name,
                "the change set is not journalled (a crash half-way would leave it half applied): {e}"
            ),
        }
    }

    fn end(&mut self) {
        if let Some(cp) = self.open.take()
            && let Err(e) = cp.finish()
        {
            warn!("the change set's journal: {e}");
        }
    }
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
