//! `usage`: how busy the links were, from hlctld's samples in the history.

use crate::history::HistoryError;
use crate::paths::Paths;
use crate::usage::answer::{self, UsageAnswer};

/// `usage [IFACE] [--days N]`.
pub(crate) fn usage(
    paths: &Paths,
    iface: Option<&str>,
    days: u32,
) -> Result<UsageAnswer, HistoryError> {
    let mut h = super::records::open(paths)?;
    answer::answer(&mut h, iface, days, crate::host::now_unix())
}
