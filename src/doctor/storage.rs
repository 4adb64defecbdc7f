//! The NFS playbook from the users' write-ups: network first, then the
//! network filesystem against a local disk, then the mount options.
//!
//! Each `--dir` gets the dd test (`dd bs=1M conv=fdatasync`, then the read
//! back with the cache dropped: [`crate::bench::disk::seqdd`]). A network
//! filesystem (NFS, SMB) is judged by the same rules as `bench file`'s
//! transfers ([`crate::protocol::verdict`]), on its slower direction: the
//! network (raw TCP to the peer carries at most ~15 % more), the local disk
//! (the fastest local `--dir`: a copy stops there), the encryption, the
//! mount's settings (NFS `sync`, blocks below 1 MiB, no `nconnect` where the
//! network has room, CIFS `cache=none`), the server's own disk when
//! `--prometheus` has its last check's figures, else elsewhere (the
//! server's disks, its export, its CPU). The finding's `limit` is the
//! verdict's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::finding::{Finding, Outcome, Severity};
use super::inputs::{DdFigures, DirResult, Inputs, MountData};
use super::mounts;
use crate::bench::disk::{SeqDdConfig, run_seq_dd};
use crate::bench::file::{Direction, MountFacts};
use crate::bench::progress::{Cancel, Progress, ProgressEvent};
use crate::protocol::fleet::HostFigures;
use crate::protocol::verdict::{Inputs as VerdictInputs, Limit, Verdict, decide};
use crate::protocol::{Beside, cipher, settings};

/// Bytes written and read per `--dir` by default.
pub(crate) const DEFAULT_SIZE: u64 = 256 << 20;

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

/// Whether a measured `--dir` is on an SMB mount that seals (encrypts):
/// then this CPU's AEADs are measured for the verdict.
pub(crate) fn any_sealed(inp: &Inputs) -> bool {
    inp.storage
        .iter()
        .filter(|r| r.measured.is_ok())
        .filter_map(|r| mount_of(inp, &r.dir))
        .any(|m| cipher::of_mount(&MountFacts::of(m)).is_some_and(|e| e.aead.is_some()))
}

/// Each measured network mount's server's own figures from `fleet`, by the
/// server as the mount names it (one query per server). Only measured
/// mounts: a doctor that may not measure (no run-benchmark) asks nothing
/// of the network either.
pub(crate) fn servers_in_fleet(
    inp: &Inputs,
    fleet: &crate::matrix::Fleet,
) -> BTreeMap<String, Beside<HostFigures>> {
    let servers: BTreeSet<String> = inp
        .storage
        .iter()
        .filter(|r| r.measured.is_ok())
        .filter_map(|r| mount_of(inp, &r.dir))
        .filter(|m| is_network_fs(&m.fs_type))
        .filter_map(|m| MountFacts::of(m).server)
        .collect();
    servers
        .into_iter()
        .map(|s| {
            let address = crate::path::route::resolve(&s).map(|a| a.to_string());
            let figures = fleet.server(Some(&s), address.as_deref());
            (s, figures)
        })
        .collect()
}

/// The peer's measured throughput, bit/s: (upload, download) medians.
fn network_bps(inp: &Inputs) -> Option<(f64, f64)> {
    let t = inp.peer.as_ref()?.throughput.as_ref().ok()?;
    let (up, down) = (t.upload.median(), t.download.median());
    (up > 0.0 || down > 0.0).then_some((up, down))
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
    for (dir, f, m) in figures
        .iter()
        .filter(|(_, f, m)| is_network_fs(&fs_of(*m, f)))
    {
        out.find(layer_finding((dir, f, *m), local, inp));
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

/// The verdict on a network filesystem's slower direction: the same
/// inputs a `bench file` transfer gives, from the dd figures, the fastest
/// local directory, the peer's raw TCP and the mount's options.
fn verdict((dir, f, m): Measured<'_>, local: Option<&Measured<'_>>, inp: &Inputs) -> Verdict {
    let network = network_bps(inp);
    let facts = m.map(MountFacts::of);
    let server = facts.as_ref().and_then(|m| m.server.clone());
    let fleet = server
        .as_ref()
        .and_then(|s| inp.fleet.get(s))
        .and_then(|b| b.measured())
        .cloned();
    let direction = if f.write_mb_s <= f.read_mb_s {
        Direction::Write
    } else {
        Direction::Read
    };
    let bytes_per_second = speed(f) * 1e6;
    // A direction that was not measured (0) is no figure.
    let network_bps = network
        .map(|(up, down)| match direction {
            Direction::Write => up,
            Direction::Read => down,
        })
        .filter(|n| *n > 0.0);
    let room = network_bps.is_some_and(|n| n > 2.0 * bytes_per_second * 8.0);
    decide(&VerdictInputs {
        protocol: fs_of(m, f).to_uppercase(),
        direction: Some(direction),
        bytes_per_second,
        network_bps,
        // A write copies from the local disk (its read), a read to it.
        disk: local.map(|(ldir, l, _)| {
            let mb = match direction {
                Direction::Write => l.read_mb_s,
                Direction::Read => l.write_mb_s,
            };
            (mb * 1e6, ldir.to_string())
        }),
        client: None,
        kernel: Vec::new(),
        encryption: facts.as_ref().and_then(cipher::of_mount),
        crypto: inp.crypto.clone(),
        settings: facts
            .as_ref()
            .map(|m| settings::costly(m, direction, room))
            .unwrap_or_default(),
        server,
        fleet,
        place: dir.to_string(),
        local: false,
    })
}

/// Which layer limits a network filesystem, with the figures that say so.
fn layer_finding((dir, f, m): Measured<'_>, local: Option<&Measured<'_>>, inp: &Inputs) -> Finding {
    let fs = fs_of(m, f);
    let problems = m.map(mounts::option_problems).unwrap_or_default();
    let v = verdict((dir, f, m), local, inp);
    let local_v = local.map(|(_, l, _)| speed(l));
    let mut fnd = Finding::new(
        "storage-layer",
        if local_v.is_some_and(|l| speed(f) < 0.5 * l) {
            Severity::Warning
        } else {
            Severity::Info
        },
        None,
        format!("{dir} ({fs}): limited by {}", layer_words(v.limit)),
    )
    .evidence("limit", limit_name(v.limit))
    .evidence("verdict", &v.sentence)
    .evidence(&format!("{dir} write"), fmt_mb(f.write_mb_s))
    .evidence(&format!("{dir} read"), fmt_mb(f.read_mb_s));
    if let Some((ldir, l, _)) = local {
        fnd = local_evidence(fnd, f, ldir, l);
    }
    match network_bps(inp) {
        Some((up, down)) => {
            let measured = [up, down].into_iter().filter(|v| *v > 0.0);
            let slower = measured.reduce(f64::min).unwrap_or(0.0);
            fnd = fnd.evidence(
                "network to the peer (slower direction)",
                fmt_mb(slower / 8.0 / 1e6),
            )
        }
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
    let (why, fix) = advice(v.limit, dir, m.map(|m| m.mount_point.as_str()));
    fnd = fnd.why(&why);
    for l in fix {
        fnd = fnd.fix(l);
    }
    fnd
}

/// The limit as the verdict's JSON names it (`network`, `local-disk`,
/// `encryption`, `client-cpu`, `settings`, `elsewhere`).
fn limit_name(l: Limit) -> String {
    serde_json::to_value(l)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
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

fn layer_words(l: Limit) -> &'static str {
    match l {
        Limit::Network => "the network",
        Limit::Settings => "its mount options",
        Limit::LocalDisk => "the local disk",
        Limit::Encryption => "its encryption",
        Limit::ClientCpu => "this host's CPU",
        Limit::ServerDisk => "the server's disk, as its own last check measured it",
        Limit::Elsewhere => {
            "the server (its disks, export or CPU), not the network, the options or the local disk"
        }
    }
}

fn advice(l: Limit, dir: &str, mount_point: Option<&str>) -> (String, Vec<String>) {
    let mp = mount_point.unwrap_or(dir);
    match l {
        Limit::Network => (
            "the network filesystem delivers about what the network to the peer carries: its figure follows from the network, so fix the network first".into(),
            vec![
                "# see the link, MTU and TCP findings for the interface towards the peer".into(),
                "hlctl tune IFACE --peer PEER".into(),
            ],
        ),
        Limit::Settings => (
            "the network is faster than what the mount delivers, and its options cap it".into(),
            vec![format!("# see the mount option findings for {mp}")],
        ),
        Limit::LocalDisk => (
            "the local disk is no faster than the network filesystem: copies between them are bound by the local disk".into(),
            vec![format!("hlctl bench disk --dir {dir}  # the full disk benchmark")],
        ),
        Limit::Encryption | Limit::ClientCpu => (
            "this host's CPU, sealing or moving the data, is what the transfer waits for".into(),
            vec![format!("hlctl bench file --dir {dir}  # the per-core encryption figures beside the transfer")],
        ),
        Limit::ServerDisk => (
            "the server's own disk, as the fleet has it from its last check, is no faster than what the mount delivers: a copy of a file the server does not hold in memory stops there".into(),
            vec!["# a faster disk or pool on the server, or the files on one (the verdict names the server and its directory)".into()],
        ),
        Limit::Elsewhere => (
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
    use crate::bench::crypto::CryptoFigure;
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

    /// The storage-layer finding `check` makes of `inp` (both dirs passed).
    fn storage_layer(inp: &Inputs) -> Finding {
        let mut out = Outcome::default();
        check(inp, &mut out);
        assert_eq!(
            out.passed.iter().filter(|c| c.check == "storage").count(),
            2
        );
        out.findings
            .into_iter()
            .find(|f| f.id == "storage-layer")
            .expect("a storage-layer finding")
    }

    /// The value of the finding's evidence `name`.
    fn evidence(f: &Finding, name: &str) -> String {
        let e = f.evidence.iter().find(|e| e.name == name);
        e.unwrap_or_else(|| panic!("no {name} in {f:?}"))
            .value
            .clone()
    }

    fn layer(inp: &Inputs) -> (String, Severity, String) {
        let f = storage_layer(inp);
        (evidence(&f, "limit"), f.severity, f.title.clone())
    }

    const GOOD: &str = "rw,vers=4.2,rsize=1048576,wsize=1048576,proto=tcp";

    /// The write-ups' cases, judged by `bench file`'s rules.
    #[test]
    fn the_seed_case_network_then_options_then_elsewhere() {
        // 100 Mb/s link: NFS at 11 MB/s (88 Mbit/s of 94) follows the network.
        let inp = with_network(inputs(GOOD, (11.0, 11.5), (400.0, 500.0)), 94.0);
        let (l, sev, title) = layer(&inp);
        assert_eq!((l.as_str(), sev), ("network", Severity::Warning), "{title}");
        // Gigabit network, 1 MiB blocks, async, one connection where the
        // network has room for more: the settings (no nconnect).
        let inp = with_network(inputs(GOOD, (40.0, 60.0), (400.0, 500.0)), 940.0);
        assert_eq!(layer(&inp).0, "settings");
        // With nconnect too: nothing here holds it, so the server.
        let nconnect = format!("{GOOD},nconnect=4");
        let inp = with_network(inputs(&nconnect, (40.0, 60.0), (400.0, 500.0)), 940.0);
        let (l, _, title) = layer(&inp);
        assert_eq!(l, "elsewhere");
        assert!(title.ends_with("limited by the server (its disks, export or CPU), not the network, the options or the local disk"), "{title}");
        // sync and 128 KiB blocks: the options.
        let inp = with_network(
            inputs(
                "rw,sync,vers=4.2,rsize=131072,wsize=131072,nconnect=4",
                (40.0, 60.0),
                (400.0, 500.0),
            ),
            940.0,
        );
        assert_eq!(layer(&inp).0, "settings");
        // 60 % of a slow network is not the network's figure any more.
        let inp = with_network(inputs(&nconnect, (6.0, 7.0), (400.0, 500.0)), 80.0);
        assert_eq!(layer(&inp).0, "elsewhere");
    }

    /// The mount's server (`nas`) as the fleet has it: its disk writes no
    /// faster than the mount does, so the server's disk is named, with its
    /// own figures; a server the fleet skipped leaves the verdict as it was.
    #[test]
    fn the_servers_disk_from_the_fleet_is_named_for_a_mount() {
        use crate::protocol::fleet::HostDisk;
        let nconnect = format!("{GOOD},nconnect=4");
        let mut inp = with_network(inputs(&nconnect, (40.0, 60.0), (400.0, 500.0)), 940.0);
        let nas = HostFigures {
            host: "nas".into(),
            prometheus: "http://prometheus:9090".into(),
            disks: vec![HostDisk {
                dir: "/tank".into(),
                pattern: "seq-write".into(),
                bytes_per_second: 42e6,
            }],
            cpu: Vec::new(),
        };
        inp.fleet.insert(
            "nas".into(),
            Beside::Skipped {
                why: "no host known by nas".into(),
            },
        );
        assert_eq!(layer(&inp).0, "elsewhere");
        inp.fleet.insert("nas".into(), Beside::Measured(nas));
        let (l, _, title) = layer(&inp);
        assert_eq!(l, "server-disk", "{title}");
        assert!(
            title.contains("the server's disk, as its own last check measured it"),
            "{title}"
        );
        let said = evidence(&storage_layer(&inp), "verdict");
        assert!(
            said.contains("nas's last check, in the fleet's Prometheus: its fastest directory /tank writes 42 MB/s"),
            "{said}"
        );
    }

    /// A direction the peer could not measure (0) names nothing: with the
    /// upload failed, a write is not "held by the network".
    #[test]
    fn an_unmeasured_direction_is_no_network_figure() {
        let nconnect = format!("{GOOD},nconnect=4");
        let mut inp = with_network(inputs(&nconnect, (40.0, 60.0), (400.0, 500.0)), 940.0);
        if let Some(p) = inp.peer.as_mut()
            && let Ok(t) = p.throughput.as_mut()
        {
            t.upload = Series::default();
        }
        assert_eq!(layer(&inp).0, "elsewhere");
    }

    /// The finding carries the verdict's own sentence, as `bench file`
    /// says it.
    #[test]
    fn the_finding_says_the_verdicts_sentence() {
        let inp = with_network(inputs(GOOD, (11.0, 11.5), (400.0, 500.0)), 94.0);
        let v = evidence(&storage_layer(&inp), "verdict");
        assert!(
            v.starts_with(
                "NFS4 write 11 MB/s: the network holds it (raw TCP to the same host carries"
            ),
            "{v}"
        );
    }

    /// A sealed SMB3.0 mount at more than half of what this CPU seals with
    /// AES-128-CCM on one core: its encryption, as bench file says it; the
    /// mount is found sealed (so doctor measures the AEADs first).
    #[test]
    fn a_sealed_smb_mount_near_the_cpus_ccm_figure_is_held_by_encryption() {
        let info = "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n\
                    41 22 0:46 / /mnt/smb rw,relatime - cifs //nas/media rw,vers=3.0,seal,rsize=4194304,wsize=4194304\n";
        let all = crate::mounted::parse(info);
        let mut inp = Inputs::default();
        for d in ["/mnt/smb", "/srv/local"] {
            inp.mounts
                .push(Ok(crate::mounted::find(&all, Path::new(d)).unwrap()));
        }
        inp.storage = vec![
            DirResult {
                dir: "/mnt/smb".into(),
                measured: Ok(figures(150.0, 176.0)),
            },
            DirResult {
                dir: "/srv/local".into(),
                measured: Ok(figures(400.0, 500.0)),
            },
        ];
        assert!(any_sealed(&inp));
        inp = with_network(inp, 9300.0);
        inp.crypto = vec![CryptoFigure {
            aead: crate::bench::crypto::Aead::Aes128Ccm,
            bytes: 1 << 30,
            seconds: 1.0,
            gbit_per_s: 1.4,
        }];
        let (l, _, title) = layer(&inp);
        assert_eq!(l, "encryption", "{title}");
        assert!(title.ends_with("limited by its encryption"), "{title}");
        let mut plain = inputs(GOOD, (40.0, 60.0), (400.0, 500.0));
        plain.crypto = Vec::new();
        assert!(!any_sealed(&plain));
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
