//! Reading hlctl's JSON reports in tests: string arrays, findings, the
//! settings of a tune step.

use serde_json::Value;

/// An array of strings (`interfaces`, `lowers`), in order.
pub fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap_or_else(|| panic!("not a string: {s}")))
        .collect()
}

/// The same, sorted.
pub fn sorted_strings(v: &Value) -> Vec<&str> {
    let mut s = strings(v);
    s.sort();
    s
}

/// The ids of a doctor report's findings.
pub fn finding_ids(r: &Value) -> Vec<&str> {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect()
}

/// The first finding with `id`.
pub fn finding<'a>(r: &'a Value, id: &str) -> Option<&'a Value> {
    r["findings"].as_array()?.iter().find(|f| f["id"] == id)
}

/// The first finding with `id`; panics (showing the findings) when missing.
pub fn the_finding<'a>(r: &'a Value, id: &str) -> &'a Value {
    finding(r, id).unwrap_or_else(|| panic!("no {id} finding: {}", r["findings"]))
}

/// The value of a finding's evidence `name`; panics when it has none.
pub fn evidence<'a>(f: &'a Value, name: &str) -> &'a str {
    f["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
        .and_then(|e| e["value"].as_str())
        .unwrap_or_else(|| panic!("no evidence {name} in {f}"))
}

/// Whether a check of that name passed.
pub fn passed(r: &Value, check: &str) -> bool {
    r["passed"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["check"] == check)
}

/// The setting names of a tune step (`mtu`, `vmbr0: mtu`, ...).
pub fn step_settings(step: &Value) -> Vec<&str> {
    step["settings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["setting"].as_str().unwrap())
        .collect()
}
