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
