//! `/etc/hosts`: `ADDRESS NAME [ALIAS...]`, `#` comments; names match
//! without regard to case, in file order.

use std::net::IpAddr;
use std::path::Path;

/// The addresses `name` has in the hosts file (none when it is unreadable).
pub(super) fn lookup(file: &Path, name: &str) -> Vec<IpAddr> {
    std::fs::read_to_string(file)
        .map(|t| parse(&t, name))
        .unwrap_or_default()
}

pub(super) fn parse(text: &str, name: &str) -> Vec<IpAddr> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("");
        let mut words = line.split_whitespace();
        let Some(Ok(ip)) = words
            .next()
            .map(|w| w.split('%').next().unwrap_or(w).parse())
        else {
            continue;
        };
        if words.any(|w| w.eq_ignore_ascii_case(name)) && !out.contains(&ip) {
            out.push(ip);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_aliases_comments_and_both_families() {
        let t = "# comment nas\n127.0.0.1 localhost\n10.1.2.3  NAS.lan nas # the box\n\
                 fd00::3 nas\nbogus nas\n10.1.2.3 nas\n";
        let ips = parse(t, "nas");
        assert_eq!(
            ips,
            vec![
                "10.1.2.3".parse::<IpAddr>().unwrap(),
                "fd00::3".parse().unwrap()
            ]
        );
        assert_eq!(parse(t, "nas.LAN").len(), 1);
        assert!(parse(t, "comment").is_empty());
        assert!(parse(t, "box").is_empty());
    }
}
