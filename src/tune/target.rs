//! What the tuner changes and checks, behind a trait so the loop can be
//! tested with a scripted target: [`LiveTarget`] is the real one (rtnetlink,
//! ethtool netlink, /proc/sys, the peer's port, don't-fragment probes).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use super::TuneError;
use super::change::Change;
use crate::nic::apply::link_undo;
use crate::nic::model::LinkModes;
use crate::nic::netlink::Netlink;
use crate::nic::{apply, read, registry, validate};
use crate::path::route::{self, DefaultRoute};
use crate::path::{pmtu, rtt};
use crate::paths::Paths;
use crate::sysctl::{self, procfs};

pub(crate) trait Target {
    fn interface(&self) -> &str;
    /// Validate a change against the device; expand short feature names.
    fn prepare(&mut self, change: &Change) -> Result<Change, String>;
    /// The values the settings of `change` hold now (its undo).
    fn current(&mut self, change: &Change) -> Result<Change, TuneError>;
    fn apply(&mut self, change: &Change) -> Result<(), String>;
    /// The peer's port still answers and no default route went away.
    fn connectivity(&mut self) -> Result<(), String>;
    /// Does a don't-fragment packet of `size` bytes reach the peer?
    fn df_probe(&mut self, size: u32) -> Result<bool, String>;
    fn sysctl(&mut self, key: &str) -> Option<String>;
    /// The link settings and state as the driver reports them now.
    fn link(&mut self) -> Result<Option<LinkModes>, String>;
}

pub(crate) struct LiveTarget {
    nl: Netlink,
    paths: Paths,
    iface: String,
    peer: SocketAddr,
    routes_before: Vec<DefaultRoute>,
}

impl LiveTarget {
    pub(crate) fn new(
        paths: &Paths,
        iface: &str,
        peer: SocketAddr,
    ) -> Result<LiveTarget, TuneError> {
        let nl =
            Netlink::new().map_err(|e| TuneError::Nic(crate::nic::error::NicError::Connect(e)))?;
        Ok(LiveTarget {
            nl,
            paths: paths.clone(),
            iface: iface.to_string(),
            peer,
            routes_before: route::default_routes(),
        })
    }
}

/// The values `iface` holds now for the settings named by `change`.
pub(crate) fn current_of(
    iface: &crate::nic::model::Interface,
    paths: &Paths,
    change: &Change,
) -> Change {
    let mut u = Change::default();
    let n = &change.nic;
    u.nic = registry::held(iface, n);
    if let (Some(_), Some(l)) = (&n.link, &iface.link) {
        u.nic.link = Some(link_undo(l));
    }
    for k in change.sysctl.keys() {
        if let Ok(Some(v)) = procfs::read(&paths.proc_sys, k) {
            u.sysctl.insert(k.clone(), v);
        }
    }
    u
}

/// The devices a change touches, in the order their NIC settings are
/// applied: the stack's order (the top bridge or bond first, then down to
/// the ports: a bond passes its MTU on to its slaves), else `iface` alone.
fn members_in_order(nl: &mut Netlink, iface: &str, c: &Change) -> Vec<String> {
    let mut want: Vec<String> = Vec::new();
    if !c.nic.is_empty() {
        want.push(iface.to_string());
    }
    want.extend(
        c.stack
            .iter()
            .filter(|(_, cs)| !cs.is_empty())
            .map(|(m, _)| m.clone()),
    );
    if want.len() < 2 {
        return want;
    }
    let order = read::interface(nl, iface)
        .ok()
        .and_then(|i| i.stack)
        .map(|s| s.names())
        .unwrap_or_default();
    want.sort_by_key(|m| order.iter().position(|o| o == m).unwrap_or(usize::MAX));
    want
}

/// Apply a change for real: the NIC change set of every device it names
/// (each validated, read back, restored on failure; when a later device
/// fails, the earlier ones are restored too: one change set), then sysctls
/// (read back, restored on failure).
pub(crate) fn apply_live(
    nl: &mut Netlink,
    paths: &Paths,
    iface: &str,
    c: &Change,
) -> Result<(), String> {
    // Snapshot every device first: a bond's MTU reaches its slaves at once.
    let order = members_in_order(nl, iface, c);
    let nic_of = |m: &str| if m == iface { &c.nic } else { &c.stack[m] };
    let mut before = Vec::new();
    for m in &order {
        let i = read::interface(nl, m).map_err(|e| e.to_string())?;
        let one = Change {
            nic: nic_of(m).clone(),
            ..Default::default()
        };
        before.push((m.clone(), current_of(&i, paths, &one).nic));
    }
    let restore = |nl: &mut Netlink, upto: usize| {
        for (m, b) in before[..upto].iter().rev() {
            let _ = apply::apply(nl, m, b, false);
        }
    };
    for (k, m) in order.iter().enumerate() {
        // A stack member's error names it; the interface's own reads as before.
        let who = if m == iface {
            String::new()
        } else {
            format!("{m}: ")
        };
        let r = apply::apply(nl, m, nic_of(m), false).map_err(|e| format!("{who}{e}"));
        let r = r.and_then(|out| match out.failure {
            Some(f) => Err(format!("{who}{}: {} (errno {})", f.step, f.error, f.errno)),
            None => Ok(()),
        });
        if let Err(e) = r {
            restore(nl, k);
            return Err(e);
        }
    }
    if !c.sysctl.is_empty() {
        let assignments: Vec<(String, String)> = c
            .sysctl
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let planned = sysctl::plan(paths, &assignments).map_err(|e| e.to_string())?;
        let out = sysctl::apply(paths, planned);
        if let Some(f) = out.failed {
            restore(nl, order.len());
            return Err(f);
        }
    }
    Ok(())
}

impl Target for LiveTarget {
    fn interface(&self) -> &str {
        &self.iface
    }

    fn prepare(&mut self, change: &Change) -> Result<Change, String> {
        let i = read::interface(&mut self.nl, &self.iface).map_err(|e| e.to_string())?;
        let nic = validate::validate(&i, &change.nic).map_err(|p| crate::problem::join(&p))?;
        let mut stack = std::collections::BTreeMap::new();
        for (m, cs) in &change.stack {
            let mi = read::interface(&mut self.nl, m).map_err(|e| e.to_string())?;
            let v = validate::validate(&mi, cs)
                .map_err(|p| format!("{m}: {}", crate::problem::join(&p)))?;
            stack.insert(m.clone(), v);
        }
        if !change.sysctl.is_empty() {
            let a: Vec<(String, String)> = change
                .sysctl
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            sysctl::plan(&self.paths, &a).map_err(|e| e.to_string())?;
        }
        Ok(Change {
            nic,
            sysctl: change.sysctl.clone(),
            stack,
        })
    }

    fn current(&mut self, change: &Change) -> Result<Change, TuneError> {
        let i = read::interface(&mut self.nl, &self.iface)?;
        let mut u = current_of(&i, &self.paths, change);
        for (m, cs) in &change.stack {
            let mi = read::interface(&mut self.nl, m)?;
            let one = Change {
                nic: cs.clone(),
                ..Default::default()
            };
            u.stack
                .insert(m.clone(), current_of(&mi, &self.paths, &one).nic);
        }
        Ok(u)
    }

    fn apply(&mut self, change: &Change) -> Result<(), String> {
        apply_live(&mut self.nl, &self.paths, &self.iface, change)
    }

    fn connectivity(&mut self) -> Result<(), String> {
        // A NIC reset (rings, MTU) may take the link down for a moment.
        let until = Instant::now() + Duration::from_secs(8);
        loop {
            let routes = route::default_routes();
            let lost: Vec<String> = self
                .routes_before
                .iter()
                .filter(|r| !routes.contains(r))
                .map(|r| format!("{} default via {} dev {}", r.family, r.gateway, r.interface))
                .collect();
            let port = rtt::port_answers(self.peer, Duration::from_secs(2));
            if lost.is_empty() && port {
                return Ok(());
            }
            if Instant::now() >= until {
                return Err(if !lost.is_empty() {
                    format!("default route gone: {}", lost.join(", "))
                } else {
                    format!("{} no longer answers", self.peer)
                });
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    fn df_probe(&mut self, size: u32) -> Result<bool, String> {
        pmtu::reaches(self.peer.ip(), size, Duration::from_millis(500)).map_err(|e| e.to_string())
    }

    fn sysctl(&mut self, key: &str) -> Option<String> {
        procfs::read(&self.paths.proc_sys, key).ok().flatten()
    }

    fn link(&mut self) -> Result<Option<LinkModes>, String> {
        read::interface(&mut self.nl, &self.iface)
            .map(|i| i.link)
            .map_err(|e| e.to_string())
    }
}
