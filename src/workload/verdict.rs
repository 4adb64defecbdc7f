//! Will it carry what I run? For each layer a workload needs: needed (per
//! instance × count), measured, headroom, how many instances fit, and the
//! one layer that limits.

use serde::{Deserialize, Serialize};

use super::needs::{Layer, Workload};

/// What was measured per layer, and by what.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Measured {
    pub(crate) values: Vec<(Layer, f64, String)>,
    /// Why a layer has no figure (`no --peer`, the run's error).
    pub(crate) missing: Vec<(Layer, String)>,
}

impl Measured {
    fn get(&self, l: Layer) -> Option<(f64, &str)> {
        self.values
            .iter()
            .find(|(x, _, _)| *x == l)
            .map(|(_, v, s)| (*v, s.as_str()))
    }

    fn why_missing(&self, l: Layer) -> String {
        self.missing
            .iter()
            .find(|(x, _)| *x == l)
            .map_or_else(|| "not measured".to_string(), |(_, w)| w.clone())
    }
}

/// One layer of one workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Row {
    pub(crate) layer: Layer,
    /// All instances together.
    pub(crate) needed: f64,
    pub(crate) measured: Option<f64>,
    /// What measured it (`doctor: upload to nas:5201, median of 1 run`).
    pub(crate) source: String,
    /// measured ÷ needed − 1, in percent (negative: short).
    pub(crate) headroom_percent: Option<f64>,
    /// Instances this layer carries (measured ÷ one instance's need).
    pub(crate) fits: Option<f64>,
    /// `ok`, `short` or `not measured`.
    pub(crate) verdict: String,
}

/// The answer for one workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Answer {
    pub(crate) workload: Workload,
    pub(crate) rows: Vec<Row>,
    /// The layer that carries the fewest instances (measured layers only).
    pub(crate) limit: Option<Layer>,
    /// How many instances the whole path carries (the limit's `fits`).
    pub(crate) fits: Option<f64>,
    /// `carries plex-4k ×3` / `does not carry …` / `not all layers measured`.
    pub(crate) verdict: String,
    /// One sentence in the owner's words.
    pub(crate) summary: String,
}

/// Judge `w` against what was measured.
pub(crate) fn judge(w: &Workload, m: &Measured) -> Answer {
    let rows: Vec<Row> = w
        .needs
        .iter()
        .map(|(l, one)| row(*l, *one, w.count, m))
        .collect();
    let limit = rows
        .iter()
        .filter_map(|r| r.fits.map(|f| (f, r.layer)))
        .min_by(|a, b| a.0.total_cmp(&b.0));
    let all_measured = rows.iter().all(|r| r.measured.is_some());
    let short: Vec<&Row> = rows.iter().filter(|r| r.verdict == "short").collect();
    let verdict = if !short.is_empty() {
        format!("does not carry {}", w.label())
    } else if all_measured {
        format!("carries {}", w.label())
    } else {
        "not all layers measured".to_string()
    };
    Answer {
        summary: summary(w, &rows, limit),
        workload: w.clone(),
        limit: limit.map(|(_, l)| l),
        fits: limit.map(|(f, _)| f),
        verdict,
        rows,
    }
}

fn row(layer: Layer, one: f64, count: u32, m: &Measured) -> Row {
    let needed = one * f64::from(count);
    match m.get(layer) {
        Some((v, source)) => Row {
            layer,
            needed,
            measured: Some(v),
            source: source.to_string(),
            headroom_percent: Some((v / needed - 1.0) * 100.0),
            fits: Some(v / one),
            verdict: if v >= needed { "ok" } else { "short" }.into(),
        },
        None => Row {
            layer,
            needed,
            measured: None,
            source: m.why_missing(layer),
            headroom_percent: None,
            fits: None,
            verdict: "not measured".into(),
        },
    }
}

/// "plex-4k that fit per layer: the path to the client 1.1, the storage
/// (sequential read) 40; the path to the client is the limit: 1 fits (1.1),
/// 2 asked".
fn summary(w: &Workload, rows: &[Row], limit: Option<(f64, Layer)>) -> String {
    let Some((fits, layer)) = limit else {
        return format!("nothing measured that {} needs", w.name);
    };
    let what = |l: Layer| match l {
        Layer::Net => "the path to the client",
        Layer::DiskRead => "the storage (sequential read)",
        Layer::DiskRandread => "the storage (random 4 KiB reads)",
        Layer::Cpu => "the CPU",
    };
    let n = |f: f64| {
        if f >= 10.0 {
            format!("{}", f.floor())
        } else {
            format!("{:.1}", (f * 10.0).floor() / 10.0)
        }
    };
    let mut parts: Vec<String> = rows
        .iter()
        .filter_map(|r| r.fits.map(|f| format!("{} {}", what(r.layer), n(f))))
        .collect();
    parts.dedup();
    let head = format!("{} that fit per layer: {}", w.name, parts.join(", "));
    let asked = f64::from(w.count);
    let tail = if fits >= asked {
        format!("enough for {}", w.label())
    } else {
        let whole = fits.floor();
        format!(
            "{} is the limit: {} {} ({}), {} asked",
            what(layer),
            whole,
            if whole == 1.0 { "fits" } else { "fit" },
            n(fits),
            w.count
        )
    };
    format!("{head}; {tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(net: f64, cpu: Option<f64>) -> Measured {
        let mut m = Measured::default();
        m.values.push((Layer::Net, net, "test".into()));
        m.values.push((Layer::DiskRead, 200e6, "test".into()));
        match cpu {
            Some(c) => m.values.push((Layer::Cpu, c, "test".into())),
            None => m.missing.push((Layer::Cpu, "no CPU run".into())),
        }
        m
    }

    #[test]
    fn a_120_mbit_path_carries_one_4k_stream_not_two() {
        let m = measured(120e6, None);
        let one = judge(&Workload::parse("plex-4k").unwrap(), &m);
        assert_eq!(one.verdict, "carries plex-4k", "{one:?}");
        let two = judge(&Workload::parse("plex-4k:2").unwrap(), &m);
        assert_eq!(two.verdict, "does not carry plex-4k ×2");
        assert_eq!(two.limit, Some(Layer::Net));
        assert!(
            two.summary
                .contains("the path to the client is the limit: 1 fits (1.2), 2 asked"),
            "{}",
            two.summary
        );
        let net = &two.rows[0];
        assert!(
            (net.headroom_percent.unwrap() + 40.0).abs() < 1e-9,
            "{net:?}"
        );
    }

    #[test]
    fn the_cpu_limits_transcodes_and_an_unmeasured_layer_says_so() {
        let w = Workload::parse("plex-transcode-1080p:2").unwrap();
        let a = judge(&w, &measured(900e6, Some(1800.0)));
        assert_eq!(a.limit, Some(Layer::Cpu));
        assert_eq!(a.verdict, "does not carry plex-transcode-1080p ×2");
        let b = judge(&w, &measured(900e6, None));
        assert_eq!(b.verdict, "not all layers measured");
        assert_eq!(b.rows[2].source, "no CPU run");
    }
}
