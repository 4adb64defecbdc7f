//! Stacked devices: a bridge (`vmbr0`) or bond (`bond0`) and the ports or
//! slaves under it, found from any member's name through the kernel's
//! master links (IFLA_MASTER) and link info (bond mode, active slave, slave
//! and port states) that rtnetlink already returns with every link.
//!
//! Nesting is followed both ways (Proxmox: `eth2`,`eth3` → `bond0` → `vmbr0`):
//! the stack is everything under the top-most bridge or bond.

use serde::{Deserialize, Serialize};

/// Link kinds that stack other links under them.
pub(crate) const UPPER_KINDS: &[&str] = &["bridge", "bond"];

/// One device of a stack.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StackMember {
    pub(crate) name: String,
    /// rtnetlink kind (`bridge`, `bond`, `veth`; `None` for a plain NIC).
    pub(crate) kind: Option<String>,
    /// The bridge or bond this device is a port or slave of.
    pub(crate) master: Option<String>,
    /// The master's kind (`bridge`, `bond`).
    pub(crate) master_kind: Option<String>,
    /// Its own ports or slaves (empty for a port).
    pub(crate) lowers: Vec<String>,
    /// A bond's mode (`active-backup`, `balance-rr`, `802.3ad`, ...).
    pub(crate) bond_mode: Option<String>,
    /// A bond's active slave (active-backup and the like).
    pub(crate) active_slave: Option<String>,
    /// As a slave: `active`/`backup`; as a bridge port: the STP state
    /// (`forwarding`, `blocking`, ...).
    pub(crate) port_state: Option<String>,
    pub(crate) mtu: u32,
}

impl StackMember {
    pub(crate) fn is_upper(&self) -> bool {
        !self.lowers.is_empty()
            || self
                .kind
                .as_deref()
                .is_some_and(|k| UPPER_KINDS.contains(&k))
    }

    /// One line: `eth2: port of vmbr0 (forwarding)`, `bond0: active-backup,
    /// slaves eth2 eth3, active eth2`, `vmbr0: bridge, ports bond0`.
    pub(crate) fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.is_upper() {
            let kind = self.kind.as_deref().unwrap_or("upper device");
            let (what, role) = if kind == "bond" {
                (
                    self.bond_mode.clone().unwrap_or_else(|| "bond".into()),
                    "slaves",
                )
            } else {
                (kind.to_string(), "ports")
            };
            let lowers = if self.lowers.is_empty() {
                format!("no {role}")
            } else {
                format!("{role} {}", self.lowers.join(" "))
            };
            let mut s = format!("{what}, {lowers}");
            if let Some(a) = &self.active_slave {
                s += &format!(", active {a}");
            }
            parts.push(s);
        }
        if let Some(m) = &self.master {
            let role = match self.master_kind.as_deref() {
                Some("bond") => "slave",
                _ => "port",
            };
            let mut s = format!("{role} of {m}");
            if let Some(st) = &self.port_state {
                s += &format!(" ({st})");
            }
            parts.push(s);
        }
        format!("{}: {}", self.name, parts.join("; "))
    }
}

/// A bridge or bond and everything under it, top first, then depth-first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Stack {
    /// The top-most bridge or bond.
    pub(crate) top: String,
    pub(crate) members: Vec<StackMember>,
}

impl Stack {
    pub(crate) fn member(&self, name: &str) -> Option<&StackMember> {
        self.members.iter().find(|m| m.name == name)
    }

    pub(crate) fn names(&self) -> Vec<String> {
        self.members.iter().map(|m| m.name.clone()).collect()
    }

    /// The ports at the bottom (the physical side): members with no lowers.
    #[cfg_attr(not(test), expect(dead_code, reason = "only the unit tests use it"))]
    pub(crate) fn ports(&self) -> Vec<&StackMember> {
        self.members.iter().filter(|m| !m.is_upper()).collect()
    }

    /// Every device under `name`: its ports or slaves, theirs, and so on
    /// (`vmbr0` → `bond0`, `eth0`), nearest first.
    pub(crate) fn below(&self, name: &str) -> Vec<&StackMember> {
        let mut out: Vec<&StackMember> = Vec::new();
        let mut next: Vec<String> = self
            .member(name)
            .map(|m| m.lowers.clone())
            .unwrap_or_default();
        while !next.is_empty() {
            let mut deeper = Vec::new();
            for n in &next {
                if let Some(m) = self
                    .member(n)
                    .filter(|m| !out.iter().any(|o| o.name == m.name))
                {
                    deeper.extend(m.lowers.iter().cloned());
                    out.push(m);
                }
            }
            next = deeper;
        }
        out
    }

    /// Bridges and bonds, top first.
    pub(crate) fn uppers(&self) -> Vec<&StackMember> {
        self.members.iter().filter(|m| m.is_upper()).collect()
    }
}

/// A bridge with one port, as [`super::stack_find::find`] reports it (for other modules' tests).
#[cfg(test)]
pub(crate) fn bridge_with_port(bridge: &str, port: &str) -> Stack {
    Stack {
        top: bridge.into(),
        members: vec![
            StackMember {
                name: bridge.into(),
                kind: Some("bridge".into()),
                lowers: vec![port.into()],
                ..Default::default()
            },
            StackMember {
                name: port.into(),
                master: Some(bridge.into()),
                master_kind: Some("bridge".into()),
                ..Default::default()
            },
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(name: &str, lowers: &[&str], master: Option<&str>) -> StackMember {
        StackMember {
            name: name.into(),
            lowers: lowers.iter().map(|l| l.to_string()).collect(),
            master: master.map(String::from),
            ..Default::default()
        }
    }

    /// Proxmox's `eth0`,`eth1` → `bond0` → `vmbr0`: under the bridge the
    /// bond and both slaves, nearest first; under the bond its slaves; under
    /// a slave nothing.
    #[test]
    fn below_follows_the_lowers_to_the_bottom() {
        let st = Stack {
            top: "vmbr0".into(),
            members: vec![
                member("vmbr0", &["bond0"], None),
                member("bond0", &["eth0", "eth1"], Some("vmbr0")),
                member("eth0", &[], Some("bond0")),
                member("eth1", &[], Some("bond0")),
            ],
        };
        let names = |n: &str| {
            st.below(n)
                .iter()
                .map(|m| m.name.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(names("vmbr0"), ["bond0", "eth0", "eth1"]);
        assert_eq!(names("bond0"), ["eth0", "eth1"]);
        assert!(names("eth0").is_empty());
        assert!(names("nosuch").is_empty());
    }
}
