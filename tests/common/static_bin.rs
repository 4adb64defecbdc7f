//! The static build (`scripts/build-static.sh`) and the OCI image
//! (`scripts/build-image.sh`), each built once for every test that needs it
//! (tests/static_binary.rs, tests/container.rs): `flock` on a lock file in
//! its output directory lets one test process build while the others wait,
//! and cargo's own cache (`target/static-build`) makes a build with nothing
//! changed take a second or two.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The repository's root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Run `scripts/SCRIPT` under `target/DIR/.build.lock`; the path it prints last.
fn build_locked(script: &str, dir: &str) -> PathBuf {
    let dir = root().join("target").join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let start = std::time::Instant::now();
    let out = Command::new("flock")
        .arg(dir.join(".build.lock"))
        .arg(root().join("scripts").join(script))
        .output()
        .unwrap_or_else(|e| panic!("run flock scripts/{script}: {e}"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "scripts/{script} failed:\n{err}");
    eprintln!(
        "{script}: {:.0} s ({})",
        start.elapsed().as_secs_f64(),
        err.lines().last().unwrap_or("")
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    PathBuf::from(stdout.lines().last().unwrap_or("").trim())
}

/// `target/static/hlctl`, built (or found up to date) once per test process.
pub fn hlctl() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| build_locked("build-static.sh", "static"))
        .clone()
}

/// The OCI image: `target/oci/hlctl-VERSION.oci.tar`, its tag
/// `localhost/hlctl:VERSION` and its ID, then in podman's storage (buildah
/// and podman share it), built once per test process after the binary.
/// Containers are run by the ID: the tag is the last build's of any checkout
/// on this machine.
pub struct Image {
    pub archive: PathBuf,
    pub tag: String,
    pub id: String,
}

pub fn image() -> Image {
    static IMG: OnceLock<PathBuf> = OnceLock::new();
    let archive = IMG.get_or_init(|| {
        hlctl();
        build_locked("build-image.sh", "oci")
    });
    let version = env!("CARGO_PKG_VERSION");
    let id_file = archive.with_file_name(format!("hlctl-{version}.image-id"));
    let id = std::fs::read_to_string(&id_file)
        .unwrap_or_else(|e| panic!("{}: {e}", id_file.display()))
        .trim()
        .to_string();
    assert!(!id.is_empty(), "{}: empty", id_file.display());
    Image {
        archive: archive.clone(),
        tag: format!("localhost/hlctl:{version}"),
        id,
    }
}
