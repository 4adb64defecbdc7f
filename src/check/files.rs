//! `[check] files`: each `bench file` target (an SSH place, a mount's
//! directory, a local one) written and read back, one after the other, with
//! this host's measurement lock held as for the network, so no figure is
//! taken on top of another. Only the transfer: the check's own peers are
//! its raw TCP, its `dirs` the disks.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::bench::exclusive::MeasureLock;
use crate::bench::file::{FileConfig, FileReport, Target};
use crate::bench::progress::{Cancel, NoProgress};
use crate::path::route::Toward;

/// One target's figures, or why there are none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct FileEntry {
    /// The target as `[check] files` names it.
    pub(crate) target: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) file: Option<FileReport>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
    /// The address the server resolved to and this host's interface
    /// toward it (`address`, `interface`, as `bench file`'s run has them).
    #[serde(flatten)]
    pub(crate) toward: Toward,
}

/// Write and read back `size_mib` MiB through `target` (an SSH one with
/// `ssh -F ssh_config` when given).
pub(crate) fn measure(
    target: &str,
    size_mib: u64,
    ssh_config: Option<&Path>,
    lock: &Path,
    cancel: &Cancel,
) -> FileEntry {
    let entry = |r: Result<FileReport, String>| FileEntry {
        target: target.to_string(),
        error: r.as_ref().err().cloned(),
        toward: Toward::server(r.as_ref().ok().and_then(|f| f.server.as_deref())),
        file: r.ok(),
    };
    let with_config = |t: Target| match t {
        Target::Ssh(mut s) => {
            s.config = ssh_config.map(Path::to_path_buf);
            Target::Ssh(s)
        }
        dir => dir,
    };
    let cfg =
        match Target::parse(target).and_then(|t| FileConfig::new(with_config(t), size_mib << 20)) {
            Ok(c) => c,
            Err(e) => return entry(Err(e.to_string())),
        };
    let _held = match MeasureLock::acquire_waiting(lock, &NoProgress, cancel) {
        Ok(Some(g)) => Some(g),
        Ok(None) => return entry(Err("cancelled".into())),
        Err(_) => None, // no state dir to lock in: measure anyway
    };
    entry(crate::bench::file::run(&cfg, &NoProgress, cancel).map_err(|e| e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A local directory, for real: both directions measured, the file
    /// gone afterwards; a bad target is an entry with the reason.
    #[test]
    fn a_directory_is_written_and_read_back_and_a_bad_target_says_why() {
        let d = tempfile::tempdir().unwrap();
        let lock = d.path().join("measure.lock");
        let place = d.path().join("files");
        std::fs::create_dir(&place).unwrap();
        let e = measure(place.to_str().unwrap(), 2, None, &lock, &Cancel::new());
        let f = e.file.as_ref().unwrap_or_else(|| panic!("{e:?}"));
        assert_eq!(f.size_bytes, 2 << 20);
        assert!(
            f.write.bytes_per_second > 0.0 && f.read.bytes_per_second > 0.0,
            "{f:?}"
        );
        assert_eq!(
            std::fs::read_dir(&place).unwrap().count(),
            0,
            "the test file is removed"
        );
        let e = measure("nas:/srv", 2, None, &lock, &Cancel::new());
        assert!(e.file.is_none());
        assert!(e.error.unwrap().contains("allowed ssh://[USER@]HOST"));
    }
}
