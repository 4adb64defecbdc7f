//! The daemon's shared state: the cached model of every link (what property
//! reads are served from), per-link change locks, the netlink connections and
//! the job table and each job's state.
//!
//! Reads never wait for writes: properties come from the cache, refreshed
//! through a netlink connection of their own; changes use another one.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

use crate::bench::progress::Cancel;
pub(crate) use crate::dbus::wire::job::JobStatus;
use crate::nic::error::NicError;
use crate::nic::model::Interface;
use crate::nic::netlink::Netlink;
use crate::nic::read;
use crate::paths::Paths;

use super::auth::Caller;
use crate::dbus::wire::error::Error;

/// Counters older than this are re-read when a client reads `Settings`.
pub(crate) const COUNTERS_MAX_AGE: Duration = Duration::from_millis(500);

/// Lock a std mutex, ignoring poisoning (a panicked holder left consistent data:
/// every critical section here is a plain assignment).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// One link's cached model and change lock.
pub(crate) struct LinkState {
    pub(crate) ifindex: u32,
    model: RwLock<(Interface, Instant)>,
    holder: Mutex<Option<String>>,
    /// Where a change of the holder is announced (`HeldBy`), by ifindex.
    held: tokio::sync::mpsc::UnboundedSender<u32>,
    /// What the guard of persisted settings knows ([`super::guard`]).
    pub(crate) guard: GuardState,
}

/// What the guard of persisted settings knows about one link.
#[derive(Debug, Default)]
pub(crate) struct GuardState {
    /// A guard task runs for this link.
    pub(crate) running: AtomicBool,
    /// The value hlctl itself last set, per setting (`mtu`, `feature rx-gro`).
    pub(crate) own: Mutex<BTreeMap<String, serde_json::Value>>,
    /// Settings re-applied once after someone else changed them.
    pub(crate) reasserted: Mutex<BTreeSet<String>>,
    /// Settings hlctld stopped re-applying: setting → who sets it back.
    pub(crate) given_up: Mutex<BTreeMap<String, String>>,
}

impl GuardState {
    /// hlctl itself set these values (a change, a re-apply): not someone else's.
    pub(crate) fn own_values(&self, outcome: &crate::nic::apply::Outcome) {
        let mut own = lock(&self.own);
        for s in &outcome.settings {
            if let Some(after) = &s.after {
                own.insert(s.setting.clone(), after.clone());
            }
        }
    }

    /// A new persisted value: guard it afresh.
    pub(crate) fn forget(&self, settings: &[String]) {
        let mut r = lock(&self.reasserted);
        let mut g = lock(&self.given_up);
        for s in settings {
            r.remove(s);
            g.remove(s);
        }
    }
}

impl LinkState {
    /// A link whose holder changes are sent to `held` (see [`Daemon::held`]).
    pub(crate) fn new(iface: Interface, held: tokio::sync::mpsc::UnboundedSender<u32>) -> Self {
        Self {
            ifindex: iface.ifindex,
            model: RwLock::new((iface, Instant::now())),
            holder: Mutex::new(None),
            held,
            guard: GuardState::default(),
        }
    }

    /// The cached model.
    pub(crate) fn model(&self) -> Interface {
        self.model
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .0
            .clone()
    }

    pub(crate) fn age(&self) -> Duration {
        self.model
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .1
            .elapsed()
    }

    /// Replace the cached model; returns the previous one.
    pub(crate) fn set_model(&self, iface: Interface) -> Interface {
        let mut m = self.model.write().unwrap_or_else(|p| p.into_inner());
        std::mem::replace(&mut *m, (iface, Instant::now())).0
    }

    /// Take the link for a change or a benchmark, or say who holds it.
    pub(crate) fn claim(self: &Arc<Self>, what: impl Into<String>) -> Result<Claim, Error> {
        let mut h = lock(&self.holder);
        if let Some(by) = &*h {
            let name = self.model().name;
            return Err(Error::Busy(format!(
                "{name}: busy with {by}; try again when it has finished"
            )));
        }
        *h = Some(what.into());
        let _ = self.held.send(self.ifindex);
        Ok(Claim(self.clone()))
    }

    /// What holds the link now, if anything.
    pub(crate) fn holder(&self) -> Option<String> {
        lock(&self.holder).clone()
    }
}

/// A held link; dropping it releases the link.
pub(crate) struct Claim(Arc<LinkState>);

impl Drop for Claim {
    fn drop(&mut self) {
        *lock(&self.0.holder) = None;
        let _ = self.0.held.send(self.0.ifindex);
    }
}

/// Settings of the daemon given on its command line.
#[derive(Clone, Debug)]
pub struct Options {
    pub(crate) paths: Paths,
    /// Testing aid: hold each change this long before applying it.
    pub(crate) hold: Duration,
    /// How long a finished job object stays on the bus for its result to be read.
    pub(crate) job_linger: Duration,
    /// The longest a job may run before it is cancelled (`--max-job-seconds`).
    pub(crate) job_lifetime: Duration,
    /// How often link usage is sampled (10 s; shorter only in tests).
    pub(crate) usage_interval: Duration,
}

/// Everything the D-Bus objects share.
pub(crate) struct Daemon {
    pub(crate) opts: Options,
    pub(crate) links: RwLock<BTreeMap<u32, Arc<LinkState>>>,
    /// Used by reads and refreshes only.
    pub(crate) reader: Mutex<Netlink>,
    /// Used by changes only.
    pub(crate) writer: Mutex<Netlink>,
    pub(crate) jobs: Mutex<BTreeMap<u64, Arc<JobState>>>,
    next_job: AtomicU64,
    /// The system bus, where NetworkManager answers (connected on first use).
    nm_bus: tokio::sync::OnceCell<Option<zbus::Connection>>,
    /// Every link sends its ifindex here when its holder changes; one task
    /// announces `HeldBy` ([`super::service`]).
    pub(crate) held: tokio::sync::mpsc::UnboundedSender<u32>,
    pub(crate) held_rx: Mutex<Option<tokio::sync::mpsc::UnboundedReceiver<u32>>>,
    /// Who asked for live counters, and the rate in force ([`super::counters`]).
    pub(crate) counters: super::counter_watch::Watchers,
}

impl Daemon {
    pub(crate) fn new(opts: Options) -> Result<Arc<Self>, NicError> {
        let reader = Netlink::new().map_err(NicError::Connect)?;
        let writer = Netlink::new().map_err(NicError::Connect)?;
        let (held, held_rx) = tokio::sync::mpsc::unbounded_channel();
        Ok(Arc::new(Self {
            opts,
            links: RwLock::new(BTreeMap::new()),
            reader: Mutex::new(reader),
            writer: Mutex::new(writer),
            jobs: Mutex::new(BTreeMap::new()),
            next_job: AtomicU64::new(1),
            nm_bus: tokio::sync::OnceCell::new(),
            held,
            held_rx: Mutex::new(Some(held_rx)),
            counters: Default::default(),
        }))
    }

    pub(crate) fn paths(&self) -> &Paths {
        &self.opts.paths
    }

    /// Where the network managers keep their files.
    pub(crate) fn roots(&self) -> crate::nic::owner::Roots {
        crate::nic::owner::Roots::new(self.paths())
    }

    /// The system bus for NetworkManager (`None`: none, or a moved root).
    pub(crate) async fn nm_bus(&self) -> Option<zbus::Connection> {
        let roots = self.roots();
        self.nm_bus
            .get_or_init(|| crate::nic::owner::system_bus(&roots))
            .await
            .clone()
    }

    /// The network managers that hold a link.
    pub(crate) async fn owners(&self, name: &str, ifindex: u32) -> Vec<crate::nic::owner::Owner> {
        let bus = self.nm_bus().await;
        crate::nic::owner::find(&self.roots(), bus.as_ref(), name, ifindex).await
    }

    pub(crate) fn link(&self, ifindex: u32) -> Option<Arc<LinkState>> {
        self.links
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&ifindex)
            .cloned()
    }

    pub(crate) fn link_by_index(&self, ifindex: u32) -> Option<Arc<LinkState>> {
        self.links
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&ifindex)
            .cloned()
    }

    pub(crate) fn link_by_name(&self, name: &str) -> Option<Arc<LinkState>> {
        self.links
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .find(|l| l.model().name == name)
            .cloned()
    }

    pub(crate) fn all_links(&self) -> Vec<Arc<LinkState>> {
        self.links
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect()
    }

    pub(crate) fn next_job_id(&self) -> u64 {
        self.next_job.fetch_add(1, Ordering::SeqCst)
    }

    /// Read every link (including `lo`) through the reader connection. Blocking.
    pub(crate) fn read_all(&self) -> Result<Vec<Interface>, NicError> {
        let mut nl = lock(&self.reader);
        let links = nl.links().map_err(NicError::Connect)?;
        let mut out = Vec::with_capacity(links.len());
        for l in links {
            match read::interface(&mut nl, &l.name) {
                Ok(i) => out.push(i),
                // Gone between the dump and the query.
                Err(NicError::NoSuchInterface { .. }) => continue,
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    /// Re-read one link by name through the reader connection. Blocking.
    pub(crate) fn read_one(&self, name: &str) -> Result<Interface, NicError> {
        read::interface(&mut lock(&self.reader), name)
    }
}

/// The parts of a model that are settings, not live counters: what
/// `PropertiesChanged` is about.
pub(crate) fn settings_only(i: &Interface) -> Interface {
    Interface {
        counters: Default::default(),
        driver_stats: None,
        carrier_changes: None,
        ..i.clone()
    }
}

/// A tune's commit-confirm handshake: the work opens a window (the job's
/// state becomes `awaiting-confirmation`), `Job.Confirm` is taken only while
/// that window is open, and each window starts unconfirmed: a confirmation
/// sent before the window (a forged `State` read by a client, a hostile
/// caller) is refused, never remembered.
#[derive(Debug, Default)]
pub(crate) struct Confirmation {
    /// (awaiting, confirmed), changed together.
    state: Mutex<(bool, bool)>,
}

impl Confirmation {
    /// The work starts or stops waiting for `Job.Confirm`; either way the
    /// window starts (or ends) unconfirmed unless confirmed inside it.
    pub(crate) fn set_awaiting(&self, on: bool) {
        let mut s = lock(&self.state);
        if on && !s.0 {
            s.1 = false;
        }
        s.0 = on;
    }

    pub(crate) fn is_awaiting(&self) -> bool {
        lock(&self.state).0
    }

    /// `Job.Confirm` came: true when the window was open (and is now
    /// confirmed), false when nothing awaited confirmation.
    pub(crate) fn confirm(&self) -> bool {
        let mut s = lock(&self.state);
        if s.0 {
            s.1 = true;
        }
        s.0
    }

    pub(crate) fn is_confirmed(&self) -> bool {
        lock(&self.state).1
    }
}

/// What the work thread updates and the D-Bus properties read.
pub(super) struct JobInner {
    pub(super) status: JobStatus,
    pub(super) progress: f64,
    pub(super) message: String,
    pub(super) result: String,
}

/// A job as the daemon tracks it.
pub(crate) struct JobState {
    pub(crate) id: u64,
    pub(crate) kind: String,
    pub(crate) owner: Caller,
    pub(crate) detached: bool,
    /// The link objects the job works on.
    pub(crate) objects: Vec<zbus::OwnedObjectPath>,
    /// When it started, µs since the Unix epoch.
    pub(crate) start_time_us: u64,
    /// Whether `Progress` means anything (a tune's does not).
    pub(crate) progress_valid: bool,
    pub(crate) cancel: Cancel,
    /// A tune's commit-confirm handshake; `None` for a job with nothing to
    /// confirm.
    pub(crate) confirm: Option<Arc<Confirmation>>,
    pub(super) inner: Mutex<JobInner>,
    pub(super) changed: tokio::sync::Notify,
}

impl JobState {
    /// The job's state; a running job whose work waits for `Job.Confirm` is
    /// `awaiting-confirmation`.
    pub(crate) fn status(&self) -> JobStatus {
        let s = lock(&self.inner).status;
        let awaiting = self.confirm.as_ref().is_some_and(|c| c.is_awaiting());
        if s == JobStatus::Running && awaiting {
            JobStatus::AwaitingConfirmation
        } else {
            s
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Confirmation;

    #[test]
    fn a_confirmation_before_the_window_is_refused_and_not_remembered() {
        let c = Confirmation::default();
        assert!(!c.confirm(), "nothing awaits confirmation yet");
        c.set_awaiting(true);
        assert!(!c.is_confirmed(), "the early confirm must not pre-approve");
        assert!(c.confirm());
        assert!(c.is_confirmed());
        c.set_awaiting(false);
        assert!(!c.confirm(), "the window closed");
    }

    #[test]
    fn each_window_starts_unconfirmed() {
        let c = Confirmation::default();
        c.set_awaiting(true);
        assert!(c.confirm());
        c.set_awaiting(false);
        c.set_awaiting(true);
        assert!(!c.is_confirmed(), "a new window needs its own confirm");
    }
}
