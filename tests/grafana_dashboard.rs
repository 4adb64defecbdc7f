//! The shipped Grafana dashboard (packaging/fleet/hlctl-dashboard.json)
//! against Grafana's own schema. No registry this machine reaches carries a
//! runnable Grafana (Debian has none; PyPI's and npm's `grafana` are
//! placeholders), so the dashboard is not loaded into one: it is type-checked
//! against `@grafana/schema` 10.4.19, the TypeScript types Grafana generates
//! from its CUE kinds for the dashboard, its panels (table, timeseries, stat)
//! and Prometheus queries, with `tsc` (tests/grafana/check.ts says how). Both
//! come from the npm registry by `npm ci` on tests/grafana/package-lock.json,
//! cached under /var/tmp/hlctl-grafana-schema by a hash of that lock.
//! Every panel's PromQL is run against a real Prometheus in fleet_lab.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::output_text as text;
use serde_json::{Map, Value, json};

const DASHBOARD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/packaging/fleet/hlctl-dashboard.json"
);
const CHECK_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/grafana");
const CACHE: &str = "/var/tmp/hlctl-grafana-schema";

fn read(path: &str) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// node_modules with @grafana/schema and typescript as the lock pins them,
/// installed once (under a lock) into the cache.
fn schema_env() -> PathBuf {
    common::npm::installed(
        Path::new(CHECK_DIR),
        CACHE,
        "node_modules/typescript/bin/tsc",
    )
}

/// check.ts, then the dashboard as a typed constant, then each field
/// override as a field config of its panel's type (an override's property
/// id is a dotted path into the field config).
fn check_source(dash: &Value) -> String {
    let mut src = String::from_utf8(read(&format!("{CHECK_DIR}/check.ts"))).unwrap();
    src += &format!(
        "\nexport const dashboard: CheckedDashboard = {};\n",
        serde_json::to_string_pretty(dash).unwrap()
    );
    for (i, p) in dash["panels"].as_array().unwrap().iter().enumerate() {
        let ty = p["type"].as_str().unwrap();
        let overrides = p["fieldConfig"]["overrides"].as_array();
        for (j, o) in overrides.into_iter().flatten().enumerate() {
            let mut cfg = Map::new();
            for prop in o["properties"].as_array().unwrap() {
                let path: Vec<&str> = prop["id"].as_str().unwrap().split('.').collect();
                let (last, parents) = path.split_last().unwrap();
                let mut at = &mut cfg;
                for k in parents {
                    at = at
                        .entry(k.to_string())
                        .or_insert_with(|| json!({}))
                        .as_object_mut()
                        .unwrap();
                }
                at.insert(last.to_string(), prop["value"].clone());
            }
            src += &format!(
                "export const override_{i}_{j}: OverrideOf[{}] = {};\n",
                json!(ty),
                Value::Object(cfg)
            );
        }
    }
    src
}

/// `tsc --strict --noEmit` on `source` beside the cached node_modules.
fn tsc(source: &str) -> Output {
    let env = schema_env();
    let dir = tempfile::Builder::new()
        .prefix("check")
        .tempdir_in(&env)
        .unwrap();
    let file = dir.path().join("dashboard.ts");
    std::fs::write(&file, source).unwrap();
    Command::new("node")
        .arg(env.join("node_modules/typescript/bin/tsc"))
        .args([
            "--noEmit",
            "--strict",
            "--target",
            "es2020",
            "--module",
            "commonjs",
            "--moduleResolution",
            "node",
        ])
        .arg(&file)
        .output()
        .unwrap_or_else(|e| panic!("cannot run node ({e}): scripts/setup.sh installs Node.js"))
}

fn dashboard() -> Value {
    serde_json::from_slice(&read(DASHBOARD)).unwrap()
}

fn matrix_share_override(dash: &mut Value) -> &mut Value {
    let panel = dash["panels"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|p| p["title"].as_str().unwrap().contains("matrix"))
        .unwrap();
    panel["fieldConfig"]["overrides"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|o| o["properties"].to_string().contains("thresholds"))
        .unwrap()
}

#[test]
fn shipped_dashboard_type_checks_against_grafana_10_4_schema() {
    let dash = dashboard();
    let src = check_source(&dash);
    let overrides = src.matches("export const override_").count();
    let o = tsc(&src);
    println!(
        "tsc on the dashboard ({} panels, {overrides} field overrides): exit {:?}\n{}",
        dash["panels"].as_array().unwrap().len(),
        o.status.code(),
        text(&o)
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        overrides >= 2,
        "the matrix's two field overrides are checked"
    );
}

/// The check can fail: each planted mistake is a compile error naming it.
#[test]
fn schema_check_rejects_planted_mistakes() {
    type Plant = fn(&mut Value);
    let plants: [(&str, &str, Plant); 3] = [
        (
            "misspelt cell display mode in the matrix's share override",
            "color-backgrund",
            |d| {
                let o = matrix_share_override(d);
                let p = o["properties"]
                    .as_array_mut()
                    .unwrap()
                    .iter_mut()
                    .find(|p| p["id"] == "custom.cellOptions")
                    .unwrap();
                p["value"]["type"] = json!("color-backgrund");
            },
        ),
        (
            "threshold mode that Grafana does not have",
            "relative",
            |d| {
                let o = matrix_share_override(d);
                let p = o["properties"]
                    .as_array_mut()
                    .unwrap()
                    .iter_mut()
                    .find(|p| p["id"] == "thresholds")
                    .unwrap();
                p["value"]["mode"] = json!("relative");
            },
        ),
        ("unknown panel key", "colour", |d| {
            d["panels"][0]["colour"] = json!("red");
        }),
    ];
    for (what, name, plant) in plants {
        let mut dash = dashboard();
        plant(&mut dash);
        let o = tsc(&check_source(&dash));
        let t = text(&o);
        println!("{what}: exit {:?}", o.status.code());
        assert_eq!(o.status.code(), Some(2), "{what} passed tsc:\n{t}");
        let err = t
            .lines()
            .find(|l| l.contains("error TS") && l.contains(name))
            .unwrap_or_else(|| panic!("{what}: no error naming {name}:\n{t}"));
        println!("  {err}");
    }
}
