//! `hlctl tune`'s text report: the header, what the doctor found, the
//! baseline, the steps table (before / tried / Δ / KEPT or reverted), and
//! the result with what was kept and persisted.

use super::output::table;
use crate::path::throughput::{Direction, format_bps};
use crate::tune::decide::DirDelta;
use crate::tune::outcome::{SettingRow, Step, StepStatus, TuneReport};

/// `+12%` / `−5%` from `before` to `after`; `-` without a before.
fn pct(before: f64, after: f64) -> String {
    if before <= 0.0 {
        return "-".into();
    }
    let c = (after - before) / before * 100.0;
    format!("{}{:.0}%", if c >= 0.0 { "+" } else { "−" }, c.abs())
}

/// The text report: the before/after table.
pub(crate) fn render(r: &TuneReport) -> String {
    let mut s = header(r);
    s += &doctor(r);
    s += &baseline(r);
    s += &steps(r);
    s += &result(r);
    s
}

/// The directions the baseline measured (`--direction`); both when there
/// is none (a dry run, a tune stopped before it).
fn measured(r: &TuneReport) -> Vec<Direction> {
    let dirs: Vec<Direction> = r
        .baseline
        .iter()
        .flat_map(|b| b.each().map(|(d, _)| d))
        .collect();
    if dirs.is_empty() {
        Direction::BOTH.to_vec()
    } else {
        dirs
    }
}

/// "each way", or the one direction measured.
fn ways(r: &TuneReport) -> String {
    match measured(r)[..] {
        [d] => format!("{d} only"),
        _ => "each way".into(),
    }
}

fn header(r: &TuneReport) -> String {
    format!(
        "hlctl tune {} → {} ({} runs {}, {}; min gain {}%){}\n\n",
        r.interface,
        r.peer,
        r.runs,
        ways(r),
        r.method,
        r.min_gain_percent,
        r.rtt_ms
            .map(|m| format!(", RTT {m:.2} ms"))
            .unwrap_or_default()
    )
}

fn doctor(r: &TuneReport) -> String {
    if r.findings.is_empty() {
        return String::new();
    }
    let mut s = "Doctor:\n".to_string();
    for f in &r.findings {
        s += &format!("  {:<8} {}\n", f.severity.to_string(), f.title);
    }
    s + "\n"
}

fn baseline(r: &TuneReport) -> String {
    let Some(b) = &r.baseline else {
        return String::new();
    };
    let runs = b.each().map(|(_, s)| s.runs_bps.len()).max().unwrap_or(0);
    let each: Vec<String> = b
        .each()
        .map(|(d, s)| {
            format!(
                "{d} {} (spread {:.0}%)",
                format_bps(s.median_bps),
                s.spread_percent
            )
        })
        .collect();
    format!(
        "Baseline ({runs} runs {}): {}\n\n",
        ways(r),
        each.join(", ")
    )
}

/// The steps table, then each step's reason.
fn steps(r: &TuneReport) -> String {
    if r.steps.is_empty() {
        return "No candidates: nothing on this host to try.\n".into();
    }
    let dirs = measured(r);
    let mut head: Vec<String> = ["candidate", "setting", "before", "tried"]
        .map(String::from)
        .to_vec();
    for d in &dirs {
        head.extend([d.to_string(), "Δ".into()]);
    }
    head.push("result".into());
    let mut rows = vec![head];
    for st in &r.steps {
        rows.extend(step_rows(st, r.runs, &dirs));
    }
    let mut s = table(&rows) + "\n";
    for st in &r.steps {
        s += &format!("  {}: {}\n", st.title, st.reason);
    }
    s + "\n"
}

/// One direction's cell and its change: `a → b`, `+n%`.
fn delta_cells(st: &Step, dir: Direction) -> (String, String) {
    let d: Option<&DirDelta> = st.deltas.iter().find(|d| d.direction == dir);
    d.map_or(("-".to_string(), String::new()), |d| {
        (
            format!("{} → {}", format_bps(d.before_bps), format_bps(d.after_bps)),
            pct(d.before_bps, d.after_bps),
        )
    })
}

/// KEPT / reverted / failed / not tried, with the runs that decided it
/// (fewer than the budget when the first already did).
fn status(st: &Step, budget: u32) -> String {
    let word = match st.status {
        StepStatus::Kept => "KEPT",
        StepStatus::Reverted => "reverted",
        StepStatus::Failed => "failed",
        StepStatus::Skipped => "not tried",
    };
    match st.runs {
        0 => word.to_string(),
        n => format!("{word} ({n}/{budget} runs)"),
    }
}

/// A step's rows: one per setting it changed; the title and the figures
/// of `dirs` on the first.
fn step_rows(st: &Step, budget: u32, dirs: &[Direction]) -> Vec<Vec<String>> {
    let mut figures = Vec::new();
    for &d in dirs {
        let (cell, change) = delta_cells(st, d);
        figures.extend([cell, change]);
    }
    figures.push(status(st, budget));
    let none = [SettingRow {
        setting: "-".into(),
        before: "-".into(),
        tried: "-".into(),
    }];
    let settings: &[SettingRow] = if st.settings.is_empty() {
        &none
    } else {
        &st.settings
    };
    settings
        .iter()
        .enumerate()
        .map(|(i, set)| {
            let first = |cell: &String| if i == 0 { cell.clone() } else { String::new() };
            let mut row = vec![
                first(&st.title),
                set.setting.clone(),
                set.before.clone(),
                set.tried.clone(),
            ];
            row.extend(figures.iter().map(first));
            row
        })
        .collect()
}

/// The result, what was kept and persisted, limits and notes.
fn result(r: &TuneReport) -> String {
    let mut s = String::new();
    if let (Some(b), Some(a)) = (&r.baseline, &r.after) {
        let each: Vec<String> = b
            .each()
            .zip(a.each())
            .map(|((d, b), (_, a))| {
                format!(
                    "{d} {} → {} ({})",
                    format_bps(b.median_bps),
                    format_bps(a.median_bps),
                    pct(b.median_bps, a.median_bps)
                )
            })
            .collect();
        s += &format!("Result: {}\n", each.join(", "));
    }
    let kept: Vec<&str> = r.kept_steps().map(|s| s.title.as_str()).collect();
    let kept = if kept.is_empty() {
        "nothing".to_string()
    } else {
        kept.join(", ")
    };
    s += &format!("Kept: {kept}\n");
    if let Some(p) = &r.persisted {
        for f in [&p.sysctl_file, &p.nic_state_file].into_iter().flatten() {
            s += &format!("Persisted: {}\n", crate::mounted::shown(f));
        }
    }
    for l in &r.limits {
        s += &format!("Limit: {}\n", l.text);
        if let Some(c) = &l.cores {
            s += &format!("Cores: {c}\n");
        }
    }
    for n in r.plan_notes.iter().chain(&r.notes) {
        s += &format!("Note: {n}\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::outcome::{Both, Outcome, Summary};

    fn summary(runs: &[f64]) -> Summary {
        Summary {
            median_bps: runs[runs.len() / 2],
            spread_percent: 5.0,
            runs_bps: runs.to_vec(),
            rtt_loaded_ms: None,
        }
    }

    #[test]
    fn a_one_direction_tune_names_only_that_direction() {
        let down = |runs: &[f64]| Both {
            upload: None,
            download: Some(summary(runs)),
        };
        let r = TuneReport {
            host: Default::default(),
            timestamp: 0,
            interface: "eth2".into(),
            peer: "nas:5201".into(),
            method: "hlctl".into(),
            runs: 3,
            min_gain_percent: 3.0,
            rtt_ms: None,
            findings: Vec::new(),
            plan: Vec::new(),
            plan_notes: Vec::new(),
            baseline: Some(down(&[9.0e9, 9.4e9])),
            steps: vec![Step {
                candidate: "rps".into(),
                title: "receive packet steering to CPUs 0".into(),
                settings: vec![SettingRow {
                    setting: "rps cpus".into(),
                    before: "1".into(),
                    tried: "0".into(),
                }],
                status: StepStatus::Kept,
                reason: "better".into(),
                deltas: vec![DirDelta {
                    direction: Direction::Download,
                    before_bps: 9.4e9,
                    after_bps: 9.9e9,
                    change_percent: 5.3,
                    threshold_percent: 3.0,
                }],
                runs: 3,
            }],
            after: Some(down(&[9.9e9, 9.9e9, 9.9e9])),
            limits: Vec::new(),
            kept: Default::default(),
            persisted: None,
            outcome: Outcome::Done,
            notes: Vec::new(),
        };
        let text = render(&r);
        assert!(text.contains("(3 runs download only,"), "{text}");
        assert!(
            text.contains("Baseline (2 runs download only): download 9.40 Gbit/s"),
            "{text}"
        );
        assert!(
            text.contains("Result: download 9.40 Gbit/s → 9.90 Gbit/s (+5%)"),
            "{text}"
        );
        let head = text
            .lines()
            .find(|l| l.starts_with("candidate"))
            .unwrap_or_else(|| panic!("no table: {text}"));
        let cols: Vec<&str> = head.split_whitespace().collect();
        assert_eq!(
            cols,
            [
                "candidate",
                "setting",
                "before",
                "tried",
                "download",
                "Δ",
                "result"
            ],
            "{text}"
        );
        let row = text.lines().find(|l| l.starts_with("receive")).unwrap();
        assert!(row.contains("9.40 Gbit/s → 9.90 Gbit/s  +5%"), "{row}");
        assert!(row.trim_end().ends_with("KEPT (3/3 runs)"), "{row}");
        assert!(!text.contains("upload"), "{text}");
    }
}
