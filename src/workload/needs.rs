//! What a workload needs from each layer: the named workloads of the guide
//! our users follow, in one table, and custom needs (`--need`).

use serde::{Deserialize, Serialize};

/// A layer of the path a workload runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Layer {
    /// Throughput from this host to the client (`--peer`), bit/s.
    Net,
    /// Sustained sequential read of the storage (`--dir`), bytes/s.
    DiskRead,
    /// 4 KiB random reads of the storage (`--dir`), IOPS.
    DiskRandread,
    /// sysbench-comparable CPU events/s, every core.
    Cpu,
}

impl Layer {
    pub(crate) const ALL: [Layer; 4] =
        [Layer::Net, Layer::DiskRead, Layer::DiskRandread, Layer::Cpu];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Layer::Net => "net",
            Layer::DiskRead => "disk-read",
            Layer::DiskRandread => "disk-randread",
            Layer::Cpu => "cpu",
        }
    }

    /// A value of this layer in its unit: `100 Mbit/s`, `50.0 MB/s`,
    /// `5000 IOPS`, `1500 events/s`.
    pub(crate) fn format(self, v: f64) -> String {
        match self {
            Layer::Net => crate::units::bps(v),
            Layer::DiskRead => format!("{:.1} MB/s", v / 1e6),
            Layer::DiskRandread => format!("{v:.0} IOPS"),
            Layer::Cpu => format!("{v:.0} events/s"),
        }
    }
}

/// One named workload: what one instance needs per layer.
pub(crate) struct Named {
    pub(crate) name: &'static str,
    /// What one instance is (for `--help` and the docs).
    #[allow(dead_code)]
    pub(crate) about: &'static str,
    pub(crate) needs: &'static [(Layer, f64)],
}

/// The named workloads. Sources, in `shared/seeds` (the home-lab
/// benchmarking guide): iperf3 from the Plex server to the client "should
/// be more than 50 Mbps for 1080p, 100 Mbps for 4K" (paraphrased); "Plex
/// transcoding: ~1500 events/s per stream (software transcode)"; "NFS
/// writes during backups: 110 MB/s". A stream read from disk needs what it
/// sends (100 Mbit/s = 12.5 MB/s); the guide's floor of 50 MB/s read for
/// the media volume is about the volume, not one stream, so it is not
/// multiplied. `vm-disk`'s 500 random 4 KiB reads/s per guest is our own
/// rule of thumb, not the guide's.
pub(crate) const NAMED: &[Named] = &[
    Named {
        name: "plex-4k",
        about: "one 4K stream played directly (no transcode)",
        needs: &[(Layer::Net, 100e6), (Layer::DiskRead, 12.5e6)],
    },
    Named {
        name: "plex-1080p",
        about: "one 1080p stream played directly",
        needs: &[(Layer::Net, 50e6), (Layer::DiskRead, 6.25e6)],
    },
    Named {
        name: "plex-transcode-1080p",
        about: "one 1080p stream transcoded in software",
        needs: &[
            (Layer::Net, 50e6),
            (Layer::DiskRead, 6.25e6),
            (Layer::Cpu, 1500.0),
        ],
    },
    Named {
        name: "nfs-backup",
        about: "a backup over NFS at the guide's 110 MB/s",
        needs: &[(Layer::Net, 880e6), (Layer::DiskRead, 110e6)],
    },
    Named {
        name: "vm-disk",
        about: "one VM's disk: random 4 KiB reads",
        needs: &[(Layer::DiskRandread, 500.0)],
    },
];

/// A workload as asked for: a named one times a count, or custom needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Workload {
    /// `plex-4k`, or `custom`.
    pub(crate) name: String,
    pub(crate) count: u32,
    /// What one instance needs, per layer.
    pub(crate) needs: Vec<(Layer, f64)>,
}

impl Workload {
    /// `plex-4k` or `plex-4k:3`.
    pub(crate) fn parse(spec: &str) -> Result<Workload, String> {
        let (name, count) = match spec.split_once(':') {
            Some((n, c)) => {
                let c: u32 = c
                    .parse()
                    .ok()
                    .filter(|c| (1..=1000).contains(c))
                    .ok_or_else(|| format!("{spec}: the count after ':' must be 1 to 1000"))?;
                (n, c)
            }
            None => (spec, 1),
        };
        let Some(w) = NAMED.iter().find(|w| w.name == name) else {
            let names: Vec<&str> = NAMED.iter().map(|w| w.name).collect();
            let near = crate::spelling::nearest(name, &names, 3);
            let hint = near
                .first()
                .map_or(String::new(), |n| format!(" (did you mean {n}?)"));
            return Err(format!(
                "{name}: no such workload{hint}; known: {} (or --need for your own)",
                names.join(", ")
            ));
        };
        Ok(Workload {
            name: w.name.into(),
            count,
            needs: w.needs.to_vec(),
        })
    }

    /// One spec as the CLI and the bus carry it: `plex-4k:3`, or
    /// `need:net=400M,cpu=3000` for `--need`.
    pub(crate) fn parse_spec(spec: &str) -> Result<Workload, String> {
        match spec.strip_prefix("need:") {
            Some(list) => Workload::parse_needs(list),
            None => Workload::parse(spec),
        }
    }

    /// Whether it needs `layer`.
    pub(crate) fn needs(&self, layer: Layer) -> bool {
        self.needs.iter().any(|(l, _)| *l == layer)
    }

    /// `net=400M,disk-read=100MB/s,disk-randread=5000iops,cpu=3000`.
    pub(crate) fn parse_needs(list: &str) -> Result<Workload, String> {
        let mut needs = Vec::new();
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| format!("{item}: expected LAYER=VALUE (net=400M, disk-read=100MB/s, disk-randread=5000iops, cpu=3000)"))?;
            let layer = Layer::ALL
                .into_iter()
                .find(|l| l.name() == k)
                .ok_or_else(|| {
                    format!("{k}: no such layer; allowed: net, disk-read, disk-randread, cpu")
                })?;
            let value = need_value(layer, v).map_err(|e| format!("{item}: {e}"))?;
            needs.retain(|(l, _)| *l != layer);
            needs.push((layer, value));
        }
        if needs.is_empty() {
            return Err("--need: nothing given; e.g. net=400M,cpu=3000".into());
        }
        Ok(Workload {
            name: "custom".into(),
            count: 1,
            needs,
        })
    }

    /// `plex-4k ×3`.
    pub(crate) fn label(&self) -> String {
        if self.count == 1 {
            self.name.clone()
        } else {
            format!("{} ×{}", self.name, self.count)
        }
    }
}

/// A rate in bit/s as the needs write it (`400M`, `1G`, `400Mbit/s`).
pub(crate) fn rate(v: &str) -> Result<f64, String> {
    need_value(Layer::Net, v)
}

/// A need's value in the layer's unit: net in bit/s (`400M`, `1G`,
/// `400Mbit/s`), disk-read in bytes/s (`100MB/s`, `100M`), disk-randread in
/// IOPS (`5000`, `5000iops`), cpu in events/s.
fn need_value(layer: Layer, v: &str) -> Result<f64, String> {
    let lower = v.trim().to_ascii_lowercase();
    let strip = |s: &str, tails: &[&str]| {
        tails
            .iter()
            .find_map(|t| s.strip_suffix(t))
            .unwrap_or(s)
            .to_string()
    };
    let num = match layer {
        Layer::Net => strip(&lower, &["bit/s", "bps", "b/s"]),
        Layer::DiskRead => strip(&lower, &["b/s", "/s"]),
        Layer::DiskRandread => strip(&lower, &["iops"]),
        Layer::Cpu => strip(&lower, &["events/s"]),
    };
    let (digits, factor) = match num.chars().last() {
        Some('k') => (&num[..num.len() - 1], 1e3),
        Some('m') => (&num[..num.len() - 1], 1e6),
        Some('g') => (&num[..num.len() - 1], 1e9),
        _ => (num.as_str(), 1.0),
    };
    let x: f64 = digits
        .trim()
        .parse()
        .map_err(|_| format!("{v:?} is not a number with an optional k, M or G"))?;
    if !(x.is_finite() && x > 0.0) {
        return Err(format!("{v:?}: must be more than 0"));
    }
    Ok(x * factor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_with_a_count() {
        let w = Workload::parse("plex-4k:3").unwrap();
        assert_eq!((w.name.as_str(), w.count), ("plex-4k", 3));
        assert_eq!(w.label(), "plex-4k ×3");
        let e = Workload::parse("plex4k").unwrap_err();
        assert!(e.contains("did you mean plex-4k?"), "{e}");
        assert!(
            Workload::parse("plex-4k:0")
                .unwrap_err()
                .contains("1 to 1000")
        );
    }

    #[test]
    fn custom_needs_in_each_layers_unit() {
        let w = Workload::parse_needs("net=400M,disk-read=100MB/s,disk-randread=5000iops,cpu=3000")
            .unwrap();
        assert_eq!(
            w.needs,
            vec![
                (Layer::Net, 400e6),
                (Layer::DiskRead, 100e6),
                (Layer::DiskRandread, 5000.0),
                (Layer::Cpu, 3000.0)
            ]
        );
        assert!(
            Workload::parse_needs("gpu=1")
                .unwrap_err()
                .contains("allowed: net")
        );
        assert!(
            Workload::parse_needs("net=fast")
                .unwrap_err()
                .contains("not a number")
        );
    }
}
