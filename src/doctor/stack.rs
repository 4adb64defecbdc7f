//! Bridges and bonds: naming any member examines the whole stack (the upper
//! device and every port), and the stack itself is checked: one MTU from the
//! top to every port, and what a bond's speed means.

use super::finding::{Finding, Outcome, Severity};
use super::inputs::Inputs;
use crate::nic::stack::Stack;

/// `names` with every member of their stacks added (after the names given,
/// in stack order, without duplicates).
pub(crate) fn expand(names: &[String], stacks: &[Stack]) -> Vec<String> {
    let mut out: Vec<String> = names.to_vec();
    for s in stacks {
        for n in s.names() {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}

/// The distinct stacks among the interfaces read.
pub(crate) fn stacks(inp: &Inputs) -> Vec<Stack> {
    let mut out: Vec<Stack> = Vec::new();
    for s in &inp.interfaces {
        if let Some(st) = &s.now().stack
            && !out.iter().any(|o| o.top == st.top)
        {
            out.push(st.clone());
        }
    }
    out
}

pub(crate) fn check(inp: &Inputs, out: &mut Outcome) {
    for st in stacks(inp) {
        check_one(inp, &st, out);
    }
}

fn check_one(inp: &Inputs, st: &Stack, out: &mut Outcome) {
    let top = Some(st.top.as_str());
    let lines: Vec<String> = st.members.iter().map(|m| m.describe()).collect();
    out.pass("stack", top, lines.join("; "));
    // MTUs as read now (the samples), else as the stack listed them.
    let mtu_of = |n: &str| {
        inp.iface(n)
            .map(|s| s.now().mtu)
            .or_else(|| st.member(n).map(|m| m.mtu))
            .unwrap_or(0)
    };
    let mtus: Vec<(String, u32)> = st
        .names()
        .into_iter()
        .map(|n| (n.clone(), mtu_of(&n)))
        .collect();
    let max = mtus.iter().map(|(_, m)| *m).max().unwrap_or(0);
    let min = mtus.iter().map(|(_, m)| *m).min().unwrap_or(0);
    let list: Vec<String> = mtus.iter().map(|(n, m)| format!("{n} {m}")).collect();
    if max == min {
        out.pass(
            "stack-mtu",
            top,
            format!("one MTU across the stack: {}", list.join(", ")),
        );
    } else {
        let mut f = Finding::new(
            "stack-mtu-mismatch",
            Severity::Warning,
            top,
            format!(
                "{}: MTU differs across the stack: {}",
                st.top,
                list.join(", ")
            ),
        );
        for (n, m) in &mtus {
            f = f.evidence(&format!("{n} mtu"), m);
        }
        f = f.why("a frame the bridge or bond accepts at its MTU is dropped by a port with a smaller one (and a larger port MTU is never used): every device of the stack should carry the same MTU");
        f = f.fix(format!(
            "hlctl tune {} --peer PEER  # tries MTU {max} on the whole stack as one change, kept only if the peer carries it",
            st.top
        ));
        for (n, m) in &mtus {
            if *m < max {
                f = f.fix(format!("hlctl set {n} mtu {max}"));
            }
        }
        f = f.fix(format!("# or lower the larger ones to {min}"));
        out.find(f);
    }
    for b in st
        .uppers()
        .into_iter()
        .filter(|m| m.kind.as_deref() == Some("bond"))
    {
        let speed = inp
            .iface(&b.name)
            .and_then(|s| s.now().link.as_ref())
            .and_then(|l| l.speed_mbps);
        out.pass(
            "bond-speed",
            Some(b.name.as_str()),
            format!(
                "{}: the speed the bond reports ({}) is the sum of its active slaves' links: real, but one TCP stream rides one slave",
                b.name,
                speed.map_or("unknown".to_string(), crate::units::speed)
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::inputs::IfaceSample;
    use crate::nic::model::Interface;

    fn inputs(mtus: &[(&str, u32)]) -> Inputs {
        let st = crate::nic::stack::bridge_with_port("vmbr0", "p0");
        let mut inp = Inputs::default();
        for (n, m) in mtus {
            inp.interfaces.push(IfaceSample {
                first: Interface {
                    name: n.to_string(),
                    mtu: *m,
                    stack: Some(st.clone()),
                    ..Default::default()
                },
                second: None,
                interval_s: 1.0,
            });
        }
        inp
    }

    #[test]
    fn one_mtu_passes_and_a_mismatch_is_found_once() {
        let mut out = Outcome::default();
        check(&inputs(&[("vmbr0", 1500), ("p0", 1500)]), &mut out);
        assert!(out.findings.is_empty());
        assert!(out.passed.iter().any(|c| c.check == "stack-mtu"));

        let mut out = Outcome::default();
        check(&inputs(&[("p0", 1500), ("vmbr0", 9000)]), &mut out);
        assert_eq!(out.findings.len(), 1);
        let f = &out.findings[0];
        assert_eq!(f.id, "stack-mtu-mismatch");
        assert_eq!(f.interface.as_deref(), Some("vmbr0"));
        assert!(
            f.fix.iter().any(|l| l == "hlctl set p0 mtu 9000"),
            "{:?}",
            f.fix
        );
    }

    #[test]
    fn expanding_names() {
        let st = inputs(&[("p0", 1500)]).interfaces[0]
            .first
            .stack
            .clone()
            .unwrap();
        assert_eq!(expand(&["p0".into()], &[st]), ["p0", "vmbr0"]);
    }
}
