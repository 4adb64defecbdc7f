//! The fuzz targets' regression run: every committed input under
//! `fuzz/corpus/<target>/` and `fuzz/regressions/<target>/` goes through the
//! target's entry point in `hlctl::fuzzing` (the same function the fuzzer
//! calls), so a parser change that crashes on any of them fails here, without
//! a fuzzer installed. benches/fuzz.sh does the fuzzing itself.

use std::path::Path;

fn inputs(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<_> = entries
        .map(|e| e.expect("reading a corpus directory").path())
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    v
}

#[test]
fn every_target_runs_its_corpus() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut targets: Vec<String> = std::fs::read_dir(root.join("fuzz_targets"))
        .expect("fuzz/fuzz_targets")
        .map(|e| {
            let p = e.unwrap().path();
            p.file_stem().unwrap().to_string_lossy().into_owned()
        })
        .collect();
    targets.sort();
    let mut known: Vec<String> = hlctl::fuzzing::TARGETS
        .iter()
        .map(|(n, _)| n.to_string())
        .collect();
    known.sort();
    assert_eq!(
        targets, known,
        "fuzz/fuzz_targets/ and hlctl::fuzzing::TARGETS"
    );
    for (name, run) in hlctl::fuzzing::TARGETS {
        let mut files = inputs(&root.join("corpus").join(name));
        let seeds = files.len();
        files.extend(inputs(&root.join("regressions").join(name)));
        assert!(seeds > 0, "{name}: fuzz/corpus/{name}/ is empty");
        let mut ran = 0;
        for f in &files {
            let data = std::fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let result = std::panic::catch_unwind(|| run(&data));
            assert!(result.is_ok(), "{name}: {} crashes", f.display());
            ran += 1;
        }
        assert_eq!(ran, files.len());
        println!("{name}: {ran} inputs");
    }
}

/// Issue 38: the fuzz entry points (469 lines) were compiled into every
/// build and the public API. They are behind the `fuzzing` feature, off by
/// default, turned on only by the fuzz crate and by this package's
/// dev-dependency on itself (so `cargo test --all-targets` still runs the
/// corpus above, with no flag).
#[test]
fn the_entry_points_are_only_in_builds_that_ask_for_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
    let manifest: toml::Table = read("Cargo.toml").parse().unwrap();
    let features = manifest
        .get("features")
        .and_then(|f| f.as_table())
        .expect("Cargo.toml has no [features] (the `fuzzing` feature)");
    assert!(features.contains_key("fuzzing"), "{features:?}");
    let default = features.get("default").and_then(|d| d.as_array());
    assert!(
        default.is_none_or(|d| !d.iter().any(|f| f.as_str() == Some("fuzzing"))),
        "fuzzing is a default feature: {default:?}"
    );
    let has_fuzzing = |dep: &toml::Value| {
        dep.get("features")
            .and_then(|f| f.as_array())
            .is_some_and(|f| f.iter().any(|x| x.as_str() == Some("fuzzing")))
    };
    let dev = &manifest["dev-dependencies"]["hlctl"];
    assert!(has_fuzzing(dev), "the dev-dependency on hlctl: {dev:?}");
    let fuzz: toml::Table = read("fuzz/Cargo.toml").parse().unwrap();
    let dep = &fuzz["dependencies"]["hlctl"];
    assert!(has_fuzzing(dep), "fuzz/Cargo.toml's hlctl: {dep:?}");
    let lib = read("src/lib.rs");
    let decl = lib
        .find("pub mod fuzzing;")
        .expect("src/lib.rs declares fuzzing");
    let attrs = &lib[lib[..decl].rfind(";\n").map_or(0, |i| i + 2)..decl];
    assert!(
        attrs.contains("#[cfg(feature = \"fuzzing\")]"),
        "src/lib.rs: `pub mod fuzzing;` without #[cfg(feature = \"fuzzing\")]:\n{attrs}"
    );
}
