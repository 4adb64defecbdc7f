//! The docs cannot go stale on the command line (issue 30): every `hlctl …`
//! line in a code block of README.md and docs/*.md parses with the real
//! argument definitions (a flag that was renamed or never existed fails
//! here), and the README's first two commands are the scripts that exist.

use clap::Parser;

/// Every `hlctl` command line inside fenced code blocks of `text`, as words
/// (prompt, `sudo`, comments, pipes and redirections cut off). In a block
/// with `$ ` prompts only the prompted lines are commands (the rest is
/// output); in a block without, every line is.
fn commands(text: &str) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    let mut block: Option<Vec<(usize, &str)>> = None;
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            match block.take() {
                Some(lines) => out.extend(block_commands(&lines)),
                None => block = Some(Vec::new()),
            }
            continue;
        }
        if let Some(b) = block.as_mut() {
            b.push((n + 1, line));
        }
    }
    out
}

fn block_commands(lines: &[(usize, &str)]) -> Vec<(usize, Vec<String>)> {
    let prompted = lines.iter().any(|(_, l)| l.trim_start().starts_with("$ "));
    lines
        .iter()
        .filter_map(|(n, line)| {
            let l = line.trim_start();
            let l = match (prompted, l.strip_prefix("$ ")) {
                (true, None) => return None,
                (_, Some(rest)) => rest,
                (false, None) => l,
            };
            let l = l.strip_prefix("sudo ").unwrap_or(l);
            l.starts_with("hlctl ").then(|| (*n, words(l)))
        })
        .collect()
}

/// Shell words up to the first `#`, `|`, `&&`, `;` or redirection; quotes kept
/// together ('a b' is one word).
fn words(line: &str) -> Vec<String> {
    let mut v = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => quote = Some(c),
            (None, ' ' | '\t') => {
                if !cur.is_empty() {
                    v.push(std::mem::take(&mut cur));
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if !cur.is_empty() {
        v.push(cur);
    }
    let end = v
        .iter()
        .position(|w| {
            w.starts_with('#')
                || ["|", "&&", ";", "<", ">", "2>&1", "||"].contains(&w.as_str())
                || w.starts_with('>')
                || w.starts_with("2>")
        })
        .unwrap_or(v.len());
    v.truncate(end);
    v
}

fn doc_files() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

#[test]
fn every_hlctl_line_in_the_docs_parses() {
    let mut bad = Vec::new();
    let mut seen = 0;
    for f in doc_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        for (line, argv) in commands(&text) {
            seen += 1;
            if let Err(e) = hlctl::cli::args::Cli::try_parse_from(&argv) {
                if matches!(
                    e.kind(),
                    clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
                ) {
                    continue;
                }
                let first = e.to_string().lines().next().unwrap_or_default().to_string();
                bad.push(format!(
                    "{}:{line}: {}: {first}",
                    f.display(),
                    argv.join(" ")
                ));
            }
        }
    }
    assert!(
        seen >= 20,
        "only {seen} hlctl lines found: is the extractor broken?"
    );
    assert!(bad.is_empty(), "stale examples:\n{}", bad.join("\n"));
}

#[test]
fn the_extractor_catches_a_flag_that_does_not_exist() {
    let text = "```sh\n$ sudo hlctl doctor --peer nas --no-such-flag | tee x  # why\n```\n";
    let c = commands(text);
    assert_eq!(c.len(), 1);
    assert_eq!(
        c[0].1,
        ["hlctl", "doctor", "--peer", "nas", "--no-such-flag"]
    );
    assert!(hlctl::cli::args::Cli::try_parse_from(&c[0].1).is_err());
    let quoted = words("hlctl sysctl net.ipv4.tcp_rmem='4096 131072 16777216' --persist");
    assert_eq!(quoted[2], "net.ipv4.tcp_rmem=4096 131072 16777216");
}

#[test]
fn the_readme_starts_with_the_demo_and_the_tests() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let first: Vec<&str> = readme
        .lines()
        .skip_while(|l| !l.starts_with("```"))
        .skip(1)
        .take(2)
        .collect();
    assert!(first[0].starts_with("sudo scripts/demo.sh"), "{first:?}");
    assert!(first[1].starts_with("sudo scripts/test.sh"), "{first:?}");
    for script in ["scripts/demo.sh", "scripts/test.sh"] {
        assert!(root.join(script).exists(), "{script}");
    }
    let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap();
    assert!(
        ci.contains("scripts/test.sh"),
        "CI runs the README's test command"
    );
    assert!(readme.lines().count() <= 200, "README over 200 lines");
}
