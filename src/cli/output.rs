//! Printing helpers shared by every verb: JSON, and progress on stderr.

use std::io::IsTerminal;

use crate::bench::progress::{Progress, ProgressEvent};

/// Print `value` as pretty JSON on stdout.
pub(crate) fn print_json<T: serde::Serialize>(value: &T) {
    match serde_json::to_string_pretty(value) {
        Ok(s) => println!("{s}"),
        Err(e) => eprintln!("hlctl: cannot encode JSON: {e}"),
    }
}

/// Progress on stderr, unless JSON is requested: on a terminal a bar with
/// the time left that never goes backwards; off a terminal (`| tee log`,
/// cron, ssh without a tty) one plain line per step (what, how far, elapsed),
/// so a log shows where a long run is.
pub(crate) struct ProgressBar {
    shown: Shown,
}

enum Shown {
    Nothing,
    Bar(indicatif::ProgressBar),
    Lines(std::sync::Mutex<StepLines>),
}

/// Off a terminal: the last step printed, and when the run started.
struct StepLines {
    last: String,
    start: std::time::Instant,
    printed: std::time::Duration,
    permille: u64,
}

impl ProgressBar {
    pub(crate) fn new(json: bool) -> Self {
        let shown = match (json, std::io::stderr().is_terminal()) {
            (true, _) => Shown::Nothing,
            (false, true) => Shown::Bar(terminal_bar()),
            (false, false) => Shown::Lines(std::sync::Mutex::new(StepLines {
                last: String::new(),
                start: std::time::Instant::now(),
                printed: std::time::Duration::ZERO,
                permille: 0,
            })),
        };
        Self { shown }
    }

    /// Print a line above the bar (or plainly when there is no bar).
    pub(crate) fn println(&self, line: &str) {
        match &self.shown {
            Shown::Bar(bar) => bar.println(line),
            _ => eprintln!("{line}"),
        }
    }

    pub(crate) fn finish(&self) {
        if let Shown::Bar(bar) = &self.shown {
            bar.finish_and_clear();
        }
    }
}

fn terminal_bar() -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(1000);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{bar:30}] {percent:>3}% {elapsed:>4} (~{eta} left) {msg}",
        )
        .expect("static template")
        .progress_chars("=> "),
    );
    bar
}

impl Progress for ProgressBar {
    fn report(&self, event: ProgressEvent) {
        let permille = (event.fraction.clamp(0.0, 1.0) * 1000.0) as u64;
        match &self.shown {
            Shown::Nothing => {}
            Shown::Bar(bar) => {
                // A later phase that starts its own count from 0 does not
                // move the bar back.
                bar.set_position(permille.max(bar.position()));
                bar.set_message(event.message);
            }
            Shown::Lines(lines) => {
                let mut l = lines.lock().unwrap_or_else(|p| p.into_inner());
                l.permille = l.permille.max(permille);
                let now = l.start.elapsed();
                // A new step, or news of a long one every 5 s at most.
                let new_step = step_of(&event.message) != step_of(&l.last);
                let news = event.message != l.last && now >= l.printed + HEARTBEAT;
                if new_step || news {
                    eprintln!(
                        "hlctl: {:>6.1} s {:>3} %  {}",
                        now.as_secs_f64(),
                        l.permille / 10,
                        event.message
                    );
                    l.printed = now;
                }
                l.last = event.message;
            }
        }
    }
}

/// Off a terminal, how often a step that keeps running says how far it is.
const HEARTBEAT: std::time::Duration = std::time::Duration::from_secs(5);

/// A message without its running figures (`run 2/3: 941 Mbit/s` → `run 2/3`),
/// so a step is printed once, not at every update of its numbers.
fn step_of(message: &str) -> &str {
    message.split(':').next().unwrap_or(message).trim()
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
