//! What the target directory sits on: filesystem type (statfs magic), whether it is
//! memory-backed, and whether there is room for the test files.

use std::path::Path;

use super::DiskError;

/// Kept free on top of the test files, so a benchmark never fills a filesystem.
pub(crate) const SAFETY_MARGIN: u64 = 64 << 20;

/// The filesystem under a directory.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub(crate) struct FsInfo {
    /// The statfs `f_type` magic number.
    pub(crate) magic: u64,
    /// Its usual name (`ext4`, `tmpfs`, …) or `unknown (0x…)`.
    pub(crate) name: String,
    /// True for tmpfs, ramfs and the like: "disk" I/O there is memory I/O.
    pub(crate) memory_backed: bool,
    /// Bytes an unprivileged writer may still use (`f_bavail × f_frsize`).
    pub(crate) available: u64,
}

impl FsInfo {
    /// Warnings to put in the report.
    pub(crate) fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.memory_backed {
            w.push(format!(
                "the directory is on {}, which is memory-backed: these figures measure RAM, not a disk",
                self.name
            ));
        }
        w
    }
}

const TMPFS: u64 = 0x0102_1994;
const RAMFS: u64 = 0x8584_58f6;
const HUGETLBFS: u64 = 0x9584_58f6;

/// Known `f_type` values (linux/magic.h) and whether each is memory-backed.
const KNOWN: &[(u64, &str, bool)] = &[
    (TMPFS, "tmpfs", true),
    (RAMFS, "ramfs", true),
    (HUGETLBFS, "hugetlbfs", true),
    (0xef53, "ext4", false),
    (0x5846_5342, "xfs", false),
    (0x9123_683e, "btrfs", false),
    (0x2fc1_2fc1, "zfs", false),
    (0xf2f5_2010, "f2fs", false),
    (0x6969, "nfs", false),
    (0xff53_4d42, "cifs", false),
    (0xfe53_4d42, "smb2", false),
    (0x6573_5546, "fuse", false),
    (0x794c_7630, "overlayfs", false),
    (0x4d44, "vfat", false),
    (0x2011_bab0, "exfat", false),
    (0x5346_544e, "ntfs", false),
    (0x0187, "autofs", false),
    (0x0102_1997, "9p", false),
    (0x5346_4846, "wslfs", false),
    (0x7366_746e, "ntfs3", false),
    (0xca45_1a4e, "bcachefs", false),
];

/// Name a statfs magic number, and say whether it is memory-backed.
pub(crate) fn classify(magic: u64) -> (String, bool) {
    KNOWN
        .iter()
        .find(|(m, _, _)| *m == magic)
        .map(|(_, name, mem)| (name.to_string(), *mem))
        .unwrap_or_else(|| (format!("unknown (0x{magic:x})"), false))
}

/// Look at the filesystem under `dir` (which must be an existing directory).
pub(crate) fn probe(dir: &Path) -> Result<FsInfo, DiskError> {
    let meta = std::fs::metadata(dir).map_err(|source| DiskError::Dir {
        path: dir.to_path_buf(),
        source,
    })?;
    if !meta.is_dir() {
        return Err(DiskError::NotADirectory {
            path: dir.to_path_buf(),
        });
    }
    let errno = |e: nix::Error| DiskError::Dir {
        path: dir.to_path_buf(),
        source: std::io::Error::from(e),
    };
    let sfs = nix::sys::statfs::statfs(dir).map_err(errno)?;
    let svfs = nix::sys::statvfs::statvfs(dir).map_err(errno)?;
    #[allow(clippy::unnecessary_cast)] // the field's width differs between targets
    let magic = sfs.filesystem_type().0 as u64 & 0xffff_ffff;
    let (name, memory_backed) = classify(magic);
    #[allow(clippy::unnecessary_cast)]
    let available = (svfs.blocks_available() as u64).saturating_mul(svfs.fragment_size() as u64);
    Ok(FsInfo {
        magic,
        name,
        memory_backed,
        available,
    })
}

/// Refuse when the files (`needed` bytes) plus [`SAFETY_MARGIN`] do not fit.
pub(crate) fn check_free(dir: &Path, fs: &FsInfo, needed: u64) -> Result<(), DiskError> {
    if needed.saturating_add(SAFETY_MARGIN) > fs.available {
        return Err(DiskError::NoSpace {
            path: dir.to_path_buf(),
            needed,
            margin: SAFETY_MARGIN,
            available: fs.available,
        });
    }
    Ok(())
}
