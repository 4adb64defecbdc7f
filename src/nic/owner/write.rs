//! Persisting settings through the managers that own them, and undoing
//! that: [`edit_nm`] (the NetworkManager profile), [`edit_netplan`] (hlctl's
//! netplan file), [`edit_ifupdown`] (the stanza's line), [`edit_networkd`]
//! (hlctl's drop-ins), in that order, each taking the settings the ones
//! before it did not, each a [`Writer`]. Each line or key written is a
//! [`Placed`], set back by the writer of its manager.

use serde_json::Value;

use super::error::OwnerError;
use super::placed::{Placed, requested};
use super::writer::Writer;
use super::{Manager, Roots, edit_ifupdown, edit_netplan, edit_networkd, edit_nm};
use crate::nic::model::ChangeSet;

/// The writers, in the order they take the settings.
const WRITERS: [&dyn Writer; 4] = [
    &edit_nm::Nm,
    &edit_netplan::Netplan,
    &edit_ifupdown::Ifupdown,
    &edit_networkd::Networkd,
];

/// The writer that sets back the keys of `manager`.
fn writer_of(manager: Manager) -> &'static dyn Writer {
    WRITERS
        .into_iter()
        .find(|w| w.managers().contains(&manager))
        .expect("every manager has a writer (write_tests)")
}

/// Write `cs` for `iface` where the managers that own its settings read
/// them. On a failure half-way, what was written is undone.
pub(crate) fn persist(
    roots: &Roots,
    iface: &str,
    ifindex: u32,
    cs: &ChangeSet,
) -> Result<Vec<Placed>, OwnerError> {
    let mut done: Vec<Placed> = Vec::new();
    if !roots.managed_ns {
        return Ok(done);
    }
    let wanted = requested(cs);
    for writer in WRITERS {
        let left: Vec<(String, Value)> = wanted
            .iter()
            .filter(|(n, _)| !done.iter().any(|p| p.settings.contains(n)))
            .cloned()
            .collect();
        match writer.persist(roots, iface, ifindex, &left) {
            Ok(p) => done.extend(p),
            Err(e) => {
                let _ = undo(roots, iface, &done);
                return Err(e);
            }
        }
    }
    Ok(done)
}

/// One device to persist through its owners: name, ifindex, settings.
pub(crate) type Device<'a> = (&'a str, u32, &'a ChangeSet);

/// [`persist`] for several devices (an interface and its stack's members),
/// as one: on a failure, what was written for the others is undone.
pub(crate) fn persist_all(
    roots: &Roots,
    devices: &[Device],
) -> Result<Vec<Vec<Placed>>, OwnerError> {
    let mut done = Vec::new();
    for (name, ifindex, cs) in devices {
        match persist(roots, name, *ifindex, cs) {
            Ok(p) => done.push(p),
            Err(e) => {
                undo_all(roots, devices, &done);
                return Err(e);
            }
        }
    }
    Ok(done)
}

/// Undo what [`persist_all`] wrote for `devices` (best effort: a later
/// failure is what the caller reports).
pub(crate) fn undo_all(roots: &Roots, devices: &[Device], placed: &[Vec<Placed>]) {
    for ((name, _, _), pl) in devices.iter().zip(placed) {
        let _ = undo(roots, name, pl);
    }
}

/// Put every key back as it was before hlctl wrote it (newest first).
pub(crate) fn undo(roots: &Roots, iface: &str, placed: &[Placed]) -> Result<(), OwnerError> {
    restore(roots, iface, placed, &[])
}

/// Bring the keys in `now` back to `before` (an earlier record of the same
/// entry): a key in both gets its earlier value, a key only in `now` its
/// value from before hlctl wrote it.
pub(crate) fn restore(
    roots: &Roots,
    iface: &str,
    now: &[Placed],
    before: &[Placed],
) -> Result<(), OwnerError> {
    let mut first_error = None;
    for p in now.iter().rev() {
        let target = match before.iter().find(|b| b.same_key(p)) {
            Some(b) if b.value == p.value => continue,
            Some(b) => Some(b.value.clone()),
            None => p.before.clone(),
        };
        if let Err(e) = writer_of(p.manager).set_back(roots, iface, p, target) {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// Every manager's keys are set back by exactly one writer.
#[cfg(test)]
pub(super) fn writers_of(manager: Manager) -> usize {
    WRITERS
        .iter()
        .filter(|w| w.managers().contains(&manager))
        .count()
}
