//! CPU sets in the two spellings the kernel uses: a hex mask in 32-bit
//! words (`00000000,00000003`, what `rps_cpus` and `xps_cpus` read and
//! take) and a CPU list (`0-1,4`, what `hlctl set … rps cpus` takes and
//! shows). `none` is the empty set (RPS off).

use std::collections::BTreeSet;

/// The empty set as a CPU list.
pub(crate) const NONE: &str = "none";

/// A CPU list (`0-2,5`, `none`) as its CPUs; `None` when it is not one.
pub(crate) fn parse_list(text: &str) -> Option<BTreeSet<u32>> {
    let t = text.trim();
    let mut out = BTreeSet::new();
    if t == NONE || t.is_empty() {
        return Some(out);
    }
    for part in t.split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (u32, u32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
        if a > b || b >= 4096 {
            return None;
        }
        out.extend(a..=b);
    }
    Some(out)
}

/// CPUs as a canonical list: `0-2,5`, `none` when empty.
pub(crate) fn list(cpus: &BTreeSet<u32>) -> String {
    let v: Vec<u32> = cpus.iter().copied().collect();
    let mut parts: Vec<String> = Vec::new();
    let mut k = 0;
    while k < v.len() {
        let start = v[k];
        while k + 1 < v.len() && v[k + 1] == v[k] + 1 {
            k += 1;
        }
        parts.push(if v[k] == start {
            start.to_string()
        } else {
            format!("{start}-{}", v[k])
        });
        k += 1;
    }
    if parts.is_empty() {
        NONE.into()
    } else {
        parts.join(",")
    }
}

/// A list in its canonical spelling (`1,0,2` → `0-2`); `None` when not a list.
pub(crate) fn canonical(text: &str) -> Option<String> {
    parse_list(text).map(|c| list(&c))
}

/// A per-queue map: one CPU list per queue, in queue order, separated by
/// `/` (`0/1`: queue 0 to CPU0, queue 1 to CPU1; what `hlctl set … xps
/// cpus` and `irq-affinity cpus` take and show). `none` alone is every
/// queue's set empty.
pub(crate) const MAP_SEPARATOR: char = '/';

/// A per-queue map as its sets, in queue order; an empty vector for `none`
/// (every queue off, whatever their number); `None` when not a map.
pub(crate) fn parse_map(text: &str) -> Option<Vec<BTreeSet<u32>>> {
    let t = text.trim();
    if t == NONE {
        return Some(Vec::new());
    }
    t.split(MAP_SEPARATOR).map(parse_list).collect()
}

/// Sets as a per-queue map: `0/1`; `none` when every set is empty.
pub(crate) fn map_text(sets: &[BTreeSet<u32>]) -> String {
    if sets.iter().all(BTreeSet::is_empty) {
        return NONE.into();
    }
    let parts: Vec<String> = sets.iter().map(list).collect();
    parts.join(&MAP_SEPARATOR.to_string())
}

/// A map in its canonical spelling (`1,0/none` → `0-1/none`, `none/none`
/// → `none`); `None` when not a map.
pub(crate) fn canonical_map(text: &str) -> Option<String> {
    parse_map(text).map(|m| map_text(&m))
}

/// The number of queues a map names (0 for `none`: any number).
pub(crate) fn map_len(text: &str) -> usize {
    parse_map(text).map_or(0, |m| m.len())
}

/// `cpus` spread over `queues` queues round-robin: queue `i` takes every
/// CPU whose position in `cpus` is `i` modulo `queues` (as many queues as
/// CPUs: one CPU each; more queues: the extra ones none; fewer: several
/// CPUs each).
pub(crate) fn spread(cpus: &[u32], queues: usize) -> Vec<BTreeSet<u32>> {
    let mut out = vec![BTreeSet::new(); queues];
    if queues == 0 {
        return out;
    }
    for (k, c) in cpus.iter().enumerate() {
        out[k % queues].insert(*c);
    }
    out
}

/// A sysfs hex mask (`00000000,00000003`) as its CPUs; `None` when not one.
pub(crate) fn parse_mask(mask: &str) -> Option<BTreeSet<u32>> {
    let mut out = BTreeSet::new();
    let digits = mask.trim().chars().rev().filter(|c| *c != ',');
    for (k, c) in digits.enumerate() {
        let d = c.to_digit(16)?;
        out.extend(
            (0..4)
                .filter(|b| d & (1 << b) != 0)
                .map(|b| k as u32 * 4 + b),
        );
    }
    Some(out)
}

/// CPUs as the hex mask sysfs takes: 32-bit words, highest first, comma
/// separated (`3`, `1,00000000` for CPU 32).
pub(crate) fn mask(cpus: &BTreeSet<u32>) -> String {
    let words = cpus.last().map_or(1, |m| *m as usize / 32 + 1);
    let mut w = vec![0u32; words];
    for c in cpus {
        w[*c as usize / 32] |= 1 << (c % 32);
    }
    let mut parts: Vec<String> = w.iter().rev().map(|x| format!("{x:08x}")).collect();
    parts[0] = format!("{:x}", w[words - 1]);
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_queue_maps() {
        assert_eq!(canonical_map("1,0/none").as_deref(), Some("0-1/none"));
        assert_eq!(canonical_map("none/none").as_deref(), Some("none"));
        assert_eq!(canonical_map("none").as_deref(), Some("none"));
        assert_eq!(canonical_map("0/x"), None);
        assert_eq!(map_len("0/1/2"), 3);
        assert_eq!(map_len("none"), 0);
        assert_eq!(map_text(&spread(&[0, 1], 2)), "0/1");
        assert_eq!(map_text(&spread(&[0, 1], 4)), "0/1/none/none");
        assert_eq!(map_text(&spread(&[0, 1, 2, 3], 2)), "0,2/1,3");
        assert!(spread(&[0, 1], 0).is_empty());
    }

    #[test]
    fn lists_and_masks_turn_into_each_other() {
        let c = parse_list("5,0-2").unwrap();
        assert_eq!(list(&c), "0-2,5");
        assert_eq!(mask(&c), "27");
        assert_eq!(parse_mask("00000000,00000027").unwrap(), c);
        let high: BTreeSet<u32> = [0, 32].into();
        assert_eq!(mask(&high), "1,00000001");
        assert_eq!(parse_mask(&mask(&high)).unwrap(), high);
        assert_eq!(list(&parse_mask("00000000,00000000").unwrap()), NONE);
        assert_eq!(mask(&BTreeSet::new()), "0");
        assert_eq!(canonical("none").as_deref(), Some(NONE));
        assert_eq!(canonical("1,0").as_deref(), Some("0-1"));
        for bad in ["x", "2-1", "1-", "0,,1", "5000"] {
            assert_eq!(parse_list(bad), None, "{bad}");
        }
        assert_eq!(parse_mask("0g"), None);
    }
}
