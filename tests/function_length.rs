//! No function in `src/` over 80 lines (signature to closing brace), but for
//! those ARCHITECTURE.md names under "Functions over 80 lines, on purpose"
//! (today: none). A function reads as named steps; a longer one is split
//! into them. Test modules (from a file's first `#[cfg(test)]`) are left out.

use std::path::{Path, PathBuf};

const MAX_LINES: usize = 80;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The name of the function a line starts, if it starts one.
fn fn_name(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    for prefix in [
        "pub(crate) ",
        "pub(super) ",
        "pub ",
        "const ",
        "async ",
        "unsafe ",
    ] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    let rest = rest.strip_prefix("fn ")?;
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    Some(&rest[..end])
}

/// (file, function, lines) of every function longer than `max`.
fn long_functions(text: &str, max: usize) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let end_of_code = lines
        .iter()
        .position(|l| l.trim_start().starts_with("#[cfg(test)]"))
        .unwrap_or(lines.len());
    let mut out = Vec::new();
    let mut i = 0;
    while i < end_of_code {
        let Some(name) = fn_name(lines[i]) else {
            i += 1;
            continue;
        };
        let indent = lines[i].len() - lines[i].trim_start().len();
        // A declaration without a body (trait method) ends with `;`.
        let mut j = i;
        while j < end_of_code && !lines[j].contains('{') && !lines[j].trim_end().ends_with(';') {
            j += 1;
        }
        if j >= end_of_code || lines[j].trim_end().ends_with(';') {
            i = j + 1;
            continue;
        }
        let close = format!("{}}}", " ".repeat(indent));
        let k = (j..end_of_code)
            .find(|&k| lines[k].trim_end() == close)
            .unwrap_or(end_of_code);
        let n = k - i + 1;
        if n > max {
            out.push((name.to_string(), n));
        }
        i = k + 1;
    }
    out
}

#[test]
fn no_function_in_src_is_over_80_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let arch = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let allowed = arch
        .split("## Functions over 80 lines, on purpose")
        .nth(1)
        .unwrap_or("");
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut long = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let rel = f.strip_prefix(root).unwrap().display().to_string();
        for (name, n) in long_functions(&text, MAX_LINES) {
            if !allowed.contains(&format!("`{rel}` `{name}`")) {
                long.push(format!("{rel} {name}: {n} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_LINES} lines (split them into named steps, or name them in \
         ARCHITECTURE.md with the reason): {long:#?}"
    );
}

/// The measure itself: a body of 81 lines is found, one of 80 is not, and a
/// test module is left out.
#[test]
fn the_measure_counts_from_signature_to_brace() {
    let body = |n: usize| {
        let mut s = String::from("pub(crate) fn f(x: u32) -> u32 {\n");
        for _ in 0..n - 2 {
            s.push_str("    let _ = x;\n");
        }
        s.push_str("}\n");
        s
    };
    assert_eq!(long_functions(&body(81), 80), [("f".to_string(), 81)]);
    assert!(long_functions(&body(80), 80).is_empty());
    let in_tests = format!("#[cfg(test)]\nmod tests {{\n{}}}\n", body(100));
    assert!(long_functions(&in_tests, 80).is_empty());
    assert!(long_functions("    fn g(&self);\n", 80).is_empty());
}
