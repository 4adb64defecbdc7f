//! Printing helpers shared by every verb: JSON, and progress display on a terminal.

use std::io::IsTerminal;

use crate::bench::progress::{Progress, ProgressEvent};

/// Print `value` as pretty JSON on stdout.
pub fn print_json<T: serde::Serialize>(value: &T) {
    match serde_json::to_string_pretty(value) {
        Ok(s) => println!("{s}"),
        Err(e) => eprintln!("hlctl: cannot encode JSON: {e}"),
    }
}

/// A progress bar on stderr, shown only when stderr is a terminal and JSON is not requested.
pub struct ProgressBar {
    bar: Option<indicatif::ProgressBar>,
}

impl ProgressBar {
    pub fn new(json: bool) -> Self {
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
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }

    pub fn finish(&self) {
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
