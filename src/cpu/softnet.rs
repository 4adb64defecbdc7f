//! `/proc/net/softnet_stat` (net/core/net-procfs.c): one row of hex columns
//! per **online** CPU. Columns: processed, dropped (the backlog was full),
//! time_squeeze (the budget ran out with work left), five unused, received_rps,
//! flow_limit_count, then since Linux 5.10 the backlog length and the CPU's
//! id (13 columns), and on newer kernels the input and process queue lengths
//! (15). With a CPU offline the row number is not the CPU: the id column is.

use super::ProcError;

const FILE: &str = "/proc/net/softnet_stat";

/// One row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SoftnetRow {
    /// From the 13th column; `None` on kernels that do not print it (then
    /// only the row order tells the CPU, which offline CPUs shift).
    pub(crate) cpu: Option<u32>,
    pub(crate) processed: u64,
    pub(crate) dropped: u64,
    pub(crate) time_squeeze: u64,
    pub(crate) received_rps: u64,
    pub(crate) flow_limit: u64,
}

fn hex(n: usize, w: &str) -> Result<u64, ProcError> {
    u64::from_str_radix(w, 16)
        .map_err(|_| ProcError::new(FILE, n + 1, format!("{w:?} is not a hex counter")))
}

/// Every row (blank lines skipped); at least the first three columns each.
pub(crate) fn parse(text: &str) -> Result<Vec<SoftnetRow>, ProcError> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let cols: Vec<&str> = line.split_whitespace().collect();
        if cols.is_empty() {
            continue;
        }
        if cols.len() < 3 {
            return Err(ProcError::new(
                FILE,
                n + 1,
                format!("{} columns, at least 3 expected", cols.len()),
            ));
        }
        let v: Vec<u64> = cols.iter().map(|w| hex(n, w)).collect::<Result<_, _>>()?;
        let at = |i: usize| v.get(i).copied().unwrap_or(0);
        let cpu = match v.get(12) {
            Some(&id) => Some(u32::try_from(id).map_err(|_| {
                ProcError::new(FILE, n + 1, format!("CPU id {id:#x} out of range"))
            })?),
            None => None,
        };
        out.push(SoftnetRow {
            cpu,
            processed: at(0),
            dropped: at(1),
            time_squeeze: at(2),
            received_rps: at(9),
            flow_limit: at(10),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_captured_15_column_file_takes_the_cpu_from_its_id_column() {
        let t = include_str!("../../tests/fixtures/proc/captured-kvm-2cpu-15col.softnet_stat");
        let v = parse(t).unwrap();
        assert_eq!(
            v.iter().map(|r| r.cpu).collect::<Vec<_>>(),
            vec![Some(0), Some(1)]
        );
        let first = u64::from_str_radix(t.split_whitespace().next().unwrap(), 16).unwrap();
        assert_eq!(v[0].processed, first);
    }

    #[test]
    fn a_13_column_file_with_cpu_1_offline_names_cpus_0_2_3() {
        let t = include_str!("../../tests/fixtures/proc/written-13col-cpu1-offline.softnet_stat");
        let v = parse(t).unwrap();
        assert_eq!(
            v.iter().map(|r| r.cpu).collect::<Vec<_>>(),
            vec![Some(0), Some(2), Some(3)]
        );
        // The second row is CPU 2's, not CPU 1's.
        assert_eq!(
            (v[1].processed, v[1].dropped, v[1].time_squeeze),
            (0x1f4a2, 0x2a, 0x3c1)
        );
        assert_eq!(v[1].received_rps, 0x10);
    }

    #[test]
    fn an_11_column_file_has_no_id_and_bad_rows_are_named() {
        let v = parse("0000a 00000001 00000002 0 0 0 0 0 0 00000003 0\n").unwrap();
        assert_eq!(v[0].cpu, None);
        assert_eq!((v[0].processed, v[0].received_rps), (10, 3));
        let e = parse("0000a 1\n").unwrap_err();
        assert!(e.to_string().contains("at least 3"), "{e}");
        let e = parse("00000001 0 0\n0000000g 0 0\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(parse("0 0 0 0 0 0 0 0 0 0 0 0 1ffffffff\n").is_err());
    }
}
