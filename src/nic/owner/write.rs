//! Persisting settings through the managers that own them, and undoing
//! that ([`edit_ifupdown`]: the stanza's line; [`edit_networkd`]: hlctl's
//! drop-ins). Each line or key written is a [`Placed`].

use super::error::OwnerError;
use super::placed::Placed;
use super::{Manager, Roots, edit_ifupdown, edit_networkd, edit_nm};
use crate::nic::model::ChangeSet;

/// Write `cs` for `iface` where the managers that own its settings read
/// them. On a failure half-way, what was written is undone.
pub(crate) fn persist(
    roots: &Roots,
    iface: &str,
    ifindex: u32,
    cs: &ChangeSet,
) -> Result<Vec<Placed>, OwnerError> {
    let mut done = Vec::new();
    if !roots.managed_ns {
        return Ok(done);
    }
    edit_nm::check(roots, iface, cs)?;
    let steps: [&dyn Fn() -> Result<Vec<Placed>, OwnerError>; 2] =
        [&|| edit_ifupdown::persist(roots, iface, cs), &|| {
            edit_networkd::persist(roots, iface, ifindex, cs)
        }];
    for step in steps {
        match step() {
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
            _ => edit_networkd::set_back(roots, iface, p, target),
        };
        if let Err(e) = r {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}
