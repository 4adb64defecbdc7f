//! The loop against a scripted target and a measure whose throughput is a
//! function of the target's settings.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::outcome::{Outcome, Step, StepStatus};
use super::run::Options;
use super::target::Target;
use super::*;
use crate::bench::progress::{Cancel, NoProgress};
use crate::doctor::Inputs;
use crate::doctor::inputs::{IfaceSample, PeerData, Rtt};
use crate::nic::model::{Duplex, Interface, LinkModes, LinkSet};
use crate::path::Peer;
use crate::path::pmtu::PathMtu;
use crate::path::throughput::{Direction, Measure, MeasureError, Sample};
use crate::paths::Paths;

type State = Arc<Mutex<BTreeMap<String, String>>>;

struct FakeTarget {
    state: State,
    mtu_reaches: u32,
}

impl Target for FakeTarget {
    fn interface(&self) -> &str {
        "eth0"
    }
    fn prepare(&mut self, c: &Change) -> Result<Change, String> {
        Ok(c.clone())
    }
    fn current(&mut self, c: &Change) -> Result<Change, TuneError> {
        let s = self.state.lock().unwrap();
        let mut u = Change::default();
        for k in c.sysctl.keys() {
            u.sysctl.insert(k.clone(), s[k].clone());
        }
        if c.nic.mtu.is_some() {
            u.nic.mtu = s["mtu"].parse().ok();
        }
        if c.nic.link.is_some() {
            u.nic.link = Some(LinkSet {
                speed_mbps: s["link"].parse().ok(),
                duplex: Some(Duplex::Full),
                autoneg: Some(false),
                advertise: None,
            });
        }
        Ok(u)
    }
    fn apply(&mut self, c: &Change) -> Result<(), String> {
        let mut s = self.state.lock().unwrap();
        for (k, v) in &c.sysctl {
            s.insert(k.clone(), v.clone());
        }
        if let Some(m) = c.nic.mtu {
            s.insert("mtu".into(), m.to_string());
        }
        if let Some(l) = &c.nic.link {
            // Renegotiating reaches 1000 Mb/s, unless the carrier never returns.
            let v = match (l.autoneg, l.speed_mbps) {
                (Some(true), _) if s.contains_key("carrier-lost") => "down".to_string(),
                (Some(true), _) => "1000".to_string(),
                (_, Some(speed)) => speed.to_string(),
                _ => s["link"].clone(),
            };
            s.insert("link".into(), v);
        }
        Ok(())
    }
    fn connectivity(&mut self) -> Result<(), String> {
        Ok(())
    }
    fn df_probe(&mut self, size: u32) -> Result<bool, String> {
        Ok(size <= self.mtu_reaches)
    }
    fn sysctl(&mut self, key: &str) -> Option<String> {
        self.state.lock().unwrap().get(key).cloned()
    }
    fn link(&mut self) -> Result<Option<LinkModes>, String> {
        let s = self.state.lock().unwrap();
        let speed = s.get("link").and_then(|v| v.parse().ok());
        Ok(Some(LinkModes {
            speed_mbps: speed,
            duplex: speed.map(|_| Duplex::Full),
            detected: Some(speed.is_some()),
            ..Default::default()
        }))
    }
}

/// Throughput: window-limited by the buffer maxima at 20 ms, a `cc` of
/// "slow" halves it.
struct FakeMeasure {
    state: State,
    cancel_after: Mutex<Option<u32>>,
    cancel: Cancel,
}

impl Measure for FakeMeasure {
    fn sample(
        &self,
        dir: Direction,
        _p: &dyn crate::bench::progress::Progress,
        _c: &Cancel,
    ) -> Result<Sample, MeasureError> {
        if let Some(n) = self.cancel_after.lock().unwrap().as_mut() {
            if *n == 0 {
                self.cancel.cancel();
                return Err(MeasureError::Cancelled);
            }
            *n -= 1;
        }
        let s = self.state.lock().unwrap();
        let key = if dir == Direction::Upload {
            "net.ipv4.tcp_wmem"
        } else {
            "net.ipv4.tcp_rmem"
        };
        let max: f64 = s[key].split(' ').nth(2).unwrap().parse().unwrap();
        let mut bps = (max / 2.0 * 8.0 / 0.020).min(1e9);
        if s["net.ipv4.tcp_congestion_control"] == "slow" {
            bps /= 2.0;
        }
        Ok(Sample {
            bps,
            ..Default::default()
        })
    }
    fn describe(&self) -> String {
        "fake".into()
    }
}

fn setup(dir: &Path) -> (Paths, State, Inputs) {
    let mut paths = Paths::under(dir);
    paths.state_dir = dir.join("state");
    paths.sysctl_dir = dir.join("sysctl.d");
    let mut m = BTreeMap::new();
    m.insert(
        "net.ipv4.tcp_rmem".to_string(),
        "4096 65536 65536".to_string(),
    );
    m.insert(
        "net.ipv4.tcp_wmem".to_string(),
        "4096 65536 65536".to_string(),
    );
    m.insert(
        "net.ipv4.tcp_congestion_control".to_string(),
        "cubic".to_string(),
    );
    m.insert("mtu".to_string(), "1500".to_string());
    m.insert("link".to_string(), "1000".to_string());
    let mut inp = Inputs::default();
    for (k, v) in &m {
        inp.sysctls.insert(k.clone(), v.clone());
    }
    inp.interfaces.push(IfaceSample {
        first: Interface {
            name: "eth0".into(),
            mtu: 1500,
            mtu_max: Some(9000),
            txqueuelen: 1000,
            link: Some(LinkModes {
                speed_mbps: Some(1000),
                ..Default::default()
            }),
            ..Default::default()
        },
        second: None,
        interval_s: 1.0,
    });
    inp.peer = Some(PeerData {
        peer: Peer::parse("10.0.0.2:7000").unwrap(),
        interface: Some("eth0".into()),
        rtt: Ok(Rtt {
            ms: 20.0,
            source: "test".into(),
        }),
        pmtu: Ok(PathMtu {
            local_mtu: 1500,
            path_mtu: 1500,
            smallest_lost: None,
            probes: 1,
        }),
        throughput: Err("-".into()),
    });
    (paths, Arc::new(Mutex::new(m)), inp)
}

fn opts(extra: Vec<plan::Candidate>) -> Options {
    Options {
        interface: "eth0".into(),
        mac: None,
        peer: Peer::parse("10.0.0.2:7000").unwrap(),
        runs: 3,
        min_gain_percent: 3.0,
        confirm_timeout: Duration::from_secs(30),
        step_timeout: Duration::from_secs(30),
        dry_run: false,
        persist: true,
        mtu: true,
        extra,
        directions: &Direction::BOTH,
    }
}

fn tune(
    paths: &Paths,
    state: &State,
    inp: &Inputs,
    o: &Options,
    confirmed: bool,
    cancel_after: Option<u32>,
) -> TuneReport {
    let cancel = Cancel::new();
    let mut t = FakeTarget {
        state: state.clone(),
        mtu_reaches: 1500,
    };
    let m = FakeMeasure {
        state: state.clone(),
        cancel_after: Mutex::new(cancel_after),
        cancel: cancel.clone(),
    };
    let mut confirm = |_: &TuneReport| confirmed;
    run(
        o,
        Context {
            paths,
            target: &mut t,
            measure: &m,
            inputs: inp,
            findings: Vec::new(),
            progress: &NoProgress,
            cancel: &cancel,
            confirm: &mut confirm,
        },
    )
    .unwrap()
}

#[test]
fn buffers_kept_worse_candidate_and_jumbo_reverted_then_persisted() {
    let d = tempfile::tempdir().unwrap();
    let (paths, state, inp) = setup(d.path());
    let worse = plan::user_candidate(1, "net.ipv4.tcp_congestion_control=slow").unwrap();
    let r = tune(&paths, &state, &inp, &opts(vec![worse]), true, None);
    let st: Vec<(&str, StepStatus)> = r
        .steps
        .iter()
        .map(|s| (s.candidate.as_str(), s.status))
        .collect();
    assert_eq!(
        st,
        [
            ("tcp-buffers", StepStatus::Kept),
            ("mtu-jumbo", StepStatus::Reverted),
            ("try-1", StepStatus::Reverted)
        ]
    );
    assert!(
        r.steps[1].reason.contains("does not reach the peer"),
        "{}",
        r.steps[1].reason
    );
    assert!(
        r.steps[2].reason.starts_with("worse"),
        "{}",
        r.steps[2].reason
    );
    assert_eq!(r.outcome, Outcome::Done);
    let s = state.lock().unwrap().clone();
    assert_eq!(s["mtu"], "1500");
    assert_eq!(s["net.ipv4.tcp_congestion_control"], "cubic");
    assert!(s["net.ipv4.tcp_rmem"].ends_with("16777216"), "{s:?}");
    let after = r.after.as_ref().unwrap();
    let before = r.baseline.as_ref().unwrap();
    assert!(
        after.upload.as_ref().unwrap().median_bps
            >= 3.0 * before.upload.as_ref().unwrap().median_bps
    );
    // Persisted, recorded for rollback, journal closed.
    let text = std::fs::read_to_string(paths.sysctl_file()).unwrap();
    assert!(
        text.contains("net.ipv4.tcp_rmem = 4096 65536 16777216"),
        "{text}"
    );
    assert!(persist::load_last(&paths, "eth0").unwrap().is_some());
    assert!(checkpoint::all(&paths).is_empty());
}

#[test]
fn one_direction_is_measured_and_decided_alone() {
    // `--direction download`: no upload run is taken, every verdict and
    // figure is the download's, and the report leaves the upload out.
    let d = tempfile::tempdir().unwrap();
    let (paths, state, inp) = setup(d.path());
    let worse = plan::user_candidate(1, "net.ipv4.tcp_congestion_control=slow").unwrap();
    let mut o = opts(vec![worse]);
    o.directions = &Direction::BOTH[1..];
    let r = tune(&paths, &state, &inp, &o, true, None);
    let st: Vec<(&str, StepStatus)> = r
        .steps
        .iter()
        .map(|s| (s.candidate.as_str(), s.status))
        .collect();
    assert_eq!(st[0], ("tcp-buffers", StepStatus::Kept), "{st:?}");
    let worse = r.steps.iter().find(|s| s.candidate == "try-1").unwrap();
    assert!(
        worse.reason.starts_with("worse: download"),
        "{}",
        worse.reason
    );
    for s in r.steps.iter().filter(|s| !s.deltas.is_empty()) {
        let dirs: Vec<Direction> = s.deltas.iter().map(|d| d.direction).collect();
        assert_eq!(dirs, [Direction::Download], "{s:?}");
        assert!(!s.reason.contains("upload"), "{}", s.reason);
    }
    let (b, a) = (r.baseline.as_ref().unwrap(), r.after.as_ref().unwrap());
    assert!(b.upload.is_none() && a.upload.is_none(), "{b:?} {a:?}");
    assert_eq!(b.download.as_ref().unwrap().runs_bps.len(), 2);
    let json = serde_json::to_value(&r).unwrap();
    assert!(
        json["baseline"].get("upload").is_none(),
        "{}",
        json["baseline"]
    );
    let limits: Vec<Direction> = r.limits.iter().map(|l| l.direction).collect();
    assert_eq!(limits, [Direction::Download]);
}

#[test]
fn not_confirmed_or_cancelled_means_everything_restored() {
    let d = tempfile::tempdir().unwrap();
    let (paths, state, inp) = setup(d.path());
    let before = state.lock().unwrap().clone();
    let r = tune(&paths, &state, &inp, &opts(vec![]), false, None);
    assert_eq!(r.outcome, Outcome::RolledBack);
    assert_eq!(*state.lock().unwrap(), before);
    assert!(checkpoint::all(&paths).is_empty());
    assert!(!paths.sysctl_file().exists());
    // Cancel in the first candidate's first run (baseline = 2 runs
    // each way of the budget of 3: 4 samples).
    let r = tune(&paths, &state, &inp, &opts(vec![]), true, Some(4));
    assert_eq!(r.outcome, Outcome::Cancelled);
    assert_eq!(*state.lock().unwrap(), before);
    assert!(checkpoint::all(&paths).is_empty());
}

/// The e1000e forced to 100 Mb/s full duplex, autoneg off.
fn forced_hundred(inp: &mut Inputs, state: &State) {
    let nic = crate::nic::shortfall::e1000e_fixture(100, Duplex::Full, false, &[]);
    let i = &mut inp.interfaces[0].first;
    i.physical = nic.physical;
    i.driver = nic.driver;
    i.link = nic.link;
    state.lock().unwrap().insert("link".into(), "100".into());
}

#[test]
fn scripted_target_renegotiation_first_kept_on_the_links_evidence_and_recorded_for_rollback() {
    let d = tempfile::tempdir().unwrap();
    let (paths, state, mut inp) = setup(d.path());
    forced_hundred(&mut inp, &state);
    let r = tune(&paths, &state, &inp, &opts(vec![]), true, None);
    assert_eq!(r.plan[0].id, "link-renegotiate");
    let st = &r.steps[0];
    assert_eq!(st.status, StepStatus::Kept, "{}", st.reason);
    // The fake throughput ignores the link: the link's report decided.
    assert!(
        st.reason.starts_with("decided by the link:"),
        "{}",
        st.reason
    );
    assert!(
        st.reason
            .contains("1 Gbit/s full duplex (was 100 Mbit/s full duplex)")
    );
    assert_eq!(state.lock().unwrap()["link"], "1000");
    let last = persist::load_last(&paths, "eth0").unwrap().unwrap();
    let orig = last
        .original
        .nic
        .link
        .clone()
        .expect("the link original recorded");
    assert_eq!(
        (orig.speed_mbps, orig.autoneg),
        (Some(100), Some(false)),
        "{last:?}"
    );
    assert_eq!(last.kept.nic.link.unwrap().autoneg, Some(true));
}

#[test]
fn scripted_target_carrier_that_does_not_return_restores_the_forced_link() {
    let d = tempfile::tempdir().unwrap();
    let (paths, state, mut inp) = setup(d.path());
    forced_hundred(&mut inp, &state);
    state
        .lock()
        .unwrap()
        .insert("carrier-lost".into(), "1".into());
    let r = tune(&paths, &state, &inp, &opts(vec![]), true, None);
    let st = &r.steps[0];
    assert_eq!(st.status, StepStatus::Reverted);
    assert!(
        st.reason.starts_with("carrier did not return within 10 s"),
        "{}",
        st.reason
    );
    assert_eq!(state.lock().unwrap()["link"], "100");
}

#[test]
fn a_moderate_gain_over_the_short_baseline_is_kept_only_after_the_baseline_gets_its_full_runs() {
    let d = tempfile::tempdir().unwrap();
    let (paths, state, mut inp) = setup(d.path());
    // Buffers already at the planner's size (no buffer candidate) and a
    // congestion control the fake halves: putting cubic back is a 2× gain,
    // clear but not overwhelming (3×).
    let settings = [
        ("net.ipv4.tcp_rmem", "4096 131072 16777216"),
        ("net.ipv4.tcp_wmem", "4096 65536 16777216"),
        ("net.ipv4.tcp_congestion_control", "slow"),
    ];
    for (k, v) in settings {
        state.lock().unwrap().insert(k.into(), v.into());
        inp.sysctls.insert(k.into(), v.into());
    }
    let back = plan::user_candidate(1, "net.ipv4.tcp_congestion_control=cubic").unwrap();
    let r = tune(&paths, &state, &inp, &opts(vec![back]), true, None);
    let kept: Vec<&Step> = r
        .steps
        .iter()
        .filter(|s| s.status == StepStatus::Kept)
        .collect();
    assert_eq!(kept.len(), 1, "{:?}", r.steps);
    assert!(
        kept[0].reason.contains("measured again to the full 3 runs"),
        "{}",
        kept[0].reason
    );
    // The baseline started with 2 runs each way and got its third before the keep.
    let baseline = r.baseline.as_ref().unwrap();
    assert_eq!(
        baseline.upload.as_ref().unwrap().runs_bps.len(),
        3,
        "{baseline:?}"
    );
    assert_ne!(
        state.lock().unwrap()["net.ipv4.tcp_congestion_control"],
        "slow"
    );
}
