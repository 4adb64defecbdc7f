//! `hlctl history`: stored results.

use clap::Args;

use super::exit;
use super::global::Global;
use super::output::{print_json, table};
use crate::dbus::wire::records::HistoryFilter;
use crate::history::History;
use crate::history::store::{format_ts, parse_since};

/// List stored results (benchmarks, doctor, tune, report, check), newest first.
///
/// Every result is stored with host, kernel, interface, peer and a snapshot
/// of the settings, in <state dir>/history.db (SQLite).
#[derive(Debug, Args)]
pub(crate) struct HistoryArgs {
    /// Only results of this kind: net, disk, cpu, doctor, tune, report, check, file.
    #[arg(long, value_name = "KIND")]
    pub(crate) kind: Option<String>,

    /// Only results since DATE: YYYY-MM-DD, 'YYYY-MM-DD HH:MM[:SS]' (UTC) or Unix seconds.
    #[arg(long, value_name = "DATE")]
    pub(crate) since: Option<String>,

    /// At most this many results.
    #[arg(long, default_value_t = 50)]
    pub(crate) limit: u32,

    /// Write a self-contained HTML page instead (inline SVG, nothing fetched):
    /// the trend of every stored metric with the baseline as a line, the last
    /// check's verdicts, and its transfer matrix. --limit counts results
    /// (default 50); --kind and --since do not apply.
    #[arg(long, value_name = "FILE")]
    pub(crate) html: Option<std::path::PathBuf>,
}

pub(crate) fn run(global: &Global, args: HistoryArgs) -> i32 {
    let kind = match super::kept::kind(args.kind.as_deref()) {
        Ok(k) => k,
        Err(e) => return e.report(),
    };
    let since = match args.since.as_deref().map(parse_since).transpose() {
        Ok(s) => s,
        Err(e) => return super::fail(&e, exit::INVALID),
    };
    if let Some(file) = &args.html {
        return html(global, file, args.limit);
    }
    let filter = HistoryFilter {
        kind,
        since,
        limit: args.limit,
    };
    let rows = match super::kept::history(global, filter) {
        Ok(r) => r,
        Err(e) => return e.report(),
    };
    if global.json {
        print_json(&serde_json::json!({ "results": rows }));
        return exit::OK;
    }
    if rows.is_empty() {
        println!("No results stored yet.");
        return exit::OK;
    }
    let mut t = vec![vec![
        "time (UTC)".to_string(),
        "kind".into(),
        "interface".into(),
        "peer".into(),
        "metrics".into(),
    ]];
    for r in &rows {
        let m: Vec<String> = r
            .metrics
            .iter()
            .map(|m| format!("{} {}", m.name, m.display_value()))
            .collect();
        t.push(vec![
            format_ts(r.ts),
            r.kind.clone(),
            r.interface.clone().unwrap_or_default(),
            r.peer.clone().unwrap_or_default(),
            m.join(", "),
        ]);
    }
    print!("{}", table(&t));
    exit::OK
}

fn html(global: &Global, file: &std::path::Path, limit: u32) -> i32 {
    let paths = global.paths();
    let cfg = crate::config::load(&paths.config_file, global.config.is_some());
    let page = match History::open(&paths.state_dir)
        .and_then(|mut h| crate::html::gather(&mut h, &cfg.config.check, limit))
    {
        Ok(p) => p,
        Err(e) => return super::fail(&e, exit::FAILED),
    };
    let text = crate::html::render(&page);
    if let Err(e) = crate::fsutil::write_atomic(file, text.as_bytes(), 0o644) {
        eprintln!("hlctl history: {}: {e}", file.display());
        return exit::FAILED;
    }
    let charts = page.series.len();
    if global.json {
        print_json(&serde_json::json!({ "html": file, "charts": charts }));
    } else {
        println!("{}: {charts} chart(s)", file.display());
    }
    exit::OK
}
