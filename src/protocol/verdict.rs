//! Which layer limits a protocol's figure in one direction, with its
//! evidence, said in a sentence. The rules, in order (the first that holds
//! names the limit):
//!
//! 0. a local directory is its own disk: **local disk**;
//! 1. **network**: raw TCP to the same host carries at most ~15 % more;
//! 2. **local disk**: the disk the file comes from (a write) or goes to (a
//!    read) is no faster than the protocol: a real copy stops there;
//! 3. **encryption** (or signing): the transfer runs at half or more of
//!    what this CPU seals per core with the same AEAD, or signs with the
//!    same MAC (SSH and one smbd per client encrypt on one core), or its
//!    process fills a core and the cipher's share of that core is a
//!    quarter or more;
//! 4. **client CPU**: the transfer's process, or one of the kernel's
//!    threads busy meanwhile (`cifsd`, which receives and decrypts an SMB
//!    connection; the NFS client's kworkers), fills ~a core (85 %);
//! 5. **settings**: NFS `sync` (the mount's, or the server's export, from
//!    the write's RPCs), `rsize`/`wsize` below 1 MiB, no `nconnect` where
//!    the network has room, CIFS `cache=none` ([`super::settings`]);
//! 6. **server disk**: the server is a host of the fleet (`--prometheus`)
//!    and none of the directories its last check measured reads (a read)
//!    or writes (a write) faster than the transfer ([`crate::matrix::host`]);
//! 7. else **elsewhere**: nothing measured holds it, so the server's CPU
//!    under the protocol's load, or its disk when the fleet has no figure
//!    of it, with the command to run there.

use serde::{Deserialize, Serialize};

use super::FileRun;
use super::cipher::{self, Encryption};
use super::fleet::HostFigures;
use super::settings::{self, Setting};
use crate::bench::crypto::{Aead, CryptoFigure};
use crate::bench::file::{Direction, Transfer};
use crate::cpu::kthreads::KernelThreadUse;

/// Raw TCP within this share of the protocol's figure: the network holds it.
const NETWORK_SHARE: f64 = 0.85;
/// A process at this share of one core is CPU-bound.
const BUSY_CORE: f64 = 0.85;

/// The layer that limits one direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Limit {
    Network,
    LocalDisk,
    Encryption,
    ClientCpu,
    Settings,
    /// The server's own disk, as the fleet's Prometheus has it.
    ServerDisk,
    /// Not on this host: the server's disk or CPU.
    Elsewhere,
}

/// One direction's verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub protocol: String,
    pub direction: Direction,
    pub mb_per_s: f64,
    pub limit: Limit,
    /// The owner's sentence: figure, limit, evidence, what to do.
    pub sentence: String,
    /// The encryption the transfer paid for, whatever limited it
    /// (`AES-128-GCM via seal`, `chacha20-poly1305@openssh.com`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encryption: Option<String>,
}

/// Everything one direction's verdict reads, in plain figures.
#[derive(Clone, Debug, Default)]
pub(crate) struct Inputs {
    /// `SSH`, `NFS4`, `CIFS`, ... as the sentence names it.
    pub(crate) protocol: String,
    pub(crate) direction: Option<Direction>,
    pub(crate) bytes_per_second: f64,
    /// Raw TCP in the same direction, bit/s.
    pub(crate) network_bps: Option<f64>,
    /// The local disk's figure for this direction, bytes/s, and its dir.
    pub(crate) disk: Option<(f64, String)>,
    /// Cores the transfer's process used, and its name (`ssh`, `hlctl`).
    pub(crate) client: Option<(f64, &'static str)>,
    /// The kernel's threads busy meanwhile, the busiest first.
    pub(crate) kernel: Vec<KernelThreadUse>,
    pub(crate) encryption: Option<Encryption>,
    /// This CPU's per-core AEAD figures.
    pub(crate) crypto: Vec<CryptoFigure>,
    pub(crate) settings: Vec<Setting>,
    pub(crate) server: Option<String>,
    /// The server's own figures, from the fleet's Prometheus.
    pub(crate) fleet: Option<HostFigures>,
    pub(crate) place: String,
    /// A local directory: no network in the path, the disk is the figure.
    pub(crate) local: bool,
}

/// Both directions of `run`, write first.
pub(crate) fn judge(run: &FileRun) -> Vec<Verdict> {
    run.file
        .transfers()
        .into_iter()
        .map(|t| decide(&inputs(run, t)))
        .collect()
}

/// The figures of `run` that bear on transfer `t`.
fn inputs(run: &FileRun, t: &Transfer) -> Inputs {
    let f = &run.file;
    let net = run.network.measured().map(|n| match t.direction {
        Direction::Write => n.upload_bps,
        Direction::Read => n.download_bps,
    });
    let disk = run.disk.measured().map(|d| {
        let bps = match t.direction {
            Direction::Write => d.read_bytes_per_second,
            Direction::Read => d.write_bytes_per_second,
        };
        (bps, d.dir.clone())
    });
    let process = f.process();
    let room = net.is_some_and(|n| n > 2.0 * t.bytes_per_second * 8.0);
    Inputs {
        protocol: f.protocol.to_uppercase(),
        direction: Some(t.direction),
        bytes_per_second: t.bytes_per_second,
        network_bps: net,
        disk,
        client: t.client_cores.map(|c| (c, process)),
        kernel: t.kernel_threads.clone(),
        encryption: cipher::of(f, t.direction),
        crypto: run.crypto.clone(),
        settings: settings::of_report(f, t.direction, room),
        server: f.server.clone(),
        fleet: run.fleet.as_ref().and_then(|b| b.measured()).cloned(),
        place: f.place.clone(),
        local: f.ssh.is_none() && f.mount.as_ref().is_some_and(|m| !m.is_network()),
    }
}

/// `9.3 Gbit/s` (one decimal, as the owner reads it), or in the CLI's
/// smaller units below a gigabit (`19 Mbit/s`, never `0.0 Gbit/s`).
fn gbit(bps: f64) -> String {
    if bps >= 1e9 {
        format!("{:.1} Gbit/s", bps / 1e9)
    } else {
        crate::units::bps(bps)
    }
}

/// The process, or else the busiest kernel thread, that filled a core:
/// "ssh used 0.97 of a core", "the kernel's cifsd used 0.91 of a core".
fn busy_core(i: &Inputs) -> Option<String> {
    if let Some((c, who)) = i.client.filter(|(c, _)| *c >= BUSY_CORE) {
        return Some(format!("{who} used {c:.2} of a core"));
    }
    let k = i.kernel.first().filter(|k| k.cores >= BUSY_CORE)?;
    Some(format!(
        "the kernel's {} used {:.2} of a core",
        k.name, k.cores
    ))
}

/// "the kernel's threads: cifsd 0.40, kworker/u4:1-cifsiod 0.12 of a core".
fn kernel_said(kernel: &[KernelThreadUse]) -> Option<String> {
    let listed: Vec<_> = kernel
        .iter()
        .take(3)
        .map(|k| format!("{} {:.2}", k.name, k.cores))
        .collect();
    (!listed.is_empty()).then(|| format!("the kernel's threads: {} of a core", listed.join(", ")))
}

fn per_core(crypto: &[CryptoFigure], a: Aead) -> Option<f64> {
    crypto
        .iter()
        .find(|c| c.aead == a)
        .map(|c| c.gbit_per_s * 1e9)
}

/// The verdict of one direction.
pub(crate) fn decide(i: &Inputs) -> Verdict {
    let direction = i.direction.unwrap_or(Direction::Write);
    let bits = i.bytes_per_second * 8.0;
    let head = format!(
        "{} {} {:.0} MB/s",
        i.protocol,
        direction.as_str(),
        i.bytes_per_second / 1e6
    );
    let net_said = i
        .network_bps
        .map(|n| format!("the network carries {}", gbit(n)));
    let (limit, why) = if i.local {
        (
            Limit::LocalDisk,
            format!(
                "the local disk itself ({}: no network in the path)",
                i.place
            ),
        )
    } else if let Some(n) = i.network_bps.filter(|&n| bits >= NETWORK_SHARE * n) {
        (
            Limit::Network,
            format!(
                "the network holds it (raw TCP to the same host carries {}, the transfer {})",
                gbit(n),
                gbit(bits)
            ),
        )
    } else if let Some((d, dir)) = i
        .disk
        .as_ref()
        .filter(|(d, _)| *d <= i.bytes_per_second / NETWORK_SHARE)
    {
        let way = match direction {
            Direction::Write => "reads",
            Direction::Read => "writes",
        };
        (
            Limit::LocalDisk,
            format!(
                "the local disk holds a copy ({dir} {way} {:.0} MB/s{})",
                d / 1e6,
                net_said.map(|s| format!("; {s}")).unwrap_or_default()
            ),
        )
    } else if let Some(why) = encryption(i, bits, net_said.as_deref()) {
        (Limit::Encryption, why)
    } else if let Some(who) = busy_core(i) {
        (
            Limit::ClientCpu,
            format!(
                "the client CPU holds it ({who}{})",
                net_said.map(|s| format!("; {s}")).unwrap_or_default()
            ),
        )
    } else if let Some(why) = settings_said(&i.settings) {
        (Limit::Settings, why)
    } else if let Some(why) = server_disk(i, net_said.as_deref()) {
        (Limit::ServerDisk, why)
    } else {
        (Limit::Elsewhere, elsewhere(i, net_said.as_deref()))
    };
    Verdict {
        protocol: i.protocol.clone(),
        direction,
        mb_per_s: i.bytes_per_second / 1e6,
        limit,
        sentence: format!("{head}: {why}"),
        encryption: i.encryption.as_ref().map(|e| e.named.clone()),
    }
}

/// Rule 5: the costly settings, each with its advice.
fn settings_said(settings: &[Setting]) -> Option<String> {
    if settings.is_empty() {
        return None;
    }
    let said: Vec<_> = settings.iter().map(|s| s.said.as_str()).collect();
    let advice: Vec<_> = settings.iter().map(|s| s.advice.as_str()).collect();
    Some(format!(
        "the protocol's settings hold it ({}): {}",
        said.join("; "),
        advice.join(", ")
    ))
}

/// Rule 3: the encryption's share of one core, with a faster AEAD's advice.
fn encryption(i: &Inputs, bits: f64, net_said: Option<&str>) -> Option<String> {
    let e = i.encryption.as_ref()?;
    let aead = e.aead?;
    let c = per_core(&i.crypto, aead)?;
    let share = bits / c;
    let busy = busy_core(i).is_some();
    if share < 0.5 && !(busy && share >= 0.25) {
        return None;
    }
    let layer = if aead.signs() {
        "signing"
    } else {
        "encryption"
    };
    let verb = aead.verb();
    // Clearly more than one core's figure (20 %) got through: the cipher
    // ran faster than hlctl's measure of it (the kernel's own code,
    // OpenSSL's) or on more than one core. It is still the costly layer;
    // the sentence says so.
    let over = if share > 1.2 {
        format!(
            ", less than the transfer's {}: the protocol's own {layer} code is faster or uses more cores",
            gbit(bits)
        )
    } else {
        String::new()
    };
    let mut s = format!(
        "{layer} holds it ({}; this CPU {verb} {} per core{over}{})",
        e.named,
        gbit(c),
        net_said.map(|n| format!("; {n}")).unwrap_or_default()
    );
    let advice = if aead.signs() {
        Some(unsigned(e).into())
    } else {
        faster(i, aead, c)
    };
    if let Some(advice) = advice {
        s.push_str(": ");
        s.push_str(&advice);
    }
    Some(s)
}

/// A faster AEAD the same protocol could use, when this CPU has one ≥ 20 %
/// faster.
fn faster(i: &Inputs, now: Aead, now_bps: f64) -> Option<String> {
    let ssh = i.protocol == "SSH";
    let candidates: &[Aead] = if ssh {
        &[Aead::Aes128Gcm, Aead::ChaCha20Poly1305]
    } else {
        &[Aead::Aes128Gcm]
    };
    let best = candidates
        .iter()
        .filter(|&&a| a != now)
        .filter_map(|&a| per_core(&i.crypto, a).map(|b| (a, b)))
        .max_by(|x, y| x.1.total_cmp(&y.1))
        .filter(|&(_, bps)| bps >= 1.2 * now_bps);
    match best {
        Some((best, bps)) if ssh => {
            let name = cipher::ssh_name(best)?;
            Some(format!(
                "`-c {name}` is faster on this CPU ({} per core)",
                gbit(bps)
            ))
        }
        Some((_, bps)) => Some(format!(
            "mount with vers=3.1.1 for AES-GCM ({} per core here), or turn encryption off for this share",
            gbit(bps)
        )),
        None if ssh => None,
        None => Some("turn encryption off for this share if it need not be sealed".into()),
    }
}

/// The advice for a share whose signing holds it: SMB3 signs with
/// AES-CMAC, which chains one block after the other, so no faster MAC is
/// there to pick on Linux's client; it can only be turned off, by the mount
/// (`sign`) or by the server (`server signing`). A connection that signs
/// without `sign` in the options was asked by either: Linux does not show
/// `sign` in mountinfo.
fn unsigned(e: &Encryption) -> &'static str {
    if e.named.ends_with("via sign") {
        "mount without `sign` if this share need not be signed on a trusted LAN"
    } else {
        "if this share need not be signed on a trusted LAN, mount it without `sign` (mountinfo does not show it) \
         and set `server signing = auto` on the server if it requires signing"
    }
}

/// The server's disk pattern a direction needs: a read is the server
/// reading its disk.
fn server_pattern(d: Direction) -> (&'static str, &'static str) {
    match d {
        Direction::Read => ("seq-read", "reads"),
        Direction::Write => ("seq-write", "writes"),
    }
}

/// Rule 6: the fastest directory of the server's last check is no faster
/// than the transfer (within the network's 15 %): a copy of a file the
/// server does not hold in its page cache stops there, as a local disk's
/// rule 2 says of this host's.
fn server_disk(i: &Inputs, net_said: Option<&str>) -> Option<String> {
    let f = i.fleet.as_ref()?;
    let (pattern, way) = server_pattern(i.direction?);
    let d = f
        .fastest(pattern)
        .filter(|d| d.bytes_per_second <= i.bytes_per_second / NETWORK_SHARE)?;
    Some(format!(
        "the server's disk holds a copy ({}'s last check, in the fleet's Prometheus: its fastest \
         directory {} {way} {:.0} MB/s{}): a faster disk or pool on {}, or the file on one",
        f.host,
        d.dir,
        d.bytes_per_second / 1e6,
        net_said.map(|s| format!("; {s}")).unwrap_or_default(),
        f.host
    ))
}

/// What the fleet says of a server that does not hold it by its disk:
/// "nas's own figures in the fleet's Prometheus do not hold it (its fastest
/// directory /tank reads 400 MB/s; its CPU 1500 events/s on 1 thread, 5000 on 4 threads)".
fn fleet_said(f: &HostFigures, d: Direction) -> String {
    let (pattern, way) = server_pattern(d);
    let mut said = Vec::new();
    if let Some(disk) = f.fastest(pattern) {
        said.push(format!(
            "its fastest directory {} {way} {:.0} MB/s",
            disk.dir,
            disk.bytes_per_second / 1e6
        ));
    }
    let threads = |n: u32| format!("{n} thread{}", if n == 1 { "" } else { "s" });
    let cpu: Vec<String> = f
        .cpu
        .iter()
        .enumerate()
        .map(|(k, c)| match k {
            0 => format!(
                "its CPU {:.0} events/s on {}",
                c.events_per_second,
                threads(c.threads)
            ),
            _ => format!("{:.0} on {}", c.events_per_second, threads(c.threads)),
        })
        .collect();
    if !cpu.is_empty() {
        said.push(cpu.join(", "));
    }
    if said.is_empty() {
        said.push("no disk or CPU figure published".into());
    }
    format!(
        "{}'s own figures in the fleet's Prometheus do not hold it ({})",
        f.host,
        said.join("; ")
    )
}

/// Rule 7: nothing here holds it; what to run on the server.
fn elsewhere(i: &Inputs, net_said: Option<&str>) -> String {
    let mut evidence = Vec::new();
    if let Some(n) = net_said {
        evidence.push(n.to_string());
    }
    if let Some((c, who)) = i.client {
        evidence.push(format!("{who} used {c:.2} of a core"));
    }
    evidence.extend(kernel_said(&i.kernel));
    if let Some((d, dir)) = &i.disk {
        evidence.push(format!("{dir} moves {:.0} MB/s", d / 1e6));
    }
    if let Some(e) = &i.encryption {
        evidence.push(
            match e.aead.and_then(|a| per_core(&i.crypto, a).map(|c| (a, c))) {
                Some((a, c)) => format!(
                    "{}, which this CPU {} at {} per core",
                    e.named,
                    a.verb(),
                    gbit(c)
                ),
                None => format!("{}, whose cost is not measured here", e.named),
            },
        );
    }
    let server = i.server.as_deref().unwrap_or("the server");
    let dir = i.place.rsplit(':').next().unwrap_or("DIR");
    let not = if i.network_bps.is_none() {
        "raw TCP was not measured (start `hlctl serve` there); "
    } else {
        ""
    };
    let evidence = if evidence.is_empty() {
        "no other layer measured".to_string()
    } else {
        evidence.join("; ")
    };
    match (&i.fleet, i.direction) {
        (Some(f), Some(d)) => format!(
            "nothing measured on this host holds it ({evidence}), and {}: {not}its CPU under \
             the protocol's load (smbd, nfsd, sshd) or its share's settings may; watch `top` on {} \
             during a copy",
            fleet_said(f, d),
            f.host
        ),
        _ => format!(
            "nothing measured on this host holds it ({evidence}): {not}the server's disk or CPU \
             may; run `hlctl bench disk --dir {dir}` and `hlctl bench cpu` on {server}"
        ),
    }
}

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod tests;
