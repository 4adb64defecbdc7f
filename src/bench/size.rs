//! Human sizes for benchmark options: `4k`, `1M`, `1G`, `512` (bytes).
//!
//! Units are binary, like fio's default (`kb_base=1024`): `k`/`K`/`KiB`/`KB`
//! all mean 1024 bytes, `M` 1024², `G` 1024³, `T` 1024⁴.

use std::fmt;

/// Why a size string was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SizeError {
    #[error("empty size")]
    Empty,
    #[error(
        "'{0}' is not a size: expected a number with an optional unit k, M, G or T (binary: 4k = 4096)"
    )]
    Malformed(String),
    #[error("'{0}' is too large")]
    Overflow(String),
}

/// Parse `4k`, `1M`, `1G`, `1.5G`, `4096`, `4KiB` … into bytes.
pub(crate) fn parse_size(text: &str) -> Result<u64, SizeError> {
    let s = text.trim();
    if s.is_empty() {
        return Err(SizeError::Empty);
    }
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(SizeError::Malformed(text.to_string())),
    };
    let malformed = || SizeError::Malformed(text.to_string());
    if num.is_empty() || num.matches('.').count() > 1 || num == "." {
        return Err(malformed());
    }
    if let Some((int, frac)) = num.split_once('.') {
        // Fractions only make sense with a unit (1.5G); keep exact integer maths.
        if shift == 0 || frac.len() > 9 {
            return Err(malformed());
        }
        let int: u128 = if int.is_empty() {
            0
        } else {
            int.parse().map_err(|_| malformed())?
        };
        let frac_digits = frac.len() as u32;
        let frac: u128 = if frac.is_empty() {
            0
        } else {
            frac.parse().map_err(|_| malformed())?
        };
        let scale = 10u128.pow(frac_digits);
        let bytes = ((int * scale + frac) << shift) / scale;
        return u64::try_from(bytes).map_err(|_| SizeError::Overflow(text.to_string()));
    }
    let n: u64 = num
        .parse()
        .map_err(|_| SizeError::Overflow(text.to_string()))?;
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| SizeError::Overflow(text.to_string()))
}

/// A byte count printed in binary units, e.g. `4 KiB`, `1.5 GiB`.
pub(crate) struct Bytes(pub(crate) u64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
        let mut v = self.0 as f64;
        let mut i = 0;
        while v >= 1024.0 && i + 1 < UNITS.len() {
            v /= 1024.0;
            i += 1;
        }
        if i == 0 || v.fract() == 0.0 {
            write!(f, "{v:.0} {}", UNITS[i])
        } else {
            write!(f, "{v:.2} {}", UNITS[i])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        assert_eq!(parse_size("512"), Ok(512));
        assert!(parse_size("4x").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("1.5").is_err());
        assert!(parse_size("99999999999T").is_err());
        assert_eq!(Bytes(4096).to_string(), "4 KiB");
        assert_eq!(Bytes(3 << 29).to_string(), "1.50 GiB");
    }
}
