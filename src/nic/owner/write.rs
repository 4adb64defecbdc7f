//! Persisting settings through the managers that own them, and undoing
//! that: [`edit_nm`] (the NetworkManager profile), [`edit_netplan`] (hlctl's
//! netplan file), [`edit_ifupdown`] (the stanza's line), [`edit_networkd`]
//! (hlctl's drop-ins), in that order, each taking the settings the ones
//! before it did not. Each line or key written is a [`Placed`].

use serde_json::Value;

use super::error::OwnerError;
use super::placed::{Placed, requested};
use super::{Manager, Roots, edit_ifupdown, edit_netplan, edit_networkd, edit_nm};
use crate::nic::model::ChangeSet;

/// One manager's step: write what it can of the settings asked for.
type Step<'a> = &'a dyn Fn(&[(String, Value)]) -> Result<Vec<Placed>, OwnerError>;

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
    let steps: [Step; 4] = [
        &|w| edit_nm::persist(roots, iface, w),
        &|w| edit_netplan::persist(roots, iface, ifindex, w),
        &|w| edit_ifupdown::persist(roots, iface, w),
        &|w| edit_networkd::persist(roots, iface, ifindex, w),
    ];
    let wanted = requested(cs);
    for step in steps {
        let left: Vec<(String, Value)> = wanted
            .iter()
            .filter(|(n, _)| !done.iter().any(|p| p.settings.contains(n)))
            .cloned()
            .collect();
        match step(&left) {
            Ok(p) => done.extend(p),
            Err(e) => {
                let _ = undo(roots, iface, &done);
                return Err(e);
            }
        }
    }
    Ok(done)
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
        let r = match p.manager {
            Manager::Ifupdown2 | Manager::Ifupdown => {
                edit_ifupdown::set_back(roots, iface, p, target)
            }
            Manager::NetworkManager => edit_nm::set_back(roots, iface, p, target),
            Manager::Netplan => edit_netplan::set_back(roots, iface, p, target),
            Manager::Networkd | Manager::LinkFile => {
                edit_networkd::set_back(roots, iface, p, target)
            }
        };
        if let Err(e) = r {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}
