//! `hlctl bench file`'s text: a table like the write-up's (protocol,
//! direction, MB/s, Gbit/s, seconds, what limited it), the layers beside
//! it, then each verdict's sentence.

use crate::bench::crypto::CryptoFigure;
use crate::protocol::{Beside, FileRun, Limit};

pub(crate) fn print(r: &FileRun) {
    let f = &r.file;
    println!(
        "file: {} bytes to {} ({})",
        f.size_bytes, f.place, f.protocol
    );
    if let Some(s) = &f.ssh {
        println!(
            "  ssh: cipher {} MAC {} (client->server), {} MAC {} (server->client)",
            s.cipher_client_to_server,
            s.mac_client_to_server,
            s.cipher_server_to_client,
            s.mac_server_to_client
        );
    }
    if let Some(m) = &f.mount {
        println!(
            "  mount: {} {} on {} ({})",
            m.fs_type,
            m.source,
            m.mount_point,
            m.options_text()
        );
        if let Some(smb) = &m.smb {
            println!("  smb: {}", smb_line(smb));
        }
    }
    if let Some(io) = &f.io {
        println!("  I/O: {}", io.said);
    }
    println!();
    println!(
        "  {:<10} {:<9} {:>9} {:>8} {:>8}  limit",
        "protocol", "direction", "MB/s", "Gbit/s", "seconds"
    );
    for (t, v) in f.transfers().into_iter().zip(&r.verdicts) {
        println!(
            "  {:<10} {:<9} {:>9.1} {:>8.2} {:>8.2}  {}",
            f.protocol,
            t.direction.as_str(),
            t.bytes_per_second / 1e6,
            t.bytes_per_second * 8.0 / 1e9,
            t.seconds,
            limit(v)
        );
    }
    print_beside(r);
    print_cpu(f);
    if !r.crypto.is_empty() {
        println!();
        print_crypto(&r.crypto);
    }
    println!();
    for v in &r.verdicts {
        println!("{}", v.sentence);
    }
}

/// Each direction's CPU in cores: the transfer's process, then the
/// kernel's threads busy meanwhile (`cifsd 0.41`).
fn print_cpu(f: &crate::bench::file::FileReport) {
    let who = f.process();
    for t in f.transfers() {
        let mut used: Vec<String> = t
            .client_cores
            .map(|c| format!("{who} {c:.2}"))
            .into_iter()
            .collect();
        used.extend(
            t.kernel_threads
                .iter()
                .map(|k| format!("{} {:.2}", k.name, k.cores)),
        );
        if !used.is_empty() {
            println!(
                "  {:<10} {:<9} {} (of a core)",
                "client CPU",
                t.direction.as_str(),
                used.join(", ")
            );
        }
    }
}

/// Raw TCP and the local disk, or why each was skipped.
fn print_beside(r: &FileRun) {
    match &r.network {
        Beside::Measured(n) => println!(
            "  {:<10} {:<9} {:>9.1} {:>8.2}\n  {:<10} {:<9} {:>9.1} {:>8.2}",
            "raw TCP",
            "write",
            n.upload_bps / 8e6,
            n.upload_bps / 1e9,
            "raw TCP",
            "read",
            n.download_bps / 8e6,
            n.download_bps / 1e9
        ),
        Beside::Skipped { why } => println!("  raw TCP: skipped: {why}"),
    }
    match &r.disk {
        Beside::Measured(d) => println!(
            "  {:<10} {:<9} {:>9.1} {:>8.2}\n  {:<10} {:<9} {:>9.1} {:>8.2}    ({} {})",
            "local disk",
            "write",
            d.write_bytes_per_second / 1e6,
            d.write_bytes_per_second * 8.0 / 1e9,
            "local disk",
            "read",
            d.read_bytes_per_second / 1e6,
            d.read_bytes_per_second * 8.0 / 1e9,
            d.dir,
            d.filesystem
        ),
        Beside::Skipped { why } => println!("  local disk: skipped: {why}"),
    }
    print_fleet(r);
}

/// The server's own figures from the fleet's Prometheus, when asked for:
/// its fastest directory each way, its CPU.
fn print_fleet(r: &FileRun) {
    let Some(fleet) = &r.fleet else { return };
    let h = match fleet {
        Beside::Measured(h) => h,
        Beside::Skipped { why } => {
            println!("  the server's own figures: skipped: {why}");
            return;
        }
    };
    for (pattern, direction) in [("seq-write", "write"), ("seq-read", "read")] {
        if let Some(d) = h.fastest(pattern) {
            println!(
                "  {:<10} {:<9} {:>9.1} {:>8.2}    ({}'s {}, its last check, from {})",
                "server disk",
                direction,
                d.bytes_per_second / 1e6,
                d.bytes_per_second * 8.0 / 1e9,
                h.host,
                d.dir,
                h.prometheus
            );
        }
    }
    for c in &h.cpu {
        println!(
            "  {:<10} {:.0} events/s on {} thread(s) ({}'s last check)",
            "server CPU", c.events_per_second, c.threads, h.host
        );
    }
    if h.disks.is_empty() && h.cpu.is_empty() {
        println!("  the server's own figures: {} published none", h.host);
    }
}

pub(crate) fn print_crypto(figures: &[CryptoFigure]) {
    println!("encryption and signing per core (this CPU):");
    for c in figures {
        println!("  {:<18} {:>6.2} Gbit/s", c.aead.name(), c.gbit_per_s);
    }
}

/// The limit column: "signing" where the encryption layer is a MAC.
fn limit(v: &crate::protocol::Verdict) -> &'static str {
    match v.limit {
        Limit::Network => "network",
        Limit::LocalDisk => "local disk",
        Limit::Encryption
            if v.encryption
                .as_deref()
                .is_some_and(|e| e.contains(" signing ")) =>
        {
            "signing"
        }
        Limit::Encryption => "encryption",
        Limit::ClientCpu => "client CPU",
        Limit::Settings => "protocol settings",
        Limit::ServerDisk => "the server's disk",
        Limit::Elsewhere => "the server (not measured here)",
    }
}

/// `\\nas\media 3.1.1, encrypted (the server requires it)`, as the kernel's
/// client has the share.
fn smb_line(s: &crate::bench::file::smb_debug::SmbShare) -> String {
    let dialect = s.dialect.as_deref().unwrap_or("(dialect unknown)");
    let how = match (s.encrypted, s.server_encrypts) {
        (_, true) => "encrypted (the server requires it)",
        (true, false) => "encrypted",
        (false, false) => "not encrypted",
    };
    let signed = if s.signed { ", signed" } else { "" };
    format!("{} {dialect}, {how}{signed}", s.unc)
}
