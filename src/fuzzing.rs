//! Fuzz entry points: one function per fuzz target (`fuzz/fuzz_targets/`),
//! each feeding bytes from outside to the real parsers. The fuzz crate and
//! `tests/fuzz_regression.rs` (every committed corpus input) call the same
//! functions. Bad input must give an error, never a panic, a hang or an
//! unbounded allocation; where a decoder has a cheap invariant (what decoded
//! encodes and decodes again to the same value) it is asserted here, so a
//! broken invariant is a crash too.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde_json::Value;
use zbus::OwnedVariant;
use zbus::wire::LE;
use zbus::wire::serialized::{Context, Data};

use crate::bench::net::control::{
    self, COOKIE_SIZE, Cookie, MAX_PARAMS_JSON, MAX_RESULTS_JSON, State,
};
use crate::bench::net::error::NetError;
use crate::bench::net::params::TestParams;
use crate::bench::net::results::PeerResults;
use crate::dbus::wire::records::{Dict, OwnedDict};
use crate::nic::netlink::attr::Attrs;
use crate::nic::netlink::ethtool::{
    bitset, channels, coalesce, features, header, linkmodes, pause, rings, rss, strset,
};
use crate::nic::netlink::message::{NLMSG_ERROR, parse_error, parse_messages};
use crate::nic::netlink::{genl, monitor, rtnl};

/// A fuzz target: bytes in, a panic on a bug.
pub type Target = fn(&[u8]);

/// The fuzz targets, by name (the names of `fuzz/fuzz_targets/*.rs` and
/// `fuzz/corpus/*/`).
pub const TARGETS: &[(&str, Target)] = &[
    ("netlink_rtnl", netlink_rtnl),
    ("netlink_ethtool", netlink_ethtool),
    ("iperf_server", iperf_server),
    ("iperf_client", iperf_client),
    ("dbus_asv", dbus_asv),
    ("config", config),
    ("sysctl_d", sysctl_d),
    ("mountinfo", mountinfo),
    ("proc_sys", proc_sys),
    ("history_json", history_json),
    ("sys_values", sys_values),
    ("proc_cpu", proc_cpu),
];

fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}

/// A datagram of rtnetlink messages: the nlmsghdr walk, NLMSG_ERROR (with
/// extended ack), RTM_NEWLINK as `Netlink::links` decodes it and as the link
/// monitor does.
pub fn netlink_rtnl(data: &[u8]) {
    let Ok(msgs) = parse_messages(data) else {
        return;
    };
    for m in &msgs {
        if m.kind == NLMSG_ERROR {
            let _ = parse_error(m.flags, &m.payload);
        }
        if let Ok(link) = rtnl::parse_link(&m.payload)
            && let Some(mac) = &link.mac
        {
            assert!(mac.chars().all(|c| c.is_ascii_hexdigit() || c == ':'));
        }
        let _ = monitor::parse_link(m.kind, &m.payload);
    }
}

/// A datagram of ethtool genetlink replies: the family lookup, every GET
/// reply decoder (header, rings, pause, coalesce, channels, link modes/info/
/// state, features' bitsets), the string sets, the notification decoder, and
/// any nested attribute as a bitset.
pub fn netlink_ethtool(data: &[u8]) {
    let Ok(msgs) = parse_messages(data) else {
        return;
    };
    let _ = genl::parse_family(&msgs);
    for m in &msgs {
        let _ = monitor::parse_ethtool(&m.payload);
        let Ok((_cmd, attrs)) = genl::split(&m.payload) else {
            continue;
        };
        let _ = header::parse(attrs);
        let _ = rings::parse(attrs);
        let _ = pause::parse(attrs);
        let _ = coalesce::parse(attrs);
        let _ = channels::parse(attrs);
        let _ = rss::parse(attrs);
        let _ = linkmodes::parse(attrs);
        let _ = linkmodes::parse_port(attrs);
        let _ = linkmodes::parse_detected(attrs);
        let names = strset::parse(attrs, strset::ETH_SS_FEATURES).unwrap_or_default();
        if let Ok(raw) = features::parse_raw(attrs) {
            let f = features::to_features(&raw, &names);
            assert!(f.keys().all(|k| names.contains(k)));
        }
        for a in Attrs::new(attrs).map_while(Result::ok) {
            if a.nested
                && let Ok(set) = bitset::Bitset::parse(a.payload)
            {
                let _ = set.set_names(Some(&names));
                let _ = set.mask_names(None);
                let on = set.set_indices();
                assert!(on.len() <= set.bits.len());
            }
        }
    }
}

/// Reads a byte stream as the control connection would, in order.
struct Stream<'a>(&'a [u8]);

impl Stream<'_> {
    fn take<const N: usize>(&mut self, what: &str) -> Result<[u8; N], NetError> {
        let Some((head, rest)) = self.0.split_first_chunk::<N>() else {
            return Err(NetError::ControlClosed {
                during: format!("waiting for {what}"),
            });
        };
        self.0 = rest;
        Ok(*head)
    }

    /// `control::read_json` over the bytes.
    fn json(&mut self, limit: u32, what: &str) -> Result<Value, NetError> {
        let len = control::json_len(self.take::<4>(what)?, limit, what)?;
        if self.0.len() < len {
            return Err(NetError::ControlClosed {
                during: format!("waiting for {what}"),
            });
        }
        let (body, rest) = self.0.split_at(len);
        self.0 = rest;
        control::json_body(body, what)
    }

    /// `control::read_state` over the bytes.
    fn state(&mut self, what: &str) -> Result<u8, NetError> {
        let [b] = self.take::<1>(what)?;
        control::peer_failure(b, || self.take::<8>("the error numbers after SERVER_ERROR"))?;
        Ok(b)
    }
}

/// What a client sends to hlctl's iperf3 server, in the order the session
/// reads it: cookie, parameter block, state bytes (TEST_END or
/// CLIENT_TERMINATE), the client's results, IPERF_DONE. Decoded parameters
/// and results must encode and decode to themselves.
pub fn iperf_server(data: &[u8]) {
    let mut s = Stream(data);
    let run = |s: &mut Stream| -> Result<(), NetError> {
        let cookie = Cookie::from_bytes(s.take::<COOKIE_SIZE>("the client's cookie")?);
        assert!(cookie.matches(&cookie));
        let v = s.json(MAX_PARAMS_JSON, "parameter block")?;
        let p = TestParams::from_json(&v)?;
        let again = TestParams::from_json(&p.to_json()).expect("our own parameter block decodes");
        // Our client always names a client_version (3.12 unless set).
        let mut want = p.clone();
        want.client_version.get_or_insert_with(|| "3.12".into());
        assert_eq!(again, want);
        assert!(p.total_streams() >= 1);
        let [b] = s.take::<1>("TEST_END")?;
        let _ = control::describe_byte(b);
        match State::from_byte(b) {
            Some(State::TestEnd) => {}
            _ => return Ok(()),
        }
        let v = s.json(MAX_RESULTS_JSON, "results from the client")?;
        let r = PeerResults::from_json(&v)?;
        let again = PeerResults::from_json(&r.to_json()).expect("our own results decode");
        assert_eq!(again, r);
        let _ = s.take::<1>("IPERF_DONE")?;
        Ok(())
    };
    let _ = run(&mut s);
}

/// What hlctl's iperf3 client reads from a server: the state bytes of the
/// exchange (ACCESS_DENIED, SERVER_ERROR with its numbers, SERVER_TERMINATE)
/// and the server's results.
pub fn iperf_client(data: &[u8]) {
    let mut s = Stream(data);
    let run = |s: &mut Stream| -> Result<(), NetError> {
        for want in [
            State::ParamExchange,
            State::CreateStreams,
            State::TestStart,
            State::TestRunning,
            State::ExchangeResults,
        ] {
            let b = s.state(&want.describe())?;
            if b != want.byte() {
                let _ = control::describe_byte(b);
                return Ok(());
            }
        }
        let v = s.json(MAX_RESULTS_JSON, "results from the server")?;
        let r = PeerResults::from_json(&v)?;
        for st in &r.streams {
            assert!(r.stream(st.id).is_some());
        }
        let again = PeerResults::from_json(&r.to_json()).expect("our own results decode");
        assert_eq!(again, r);
        s.state(&State::DisplayResults.describe())?;
        Ok(())
    };
    let _ = run(&mut s);
}

/// Decode `data` as a D-Bus message body of signature `a{sv}` (little endian).
fn asv(data: &[u8]) -> Option<OwnedDict> {
    let d = Data::new(data, Context::new(LE, 0));
    d.deserialize::<HashMap<String, OwnedVariant>>()
        .ok()
        .map(|(m, _)| m)
}

fn owned_dict(d: Dict) -> OwnedDict {
    d.into_iter()
        .map(|(k, v)| (k, crate::dbus::wire::typed::owned(v)))
        .collect()
}

/// The bus's `a{sv}` decoders, each on the same dictionary: ApplyChanges'
/// settings and options, StartBenchmark's params for every kind, Doctor,
/// Report, Tune's options and its params JSON, the history filter and
/// compare options, and the rows the client decodes. Whatever decodes must
/// encode and decode to itself.
pub fn dbus_asv(data: &[u8]) {
    let Some(m) = asv(data) else {
        return;
    };
    let _ = crate::dbus::wire::bounds::check_dict("fuzz", &m);
    asv_changes(&m);
    asv_params(&m);
    asv_options(&m);
    asv_records(&m);
}

/// `ApplyChanges`' settings: a decoded change set encodes back to itself.
fn asv_changes(m: &OwnedDict) {
    use crate::dbus::wire::settings;
    if let Ok(cs) = settings::decode_changes(m) {
        let back: OwnedDict = settings::encode_changes(&cs)
            .into_iter()
            .map(|(k, v)| (k, crate::dbus::wire::typed::owned(v)))
            .collect();
        // `link.advertise` is a set: encoded sorted.
        let sorted = |mut cs: crate::nic::model::ChangeSet| {
            if let Some(a) = cs.link.as_mut().and_then(|l| l.advertise.as_mut()) {
                a.sort();
            }
            cs
        };
        assert_eq!(
            settings::decode_changes(&back).ok().map(sorted),
            Some(sorted(cs))
        );
    }
    let _ = settings::decode_flags(m, &["dry_run", "persist"]);
}

/// `StartBenchmark`'s parameters of every kind.
fn asv_params(m: &OwnedDict) {
    use crate::dbus::wire::{bench, params};
    if let Ok(p) = params::decode::<bench::NetParams>("net", m) {
        let _ = p.config();
    }
    if let Ok(p) = params::decode::<bench::CpuParams>("cpu", m) {
        let _ = p.config();
    }
    if let Ok(p) = params::decode::<bench::DiskParams>("disk", m) {
        let _ = p.config();
    }
    if let Ok(p) = params::decode::<bench::StressParams>("stress", m) {
        let _ = p.config();
    }
}

/// The options of `Doctor`, `Report`, `StartBenchmark` and `Tune` (its
/// `params` JSON through the daemon's own parser); doctor's and report's
/// encode back to themselves.
fn asv_options(m: &OwnedDict) {
    use crate::dbus::wire::{doctor, report, start};
    if let Ok(p) = doctor::DoctorParams::decode(m) {
        assert_eq!(
            doctor::DoctorParams::decode(&owned_dict(p.encode())).ok(),
            Some(p)
        );
    }
    if let Ok(p) = report::ReportParams::decode(m) {
        assert_eq!(
            report::ReportParams::decode(&owned_dict(p.encode())).ok(),
            Some(p)
        );
    }
    let _ = start::BenchOptions::decode(m);
    if let Ok(o) = start::TuneOptions::decode(m) {
        assert_eq!(
            start::TuneOptions::decode(&owned_dict(o.encode())).ok(),
            Some(o.clone())
        );
        let _ = crate::dbus::daemon::tune::check(o.params);
    }
}

/// `ListHistory`'s filter, `Compare`'s options, and the replies a client
/// decodes (a history row encodes back to itself).
fn asv_records(m: &OwnedDict) {
    use crate::dbus::wire::records;
    if let Ok(f) = records::HistoryFilter::decode(m) {
        assert_eq!(
            records::HistoryFilter::decode(&owned_dict(f.encode())).ok(),
            Some(f)
        );
    }
    let _ = records::compare_threshold(m);
    if let Ok(r) = records::decode_row(m) {
        assert_eq!(
            records::decode_row(&owned_dict(records::encode_row(&r))).ok(),
            Some(r)
        );
    }
    let _ = records::decode_baseline(m);
    let _ = records::decode_comparison(m);
    let _ = records::decode_status(m);
    let _ = records::decode_rollback(m);
}

/// `/etc/hlctl/hlctl.toml`.
pub fn config(data: &[u8]) {
    let t = text(data);
    let (_cfg, problems) = crate::config::load::parse(Path::new("hlctl.toml"), &t);
    assert!(problems.iter().all(|p| !p.to_string().is_empty()));
}

/// A sysctl.d file: its assignments, and our merge of values into it (the
/// merged file must hold each value we set, once).
pub fn sysctl_d(data: &[u8]) {
    let t = text(data);
    let found = crate::sysctl::persist::parse_assignments(&t);
    let values: BTreeMap<String, String> = found
        .into_iter()
        .filter(|(k, _)| crate::sysctl::procfs::is_well_formed(k))
        .collect();
    let merged = crate::sysctl::persist::merge(&t, &values);
    let again = crate::sysctl::persist::parse_assignments(&merged);
    for (k, v) in &values {
        let got: Vec<&String> = again
            .iter()
            .filter(|(k2, _)| k2 == k)
            .map(|(_, v)| v)
            .collect();
        assert_eq!(got, vec![v], "{k} after merging");
    }
}

/// `/proc/self/mountinfo`, and the doctor's checks of each mount; the
/// same bytes as `/proc/self/mountstats`, read for each device line's
/// mount point as `bench file` reads an NFS mount's RPCs.
pub fn mountinfo(data: &[u8]) {
    use crate::bench::file::nfs_rpc;
    use crate::doctor::mounts;
    let t = text(data);
    for (point, _) in t.lines().filter_map(nfs_rpc::device_line) {
        if let Some(s) = nfs_rpc::parse(&t, &point) {
            assert_eq!(s.until(&s, true), nfs_rpc::NfsRpcs::default());
        }
    }
    let all = crate::mounted::parse(&t);
    for m in &all {
        let mut out = crate::doctor::finding::Outcome::default();
        mounts::check(m, &mut out);
        let _ = mounts::option_problems(m);
        if let Some(found) = crate::mounted::find(&all, Path::new(&m.mount_point)) {
            assert!(Path::new(&m.mount_point).starts_with(&found.mount_point));
        }
    }
}

/// The text readers of `/proc` and `/sys`: a sysctl value, /proc/meminfo,
/// /proc/PID/stat, /proc/net/route and ipv6_route.
pub fn proc_sys(data: &[u8]) {
    let t = text(data);
    let n = crate::sysctl::keys::normalise(&t);
    assert_eq!(crate::sysctl::keys::normalise(&n), n);
    let _ = crate::bench::stress::parse_mem_available(&t);
    let _ = crate::tune::checkpoint::parse_process_start(&t);
    for r in crate::path::route::parse_v4(&t) {
        assert!(r.gateway.parse::<std::net::Ipv4Addr>().is_ok());
    }
    for r in crate::path::route::parse_v6(&t) {
        assert!(r.gateway.parse::<std::net::Ipv6Addr>().is_ok());
    }
}

/// The per-CPU files of `/proc` (`stat`, `softirqs`, `net/softnet_stat`,
/// `interrupts`, a task's `stat`): each parser on the same text. Every
/// parsed row fits the header it was read under, and a network device's
/// queue vectors are rows of the file.
pub fn proc_cpu(data: &[u8]) {
    use crate::cpu::{interrupts, softirqs, softnet, stat, tasks};
    let t = text(data);
    if let Ok(v) = stat::parse(&t) {
        for (_, c) in &v {
            assert!(c.total() >= c.idle);
            assert_eq!(c.since(c), stat::CpuTimes::default());
        }
    }
    let header = t.lines().next().map_or(0, |l| l.split_whitespace().count());
    if let Ok(v) = softirqs::parse(&t) {
        assert_eq!(v.len(), header);
    }
    let _ = softnet::parse(&t);
    if let Ok(rows) = interrupts::parse(&t) {
        assert!(
            rows.iter()
                .all(|r| !r.counts.is_empty() && r.counts.len() <= header)
        );
        let d = interrupts::DeviceIds {
            ifname: "eth0".into(),
            virtio: Some("virtio0".into()),
            driver: Some("iwlwifi".into()),
            msi_irqs: vec![24, 25],
        };
        for (r, name) in interrupts::queue_vectors(&rows, &d) {
            assert!(r.actions.iter().any(|a| a == name));
            assert!(r.counts.iter().all(|c| r.total() >= c.1));
        }
    }
    if let Ok(s) = tasks::parse(&t) {
        assert!(t.contains(&s.name));
    }
}

/// Values read from `/sys`: each line of the input is one file's text. Per
/// CPU four lines (governor, scaling driver, maximum frequency, throttle
/// count) fold into the doctor's CPU data; every line is also a sensor's
/// temperature and a throttle counter. The totals never fall below any one
/// count added (they saturate instead of overflowing).
pub fn sys_values(data: &[u8]) {
    use crate::bench::stress::sensors::{ThrottleTotals, parse_milli_c};
    use crate::doctor::cpu::{CpuFiles, add_cpu};
    let t = text(data);
    let lines: Vec<&str> = t.split('\n').collect();
    let mut d = crate::doctor::inputs::CpuData::default();
    for (n, cpu) in lines.chunks(4).enumerate() {
        let get = |i: usize| cpu.get(i).map(|s| s.to_string());
        let before = d.throttle_before.unwrap_or(0);
        add_cpu(
            &mut d,
            n as u32,
            CpuFiles {
                governor: get(0),
                driver: get(1),
                max_freq: get(2),
                throttle_count: get(3),
            },
        );
        assert!(d.throttle_before.unwrap_or(0) >= before);
    }
    let mut totals = ThrottleTotals::default();
    for l in &lines {
        if let Some(c) = parse_milli_c(l) {
            assert!(c.is_finite());
        }
        let v = l.trim().parse::<u64>().unwrap_or(0);
        totals.add((v, v), Some((v, v)));
        assert!(totals.core_count >= v && totals.package_count >= v);
    }
}

/// JSON stored by hlctl and read back: the history database's settings
/// snapshot and result (as `History::list` and `compare` read them, then the
/// check report, the bus headline and the bus row), the tune journal and last
/// tune, and the NIC state file.
pub fn history_json(data: &[u8]) {
    use crate::history::settings::{Snapshot, diff};
    let t = text(data);
    let settings: Snapshot = serde_json::from_str(&t).unwrap_or_default();
    let result: Value = serde_json::from_str(&t).unwrap_or(Value::Null);
    let _ = diff(&settings, &Snapshot::default());
    let _ = diff(&Snapshot::default(), &settings);
    let _ = serde_json::from_value::<crate::check::CheckReport>(result.clone());
    for (kind, _) in crate::dbus::wire::headline::KEYS {
        let _ = crate::dbus::wire::headline::headline(kind, &result);
    }
    let row = crate::history::store::StoredResult {
        id: 1,
        ts: 0,
        kind: "doctor".into(),
        host: String::new(),
        kernel: String::new(),
        interface: None,
        peer: None,
        uid: None,
        metrics: Vec::new(),
        settings,
        result,
    };
    let back = crate::dbus::wire::records::decode_row(&owned_dict(
        crate::dbus::wire::records::encode_row(&row),
    ));
    assert_eq!(back.ok(), Some(row));
    let _ = serde_json::from_str::<crate::tune::checkpoint::Journal>(&t);
    let _ = serde_json::from_str::<crate::tune::persist::LastTune>(&t);
    let _ = serde_json::from_str::<crate::nic::persist::State>(&t);
}

/// `HLCTL_WRITE_SEEDS=1 cargo test --lib fuzzing::seeds -- --ignored` writes
/// the seeds made with our own encoders into fuzz/corpus/ (the netlink and
/// iperf3 ones are captured: fuzz/seeds/capture.sh).
#[cfg(test)]
mod seeds {
    use std::collections::HashMap;

    use serde_json::json;
    use zbus::Variant;
    use zbus::wire::LE;
    use zbus::wire::serialized::Context;

    use crate::dbus::wire::records::{Dict, HistoryFilter};
    use crate::dbus::wire::{bench, doctor, params, report, settings};

    fn body<T: serde::Serialize + zbus::wire::DynamicType>(d: &T) -> Vec<u8> {
        zbus::wire::to_bytes(Context::new(LE, 0), d)
            .expect("a{sv} encodes")
            .to_vec()
    }

    fn write(target: &str, name: &str, bytes: &[u8]) {
        let dir = format!("{}/fuzz/corpus/{target}", env!("CARGO_MANIFEST_DIR"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(format!("{dir}/{name}"), bytes).unwrap();
    }

    #[test]
    #[ignore = "writes fuzz/corpus/: run by hand with HLCTL_WRITE_SEEDS=1"]
    fn write_seeds() {
        if std::env::var_os("HLCTL_WRITE_SEEDS").is_none() {
            return;
        }
        // dbus_asv: each decoder's own encoding, and the unit tests' bad values.
        let words: Vec<String> =
            "mtu 9000 txqueuelen 5000 gso-max-size 131072 ring rx 4096 tx 512 \
            rx-mini 1 rx-jumbo 2 pause autoneg off rx on tx off feature gro off rx-gro-hw on \
            link speed 1000 duplex full autoneg on advertise 1000baseT/Full 100baseT/Full \
            channels rx 1 tx 2 other 1 combined 4 \
            coalesce rx-usecs 50 tx-usecs 60 rx-frames 7 tx-frames 8 adaptive-rx on adaptive-tx off"
                .split_whitespace()
                .map(str::to_string)
                .collect();
        let cs = crate::nic::change::parse(&words).unwrap();
        write(
            "dbus_asv",
            "settings",
            &body(&settings::encode_changes(&cs)),
        );
        let mut bad: Dict = HashMap::new();
        bad.insert("mtu".into(), Variant::I32(-5));
        bad.insert("txqueuelen".into(), Variant::U64(1 << 40));
        bad.insert("ring.rx".into(), Variant::from("big".to_string()));
        bad.insert("feature.bad name".into(), Variant::Bool(true));
        bad.insert("dry_run".into(), Variant::Bool(true));
        write("dbus_asv", "settings-bad", &body(&bad));
        let net = bench::NetParams {
            host: "127.0.0.1".into(),
            port: Some(5201),
            udp: true,
            time_s: Some(3),
            parallel: Some(2),
            direction: Some("bidir".into()),
            bitrate_bps: Some(1_000_000),
            length: Some(1400),
            window: Some(262144),
            omit_s: Some(1),
            interval_s: Some(0.5),
            busy_window_s: None,
            skip_rx_copy: true,
            fq_rate_bps: Some(1_000_000_000),
            zerocopy: false,
            gsro: true,
            cntl_ka: Some("20/5/3".into()),
        };
        write(
            "dbus_asv",
            "bench-net",
            &body(&params::encode(&net).unwrap()),
        );
        let cpu = bench::CpuParams {
            threads: Some(2),
            time_s: Some(1.5),
            max_prime: Some(10000),
            no_single: true,
        };
        write(
            "dbus_asv",
            "bench-cpu",
            &body(&params::encode(&cpu).unwrap()),
        );
        let disk = bench::DiskParams {
            dir: "/srv".into(),
            rw: Some("randrw".into()),
            bs: Some(4096),
            size: Some(1 << 20),
            iodepth: Some(8),
            jobs: Some(2),
            runtime_s: Some(2.0),
            time_based: Some(true),
            direct: Some(true),
            engine: Some("io_uring".into()),
            rwmix_read: Some(70),
        };
        write(
            "dbus_asv",
            "bench-disk",
            &body(&params::encode(&disk).unwrap()),
        );
        let stress = bench::StressParams {
            time_s: Some(2.0),
            cpu: Some(1),
            vm: Some(1),
            vm_bytes: None,
            vm_percent: Some(10.0),
            interval_s: Some(1.0),
        };
        write(
            "dbus_asv",
            "bench-stress",
            &body(&params::encode(&stress).unwrap()),
        );
        let d = doctor::DoctorParams {
            request: crate::ops::doctor::DoctorRequest {
                interfaces: vec!["eth0".into()],
                peer: Some("nas.lan:5201".into()),
                dirs: vec!["/srv".into()],
                ..Default::default()
            },
            ..Default::default()
        };
        write("dbus_asv", "doctor", &body(&d.encode()));
        let r = report::ReportParams {
            request: crate::ops::report::ReportRequest {
                peers: vec!["[fd00::1]:5201".into()],
                dirs: vec!["/mnt/nas".into()],
                ..Default::default()
            },
            ..Default::default()
        };
        write("dbus_asv", "report", &body(&r.encode()));
        let tune = json!({"interface": "eth0", "peer": "nas.lan", "runs": 3, "time_s": 5,
            "min_gain_percent": 3.0, "confirm_timeout_s": 60, "dry_run": true,
            "tries": ["ring rx 4096", "sysctl net.core.rmem_max=16777216"]});
        let mut t: Dict = HashMap::new();
        t.insert("params".into(), Variant::from(tune.to_string()));
        t.insert("detached".into(), Variant::Bool(true));
        write("dbus_asv", "tune", &body(&t));
        let f = HistoryFilter {
            kind: Some(crate::history::Kind::parse("net").unwrap()),
            since: Some(1_700_000_000),
            limit: 20,
        };
        let mut fd = f.encode();
        fd.insert("threshold".into(), Variant::F64(5.0));
        write("dbus_asv", "history-filter", &body(&fd));
        write(
            "dbus_asv",
            "history-row",
            &body(&crate::dbus::wire::records::encode_row(&row())),
        );

        // history_json: the stored settings and results.
        let snap: crate::history::settings::Snapshot = [
            ("eth0 mtu".to_string(), "9000".to_string()),
            ("eth0 ring.rx".to_string(), "4096".to_string()),
            (
                "sysctl net.core.rmem_max".to_string(),
                "16777216".to_string(),
            ),
        ]
        .into_iter()
        .collect();
        write(
            "history_json",
            "settings",
            serde_json::to_string(&snap).unwrap().as_bytes(),
        );
        for (name, v) in [
            (
                "net",
                json!({"sent_bps": 9.5e9, "received_bps": 9.4e9, "retransmits": null, "reverse": null}),
            ),
            (
                "tune",
                json!({"outcome": "done", "interface": "eth0",
                "steps": [{"status": "kept"}, {"status": "reverted"}, {"status": "kept"}],
                "findings": [{"id": "offload-off", "severity": "warning", "interface": "eth0", "title": "t"}]}),
            ),
            ("failure", json!({"error": "boom", "class": "invalid"})),
            (
                "doctor",
                json!({"findings": [{"id": "link-half-duplex", "severity": "critical",
                "interface": "eth0", "title": "t"}], "passed": [{}, {}], "not_checked": []}),
            ),
            (
                "report",
                json!({"network": [{"peer": "nas", "upload_bps": 9.4e8, "download_bps": null}],
                "disk": [{"subject": "/srv", "figures": [{"name": "seq write", "value": 400.0, "unit": "MB/s"}]}],
                "cpu": [{"subject": "single", "figures": [{"name": "events/s", "value": 4700.0, "unit": "events/s"}]}]}),
            ),
        ] {
            write(
                "history_json",
                &format!("result-{name}"),
                v.to_string().as_bytes(),
            );
        }

        // iperf_server: hlctl's own parameter block for UDP (iperf3 ones are captured).
        let p = crate::bench::net::params::TestParams::from_json(
            &json!({"udp": true, "time": 2, "parallel": 2, "reverse": true, "len": 1460,
                "bandwidth": 1048576, "client_version": "3.12"}),
        )
        .unwrap();
        let block = p.to_json().to_string();
        let mut s = b"hlctlseedcookie000000000000000000000\0".to_vec();
        s.extend_from_slice(&(block.len() as u32).to_be_bytes());
        s.extend_from_slice(block.as_bytes());
        s.push(4);
        write("iperf_server", "hlctl-udp", &s);

        // 3.21's UDP exchange with an omit period: its captured parameter
        // block (omit set), and results in its layout with `omitted_errors`
        // and `omitted_packets`, to both targets.
        let path = format!(
            "{}/tests/fixtures/iperf3-3.21/params-udp.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let mut p: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        p["omit"] = json!(1);
        let results = |errors: i64, omitted_errors: i64| {
            json!({"cpu_util_total": 1.5, "cpu_util_user": 0.5, "cpu_util_system": 1.0,
                "sender_has_retransmits": 0, "streams": [{"id": 1, "bytes": 252000,
                "retransmits": -1, "jitter": 0.0012, "errors": errors,
                "omitted_errors": omitted_errors, "packets": 300, "omitted_packets": 100,
                "start_time": 0, "end_time": 1.0}]})
            .to_string()
        };
        let framed = |v: &str| {
            let mut b = (v.len() as u32).to_be_bytes().to_vec();
            b.extend_from_slice(v.as_bytes());
            b
        };
        let mut s = b"hlctlseedcookie000000000000000000000\0".to_vec();
        s.extend(framed(&p.to_string()));
        s.push(4);
        s.extend(framed(&results(0, 0)));
        s.push(16);
        write("iperf_server", "iperf3-321-udp-omit", &s);
        // iperf_client's 3.21 seed is the capture itself
        // (tests/fixtures/iperf3-3.21/server-udp-omit.bin).
        let captured = format!(
            "{}/tests/fixtures/iperf3-3.21/server-udp-omit.bin",
            env!("CARGO_MANIFEST_DIR")
        );
        write(
            "iperf_client",
            "iperf3-321-udp-omit",
            &std::fs::read(captured).unwrap(),
        );
    }

    fn row() -> crate::history::store::StoredResult {
        crate::history::store::StoredResult {
            id: 7,
            ts: 1_700_000_000,
            kind: "doctor".into(),
            host: "box".into(),
            kernel: "6.1.0".into(),
            interface: Some("eth0".into()),
            peer: Some("nas".into()),
            uid: None,
            metrics: vec![crate::history::store::Metric::new(
                "bps", "nas", 9.4e8, "bit/s",
            )],
            settings: [("eth0 mtu".to_string(), "1500".to_string())]
                .into_iter()
                .collect(),
            result: json!({"findings": [], "passed": [{}]}),
        }
    }
}
