//! `hlctl usage [IFACE] [--days N]`: every sampled link's figures over the
//! last N days and the verdict on them.

use serde::{Deserialize, Serialize};

use super::stats::{self, Span};
use super::store;
use super::verdict::{self, Verdict};
use crate::history::{History, HistoryError};

/// Longest span a question may ask for, in days (the longest retention).
pub(crate) const MAX_DAYS: u32 = 3660;

/// One link's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct LinkUsage {
    pub(crate) iface: String,
    pub(crate) span: Span,
    pub(crate) verdict: Verdict,
}

/// The answer for every link asked about.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct UsageAnswer {
    pub(crate) days: u32,
    pub(crate) links: Vec<LinkUsage>,
}

/// The links' figures over the `days` before `now` (Unix s); an `iface`
/// without a single sample is an error naming the links that have some.
pub(crate) fn answer(
    h: &mut History,
    iface: Option<&str>,
    days: u32,
    now: i64,
) -> Result<UsageAnswer, HistoryError> {
    let since = now - i64::from(days) * 86_400;
    let names = match iface {
        Some(i) => vec![i.to_string()],
        None => store::ifaces(h)?,
    };
    let offset = stats::local_offset_s();
    let mut links = Vec::new();
    for name in names {
        let buckets = store::buckets(h, Some(&name), since)?;
        let Some(span) = stats::span(&buckets, offset) else {
            continue;
        };
        let path = store::path_figures(h, &name, since)?;
        links.push(LinkUsage {
            verdict: verdict::judge(&span, &path),
            iface: name,
            span,
        });
    }
    if let (Some(i), true) = (iface, links.is_empty()) {
        let have = store::ifaces(h)?;
        return Err(HistoryError::Invalid {
            what: "interface",
            value: i.to_string(),
            why: if have.is_empty() {
                "no usage has been recorded yet: hlctld samples every physical link every 10 s once it runs ([usage] in hlctl.toml adds virtual ones)".into()
            } else {
                format!(
                    "no usage recorded for it in the last {days} days; links with usage: {}",
                    have.join(", ")
                )
            },
        });
    }
    Ok(UsageAnswer { days, links })
}
