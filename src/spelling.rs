//! "Did you mean": the names closest to one that does not exist, for every
//! error that names something the user mistyped (sysctl keys, interfaces).

/// Levenshtein distance between two strings (by character).
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The candidates at most `max` edits from `name`, closest first (ties in
/// the candidates' order).
pub(crate) fn nearest<'a>(name: &str, candidates: &[&'a str], max: usize) -> Vec<&'a str> {
    let mut near: Vec<(usize, usize, &'a str)> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| (edit_distance(name, c), i, *c))
        .filter(|(d, _, _)| *d <= max)
        .collect();
    near.sort();
    near.into_iter().map(|(_, _, c)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("eth0", "eth0"), 0);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn nearest_first_and_only_within_reach() {
        let c = ["enp1s0", "eth1", "vmbr0", "eth0"];
        assert_eq!(nearest("eth2", &c, 2), vec!["eth1", "eth0"]);
        assert!(nearest("wlan0", &c, 1).is_empty());
    }
}
