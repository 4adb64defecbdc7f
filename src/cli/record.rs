//! Storing results in the history database; a failure warns and goes on
//! (the result itself was produced and printed).

use crate::history::{History, NewResult};
use crate::paths::Paths;

pub fn store(paths: &Paths, r: &NewResult) -> Option<i64> {
    match History::open(&paths.state_dir).and_then(|mut h| h.add(r)) {
        Ok(id) => Some(id),
        Err(e) => {
            eprintln!("hlctl: warning: not stored in the history: {e}");
            None
        }
    }
}
