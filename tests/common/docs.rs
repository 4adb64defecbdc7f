//! The examples in README.md and docs/*.md: the `hlctl` command lines of
//! their code blocks (tests/docs_examples.rs parses them, tests/docs_run.rs
//! runs them) and, in blocks with `$ ` prompts, the output shown under each.

/// Every `hlctl` command line inside fenced code blocks of `text`, as words
/// (prompt, `sudo`, comments, pipes and redirections cut off). In a block
/// with `$ ` prompts only the prompted lines are commands (the rest is
/// output); in a block without, every line is.
pub fn commands(text: &str) -> Vec<(usize, Vec<String>)> {
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
pub fn words(line: &str) -> Vec<String> {
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

pub fn doc_files() -> Vec<std::path::PathBuf> {
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

/// One example: where it is, its words, and (in a block with `$ ` prompts)
/// the output lines the docs show under it.
pub struct Example {
    pub file: std::path::PathBuf,
    pub line: usize,
    pub text: String,
    pub argv: Vec<String>,
    pub shown: Vec<String>,
}

/// Every example of every doc file, in reading order.
pub fn examples() -> Vec<Example> {
    let mut out = Vec::new();
    for file in doc_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (line, argv) in commands(&text) {
            let cmd = lines[line - 1].trim_start();
            let prompted = cmd.starts_with("$ ");
            let shown = if prompted {
                lines[line..]
                    .iter()
                    .take_while(|l| {
                        !l.trim_start().starts_with("$ ") && !l.trim_start().starts_with("```")
                    })
                    .map(|l| l.to_string())
                    .collect()
            } else {
                Vec::new()
            };
            out.push(Example {
                file: file.clone(),
                line,
                text: cmd.trim_start_matches("$ ").to_string(),
                argv,
                shown,
            });
        }
    }
    out
}
