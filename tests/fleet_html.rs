//! `hlctl history --html`: three real checks (two iperf3 servers in a peer
//! namespace, so the matrix has two columns) and a baseline; the page is
//! rendered by headless Chromium to a PNG (kept as a test artifact), loads
//! without errors and fetches nothing, and every chart has one SVG point per
//! stored check and the baseline line.

mod common;

use common::output_text as text;

use std::process::{Command, Output};

use common::lab::Lab;

fn chromium(args: &[&str]) -> Output {
    Command::new("chromium")
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .args(args)
        .output()
        .expect("chromium (scripts/setup.sh installs it)")
}

#[test]
fn html_report_renders_in_chromium_with_one_point_per_check() {
    let _serial = common::lab::serial();
    let lab = Lab::new();
    let (s1, s2) = (lab.iperf3_server(), lab.iperf3_server());
    let (p1, p2) = (lab.peer_arg(&s1), lab.peer_arg(&s2));
    const CHECKS: usize = 3;
    for i in 0..CHECKS {
        let o = lab.hlctl(&[
            "--json",
            "check",
            "--peer",
            &p1,
            "--peer",
            &p2,
            "--no-cpu",
            "--time",
            "1",
            "--busy-window",
            "30",
            "--baseline",
            "good",
        ]);
        // Exit 1 is a (noise) regression against the reference: still stored.
        assert!(matches!(o.status.code(), Some(0 | 1)), "{}", text(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["failures"].as_array().unwrap().len(), 0, "{}", text(&o));
        if i == 0 {
            let o = lab.hlctl(&["baseline", "save", "good"]);
            assert!(o.status.success(), "{}", text(&o));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let o = lab.hlctl(&["history", "--html", page.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    // Self-contained: nothing to fetch (the SVG namespace is only a name).
    for bad in ["src=", "href=", "<script", "@import", "url("] {
        assert!(
            !html.contains(bad),
            "the page refers to something outside: {bad}"
        );
    }

    // Rendered by Chromium: the DOM it built, and a screenshot.
    let url = format!("file://{}", page.display());
    let dom = chromium(&["--dump-dom", &url]);
    assert!(dom.status.success(), "{}", text(&dom));
    let log = String::from_utf8_lossy(&dom.stderr);
    for l in log.lines() {
        assert!(
            !(l.contains("CONSOLE") || l.contains("net::ERR") || l.contains("Uncaught")),
            "page error: {l}"
        );
    }
    let dom = String::from_utf8_lossy(&dom.stdout).to_string();
    assert!(
        dom.contains("<footer id=\"end\">"),
        "the page did not load whole:\n{dom}"
    );
    let charts: Vec<&str> = dom.split("<div class=\"chartbox\"").skip(1).collect();
    // net upload and download to each of the two peers.
    assert_eq!(charts.len(), 4, "{dom}");
    for c in &charts {
        let title = c
            .split("<h3>")
            .nth(1)
            .and_then(|t| t.split("</h3>").next())
            .unwrap();
        assert_eq!(
            c.matches("<circle class=\"pt\"").count(),
            CHECKS,
            "chart '{title}' should have one point per check"
        );
        assert_eq!(
            c.matches("class=\"baseline\"").count(),
            1,
            "chart '{title}'"
        );
        println!("chart '{title}': {CHECKS} points and the baseline line");
    }
    assert!(dom.contains("<table id=\"verdicts\">"), "{dom}");
    let matrix = dom.split("<table id=\"matrix\">").nth(1).expect("a matrix");
    assert!(matrix.contains(&p1) && matrix.contains(&p2), "{matrix}");

    let png = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fleet-report.png");
    let _ = std::fs::remove_file(&png);
    let o = chromium(&[
        &format!("--screenshot={}", png.display()),
        "--window-size=1400,1400",
        &url,
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let bytes = std::fs::read(&png).unwrap();
    assert!(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 20_000,
        "{}",
        bytes.len()
    );
    println!("screenshot: {} ({} bytes)", png.display(), bytes.len());
}
