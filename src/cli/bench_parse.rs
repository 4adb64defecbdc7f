//! Value parsers for benchmark flags (sizes, durations); clap prints their errors with the flag's name.

use std::time::Duration;

use crate::bench::size::parse_size;
use crate::bench::stress::MemAmount;

/// `4k`, `1M`, `1G`, `4096` … (binary units).
pub(crate) fn size(s: &str) -> Result<u64, String> {
    parse_size(s).map_err(|e| e.to_string())
}

/// A disk test size in MiB, for `--disk-size` of doctor, report and check:
/// a size (`64M`, `1G`, binary units, as `bench disk --size` takes) or a
/// plain number of MiB (`256`); `lo` to 1 TiB.
pub(crate) fn disk_size_mib(lo: u64) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync {
    move |s: &str| {
        let t = s.trim();
        let bytes = match t.parse::<u64>() {
            Ok(mib) => mib.checked_mul(1 << 20),
            Err(_) => parse_size(t).map_err(|e| e.to_string()).map(Some)?,
        };
        let allowed =
            crate::units::range(crate::units::bytes(lo << 20), crate::units::bytes(1 << 40));
        match bytes {
            Some(b) if b % (1 << 20) != 0 => Err(format!(
                "'{s}' is not a whole number of MiB: allowed {allowed}, e.g. 256M or 1G"
            )),
            Some(b) if (lo << 20..=1 << 40).contains(&b) => Ok(b >> 20),
            _ => Err(format!("'{s}' is out of range: allowed {allowed}")),
        }
    }
}

/// Seconds: `30`, `0.5`, `30s`, `2m`, `1h`.
pub(crate) fn seconds(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, 's')) => (&t[..i], 1.0),
        Some((i, 'm')) => (&t[..i], 60.0),
        Some((i, 'h')) => (&t[..i], 3600.0),
        _ => (t, 1.0),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a duration: expected seconds, e.g. 30, 0.5, 2m"))?;
    let secs = v * mult;
    if !secs.is_finite() || secs <= 0.0 || secs > 7.0 * 86_400.0 {
        return Err(format!(
            "'{s}' is out of range: allowed more than 0 s and at most 7 days"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// `--vm-bytes`: a size (`512M`) or a percentage of available memory (`50%`).
pub(crate) fn mem_amount(s: &str) -> Result<MemAmount, String> {
    if let Some(p) = s.trim().strip_suffix('%') {
        let v: f64 = p
            .trim()
            .parse()
            .map_err(|_| format!("'{s}' is not a percentage: expected e.g. 50%"))?;
        if !(0.0..=90.0).contains(&v) {
            return Err(format!(
                "'{s}' is out of range: allowed 0% to 90% of available memory"
            ));
        }
        return Ok(MemAmount::PercentOfAvailable(v));
    }
    parse_size(s)
        .map(MemAmount::Bytes)
        .map_err(|e| format!("{e}, or a percentage of available memory such as 50%"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses() {
        assert_eq!(seconds("30"), Ok(Duration::from_secs(30)));
        assert_eq!(seconds("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(seconds("0.5s"), Ok(Duration::from_millis(500)));
        assert!(seconds("0").is_err());
        assert!(seconds("abc").is_err());
        assert_eq!(mem_amount("50%"), Ok(MemAmount::PercentOfAvailable(50.0)));
        assert_eq!(mem_amount("1G"), Ok(MemAmount::Bytes(1 << 30)));
        assert!(mem_amount("95%").is_err());
        assert!(mem_amount("lots").is_err());
    }
}
