//! The change-set contract: validate everything → snapshot → apply in a safe
//! order → read back → on any failure restore the snapshot and say how that went.
//!
//! Safe order: settings that never interrupt traffic first (txqueuelen,
//! features, coalescing, pause), then those that may reset the device
//! (channels, rings, MTU), and the link itself last. Restoring runs in reverse.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::crashpoint;
use crate::nic::diff::{self, SettingResult, Summary};
use crate::nic::error::NicError;
use crate::nic::model::{ChangeSet, Interface, LinkModes, LinkSet};
use crate::nic::netlink::{Netlink, NetlinkError};
use crate::nic::registry::{self, Group};
use crate::nic::{read, validate};

/// One kernel request of a change set: a group and the values to send.
#[derive(Clone)]
struct Step {
    group: &'static Group,
    values: ChangeSet,
}

impl Step {
    fn name(&self) -> &'static str {
        self.group.word
    }

    fn run(&self, nl: &mut Netlink, iface: &Interface) -> Result<(), NetlinkError> {
        (self.group.send)(nl, iface, &self.values)
    }

    /// [`Step::run`] between the crash points of a change set's request.
    fn run_forward(&self, nl: &mut Netlink, iface: &Interface) -> Result<(), NetlinkError> {
        crashpoint::hit(crashpoint::NIC_STEP_BEFORE);
        let r = self.run(nl, iface);
        crashpoint::hit(crashpoint::NIC_STEP_AFTER);
        r
    }
}

/// The features whose requested or active state differs from what `cs` asks.
fn changed_features(cs: &ChangeSet, b: &Interface) -> BTreeMap<String, bool> {
    cs.features
        .iter()
        .filter(|(k, v)| {
            b.features
                .as_ref()
                .and_then(|f| f.get(*k))
                .is_none_or(|f| f.active != **v || f.requested != **v)
        })
        .map(|(k, v)| (k.clone(), *v))
        .collect()
}

/// The values of `group` that `cs` asks for and `b` does not hold.
fn changed_values(group: &Group, cs: &ChangeSet, b: &Interface) -> ChangeSet {
    let mut values = ChangeSet::default();
    if group.word == registry::FEATURE {
        values.features = changed_features(cs, b);
        return values;
    }
    if !(group.supported)(b) {
        return values;
    }
    for s in registry::in_group(group.word) {
        if let Some(want) = (s.get)(cs)
            && want != (s.read)(b)
        {
            (s.put)(&mut values, &want);
        }
    }
    values
}

/// The steps that change something, in safe order, each holding only changed values.
fn steps(cs: &ChangeSet, b: &Interface) -> Vec<Step> {
    let mut groups: Vec<&'static Group> = registry::GROUPS.iter().collect();
    groups.sort_by_key(|g| g.apply_rank);
    groups
        .into_iter()
        .map(|group| Step {
            group,
            values: changed_values(group, cs, b),
        })
        .filter(|s| !s.values.is_empty())
        .collect()
}

/// The request that puts back what `step` changed, from the snapshot `b`.
fn undo(step: &Step, b: &Interface) -> Step {
    let values = if step.group.word == "link" {
        ChangeSet {
            link: Some(link_undo(&b.link.clone().unwrap_or_default())),
            ..Default::default()
        }
    } else {
        registry::held(b, &step.values)
    };
    Step {
        group: step.group,
        values,
    }
}

/// The request that puts a link back as `l` is: autonegotiation with the
/// modes it advertised, or the forced speed and duplex.
pub(crate) fn link_undo(l: &LinkModes) -> LinkSet {
    if l.autoneg {
        LinkSet {
            autoneg: Some(true),
            advertise: (!l.advertised_modes.is_empty()).then(|| l.advertised_modes.clone()),
            ..Default::default()
        }
    } else {
        LinkSet {
            speed_mbps: l.speed_mbps,
            duplex: l.duplex,
            autoneg: Some(false),
            advertise: None,
        }
    }
}

/// The failure that stopped a change set.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Failure {
    /// The setting group whose request failed.
    pub(crate) step: String,
    pub(crate) error: String,
    pub(crate) errno: i32,
    /// The kernel's extended-ack message, when it sent one (also in `error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) extack: Option<String>,
}

/// The result of one `apply`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Outcome {
    pub(crate) interface: String,
    pub(crate) dry_run: bool,
    pub(crate) settings: Vec<SettingResult>,
    /// What changed, and how many settings ended in each status.
    #[serde(default)]
    pub(crate) summary: Summary,
    /// Present when a step failed; everything applied before it was restored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) failure: Option<Failure>,
    /// Restore errors after a failure (empty when the snapshot came back).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) restore_errors: Vec<String>,
}

impl Outcome {
    /// True when every setting holds what was asked and nothing failed.
    pub(crate) fn ok(&self) -> bool {
        self.failure.is_none()
    }
}

/// Refuse (changing nothing) when a setting would change and this process
/// lacks CAP_NET_ADMIN, naming the settings and how to get it.
fn needs_net_admin(name: &str, settings: &[SettingResult]) -> Result<(), NicError> {
    let changing: Vec<&str> = settings
        .iter()
        .filter(|r| r.requested != r.before)
        .map(|r| r.setting.as_str())
        .collect();
    if changing.is_empty() {
        return Ok(());
    }
    let what = format!("changing {}", changing.join(", "));
    match crate::caps::missing(&what, crate::caps::NET_ADMIN) {
        Some(message) => Err(NicError::NotPermitted {
            iface: name.to_string(),
            message,
        }),
        None => Ok(()),
    }
}

/// Told when a change set of more than one kernel request starts and when it
/// is over, so that a crash between its requests (which would leave the link
/// half changed) can be undone: `ops::nic` journals `held` for whoever
/// starts next (hlctld, `hlctl reapply`, `hlctl rollback`). One request is
/// atomic in the kernel and needs no journal.
pub(crate) trait Guard {
    /// Before the first request: the values the link holds now of every
    /// setting the change set changes.
    fn begin(&mut self, iface: &Interface, held: &ChangeSet);
    /// After the read-back (the change set applied, or restored after a failure).
    fn end(&mut self);
}

/// No journal (a tune's and a try's changes are journalled by the tuner; a
/// re-apply is repeated by the next start).
pub(crate) struct Unguarded;

impl Guard for Unguarded {
    fn begin(&mut self, _: &Interface, _: &ChangeSet) {}
    fn end(&mut self) {}
}

/// Validate `cs` for interface `name`, then (unless `dry_run`) apply it with
/// read-back and restore-on-failure. Validation problems → [`NicError::Invalid`],
/// nothing changed. A failure while applying is reported in [`Outcome::failure`].
pub(crate) fn apply(
    nl: &mut Netlink,
    name: &str,
    cs: &ChangeSet,
    dry_run: bool,
) -> Result<Outcome, NicError> {
    apply_guarded(nl, name, cs, dry_run, &mut Unguarded)
}

/// [`apply`], telling `guard` when a change set of several requests starts and ends.
pub(crate) fn apply_guarded(
    nl: &mut Netlink,
    name: &str,
    cs: &ChangeSet,
    dry_run: bool,
    guard: &mut dyn Guard,
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
    needs_net_admin(name, &settings)?;
    let plan = steps(&cs, &before);
    let guarded = plan.len() > 1;
    if guarded {
        guard.begin(&before, &registry::held(&before, &cs));
    }
    // A read-back that fails leaves the journal: the link's state is not
    // known, so whoever starts next puts the snapshot back.
    run_plan(nl, name, &plan, &before, &mut settings, &mut out)?;
    if guarded {
        guard.end();
    }
    out.summary = diff::summarize(&settings, false);
    out.settings = settings;
    Ok(out)
}

/// Apply `plan` in order; on a failure restore what was applied; read back.
fn run_plan(
    nl: &mut Netlink,
    name: &str,
    plan: &[Step],
    before: &Interface,
    settings: &mut Vec<SettingResult>,
    out: &mut Outcome,
) -> Result<(), NicError> {
    let mut done: Vec<&Step> = Vec::new();
    let mut failed_step = None;
    for step in plan {
        if let Err(e) = step.run_forward(nl, before) {
            out.failure = Some(Failure {
                step: step.name().to_string(),
                error: e.to_string(),
                errno: e.errno,
                extack: e.extack.clone(),
            });
            failed_step = Some(step);
            break;
        }
        done.push(step);
    }
    if let Some(failed) = failed_step {
        for step in done.iter().rev() {
            if let Err(e) = undo(step, before).run(nl, before) {
                out.restore_errors.push(format!("{}: {e}", step.name()));
            }
        }
        // A driver may half-apply a request it then fails: undo that too.
        let now = read::interface(nl, name)?;
        let prefix = failed.name();
        // A refused feature request stays requested in the kernel (only its
        // state is kept): put the request back too.
        let touched = failed.group.word == registry::FEATURE
            || settings.iter().any(|r| {
                r.setting.split(' ').next() == Some(prefix)
                    && diff::current(&now, &r.setting) != r.before
            });
        if touched && let Err(e) = undo(failed, before).run(nl, before) {
            out.restore_errors.push(format!("{}: {e}", failed.name()));
        }
    }
    crashpoint::hit(crashpoint::NIC_READBACK_BEFORE);
    let after = read::interface(nl, name)?;
    crashpoint::hit(crashpoint::NIC_READBACK_AFTER);
    let failed_group = out.failure.as_ref().map(|f| f.step.as_str());
    diff::settle(
        settings,
        before,
        &after,
        failed_group,
        out.restore_errors.is_empty(),
    );
    if out.failure.is_none() {
        let followed = diff::followed(settings, before, &after);
        settings.extend(followed);
    }
    Ok(())
}
