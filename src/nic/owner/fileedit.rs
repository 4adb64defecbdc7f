//! Editing a network manager's file the way hlctl edits its own: under
//! the file's lock, with a copy kept in the backup directory, written
//! atomically with the same mode, and put back when the manager's own check
//! fails; and running the managers' tools.

use std::path::{Path, PathBuf};

use super::Roots;
use super::error::OwnerError;

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
    crate::fsutil::write_state(crate::fsutil::Role::OwnerFile, path, text.as_bytes(), mode)
}

/// `BACKUP_DIR/etc_network_interfaces.<seconds>`: the file before hlctl's edit.
fn backup(roots: &Roots, path: &Path, text: &str) -> std::io::Result<PathBuf> {
    let flat = roots.live(path).trim_start_matches('/').replace('/', "_");
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let p = roots.backup_dir.join(format!("{flat}.{secs}"));
    crate::fsutil::write_state(crate::fsutil::Role::OwnerBackup, &p, text.as_bytes(), 0o600)?;
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
