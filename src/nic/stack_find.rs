//! Finding a stack: from the links rtnetlink dumped, the bridge or bond
//! stack any member belongs to (the types are in [`super::stack`]).

use super::netlink::RtLink;
use super::stack::{Stack, StackMember, UPPER_KINDS};

fn bond_mode_name(m: u8) -> String {
    match m {
        0 => "balance-rr",
        1 => "active-backup",
        2 => "balance-xor",
        3 => "broadcast",
        4 => "802.3ad",
        5 => "balance-tlb",
        6 => "balance-alb",
        _ => return format!("mode {m}"),
    }
    .to_string()
}

fn port_state_name(slave_kind: Option<&str>, s: u8) -> String {
    match (slave_kind, s) {
        (Some("bond"), 0) => "active".into(),
        (Some("bond"), 1) => "backup".into(),
        (Some("bridge"), 0) => "disabled".into(),
        (Some("bridge"), 1) => "listening".into(),
        (Some("bridge"), 2) => "learning".into(),
        (Some("bridge"), 3) => "forwarding".into(),
        (Some("bridge"), 4) => "blocking".into(),
        (_, s) => format!("state {s}"),
    }
}

fn by_index(links: &[RtLink], ifindex: u32) -> Option<&RtLink> {
    links.iter().find(|l| l.ifindex == ifindex)
}

fn member(links: &[RtLink], l: &RtLink) -> StackMember {
    let r = &l.relations;
    let name_of = |i: u32| by_index(links, i).map(|x| x.name.clone());
    StackMember {
        name: l.name.clone(),
        kind: l.kind.clone(),
        master: r.master.and_then(name_of),
        master_kind: r
            .master
            .and_then(|i| by_index(links, i))
            .and_then(|m| m.kind.clone()),
        lowers: links
            .iter()
            .filter(|x| x.relations.master == Some(l.ifindex))
            .map(|x| x.name.clone())
            .collect(),
        bond_mode: r.bond_mode.map(bond_mode_name),
        active_slave: r.active_slave.and_then(name_of),
        port_state: r
            .slave_state
            .map(|s| port_state_name(r.slave_kind.as_deref(), s)),
        mtu: l.mtu,
    }
}

/// The stack `name` belongs to (as the top, a middle bond or a port), from
/// one RTM_GETLINK dump; `None` when it is in no bridge or bond.
pub(crate) fn find(links: &[RtLink], name: &str) -> Option<Stack> {
    let mut top = links.iter().find(|l| l.name == name)?;
    // Climb the master links (bounded: a loop is impossible, but be safe).
    for _ in 0..8 {
        match top.relations.master.and_then(|m| by_index(links, m)) {
            Some(up) => top = up,
            None => break,
        }
    }
    let is_upper = top
        .kind
        .as_deref()
        .is_some_and(|k| UPPER_KINDS.contains(&k))
        || links
            .iter()
            .any(|x| x.relations.master == Some(top.ifindex));
    if !is_upper {
        return None;
    }
    let mut members = Vec::new();
    let mut todo = vec![top];
    while let Some(l) = todo.pop() {
        if members.len() > 64 || members.iter().any(|m: &StackMember| m.name == l.name) {
            continue;
        }
        let m = member(links, l);
        // Depth-first, lowers in ifindex order.
        let mut lowers: Vec<&RtLink> = links
            .iter()
            .filter(|x| x.relations.master == Some(l.ifindex))
            .collect();
        lowers.reverse();
        todo.extend(lowers);
        members.push(m);
    }
    Some(Stack {
        top: top.name.clone(),
        members,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::netlink::rtnl::Relations;

    fn link(ifindex: u32, name: &str, kind: Option<&str>, r: Relations) -> RtLink {
        RtLink {
            ifindex,
            name: name.into(),
            kind: kind.map(str::to_string),
            mtu: 1500,
            relations: r,
            ..Default::default()
        }
    }

    fn slave(master: u32, kind: &str, state: u8) -> Relations {
        Relations {
            master: Some(master),
            slave_kind: Some(kind.into()),
            slave_state: Some(state),
            ..Default::default()
        }
    }

    /// Proxmox: eth2, eth3 → bond0 (active-backup) → vmbr0, plus a lone eth0.
    fn proxmox() -> Vec<RtLink> {
        vec![
            link(1, "lo", None, Relations::default()),
            link(2, "eth0", None, Relations::default()),
            link(3, "eth2", None, slave(5, "bond", 0)),
            link(4, "eth3", None, slave(5, "bond", 1)),
            link(
                5,
                "bond0",
                Some("bond"),
                Relations {
                    bond_mode: Some(1),
                    active_slave: Some(3),
                    ..slave(6, "bridge", 3)
                },
            ),
            link(6, "vmbr0", Some("bridge"), Relations::default()),
        ]
    }

    #[test]
    fn every_member_finds_the_same_stack() {
        let links = proxmox();
        let s = find(&links, "vmbr0").unwrap();
        assert_eq!(s.top, "vmbr0");
        assert_eq!(s.names(), ["vmbr0", "bond0", "eth2", "eth3"]);
        for n in ["bond0", "eth2", "eth3"] {
            assert_eq!(find(&links, n).as_ref(), Some(&s), "{n}");
        }
        let ports: Vec<&str> = s.ports().iter().map(|m| m.name.as_str()).collect();
        assert_eq!(ports, ["eth2", "eth3"]);
        assert!(find(&links, "eth0").is_none());
        assert!(find(&links, "nosuch").is_none());
    }

    #[test]
    fn descriptions() {
        let s = find(&proxmox(), "eth2").unwrap();
        let d: Vec<String> = s.members.iter().map(StackMember::describe).collect();
        assert_eq!(
            d,
            [
                "vmbr0: bridge, ports bond0",
                "bond0: active-backup, slaves eth2 eth3, active eth2; port of vmbr0 (forwarding)",
                "eth2: slave of bond0 (active)",
                "eth3: slave of bond0 (backup)",
            ]
        );
    }

    #[test]
    fn an_empty_bridge_is_a_stack_of_one() {
        let links = vec![link(7, "br9", Some("bridge"), Relations::default())];
        let s = find(&links, "br9").unwrap();
        assert_eq!(s.members[0].describe(), "br9: bridge, no ports");
    }
}
