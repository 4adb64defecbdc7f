//! The compact line of a [`CoreReport`]: "download: CPU1 99 % (softirq
//! 91 %), CPU0 12 %; eth2's 1 queue vector interrupts CPU1 only; backlog
//! dropped 0".

use super::report::{CoreReport, CoreUse};

fn whole(p: f64) -> String {
    format!("{p:.0} %")
}

/// "CPU1 99 % (softirq 91 %)": the biggest of softirq, irq, steal and
/// system when it is 10 % or more.
fn one_core(c: &CoreUse) -> String {
    let parts = [
        ("softirq", c.softirq_percent),
        ("irq", c.irq_percent),
        ("steal", c.steal_percent),
        ("system", c.system_percent),
    ];
    let top = parts
        .iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .filter(|p| p.1 >= 10.0);
    match top {
        Some((name, p)) => format!(
            "CPU{} {} ({name} {})",
            c.cpu,
            whole(c.busy_percent),
            whole(*p)
        ),
        None => format!("CPU{} {}", c.cpu, whole(c.busy_percent)),
    }
}

/// The busiest CPUs (up to 4; those at 1 % or more, at least one).
fn busiest(r: &CoreReport) -> String {
    let mut v: Vec<&CoreUse> = r.cpus.iter().collect();
    v.sort_by(|a, b| b.busy_percent.total_cmp(&a.busy_percent));
    let shown: Vec<String> = v
        .iter()
        .enumerate()
        .filter(|(i, c)| *i == 0 || c.busy_percent >= 1.0)
        .take(4)
        .map(|(_, c)| one_core(c))
        .collect();
    if shown.is_empty() {
        "no CPU figures".into()
    } else {
        shown.join(", ")
    }
}

/// Which CPUs the device's queue vectors interrupted, and how much.
fn queues(r: &CoreReport) -> Option<String> {
    let dev = r.device.as_deref()?;
    let n = r.queue_vectors.len();
    if n == 0 {
        return Some(format!("{dev} has no queue interrupts"));
    }
    let noun = if n == 1 {
        "queue vector interrupts"
    } else {
        "queue vectors interrupt"
    };
    let total: u64 = r.cpus.iter().map(|c| c.device_interrupts).sum();
    let mut took: Vec<&CoreUse> = r.cpus.iter().filter(|c| c.device_interrupts > 0).collect();
    took.sort_by_key(|c| std::cmp::Reverse(c.device_interrupts));
    Some(match took.as_slice() {
        [] => format!("{dev}'s {n} {noun} no CPU"),
        [one] => format!("{dev}'s {n} {noun} CPU{} only", one.cpu),
        many => {
            let each: Vec<String> = many
                .iter()
                .map(|c| {
                    format!(
                        "CPU{} {}",
                        c.cpu,
                        whole(c.device_interrupts as f64 * 100.0 / total as f64)
                    )
                })
                .collect();
            format!("{dev}'s {n} {noun} {}", each.join(", "))
        }
    })
}

/// The line, led by what the transfer was ("download", "upload").
pub(crate) fn line(label: &str, r: &CoreReport) -> String {
    let mut parts = vec![busiest(r)];
    parts.extend(queues(r));
    let mut backlog = format!("backlog dropped {}", r.backlog_dropped);
    if r.time_squeeze > 0 {
        backlog.push_str(&format!(", budget ran out {} times", r.time_squeeze));
    }
    parts.push(backlog);
    if let Some(o) = &r.own {
        parts.push(format!("hlctl {} of a CPU", whole(o.percent)));
    }
    format!("{label}: {}", parts.join("; "))
}
