//! `hlctl history --html FILE`: one self-contained page for a box without
//! Prometheus — inline CSS and SVG, no script, nothing fetched — with the
//! trend of every stored metric (the baseline as a dashed line), the last
//! check's verdicts, and the transfer matrix of the last check.
//!
//! A link usage chart per sampled link closes it (the last 30 days).
//!
//! - [`svg`]: one trend chart, one usage chart;
//! - [`transfers`]: the newest transfer per peer, protocol and direction.

pub(crate) mod svg;
pub(crate) mod transfers;

use std::collections::BTreeMap;

use crate::check::CheckReport;
use crate::history::compare::Comparison;
use crate::history::store::{format_ts, format_value};
use crate::history::{History, HistoryError, StoredResult};

/// Text for HTML element content and attribute values.
pub(crate) fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o += "&amp;",
            '<' => o += "&lt;",
            '>' => o += "&gt;",
            '"' => o += "&quot;",
            '\'' => o += "&#39;",
            c => o.push(c),
        }
    }
    o
}

/// (metric, subject).
pub(crate) type Key = (String, String);
/// Unit and (time, value) oldest first.
pub(crate) type Series = (String, Vec<(i64, f64)>);

/// What the page shows.
pub(crate) struct Page {
    pub(crate) host: String,
    pub(crate) generated: i64,
    /// (metric, subject) → unit and values oldest first.
    pub(crate) series: BTreeMap<Key, Series>,
    /// (metric, subject) → the newest baseline's value.
    pub(crate) baseline: BTreeMap<(String, String), f64>,
    pub(crate) baseline_name: Option<String>,
    pub(crate) last_check: Option<(CheckReport, Option<Comparison>)>,
    /// Every sampled link's last 30 days: (link, speed, hourly peaks).
    pub(crate) usage: Vec<LinkChart>,
    /// This host's row of the host × host × protocol matrix.
    pub(crate) transfers: Vec<crate::history::transfers::Transfer>,
    /// This host's physical link speeds (bit/s) by interface: the
    /// transfers' colours.
    pub(crate) link_speeds: BTreeMap<String, f64>,
}

/// Each interface here with a physical speed (bit/s); a nominal speed
/// (veth, bridge, virtio_net) caps nothing and is left out.
fn physical_speeds() -> BTreeMap<String, f64> {
    let Ok(mut nl) = crate::nic::netlink::Netlink::new() else {
        return BTreeMap::new();
    };
    crate::nic::read::interfaces(&mut nl, &[])
        .unwrap_or_default()
        .iter()
        .filter_map(|i| {
            let s = crate::nic::speed::link_speed(i).filter(|s| s.is_physical())?;
            Some((i.name.clone(), s.bps()))
        })
        .collect()
}

/// One link's usage chart: its name, its speed (bit/s) and the highest
/// rate of each hour (hour start, received, sent).
pub(crate) type LinkChart = (String, f64, Vec<(i64, f64, f64)>);

/// Days of usage the page draws.
const USAGE_DAYS: i64 = 30;

fn usage_charts(h: &mut History) -> Result<Vec<LinkChart>, HistoryError> {
    let since = crate::host::now_unix() - USAGE_DAYS * 86_400;
    let mut out = Vec::new();
    for iface in crate::usage::store::ifaces(h)? {
        let b = crate::usage::store::buckets(h, Some(&iface), since)?;
        if let Some(last) = b.last() {
            let speed = last.speed_bps;
            out.push((iface, speed, crate::usage::stats::hourly_peaks(&b)));
        }
    }
    Ok(out)
}

fn usage_section(charts: &[LinkChart]) -> String {
    let mut s = format!("<h2>Link usage, last {USAGE_DAYS} days (highest rate of each hour)</h2>");
    if charts.is_empty() {
        return s + "<p>No usage sampled yet (hlctld samples every physical link every 10 s).</p>";
    }
    for (iface, speed, hours) in charts {
        s += &format!(
            "<div class=\"chartbox usage\" data-iface=\"{}\" data-hours=\"{}\"><h3>{} ({}): received (blue), sent (orange)</h3>{}</div>",
            esc(iface),
            hours.len(),
            esc(iface),
            esc(&crate::units::bps(*speed)),
            svg::usage(hours, *speed)
        );
    }
    s
}

/// Everything stored (up to `limit` results), the newest baseline, the last check.
pub(crate) fn gather(
    h: &mut History,
    check: &crate::config::CheckConfig,
    limit: u32,
) -> Result<Page, HistoryError> {
    let rows: Vec<StoredResult> = h.list(None, None, limit)?;
    let mut series: BTreeMap<Key, Series> = BTreeMap::new();
    for r in rows.iter().rev() {
        for m in &r.metrics {
            let e = series
                .entry((m.name.clone(), m.subject.clone()))
                .or_insert_with(|| (m.unit.clone(), Vec::new()));
            e.1.push((r.ts, m.value));
        }
    }
    let mut baseline = BTreeMap::new();
    let mut baseline_name = None;
    match h.compare(None, check.threshold_percent) {
        Ok(c) => {
            for m in &c.metrics {
                baseline.insert((m.name.clone(), m.subject.clone()), m.baseline);
            }
            baseline_name = Some(c.baseline);
        }
        Err(HistoryError::NoBaselines) => {}
        Err(e) => return Err(e),
    }
    let last_check = crate::check::last_comparison(h, check)?.and_then(|(r, c)| {
        serde_json::from_value::<CheckReport>(r.result)
            .ok()
            .map(|x| (x, c))
    });
    Ok(Page {
        host: rows
            .first()
            .map(|r| r.host.clone())
            .unwrap_or_else(|| crate::host::HostInfo::current().host),
        generated: crate::host::now_unix(),
        series,
        baseline,
        baseline_name,
        last_check,
        usage: usage_charts(h)?,
        transfers: crate::history::transfers::newest(&rows),
        link_speeds: physical_speeds(),
    })
}

const STYLE: &str = "body{font-family:sans-serif;margin:2em;color:#222}h1{font-size:1.5em}\
h2{font-size:1.2em;margin-top:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;\
padding:3px 8px;text-align:left}.REGRESSION{background:#f8d7da}.IMPROVED{background:#d4edda}\
.chartbox{display:inline-block;margin:0 1em 1em 0;vertical-align:top}.chartbox h3{font-size:.95em;margin:.2em 0}";

fn matrix(r: &CheckReport, host: &str) -> String {
    let mut s = String::from(
        "<h2>Transfer matrix (last check)</h2><table id=\"matrix\"><tr><th>from \\ to</th>",
    );
    for n in &r.report.network {
        s += &format!("<th>{}</th>", esc(&n.peer));
    }
    s += "</tr>";
    let cell = |v: Option<f64>| v.map_or("–".to_string(), |b| format!("{:.0} Mbit/s", b / 1e6));
    s += &format!("<tr><th>{} (upload)</th>", esc(host));
    for n in &r.report.network {
        s += &format!("<td>{}</td>", cell(n.upload_bps));
    }
    s += &format!("</tr><tr><th>to {} (download)</th>", esc(host));
    for n in &r.report.network {
        s += &format!("<td>{}</td>", cell(n.download_bps));
    }
    s + "</tr></table>"
}

fn verdicts(c: &Comparison) -> String {
    let mut s = format!(
        "<h2>Last check against {}</h2><table id=\"verdicts\"><tr><th>metric</th><th>subject</th><th>reference</th><th>now</th><th>change</th><th>verdict</th></tr>",
        esc(&if c.baseline == crate::check::PREVIOUS_CHECK {
            "the previous check".to_string()
        } else {
            format!("baseline '{}'", c.baseline)
        })
    );
    for m in &c.metrics {
        s += &format!(
            "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&format!("{:?}", m.verdict).to_uppercase()),
            esc(&m.name),
            esc(&m.subject),
            esc(&format_value(m.baseline, &m.unit)),
            esc(&m.now.map_or("–".into(), |v| format_value(v, &m.unit))),
            m.change_percent.map_or("–".into(), |p| format!("{p:+.0}%")),
            esc(&m.verdict.to_string())
        );
    }
    s + "</table>"
}

/// The page.
pub(crate) fn render(p: &Page) -> String {
    let mut s = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>hlctl report: {h}</title><style>{STYLE}{}</style></head><body><h1>hlctl report: {h}</h1><p>Generated {} UTC from the history database.{}</p>",
        transfers::STYLE,
        format_ts(p.generated),
        p.baseline_name.as_ref().map_or(String::new(), |b| format!(
            " Dashed red line: baseline '{}'.",
            esc(b)
        )),
        h = esc(&p.host),
    );
    match &p.last_check {
        Some((r, c)) => {
            if let Some(c) = c {
                s += &verdicts(c);
            } else {
                s += "<h2>Last check</h2><p>No reference yet: it was the first check.</p>";
            }
            if r.report.network.len() > 1 {
                s += &matrix(r, &p.host);
            }
        }
        None => s += "<h2>Last check</h2><p>No check stored yet (hlctl check).</p>",
    }
    s += &transfers::section(&p.transfers, &p.link_speeds);
    s += "<h2>Trends</h2>";
    if p.series.is_empty() {
        s += "<p>No results stored yet.</p>";
    }
    for ((name, subject), (unit, points)) in &p.series {
        let base = p.baseline.get(&(name.clone(), subject.clone())).copied();
        let u = unit.clone();
        let chart = svg::trend(points, base, &move |v| format_value(v, &u));
        let title = if subject.is_empty() {
            name.clone()
        } else {
            format!("{name} → {subject}")
        };
        s += &format!(
            "<div class=\"chartbox\" data-metric=\"{}\" data-subject=\"{}\" data-points=\"{}\"><h3>{}</h3>{chart}</div>",
            esc(name),
            esc(subject),
            points.len(),
            esc(&title)
        );
    }
    s += &usage_section(&p.usage);
    s += "<footer id=\"end\"><p>hlctl ";
    s += env!("CARGO_PKG_VERSION");
    s += "</p></footer></body></html>\n";
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_and_one_point_per_value() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        let mut series = BTreeMap::new();
        series.insert(
            ("net upload".to_string(), "nas:5201".to_string()),
            (
                "bit/s".to_string(),
                vec![(100, 9e8), (200, 9.4e8), (300, 1e8)],
            ),
        );
        let mut baseline = BTreeMap::new();
        baseline.insert(("net upload".to_string(), "nas:5201".to_string()), 9.4e8);
        let html = render(&Page {
            host: "lab<1>".into(),
            generated: 0,
            series,
            baseline,
            baseline_name: Some("good".into()),
            last_check: None,
            usage: vec![("eth0".into(), 1e9, vec![(0, 2e8, 1e7), (3600, 9.9e8, 2e7)])],
            transfers: Vec::new(),
            link_speeds: BTreeMap::new(),
        });
        assert_eq!(html.matches("<circle class=\"pt\"").count(), 3);
        assert_eq!(html.matches("class=\"baseline\"").count(), 1);
        assert!(html.contains("hlctl report: lab&lt;1&gt;"));
        assert!(html.contains("data-iface=\"eth0\" data-hours=\"2\""));
        assert_eq!(html.matches("<polyline class=\"rx\"").count(), 1);
        // Nothing fetched: every http:// is an SVG's namespace.
        assert_eq!(
            html.matches("http://").count(),
            html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
        );
    }
}
