//! What a tune is asked to do, as one JSON-able type: `hlctl tune` builds it
//! from its flags, hlctld decodes it from the `Tune` call, both turn it into
//! [`Options`](super::Options) the same way.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::plan;
use super::run::Options;
use crate::path::Peer;
use crate::path::throughput::Direction;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TuneParams {
    pub(crate) interface: String,
    /// HOST, HOST:PORT or [IPv6]:PORT.
    pub(crate) peer: String,
    pub(crate) runs: Option<u32>,
    pub(crate) time_s: Option<u32>,
    pub(crate) min_gain_percent: Option<f64>,
    pub(crate) confirm_timeout_s: Option<u64>,
    #[serde(default)]
    pub(crate) dry_run: bool,
    #[serde(default)]
    pub(crate) no_persist: bool,
    #[serde(default)]
    pub(crate) no_mtu: bool,
    /// `--try` candidates.
    #[serde(default)]
    pub(crate) tries: Vec<String>,
    /// `--direction`: "both" (the default), "upload" or "download".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) direction: Option<String>,
}

impl TuneParams {
    /// Seconds per benchmark run (default 5).
    pub(crate) fn time(&self) -> u32 {
        self.time_s.unwrap_or(5)
    }

    /// Check every field; the message names the flag and what is allowed.
    pub(crate) fn options(&self, mac: Option<String>) -> Result<Options, String> {
        if self.interface.is_empty() || self.interface.len() > 15 || self.interface.contains('/') {
            return Err(format!(
                "invalid interface {:?}: 1 to 15 characters, no '/'",
                self.interface
            ));
        }
        let peer = Peer::parse(&self.peer)?;
        let runs = self.runs.unwrap_or(3);
        if !(1..=20).contains(&runs) {
            return Err(format!("invalid --runs {runs}: allowed 1 to 20"));
        }
        if !(1..=60).contains(&self.time()) {
            return Err(format!(
                "invalid --time {}: allowed 1 to 60 seconds",
                self.time()
            ));
        }
        let min_gain = self.min_gain_percent.unwrap_or(3.0);
        if !(0.0..=1000.0).contains(&min_gain) {
            return Err(format!(
                "invalid --min-gain {min_gain}: allowed 0 to 1000 (percent)"
            ));
        }
        let ct = self.confirm_timeout_s.unwrap_or(60);
        if !(5..=3600).contains(&ct) {
            return Err(format!(
                "invalid --confirm-timeout {ct}: allowed 5 to 3600 seconds"
            ));
        }
        if self.tries.len() > 32 {
            return Err("at most 32 --try candidates".into());
        }
        let extra = self
            .tries
            .iter()
            .enumerate()
            .map(|(i, t)| plan::user_candidate(i + 1, t))
            .collect::<Result<Vec<_>, _>>()?;
        let directions = Direction::parse_set(self.direction.as_deref().unwrap_or("both"))
            .map_err(|e| format!("--direction: {e}"))?;
        Ok(Options {
            interface: self.interface.clone(),
            mac,
            peer,
            runs,
            min_gain_percent: min_gain,
            confirm_timeout: Duration::from_secs(ct),
            step_timeout: Duration::from_secs(ct.max(2 * u64::from(self.time()) + 30)),
            dry_run: self.dry_run,
            persist: !self.no_persist,
            mtu: !self.no_mtu,
            extra,
            directions,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_are_checked() {
        let ok = TuneParams {
            interface: "eth0".into(),
            peer: "nas:5201".into(),
            ..Default::default()
        };
        let o = ok.options(None).unwrap();
        assert_eq!((o.runs, o.persist, o.mtu), (3, true, true));
        assert_eq!(o.directions, Direction::BOTH);
        let down = TuneParams {
            direction: Some("download".into()),
            ..ok.clone()
        };
        assert_eq!(
            down.options(None).unwrap().directions,
            [Direction::Download]
        );
        for bad in [
            TuneParams {
                interface: "".into(),
                ..ok.clone()
            },
            TuneParams {
                peer: "nas:0".into(),
                ..ok.clone()
            },
            TuneParams {
                runs: Some(0),
                ..ok.clone()
            },
            TuneParams {
                confirm_timeout_s: Some(1),
                ..ok.clone()
            },
            TuneParams {
                tries: vec!["link speed 10".into()],
                ..ok.clone()
            },
            TuneParams {
                direction: Some("sideways".into()),
                ..ok.clone()
            },
        ] {
            assert!(bad.options(None).is_err(), "{bad:?}");
        }
        assert!(
            serde_json::from_str::<TuneParams>(r#"{"interface":"a","peer":"b","colour":1}"#)
                .is_err()
        );
    }
}
