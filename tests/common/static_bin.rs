//! The static build (`scripts/build-static.sh`), built once for every test
//! that needs it (tests/static_binary.rs, tests/container.rs): `flock` on
//! `target/static/.build.lock` lets one test process build while the others
//! wait, and cargo's own cache (`target/static-build`) makes a build with
//! nothing changed take a second or two.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The repository's root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `target/static/hlctl`, built (or found up to date) once per test process.
pub fn hlctl() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let dir = root().join("target/static");
        std::fs::create_dir_all(&dir).unwrap();
        let start = std::time::Instant::now();
        let out = Command::new("flock")
            .arg(dir.join(".build.lock"))
            .arg(root().join("scripts/build-static.sh"))
            .output()
            .expect("run flock scripts/build-static.sh");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "scripts/build-static.sh failed:\n{err}"
        );
        eprintln!(
            "static build: {:.0} s ({})",
            start.elapsed().as_secs_f64(),
            err.lines().last().unwrap_or("")
        );
        let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
        PathBuf::from(path)
    })
    .clone()
}
