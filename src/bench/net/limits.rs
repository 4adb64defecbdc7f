//! `hlctl serve`'s limits on one test, refused or ended as iperf3 does: the
//! test's length (iperf3 3.20's `--server-max-duration`: error 37 at the
//! parameters, 160 when a test runs past it), its streams (-P above the cap:
//! error 6, as iperf3 answers -P above 128) and its total rate (iperf3's
//! `--server-bitrate-limit`: error 27, for the rate asked and the rate run).

use std::time::Duration;

use super::error::NetError;
use super::params::{TestDirection, TestParams};
use super::serving::ServerConfig;

/// Client's duration exceeds the server's maximum (iperf3 3.20).
pub(crate) const IEMAXSERVERTESTDURATIONEXCEEDED: i32 = 37;
/// Not implemented (iperf3's answer to a feature it was built without).
pub(crate) const IEUNIMP: i32 = 13;
/// Total required bandwidth is larger than the server's limit.
pub(crate) const IETOTALRATE: i32 = 27;
/// The server ended a test that ran past its maximum duration (iperf3 3.20).
pub(crate) const IESERVERTESTDURATIONEXPIRED: i32 = 160;
/// How long past `--server-max-duration` a test may still end on its own
/// (the client's TEST_END crossing the path).
pub(crate) const MAX_DURATION_GRACE: Duration = Duration::from_secs(3);

fn refused(i_errno: i32, reason: String) -> NetError {
    NetError::ServerLimit { i_errno, reason }
}

/// Whether this server takes a test with these parameters.
pub(crate) fn check(cfg: &ServerConfig, p: &TestParams) -> Result<(), NetError> {
    if p.mptcp {
        // Our listener is plain TCP: an MPTCP client's streams would fall
        // back to TCP, a different test than the one asked for.
        return Err(refused(
            IEUNIMP,
            "the client asked for MPTCP (-m) and this server's streams are plain TCP".into(),
        ));
    }
    if let Some(max) = cfg.max_duration {
        let asked = u64::from(p.time_s) + u64::from(p.omit_s);
        if p.time_s == 0 || asked > max.as_secs() {
            return Err(refused(
                IEMAXSERVERTESTDURATIONEXCEEDED,
                format!(
                    "the client asked for {} (with omit) and this server allows at most {} s",
                    if p.time_s == 0 {
                        "an unlimited test".to_string()
                    } else {
                        format!("{asked} s")
                    },
                    max.as_secs()
                ),
            ));
        }
    }
    if let Some(cap) = cfg.max_streams
        && p.parallel > cap
    {
        return Err(refused(
            super::error::IENUMSTREAMS,
            format!(
                "the client asked for {} streams and this server allows at most {cap}",
                p.parallel
            ),
        ));
    }
    if let Some(limit) = cfg.max_bitrate_bps {
        let ways = if p.direction == TestDirection::Bidir {
            2
        } else {
            1
        };
        let asked = u128::from(p.parallel) * u128::from(p.bandwidth_bps) * ways;
        if asked > u128::from(limit) {
            return Err(refused(
                IETOTALRATE,
                format!(
                    "the client asked for {asked} bit/s in all and this server allows at most {limit} bit/s"
                ),
            ));
        }
    }
    Ok(())
}

/// The data phase's end at the latest: iperf3's TEST_END timer (time + omit
/// + 40 s), or the maximum duration and a short grace when one is set.
pub(crate) fn safety(cfg: &ServerConfig, p: &TestParams) -> Duration {
    let run_for = Duration::from_secs(u64::from(p.time_s) + u64::from(p.omit_s));
    let iperf3 = if p.time_s > 0 {
        run_for + Duration::from_secs(40)
    } else {
        Duration::from_secs(3600)
    };
    match cfg.max_duration {
        Some(max) => iperf3.min(max + MAX_DURATION_GRACE),
        None => iperf3,
    }
}

/// The error a data phase that hit [`safety`] ends with: 160 when the
/// maximum duration ended it.
pub(crate) fn expired(cfg: &ServerConfig, err: NetError) -> NetError {
    match (&err, cfg.max_duration) {
        (NetError::Timeout { what, after }, Some(max))
            if what == "the client's TEST_END" && *after >= max =>
        {
            refused(
                IESERVERTESTDURATIONEXPIRED,
                format!(
                    "the test ran past this server's maximum duration of {} s",
                    max.as_secs()
                ),
            )
        }
        _ => err,
    }
}

/// The run's own rate against the limit (after its first second): the
/// error that ends it when above.
pub(crate) fn over_rate(limit_bps: u64, bytes: u64, elapsed: Duration) -> Option<NetError> {
    if elapsed < Duration::from_secs(1) {
        return None;
    }
    let bps = bytes as f64 * 8.0 / elapsed.as_secs_f64();
    (bps > limit_bps as f64).then(|| {
        refused(
            IETOTALRATE,
            format!(
                "the test ran at {bps:.0} bit/s and this server allows at most {limit_bps} bit/s"
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(v: serde_json::Value) -> TestParams {
        TestParams::from_json(&v).unwrap()
    }

    #[test]
    fn each_limit_refuses_with_iperf3s_number_and_lets_the_rest_through() {
        let mut cfg = ServerConfig::new(0);
        let p = params(
            json!({"tcp": true, "time": 5, "omit": 1, "parallel": 4, "bandwidth": 1_000_000}),
        );
        assert!(check(&cfg, &p).is_ok());
        cfg.max_duration = Some(Duration::from_secs(6));
        assert!(check(&cfg, &p).is_ok());
        cfg.max_duration = Some(Duration::from_secs(5));
        assert_eq!(check(&cfg, &p).unwrap_err().i_errno(), 37);
        let unlimited = params(json!({"tcp": true, "time": 0, "parallel": 1}));
        assert_eq!(check(&cfg, &unlimited).unwrap_err().i_errno(), 37);
        cfg.max_duration = None;
        cfg.max_streams = Some(3);
        let e = check(&cfg, &p).unwrap_err();
        assert_eq!(e.i_errno(), 6);
        assert!(e.to_string().contains("at most 3"), "{e}");
        cfg.max_streams = Some(4);
        cfg.max_bitrate_bps = Some(4_000_000);
        assert!(check(&cfg, &p).is_ok());
        cfg.max_bitrate_bps = Some(3_999_999);
        assert_eq!(check(&cfg, &p).unwrap_err().i_errno(), 27);
    }

    #[test]
    fn the_maximum_duration_shortens_the_data_phase_and_names_its_end() {
        let mut cfg = ServerConfig::new(0);
        let p = params(json!({"tcp": true, "time": 2, "parallel": 1}));
        assert_eq!(safety(&cfg, &p), Duration::from_secs(42));
        cfg.max_duration = Some(Duration::from_secs(3));
        assert_eq!(
            safety(&cfg, &p),
            Duration::from_secs(3) + MAX_DURATION_GRACE
        );
        let t = NetError::Timeout {
            what: "the client's TEST_END".into(),
            after: Duration::from_secs(6),
        };
        assert_eq!(expired(&cfg, t).i_errno(), 160);
        let stall = NetError::Timeout {
            what: "data from the client".into(),
            after: Duration::from_secs(6),
        };
        assert_eq!(
            expired(&cfg, stall).i_errno(),
            crate::bench::net::error::IENOMSG
        );
        assert!(over_rate(1_000_000, 1_000_000, Duration::from_millis(500)).is_none());
        assert!(over_rate(1_000_000, 100_000, Duration::from_secs(1)).is_none());
        assert_eq!(
            over_rate(1_000_000, 200_000, Duration::from_secs(1))
                .unwrap()
                .i_errno(),
            27
        );
    }
}
