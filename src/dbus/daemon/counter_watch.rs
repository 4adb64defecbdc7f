//! Who asked for live counters at which rate, and the rate in force (the
//! fastest any connected client asked for); [`super::counters`] announces
//! them.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use crate::dbus::wire::error::{Error, Result};

/// The fastest and slowest refresh a client may ask for, in ms.
pub(crate) const MIN_MS: u32 = 250;
pub(crate) const MAX_MS: u32 = 60_000;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Who asked for which rate (unique bus name → ms), and the rate in force.
#[derive(Debug)]
pub(crate) struct Watchers {
    asked: Mutex<BTreeMap<String, u32>>,
    pub(crate) rate: tokio::sync::watch::Sender<u32>,
}

impl Default for Watchers {
    fn default() -> Self {
        Watchers {
            asked: Default::default(),
            rate: tokio::sync::watch::channel(0).0,
        }
    }
}

impl Watchers {
    /// Record `sender`'s request (0: withdraw it); the rate now in force.
    pub(crate) fn ask(&self, sender: &str, ms: u32) -> Result<u32> {
        if ms != 0 && !(MIN_MS..=MAX_MS).contains(&ms) {
            return Err(Error::InvalidArgument(format!(
                "interval_ms {ms}: allowed 0 (stop) or {MIN_MS} to {MAX_MS}"
            )));
        }
        let mut asked = lock(&self.asked);
        if ms == 0 {
            asked.remove(sender);
        } else {
            asked.insert(sender.to_string(), ms);
        }
        Ok(self.update(&asked))
    }

    /// `sender` left the bus: its request ends.
    pub(crate) fn left(&self, sender: &str) {
        let mut asked = lock(&self.asked);
        if asked.remove(sender).is_some() {
            self.update(&asked);
        }
    }

    /// The rate in force (0: off).
    pub(crate) fn rate(&self) -> u32 {
        *self.rate.borrow()
    }

    fn update(&self, asked: &BTreeMap<String, u32>) -> u32 {
        let ms = asked.values().copied().min().unwrap_or(0);
        self.rate
            .send_if_modified(|r| std::mem::replace(r, ms) != ms);
        ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fastest_connected_request_wins_and_leaving_withdraws_it() {
        let w = Watchers::default();
        assert_eq!(w.rate(), 0, "off by default");
        assert_eq!(w.ask(":1.5", 1000).unwrap(), 1000);
        assert_eq!(w.ask(":1.6", 300).unwrap(), 300);
        w.left(":1.6");
        assert_eq!(w.rate(), 1000);
        assert_eq!(w.ask(":1.5", 0).unwrap(), 0);
        assert!(w.ask(":1.7", 10).is_err(), "faster than {MIN_MS} ms");
        assert_eq!(w.rate(), 0, "a refused request changes nothing");
    }
}
