//! `/proc/softirqs`: how many NET_RX and NET_TX softirqs each CPU ran. The
//! header names the CPUs (every possible CPU, online or not).

use super::ProcError;
use super::error::cpu_header;

const FILE: &str = "/proc/softirqs";

/// One CPU's network softirq counts since boot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct NetSoftirqs {
    pub(crate) cpu: u32,
    pub(crate) net_rx: u64,
    pub(crate) net_tx: u64,
}

/// The counts of one row (`NET_RX:`), one per header CPU.
fn row(n: usize, rest: &str, cpus: usize) -> Result<Vec<u64>, ProcError> {
    let v: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse::<u64>())
        .collect::<Result<_, _>>()
        .map_err(|_| ProcError::new(FILE, n + 1, "a count is not a number"))?;
    if v.len() != cpus {
        return Err(ProcError::new(
            FILE,
            n + 1,
            format!("{} counts for {cpus} CPUs in the header", v.len()),
        ));
    }
    Ok(v)
}

/// NET_RX and NET_TX per CPU of the header (a row missing is all 0).
pub(crate) fn parse(text: &str) -> Result<Vec<NetSoftirqs>, ProcError> {
    let mut lines = text.lines();
    let cpus = cpu_header(FILE, lines.next().unwrap_or(""))?;
    let mut out: Vec<NetSoftirqs> = cpus
        .iter()
        .map(|&cpu| NetSoftirqs {
            cpu,
            ..Default::default()
        })
        .collect();
    for (n, line) in lines.enumerate() {
        let Some((name, rest)) = line.split_once(':') else {
            continue;
        };
        let set: fn(&mut NetSoftirqs, u64) = match name.trim() {
            "NET_RX" => |s, v| s.net_rx = v,
            "NET_TX" => |s, v| s.net_tx = v,
            _ => continue,
        };
        for (s, v) in out.iter_mut().zip(row(n + 1, rest, cpus.len())?) {
            set(s, v);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_captured_file_gives_net_rx_and_tx_per_cpu() {
        let t = include_str!("../../tests/fixtures/proc/captured-kvm-2cpu.softirqs");
        let v = parse(t).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!((v[0].cpu, v[1].cpu), (0, 1));
        let line = t
            .lines()
            .find(|l| l.trim_start().starts_with("NET_RX"))
            .unwrap();
        let want: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .map(|x| x.parse().unwrap())
            .collect();
        assert_eq!(vec![v[0].net_rx, v[1].net_rx], want);
    }

    #[test]
    fn offline_cpus_keep_their_ids_and_bad_rows_are_named() {
        // Written: CPU 1 absent from the header.
        let t = "  CPU0  CPU2\n  NET_TX: 1 2\n  NET_RX: 30 40\n  RCU: 5 6\n";
        let v = parse(t).unwrap();
        assert_eq!(
            v[1],
            NetSoftirqs {
                cpu: 2,
                net_rx: 40,
                net_tx: 2
            }
        );
        let e = parse("  CPU0  CPU1\n  NET_RX: 30\n").unwrap_err();
        assert!(e.to_string().contains("1 counts for 2 CPUs"), "{e}");
        assert_eq!(e.line, 2);
        assert!(parse("").is_err());
        assert!(parse("  CPU0 X\n").is_err());
    }
}
