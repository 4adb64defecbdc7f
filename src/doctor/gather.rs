//! Read everything the checks need: two snapshots of each interface a
//! sample interval apart, the sysctls, and towards the peer the round-trip
//! time, the path MTU and (when a benchmark server answers) the throughput.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::inputs::{CpuData, IfaceSample, Inputs, PeerData, Rtt, Throughput};
use super::{DoctorError, Options, cpu, mounts, stack, storage};
use crate::bench::progress::{Cancel, Progress, ProgressEvent};
use crate::nic::model::Interface;
use crate::nic::netlink::Netlink;
use crate::nic::read;
use crate::path::icmp::Pinger;
use crate::path::throughput::{self, Direction, Measure};
use crate::path::{Peer, pmtu, route, rtt};
use crate::paths::Paths;
use crate::sysctl::{keys, procfs};

fn step(progress: &dyn Progress, fraction: f64, message: &str) {
    progress.report(ProgressEvent {
        fraction,
        message: message.to_string(),
    });
}

/// Which interfaces to look at when none are named: the one towards the peer,
/// else every physical NIC that is up, else every interface that is up.
fn choose(all: &[Interface], peer_iface: Option<&str>) -> Vec<String> {
    if let Some(p) = peer_iface
        && p != "lo"
    {
        return vec![p.to_string()];
    }
    let up = |i: &&Interface| i.admin_up && i.name != "lo";
    let phys: Vec<String> = all
        .iter()
        .filter(up)
        .filter(|i| i.physical)
        .map(|i| i.name.clone())
        .collect();
    if !phys.is_empty() {
        return phys;
    }
    all.iter().filter(up).map(|i| i.name.clone()).collect()
}

pub(crate) fn sysctls(paths: &Paths) -> BTreeMap<String, String> {
    keys::TUNING_SET
        .iter()
        .filter_map(|k| {
            procfs::read(&paths.proc_sys, k.name)
                .ok()
                .flatten()
                .map(|v| (k.name.to_string(), v))
        })
        .collect()
}

/// Round-trip time: the TCP handshake to the peer's port, else ICMP echo.
pub(crate) fn measure_rtt(peer: &Peer) -> Result<Rtt, String> {
    let addr = peer.resolve().map_err(|e| format!("{}: {e}", peer.host))?;
    match rtt::min_connect_rtt(addr, 5, Duration::from_secs(2)) {
        Ok(d) => Ok(Rtt {
            ms: d.as_secs_f64() * 1000.0,
            source: format!("tcp handshake to {}", peer.label()),
        }),
        Err(port_err) => {
            let mut p = Pinger::new(addr.ip()).map_err(|e| {
                format!(
                    "port {} does not answer ({port_err}) and ICMP echo is not available ({e})",
                    peer.port
                )
            })?;
            let best = (0..5)
                .filter_map(|_| p.echo(64, Duration::from_secs(1)).ok().flatten())
                .min()
                .ok_or_else(|| {
                    format!(
                        "port {} does not answer ({port_err}) nor does ICMP echo",
                        peer.port
                    )
                })?;
            Ok(Rtt {
                ms: best.as_secs_f64() * 1000.0,
                source: "icmp echo".into(),
            })
        }
    }
}

fn peer_data(
    peer: &Peer,
    iface: Option<&Interface>,
    opts: &Options,
    measure: Option<&dyn Measure>,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> PeerData {
    step(progress, 0.3, "round-trip time to the peer");
    let rtt = measure_rtt(peer);
    step(progress, 0.4, "path MTU (don't-fragment probes)");
    let pmtu = match (peer.ip(), iface) {
        (Err(e), _) => Err(format!("{}: {e}", peer.host)),
        (_, None) => Err("the interface towards the peer is unknown".into()),
        (Ok(ip), Some(i)) => pmtu::probe(ip, i.mtu, Duration::from_millis(250))
            .map_err(|e| format!("don't-fragment probes: {e}")),
    };
    let throughput = match measure {
        // The caller measures throughput itself (the tuner, before and after each change).
        None => Err("not measured by the doctor in this run".to_string()),
        Some(m) => {
            let addr = peer.resolve();
            if !addr
                .as_ref()
                .is_ok_and(|a| rtt::port_answers(*a, Duration::from_secs(2)))
            {
                Err(format!(
                    "no benchmark server answers at {} (start `hlctl serve` or `iperf3 -s` there)",
                    peer.label()
                ))
            } else {
                step(
                    progress,
                    0.5,
                    &format!("throughput to {} ({})", peer.label(), m.describe()),
                );
                throughput::series(m, opts.runs, &Direction::BOTH, progress, cancel, |d, i| {
                    step(
                        progress,
                        0.5 + 0.4 * (i as f64 / opts.runs.max(1) as f64),
                        &format!("{d} run {}", i + 1),
                    );
                })
                .map(|(upload, download)| Throughput {
                    upload,
                    download,
                    method: m.describe(),
                })
                .map_err(|e| format!("throughput: {e}"))
            }
        }
    };
    PeerData {
        peer: peer.clone(),
        interface: iface.map(|i| i.name.clone()),
        rtt,
        pmtu,
        throughput,
    }
}

/// Governors, and throttling seen during a short stress of every CPU.
fn cpu_under_stress(opts: &Options, progress: &dyn Progress, cancel: &Cancel) -> CpuData {
    use crate::bench::stress::verdict::Verdict;
    use crate::bench::stress::{self, StressConfig};
    let mut d = cpu::read(std::path::Path::new("/sys/devices/system/cpu"));
    if opts.stress.is_zero() {
        d.stress_skipped = Some("skipped (--stress 0)".into());
        return d;
    }
    step(progress, 0.05, "short CPU stress (throttling)");
    let cfg = StressConfig {
        time: opts.stress,
        vm_workers: 0,
        interval: Duration::from_millis(500),
        ..StressConfig::new()
    };
    match stress::run(&cfg, &crate::bench::progress::NoProgress, cancel.clone()) {
        Err(e) => d.stress_skipped = Some(format!("stress: {e}")),
        Ok(r) => match (r.verdict, r.throttle_delta) {
            (Verdict::NotObservable, _) | (_, None) => {
                d.stress_skipped = Some(format!(
                    "throttling is not observable here: {}",
                    if r.reasons.is_empty() {
                        "no thermal_throttle counters".to_string()
                    } else {
                        r.reasons.join("; ")
                    }
                ));
            }
            (_, Some(t)) => {
                d.throttle_before = Some(0);
                d.throttle_after = Some(t.core_count + t.package_count);
                d.freq_during_stress_khz = r
                    .frequency_mhz
                    .as_ref()
                    .and_then(|f| f.min)
                    .map(|m| (m * 1000.0) as u64);
            }
        },
    }
    d
}

/// The interfaces to examine, read once: those asked for (else the one
/// towards the peer, or the physical ones that are up), the one towards the
/// peer (its link speed sets the BDP), and every port of a bridge or bond
/// among them (a stack is examined whole).
fn first_sample(
    nl: &mut Netlink,
    opts: &Options,
    peer_iface: Option<&str>,
) -> Result<Vec<Interface>, DoctorError> {
    let mut names = if opts.interfaces.is_empty() {
        let all = read::interfaces(nl, &[])?;
        choose(&all, peer_iface)
    } else {
        opts.interfaces.clone()
    };
    if let Some(p) = peer_iface
        && p != "lo"
        && !names.iter().any(|n| n == p)
    {
        names.push(p.to_string());
    }
    let mut first: Vec<Interface> = names
        .iter()
        .map(|n| read::interface(nl, n))
        .collect::<Result<_, _>>()?;
    let found: Vec<_> = first.iter().filter_map(|i| i.stack.clone()).collect();
    for n in stack::expand(&names, &found).into_iter().skip(names.len()) {
        first.push(read::interface(nl, &n)?);
    }
    Ok(first)
}

pub(crate) fn gather(
    opts: &Options,
    paths: &Paths,
    measure: Option<&dyn Measure>,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<Inputs, DoctorError> {
    let mut nl =
        Netlink::new().map_err(|e| DoctorError::Nic(crate::nic::error::NicError::Connect(e)))?;
    let peer_iface = opts
        .peer
        .as_ref()
        .and_then(|p| p.ip().ok())
        .and_then(route::egress_interface);
    step(progress, 0.0, "reading interfaces");
    let mut first = first_sample(&mut nl, opts, peer_iface.as_deref())?;
    let roots = crate::nic::owner::Roots::new(paths);
    crate::nic::owner::annotate(&roots, &mut first);
    let t0 = Instant::now();
    let mut inp = Inputs {
        persisted: persisted(paths, &first),
        sysctls: sysctls(paths),
        tcp_memory: crate::sysctl::tcp_mem::read(&paths.proc_sys),
        irqbalance_pid: crate::cpu::layout::irqbalance_pid(),
        physical_cores: crate::cpu::layout::physical_cores_here(),
        ..Default::default()
    };
    inp.guests = guest_links(&mut nl, paths);
    inp.cpu = Some(cpu_under_stress(opts, progress, cancel));
    storage_layers(&mut inp, opts, progress, cancel);

    // Second snapshot at least one interval after the first.
    let wait = opts.sample_interval.saturating_sub(t0.elapsed());
    if !wait.is_zero() {
        step(progress, 0.1, "sampling counters");
        std::thread::sleep(wait);
    }
    let interval_s = t0.elapsed().as_secs_f64();
    for f in first {
        let second = read::interface(&mut nl, &f.name).ok().map(|mut s| {
            s.owners = f.owners.clone();
            s
        });
        inp.interfaces.push(IfaceSample {
            first: f,
            second,
            interval_s,
        });
    }
    // The peer's probes come after the counter samples: their own oversized
    // don't-fragment packets must not show up as drops.
    if let Some(peer) = &opts.peer {
        let iface = peer_iface
            .as_deref()
            .and_then(|n| inp.iface(n).map(|s| s.now().clone()));
        inp.peer = Some(peer_data(
            peer,
            iface.as_ref(),
            opts,
            measure,
            progress,
            cancel,
        ));
    }
    Ok(inp)
}

/// On a Proxmox node, every VM's link with its MTU and its bridge's (the
/// links read once more, all of them: a tap is rarely among those doctor
/// looks at); nothing elsewhere or when the links cannot be read.
/// The `--dir`s: their mounts, their disk figures, a network mount's
/// server's own figures in the fleet, this CPU's AEADs for a sealed mount.
fn storage_layers(inp: &mut Inputs, opts: &Options, progress: &dyn Progress, cancel: &Cancel) {
    inp.mounts = opts.dirs.iter().map(|d| mounts::lookup(d)).collect();
    inp.storage = storage::measure_dirs(&opts.dirs, opts.disk_size, progress, cancel);
    if let Some(fleet) = &opts.fleet {
        step(
            progress,
            0.1,
            "the mounts' servers' own figures in the fleet's Prometheus",
        );
        inp.fleet = storage::servers_in_fleet(inp, fleet);
    }
    if storage::any_sealed(inp) {
        step(
            progress,
            0.1,
            "this CPU's encryption and signing per core (a sealed or signed SMB mount)",
        );
        inp.crypto = crate::bench::crypto::measure_all(crate::bench::crypto::PER_AEAD, cancel);
    }
}

fn guest_links(nl: &mut Netlink, paths: &Paths) -> Vec<super::inputs::GuestLink> {
    if !crate::pve::config_dir(&paths.root).is_dir() {
        return Vec::new();
    }
    let Ok(all) = read::interfaces(nl, &[]) else {
        return Vec::new();
    };
    let mtu = |name: &str| all.iter().find(|i| i.name == name).map(|i| i.mtu);
    crate::pve::guests(&paths.root, all.iter().map(|i| i.name.as_str()))
        .into_iter()
        .map(|guest| {
            let bridge = guest
                .vm
                .as_ref()
                .and_then(|v| v.net.as_ref())
                .and_then(|n| n.bridge.clone())
                .and_then(|b| Some((b.clone(), mtu(&b)?)));
            super::inputs::GuestLink {
                mtu: mtu(&guest.ifname),
                bridge,
                tap_queues: crate::nic::rps::tx_queue_count(&guest.ifname),
                guest,
            }
        })
        .collect()
}

/// The persisted settings of each interface (by MAC, else name), from
/// hlctl's state file; none when it cannot be read.
fn persisted(
    paths: &Paths,
    ifaces: &[Interface],
) -> BTreeMap<String, crate::nic::model::ChangeSet> {
    let Ok(state) = crate::nic::persist::State::load(&paths.nic_state_file()) else {
        return BTreeMap::new();
    };
    ifaces
        .iter()
        .filter_map(|i| {
            let e = state.find(&i.name, i.mac.as_deref())?;
            Some((i.name.clone(), e.settings.clone()))
        })
        .collect()
}
