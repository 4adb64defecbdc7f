//! `show`'s queue and interrupt block: the queues against the channels'
//! maxima (as the settings table describes them) and the physical cores,
//! RPS and XPS per queue, each queue vector's IRQ and its affinity, and
//! irqbalance.

use crate::cpu::layout::QueueLayout;
use crate::nic::model::Interface;
use crate::nic::registry;

use super::output::wrap;

const CONT: &str = "            ";

/// The block's lines; none when the layout was not read.
pub(crate) fn queue_lines(i: &Interface) -> Vec<String> {
    let Some(q) = &i.queues else {
        return Vec::new();
    };
    let rps: Vec<String> =
        q.rx.iter()
            .map(|r| {
                let cnt = r
                    .rps_flow_cnt
                    .map_or(String::new(), |c| format!(" (flow cnt {c})"));
                format!(
                    "rx-{} cpus {}{cnt}",
                    r.index,
                    mask_text(r.rps_cpus.as_deref())
                )
            })
            .collect();
    let xps: Vec<String> =
        q.tx.iter()
            .map(|t| format!("tx-{} cpus {}", t.index, mask_text(t.xps_cpus.as_deref())))
            .collect();
    let mut out = vec![queues_line(i, q)];
    out.push(listed("  rps       ", rps, q.rps_sock_flow_entries));
    out.push(listed("  xps       ", xps, None));
    out.push(rss_line(q.rss.as_ref()));
    out.extend(irq_lines(q));
    out.push(match q.irqbalance_pid {
        Some(p) => format!("  irqbalance running (pid {p})"),
        None => "  irqbalance not running".into(),
    });
    out
}

/// `  queues    2 rx / 2 tx (channels combined 1 of max 4; 2 physical cores), numa node 0 (local cpus 0-3)`.
fn queues_line(i: &Interface, q: &QueueLayout) -> String {
    let channels: Vec<String> = registry::in_group("channels")
        .filter_map(|s| {
            let v = (s.read)(i).as_u64()?;
            Some(match s.max(i) {
                Some(m) => format!("{} {v} of max {m}", s.key),
                None => format!("{} {v}", s.key),
            })
        })
        .collect();
    let mut inner = vec![if i.channels.is_none() {
        "channels not supported by driver".to_string()
    } else if channels.is_empty() {
        "channels none".to_string()
    } else {
        format!("channels {}", channels.join(", "))
    }];
    if let Some(c) = q.physical_cores {
        inner.push(format!(
            "{c} physical core{}",
            if c == 1 { "" } else { "s" }
        ));
    }
    let mut s = format!(
        "  queues    {} rx / {} tx ({})",
        q.rx.len(),
        q.tx.len(),
        inner.join("; ")
    );
    if let Some(n) = q.numa_node.filter(|n| *n >= 0) {
        s += &format!(", numa node {n}");
        if let Some(l) = &q.local_cpulist {
            s += &format!(" (local cpus {l})");
        }
    }
    s
}

/// `  rss       toeplitz; indirection 128 entries (queue 0: 64, queue 1: 64); key 40 bytes 6d:5a:…`;
/// `not supported by driver` when the driver has none.
fn rss_line(rss: Option<&crate::cpu::layout::Rss>) -> String {
    let Some(r) = rss else {
        return "  rss       not supported by driver".into();
    };
    let mut parts = vec![format!(
        "hash {}",
        r.hash_function.as_deref().unwrap_or("not reported")
    )];
    parts.push(if r.indirection.is_empty() {
        "indirection table none (the driver gives none)".into()
    } else {
        let mut per_queue = std::collections::BTreeMap::<u32, usize>::new();
        for q in &r.indirection {
            *per_queue.entry(*q).or_default() += 1;
        }
        let each: Vec<String> = per_queue
            .iter()
            .map(|(q, n)| format!("queue {q}: {n}"))
            .collect();
        format!(
            "indirection {} entries ({})",
            r.indirection.len(),
            each.join(", ")
        )
    });
    parts.push(match &r.hash_key {
        Some(k) => format!("key {} bytes {k}", k.split(':').count()),
        None => "key none".into(),
    });
    format!("  rss       {}", parts.join("; "))
}

/// `head` and the items wrapped, `none` when there are none; RPS's socket
/// flow table after them.
fn listed(head: &str, mut items: Vec<String>, sock_flow: Option<u64>) -> String {
    if items.is_empty() {
        items.push("none".into());
    }
    if let (Some(n), Some(last)) = (sock_flow, items.last_mut()) {
        *last += &format!("; sock flow entries {n}");
    }
    let items: Vec<String> = items
        .iter()
        .enumerate()
        .map(|(k, s)| {
            if k + 1 < items.len() {
                format!("{s},")
            } else {
                s.clone()
            }
        })
        .collect();
    wrap(head, &items, 100)
}

/// `  irqs      irq 41 eth0-rx-0 -> cpus 0-1 (effective 1)`, one line per vector.
fn irq_lines(q: &QueueLayout) -> Vec<String> {
    if q.vectors.is_empty() {
        return vec!["  irqs      none".into()];
    }
    q.vectors
        .iter()
        .enumerate()
        .map(|(k, v)| {
            let head = if k == 0 { "  irqs      " } else { CONT };
            let mut s = format!(
                "{head}irq {} {} -> cpus {}",
                v.irq,
                v.name,
                v.smp_affinity_list.as_deref().unwrap_or("-")
            );
            if let Some(e) = &v.effective_affinity_list {
                s += &format!(" (effective {e})");
            }
            s
        })
        .collect()
}

/// A sysfs CPU mask (`00000000,00000003`) as a CPU list (`0-1`); `-` for
/// none or absent; the mask itself when it is not one.
pub(crate) fn mask_text(mask: Option<&str>) -> String {
    let Some(m) = mask else {
        return "-".into();
    };
    match crate::cpu::cpulist::parse_mask(m) {
        Some(cpus) if cpus.is_empty() => "-".into(),
        Some(cpus) => crate::cpu::cpulist::list(&cpus),
        None => m.to_string(),
    }
}

#[cfg(test)]
#[path = "show_queues_tests.rs"]
mod tests;
