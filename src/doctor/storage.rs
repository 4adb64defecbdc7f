//! The NFS playbook from the users' write-ups: network first, then the
//! network filesystem against a local disk, then the mount options.
//!
//! Each `--dir` gets the dd test (`dd bs=1M conv=fdatasync`, then the read
//! back with the cache dropped: [`crate::bench::disk::seqdd`]). A network
//! filesystem (NFS, SMB) is compared with the local directories, and the
//! check says which layer limits it:
//! - `network`: the peer's measured throughput is about what the network
//!   filesystem delivers (it follows from the network);
//! - `mount-options`: rsize/wsize below 1 MiB, `sync`, an old protocol
//!   version, SMB encryption or `cache=none` (see [`super::mounts`]);
//! - `local-disk`: the local disk is no faster than the network filesystem;
//! - `server`: none of those: the server's disks or export (`sync` export).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::finding::{Finding, Outcome, Severity};
use super::inputs::{DdFigures, DirResult, Inputs, MountData};
use super::mounts;
use crate::bench::disk::{SeqDdConfig, run_seq_dd};
use crate::bench::progress::{Cancel, Progress, ProgressEvent};

/// Bytes written and read per `--dir` by default.
pub(crate) const DEFAULT_SIZE: u64 = 256 << 20;

/// Which layer limits a network filesystem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Layer {
    Network,
    MountOptions,
    LocalDisk,
    Server,
}

impl Layer {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Layer::Network => "network",
            Layer::MountOptions => "mount-options",
            Layer::LocalDisk => "local-disk",
            Layer::Server => "server",
        }
    }
}

/// Run the dd test in every directory (`size` bytes each; 0: none).
pub(crate) fn measure_dirs(
    dirs: &[String],
    size: u64,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Vec<DirResult> {
    if size == 0 {
        return Vec::new();
    }
    dirs.iter()
        .enumerate()
        .map(|(k, d)| {
            progress.report(ProgressEvent {
                fraction: 0.05,
                message: format!(
                    "{d}: sequential write (fdatasync) and read, {} MiB ({}/{})",
                    size >> 20,
                    k + 1,
                    dirs.len()
                ),
            });
            let cfg = SeqDdConfig {
                size,
                ..SeqDdConfig::new(d)
            };
            let measured = run_seq_dd(&cfg, &crate::bench::progress::NoProgress, cancel.clone())
                .map(|r| DdFigures {
                    bytes: r.size_bytes,
                    write_mb_s: r.write.mb_per_s,
                    fdatasync_s: r.write.fdatasync_s,
                    read_mb_s: r.read.mb_per_s,
                    filesystem: r.filesystem,
                    memory_backed: r.memory_backed,
                })
                .map_err(|e| format!("{d}: {e}"));
            DirResult {
                dir: d.clone(),
                measured,
            }
        })
        .collect()
}

/// NFS or SMB.
pub(crate) fn is_network_fs(fs_type: &str) -> bool {
    fs_type.starts_with("nfs") || matches!(fs_type, "cifs" | "smb3" | "smbfs")
}

fn mount_of<'a>(inp: &'a Inputs, dir: &str) -> Option<&'a MountData> {
    inp.mounts
        .iter()
        .filter_map(|m| m.as_ref().ok())
        .find(|m| m.dir == dir || Path::new(&m.dir) == Path::new(dir))
}

/// The peer's measured throughput in MB/s (the slower direction's median).
fn network_mb_s(inp: &Inputs) -> Option<f64> {
    let t = inp.peer.as_ref()?.throughput.as_ref().ok()?;
    let up = t.upload.median();
    let down = t.download.median();
    let bps = match (up > 0.0, down > 0.0) {
        (true, true) => up.min(down),
        (true, false) => up,
        (false, true) => down,
        _ => return None,
    };
    Some(bps / 8.0 / 1e6)
}

/// Decide the limiting layer of a network filesystem measured at `net`
/// (the slower of write and read, MB/s): the network when the filesystem
/// reaches 70% of what the peer measured (RPC headers, commits and the
/// closing fdatasync cost the rest); between 50% and 70% the network still,
/// unless the mount options are at fault; then the options, the local disk
/// when it is no faster, else the server.
pub(crate) fn limiting_layer(
    net: f64,
    network: Option<f64>,
    option_problems: &[String],
    local: Option<f64>,
) -> Layer {
    let share = network.filter(|n| *n > 0.0).map(|n| net / n);
    if share.is_some_and(|r| r >= 0.7) {
        Layer::Network
    } else if !option_problems.is_empty() {
        Layer::MountOptions
    } else if share.is_some_and(|r| r >= 0.5) {
        Layer::Network
    } else if local.is_some_and(|l| l <= net * 1.1) {
        Layer::LocalDisk
    } else {
        Layer::Server
    }
}

fn fmt_mb(v: f64) -> String {
    format!("{v:.1} MB/s")
}

/// One measured directory: its path, its figures and its mount (when known).
type Measured<'a> = (&'a str, &'a DdFigures, Option<&'a MountData>);

pub(crate) fn check(inp: &Inputs, out: &mut Outcome) {
    let figures = measured(inp, out);
    for (dir, f, m) in &figures {
        out.pass(
            "storage",
            None,
            format!(
                "{dir} ({}): write {} (with fdatasync), read {} (cache dropped), {} MiB",
                fs_of(*m, f),
                fmt_mb(f.write_mb_s),
                fmt_mb(f.read_mb_s),
                f.bytes >> 20
            ),
        );
    }
    let local = reference(&figures);
    let network = network_mb_s(inp);
    for (dir, f, m) in figures
        .iter()
        .filter(|(_, f, m)| is_network_fs(&fs_of(*m, f)))
    {
        out.find(layer_finding((dir, f, *m), local, network));
    }
}

/// The directories that were measured (a failed one is skipped, saying why).
fn measured<'a>(inp: &'a Inputs, out: &mut Outcome) -> Vec<Measured<'a>> {
    inp.storage
        .iter()
        .filter_map(|r| match &r.measured {
            Ok(f) => Some((r.dir.as_str(), f, mount_of(inp, &r.dir))),
            Err(e) => {
                out.skip("storage", None, e.clone());
                None
            }
        })
        .collect()
}

/// The filesystem type: the mount's, else the one the dd test saw.
fn fs_of(m: Option<&MountData>, f: &DdFigures) -> String {
    m.map_or(f.filesystem.clone(), |m| m.fs_type.clone())
}

/// The slower of write and read, MB/s.
fn speed(f: &DdFigures) -> f64 {
    f.write_mb_s.min(f.read_mb_s)
}

/// The reference: the fastest local directory on a disk; a memory-backed
/// one (tmpfs) only when no other was given (the evidence says so).
fn reference<'f, 'a>(figures: &'f [Measured<'a>]) -> Option<&'f Measured<'a>> {
    let locals: Vec<&Measured<'a>> = figures
        .iter()
        .filter(|(_, f, m)| !is_network_fs(&fs_of(*m, f)))
        .collect();
    locals
        .iter()
        .filter(|(_, f, _)| !f.memory_backed)
        .max_by(|a, b| speed(a.1).total_cmp(&speed(b.1)))
        .or_else(|| {
            locals
                .iter()
                .max_by(|a, b| speed(a.1).total_cmp(&speed(b.1)))
        })
        .copied()
}

/// Which layer limits a network filesystem, with the figures that say so.
fn layer_finding(
    (dir, f, m): Measured<'_>,
    local: Option<&Measured<'_>>,
    network: Option<f64>,
) -> Finding {
    let fs = fs_of(m, f);
    let problems = m.map(mounts::option_problems).unwrap_or_default();
    let net = f.write_mb_s.min(f.read_mb_s);
    let local_v = local.map(|(_, l, _)| speed(l));
    let layer = limiting_layer(net, network, &problems, local_v);
    let mut fnd = Finding::new(
        "storage-layer",
        if local_v.is_some_and(|l| net < 0.5 * l) {
            Severity::Warning
        } else {
            Severity::Info
        },
        None,
        format!("{dir} ({fs}): limited by {}", layer_words(layer)),
    )
    .evidence("limit", layer.name())
    .evidence(&format!("{dir} write"), fmt_mb(f.write_mb_s))
    .evidence(&format!("{dir} read"), fmt_mb(f.read_mb_s));
    if let Some((ldir, l, _)) = local {
        fnd = local_evidence(fnd, f, ldir, l);
    }
    match network {
        Some(n) => fnd = fnd.evidence("network to the peer (slower direction)", fmt_mb(n)),
        None => {
            fnd = fnd.evidence(
                "network to the peer",
                "not measured (give --peer NAS with a benchmark server there)",
            )
        }
    }
    for p in &problems {
        fnd = fnd.evidence("mount option", p);
    }
    let (why, fix) = advice(layer, dir, m.map(|m| m.mount_point.as_str()));
    fnd = fnd.why(&why);
    for l in fix {
        fnd = fnd.fix(l);
    }
    fnd
}

/// The local reference `ldir` (figures `l`) beside the network filesystem's `f`.
fn local_evidence(fnd: Finding, f: &DdFigures, ldir: &str, l: &DdFigures) -> Finding {
    let kind = if l.memory_backed {
        "local, memory-backed: no disk was given"
    } else {
        "local"
    };
    fnd.evidence(&format!("{ldir} write ({kind})"), fmt_mb(l.write_mb_s))
        .evidence(&format!("{ldir} read ({kind})"), fmt_mb(l.read_mb_s))
        .evidence(
            "network fs / local",
            format!(
                "write {:.1}%, read {:.1}%",
                100.0 * f.write_mb_s / l.write_mb_s.max(1e-9),
                100.0 * f.read_mb_s / l.read_mb_s.max(1e-9)
            ),
        )
}

fn layer_words(l: Layer) -> &'static str {
    match l {
        Layer::Network => "the network",
        Layer::MountOptions => "its mount options",
        Layer::LocalDisk => "the local disk",
        Layer::Server => {
            "the server (its disks or export), not the network, the options or the local disk"
        }
    }
}

fn advice(l: Layer, dir: &str, mount_point: Option<&str>) -> (String, Vec<String>) {
    let mp = mount_point.unwrap_or(dir);
    match l {
        Layer::Network => (
            "the network filesystem delivers about what the network to the peer carries: its figure follows from the network, so fix the network first".into(),
            vec![
                "# see the link, MTU and TCP findings for the interface towards the peer".into(),
                "hlctl tune IFACE --peer PEER".into(),
            ],
        ),
        Layer::MountOptions => (
            "the network is faster than what the mount delivers, and its options cap it".into(),
            vec![format!("# see the mount option findings for {mp}")],
        ),
        Layer::LocalDisk => (
            "the local disk is no faster than the network filesystem: copies between them are bound by the local disk".into(),
            vec![format!("hlctl bench disk --dir {dir}  # the full disk benchmark")],
        ),
        Layer::Server => (
            "the network (or, unmeasured, not excluded) and the mount options are not the limit: the server's disks, its export options (`sync` export) or its CPU are".into(),
            vec![
                "# measure on the server itself: hlctl doctor --dir EXPORTED_PATH".into(),
                "# check the export: `async` in /etc/exports (safe only with a UPS)".into(),
            ],
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::inputs::{PeerData, Throughput};
    use crate::path::Peer;
    use crate::path::throughput::Series;

    fn figures(w: f64, r: f64) -> DdFigures {
        DdFigures {
            bytes: 256 << 20,
            write_mb_s: w,
            fdatasync_s: Some(0.1),
            read_mb_s: r,
            filesystem: "x".into(),
            memory_backed: false,
        }
    }

    fn inputs(nfs_opts: &str, nfs: (f64, f64), local: (f64, f64)) -> Inputs {
        let info = format!(
            "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n\
             40 22 0:45 / /mnt/nas rw,relatime - nfs4 nas:/v {nfs_opts}\n"
        );
        let all = crate::mounted::parse(&info);
        let mut inp = Inputs::default();
        for d in ["/mnt/nas", "/srv/local"] {
            inp.mounts
                .push(Ok(crate::mounted::find(&all, Path::new(d)).unwrap()));
        }
        inp.storage = vec![
            DirResult {
                dir: "/mnt/nas".into(),
                measured: Ok(figures(nfs.0, nfs.1)),
            },
            DirResult {
                dir: "/srv/local".into(),
                measured: Ok(figures(local.0, local.1)),
            },
        ];
        inp
    }

    fn with_network(mut inp: Inputs, mbit: f64) -> Inputs {
        let s = Series {
            samples: vec![crate::path::throughput::Sample {
                bps: mbit * 1e6,
                ..Default::default()
            }],
        };
        inp.peer = Some(PeerData {
            peer: Peer::parse("nas").unwrap(),
            interface: None,
            rtt: Err("-".into()),
            pmtu: Err("-".into()),
            throughput: Ok(Throughput {
                upload: s.clone(),
                download: s,
                method: "test".into(),
            }),
        });
        inp
    }

    fn layer(inp: &Inputs) -> (String, Severity, String) {
        let mut out = Outcome::default();
        check(inp, &mut out);
        assert_eq!(
            out.passed.iter().filter(|c| c.check == "storage").count(),
            2
        );
        let f = out
            .findings
            .iter()
            .find(|f| f.id == "storage-layer")
            .expect("a storage-layer finding");
        let limit = f.evidence.iter().find(|e| e.name == "limit").unwrap();
        (limit.value.clone(), f.severity, f.title.clone())
    }

    const GOOD: &str = "rw,vers=4.2,rsize=1048576,wsize=1048576,proto=tcp";

    #[test]
    fn the_seed_case_network_then_options_then_server() {
        // 100 Mb/s link: NFS at 11 MB/s follows the network.
        let inp = with_network(inputs(GOOD, (11.0, 11.5), (400.0, 500.0)), 94.0);
        let (l, sev, title) = layer(&inp);
        assert_eq!((l.as_str(), sev), ("network", Severity::Warning), "{title}");
        // Gigabit network, 1 MiB blocks, async: the server is left.
        let inp = with_network(inputs(GOOD, (40.0, 60.0), (400.0, 500.0)), 940.0);
        assert_eq!(layer(&inp).0, "server");
        // The same with sync and 128 KiB blocks: the options.
        let inp = with_network(
            inputs(
                "rw,sync,vers=4.2,rsize=131072,wsize=131072",
                (40.0, 60.0),
                (400.0, 500.0),
            ),
            940.0,
        );
        assert_eq!(layer(&inp).0, "mount-options");
        // 60% of a slow network: the network, unless the options are at fault.
        assert_eq!(
            limiting_layer(6.0, Some(10.0), &[], Some(400.0)),
            Layer::Network
        );
        let bad = ["sync".to_string()];
        assert_eq!(
            limiting_layer(6.0, Some(10.0), &bad, Some(400.0)),
            Layer::MountOptions
        );
        assert_eq!(
            limiting_layer(4.0, Some(10.0), &[], Some(400.0)),
            Layer::Server
        );
    }

    #[test]
    fn a_slow_local_disk_is_named() {
        let inp = inputs(GOOD, (100.0, 110.0), (60.0, 90.0));
        let (l, sev, _) = layer(&inp);
        assert_eq!((l.as_str(), sev), ("local-disk", Severity::Info));
    }

    #[test]
    fn no_network_fs_no_layer_finding() {
        let mut inp = inputs(GOOD, (1.0, 1.0), (60.0, 90.0));
        inp.storage.remove(0);
        let mut out = Outcome::default();
        check(&inp, &mut out);
        assert!(out.findings.is_empty());
        assert_eq!(out.passed.len(), 1);
    }
}
