//! Printing helpers shared by every verb: JSON, and progress display on a terminal.

use std::io::IsTerminal;

use crate::bench::progress::{Progress, ProgressEvent};

/// Print `value` as pretty JSON on stdout.
pub(crate) fn print_json<T: serde::Serialize>(value: &T) {
    match serde_json::to_string_pretty(value) {
        Ok(s) => println!("{s}"),
        Err(e) => eprintln!("hlctl: cannot encode JSON: {e}"),
    }
}

/// A progress bar on stderr, shown only when stderr is a terminal and JSON is not requested.
pub(crate) struct ProgressBar {
    bar: Option<indicatif::ProgressBar>,
}

impl ProgressBar {
    pub(crate) fn new(json: bool) -> Self {
        let bar = (!json && std::io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::new(1000);
            bar.set_style(
                indicatif::ProgressStyle::with_template("{spinner} [{bar:30}] {percent:>3}% {msg}")
                    .expect("static template")
                    .progress_chars("=> "),
            );
            bar
        });
        Self { bar }
    }

    /// Print a line above the bar (or plainly when there is no bar).
    pub(crate) fn println(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }

    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Progress for ProgressBar {
    fn report(&self, event: ProgressEvent) {
        if let Some(bar) = &self.bar {
            bar.set_position((event.fraction.clamp(0.0, 1.0) * 1000.0) as u64);
            bar.set_message(event.message);
        }
    }
}

/// Words joined by spaces, wrapped at `width` columns, continuation lines
/// indented to line up after `first` (which starts the first line).
pub(crate) fn wrap(first: &str, words: &[String], width: usize) -> String {
    let indent = " ".repeat(first.chars().count());
    let mut out = String::from(first);
    let mut col = first.chars().count();
    for (i, w) in words.iter().enumerate() {
        let len = w.chars().count();
        if i > 0 && col + 1 + len > width {
            out.push('\n');
            out.push_str(&indent);
            col = indent.len();
        } else if i > 0 {
            out.push(' ');
            col += 1;
        }
        out.push_str(w);
        col += len;
    }
    out
}

/// Render rows as aligned columns (first row is the header).
pub(crate) fn table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, s)| format!("{s:<w$}", w = widths[i]))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::bytes;

    #[test]
    fn sizes_and_tables() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(3 * 1024 * 1024 * 1024), "3.0 GiB");
        let t = table(&[
            vec!["a".into(), "bb".into()],
            vec!["ccc".into(), "d".into()],
        ]);
        assert_eq!(t, "a    bb\nccc  d\n");
        let words: Vec<String> = ["aaa", "bbb", "ccc"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(wrap("x: ", &words, 10), "x: aaa bbb\n   ccc");
    }
}
