//! The inputs of the metrics file: the links now (netlink), the last check
//! with its comparison and the last tune (history).

use crate::check::CheckReport;
use crate::config::Config;
use crate::history::compare::Comparison;
use crate::history::{History, Kind, StoredResult};
use crate::nic::model::Interface;
use crate::paths::Paths;

#[derive(Debug, Default)]
pub(crate) struct Inputs {
    pub(crate) links: Vec<Interface>,
    /// Every address and the interface holding it.
    pub(crate) addresses: Vec<(String, std::net::IpAddr)>,
    /// The last check, when it ran, and its comparison.
    pub(crate) check: Option<(CheckReport, i64, Option<Comparison>)>,
    pub(crate) tune: Option<StoredResult>,
    /// `bench file` rows, newest first.
    pub(crate) files: Vec<StoredResult>,
    /// Link usage per window label (`1d`, `30d`).
    pub(crate) usage: Vec<(&'static str, crate::usage::answer::UsageAnswer)>,
}

pub(crate) fn gather(paths: &Paths, cfg: &Config) -> Inputs {
    let mut inp = Inputs::default();
    if let Ok(mut nl) = crate::nic::netlink::Netlink::new()
        && let Ok(l) = crate::nic::read::interfaces(&mut nl, &[])
    {
        inp.links = l;
    }
    inp.addresses = crate::path::route::addresses();
    if !paths.state_dir.join(crate::history::DB_FILE).exists() {
        return inp;
    }
    let Ok(mut h) = History::open(&paths.state_dir) else {
        return inp;
    };
    if let Ok(Some((last, c))) = crate::check::last_comparison(&mut h, &cfg.check)
        && let Ok(r) = serde_json::from_value::<CheckReport>(last.result.clone())
    {
        inp.check = Some((r, last.ts, c));
    }
    inp.tune = h
        .list(Some(Kind::Tune), None, 1)
        .ok()
        .and_then(|v| v.into_iter().next());
    inp.files = file_rows(&mut h);
    let now = crate::host::now_unix();
    let days: Vec<u32> = super::verdicts::WINDOWS.iter().map(|w| w.0).collect();
    if let Ok(all) = crate::usage::answer::answers(&mut h, &days, now) {
        let labels = super::verdicts::WINDOWS.iter().map(|w| w.1);
        inp.usage.extend(labels.zip(all));
    }
    inp
}

/// The rows that hold `bench file` figures, newest first: `bench file`'s
/// own and the checks' (`[check] files`).
fn file_rows(h: &mut History) -> Vec<StoredResult> {
    let mut rows: Vec<StoredResult> = [Kind::File, Kind::Check]
        .into_iter()
        .flat_map(|k| {
            h.list(Some(k), None, super::transfers::ROWS)
                .unwrap_or_default()
        })
        .collect();
    rows.sort_by_key(|r| std::cmp::Reverse((r.ts, r.id)));
    rows
}
