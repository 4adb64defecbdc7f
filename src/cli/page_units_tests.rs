//! The Cockpit page's units (packaging/cockpit/hlctl/units.js) against the
//! CLI's (`crate::units`, the history's values and times, the workload
//! layers): the same values through both, in real Node.js (which
//! scripts/setup.sh installs), must give the same text. Here, beside the
//! CLI, because the page is a front end as the CLI is: it reads what every
//! layer below prints.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::workload::Layer;

/// Rates, including exact binary ties (940.5 Mbit/s, 1.125 Gbit/s), where
/// JavaScript's toFixed and Rust's formatter round differently unless the
/// page takes care.
const RATES: &[f64] = &[
    0.0,
    0.4,
    0.5,
    1.5,
    2.5,
    999.4,
    999.5,
    1_000.0,
    12_345.6,
    999_499.9,
    999_999.9,
    1e6,
    940_500_000.0,
    941_234_567.9,
    999_999_999.0,
    1e9,
    1.125e9,
    1.135e9,
    6.87e9,
    9.995e9,
    14.91e9,
    1e11,
];

const SPEEDS: &[u32] = &[
    10, 100, 999, 1000, 1234, 2500, 5000, 10_000, 25_000, 40_000, 100_000, 200_000,
];

const BYTES: &[f64] = &[
    0.0,
    1.0,
    1023.0,
    1024.0,
    1536.0,
    65_536.0,
    1_048_575.0,
    117_440_512.0,
    1.5 * 1_073_741_824.0,
    3e15,
    1.2e18,
];

const TIMES: &[i64] = &[
    0,
    951_782_400,
    951_868_799,
    1_733_320_509,
    1_796_428_800,
    2_000_000_000,
    4_102_444_800,
];

/// (value, unit) as stored metrics carry them.
fn metrics() -> Vec<(f64, &'static str)> {
    let mut m: Vec<(f64, &str)> = RATES.iter().map(|&v| (v, "bit/s")).collect();
    m.extend(BYTES.iter().map(|&v| (v, "B/s")));
    m.extend([
        (5_123.4, "events/s"),
        (2.5, "events/s"),
        (3.5, "%"),
        (1_234.5, "IOPS"),
    ]);
    m
}

/// Every workload layer with a few figures of its unit (a need, a
/// measurement, a tie).
fn layers() -> Vec<(f64, Layer)> {
    Layer::ALL
        .iter()
        .flat_map(|&l| {
            [
                (300e6, l),
                (12.5e6, l),
                (1_234.5, l),
                (0.25e6, l),
                (941_234_567.9, l),
            ]
        })
        .collect()
}

/// What units.js makes of `input` (see `main` below), as JSON.
fn page(input: &Value) -> Value {
    let js = Path::new(env!("CARGO_MANIFEST_DIR")).join("packaging/cockpit/hlctl/units.js");
    // The page's module as Cockpit's browser loads it, imported from a data:
    // URL (Node would take a .js file outside a "type": "module" package
    // for CommonJS).
    let main = r#"
        const fs = require("fs");
        const src = fs.readFileSync(process.argv[1], "utf8");
        import("data:text/javascript;base64," + Buffer.from(src).toString("base64")).then(u => {
            const q = JSON.parse(process.argv[2]);
            console.log(JSON.stringify({
                bps: q.bps.map(u.bps),
                speed: q.speed.map(u.speed),
                bytes: q.bytes.map(u.bytes),
                value: q.value.map(([v, unit]) => u.value(v, unit)),
                utc: q.utc.map(u.utc),
                layer: q.layer.map(([v, name]) => u.layer(v, name)),
            }));
        });
    "#;
    let out = Command::new("node")
        .args(["-e", main])
        .arg(&js)
        .arg(input.to_string())
        .output()
        .unwrap_or_else(|e| panic!("cannot run node ({e}): scripts/setup.sh installs Node.js"));
    assert!(
        out.status.success(),
        "node: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("node's JSON")
}

#[test]
fn the_cockpit_page_writes_every_figure_and_time_as_the_cli_does() {
    let input = json!({
        "bps": RATES,
        "speed": SPEEDS,
        "bytes": BYTES,
        "value": metrics(),
        "utc": TIMES,
        "layer": layers().iter().map(|(v, l)| json!([v, l.name()])).collect::<Vec<_>>(),
    });
    let got = page(&input);
    let want = json!({
        "bps": RATES.iter().map(|&v| crate::units::bps(v)).collect::<Vec<_>>(),
        "speed": SPEEDS.iter().map(|&v| crate::units::speed(v)).collect::<Vec<_>>(),
        "bytes": BYTES.iter().map(|&v| crate::units::bytes(v as u64)).collect::<Vec<_>>(),
        "value": metrics()
            .iter()
            .map(|(v, unit)| crate::history::store::format_value(*v, unit))
            .collect::<Vec<_>>(),
        "utc": TIMES
            .iter()
            .map(|&t| crate::history::store::format_ts(t))
            .collect::<Vec<_>>(),
        "layer": layers().iter().map(|(v, l)| l.format(*v)).collect::<Vec<_>>(),
    });
    for key in ["bps", "speed", "bytes", "value", "utc", "layer"] {
        let pairs: Vec<(String, String)> = want[key]
            .as_array()
            .unwrap()
            .iter()
            .zip(got[key].as_array().expect(key))
            .filter(|(w, g)| w != g)
            .map(|(w, g)| (w.to_string(), g.to_string()))
            .collect();
        assert!(
            pairs.is_empty(),
            "{key}: the CLI's text, then the page's: {pairs:?}"
        );
    }
}
