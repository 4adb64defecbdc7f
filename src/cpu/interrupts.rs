//! `/proc/interrupts`: per vector, its count on each online CPU (the header
//! names them; offline CPUs are absent) and the driver's name for it
//! (`eth2-TxRx-0`, `virtio0-input.0`, `ens1f0-rxtx-3`, `iwlwifi: queue 1`);
//! and which vectors are a network device's queues.

use super::ProcError;
use super::error::cpu_header;

const FILE: &str = "/proc/interrupts";

/// One line: a numbered IRQ or a per-CPU one (`LOC`, `NMI`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct IrqRow {
    /// `"38"` or `"LOC"`.
    pub(crate) irq: String,
    /// (CPU id, count), for the CPUs that have a column on this line.
    pub(crate) counts: Vec<(u32, u64)>,
    /// The handlers' names, as the driver gave them (one per shared handler).
    pub(crate) actions: Vec<String>,
}

impl IrqRow {
    pub(crate) fn number(&self) -> Option<u32> {
        self.irq.parse().ok()
    }

    /// All of the row's interrupts (only the tests and the fuzz target add them up).
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn total(&self) -> u64 {
        self.counts.iter().fold(0u64, |a, c| a.saturating_add(c.1))
    }
}

/// Where the handler names start: after the trigger type (`5-edge`,
/// `PCI-MSIX-...  1-edge`, `GICv3  27 Level`, `ITS-MSI 524288 Edge`).
fn actions_of(desc: &str) -> Vec<String> {
    let toks: Vec<&str> = desc.split_whitespace().collect();
    let marker = |t: &&str| {
        let l = t.to_ascii_lowercase();
        ["edge", "level", "fasteoi", "simple", "percpu"]
            .iter()
            .any(|m| l == *m || l.ends_with(&format!("-{m}")))
    };
    let start = toks
        .iter()
        .rposition(marker)
        .map_or(toks.len().saturating_sub(1), |i| i + 1);
    let names = toks.get(start..).unwrap_or_default().join(" ");
    names
        .split(", ")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

fn row(n: usize, line: &str, cpus: &[u32]) -> Result<Option<IrqRow>, ProcError> {
    let Some((irq, rest)) = line.split_once(':') else {
        return Ok(None);
    };
    let irq = irq.trim();
    if irq.is_empty() || irq.contains(char::is_whitespace) {
        return Err(ProcError::new(
            FILE,
            n + 1,
            format!("{irq:?} is not an IRQ name"),
        ));
    }
    let mut counts = Vec::new();
    let mut rest = rest.trim_start();
    while counts.len() < cpus.len() {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let Ok(c) = rest[..end].parse::<u64>() else {
            break;
        };
        counts.push((cpus[counts.len()], c));
        rest = rest[end..].trim_start();
    }
    if counts.is_empty() {
        return Err(ProcError::new(
            FILE,
            n + 1,
            format!("IRQ {irq} has no count"),
        ));
    }
    let actions = if irq.parse::<u32>().is_ok() {
        actions_of(rest)
    } else {
        Vec::new()
    };
    Ok(Some(IrqRow {
        irq: irq.to_string(),
        counts,
        actions,
    }))
}

/// Every line after the header that has an IRQ name and at least one count.
pub(crate) fn parse(text: &str) -> Result<Vec<IrqRow>, ProcError> {
    let mut lines = text.lines();
    let cpus = cpu_header(FILE, lines.next().unwrap_or(""))?;
    let mut out = Vec::new();
    for (n, line) in lines.enumerate() {
        if let Some(r) = row(n + 1, line, &cpus)? {
            out.push(r);
        }
    }
    Ok(out)
}

/// What names a network device's vectors: its own name, its virtio device
/// (`virtio2` for `virtio2-input.0`), its driver (`iwlwifi` names vectors
/// after itself), and the IRQs of its PCI function (`msi_irqs`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct DeviceIds {
    pub(crate) ifname: String,
    pub(crate) virtio: Option<String>,
    pub(crate) driver: Option<String>,
    pub(crate) msi_irqs: Vec<u32>,
}

fn named_for(action: &str, d: &DeviceIds) -> bool {
    let prefixed = |p: &str| {
        action == p
            || action
                .strip_prefix(p)
                .is_some_and(|r| r.starts_with(['-', ':', '@', '_']))
    };
    // i40e and ice put their own name first: `i40e-ens1f0-TxRx-0`.
    let inner = action.contains(&format!("-{}-", d.ifname));
    prefixed(&d.ifname)
        || inner
        || d.virtio.as_deref().is_some_and(prefixed)
        || d.driver
            .as_deref()
            .is_some_and(|drv| drv == "iwlwifi" && prefixed(drv))
}

/// A vector that names a queue (`TxRx`, `rx`, `tx`, `input`, `output`,
/// `queue`, `comp`, `fp`), not the device's config, event or error vector.
pub(crate) fn is_queue(action: &str) -> bool {
    let l = action.to_ascii_lowercase();
    let other = [
        "config",
        "event",
        "stats",
        "misc",
        "ctrl",
        "async",
        "exception",
    ];
    if other.iter().any(|o| l.contains(o)) {
        return false;
    }
    ["rx", "tx", "input", "output", "queue", "comp", "fp"]
        .iter()
        .any(|q| l.contains(q))
}

/// The device's queue vectors, in IRQ order, with the name that matched. A
/// vector named just the device (`eth2`) is ixgbe's and igb's "other"
/// vector when queue vectors exist, and the one vector of everything when
/// none do (e1000e with MSI, legacy interrupts).
pub(crate) fn queue_vectors<'a>(rows: &'a [IrqRow], d: &DeviceIds) -> Vec<(&'a IrqRow, &'a str)> {
    let mut out = Vec::new();
    let mut alone = Vec::new();
    for r in rows {
        let Some(n) = r.number() else { continue };
        let by_name = r.actions.iter().find(|a| named_for(a, d) && is_queue(a));
        let by_msi = || {
            d.msi_irqs
                .contains(&n)
                .then(|| r.actions.iter().find(|a| is_queue(a)))
                .flatten()
        };
        if let Some(a) = by_name.or_else(by_msi) {
            out.push((r, a.as_str()));
        } else if let Some(a) = r.actions.iter().find(|a| **a == d.ifname) {
            alone.push((r, a.as_str()));
        }
    }
    if out.is_empty() { alone } else { out }
}

#[cfg(test)]
#[path = "interrupts_tests.rs"]
mod tests;
