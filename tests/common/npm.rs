//! Packages from the npm registry for a test, as a lock file pins them:
//! `npm ci` once into a cache keyed by a hash of package.json and
//! package-lock.json, under a lock (two test binaries may ask at once).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::deb::ok;
use super::sysvm::hash;

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The node_modules' parent for the package.json and package-lock.json in
/// `src` (a directory of the repository), installed under `cache` unless a
/// finished install is there; `done` is a path inside it that only a whole
/// install has (`node_modules/typescript/bin/tsc`).
pub fn installed(src: &Path, cache: &str, done: &str) -> PathBuf {
    let manifest = read(&src.join("package.json"));
    let lock = read(&src.join("package-lock.json"));
    let dir = Path::new(cache).join(hash(&[&manifest, &lock]));
    std::fs::create_dir_all(cache).unwrap();
    let _lock = super::cache_lock(Path::new(cache).join(".lock"));
    if dir.join(done).exists() {
        return dir;
    }
    let t = std::time::Instant::now();
    let build = tempfile::Builder::new()
        .prefix("npm-ci")
        .tempdir_in(cache)
        .unwrap();
    std::fs::write(build.path().join("package.json"), &manifest).unwrap();
    std::fs::write(build.path().join("package-lock.json"), &lock).unwrap();
    let o = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--ignore-scripts"])
        .current_dir(build.path())
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run npm ({e}): scripts/setup.sh installs Node.js and npm")
        });
    let what = format!("npm ci in {cache}");
    ok(&what, &o);
    std::fs::rename(build.keep(), &dir).unwrap();
    println!("{what}: {:.1} s", t.elapsed().as_secs_f64());
    dir
}
