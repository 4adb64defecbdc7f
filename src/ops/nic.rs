//! The operations on links: `show`, `set` (validate, snapshot, apply, read
//! back, restore on failure; persist when asked).

use crate::nic::error::NicError;
use crate::nic::model::{ChangeSet, Interface};
use crate::nic::netlink::Netlink;
use crate::nic::set::SetReply;
use crate::paths::Paths;

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
/// the link's network managers read it and record it in hlctl's state file.
pub(crate) fn set(
    nl: &mut Netlink,
    paths: &Paths,
    iface: &str,
    cs: &ChangeSet,
    dry_run: bool,
    persist: bool,
) -> Result<SetReply, NicError> {
    crate::nic::set::apply_and_persist(nl, paths, iface, cs, dry_run, persist)
}
