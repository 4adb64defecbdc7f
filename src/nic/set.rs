//! Apply a change set and optionally persist it: the one call behind both
//! `hlctl set --local` and the daemon's `Link.ApplyChanges`.

use serde::{Deserialize, Serialize};

use crate::nic::apply::{self, Outcome};
use crate::nic::error::NicError;
use crate::nic::model::ChangeSet;
use crate::nic::netlink::Netlink;
use crate::nic::owner::{self, Roots, placed::Placed};
use crate::nic::{persist, read, validate};
use crate::paths::Paths;

/// The result of a `set`: the change-set outcome and where it was persisted.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct SetReply {
    #[serde(flatten)]
    pub(crate) outcome: Outcome,
    /// The state file the settings were recorded in (`--persist`).
    pub(crate) persisted: Option<String>,
    /// Where the settings also went: the lines and keys written into the
    /// files of the network managers that own them (`mtu 9000 in iface vmbr0
    /// of /etc/network/interfaces`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) persisted_through: Vec<String>,
    /// The settings were applied but could not be persisted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) persist_error: Option<String>,
}

/// Validate and apply `cs` to `name` (or only plan it when `dry_run`); when
/// `persist` and everything applied, write the validated settings where the
/// link's network managers read them ([`owner::write`]) and record them in
/// hlctl's state file.
pub(crate) fn apply_and_persist(
    nl: &mut Netlink,
    paths: &Paths,
    name: &str,
    cs: &ChangeSet,
    dry_run: bool,
    persist_it: bool,
    guard: &mut dyn apply::Guard,
) -> Result<SetReply, NicError> {
    let outcome = apply::apply_guarded(nl, name, cs, dry_run, guard)?;
    let mut reply = SetReply {
        outcome,
        persisted: None,
        persisted_through: Vec::new(),
        persist_error: None,
    };
    if persist_it && !dry_run && reply.outcome.ok() {
        match record(nl, paths, name, cs) {
            Ok(placed) => {
                reply.persisted = Some(paths.nic_state_file().display().to_string());
                reply.persisted_through = placed.iter().map(Placed::describe).collect();
            }
            Err(e) => reply.persist_error = Some(e.to_string()),
        }
    }
    Ok(reply)
}

/// Write through the owners, then record in the state file; when recording
/// fails, the owners' files are put back. An MTU set on a bridge or bond is
/// also written for the devices under it that run at that MTU now
/// ([`ports_at_mtu`]): a bond's slaves follow its MTU in the kernel, but
/// ifupdown2's `ifreload -a` (Proxmox's "Apply Configuration") would put a
/// slave without `mtu` in its stanza back to 1500 under a bond at 9000.
fn record(
    nl: &mut Netlink,
    paths: &Paths,
    name: &str,
    cs: &ChangeSet,
) -> Result<Vec<Placed>, NicError> {
    let iface = read::interface(nl, name)?;
    // Store kernel names (`rx-gro`, not `gro`), so re-applying never depends on aliases.
    let cs = validate::validate(&iface, cs).map_err(|problems| NicError::Invalid {
        iface: name.to_string(),
        problems,
    })?;
    let roots = Roots::new(paths);
    let mut todo = vec![(
        name.to_string(),
        iface.ifindex,
        iface.mac.clone(),
        cs.clone(),
    )];
    if let Some(mtu) = cs.mtu {
        let port = ChangeSet {
            mtu: Some(mtu),
            ..Default::default()
        };
        // Stack members are recorded by name, as a tune records them.
        todo.extend(
            ports_at_mtu(&iface, mtu)
                .into_iter()
                .map(|p| (p.clone(), owner::ifindex_of(&p), None, port.clone())),
        );
    }
    let devices: Vec<owner::write::Device> = todo
        .iter()
        .map(|(n, i, _, cs)| (n.as_str(), *i, cs))
        .collect();
    let placed = owner::write::persist_all(&roots, &devices)?;
    let state_file = paths.nic_state_file();
    let recorded = persist::update(&state_file, |state| {
        for ((n, _, mac, cs), pl) in todo.iter().zip(&placed) {
            state.record_placed(n, mac.as_deref(), cs, pl);
        }
    });
    if let Err(e) = recorded {
        owner::write::undo_all(&roots, &devices, &placed);
        return Err(e);
    }
    Ok(placed.into_iter().flatten().collect())
}

/// The devices under `iface` in its bridge/bond stack that run at `mtu`
/// (after the change): they carry it on the wire, so it is persisted for
/// them too. One below it stays as it is, and is not written.
pub(crate) fn ports_at_mtu(iface: &crate::nic::model::Interface, mtu: u32) -> Vec<String> {
    iface
        .stack
        .as_ref()
        .map(|st| {
            st.below(&iface.name)
                .into_iter()
                .filter(|m| m.mtu == mtu)
                .map(|m| m.name.clone())
                .collect()
        })
        .unwrap_or_default()
}
