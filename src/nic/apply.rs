//! The change-set contract: validate everything → snapshot → apply in a safe
//! order → read back → on any failure restore the snapshot and say how that went.
//!
//! Safe order: settings that never interrupt traffic first (txqueuelen,
//! features, coalescing, pause), then those that may reset the device
//! (channels, rings, MTU), and the link itself last. Restoring runs in reverse.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::nic::diff::{self, SettingResult, Summary};
use crate::nic::error::NicError;
use crate::nic::model::{
    ChangeSet, ChannelsSet, CoalesceSet, Interface, LinkSet, PauseSet, RingsSet,
};
use crate::nic::netlink::{Netlink, NetlinkError};
use crate::nic::{read, validate};

/// One kernel request of a change set.
#[derive(Clone, Debug, PartialEq)]
enum Step {
    Txqueuelen(u32),
    Features(BTreeMap<String, bool>),
    Coalesce(CoalesceSet),
    Pause(PauseSet),
    Channels(ChannelsSet),
    Rings(RingsSet),
    Mtu(u32),
    Link(LinkSet),
}

impl Step {
    fn name(&self) -> &'static str {
        match self {
            Step::Txqueuelen(_) => "txqueuelen",
            Step::Features(_) => "feature",
            Step::Coalesce(_) => "coalesce",
            Step::Pause(_) => "pause",
            Step::Channels(_) => "channels",
            Step::Rings(_) => "ring",
            Step::Mtu(_) => "mtu",
            Step::Link(_) => "link",
        }
    }

    fn run(&self, nl: &mut Netlink, iface: &Interface) -> Result<(), NetlinkError> {
        let n = iface.name.as_str();
        match self {
            Step::Txqueuelen(v) => nl.set_txqueuelen(iface.ifindex, *v),
            Step::Features(f) => nl.set_features(n, f),
            Step::Coalesce(c) => nl.set_coalesce(n, c),
            Step::Pause(p) => nl.set_pause(n, p),
            Step::Channels(c) => nl.set_channels(n, c),
            Step::Rings(r) => nl.set_rings(n, r),
            Step::Mtu(v) => nl.set_mtu(iface.ifindex, *v),
            Step::Link(l) => nl.set_link_modes(n, l),
        }
    }
}

/// Keep only the values that differ from `before`.
fn differs<T: PartialEq + Copy>(want: Option<T>, have: Option<T>) -> Option<T> {
    want.filter(|w| Some(*w) != have)
}

/// The steps that change something, in safe order, each holding only changed values.
fn steps(cs: &ChangeSet, b: &Interface) -> Vec<Step> {
    let mut s = Vec::new();
    if let Some(v) = differs(cs.txqueuelen, Some(b.txqueuelen)) {
        s.push(Step::Txqueuelen(v));
    }
    let feats: BTreeMap<String, bool> = cs
        .features
        .iter()
        .filter(|(k, v)| {
            b.features
                .as_ref()
                .and_then(|f| f.get(*k))
                .is_none_or(|f| f.active != **v || f.requested != **v)
        })
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    if !feats.is_empty() {
        s.push(Step::Features(feats));
    }
    if let (Some(w), Some(h)) = (&cs.coalesce, &b.coalesce) {
        let c = CoalesceSet {
            rx_usecs: differs(w.rx_usecs, h.rx_usecs),
            tx_usecs: differs(w.tx_usecs, h.tx_usecs),
            rx_frames: differs(w.rx_frames, h.rx_frames),
            tx_frames: differs(w.tx_frames, h.tx_frames),
            adaptive_rx: differs(w.adaptive_rx, h.adaptive_rx),
            adaptive_tx: differs(w.adaptive_tx, h.adaptive_tx),
        };
        if c != CoalesceSet::default() {
            s.push(Step::Coalesce(c));
        }
    }
    if let (Some(w), Some(h)) = (&cs.pause, &b.pause) {
        let p = PauseSet {
            autoneg: differs(w.autoneg, Some(h.autoneg)),
            rx: differs(w.rx, Some(h.rx)),
            tx: differs(w.tx, Some(h.tx)),
        };
        if p != PauseSet::default() {
            s.push(Step::Pause(p));
        }
    }
    if let (Some(w), Some(h)) = (&cs.channels, &b.channels) {
        let c = ChannelsSet {
            rx: differs(w.rx, h.rx),
            tx: differs(w.tx, h.tx),
            other: differs(w.other, h.other),
            combined: differs(w.combined, h.combined),
        };
        if c != ChannelsSet::default() {
            s.push(Step::Channels(c));
        }
    }
    if let (Some(w), Some(h)) = (&cs.rings, &b.rings) {
        let r = RingsSet {
            rx: differs(w.rx, h.rx),
            tx: differs(w.tx, h.tx),
            rx_mini: differs(w.rx_mini, h.rx_mini),
            rx_jumbo: differs(w.rx_jumbo, h.rx_jumbo),
        };
        if r != RingsSet::default() {
            s.push(Step::Rings(r));
        }
    }
    if let Some(v) = differs(cs.mtu, Some(b.mtu)) {
        s.push(Step::Mtu(v));
    }
    if let (Some(w), Some(h)) = (&cs.link, &b.link) {
        let mut adv = w.advertise.clone();
        if let (Some(a), false) = (&mut adv, h.advertised_modes.is_empty()) {
            let (mut x, mut y) = (a.clone(), h.advertised_modes.clone());
            x.sort();
            y.sort();
            if x == y {
                adv = None;
            }
        }
        let l = LinkSet {
            speed_mbps: differs(w.speed_mbps, h.speed_mbps),
            duplex: differs(w.duplex, h.duplex),
            autoneg: differs(w.autoneg, Some(h.autoneg)),
            advertise: adv,
        };
        if l != LinkSet::default() {
            s.push(Step::Link(l));
        }
    }
    s
}

/// The request that puts back what `step` changed, from the snapshot `b`.
fn undo(step: &Step, b: &Interface) -> Step {
    match step {
        Step::Txqueuelen(_) => Step::Txqueuelen(b.txqueuelen),
        Step::Mtu(_) => Step::Mtu(b.mtu),
        Step::Features(f) => Step::Features(
            f.keys()
                .filter_map(|k| {
                    b.features
                        .as_ref()?
                        .get(k)
                        .map(|x| (k.clone(), x.requested))
                })
                .collect(),
        ),
        Step::Coalesce(c) => {
            let h = b.coalesce.clone().unwrap_or_default();
            let back = |w: Option<u32>, v: Option<u32>| w.and(v);
            let backb = |w: Option<bool>, v: Option<bool>| w.and(v);
            Step::Coalesce(CoalesceSet {
                rx_usecs: back(c.rx_usecs, h.rx_usecs),
                tx_usecs: back(c.tx_usecs, h.tx_usecs),
                rx_frames: back(c.rx_frames, h.rx_frames),
                tx_frames: back(c.tx_frames, h.tx_frames),
                adaptive_rx: backb(c.adaptive_rx, h.adaptive_rx),
                adaptive_tx: backb(c.adaptive_tx, h.adaptive_tx),
            })
        }
        Step::Pause(p) => {
            let h = b.pause.unwrap_or_default();
            Step::Pause(PauseSet {
                autoneg: p.autoneg.map(|_| h.autoneg),
                rx: p.rx.map(|_| h.rx),
                tx: p.tx.map(|_| h.tx),
            })
        }
        Step::Channels(c) => {
            let h = b.channels.clone().unwrap_or_default();
            Step::Channels(ChannelsSet {
                rx: c.rx.and(h.rx),
                tx: c.tx.and(h.tx),
                other: c.other.and(h.other),
                combined: c.combined.and(h.combined),
            })
        }
        Step::Rings(r) => {
            let h = b.rings.clone().unwrap_or_default();
            Step::Rings(RingsSet {
                rx: r.rx.and(h.rx),
                tx: r.tx.and(h.tx),
                rx_mini: r.rx_mini.and(h.rx_mini),
                rx_jumbo: r.rx_jumbo.and(h.rx_jumbo),
            })
        }
        Step::Link(_) => {
            let h = b.link.clone().unwrap_or_default();
            if h.autoneg {
                Step::Link(LinkSet {
                    autoneg: Some(true),
                    advertise: (!h.advertised_modes.is_empty()).then(|| h.advertised_modes.clone()),
                    ..Default::default()
                })
            } else {
                Step::Link(LinkSet {
                    speed_mbps: h.speed_mbps,
                    duplex: h.duplex,
                    autoneg: Some(false),
                    advertise: None,
                })
            }
        }
    }
}

/// The failure that stopped a change set.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Failure {
    /// The setting group whose request failed.
    pub step: String,
    pub error: String,
    pub errno: i32,
}

/// The result of one `apply`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Outcome {
    pub interface: String,
    pub dry_run: bool,
    pub settings: Vec<SettingResult>,
    /// What changed, and how many settings ended in each status.
    #[serde(default)]
    pub summary: Summary,
    /// Present when a step failed; everything applied before it was restored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// Restore errors after a failure (empty when the snapshot came back).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restore_errors: Vec<String>,
}

impl Outcome {
    /// True when every setting holds what was asked and nothing failed.
    pub fn ok(&self) -> bool {
        self.failure.is_none()
    }
}

/// Validate `cs` for interface `name`, then (unless `dry_run`) apply it with
/// read-back and restore-on-failure. Validation problems → [`NicError::Invalid`],
/// nothing changed. A failure while applying is reported in [`Outcome::failure`].
pub fn apply(
    nl: &mut Netlink,
    name: &str,
    cs: &ChangeSet,
    dry_run: bool,
) -> Result<Outcome, NicError> {
    let before = read::interface(nl, name)?;
    let cs = validate::validate(&before, cs).map_err(|problems| NicError::Invalid {
        iface: name.to_string(),
        problems,
    })?;
    let mut settings = diff::plan(&before, &cs);
    let mut out = Outcome {
        interface: name.to_string(),
        dry_run,
        settings: Vec::new(),
        summary: Summary::default(),
        failure: None,
        restore_errors: Vec::new(),
    };
    if dry_run {
        out.summary = diff::summarize(&settings, true);
        out.settings = settings;
        return Ok(out);
    }
    let plan = steps(&cs, &before);
    let mut done: Vec<&Step> = Vec::new();
    let mut failed_step = None;
    for step in &plan {
        if let Err(e) = step.run(nl, &before) {
            out.failure = Some(Failure {
                step: step.name().to_string(),
                error: e.to_string(),
                errno: e.errno,
            });
            failed_step = Some(step);
            break;
        }
        done.push(step);
    }
    if let Some(failed) = failed_step {
        for step in done.iter().rev() {
            if let Err(e) = undo(step, &before).run(nl, &before) {
                out.restore_errors.push(format!("{}: {e}", step.name()));
            }
        }
        // A driver may half-apply a request it then fails: undo that too.
        let now = read::interface(nl, name)?;
        let prefix = failed.name();
        let touched = settings.iter().any(|r| {
            r.setting.split(' ').next() == Some(prefix)
                && diff::current(&now, &r.setting) != r.before
        });
        if touched && let Err(e) = undo(failed, &before).run(nl, &before) {
            out.restore_errors.push(format!("{}: {e}", failed.name()));
        }
    }
    let after = read::interface(nl, name)?;
    let failed_group = out.failure.as_ref().map(|f| f.step.as_str());
    diff::settle(
        &mut settings,
        &after,
        failed_group,
        out.restore_errors.is_empty(),
    );
    out.summary = diff::summarize(&settings, false);
    out.settings = settings;
    Ok(out)
}
