//! Throw-away filesystems for disk tests: a size-limited tmpfs and a loop-mounted ext4
//! image, each mounted in its own temporary directory and unmounted by its guard.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::sh;

/// A temporary directory on the machine's real disk (/var/tmp, not a tmpfs /tmp).
pub fn disk_tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("hlctl-test-")
        .tempdir_in("/var/tmp")
        .expect("create a temp dir under /var/tmp")
}

/// Files in `dir` whose name starts with `prefix`.
pub fn files_with_prefix(dir: &Path, prefix: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("read test dir")
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with(prefix))
        .collect()
}

/// A filesystem mounted on a fresh temp dir; unmounted (lazily if busy) when dropped.
pub struct Mount {
    pub path: PathBuf,
    _base: tempfile::TempDir,
}

impl Mount {
    /// tmpfs limited to `size` (e.g. "128m").
    pub fn tmpfs(size: &str) -> Self {
        super::require_root("mounting a tmpfs");
        let base = disk_tempdir();
        let path = base.path().join("mnt");
        std::fs::create_dir(&path).expect("mkdir mnt");
        sh(&[
            "mount",
            "-t",
            "tmpfs",
            "-o",
            &format!("size={size}"),
            "tmpfs",
            path.to_str().unwrap(),
        ]);
        Mount { path, _base: base }
    }

    /// A ramfs (no size limit, no O_DIRECT: open refuses it with EINVAL).
    pub fn ramfs() -> Self {
        super::require_root("mounting a ramfs");
        let base = disk_tempdir();
        let path = base.path().join("mnt");
        std::fs::create_dir(&path).expect("mkdir mnt");
        sh(&["mount", "-t", "ramfs", "ramfs", path.to_str().unwrap()]);
        Mount { path, _base: base }
    }

    /// An ext4 image of `mib` MiB, loop-mounted.
    pub fn loop_ext4(mib: u32) -> Self {
        super::require_root("loop-mounting");
        let base = disk_tempdir();
        let img = base.path().join("fs.img");
        let f = std::fs::File::create(&img).expect("create image");
        f.set_len(u64::from(mib) << 20).expect("size image");
        drop(f);
        sh(&["mkfs.ext4", "-q", "-F", img.to_str().unwrap()]);
        let path = base.path().join("mnt");
        std::fs::create_dir(&path).expect("mkdir mnt");
        sh(&[
            "mount",
            "-o",
            "loop",
            img.to_str().unwrap(),
            path.to_str().unwrap(),
        ]);
        Mount { path, _base: base }
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let p = self.path.to_str().unwrap_or_default().to_string();
        let ok = Command::new("umount")
            .arg(&p)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            let _ = Command::new("umount").args(["-l", &p]).status();
        }
    }
}
