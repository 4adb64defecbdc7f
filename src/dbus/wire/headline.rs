//! `Job.Result a{sv}`: the headline figures of a finished job, typed, by the
//! job's kind. The whole report stays available as JSON (`Job.ResultJson`).
//!
//! Every key of a kind is always present (0, "" or empty when the report
//! has no such figure); a failed or cancelled job without a report has
//! `error` and `class`. The keys are listed once here ([`KEYS`]) and
//! documented in `dbus/org.hlctl.Daemon1.xml`.

use std::collections::HashMap;

use serde_json::Value;
use zbus::OwnedVariant;

use super::typed::owned;

/// The headline keys of each job kind (`tune` for `tune:IFACE`, `failure`
/// for a job that ended without a report), with their D-Bus types.
pub(crate) const KEYS: &[(&str, &[(&str, &str)])] = &[
    (
        "benchmark:net",
        &[
            ("bps", "d"),
            ("sent_bps", "d"),
            ("received_bps", "d"),
            ("reverse_bps", "d"),
            ("retransmits", "t"),
            ("duration_s", "d"),
        ],
    ),
    (
        "benchmark:cpu",
        &[
            ("events_per_second", "d"),
            ("events", "t"),
            ("threads", "u"),
            ("latency_min_ms", "d"),
            ("latency_avg_ms", "d"),
            ("latency_p95_ms", "d"),
            ("latency_max_ms", "d"),
            ("scaling", "d"),
            ("cancelled", "b"),
        ],
    ),
    (
        "benchmark:disk",
        &[
            ("iops", "d"),
            ("bytes_per_second", "d"),
            ("latency_min_us", "d"),
            ("latency_mean_us", "d"),
            ("latency_p50_us", "d"),
            ("latency_p90_us", "d"),
            ("latency_p99_us", "d"),
            ("latency_p99_9_us", "d"),
            ("latency_max_us", "d"),
            ("total_ios", "t"),
        ],
    ),
    (
        "benchmark:stress",
        &[
            ("verdict", "s"),
            ("reasons", "as"),
            ("duration_s", "d"),
            ("cancelled", "b"),
        ],
    ),
    (
        "benchmark:file",
        &[
            ("protocol", "s"),
            ("place", "s"),
            ("write_bytes_per_second", "d"),
            ("read_bytes_per_second", "d"),
            ("limits", "as"),
            ("verdicts", "as"),
        ],
    ),
    (
        "tune",
        &[
            ("outcome", "s"),
            ("interface", "s"),
            ("kept", "u"),
            ("reverted", "u"),
            ("findings", "a(ssss)"),
        ],
    ),
    (
        "doctor",
        &[
            ("findings", "a(ssss)"),
            ("passed", "u"),
            ("not_checked", "u"),
        ],
    ),
    ("report", &[("network", "a(sdd)"), ("figures", "a(sssds)")]),
    ("failure", &[("error", "s"), ("class", "s")]),
];

fn f(v: &Value, path: &[&str]) -> f64 {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_f64)
        .unwrap_or(0.0)
}

fn t(v: &Value, path: &[&str]) -> u64 {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

fn s(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

fn b(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// (id, severity, interface, title) of every finding in the report.
fn findings(v: &Value) -> Vec<(String, String, String, String)> {
    v.get("findings")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|x| {
            (
                s(x, "id"),
                s(x, "severity"),
                s(x, "interface"),
                s(x, "title"),
            )
        })
        .collect()
}

/// The length of the array at `key` (0 when absent).
fn count(v: &Value, key: &str) -> u32 {
    let n = v.get(key).and_then(Value::as_array).map_or(0, Vec::len);
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// (peer, upload bps, download bps) of every network entry of a report; 0
/// for a direction not measured.
fn network(v: &Value) -> Vec<(String, f64, f64)> {
    v.get("network")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|x| (s(x, "peer"), f(x, &["upload_bps"]), f(x, &["download_bps"])))
        .collect()
}

/// (part, subject, name, value, unit) of every disk and CPU figure of a
/// report.
fn figures(v: &Value) -> Vec<(String, String, String, f64, String)> {
    let mut out = Vec::new();
    for part in ["disk", "cpu"] {
        for entry in v.get(part).and_then(Value::as_array).into_iter().flatten() {
            for fig in entry
                .get("figures")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                out.push((
                    part.to_string(),
                    s(entry, "subject"),
                    s(fig, "name"),
                    f(fig, &["value"]),
                    s(fig, "unit"),
                ));
            }
        }
    }
    out
}

fn steps(v: &Value, status: &str) -> u32 {
    let n = v
        .get("steps")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|x| x.get("status").and_then(Value::as_str) == Some(status))
        .count();
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// `bench file`'s figures: the protocol, the place, both directions and
/// each direction's limit and sentence.
fn file_figures(v: &Value) -> Vec<(&'static str, OwnedVariant)> {
    let file = v.get("file").unwrap_or(&Value::Null);
    let verdicts = |key: &str| -> Vec<String> {
        v.get("verdicts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|x| s(x, key))
            .collect()
    };
    vec![
        ("protocol", owned(s(file, "protocol"))),
        ("place", owned(s(file, "place"))),
        (
            "write_bytes_per_second",
            owned(f(file, &["write", "bytes_per_second"])),
        ),
        (
            "read_bytes_per_second",
            owned(f(file, &["read", "bytes_per_second"])),
        ),
        ("limits", owned(verdicts("limit"))),
        ("verdicts", owned(verdicts("sentence"))),
    ]
}

/// Which entry of [`KEYS`] a job's result falls under ("" for a kind
/// without headline figures: its `Result` is empty, `ResultJson` has all).
pub(crate) fn section(kind: &str, result: &Value) -> &'static str {
    let failed = result.get("error").is_some();
    let base = if kind.starts_with("tune:") {
        "tune"
    } else {
        kind
    };
    if failed {
        return "failure";
    }
    KEYS.iter()
        .map(|(k, _)| *k)
        .find(|k| *k == base && *k != "failure")
        .unwrap_or("")
}

/// The typed headline of a finished job of `kind` whose report is `result`.
pub(crate) fn headline(kind: &str, result: &Value) -> HashMap<String, OwnedVariant> {
    let v = result;
    let pairs: Vec<(&str, OwnedVariant)> = match section(kind, v) {
        "benchmark:net" => vec![
            ("bps", owned(f(v, &["received_bps"]))),
            ("sent_bps", owned(f(v, &["sent_bps"]))),
            ("received_bps", owned(f(v, &["received_bps"]))),
            ("reverse_bps", owned(f(v, &["reverse", "received_bps"]))),
            ("retransmits", owned(t(v, &["retransmits"]))),
            ("duration_s", owned(f(v, &["duration_s"]))),
        ],
        "benchmark:cpu" => vec![
            ("events_per_second", owned(f(v, &["events_per_second"]))),
            ("events", owned(t(v, &["events"]))),
            (
                "threads",
                owned(u32::try_from(t(v, &["threads"])).unwrap_or(u32::MAX)),
            ),
            ("latency_min_ms", owned(f(v, &["latency_ms", "min"]))),
            ("latency_avg_ms", owned(f(v, &["latency_ms", "avg"]))),
            ("latency_p95_ms", owned(f(v, &["latency_ms", "p95"]))),
            ("latency_max_ms", owned(f(v, &["latency_ms", "max"]))),
            ("scaling", owned(f(v, &["scaling"]))),
            ("cancelled", owned(b(v, "cancelled"))),
        ],
        "benchmark:disk" => {
            let lat = |k: &str| owned(f(v, &["latency_us", k]));
            vec![
                ("iops", owned(f(v, &["iops"]))),
                ("bytes_per_second", owned(f(v, &["bytes_per_second"]))),
                ("latency_min_us", lat("min")),
                ("latency_mean_us", lat("mean")),
                ("latency_p50_us", lat("p50")),
                ("latency_p90_us", lat("p90")),
                ("latency_p99_us", lat("p99")),
                ("latency_p99_9_us", lat("p99_9")),
                ("latency_max_us", lat("max")),
                ("total_ios", owned(t(v, &["total_ios"]))),
            ]
        }
        "benchmark:stress" => {
            let reasons: Vec<String> = v
                .get("reasons")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|r| r.as_str().map(str::to_string))
                .collect();
            vec![
                ("verdict", owned(s(v, "verdict"))),
                ("reasons", owned(reasons)),
                ("duration_s", owned(f(v, &["duration_s"]))),
                ("cancelled", owned(b(v, "cancelled"))),
            ]
        }
        "benchmark:file" => file_figures(v),
        "tune" => vec![
            ("outcome", owned(s(v, "outcome"))),
            ("interface", owned(s(v, "interface"))),
            ("kept", owned(steps(v, "kept"))),
            ("reverted", owned(steps(v, "reverted"))),
            ("findings", owned(findings(v))),
        ],
        "doctor" => vec![
            ("findings", owned(findings(v))),
            ("passed", owned(count(v, "passed"))),
            ("not_checked", owned(count(v, "not_checked"))),
        ],
        "report" => vec![
            ("network", owned(network(v))),
            ("figures", owned(figures(v))),
        ],
        "failure" => vec![
            ("error", owned(s(v, "error"))),
            ("class", owned(s(v, "class"))),
        ],
        _ => Vec::new(),
    };
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn keys(m: &HashMap<String, OwnedVariant>) -> Vec<String> {
        let mut k: Vec<String> = m.keys().cloned().collect();
        k.sort();
        k
    }

    fn listed(section: &str) -> Vec<String> {
        let mut k: Vec<String> = KEYS
            .iter()
            .find(|(s, _)| *s == section)
            .unwrap()
            .1
            .iter()
            .map(|(k, _)| k.to_string())
            .collect();
        k.sort();
        k
    }

    #[test]
    fn every_kind_gives_exactly_its_listed_keys_typed() {
        let net =
            json!({"sent_bps": 9.5e9, "received_bps": 9.4e9, "retransmits": null, "reverse": null});
        let h = headline("benchmark:net", &net);
        assert_eq!(keys(&h), listed("benchmark:net"));
        assert_eq!(f64::try_from(&h["bps"]).unwrap(), 9.4e9);
        assert_eq!(u64::try_from(&h["retransmits"]).unwrap(), 0);
        let tune = json!({"outcome": "done", "interface": "eth0",
            "steps": [{"status": "kept"}, {"status": "reverted"}, {"status": "kept"}],
            "findings": [{"id": "offload-off", "severity": "warning", "interface": "eth0", "title": "t"}]});
        let h = headline("tune:eth0", &tune);
        assert_eq!(keys(&h), listed("tune"));
        assert_eq!(u32::try_from(&h["kept"]).unwrap(), 2);
        let failed = headline(
            "benchmark:cpu",
            &json!({"error": "boom", "class": "invalid"}),
        );
        assert_eq!(keys(&failed), listed("failure"));
        assert_eq!(<&str>::try_from(&failed["class"]).unwrap(), "invalid");
        assert!(headline("nosuch:kind", &json!({"x": 1})).is_empty());
        let doctor = json!({"findings": [{"id": "link-half-duplex", "severity": "critical",
            "interface": "eth0", "title": "t"}], "passed": [{}, {}], "not_checked": []});
        let h = headline("doctor", &doctor);
        assert_eq!(keys(&h), listed("doctor"));
        assert_eq!(u32::try_from(&h["passed"]).unwrap(), 2);
        let report = json!({"network": [{"peer": "nas", "upload_bps": 9.4e8, "download_bps": null}],
            "disk": [{"subject": "/srv", "figures": [{"name": "seq write", "value": 400.0, "unit": "MB/s"}]}],
            "cpu": [{"subject": "single", "figures": [{"name": "events/s", "value": 4700.0, "unit": "events/s"}]}]});
        let h = headline("report", &report);
        assert_eq!(keys(&h), listed("report"));
        let figs: Vec<(String, String, String, f64, String)> =
            h["figures"].try_clone().unwrap().try_into().unwrap();
        assert_eq!(figs.len(), 2);
        assert_eq!(figs[1].3, 4700.0);
        for (section, _) in KEYS {
            if !["failure", "tune", "doctor", "report"].contains(section) {
                assert_eq!(keys(&headline(section, &json!({}))), listed(section));
            }
        }
    }
}
