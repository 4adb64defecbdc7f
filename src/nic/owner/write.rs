//! Persisting settings through the managers that own them, and undoing
//! that. Each line or key hlctl writes is a [`Placed`], recorded with the
//! persisted entry in hlctl's own file, so rollback can put the manager's
//! file back as it was.
//!
//! A manager's file is edited under the same lock and with the same atomic
//! write as hlctl's own files, after a copy of it is kept in the backup
//! directory; when the manager's own check fails, the file is put back.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::OwnerError;
use super::{Manager, Roots, edit_ifupdown, edit_networkd};
use crate::nic::model::ChangeSet;
use crate::nic::registry;

/// One line or key hlctl wrote into a manager's file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Placed {
    pub(crate) manager: Manager,
    /// The file written (as the live system names it).
    pub(crate) file: String,
    /// The stanza (`vmbr0`) or section (`Link`) the key is in.
    pub(crate) section: String,
    pub(crate) key: String,
    pub(crate) value: String,
    /// The key's value before hlctl first wrote it (`None`: hlctl added the key).
    pub(crate) before: Option<String>,
    /// The settings the key carries (`mtu`, `feature rx-gro`).
    pub(crate) settings: Vec<String>,
}

impl Placed {
    fn same_key(&self, other: &Placed) -> bool {
        (self.manager, &self.file, &self.section, &self.key)
            == (other.manager, &other.file, &other.section, &other.key)
    }

    /// `mtu 9000 in iface vmbr0 of /etc/network/interfaces`.
    pub(crate) fn describe(&self) -> String {
        format!(
            "{} {} in {} of {}",
            self.key, self.value, self.section, self.file
        )
    }
}

/// The settings a change set requests, as (registry name, value), and its
/// features as (`feature NAME`, on/off).
pub(crate) fn requested(cs: &ChangeSet) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = registry::SETTINGS
        .iter()
        .filter_map(|s| (s.get)(cs).map(|v| (s.name(), v)))
        .collect();
    out.extend(cs.features.iter().map(|(k, on)| {
        let v = if *on { "on" } else { "off" };
        (super::feature(k), Value::from(v))
    }));
    out
}

/// Write `cs` for `iface` where the managers that own its settings read
/// them. On a failure half-way, what was written is undone.
pub(crate) fn persist(
    roots: &Roots,
    iface: &str,
    ifindex: u32,
    cs: &ChangeSet,
) -> Result<Vec<Placed>, OwnerError> {
    let mut done = Vec::new();
    let steps: [&dyn Fn() -> Result<Vec<Placed>, OwnerError>; 2] =
        [&|| edit_ifupdown::persist(roots, iface, cs), &|| {
            edit_networkd::persist(roots, iface, ifindex, cs)
        }];
    for step in steps {
        match step() {
            Ok(p) => done.extend(p),
            Err(e) => {
                let _ = undo(roots, iface, &done);
                return Err(e);
            }
        }
    }
    Ok(done)
}

/// Put every key back as it was before hlctl wrote it (newest first).
pub(crate) fn undo(roots: &Roots, iface: &str, placed: &[Placed]) -> Result<(), OwnerError> {
    restore(roots, iface, placed, &[])
}

/// Bring the keys in `now` back to `before` (an earlier record of the same
/// entry): a key in both gets its earlier value, a key only in `now` its
/// value from before hlctl wrote it.
pub(crate) fn restore(
    roots: &Roots,
    iface: &str,
    now: &[Placed],
    before: &[Placed],
) -> Result<(), OwnerError> {
    let mut first_error = None;
    for p in now.iter().rev() {
        let target = match before.iter().find(|b| b.same_key(p)) {
            Some(b) if b.value == p.value => continue,
            Some(b) => Some(b.value.clone()),
            None => p.before.clone(),
        };
        let r = match p.manager {
            Manager::Ifupdown2 | Manager::Ifupdown => {
                edit_ifupdown::set_back(roots, iface, p, target)
            }
            _ => edit_networkd::set_back(roots, iface, p, target),
        };
        if let Err(e) = r {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// Merge newly placed keys into an entry's list: a key written again keeps
/// the value it had before hlctl first wrote it.
pub(crate) fn merge(list: &mut Vec<Placed>, new: &[Placed]) {
    for n in new {
        match list.iter_mut().find(|p| p.same_key(n)) {
            Some(p) => {
                p.value = n.value.clone();
                p.settings = n.settings.clone();
            }
            None => list.push(n.clone()),
        }
    }
}

/// Edit a manager's file under hlctl's lock: keep a copy in the backup
/// directory, write the new text atomically (same mode), then run `check`;
/// when it fails, put the old text back. Returns the old text.
pub(crate) fn edit_file(
    roots: &Roots,
    iface: &str,
    path: &Path,
    change: impl FnOnce(&str) -> Result<String, OwnerError>,
    check: impl FnOnce() -> Result<(), OwnerError>,
) -> Result<String, OwnerError> {
    let io = |e| OwnerError::io(iface, path, e);
    let _lock = crate::fsutil::lock(path).map_err(io)?;
    let (old, mode) = match std::fs::read_to_string(path) {
        Ok(t) => (t, file_mode(path)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (String::new(), 0o644),
        Err(e) => return Err(io(e)),
    };
    let new = change(&old)?;
    if new == old {
        return Ok(old);
    }
    if !old.is_empty() {
        backup(roots, path, &old).map_err(io)?;
    }
    write_or_remove(path, &new, mode).map_err(io)?;
    if let Err(e) = check() {
        write_or_remove(path, &old, mode).map_err(io)?;
        return Err(e);
    }
    Ok(old)
}

fn file_mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).map_or(0o644, |m| m.permissions().mode() & 0o7777)
}

/// Empty text removes the file (a drop-in hlctl no longer needs).
fn write_or_remove(path: &Path, text: &str, mode: u32) -> std::io::Result<()> {
    if text.is_empty() {
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        if let Some(dir) = path.parent() {
            let _ = std::fs::remove_file(dir.join(format!(
                ".{}.lock",
                path.file_name().unwrap_or_default().to_string_lossy()
            )));
            let _ = std::fs::remove_dir(dir); // only when empty
        }
        return Ok(());
    }
    crate::fsutil::write_atomic(path, text.as_bytes(), mode)
}

/// `BACKUP_DIR/etc_network_interfaces.<seconds>`: the file before hlctl's edit.
fn backup(roots: &Roots, path: &Path, text: &str) -> std::io::Result<PathBuf> {
    let flat = roots.live(path).trim_start_matches('/').replace('/', "_");
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let p = roots.backup_dir.join(format!("{flat}.{secs}"));
    crate::fsutil::write_atomic(&p, text.as_bytes(), 0o600)?;
    Ok(p)
}

/// Run a manager's tool; its failure (or absence) as an error naming it.
pub(crate) fn run(iface: &str, path: &Path, argv: &[&str]) -> Result<String, OwnerError> {
    let out = std::process::Command::new(argv[0])
        .args(&argv[1..])
        .output()
        .map_err(|e| OwnerError::io(iface, Path::new(argv[0]), e))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(text)
    } else {
        Err(OwnerError::Tool {
            iface: iface.to_string(),
            command: argv.join(" "),
            status: out.status.to_string(),
            output: text.trim().to_string(),
            path: path.display().to_string(),
        })
    }
}

/// True when `program` is on the live system's PATH.
pub(crate) fn have(program: &str) -> bool {
    ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]
        .iter()
        .any(|d| Path::new(d).join(program).exists())
}
