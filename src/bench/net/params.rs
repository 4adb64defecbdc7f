//! The test parameters the client sends after PARAM_EXCHANGE, and their limits.

use serde_json::{Map, Value, json};

use super::control::json_i64;
use super::error::{self as e, NetError};

/// Default TCP block (iperf3's `DEFAULT_TCP_BLKSIZE`).
pub(crate) const DEFAULT_TCP_LEN: u32 = 128 * 1024;
/// UDP block when the control connection's MSS is unknown.
pub(crate) const DEFAULT_UDP_LEN: u32 = 1460;
/// Smallest UDP block: timestamp (8) and a 64-bit counter (8).
pub(crate) const MIN_UDP_LEN: u32 = 16;
/// Largest UDP payload over IPv4.
pub(crate) const MAX_UDP_LEN: u32 = 65507;
/// Largest TCP block (iperf3's `MAX_BLOCKSIZE`).
pub(crate) const MAX_TCP_LEN: u32 = 1024 * 1024;
/// Most parallel streams (iperf3's `MAX_STREAMS`).
pub(crate) const MAX_STREAMS: u32 = 128;
/// Longest test (iperf3's `MAX_TIME`).
pub(crate) const MAX_TIME_S: u32 = 86_400;
/// Longest omit period (iperf3's `MAX_OMIT_TIME`).
pub(crate) const MAX_OMIT_S: u32 = 600;
/// Largest socket buffer (iperf3's `MAX_TCP_BUFFER`).
pub(crate) const MAX_WINDOW: u32 = 512 * 1024 * 1024;
/// Largest MSS (iperf3's `MAX_MSS`).
pub(crate) const MAX_MSS: u32 = 9 * 1024;
/// iperf3's default UDP rate: 1 Mibit/s.
pub(crate) const DEFAULT_UDP_RATE: u64 = 1024 * 1024;

/// Transport protocol of the data streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    Tcp,
    Udp,
}

/// Which way the data flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TestDirection {
    /// Client sends, server receives (iperf3's default).
    Forward,
    /// Server sends, client receives (`-R`).
    Reverse,
    /// Both at once (`--bidir`), `parallel` streams each way.
    Bidir,
}

/// Largest UDP GSO/GRO buffer (iperf3 3.21's `GSO_BF_MAX_SIZE` and
/// `GRO_BF_MAX_SIZE`: the largest UDP payload).
pub(crate) const GSRO_BF_MAX: u32 = MAX_UDP_LEN;

/// iperf3 3.21's UDP segmentation keys: `gso`, `gso_dg_size` (one datagram),
/// `gso_bf_size` (one send: whole datagrams), `gro`, `gro_bf_size` (one receive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Gsro {
    pub(crate) gso: bool,
    pub(crate) gso_dg_size: u32,
    pub(crate) gso_bf_size: u32,
    pub(crate) gro: bool,
    pub(crate) gro_bf_size: u32,
}

impl Gsro {
    /// What a 3.21 client without `--gsro` sends.
    pub(crate) const OFF: Gsro = Gsro {
        gso: false,
        gso_dg_size: 0,
        gso_bf_size: GSRO_BF_MAX,
        gro: false,
        gro_bf_size: GSRO_BF_MAX,
    };

    /// `--gsro` with datagrams of `len` bytes: a send holds as many whole
    /// datagrams as fit in [`GSRO_BF_MAX`] (3.21's sizing).
    pub(crate) fn on(len: u32) -> Gsro {
        let dg = len.max(1);
        Gsro {
            gso: true,
            gso_dg_size: dg,
            gso_bf_size: (GSRO_BF_MAX / dg).max(1) * dg,
            gro: true,
            gro_bf_size: GSRO_BF_MAX,
        }
    }
}

impl Default for Gsro {
    fn default() -> Self {
        Gsro::OFF
    }
}

/// The parameter block, as exchanged on the wire.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TestParams {
    pub(crate) protocol: Protocol,
    pub(crate) omit_s: u32,
    pub(crate) time_s: u32,
    /// `-n`: total bytes to send (0 = unused).
    pub(crate) num_bytes: u64,
    /// `-k`: total blocks to send (0 = unused).
    pub(crate) block_count: u64,
    pub(crate) parallel: u32,
    pub(crate) direction: TestDirection,
    pub(crate) window: Option<u32>,
    pub(crate) len: u32,
    /// Per-stream target rate in bit/s (0 = unlimited).
    pub(crate) bandwidth_bps: u64,
    pub(crate) mss: Option<u32>,
    pub(crate) nodelay: bool,
    pub(crate) udp_counters_64bit: bool,
    pub(crate) congestion: Option<String>,
    pub(crate) client_version: Option<String>,
    /// Sent by hlctl clients (iperf3 ignores unknown keys): such a client
    /// counts received bytes until the server's streams close.
    pub(crate) hlctl_version: Option<String>,
    /// 3.19's `skip_rx_copy`: this side's TCP receivers discard data
    /// without copying it (MSG_TRUNC).
    pub(crate) skip_rx_copy: bool,
    /// `--fq-rate`'s `fqrate`: each stream's socket pacing rate in bit/s
    /// (SO_MAX_PACING_RATE, on both ends' TCP streams; 0 = none).
    pub(crate) fq_rate_bps: u64,
    /// 3.19's `mptcp`: the client's streams are MPTCP.
    pub(crate) mptcp: bool,
    /// `-Z`'s `zerocopy`: this side's TCP senders send with sendfile(2)
    /// from a file holding the block (as iperf3 does).
    pub(crate) zerocopy: bool,
    /// 3.21's UDP `gso`/`gro` with their sizes: each side's UDP sockets use
    /// UDP_SEGMENT / UDP_GRO where its kernel has them, as iperf3 does.
    pub(crate) gsro: Gsro,
    /// iperf3's `authtoken` (RSA-encrypted credentials, base64), if sent.
    pub(crate) authtoken: Option<String>,
}

impl TestParams {
    /// The per-stream target rate (`-b`), when there is one.
    pub(crate) fn target_bps(&self) -> Option<u64> {
        (self.bandwidth_bps > 0).then_some(self.bandwidth_bps)
    }

    /// Streams in the test: `parallel`, doubled for bidir.
    pub(crate) fn total_streams(&self) -> u32 {
        match self.direction {
            TestDirection::Bidir => self.parallel * 2,
            _ => self.parallel,
        }
    }

    /// The JSON block a client sends.
    pub(crate) fn to_json(&self) -> Value {
        let mut m = Map::new();
        match self.protocol {
            Protocol::Tcp => m.insert("tcp".into(), json!(true)),
            Protocol::Udp => m.insert("udp".into(), json!(true)),
        };
        m.insert("omit".into(), json!(self.omit_s));
        m.insert("time".into(), json!(self.time_s));
        m.insert("num".into(), json!(self.num_bytes));
        m.insert("blockcount".into(), json!(self.block_count));
        if let Some(mss) = self.mss {
            m.insert("MSS".into(), json!(mss));
        }
        if self.nodelay {
            m.insert("nodelay".into(), json!(true));
        }
        m.insert("parallel".into(), json!(self.parallel));
        match self.direction {
            TestDirection::Forward => {}
            TestDirection::Reverse => {
                m.insert("reverse".into(), json!(true));
            }
            TestDirection::Bidir => {
                m.insert("bidirectional".into(), json!(true));
            }
        }
        if let Some(w) = self.window {
            m.insert("window".into(), json!(w));
        }
        m.insert("len".into(), json!(self.len));
        if self.bandwidth_bps > 0 {
            m.insert("bandwidth".into(), json!(self.bandwidth_bps));
        }
        m.insert("pacing_timer".into(), json!(1000));
        if let Some(c) = &self.congestion {
            m.insert("congestion".into(), json!(c));
        }
        if self.udp_counters_64bit {
            m.insert("udp_counters_64bit".into(), json!(1));
        }
        if self.protocol == Protocol::Udp {
            // 3.21 always sends these for UDP, so that a server may use them.
            let g = &self.gsro;
            m.insert("gso".into(), json!(i32::from(g.gso)));
            m.insert("gso_dg_size".into(), json!(g.gso_dg_size));
            m.insert("gso_bf_size".into(), json!(g.gso_bf_size));
            m.insert("gro".into(), json!(i32::from(g.gro)));
            m.insert("gro_bf_size".into(), json!(g.gro_bf_size));
        }
        if self.skip_rx_copy {
            m.insert("skip_rx_copy".into(), json!(1));
        }
        if self.zerocopy {
            m.insert("zerocopy".into(), json!(1));
        }
        if self.fq_rate_bps > 0 {
            m.insert("fqrate".into(), json!(self.fq_rate_bps));
        }
        if let Some(v) = &self.hlctl_version {
            m.insert("hlctl_version".into(), json!(v));
        }
        if let Some(t) = &self.authtoken {
            m.insert("authtoken".into(), json!(t));
        }
        m.insert(
            "client_version".into(),
            json!(self.client_version.clone().unwrap_or_else(|| "3.12".into())),
        );
        Value::Object(m)
    }

    /// Parse and validate a client's block (server side). Boolean keys count
    /// by presence, as in iperf3; unknown keys are ignored.
    pub(crate) fn from_json(v: &Value) -> Result<TestParams, NetError> {
        let obj = v
            .as_object()
            .ok_or_else(|| bad(e::IERECVPARAMS, "not a JSON object"))?;
        let has = |k: &str| obj.contains_key(k);
        let int = |k: &str| -> Result<Option<i64>, NetError> {
            match obj.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(x) => json_i64(x)
                    .map(Some)
                    .ok_or_else(|| bad(e::IERECVPARAMS, &format!("`{k}` is not a number: {x}"))),
            }
        };
        if has("sctp") {
            return Err(bad(e::IEPROTOCOL, "SCTP is not supported"));
        }
        let protocol = if has("udp") {
            Protocol::Udp
        } else {
            Protocol::Tcp
        };
        let direction = direction(has("reverse"), has("bidirectional"))?;
        let omit_s =
            ranged("omit", int("omit")?, MAX_OMIT_S as i64, e::IEOMIT)?.unwrap_or(0) as u32;
        let time_s =
            ranged("time", int("time")?, MAX_TIME_S as i64, e::IEDURATION)?.unwrap_or(0) as u32;
        let num_bytes = ranged("num", int("num")?, i64::MAX, e::IERECVPARAMS)?.unwrap_or(0);
        let block_count =
            ranged("blockcount", int("blockcount")?, i64::MAX, e::IERECVPARAMS)?.unwrap_or(0);
        let parallel = ranged(
            "parallel",
            int("parallel")?,
            MAX_STREAMS as i64,
            e::IENUMSTREAMS,
        )?
        .unwrap_or(1) as u32;
        if parallel == 0 {
            return Err(bad(e::IENUMSTREAMS, "`parallel` = 0"));
        }
        let window = ranged("window", int("window")?, MAX_WINDOW as i64, e::IEBUFSIZE)?
            .filter(|&w| w > 0)
            .map(|w| w as u32);
        let mss = ranged("MSS", int("MSS")?, MAX_MSS as i64, e::IEMSS)?
            .filter(|&m| m > 0)
            .map(|m| m as u32);
        let len = block_len(protocol, int("len")?)?;
        let bandwidth_bps = ranged("bandwidth", int("bandwidth")?, i64::MAX, e::IERECVPARAMS)?
            .or((protocol == Protocol::Udp).then_some(DEFAULT_UDP_RATE))
            .unwrap_or(0);
        let string = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_string);
        Ok(TestParams {
            protocol,
            omit_s,
            time_s,
            num_bytes,
            block_count,
            parallel,
            direction,
            window,
            len,
            bandwidth_bps,
            mss,
            nodelay: has("nodelay"),
            udp_counters_64bit: has("udp_counters_64bit"),
            congestion: string("congestion"),
            client_version: string("client_version"),
            hlctl_version: string("hlctl_version"),
            skip_rx_copy: int("skip_rx_copy")?.unwrap_or(0) != 0,
            fq_rate_bps: ranged("fqrate", int("fqrate")?, i64::MAX, e::IERECVPARAMS)?.unwrap_or(0),
            mptcp: has("mptcp"),
            zerocopy: int("zerocopy")?.unwrap_or(0) != 0,
            gsro: gsro(protocol, len, &int)?,
            authtoken: string("authtoken"),
        })
    }
}

/// The direction from the `reverse` and `bidirectional` keys (not both).
fn direction(reverse: bool, bidir: bool) -> Result<TestDirection, NetError> {
    match (reverse, bidir) {
        (true, true) => Err(bad(e::IEREVERSEBIDIR, "both reverse and bidirectional")),
        (true, false) => Ok(TestDirection::Reverse),
        (false, true) => Ok(TestDirection::Bidir),
        (false, false) => Ok(TestDirection::Forward),
    }
}

/// `v` (the value of key `k`) within `0..=max`, else the error `code`.
fn ranged(k: &str, v: Option<i64>, max: i64, code: i32) -> Result<Option<u64>, NetError> {
    match v {
        None => Ok(None),
        Some(x) if (0..=max).contains(&x) => Ok(Some(x as u64)),
        Some(x) => Err(bad(code, &format!("`{k}` = {x} is outside 0..={max}"))),
    }
}

/// 3.21's UDP GSO/GRO keys (`gso`, `gso_dg_size`, `gso_bf_size`, `gro`,
/// `gro_bf_size`, absent ones as a client without `--gsro` sends them): every
/// number is a flag or a size within one UDP payload. A `gso` without a
/// datagram size takes the block, as a 3.21 server does; TCP ignores them.
fn gsro(
    protocol: Protocol,
    len: u32,
    int: &dyn Fn(&str) -> Result<Option<i64>, NetError>,
) -> Result<Gsro, NetError> {
    const KEYS: [&str; 5] = ["gso", "gso_dg_size", "gso_bf_size", "gro", "gro_bf_size"];
    let mut v = [None; 5];
    for (slot, k) in v.iter_mut().zip(KEYS) {
        *slot = int(k)?;
    }
    for (k, x) in KEYS.iter().zip(v) {
        if let Some(x) = x.filter(|x| !(0..=i64::from(GSRO_BF_MAX)).contains(x)) {
            return Err(bad(
                e::IERECVPARAMS,
                &format!("`{k}` = {x} is outside 0..={GSRO_BF_MAX}"),
            ));
        }
    }
    if protocol != Protocol::Udp {
        return Ok(Gsro::OFF);
    }
    let size = |x: Option<i64>, default: u32| x.map_or(default, |x| x as u32);
    let mut g = Gsro {
        gso: v[0].unwrap_or(0) != 0,
        gso_dg_size: size(v[1], 0),
        gso_bf_size: size(v[2], GSRO_BF_MAX),
        gro: v[3].unwrap_or(0) != 0,
        gro_bf_size: size(v[4], GSRO_BF_MAX),
    };
    if g.gso && g.gso_dg_size == 0 {
        g.gso_dg_size = len;
        g.gso_bf_size = (g.gso_bf_size / len).max(1) * len;
    }
    Ok(g)
}

/// The block length `len` (absent or 0: the protocol's default) within the
/// protocol's limits.
fn block_len(protocol: Protocol, len: Option<i64>) -> Result<u32, NetError> {
    Ok(match (protocol, len) {
        (Protocol::Tcp, None | Some(0)) => DEFAULT_TCP_LEN,
        (Protocol::Udp, None | Some(0)) => DEFAULT_UDP_LEN,
        (Protocol::Tcp, Some(l)) => {
            ranged("len", Some(l), MAX_TCP_LEN as i64, e::IEBLOCKSIZE)?.unwrap_or(0) as u32
        }
        (Protocol::Udp, Some(l)) => {
            if !(MIN_UDP_LEN as i64..=MAX_UDP_LEN as i64).contains(&l) {
                return Err(bad(
                    e::IEUDPBLOCKSIZE,
                    &format!("`len` = {l} is outside {MIN_UDP_LEN}..={MAX_UDP_LEN} for UDP"),
                ));
            }
            l as u32
        }
    })
}

fn bad(i_errno: i32, reason: &str) -> NetError {
    NetError::BadParams {
        i_errno,
        reason: reason.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_iperf3_312_block() {
        let v: Value = serde_json::from_str(
            r#"{"tcp":true,"omit":0,"time":2,"num":0,"blockcount":0,"parallel":1,"len":131072,"pacing_timer":1000,"client_version":"3.12"}"#,
        )
        .unwrap();
        let p = TestParams::from_json(&v).unwrap();
        assert_eq!(p.protocol, Protocol::Tcp);
        assert_eq!(p.time_s, 2);
        assert_eq!(p.len, 131072);
        assert_eq!(p.direction, TestDirection::Forward);
        assert_eq!(p.bandwidth_bps, 0);
        let back = TestParams::from_json(&p.to_json()).unwrap();
        assert_eq!(back, p);
    }

    #[test]
    fn udp_defaults_and_flags() {
        let v: Value = serde_json::from_str(
            r#"{"udp":true,"time":1,"parallel":2,"reverse":true,"bandwidth":10000000}"#,
        )
        .unwrap();
        let p = TestParams::from_json(&v).unwrap();
        assert_eq!(p.protocol, Protocol::Udp);
        assert_eq!(p.len, DEFAULT_UDP_LEN);
        assert_eq!(p.direction, TestDirection::Reverse);
        assert_eq!(p.total_streams(), 2);
        assert_eq!(p.bandwidth_bps, 10_000_000);
    }

    #[test]
    fn refuses_out_of_range() {
        for (js, code) in [
            (r#"{"tcp":true,"parallel":129}"#, e::IENUMSTREAMS),
            (r#"{"tcp":true,"parallel":0}"#, e::IENUMSTREAMS),
            (r#"{"tcp":true,"len":2000000}"#, e::IEBLOCKSIZE),
            (r#"{"udp":true,"len":8}"#, e::IEUDPBLOCKSIZE),
            (r#"{"tcp":true,"time":100000}"#, e::IEDURATION),
            (
                r#"{"tcp":true,"reverse":true,"bidirectional":true}"#,
                e::IEREVERSEBIDIR,
            ),
            (r#"{"sctp":true}"#, e::IEPROTOCOL),
            (r#"{"tcp":true,"time":"x"}"#, e::IERECVPARAMS),
            (r#"{"tcp":true,"omit":18446744073709551615}"#, e::IEOMIT),
        ] {
            let v: Value = serde_json::from_str(js).unwrap();
            match TestParams::from_json(&v) {
                Err(NetError::BadParams { i_errno, .. }) => assert_eq!(i_errno, code, "{js}"),
                other => panic!("{js}: {other:?}"),
            }
        }
    }
}
