//! One trend chart as inline SVG: a polyline with one `<circle class="pt">`
//! per stored value, and the baseline as a dashed line.

use super::esc;

const W: f64 = 640.0;
const H: f64 = 180.0;
const PAD_L: f64 = 70.0;
const PAD_R: f64 = 10.0;
const PAD_T: f64 = 10.0;
const PAD_B: f64 = 24.0;

/// `points` (time, value) oldest first; `label` formats a value for the axis.
pub(crate) fn trend(
    points: &[(i64, f64)],
    baseline: Option<f64>,
    label: &dyn Fn(f64) -> String,
) -> String {
    let max = points
        .iter()
        .map(|p| p.1)
        .chain(baseline)
        .fold(0.0_f64, f64::max)
        .max(f64::MIN_POSITIVE)
        * 1.1;
    let n = points.len();
    let x = |i: usize| {
        if n <= 1 {
            PAD_L + (W - PAD_L - PAD_R) / 2.0
        } else {
            PAD_L + (W - PAD_L - PAD_R) * i as f64 / (n - 1) as f64
        }
    };
    let y = |v: f64| PAD_T + (H - PAD_T - PAD_B) * (1.0 - v / max);
    let mut s = format!(
        r#"<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img">"#
    );
    s += &format!(
        r##"<line x1="{PAD_L}" y1="{}" x2="{}" y2="{}" stroke="#999"/><line x1="{PAD_L}" y1="{PAD_T}" x2="{PAD_L}" y2="{}" stroke="#999"/>"##,
        H - PAD_B,
        W - PAD_R,
        H - PAD_B,
        H - PAD_B
    );
    for v in [0.0, max / 1.1] {
        s += &format!(
            r##"<text x="{}" y="{:.1}" font-size="10" text-anchor="end" fill="#555">{}</text>"##,
            PAD_L - 4.0,
            y(v) + 3.0,
            esc(&label(v))
        );
    }
    if let Some(b) = baseline {
        s += &format!(
            r##"<line class="baseline" x1="{PAD_L}" y1="{:.1}" x2="{}" y2="{:.1}" stroke="#d62728" stroke-dasharray="6 4"><title>baseline {}</title></line>"##,
            y(b),
            W - PAD_R,
            y(b),
            esc(&label(b))
        );
    }
    let pts: Vec<String> = points
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{:.1},{:.1}", x(i), y(p.1)))
        .collect();
    if n > 1 {
        s += &format!(
            r##"<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="{}"/>"##,
            pts.join(" ")
        );
    }
    for (i, p) in points.iter().enumerate() {
        s += &format!(
            r##"<circle class="pt" cx="{:.1}" cy="{:.1}" r="3.5" fill="#1f77b4"><title>{} UTC: {}</title></circle>"##,
            x(i),
            y(p.1),
            crate::history::store::format_ts(p.0),
            esc(&label(p.1))
        );
    }
    s += "</svg>";
    s
}

/// A link's usage as inline SVG: the highest rate of each hour, received
/// and sent, as two lines (no point marks: a month is 720 hours), and the
/// link's speed as a dashed line. `hours`: (hour start, rx, tx) oldest first.
pub(crate) fn usage(hours: &[(i64, f64, f64)], speed_bps: f64) -> String {
    let max = hours
        .iter()
        .flat_map(|h| [h.1, h.2])
        .chain([speed_bps])
        .fold(0.0_f64, f64::max)
        .max(f64::MIN_POSITIVE)
        * 1.1;
    let (t0, t1) = match (hours.first(), hours.last()) {
        (Some(a), Some(b)) if b.0 > a.0 => (a.0, b.0),
        (Some(a), _) => (a.0, a.0 + 3600),
        _ => (0, 3600),
    };
    let x = |t: i64| PAD_L + (W - PAD_L - PAD_R) * (t - t0) as f64 / (t1 - t0) as f64;
    let y = |v: f64| PAD_T + (H - PAD_T - PAD_B) * (1.0 - v / max);
    let mut s = format!(
        r##"<svg class="chart usage" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img"><line x1="{PAD_L}" y1="{b}" x2="{}" y2="{b}" stroke="#999"/>"##,
        W - PAD_R,
        b = H - PAD_B
    );
    for v in [0.0, speed_bps] {
        s += &format!(
            r##"<text x="{}" y="{:.1}" font-size="10" text-anchor="end" fill="#555">{}</text>"##,
            PAD_L - 4.0,
            y(v) + 3.0,
            esc(&crate::units::bps(v))
        );
    }
    s += &format!(
        r##"<line class="speed" x1="{PAD_L}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#999" stroke-dasharray="6 4"><title>link speed</title></line>"##,
        W - PAD_R,
        y = y(speed_bps)
    );
    for (class, colour, pick) in [("rx", "#1f77b4", 0usize), ("tx", "#ff7f0e", 1usize)] {
        let pts: Vec<String> = hours
            .iter()
            .map(|h| format!("{:.1},{:.1}", x(h.0), y(if pick == 0 { h.1 } else { h.2 })))
            .collect();
        s += &format!(
            r##"<polyline class="{class}" fill="none" stroke="{colour}" stroke-width="1.5" points="{}"/>"##,
            pts.join(" ")
        );
    }
    s + "</svg>"
}
