//! `org.hlctl.Daemon1.Link`: one object per link at `/org/hlctl/Daemon1/link/<ifindex>`.
//!
//! Properties are served from the daemon's cached model (never waiting for a
//! change in progress). Each settings group is a typed property
//! (`Rings a{su}`, `Pause (bbb)`, `Features a{s(bbb)}`, `LinkModes a{sv}`,
//! `Channels a{su}`, `Coalesce a{sv}`, `Counters a{st}`: [`typed`]) keyed
//! as `ApplyChanges` takes its settings; the method `Describe()` gives the
//! whole `hlctl show` model as JSON, exactly one element of `hlctl show
//! --json`'s `interfaces`, for programs that want everything.
//! `PropertiesChanged` is emitted for each group that changes, whoever
//! changed it (the monitor sees `ethtool -K` too).

use std::collections::HashMap;
use std::sync::Arc;

use tracing::{info, warn};
use zbus::message::Header;
use zbus::object_server::SignalEmitter;
use zbus::{Connection, OwnedObjectPath, OwnedVariant, interface};

use super::auth;
use super::state::{COUNTERS_MAX_AGE, Daemon, LinkState, lock, settings_only};
use crate::dbus::wire::error::{Error, Result};
use crate::dbus::wire::set_rows::{self, Row};
use crate::dbus::wire::{settings, typed};
use crate::nic::error::NicError;
use crate::nic::model::Interface;
use crate::nic::set::SetReply;

/// The object path of the link with `ifindex`.
pub(crate) fn path(ifindex: u32) -> OwnedObjectPath {
    OwnedObjectPath::try_from(format!("{}/link/{ifindex}", crate::dbus::wire::PATH)).unwrap_or_else(
        |_| OwnedObjectPath::try_from(crate::dbus::wire::PATH).expect("static path"),
    )
}

/// The D-Bus object of one link.
pub(crate) struct LinkObject {
    pub(crate) daemon: Arc<Daemon>,
    pub(crate) link: Arc<LinkState>,
}

#[interface(name = "org.hlctl.Daemon1.Link")]
impl LinkObject {
    /// Interface name (`eth0`); follows renames.
    #[zbus(property)]
    fn name(&self) -> String {
        self.link.model().name
    }

    /// Kernel interface index.
    #[zbus(property)]
    fn ifindex(&self) -> u32 {
        self.link.ifindex
    }

    /// Hardware address, or "" when the link has none.
    #[zbus(property)]
    fn mac(&self) -> String {
        self.link.model().mac.unwrap_or_default()
    }

    /// Driver name (`ethtool -i`), or "".
    #[zbus(property)]
    fn driver(&self) -> String {
        self.link.model().driver.unwrap_or_default()
    }

    /// MTU in bytes.
    #[zbus(property)]
    fn mtu(&self) -> u32 {
        self.link.model().mtu
    }

    /// Link speed in Mb/s; 0 when unknown or not reported.
    #[zbus(property)]
    fn speed(&self) -> u32 {
        self.link
            .model()
            .link
            .and_then(|l| l.speed_mbps)
            .unwrap_or(0)
    }

    /// `full`, `half`, or "" when unknown.
    #[zbus(property)]
    fn duplex(&self) -> String {
        self.link
            .model()
            .link
            .and_then(|l| l.duplex)
            .map(|d| d.to_string())
            .unwrap_or_default()
    }

    /// RFC 2863 operational state (`up`, `down`, ...).
    #[zbus(property)]
    fn oper_state(&self) -> String {
        self.link.model().oper_state
    }

    /// What holds the link now (a change or a benchmark job), or "";
    /// announced when it changes.
    #[zbus(property)]
    fn held_by(&self) -> String {
        self.link.holder().unwrap_or_default()
    }

    /// The whole `hlctl show` model of this link as JSON (schema of the
    /// JSON output of `hlctl show`, one of `interfaces[]`), for programs
    /// that want everything at once (as hostnamed's Describe). A method, not
    /// a property: nothing announces it on every change; the typed
    /// properties are announced. Counters are at most 0.5 s old.
    async fn describe(&self) -> String {
        let i = describe(&self.daemon, std::slice::from_ref(&self.link)).await;
        serde_json::to_string(&i.first()).unwrap_or_else(|_| "null".into())
    }

    /// The network managers that set this link's settings from their own
    /// configuration: (manager, name, file, netplan, owns), where manager is
    /// network-manager, networkd, link-file, ifupdown2 or ifupdown; name the
    /// connection or stanza; file the file it reads; netplan the YAML the
    /// file was generated from ("" when none); owns the settings it sets, by
    /// the keys ApplyChanges takes (`mtu`, `ring.rx`, `feature.rx-gro`). Read
    /// when asked, not announced.
    #[zbus(property(emits_changed_signal = "false"))]
    async fn owners(&self) -> Vec<(String, String, String, String, Vec<String>)> {
        let m = self.link.model();
        self.daemon
            .owners(&m.name, m.ifindex)
            .await
            .into_iter()
            .map(typed::owner)
            .collect()
    }

    /// Ring sizes (`ethtool -g`): the keys the driver reports, empty when it
    /// has no ring settings. Keys: rx u, tx u, rx-mini u, rx-jumbo u, rx-max u,
    /// tx-max u, rx-mini-max u, rx-jumbo-max u. (KEY-max: the pre-set maximum
    /// of setting KEY; a setting's key is the one ApplyChanges takes after
    /// "ring", e.g. ring.rx-jumbo.)
    #[zbus(property)]
    fn rings(&self) -> HashMap<String, u32> {
        typed::rings(&self.link.model())
    }

    /// Flow control (`ethtool -a`): (autoneg, rx, tx); all false when the
    /// driver has no pause settings.
    #[zbus(property)]
    fn pause(&self) -> (bool, bool, bool) {
        typed::pause(&self.link.model())
    }

    /// Offloads (`ethtool -k`) by kernel name (`rx-gro`,
    /// `tx-tcp-segmentation`, ...): (active, requested, fixed), where fixed
    /// means the driver does not let it change.
    #[zbus(property)]
    fn features(&self) -> HashMap<String, (bool, bool, bool)> {
        typed::features(&self.link.model())
    }

    /// Link settings (`ethtool` without options): the keys the driver
    /// reports, empty when it reports none. Keys: speed u, duplex s,
    /// autoneg b, advertise as, port s, lanes u, supported as, partner as,
    /// capabilities as, detected b. (speed, duplex, autoneg and advertise are
    /// the settings written as link.KEY; speed in Mb/s, absent without a
    /// link; duplex full or half; port TP, FIBRE, DA and so on; advertise,
    /// supported and partner: link modes by ethtool name such as
    /// 1000baseT/Full; capabilities: Autoneg, ports, Pause, Asym_Pause;
    /// detected: carrier.)
    #[zbus(property)]
    fn link_modes(&self) -> HashMap<String, OwnedVariant> {
        typed::link_modes(&self.link.model())
    }

    /// Queue counts (`ethtool -l`): the keys the driver reports, empty when it
    /// has none. Keys: rx u, tx u, other u, combined u, rx-max u, tx-max u,
    /// other-max u, combined-max u. (KEY-max: the maximum of setting KEY,
    /// written as channels.KEY.)
    #[zbus(property)]
    fn channels(&self) -> HashMap<String, u32> {
        typed::channels(&self.link.model())
    }

    /// Interrupt coalescing (`ethtool -c`): the keys the driver reports, empty
    /// when it has none. Keys: rx-usecs u, tx-usecs u, rx-frames u,
    /// tx-frames u, adaptive-rx b, adaptive-tx b. (Written as coalesce.KEY.)
    #[zbus(property)]
    fn coalesce(&self) -> HashMap<String, OwnedVariant> {
        typed::coalesce(&self.link.model())
    }

    /// Interface counters (IFLA_STATS64), at most 0.5 s old. Not announced in
    /// PropertiesChanged (they change with every packet): read them. Keys:
    /// rx-packets t, tx-packets t, rx-bytes t, tx-bytes t, rx-errors t,
    /// tx-errors t, rx-dropped t, tx-dropped t, rx-crc-errors t,
    /// rx-frame-errors t, rx-missed-errors t, rx-fifo-errors t,
    /// rx-over-errors t, tx-fifo-errors t, tx-carrier-errors t, collisions t.
    /// (Not settings; spelled as every key of a link's groups is.)
    /// Announced (PropertiesChanged) at the rate some client asked for with
    /// `Manager.SetCountersRefresh`; not announced when none did.
    #[zbus(property)]
    async fn counters(&self) -> HashMap<String, u64> {
        typed::counters(&self.fresh().await)
    }

    /// Apply a change set (keys: see the header of
    /// `dbus/org.hlctl.Daemon1.xml`): validate everything, snapshot, apply in
    /// a safe order, read back, restore on failure. Options: `dry_run` (b),
    /// `persist` (b), `rollback_timeout_s` (u: seconds, 0 or absent for none):
    /// with it the change is applied and journalled, kept only when the
    /// job the summary's key `job` o names (present only then; kind
    /// `try:IFACE`, `awaiting-confirmation`) gets `Job.Confirm` before the deadline, and
    /// restored at the deadline, on `Job.Cancel`, or at once when the caller
    /// leaves the bus (as netplan try when its client dies); persist is
    /// written only once confirmed; after a crash of hlctld in the window the
    /// change is restored when it starts again. The link stays held until
    /// then. Returns `rows`, one per setting: (setting, before,
    /// requested, after, status, message) as `hlctl set` prints them, setting
    /// by the key this method takes (`ring.rx`, `feature.rx-gro`); status
    /// is planned, unchanged, changed, adjusted, restored, not_applied,
    /// restore_failed or followed (not requested: the kernel changed it on
    /// its own after a requested change of its group; requested is "" and
    /// message names what it follows); message says why the driver holds
    /// another value, when known; a value is "" when the driver reports none, and after is "" in
    /// a dry run. And a `summary` (a{sv}). Keys[summary]: interface s,
    /// dry_run b, changed u, statuses a{su}, failed_step s, error s, errno i,
    /// extack s, restore_errors as, persisted s, persisted_through as, persist_error s. (changed: settings
    /// the kernel now holds differently; statuses: settings per status;
    /// failed_step, error, errno: the request that failed, "" and 0 when none;
    /// extack: the kernel's extended-ack message for it, "" when it sent none;
    /// restore_errors: what could not be put back; persisted: the state file
    /// written, "" when not persisted; persisted_through: the lines and keys
    /// written into the link's network managers' files; persist_error: why
    /// persisting failed.)
    #[zbus(out_args("rows", "summary"))]
    async fn apply_changes(
        &self,
        settings: HashMap<String, OwnedVariant>,
        options: HashMap<String, OwnedVariant>,
        #[zbus(header)] hdr: Header<'_>,
        #[zbus(connection)] conn: &Connection,
    ) -> Result<(Vec<Row>, HashMap<String, OwnedVariant>)> {
        let name = self.link.model().name;
        let invalid = |problems| {
            Error::InvalidArgument(
                NicError::Invalid {
                    iface: name.clone(),
                    problems,
                }
                .to_string(),
            )
        };
        crate::dbus::wire::bounds::check_dict("settings", &settings)
            .and_then(|()| crate::dbus::wire::bounds::check_dict("options", &options))
            .map_err(Error::InvalidArgument)?;
        let cs = settings::decode_changes(&settings).map_err(invalid)?;
        let max_try = super::try_job::max_seconds(&self.daemon);
        let mode = settings::decode_change_mode(&options, max_try).map_err(invalid)?;
        let (dry_run, persist, try_s) = (mode.dry_run, mode.persist, mode.try_s);
        let caller = if dry_run {
            auth::caller(conn, &hdr).await?
        } else {
            let actions = crate::dbus::wire::verb::SET.actions(persist);
            auth::authorize(conn, &hdr, &actions, &name).await?
        };
        // A dry run changes nothing, so it holds nothing either.
        let claim = match dry_run {
            true => None,
            false => Some(
                self.link
                    .claim(format!("a change by uid {}", caller.uid_text()))?,
            ),
        };
        if claim.is_some() && !self.daemon.opts.hold.is_zero() {
            tokio::time::sleep(self.daemon.opts.hold).await;
        }
        let d = self.daemon.clone();
        let iface = name.clone();
        let (reply, pending) = tokio::task::spawn_blocking(move || {
            let mut nl = lock(&d.writer);
            change(&mut nl, d.paths(), &iface, &cs, (dry_run, persist), try_s)
        })
        .await
        .map_err(|e| Error::Failed(format!("{name}: the change task failed: {e}")))??;
        self.link.guard.own_values(&reply.outcome);
        if reply.persisted.is_some() {
            let names: Vec<String> = reply
                .outcome
                .settings
                .iter()
                .map(|s| s.setting.clone())
                .collect();
            self.link.guard.forget(&names);
        }
        log_reply(&caller, &reply);
        if !dry_run {
            refresh(conn, &self.daemon, &self.link).await;
        }
        let mut out = set_rows::encode(&reply);
        if let Some(p) = pending {
            // The try's job holds the link until it is kept or restored.
            let objects = vec![path(self.link.ifindex)];
            let job =
                super::try_job::start(conn, &self.daemon, &name, caller, claim, objects, p).await?;
            out.1.insert("job".into(), super::try_job::job_value(&job));
        }
        Ok(out)
    }
}

/// The change itself: at once (`try_s` 0), or kept only once confirmed.
fn change(
    nl: &mut crate::nic::netlink::Netlink,
    paths: &crate::paths::Paths,
    iface: &str,
    cs: &crate::nic::model::ChangeSet,
    (dry_run, persist): (bool, bool),
    try_s: u32,
) -> Result<(SetReply, Option<crate::ops::try_change::Pending>)> {
    if try_s == 0 {
        let r = crate::ops::nic::set(nl, paths, iface, cs, dry_run, persist)?;
        return Ok((r, None));
    }
    let timeout = std::time::Duration::from_secs(try_s.into());
    crate::ops::try_change::begin_set(nl, paths, iface, cs, persist, timeout)
        .map_err(super::try_job::error)
}

impl LinkObject {
    /// The model, re-read first when its counters are older than
    /// [`COUNTERS_MAX_AGE`].
    async fn fresh(&self) -> Interface {
        fresh(&self.daemon, &self.link).await
    }
}

/// The link's model, read again when its counters are older than
/// [`COUNTERS_MAX_AGE`].
async fn fresh(d: &Arc<Daemon>, link: &Arc<LinkState>) -> Interface {
    refresh_stale(d, std::slice::from_ref(link)).await;
    link.model()
}

/// Read again each of `links` whose counters are older than
/// [`COUNTERS_MAX_AGE`], all on one blocking thread.
async fn refresh_stale(d: &Arc<Daemon>, links: &[Arc<LinkState>]) {
    let stale: Vec<Arc<LinkState>> = links
        .iter()
        .filter(|l| l.age() > COUNTERS_MAX_AGE)
        .cloned()
        .collect();
    if stale.is_empty() {
        return;
    }
    let dd = d.clone();
    let _ = tokio::task::spawn_blocking(move || {
        for l in stale {
            if let Ok(iface) = dd.read_one(&l.model().name)
                && iface.ifindex == l.ifindex
            {
                l.set_model(iface);
            }
        }
    })
    .await;
}

/// The whole model of each of `links` as `hlctl show` has it: fresh
/// counters, the network managers that own its settings, the conflicts
/// hlctld gave up on, the queue layout. The links' reads go to the
/// blocking pool once for all of them, not once per link and part (a
/// hypervisor's 600 links were 1,200 hand-overs).
pub(crate) async fn describe(d: &Arc<Daemon>, links: &[Arc<LinkState>]) -> Vec<Interface> {
    refresh_stale(d, links).await;
    let mut out = Vec::with_capacity(links.len());
    for l in links {
        let mut i = l.model();
        i.owners = d.owners(&i.name, i.ifindex).await;
        i.conflicts = lock(&l.guard.given_up).values().cloned().collect();
        out.push(i);
    }
    with_queues(out).await
}

/// `list` with each link's queue layout and RPS, read when asked as the
/// in-process `show` reads them (the host-wide part once), on one blocking
/// thread: both live in sysfs, where a change (another program's, or
/// `echo > rps_cpus`) sends no netlink event that would refresh the cached
/// model. Without a layout when that thread fails.
async fn with_queues(mut list: Vec<Interface>) -> Vec<Interface> {
    let names: Vec<String> = list.iter().map(|i| i.name.clone()).collect();
    let read = tokio::task::spawn_blocking(move || {
        let rps: Vec<_> = names
            .iter()
            .map(|n| {
                (
                    crate::nic::rps::read(n),
                    crate::nic::xps::read(n),
                    crate::nic::irq_affinity::read(n),
                )
            })
            .collect();
        (crate::ops::nic::queues(&names), rps)
    })
    .await;
    if let Ok((layouts, rps)) = read {
        for ((i, q), r) in list.iter_mut().zip(layouts).zip(rps) {
            i.queues = Some(q);
            (i.rps, i.xps, i.irq_affinity) = r;
        }
    }
    list
}

fn log_reply(caller: &auth::Caller, reply: &SetReply) {
    let o = &reply.outcome;
    if o.dry_run {
        return;
    }
    for s in &o.settings {
        let after = s.after.as_ref().map_or("-".to_string(), |v| v.to_string());
        info!(
            caller_uid = %caller.uid_text(),
            sender = %caller.sender,
            action = "apply-settings",
            iface = %o.interface,
            setting = %s.setting,
            status = ?s.status,
            "{} {}: {} -> {}",
            o.interface,
            s.setting,
            s.before,
            after
        );
    }
    if let Some(f) = &o.failure {
        warn!(caller_uid = %caller.uid_text(), iface = %o.interface, "change failed at {}: {} (restore errors: {:?})", f.step, f.error, o.restore_errors);
    }
    if let Some(p) = &reply.persisted {
        info!(caller_uid = %caller.uid_text(), action = "persist", iface = %o.interface, "persisted in {p}");
    }
    if let Some(e) = &reply.persist_error {
        warn!(caller_uid = %caller.uid_text(), iface = %o.interface, "persisting failed: {e}");
    }
}

/// Re-read one link, store the model and announce what changed.
pub(crate) async fn refresh(conn: &Connection, d: &Arc<Daemon>, link: &Arc<LinkState>) {
    let (dd, name) = (d.clone(), link.model().name);
    match tokio::task::spawn_blocking(move || dd.read_one(&name)).await {
        Ok(Ok(iface)) if iface.ifindex == link.ifindex => publish(conn, link, iface).await,
        // Renamed or gone: the monitor's reconciliation takes care of it.
        _ => {}
    }
}

/// Store a freshly read model and emit `PropertiesChanged` for what differs.
pub(crate) async fn publish(conn: &Connection, link: &LinkState, new: Interface) {
    let old = link.set_model(new.clone());
    if settings_only(&old) == settings_only(&new) {
        return;
    }
    let Ok(iref) = conn
        .object_server()
        .interface::<_, LinkObject>(path(link.ifindex))
        .await
    else {
        return;
    };
    let e: &SignalEmitter<'static> = iref.signal_emitter();
    let obj = iref.get().await;
    let speed = |i: &Interface| i.link.as_ref().and_then(|l| l.speed_mbps);
    let duplex = |i: &Interface| i.link.as_ref().and_then(|l| l.duplex);
    let mut r = Ok(());
    if old.name != new.name {
        r = r.and(obj.name_changed(e).await);
    }
    if old.mac != new.mac {
        r = r.and(obj.mac_changed(e).await);
    }
    if old.driver != new.driver {
        r = r.and(obj.driver_changed(e).await);
    }
    if old.mtu != new.mtu {
        r = r.and(obj.mtu_changed(e).await);
    }
    if speed(&old) != speed(&new) {
        r = r.and(obj.speed_changed(e).await);
    }
    if duplex(&old) != duplex(&new) {
        r = r.and(obj.duplex_changed(e).await);
    }
    if old.oper_state != new.oper_state {
        r = r.and(obj.oper_state_changed(e).await);
    }
    if old.rings != new.rings {
        r = r.and(obj.rings_changed(e).await);
    }
    if old.pause != new.pause {
        r = r.and(obj.pause_changed(e).await);
    }
    if old.features != new.features {
        r = r.and(obj.features_changed(e).await);
    }
    if old.link != new.link {
        r = r.and(obj.link_modes_changed(e).await);
    }
    if old.channels != new.channels {
        r = r.and(obj.channels_changed(e).await);
    }
    if old.coalesce != new.coalesce {
        r = r.and(obj.coalesce_changed(e).await);
    }
    if let Err(err) = r {
        warn!("{}: cannot emit PropertiesChanged: {err}", new.name);
    }
}
