//! The sysctl.d file hlctl owns (`90-hlctl.conf`), and who would override it.
//!
//! Boot-time order (systemd-sysctl, and procps `sysctl --system`): all
//! `*.conf` files of the search directories are sorted by file name (a name in
//! an earlier directory masks the same name in a later one) and applied in
//! that order, the later assignment of a key winning; procps then applies
//! `/etc/sysctl.conf` last. So our value holds unless a file sorting after
//! `90-hlctl.conf`, or `/etc/sysctl.conf`, sets the same key.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use super::error::SysctlError;
use super::keys::normalise;
use crate::paths::{Paths, SYSCTL_FILE};

/// Parse `key = value` lines (comments `#`/`;` and blanks ignored; a leading `-` ignored).
pub(crate) fn parse_assignments(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|line| {
            let l = line.trim();
            if l.is_empty() || l.starts_with('#') || l.starts_with(';') {
                return None;
            }
            let (k, v) = l.split_once('=')?;
            let k = k.trim().trim_start_matches('-').replace('/', ".");
            Some((k, normalise(v)))
        })
        .collect()
}

/// Merge `values` into the existing file text: lines for keys we set are
/// replaced in place, every other line (comments, other keys) is kept, new
/// keys are appended.
pub(crate) fn merge(existing: &str, values: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut written: Vec<&str> = Vec::new();
    if existing.trim().is_empty() {
        out.push_str("# Written by hlctl (hlctl sysctl --persist / hlctl tune).\n");
        out.push_str("# Lines for other keys are kept as they are.\n");
    }
    for line in existing.lines() {
        let key = parse_assignments(line).into_iter().next().map(|(k, _)| k);
        match key.as_deref().and_then(|k| values.get_key_value(k)) {
            Some((k, v)) if !written.contains(&k.as_str()) => {
                out.push_str(&format!("{k} = {v}\n"));
                written.push(k);
            }
            Some(_) => {} // a duplicate line for a key we now own: drop it
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    for (k, v) in values {
        if !written.contains(&k.as_str()) {
            out.push_str(&format!("{k} = {v}\n"));
        }
    }
    out
}

/// Write `values` into `90-hlctl.conf` atomically, keeping lines we do not own.
pub(crate) fn persist(
    paths: &Paths,
    values: &BTreeMap<String, String>,
) -> Result<PathBuf, SysctlError> {
    update(paths, |existing| merge(existing, values))
}

/// Read, change and write `90-hlctl.conf` under its lock, so that concurrent
/// writers (two `SetSysctl --persist` calls, a tune) lose nothing: `f` gets
/// the current text (empty when there is no file) and returns the new one.
pub(crate) fn update(
    paths: &Paths,
    f: impl FnOnce(&str) -> String,
) -> Result<PathBuf, SysctlError> {
    let path = paths.sysctl_file();
    let err = |source| SysctlError::Persist {
        path: path.display().to_string(),
        source,
    };
    let _lock = crate::fsutil::lock(&path).map_err(err)?;
    let existing = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(err(e)),
    };
    let text = f(&existing);
    crate::fsutil::write_state(
        crate::fsutil::Role::SysctlConf,
        &path,
        text.as_bytes(),
        0o644,
    )
    .map_err(err)?;
    Ok(path)
}

/// A configuration file that sets a key after us, so its value wins at boot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub(crate) struct Override {
    pub(crate) key: String,
    pub(crate) path: PathBuf,
    pub(crate) value: String,
}

/// Every `*.conf` file in the search path, in application order (masking applied).
pub(crate) fn config_files(paths: &Paths) -> Vec<PathBuf> {
    let mut by_name: BTreeMap<String, PathBuf> = BTreeMap::new();
    for dir in &paths.sysctl_search {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut names: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        names.sort();
        for p in names {
            let Some(name) = p.file_name().map(|n| n.to_string_lossy().into_owned()) else {
                continue;
            };
            if name.ends_with(".conf") {
                by_name.entry(name).or_insert(p);
            }
        }
    }
    let mut files: Vec<PathBuf> = by_name.into_values().collect();
    files.push(paths.sysctl_conf.clone());
    files
}

/// For each key, the files applied after `90-hlctl.conf` that set it too.
pub(crate) fn overrides(paths: &Paths, keys: &[String]) -> Vec<Override> {
    let mut found = Vec::new();
    let mut after_ours = false;
    for file in config_files(paths) {
        let is_ours = file.file_name().is_some_and(|n| n == SYSCTL_FILE);
        if is_ours {
            after_ours = true;
            continue;
        }
        // Files sorting after ours, and /etc/sysctl.conf (applied last), win.
        let name_after = file
            .file_name()
            .is_some_and(|n| n.to_string_lossy().as_ref() > SYSCTL_FILE);
        if !(after_ours || name_after || file == paths.sysctl_conf) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for (k, v) in parse_assignments(&text) {
            if keys.contains(&k) {
                found.push(Override {
                    key: k,
                    path: file.clone(),
                    value: v,
                });
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn merge_replaces_our_keys_and_keeps_the_rest() {
        let old =
            "# my notes\nvm.swappiness = 10\nnet.ipv4.tcp_rmem = 1 2 3\nnet.ipv4.tcp_rmem=4 5 6\n";
        let new = merge(
            old,
            &vals(&[
                ("net.ipv4.tcp_rmem", "4096 131072 16777216"),
                ("net.core.rmem_max", "16777216"),
            ]),
        );
        assert_eq!(
            new,
            "# my notes\nvm.swappiness = 10\nnet.ipv4.tcp_rmem = 4096 131072 16777216\nnet.core.rmem_max = 16777216\n"
        );
    }

    #[test]
    fn parse_handles_comments_slashes_and_dashes() {
        let a = parse_assignments("; c\n# c\n-net/ipv4/tcp_sack=0\n net.core.rmem_max =\t 5 \n");
        assert_eq!(
            a,
            vec![
                ("net.ipv4.tcp_sack".into(), "0".into()),
                ("net.core.rmem_max".into(), "5".into())
            ]
        );
    }

    #[test]
    fn later_files_and_sysctl_conf_are_reported_as_overrides() {
        let root = tempfile::tempdir().unwrap();
        let paths = Paths::under(root.path());
        std::fs::create_dir_all(&paths.sysctl_dir).unwrap();
        std::fs::create_dir_all(root.path().join("usr/lib/sysctl.d")).unwrap();
        let w = |p: &std::path::Path, s: &str| std::fs::write(p, s).unwrap();
        w(
            &paths.sysctl_dir.join("10-early.conf"),
            "net.ipv4.tcp_sack = 0\n",
        );
        w(
            &paths.sysctl_dir.join("99-late.conf"),
            "net.ipv4.tcp_sack = 1\n",
        );
        w(
            &root.path().join("usr/lib/sysctl.d/95-vendor.conf"),
            "net.ipv4.tcp_sack = 1\n",
        );
        // Masked by /etc/sysctl.d/99-late.conf: must not be reported.
        w(
            &root.path().join("usr/lib/sysctl.d/99-late.conf"),
            "net.ipv4.tcp_sack = 0\n",
        );
        w(&paths.sysctl_conf, "net.ipv4.tcp_sack=1\n");
        persist(&paths, &vals(&[("net.ipv4.tcp_sack", "1")])).unwrap();
        let o = overrides(&paths, &["net.ipv4.tcp_sack".to_string()]);
        let files: Vec<String> = o
            .iter()
            .map(|o| {
                o.path
                    .strip_prefix(root.path())
                    .unwrap()
                    .display()
                    .to_string()
            })
            .collect();
        assert_eq!(
            files,
            vec![
                "usr/lib/sysctl.d/95-vendor.conf",
                "etc/sysctl.d/99-late.conf",
                "etc/sysctl.conf"
            ]
        );
    }
}
