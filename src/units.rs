//! Human units, the one formatter of each for every command and report:
//! sizes in IEC bytes, rates in bit/s with SI prefixes. (iperf3's own
//! columns, which `bench net` prints as iperf3 does, are in
//! `bench::net::text`.)

/// `65536` → `64.0 KiB` (base 2, like ethtool and ip).
pub(crate) fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// `941 Mbit/s`, `1.66 Gbit/s` (base 10, like link speeds).
pub(crate) fn bps(bps: f64) -> String {
    if bps >= 1e9 {
        format!("{:.2} Gbit/s", bps / 1e9)
    } else if bps >= 1e6 {
        format!("{:.0} Mbit/s", bps / 1e6)
    } else if bps >= 1e3 {
        format!("{:.0} kbit/s", bps / 1e3)
    } else {
        format!("{bps:.0} bit/s")
    }
}

/// A link speed in the rates' units: `100 Mbit/s`, `1 Gbit/s`,
/// `2.5 Gbit/s` (ethtool's `1000Mb/s`; drivers report whole Mb/s).
pub(crate) fn speed(mbps: u32) -> String {
    if mbps < 1000 {
        return format!("{mbps} Mbit/s");
    }
    let g = format!("{:.3}", f64::from(mbps) / 1000.0);
    format!("{} Gbit/s", g.trim_end_matches('0').trim_end_matches('.'))
}

/// A length of time in the words of the usage verdicts: `0 min`, `45 s`,
/// `12 min`, `3 h 20 min`, `2 d 4 h`.
pub(crate) fn duration(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    match s {
        0 => "0 min".into(),
        1..=59 => format!("{s} s"),
        60..=3599 => format!("{} min", s / 60),
        3600..=86_399 if s % 3600 / 60 == 0 => format!("{} h", s / 3600),
        3600..=86_399 => format!("{} h {} min", s / 3600, s % 3600 / 60),
        _ => format!("{} d {} h", s / 86_400, s % 86_400 / 3600),
    }
}

/// An allowed range as every message writes it: `68 to 65535`.
pub(crate) fn range(lo: impl std::fmt::Display, hi: impl std::fmt::Display) -> String {
    format!("{lo} to {hi}")
}

/// A clap value parser for a whole number from `lo` to `hi`, whose errors
/// say what is allowed in the words of [`range`] (`allowed 1 to 20`).
pub(crate) fn ranged<T>(lo: T, hi: T) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy + Send + Sync + 'static,
{
    move |s: &str| {
        let allowed = range(lo, hi);
        match s.trim().parse::<T>() {
            Ok(v) if v >= lo && v <= hi => Ok(v),
            Ok(_) => Err(format!("{s} is out of range: allowed {allowed}")),
            Err(_) => Err(format!("'{s}' is not a whole number: allowed {allowed}")),
        }
    }
}

/// [`ranged`] without an upper bound: `allowed 1 or more`.
pub(crate) fn at_least<T>(lo: T) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy + Send + Sync + 'static,
{
    move |s: &str| match s.trim().parse::<T>() {
        Ok(v) if v >= lo => Ok(v),
        Ok(_) => Err(format!("{s} is out of range: allowed {lo} or more")),
        Err(_) => Err(format!("'{s}' is not a whole number: allowed {lo} or more")),
    }
}

/// Unix seconds → (year, month 1–12, day 1–31, seconds into the day), UTC
/// (Howard Hinnant's civil-from-days).
pub(crate) fn civil(ts: i64) -> (i64, i64, i64, i64) {
    let days = ts.div_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d, ts.rem_euclid(86_400))
}

#[cfg(test)]
mod tests {
    #[test]
    fn durations_in_words() {
        let f = super::duration;
        assert_eq!(f(0.2), "0 min");
        assert_eq!(f(45.0), "45 s");
        assert_eq!(f(720.0), "12 min");
        assert_eq!(f(12_000.0), "3 h 20 min");
        assert_eq!(f(7200.0), "2 h");
        assert_eq!(f(187_200.0), "2 d 4 h");
    }

    #[test]
    fn link_speeds_in_the_rates_units() {
        let f = super::speed;
        assert_eq!(f(10), "10 Mbit/s");
        assert_eq!(f(100), "100 Mbit/s");
        assert_eq!(f(1000), "1 Gbit/s");
        assert_eq!(f(2500), "2.5 Gbit/s");
        assert_eq!(f(10000), "10 Gbit/s");
        assert_eq!(f(25000), "25 Gbit/s");
    }

    #[test]
    fn ranges_are_written_in_words() {
        let p = super::ranged(1u32, 20);
        assert_eq!(p("20"), Ok(20));
        assert_eq!(p("0").unwrap_err(), "0 is out of range: allowed 1 to 20");
        assert_eq!(
            p("x").unwrap_err(),
            "'x' is not a whole number: allowed 1 to 20"
        );
        assert_eq!(
            super::at_least(1u16)("0").unwrap_err(),
            "0 is out of range: allowed 1 or more"
        );
        assert_eq!(
            super::at_least(1u16)("70000").unwrap_err(),
            "'70000' is not a whole number: allowed 1 or more"
        );
    }

    #[test]
    fn bits_per_second_and_bytes() {
        assert_eq!(super::bps(941e6), "941 Mbit/s");
        assert_eq!(super::bps(1.66e9), "1.66 Gbit/s");
        assert_eq!(super::bytes(65536), "64.0 KiB");
        assert_eq!(super::bytes(1536), "1.5 KiB");
        assert_eq!(super::bytes(1023), "1023 B");
        // Above TiB (the CLI's copy and this one used to disagree here).
        assert_eq!(super::bytes(3 << 50), "3.0 PiB");
        assert_eq!(super::bytes(u64::MAX), "16384.0 PiB");
    }
}
