//! Each verdict on recorded figures.

use super::*;
use crate::bench::file::MountFacts;

fn crypto(figs: &[(Aead, f64)]) -> Vec<CryptoFigure> {
    figs.iter()
        .map(|&(aead, g)| CryptoFigure {
            aead,
            bytes: 1,
            seconds: 1.0,
            gbit_per_s: g,
        })
        .collect()
}

fn ssh(direction: Direction, mb: f64) -> Inputs {
    Inputs {
        protocol: "SSH".into(),
        direction: Some(direction),
        bytes_per_second: mb * 1e6,
        place: "root@nas:/srv".into(),
        server: Some("nas".into()),
        ..Inputs::default()
    }
}

fn chacha() -> Option<Encryption> {
    Some(Encryption {
        named: "chacha20-poly1305@openssh.com".into(),
        aead: Some(Aead::ChaCha20Poly1305),
    })
}

#[test]
fn a_transfer_near_raw_tcp_is_held_by_the_network() {
    // The write-up's "24 s = 110 MB/s ⇐ RJ-45 limit" on gigabit.
    let mut i = ssh(Direction::Read, 110.0);
    i.network_bps = Some(0.94e9);
    i.encryption = chacha();
    i.crypto = crypto(&[(Aead::ChaCha20Poly1305, 2.1)]);
    let v = decide(&i);
    assert_eq!(v.limit, Limit::Network, "{}", v.sentence);
    assert!(
        v.sentence
            .starts_with("SSH read 110 MB/s: the network holds it"),
        "{}",
        v.sentence
    );
    // Below a gigabit in the CLI's units, as `bench net` prints them.
    assert!(
        v.sentence
            .contains("carries 940 Mbit/s, the transfer 880 Mbit/s"),
        "{}",
        v.sentence
    );
}

#[test]
fn ssh_on_chacha_near_its_per_core_figure_is_held_by_encryption() {
    let mut i = ssh(Direction::Write, 180.0);
    i.network_bps = Some(20e9);
    i.client = Some((0.98, "ssh"));
    i.encryption = chacha();
    i.crypto = crypto(&[(Aead::ChaCha20Poly1305, 2.1), (Aead::Aes128Gcm, 9.0)]);
    let v = decide(&i);
    assert_eq!(v.limit, Limit::Encryption, "{}", v.sentence);
    assert_eq!(
        v.sentence,
        "SSH write 180 MB/s: encryption holds it (chacha20-poly1305@openssh.com; this CPU \
         seals 2.1 Gbit/s per core; the network carries 20.0 Gbit/s): \
         `-c aes128-gcm@openssh.com` is faster on this CPU (9.0 Gbit/s per core)"
    );
}

#[test]
fn a_busy_ssh_whose_cipher_is_cheap_is_held_by_the_client_cpu() {
    let mut i = ssh(Direction::Write, 150.0);
    i.network_bps = Some(10e9);
    i.client = Some((0.99, "ssh"));
    i.encryption = Some(Encryption {
        named: "aes128-gcm@openssh.com".into(),
        aead: Some(Aead::Aes128Gcm),
    });
    i.crypto = crypto(&[(Aead::Aes128Gcm, 9.0)]);
    let v = decide(&i);
    assert_eq!(v.limit, Limit::ClientCpu, "{}", v.sentence);
    assert!(
        v.sentence.contains("ssh used 0.99 of a core"),
        "{}",
        v.sentence
    );
}

#[test]
fn a_sealed_smb3_share_names_ccm_and_the_gcm_way_out() {
    // The issue's example: SMB read 176 MB/s over a 9.3 Gbit/s network.
    let m = cifs("vers=3.0,seal,rsize=4194304,wsize=4194304");
    let f = crate::bench::file::FileReport {
        protocol: "cifs".into(),
        place: "/mnt/media".into(),
        server: Some("nas".into()),
        size_bytes: 1,
        write: Transfer::new(Direction::Write, 1, 1.0),
        read: Transfer::new(Direction::Read, 1, 1.0),
        ssh: None,
        mount: Some(m),
        io: None,
        cancelled: false,
    };
    let e = cipher::of(&f, Direction::Read).unwrap();
    assert_eq!(e.named, "AES-128-CCM via seal");
    let mut i = Inputs {
        protocol: "CIFS".into(),
        direction: Some(Direction::Read),
        bytes_per_second: 176e6,
        network_bps: Some(9.3e9),
        encryption: Some(e),
        crypto: crypto(&[(Aead::Aes128Ccm, 1.4), (Aead::Aes128Gcm, 6.0)]),
        ..Inputs::default()
    };
    let v = decide(&i);
    assert_eq!(v.limit, Limit::Encryption, "{}", v.sentence);
    assert!(v.sentence.starts_with("CIFS read 176 MB/s: encryption holds it (AES-128-CCM via seal; this CPU seals 1.4 Gbit/s per core; the network carries 9.3 Gbit/s): mount with vers=3.1.1 for AES-GCM (6.0 Gbit/s per core here)"), "{}", v.sentence);
    // The same share unsealed: no encryption verdict.
    i.encryption = None;
    assert_ne!(decide(&i).limit, Limit::Encryption);
}

#[test]
fn a_share_the_server_encrypts_is_encrypted_without_seal() {
    // Samba's `smb encrypt = required`: the mount has no `seal`, the
    // kernel's DebugData shows the share flag and the dialect 3.1.1.
    let mut m = cifs("vers=3.1.1,rsize=4194304,wsize=4194304");
    assert_eq!(
        cipher::of_mount(&m),
        None,
        "no seal, nothing known of the server"
    );
    m.smb = Some(crate::bench::file::smb_debug::SmbShare {
        unc: r"\\nas\media".into(),
        dialect: Some("3.1.1".into()),
        encrypted: true,
        server_encrypts: true,
        signed: false,
        gcm_256_only: false,
    });
    let e = cipher::of_mount(&m).expect("encrypted by the server");
    assert_eq!(e.named, "AES-128-GCM required by the server for this share");
    assert_eq!(e.aead, Some(Aead::Aes128Gcm));
    let i = Inputs {
        protocol: "CIFS".into(),
        direction: Some(Direction::Write),
        bytes_per_second: 90e6,
        network_bps: Some(9.3e9),
        encryption: Some(e),
        crypto: crypto(&[(Aead::Aes128Ccm, 0.6), (Aead::Aes128Gcm, 1.0)]),
        ..Inputs::default()
    };
    let v = decide(&i);
    assert_eq!(v.limit, Limit::Encryption, "{}", v.sentence);
    assert!(
        v.sentence
            .ends_with("turn encryption off for this share if it need not be sealed"),
        "{}",
        v.sentence
    );
    // cifs told to take AES-256-GCM only; a 3.0.2 connection takes CCM
    // whatever the mount's vers says.
    let s = m.smb.as_mut().unwrap();
    s.gcm_256_only = true;
    assert_eq!(cipher::of_mount(&m).unwrap().aead, Some(Aead::Aes256Gcm));
    m.smb.as_mut().unwrap().dialect = Some("3.0.2".into());
    assert_eq!(cipher::of_mount(&m).unwrap().aead, Some(Aead::Aes128Ccm));
}

#[test]
fn a_signing_mount_is_named_with_its_mac() {
    let m = cifs("vers=3.1.1,sign,rsize=4194304");
    let e = cipher::of_mount(&m).expect("signing");
    assert_eq!(
        (e.named.as_str(), e.aead),
        ("AES-128-CMAC signing via sign", Some(Aead::Aes128Cmac))
    );
    let old = cifs("vers=2.1,sign");
    let hmac = cipher::of_mount(&old).unwrap();
    assert_eq!(
        (hmac.named.as_str(), hmac.aead),
        ("HMAC-SHA256 signing via sign", None)
    );
    let mut plain = cifs("vers=3.1.1");
    assert_eq!(cipher::of_mount(&plain), None);
    // DebugData's `signed` connection: the mount's options never say `sign`.
    plain.smb = Some(crate::bench::file::smb_debug::SmbShare {
        signed: true,
        dialect: Some("3.1.1".into()),
        ..Default::default()
    });
    let by_server = cipher::of_mount(&plain).unwrap();
    assert_eq!(
        by_server.named,
        "AES-128-CMAC signing (the connection signs)"
    );
}

/// A 90 MB/s CIFS read over a 9.3 Gbit/s network, paying `e`, judged
/// with this CPU's figures `figs`.
fn signed_read(e: &Encryption, figs: &[(Aead, f64)]) -> Verdict {
    decide(&Inputs {
        protocol: "CIFS".into(),
        direction: Some(Direction::Read),
        bytes_per_second: 90e6,
        network_bps: Some(9.3e9),
        encryption: Some(e.clone()),
        crypto: crypto(figs),
        server: Some("nas".into()),
        place: "/mnt/media".into(),
        ..Inputs::default()
    })
}

#[test]
fn signing_holds_a_share_when_a_core_signs_little_more_than_it_moves() {
    let e = cipher::of_mount(&cifs("vers=3.1.1,sign")).unwrap();
    let hmac = cipher::of_mount(&cifs("vers=2.1,sign")).unwrap();
    let mut plain = cifs("vers=3.1.1");
    plain.smb = Some(crate::bench::file::smb_debug::SmbShare {
        signed: true,
        dialect: Some("3.1.1".into()),
        ..Default::default()
    });
    let by_server = cipher::of_mount(&plain).unwrap();
    // 720 Mbit/s against a core that signs 1.0 Gbit/s: signing holds it,
    // and the advice turns it off where it was asked for.
    let v = signed_read(&e, &[(Aead::Aes128Gcm, 8.0), (Aead::Aes128Cmac, 1.0)]);
    assert_eq!(v.limit, Limit::Encryption, "{}", v.sentence);
    assert!(
        v.sentence.starts_with(
            "CIFS read 90 MB/s: signing holds it (AES-128-CMAC signing via sign; \
             this CPU signs 1.0 Gbit/s per core; the network carries 9.3 Gbit/s): \
             mount without `sign`"
        ),
        "{}",
        v.sentence
    );
    assert_eq!(
        v.encryption.as_deref(),
        Some("AES-128-CMAC signing via sign")
    );
    let v = signed_read(
        &by_server,
        &[(Aead::Aes128Gcm, 8.0), (Aead::Aes128Cmac, 1.0)],
    );
    assert!(
        v.sentence.contains(
            "mount it without `sign` (mountinfo does not show it) and set `server signing = auto`"
        ),
        "{}",
        v.sentence
    );
    // The transfer faster than hlctl's figure of one core: said.
    says(
        &signed_read(&e, &[(Aead::Aes128Cmac, 0.4)]),
        Limit::Encryption,
        "this CPU signs 400 Mbit/s per core, less than the transfer's 720 Mbit/s: \
         the protocol's own signing code is faster or uses more cores;",
    );
    // A core that signs 9 Gbit/s does not hold 720 Mbit/s; its figure is
    // still given as evidence.
    says(
        &signed_read(&e, &[(Aead::Aes128Cmac, 9.0)]),
        Limit::Elsewhere,
        "AES-128-CMAC signing via sign, which this CPU signs at 9.0 Gbit/s per core",
    );
    // Unmeasured (HMAC-SHA256, or no figure): named, its cost not measured.
    says(
        &signed_read(&hmac, &[(Aead::Aes128Gcm, 1.0)]),
        Limit::Elsewhere,
        "HMAC-SHA256 signing via sign, whose cost is not measured here",
    );
}

/// `v` names `limit` and its sentence says `text`.
fn says(v: &Verdict, limit: Limit, text: &str) {
    assert_eq!(v.limit, limit, "{}", v.sentence);
    assert!(v.sentence.contains(text), "{}", v.sentence);
}

fn cifs(opts: &str) -> MountFacts {
    mount("cifs", "//nas/media", opts)
}

fn mount(fs: &str, source: &str, opts: &str) -> MountFacts {
    let line = format!("36 25 0:44 / /mnt/media rw,relatime - {fs} {source} {opts}");
    MountFacts::of_options(&crate::mounted::parse(&line).remove(0))
}

#[test]
fn an_nfs_sync_mount_with_small_wsize_is_held_by_its_settings() {
    let m = mount(
        "nfs4",
        "nas:/tank",
        "rw,sync,vers=4.2,rsize=1048576,wsize=65536",
    );
    let s = settings::costly(&m, Direction::Write, true);
    let said: Vec<_> = s.iter().map(|s| s.said.as_str()).collect();
    assert_eq!(
        said,
        [
            "wsize=65536, below 1 MiB",
            "the mount's sync: every write waits for the server's disk",
            "one TCP connection (no nconnect)"
        ]
    );
    // Reads: rsize is 1 MiB and sync does not apply; no room, no nconnect.
    assert!(settings::costly(&m, Direction::Read, false).is_empty());
    let i = Inputs {
        protocol: "NFS4".into(),
        direction: Some(Direction::Write),
        bytes_per_second: 40e6,
        network_bps: Some(9.4e9),
        client: Some((0.1, "hlctl")),
        settings: s,
        ..Inputs::default()
    };
    let v = decide(&i);
    assert_eq!(v.limit, Limit::Settings, "{}", v.sentence);
    assert!(v.sentence.contains("mount without sync"), "{}", v.sentence);
}

/// A 32 MiB transfer through NFS whose RPCs waited `ms` in all
/// (`commit_ms` of them COMMITs) over `seconds`.
fn nfs_transfer(direction: Direction, seconds: f64, ms: u64, commit_ms: u64) -> Transfer {
    let mut t = Transfer::new(direction, 32 << 20, seconds);
    t.nfs_rpcs = Some(crate::bench::file::nfs_rpc::NfsRpcs {
        ops: 32,
        rtt_ms: ms - commit_ms,
        commits: u64::from(commit_ms > 0),
        commit_rtt_ms: commit_ms,
    });
    t
}

#[test]
fn writes_far_slower_per_byte_than_reads_name_the_servers_sync_export() {
    // 32 MiB written in 1.9 s, 1.7 s of it in WRITE round trips (53 ms per
    // MiB), read back in 0.3 s at 6 ms per MiB: the server's disk, per WRITE.
    let w = nfs_transfer(Direction::Write, 1.9, 1700, 0);
    let r = nfs_transfer(Direction::Read, 0.3, 190, 0);
    let s = settings::server_sync(&w, &r).expect("a sync export");
    assert!(
        s.said
            .contains("53.1 ms per MiB written against 5.9 ms per MiB read"),
        "{}",
        s.said
    );
    assert!(s.said.contains("`sync` export"), "{}", s.said);
    assert!(s.advice.contains("`async`"), "{}", s.advice);
    // COMMITs count with the WRITEs, and are named.
    let s = settings::server_sync(&nfs_transfer(Direction::Write, 1.9, 1700, 1200), &r).unwrap();
    assert!(s.said.contains("WRITE and COMMIT"), "{}", s.said);
    let i = Inputs {
        protocol: "NFS4".into(),
        direction: Some(Direction::Write),
        bytes_per_second: 17.7e6,
        network_bps: Some(2.0e9),
        client: Some((0.05, "hlctl")),
        settings: vec![s],
        ..Inputs::default()
    };
    let v = decide(&i);
    assert_eq!(v.limit, Limit::Settings, "{}", v.sentence);
    assert!(v.sentence.contains("sync"), "{}", v.sentence);
}

#[test]
fn an_async_export_a_fast_server_or_no_rpc_figures_name_no_sync() {
    let r = nfs_transfer(Direction::Read, 0.3, 190, 0);
    // As slow per byte as the read (an async export answering from memory).
    let w = nfs_transfer(Direction::Write, 0.4, 250, 0);
    assert!(settings::server_sync(&w, &r).is_none());
    // Four times the read, but at a copy's cost (1.5 ms per MiB).
    let fast_read = nfs_transfer(Direction::Read, 0.02, 10, 0);
    let w = nfs_transfer(Direction::Write, 0.06, 48, 0);
    assert!(settings::server_sync(&w, &fast_read).is_none());
    // Slow round trips that held the client for only a third of the write.
    let w = nfs_transfer(Direction::Write, 6.0, 1700, 0);
    assert!(settings::server_sync(&w, &r).is_none());
    // No time measured: no share of it.
    let mut instant = nfs_transfer(Direction::Write, 1.9, 1700, 0);
    instant.seconds = 0.0;
    assert!(settings::server_sync(&instant, &r).is_none());
    // Not NFS (no mountstats): nothing to say.
    let plain = Transfer::new(Direction::Write, 32 << 20, 1.9);
    assert!(settings::server_sync(&plain, &r).is_none());
}

#[test]
fn a_disk_slower_than_the_protocol_holds_a_real_copy() {
    let mut i = ssh(Direction::Write, 300.0);
    i.network_bps = Some(10e9);
    i.disk = Some((160e6, "/var/tmp".into()));
    let v = decide(&i);
    assert_eq!(v.limit, Limit::LocalDisk, "{}", v.sentence);
    assert!(
        v.sentence.contains("/var/tmp reads 160 MB/s"),
        "{}",
        v.sentence
    );
}

#[test]
fn nothing_here_holding_it_names_the_server_and_what_to_run_there() {
    let mut i = ssh(Direction::Write, 300.0);
    i.network_bps = Some(10e9);
    i.client = Some((0.3, "ssh"));
    i.disk = Some((2e9, "/var/tmp".into()));
    let v = decide(&i);
    assert_eq!(v.limit, Limit::Elsewhere, "{}", v.sentence);
    assert!(
        v.sentence.contains("`hlctl bench disk --dir /srv`"),
        "{}",
        v.sentence
    );
    assert!(v.sentence.contains("on nas"), "{}", v.sentence);
    // A slow network is said in its own units, never "0.0 Gbit/s".
    i.network_bps = Some(19e6);
    i.bytes_per_second = 1.0e6;
    let slow = decide(&i).sentence;
    assert!(slow.contains("the network carries 19 Mbit/s"), "{slow}");
    // Without raw TCP the sentence says it was not measured.
    i.network_bps = None;
    assert!(decide(&i).sentence.contains("raw TCP was not measured"));
}

/// nas as the fleet has it: /srv reads 120 MB/s and writes 90 MB/s, /tank
/// writes 600 MB/s; its CPU at 1500 events/s on 1 thread, 5000 on 4.
fn nas_in_the_fleet() -> HostFigures {
    use crate::protocol::fleet::{HostCpu, HostDisk};
    let disk = |dir: &str, pattern: &str, mb: f64| HostDisk {
        dir: dir.into(),
        pattern: pattern.into(),
        bytes_per_second: mb * 1e6,
    };
    HostFigures {
        host: "nas".into(),
        prometheus: "http://prometheus:9090".into(),
        disks: vec![
            disk("/srv", "seq-read", 120.0),
            disk("/srv", "seq-write", 90.0),
            disk("/tank", "seq-write", 600.0),
        ],
        cpu: vec![
            HostCpu {
                threads: 1,
                events_per_second: 1500.0,
            },
            HostCpu {
                threads: 4,
                events_per_second: 5000.0,
            },
        ],
    }
}

#[test]
fn the_servers_own_disk_from_the_fleet_holds_a_read_it_cannot_outrun() {
    // A read at 110 MB/s: nas's fastest read is 120 MB/s, within the 15 %.
    let mut i = ssh(Direction::Read, 110.0);
    i.network_bps = Some(10e9);
    i.client = Some((0.3, "ssh"));
    i.fleet = Some(nas_in_the_fleet());
    says(
        &decide(&i),
        Limit::ServerDisk,
        "the server's disk holds a copy (nas's last check, in the fleet's Prometheus: its fastest \
         directory /srv reads 120 MB/s; the network carries 10.0 Gbit/s)",
    );
    // A write at 300 MB/s: /tank writes 600 MB/s, so not the disk; the
    // sentence gives nas's figures instead of the commands to run there.
    let mut w = ssh(Direction::Write, 300.0);
    w.network_bps = Some(10e9);
    w.fleet = Some(nas_in_the_fleet());
    let v = decide(&w);
    says(
        &v,
        Limit::Elsewhere,
        "nas's own figures in the fleet's Prometheus do not hold it (its fastest directory \
         /tank writes 600 MB/s; its CPU 1500 events/s on 1 thread, 5000 on 4 threads)",
    );
    assert!(!v.sentence.contains("hlctl bench disk"), "{}", v.sentence);
    // A read well below what nas's disk reads: not its disk.
    i.bytes_per_second = 90e6;
    assert_eq!(decide(&i).limit, Limit::Elsewhere);
    // Far above it (the server's page cache served this file): a real
    // copy of a cold file stops at that disk, as a local disk's does.
    i.bytes_per_second = 400e6;
    says(
        &decide(&i),
        Limit::ServerDisk,
        "the server's disk holds a copy",
    );
}

#[test]
fn a_local_directory_is_its_own_disk() {
    let i = Inputs {
        protocol: "LOCAL EXT4".into(),
        direction: Some(Direction::Read),
        bytes_per_second: 400e6,
        place: "/var/tmp".into(),
        local: true,
        ..Inputs::default()
    };
    let v = decide(&i);
    assert_eq!(v.limit, Limit::LocalDisk);
    assert_eq!(
        v.sentence,
        "LOCAL EXT4 read 400 MB/s: the local disk itself (/var/tmp: no network in the path)"
    );
}

fn kernel(threads: &[(&str, f64)]) -> Vec<KernelThreadUse> {
    threads
        .iter()
        .map(|&(name, cores)| KernelThreadUse {
            name: name.into(),
            cores,
        })
        .collect()
}

#[test]
fn a_kernel_thread_that_fills_a_core_holds_a_mount_and_is_named() {
    // An SMB read: hlctl's thread waits, cifsd receives at 0.93 of a core.
    let mut i = Inputs {
        protocol: "CIFS".into(),
        direction: Some(Direction::Read),
        bytes_per_second: 300e6,
        network_bps: Some(9.4e9),
        client: Some((0.08, "hlctl")),
        kernel: kernel(&[("cifsd", 0.93), ("kworker/u4:1-cifsiod", 0.2)]),
        place: "/mnt/media".into(),
        ..Inputs::default()
    };
    let v = decide(&i);
    assert_eq!(v.limit, Limit::ClientCpu, "{}", v.sentence);
    assert!(
        v.sentence
            .contains("the client CPU holds it (the kernel's cifsd used 0.93 of a core;"),
        "{}",
        v.sentence
    );
    // Sealed with an AEAD this CPU seals at 8 Gbit/s per core: 2.4 Gbit/s
    // is under half of that, but cifsd (which decrypts) fills its core and
    // the cipher's share of it is over a quarter: encryption holds it.
    i.encryption = Some(Encryption {
        named: "AES-128-GCM via seal".into(),
        aead: Some(Aead::Aes128Gcm),
    });
    i.crypto = crypto(&[(Aead::Aes128Gcm, 8.0)]);
    let v = decide(&i);
    assert_eq!(v.limit, Limit::Encryption, "{}", v.sentence);
    // Below the floor of a busy core, the kernel's threads are evidence.
    i.encryption = None;
    i.kernel = kernel(&[("cifsd", 0.41), ("kworker/u4:1-cifsiod", 0.12)]);
    let v = decide(&i);
    assert_eq!(v.limit, Limit::Elsewhere, "{}", v.sentence);
    assert!(
        v.sentence.contains(
            "hlctl used 0.08 of a core; the kernel's threads: cifsd 0.41, kworker/u4:1-cifsiod 0.12 of a core"
        ),
        "{}",
        v.sentence
    );
}
