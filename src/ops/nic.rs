//! The operations on links: `show`, `set` (validate, snapshot, apply, read
//! back, restore on failure; persist when asked).

use crate::nic::error::NicError;
use crate::nic::model::{ChangeSet, Interface};
use crate::nic::netlink::Netlink;
use crate::nic::set::SetReply;
use crate::paths::Paths;

/// `show`: the named interfaces, or all of them (physical first).
pub(crate) fn show(nl: &mut Netlink, names: &[String]) -> Result<Vec<Interface>, NicError> {
    crate::nic::read::interfaces(nl, names)
}

/// `set`: apply (or plan) `cs` on `iface`, recording it in hlctl's state
/// file when `persist`.
pub(crate) fn set(
    nl: &mut Netlink,
    paths: &Paths,
    iface: &str,
    cs: &ChangeSet,
    dry_run: bool,
    persist: bool,
) -> Result<SetReply, NicError> {
    let state = paths.nic_state_file();
    crate::nic::set::apply_and_persist(nl, &state, iface, cs, dry_run, persist)
}
