//! ifupdown and ifupdown2: `/etc/network/interfaces` and the files it
//! `source`s, read into stanzas; the options each one sets, as registry
//! settings; and the one-line edits hlctl makes to a stanza.
//!
//! ifupdown2 (Proxmox VE) sets a physical interface, bond or bridge that has
//! a stanza but no `mtu` line back to 1500 on every `ifreload -a`, so it owns
//! the MTU of every interface with a stanza; the other options only where a
//! line sets them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{Manager, Owner, Roots, feature};

/// What an option of a stanza sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// A registry setting, by name (`mtu`, `link speed`).
    Setting(&'static str),
    /// An ethtool short feature name (`gro`), standing for its kernel features.
    Feature(&'static str),
}

/// ifupdown2's options (`addons/address.py`, `addons/ethtool.py`).
const IFUPDOWN2: &[(&str, Target)] = &[
    ("mtu", Target::Setting("mtu")),
    ("link-speed", Target::Setting("link speed")),
    ("link-duplex", Target::Setting("link duplex")),
    ("link-autoneg", Target::Setting("link autoneg")),
    ("gro-offload", Target::Feature("gro")),
    ("lro-offload", Target::Feature("lro")),
    ("gso-offload", Target::Feature("gso")),
    ("tso-offload", Target::Feature("tso")),
    ("ufo-offload", Target::Feature("ufo")),
    ("tx-offload", Target::Feature("tx")),
    ("rx-offload", Target::Feature("rx")),
];

/// Classic ifupdown's `mtu` and the options of the ethtool package's hook.
const IFUPDOWN: &[(&str, Target)] = &[
    ("mtu", Target::Setting("mtu")),
    ("link-speed", Target::Setting("link speed")),
    ("link-duplex", Target::Setting("link duplex")),
    ("ethernet-autoneg", Target::Setting("link autoneg")),
    ("ethernet-pause-autoneg", Target::Setting("pause autoneg")),
    ("ethernet-pause-rx", Target::Setting("pause rx")),
    ("ethernet-pause-tx", Target::Setting("pause tx")),
    ("hardware-dma-ring-rx", Target::Setting("ring rx")),
    ("hardware-dma-ring-tx", Target::Setting("ring tx")),
    (
        "hardware-irq-coalesce-rx-usecs",
        Target::Setting("coalesce rx-usecs"),
    ),
    (
        "hardware-irq-coalesce-tx-usecs",
        Target::Setting("coalesce tx-usecs"),
    ),
    (
        "hardware-irq-coalesce-rx-frames",
        Target::Setting("coalesce rx-frames"),
    ),
    (
        "hardware-irq-coalesce-tx-frames",
        Target::Setting("coalesce tx-frames"),
    ),
    ("offload-gro", Target::Feature("gro")),
    ("offload-lro", Target::Feature("lro")),
    ("offload-gso", Target::Feature("gso")),
    ("offload-tso", Target::Feature("tso")),
    ("offload-ufo", Target::Feature("ufo")),
    ("offload-tx", Target::Feature("tx")),
    ("offload-rx", Target::Feature("rx")),
    ("offload-sg", Target::Feature("sg")),
];

/// The option table of a flavour.
pub(crate) fn options(m: Manager) -> &'static [(&'static str, Target)] {
    if m == Manager::Ifupdown2 {
        IFUPDOWN2
    } else {
        IFUPDOWN
    }
}

/// One option line of a stanza.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Opt {
    /// Index of its (first) physical line in the file.
    pub(crate) line: usize,
    pub(crate) key: String,
    pub(crate) value: String,
}

/// An `iface NAME ...` stanza.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Stanza {
    pub(crate) iface: String,
    /// Index of the `iface` line.
    pub(crate) header: usize,
    pub(crate) options: Vec<Opt>,
    /// Index of the stanza's last physical line.
    pub(crate) last: usize,
}

impl Stanza {
    pub(crate) fn option(&self, key: &str) -> Option<&Opt> {
        self.options.iter().find(|o| o.key == key)
    }
}

/// A parsed file: its stanzas and the files it includes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Parsed {
    pub(crate) stanzas: Vec<Stanza>,
    /// `source PATTERN` (false) and `source-directory DIR` (true), as written.
    pub(crate) sources: Vec<(String, bool)>,
}

/// A logical line: physical lines joined at a trailing backslash.
struct Logical {
    first: usize,
    last: usize,
    text: String,
}

fn logical_lines(text: &str) -> Vec<Logical> {
    let mut out: Vec<Logical> = Vec::new();
    let mut open = false;
    for (i, raw) in text.lines().enumerate() {
        let (body, cont) = match raw.trim_end().strip_suffix('\\') {
            Some(b) => (b, true),
            None => (raw, false),
        };
        match out.last_mut() {
            Some(l) if open => {
                l.last = i;
                l.text.push(' ');
                l.text.push_str(body.trim());
            }
            _ => out.push(Logical {
                first: i,
                last: i,
                text: body.trim().to_string(),
            }),
        }
        open = cont;
    }
    out
}

fn is_stanza_start(word: &str) -> bool {
    matches!(
        word,
        "iface" | "auto" | "mapping" | "source" | "source-directory" | "rename" | "template"
    ) || word.starts_with("allow-")
}

/// Parse one interfaces(5) file.
pub(crate) fn parse(text: &str) -> Parsed {
    let mut p = Parsed::default();
    let mut current: Option<Stanza> = None;
    for l in logical_lines(text) {
        if l.text.is_empty() || l.text.starts_with('#') {
            continue;
        }
        let mut words = l.text.split_whitespace();
        let first = words.next().unwrap_or_default();
        if !is_stanza_start(first) {
            if let Some(s) = current.as_mut() {
                let value = l.text[first.len()..].trim().to_string();
                s.options.push(Opt {
                    line: l.first,
                    key: first.to_string(),
                    value,
                });
                s.last = l.last;
            }
            continue;
        }
        p.stanzas.extend(current.take());
        match first {
            "iface" => {
                current = words.next().map(|name| Stanza {
                    iface: name.to_string(),
                    header: l.first,
                    options: Vec::new(),
                    last: l.last,
                });
            }
            "source" | "source-directory" => {
                if let Some(what) = words.next() {
                    p.sources
                        .push((what.to_string(), first == "source-directory"));
                }
            }
            _ => {}
        }
    }
    p.stanzas.extend(current);
    p
}

/// A file of the configuration with its text and what it holds.
#[derive(Clone, Debug)]
pub(crate) struct File {
    pub(crate) path: PathBuf,
    pub(crate) parsed: Parsed,
}

/// `/etc/network/interfaces` and every file it sources, in reading order.
/// Missing files are skipped; nesting stops at 8 levels.
pub(crate) fn load(roots: &Roots) -> Vec<File> {
    let mut out = Vec::new();
    load_into(roots, &roots.interfaces(), 0, &mut out);
    out
}

fn load_into(roots: &Roots, path: &Path, depth: usize, out: &mut Vec<File>) {
    if depth > 8 || out.iter().any(|f| f.path == path) {
        return;
    }
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    let parsed = parse(&text);
    let sources = parsed.sources.clone();
    out.push(File {
        path: path.to_path_buf(),
        parsed,
    });
    let dir = path.parent().unwrap_or(Path::new("/"));
    for (what, is_dir) in sources {
        for p in expand_source(roots, dir, &what, is_dir) {
            load_into(roots, &p, depth + 1, out);
        }
    }
}

/// The files a `source` pattern or `source-directory` names, sorted. A
/// relative path is relative to the including file's directory; a `*` or
/// `?` is matched in the last component only.
fn expand_source(roots: &Roots, dir: &Path, what: &str, is_dir: bool) -> Vec<PathBuf> {
    let full = if what.starts_with('/') {
        roots.at(what)
    } else {
        dir.join(what)
    };
    let (parent, pattern) = if is_dir {
        (full, "*".to_string())
    } else {
        let name = full.file_name().map(|n| n.to_string_lossy().into_owned());
        match (full.parent(), name) {
            (Some(p), Some(n)) => (p.to_path_buf(), n),
            _ => return Vec::new(),
        }
    };
    if !is_dir && !pattern.contains(['*', '?']) {
        return vec![parent.join(pattern)];
    }
    let Ok(rd) = std::fs::read_dir(&parent) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = rd
        .flatten()
        .filter(|e| e.path().is_file())
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            // source-directory takes only run-parts style names.
            let ok_dir = !is_dir
                || n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c));
            ok_dir && glob_match(&pattern, &n)
        })
        .map(|e| e.path())
        .collect();
    files.sort();
    files
}

/// Shell-style match of `*` and `?` (no brackets).
fn glob_match(pattern: &str, name: &str) -> bool {
    fn go(p: &[char], n: &[char]) -> bool {
        match (p.first(), n.first()) {
            (None, None) => true,
            (Some('*'), _) => go(&p[1..], n) || (!n.is_empty() && go(p, &n[1..])),
            (Some('?'), Some(_)) => go(&p[1..], &n[1..]),
            (Some(a), Some(b)) if a == b => go(&p[1..], &n[1..]),
            _ => false,
        }
    }
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // Hidden files are not matched by `*`, as in the shell.
    (pattern.starts_with('.') || !name.starts_with('.')) && go(&p, &n)
}

/// The stanzas of `iface` across the files, with their file.
pub(crate) fn stanzas<'a>(files: &'a [File], iface: &str) -> Vec<(&'a File, &'a Stanza)> {
    files
        .iter()
        .flat_map(|f| f.parsed.stanzas.iter().map(move |s| (f, s)))
        .filter(|(_, s)| s.iface == iface)
        .collect()
}

/// The settings an option sets (a feature short name: every kernel feature it stands for).
pub(crate) fn settings_of(target: Target) -> Vec<String> {
    match target {
        Target::Setting(s) => vec![s.to_string()],
        Target::Feature(short) => crate::nic::aliases::expand(short)
            .unwrap_or_default()
            .iter()
            .map(|k| feature(k))
            .collect(),
    }
}

/// ifupdown/ifupdown2's hold on `iface`, when a stanza names it.
pub(crate) fn owner(roots: &Roots, iface: &str) -> Option<Owner> {
    let files = load(roots);
    let found = stanzas(&files, iface);
    let (file, _) = found.first()?;
    let manager = if roots.has_ifupdown2() {
        Manager::Ifupdown2
    } else {
        Manager::Ifupdown
    };
    let mut owns = BTreeSet::new();
    if manager == Manager::Ifupdown2 {
        owns.insert("mtu".to_string());
    }
    for (_, s) in &found {
        for o in &s.options {
            if let Some((_, t)) = options(manager).iter().find(|(k, _)| *k == o.key) {
                owns.extend(settings_of(*t));
            }
        }
    }
    Some(Owner {
        manager: Some(manager),
        name: Some(format!("iface {iface}")),
        file: Some(roots.live(&file.path)),
        netplan: None,
        owns,
    })
}

/// `text` with option `key` of the stanza set to `value`: the line's value
/// replaced where the stanza has it, else a line added after the stanza's
/// last line, indented like its other options (a tab when it has none).
/// Every other byte stays as it was.
pub(crate) fn set_option(text: &str, stanza: &Stanza, key: &str, value: &str) -> String {
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    match stanza.option(key) {
        Some(o) => {
            let old = &lines[o.line];
            let indent: String = old.chars().take_while(|c| c.is_whitespace()).collect();
            let eol = if old.ends_with('\n') { "\n" } else { "" };
            lines[o.line] = format!("{indent}{key} {value}{eol}");
        }
        None => {
            let indent = stanza.options.first().map_or("\t".to_string(), |o| {
                lines[o.line]
                    .chars()
                    .take_while(|c| c.is_whitespace())
                    .collect()
            });
            if !lines[stanza.last].ends_with('\n') {
                lines[stanza.last].push('\n');
            }
            lines.insert(stanza.last + 1, format!("{indent}{key} {value}\n"));
        }
    }
    lines.concat()
}

/// `text` with option line `key` of the stanza removed (as if never added).
pub(crate) fn remove_option(text: &str, stanza: &Stanza, key: &str) -> String {
    let Some(o) = stanza.option(key) else {
        return text.to_string();
    };
    text.split_inclusive('\n')
        .enumerate()
        .filter(|(i, _)| *i != o.line)
        .map(|(_, l)| l)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Proxmox VE 8 installer's file, as `pve-network` writes it.
    const PVE: &str = "auto lo\niface lo inet loopback\n\niface enp1s0 inet manual\n\nauto vmbr0\niface vmbr0 inet static\n\taddress 192.168.1.10/24\n\tgateway 192.168.1.1\n\tbridge-ports enp1s0\n\tbridge-stp off\n\tbridge-fd 0\n\n\nsource /etc/network/interfaces.d/*\n";

    fn roots(dir: &Path) -> Roots {
        Roots::new(&crate::paths::Paths::under(dir))
    }

    #[test]
    fn parses_stanzas_options_and_sources() {
        let p = parse(PVE);
        let names: Vec<&str> = p.stanzas.iter().map(|s| s.iface.as_str()).collect();
        assert_eq!(names, ["lo", "enp1s0", "vmbr0"]);
        let v = &p.stanzas[2];
        assert_eq!(v.header, 6);
        assert_eq!(v.last, 11);
        assert_eq!(v.option("bridge-ports").unwrap().value, "enp1s0");
        assert!(v.option("mtu").is_none());
        assert_eq!(
            p.sources,
            [("/etc/network/interfaces.d/*".to_string(), false)]
        );
    }

    #[test]
    fn continuation_lines_join_and_comments_are_skipped() {
        let p = parse("iface a inet manual\n  # mtu 1\n  bridge-ports x \\\n    y\n  mtu 9000\n");
        let s = &p.stanzas[0];
        assert_eq!(s.option("bridge-ports").unwrap().value, "x y");
        assert_eq!(s.option("mtu").unwrap().line, 4);
        assert_eq!(s.options.len(), 2);
    }

    #[test]
    fn set_then_remove_leaves_the_file_byte_identical() {
        let p = parse(PVE);
        let added = set_option(PVE, &p.stanzas[2], "mtu", "9000");
        assert!(
            added.contains("\tbridge-fd 0\n\tmtu 9000\n\n\nsource"),
            "{added}"
        );
        assert_eq!(added.len(), PVE.len() + "\tmtu 9000\n".len());
        let again = parse(&added);
        assert_eq!(again.stanzas[2].option("mtu").unwrap().value, "9000");
        let changed = set_option(&added, &again.stanzas[2], "mtu", "1500");
        assert_eq!(changed, added.replace("mtu 9000", "mtu 1500"));
        let back = remove_option(&added, &again.stanzas[2], "mtu");
        assert_eq!(back, PVE);
        // A stanza with no options gets a tab-indented line.
        let port = set_option(PVE, &p.stanzas[1], "mtu", "9000");
        assert!(
            port.contains("iface enp1s0 inet manual\n\tmtu 9000\n\n"),
            "{port}"
        );
    }

    #[test]
    fn sourced_files_are_followed_and_ownership_mapped() {
        let dir = tempfile::tempdir().unwrap();
        let r = roots(dir.path());
        std::fs::create_dir_all(r.at("/etc/network/interfaces.d")).unwrap();
        std::fs::create_dir_all(r.at("/usr/share/ifupdown2")).unwrap();
        std::fs::write(r.interfaces(), PVE).unwrap();
        std::fs::write(
            r.at("/etc/network/interfaces.d/eno2"),
            "auto eno2\niface eno2\n    mtu 9000\n    gro-offload off\n    link-speed 1000\n",
        )
        .unwrap();
        std::fs::write(r.at("/etc/network/interfaces.d/.hidden"), "iface eno3\n").unwrap();
        let o = owner(&r, "eno2").unwrap();
        assert_eq!(o.manager, Some(Manager::Ifupdown2));
        assert_eq!(o.file.as_deref(), Some("/etc/network/interfaces.d/eno2"));
        let owns: Vec<&str> = o.owns.iter().map(String::as_str).collect();
        assert_eq!(owns, ["feature rx-gro", "link speed", "mtu"]);
        // ifupdown2 resets the MTU of any interface it has a stanza for.
        let v = owner(&r, "vmbr0").unwrap();
        assert!(v.owns.contains("mtu"));
        assert!(owner(&r, "eno3").is_none());
        assert!(owner(&r, "eth9").is_none());
        std::fs::remove_dir(r.at("/usr/share/ifupdown2")).unwrap();
        let classic = owner(&r, "vmbr0").unwrap();
        assert_eq!(classic.manager, Some(Manager::Ifupdown));
        assert!(
            classic.owns.is_empty(),
            "classic ifupdown sets no mtu without a line"
        );
    }

    #[test]
    fn source_directory_takes_run_parts_names_only() {
        assert!(glob_match("*", "eno1"));
        assert!(!glob_match("*", ".eno1"));
        assert!(glob_match("*.cfg", "a.cfg"));
        assert!(!glob_match("*.cfg", "a.cfg~"));
        let dir = tempfile::tempdir().unwrap();
        let r = roots(dir.path());
        std::fs::create_dir_all(r.at("/etc/network/d")).unwrap();
        std::fs::write(r.interfaces(), "source-directory d\n").unwrap();
        std::fs::write(r.at("/etc/network/d/a"), "iface a\n").unwrap();
        std::fs::write(r.at("/etc/network/d/b.bak"), "iface b\n").unwrap();
        let files = load(&r);
        assert_eq!(files.len(), 2);
        assert_eq!(stanzas(&files, "a").len(), 1);
        assert!(stanzas(&files, "b").is_empty());
    }
}
