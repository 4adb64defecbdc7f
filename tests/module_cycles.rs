//! No import cycles between modules: reads every `src/**/*.rs` (test modules cut
//! off), finds the `crate::`/`super::`/`self::` paths each file names, and fails
//! when sibling modules depend on each other in a circle.
//!
//! A file is a module (`src/a/b.rs` and `src/a/b/mod.rs` are `a::b`). A path
//! from module A to module B is an edge between the two children of their
//! closest common ancestor that hold A and B (a module and its own children
//! are one unit, so `a::b` → `a::c::d` is the edge `b` → `c` under `a`).
//! Every strongly connected set of two or more siblings is a cycle.
//!
//! `ALLOWED` names the cycles that are known and not yet broken; the check fails
//! on any other cycle, and on an allowed one that has grown. The test prints
//! every cycle with the files and paths that tie it.
//!
//! `LAYERS` is the layer table of ARCHITECTURE.md: a top-level module may
//! import its own layer's modules and those of the layers below, never one
//! above (`imports_point_down_the_layers`).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Known cycles (parent module, the siblings in the circle), to be broken
/// later: none. The clap tree needs none either: `cli::args` names every
/// subcommand's Args type, and the subcommands take their shared options
/// from `cli::global` and report failures with `cli::error`, neither of
/// which imports a subcommand.
const ALLOWED: &[(&str, &[&str])] = &[];

/// The layers of ARCHITECTURE.md, top first: (layer, its top-level modules).
const LAYERS: &[(&str, &[&str])] = &[
    // The front ends: the CLI and the fuzz harness's entry points.
    ("command line", &["cli", "fuzzing"]),
    ("D-Bus", &["dbus"]),
    ("operations", &["ops"]),
    (
        "workflows",
        &[
            "tune", "doctor", "history", "report", "check", "measure", "metrics", "html", "config",
            "workload", "usage", "matrix",
        ],
    ),
    (
        "engines",
        &["nic", "sysctl", "path", "bench", "cpu", "pve", "protocol"],
    ),
    (
        "shared",
        &[
            "units",
            "problem",
            "class",
            "paths",
            "fsutil",
            "sockopt",
            "host",
            "resolve",
            "caps",
            "spelling",
            "mounted",
            "crashpoint",
        ],
    ),
];

type Module = Vec<String>;

/// Every module of the crate and its source file.
fn modules(src: &Path) -> BTreeMap<Module, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                if p != src.join("bin") {
                    stack.push(p);
                }
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let rel = p.strip_prefix(src).unwrap().with_extension("");
            let mut m: Module = rel.iter().map(|c| c.to_string_lossy().into()).collect();
            if m.last().is_some_and(|l| l == "mod" || l == "lib") {
                m.pop();
            }
            out.insert(m, p);
        }
    }
    out
}

/// The text without comments, string/char literals and the `#[cfg(test)]` module.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod ") {
        Some(i) => &text[..i],
        None => text,
    };
    let b = text.as_bytes();
    let mut out = String::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
            i = end;
        } else if b[i] == b'"'
            || (b[i] == b'r' && b.get(i + 1).is_some_and(|&c| c == b'"' || c == b'#'))
        {
            i = skip_string(b, i);
            out.push_str("\"\"");
        } else if b[i] == b'\'' && b.get(i + 2) == Some(&b'\'') {
            i += 3; // 'x'
        } else if b[i] == b'\'' && b.get(i + 1) == Some(&b'\\') {
            i += 2;
            while i < b.len() && b[i] != b'\'' {
                i += 1;
            }
            i += 1;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

fn skip_string(b: &[u8], mut i: usize) -> usize {
    if b[i] == b'r' {
        i += 1;
        let mut hashes = 0;
        while b[i] == b'#' {
            hashes += 1;
            i += 1;
        }
        if b[i] != b'"' {
            return i; // `r#ident`
        }
        i += 1;
        loop {
            if i >= b.len() {
                return i;
            }
            if b[i] == b'"'
                && b[i + 1..]
                    .iter()
                    .take(hashes)
                    .filter(|&&c| c == b'#')
                    .count()
                    == hashes
            {
                return i + 1 + hashes;
            }
            i += 1;
        }
    }
    i += 1;
    while i < b.len() && b[i] != b'"' {
        if b[i] == b'\\' {
            i += 1;
        }
        i += 1;
    }
    i + 1
}

/// Every path a file names that starts at `crate`, `super` or `self`, made
/// absolute; `use` trees (`use crate::a::{b, c::d}`) are expanded.
fn paths(code: &str, here: &Module) -> Vec<Module> {
    let toks = tokens(code);
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if toks[i] == "use" {
            let end = (i..toks.len())
                .find(|&j| toks[j] == ";")
                .unwrap_or(toks.len());
            use_tree(&toks[i + 1..end], &mut Vec::new(), &mut out);
            i = end;
            continue;
        }
        if matches!(toks[i].as_str(), "crate" | "super" | "self") && (i == 0 || toks[i - 1] != "::")
        {
            let mut p = vec![toks[i].clone()];
            let mut j = i + 1;
            while j + 1 < toks.len() && toks[j] == "::" && is_ident(&toks[j + 1]) {
                p.push(toks[j + 1].clone());
                j += 2;
            }
            out.push(p);
            i = j;
            continue;
        }
        i += 1;
    }
    out.into_iter().filter_map(|p| absolute(&p, here)).collect()
}

fn use_tree(t: &[String], prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    // t: a::b::{c, d::e}, f
    let mut i = 0;
    let base = prefix.len();
    let mut grouped = false; // `a::{b, c}` names a::b and a::c, not a
    while i < t.len() {
        match t[i].as_str() {
            "{" => {
                let mut depth = 0;
                let start = i + 1;
                let mut j = i;
                loop {
                    match t[j].as_str() {
                        "{" => depth += 1,
                        "}" => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                use_tree(&t[start..j], prefix, out);
                grouped = true;
                i = j + 1;
            }
            "," => {
                if prefix.len() > base && !grouped {
                    out.push(prefix.clone());
                }
                prefix.truncate(base);
                grouped = false;
                i += 1;
            }
            "::" | "pub" | "(" | ")" | "*" => i += 1,
            "as" => i += 2,
            s if is_ident(s) => {
                prefix.push(s.to_string());
                i += 1;
            }
            _ => i += 1,
        }
    }
    if prefix.len() > base && !grouped {
        out.push(prefix.clone());
    }
    prefix.truncate(base);
}

fn absolute(p: &[String], here: &Module) -> Option<Module> {
    let mut it = p.iter().peekable();
    let mut abs: Module = match it.peek()?.as_str() {
        "crate" => {
            it.next();
            vec![]
        }
        "self" | "super" => {
            // In `a/b.rs` or `a/b/mod.rs` (module a::b) `self` is a::b and `super` is a.
            let mut m = here.clone();
            while let Some(s) = it.peek() {
                match s.as_str() {
                    "self" => {}
                    "super" => {
                        m.pop()?;
                    }
                    _ => break,
                }
                it.next();
            }
            m
        }
        _ => return None,
    };
    abs.extend(it.cloned());
    Some(abs)
}

fn is_ident(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_alphanumeric() || c == '_')
}

fn tokens(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_alphanumeric() || c == '_' {
            let s = i;
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            out.push(b[s..i].iter().collect());
        } else if c == ':' && b.get(i + 1) == Some(&':') {
            out.push("::".into());
            i += 2;
        } else {
            if !c.is_whitespace() {
                out.push(c.to_string());
            }
            i += 1;
        }
    }
    out
}

/// The longest prefix of `p` that is a module.
fn resolve(p: &Module, mods: &BTreeMap<Module, PathBuf>) -> Option<Module> {
    (0..=p.len())
        .rev()
        .map(|n| p[..n].to_vec())
        .find(|m| mods.contains_key(m))
}

/// parent → (from child → to child → the evidence "file: path").
type Graph = BTreeMap<Module, BTreeMap<String, BTreeMap<String, BTreeSet<String>>>>;

fn graph(src: &Path) -> Graph {
    let mods = modules(src);
    let mut g: Graph = BTreeMap::new();
    for (m, file) in &mods {
        let text = fs::read_to_string(file).unwrap();
        for p in paths(&code(&text), m) {
            let Some(to) = resolve(&p, &mods) else {
                continue;
            };
            let common = m.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common == m.len() || common == to.len() {
                continue; // a module and its own children are one unit
            }
            let rel = file.strip_prefix(src.parent().unwrap()).unwrap();
            g.entry(m[..common].to_vec())
                .or_default()
                .entry(m[common].clone())
                .or_default()
                .entry(to[common].clone())
                .or_default()
                .insert(format!("{}: {}", rel.display(), p.join("::")));
        }
    }
    g
}

/// Strongly connected sets of two or more nodes (Tarjan).
fn cycles(edges: &BTreeMap<String, BTreeMap<String, BTreeSet<String>>>) -> Vec<BTreeSet<String>> {
    struct T<'a> {
        e: &'a BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
        idx: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let n = t.idx.len();
        t.idx.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        t.on.insert(v);
        if let Some(ws) = t.e.get(v) {
            for w in ws.keys() {
                if !t.idx.contains_key(w.as_str()) {
                    visit(t, w);
                    let l = t.low[w.as_str()].min(t.low[v]);
                    t.low.insert(v, l);
                } else if t.on.contains(w.as_str()) {
                    let l = t.idx[w.as_str()].min(t.low[v]);
                    t.low.insert(v, l);
                }
            }
        }
        if t.low[v] == t.idx[v] {
            let mut set = BTreeSet::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                set.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            if set.len() > 1 {
                t.out.push(set);
            }
        }
    }
    let mut t = T {
        e: edges,
        idx: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: vec![],
        on: BTreeSet::new(),
        out: vec![],
    };
    for v in edges.keys() {
        if !t.idx.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

#[test]
fn no_new_module_cycles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let g = graph(&src);
    let mut new = Vec::new();
    for (parent, edges) in &g {
        let parent_name = if parent.is_empty() {
            "crate".to_string()
        } else {
            parent.join("::")
        };
        for set in cycles(edges) {
            let allowed = ALLOWED.iter().any(|(p, members)| {
                *p == parent_name
                    && set
                        .iter()
                        .all(|m| members.contains(&m.as_str()) || members == &["*"])
            });
            let names: Vec<_> = set.iter().map(String::as_str).collect();
            println!(
                "cycle in {parent_name}: {}{}",
                names.join(" ↔ "),
                if allowed {
                    " (allowed, see ALLOWED)"
                } else {
                    ""
                }
            );
            for from in &set {
                for (to, why) in &edges[from] {
                    if set.contains(to) {
                        let first = why.iter().next().unwrap();
                        println!("  {from} → {to}: {first} (+{} more)", why.len() - 1);
                    }
                }
            }
            if !allowed {
                new.push(format!("{parent_name}: {}", names.join(" ↔ ")));
            }
        }
    }
    assert!(
        new.is_empty(),
        "module cycles (break them, or name them in ALLOWED with a reason): {new:#?}"
    );
}

/// The layer of a top-level module (its index in `LAYERS`, 0 = top).
fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, ms)| ms.contains(&module))
}

#[test]
fn imports_point_down_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let g = graph(&src);
    let top = g.get(&Vec::new()).cloned().unwrap_or_default();
    let mut unplaced = BTreeSet::new();
    let mut upward = Vec::new();
    for (from, tos) in &top {
        for (to, why) in tos {
            let (Some(a), Some(b)) = (layer(from), layer(to)) else {
                unplaced.extend([from, to].into_iter().filter(|m| layer(m).is_none()));
                continue;
            };
            if b < a {
                let first = why.iter().next().unwrap();
                upward.push(format!(
                    "{from} ({}) → {to} ({}): {first} (+{} more)",
                    LAYERS[a].0,
                    LAYERS[b].0,
                    why.len() - 1
                ));
            }
        }
    }
    assert!(
        unplaced.is_empty(),
        "modules in no layer of LAYERS (and ARCHITECTURE.md): {unplaced:?}"
    );
    assert!(
        upward.is_empty(),
        "imports from a lower layer to a higher one: {upward:#?}"
    );
}

/// The layer check catches an import upwards.
#[test]
fn the_layer_table_orders_cli_above_the_engines() {
    assert!(layer("cli") < layer("ops"));
    assert!(layer("ops") < layer("tune"));
    assert!(layer("tune") < layer("nic"));
    assert!(layer("nic") < layer("units"));
    assert_eq!(layer("no_such_module"), None);
}

/// The check itself finds what it is meant to find.
#[test]
fn finds_a_cycle_through_use_trees_and_inline_paths() {
    let here: Module = vec!["a".into(), "b".into()];
    let c = code(
        "use crate::x::{y, z::{w as v}};\n// crate::nope\nfn f() { super::c::g(\"crate::s\"); }\n",
    );
    let p = paths(&c, &here);
    let want: Vec<Module> = vec![
        vec!["x".into(), "y".into()],
        vec!["x".into(), "z".into(), "w".into()],
        vec!["a".into(), "c".into(), "g".into()],
    ];
    assert_eq!(p, want);
    let mut e: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (a, b) in [("p", "q"), ("q", "r"), ("r", "p"), ("r", "s")] {
        e.entry(a.into())
            .or_default()
            .insert(b.into(), BTreeSet::new());
    }
    let found = cycles(&e);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].iter().collect::<Vec<_>>(), ["p", "q", "r"]);
}
