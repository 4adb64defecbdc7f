//! `org.hlctl.Daemon1.Job`: long work (benchmarks now, tuning later) as an
//! object at `/org/hlctl/Daemon1/job/<n>`.
//!
//! A job belongs to the caller that started it (its unique bus name) and is
//! cancelled when that caller leaves the bus, unless it was started
//! `detached`. The work runs on a blocking thread with a
//! [`Cancel`](crate::bench::progress::Cancel) token; it stops at its next
//! check and cleans up after itself. A finished job stays on the bus for
//! [`Options::job_linger`](super::state::Options) so its result can be read.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tracing::{info, warn};
use zbus::message::Header;
use zbus::object_server::SignalEmitter;
use zbus::{Connection, OwnedObjectPath, OwnedVariant, interface};

use super::auth::{self, Action, Caller};
use super::limits;
use super::state::{Claim, Confirmation, Daemon, JobInner, lock};
pub(crate) use super::state::{JobState, JobStatus};
use crate::bench::exclusive::MeasureLock;
use crate::bench::progress::{Cancel, Progress, ProgressEvent};
use crate::dbus::wire::error::{Error, Result};
use crate::dbus::wire::headline;
use crate::dbus::wire::job::job_path;

/// The object path of job `id`.
pub(crate) fn path(id: u64) -> OwnedObjectPath {
    OwnedObjectPath::try_from(job_path(id)).unwrap_or_else(|_| {
        OwnedObjectPath::try_from(crate::dbus::wire::PATH).expect("static path")
    })
}

/// Progress reports from the work thread land here.
struct Sink(Arc<JobState>);

impl Progress for Sink {
    fn report(&self, event: ProgressEvent) {
        {
            let mut i = lock(&self.0.inner);
            i.progress = event.fraction.clamp(0.0, 1.0);
            i.message = event.message;
        }
        self.0.changed.notify_one();
    }
}

/// Why a job's work failed: the message and how a client should treat it
/// (`invalid`, `not_permitted` or `failed`, as exit codes 2, 3 and 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Failure {
    pub(crate) message: String,
    /// Its class ([`crate::class`]): the client's exit code follows it.
    pub(crate) class: crate::class::Class,
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure {
            message,
            class: crate::class::Class::Failed,
        }
    }
}

/// The work of a job: runs on a thread of its own, reports progress, checks
/// the token, returns a JSON result or a [`Failure`].
pub(crate) type Work = Box<
    dyn FnOnce(&dyn Progress, &Cancel) -> std::result::Result<serde_json::Value, Failure> + Send,
>;

/// The D-Bus object of one job.
pub(crate) struct JobObject {
    pub(crate) job: Arc<JobState>,
}

impl JobObject {
    /// The caller, when it is the job's owner (the connection that started
    /// it, or another connection of the same user, as UDisks2 compares
    /// uids); anyone else needs `action`.
    async fn owner_or(
        &self,
        conn: &Connection,
        hdr: &Header<'_>,
        action: Action,
    ) -> Result<Caller> {
        let who = auth::caller(conn, hdr).await?;
        if self.job.owner.same_user(&who) {
            Ok(who)
        } else {
            auth::authorize(conn, hdr, &[action], &self.job.kind).await
        }
    }
}

#[interface(name = "org.hlctl.Daemon1.Job")]
impl JobObject {
    /// What runs: `benchmark:cpu`, `benchmark:disk`, `tune:IFACE`, `doctor`,
    /// `report`, `try:IFACE` and `try:sysctl` (a change with
    /// `rollback_timeout_s`, whose ResultJson says how it ended: kept b, why
    /// s, timeout_s u, persisted s, errors as; its Result is empty).
    #[zbus(property(emits_changed_signal = "const"))]
    fn kind(&self) -> String {
        self.job.kind.clone()
    }

    /// `running`, `awaiting-confirmation` (a tune's kept changes, or a try's
    /// change, wait for `Confirm`), `succeeded`, `failed` or `cancelled`.
    #[zbus(property)]
    fn state(&self) -> String {
        self.job.status().as_str().to_string()
    }

    /// How far along, 0.0–1.0.
    #[zbus(property)]
    fn progress(&self) -> f64 {
        lock(&self.job.inner).progress
    }

    /// A short human message about the current step.
    #[zbus(property)]
    fn message(&self) -> String {
        lock(&self.job.inner).message.clone()
    }

    /// The headline figures once finished, typed; empty while running (and
    /// for a kind without headline figures: see ResultJson). The
    /// keys depend on the job's kind (`tune` for `tune:IFACE`; `failure`
    /// when it ended without a report).
    /// Keys[benchmark:net]: bps d, sent_bps d, received_bps d, reverse_bps d,
    /// retransmits t, duration_s d.
    /// Keys[benchmark:cpu]: events_per_second d, events t, threads u,
    /// latency_min_ms d, latency_avg_ms d, latency_p95_ms d, latency_max_ms d,
    /// scaling d, cancelled b.
    /// Keys[benchmark:disk]: iops d, bytes_per_second d, latency_min_us d,
    /// latency_mean_us d, latency_p50_us d, latency_p90_us d, latency_p99_us d,
    /// latency_p99_9_us d, latency_max_us d, total_ios t.
    /// Keys[benchmark:stress]: verdict s, reasons as, duration_s d, cancelled b.
    /// Keys[tune]: outcome s, interface s, kept u, reverted u, findings a(ssss).
    /// Keys[doctor]: findings a(ssss), passed u, not_checked u.
    /// Keys[report]: network a(sdd), figures a(sssds).
    /// Keys[failure]: error s, class s.
    /// (bps: bits per second the receiver got in the main direction;
    /// reverse_bps: the other direction of a bidir test, else 0; retransmits:
    /// 0 when unknown, as for UDP; latency in ms per event or in µs per I/O;
    /// scaling: events/s with N threads over 1 thread, 0 when not measured;
    /// kept, reverted: candidates; findings: (id, severity, interface,
    /// title); passed, not_checked: how many checks; network: (peer,
    /// upload bps, download bps, 0 when not measured); figures: (disk or cpu,
    /// directory or single/multi, figure, value, unit); class: invalid,
    /// not_permitted or failed.)
    #[zbus(property)]
    fn result(&self) -> HashMap<String, OwnedVariant> {
        let json = lock(&self.job.inner).result.clone();
        if json.is_empty() {
            return HashMap::new();
        }
        let v = serde_json::from_str(&json).unwrap_or_default();
        headline::headline(&self.job.kind, &v)
    }

    /// The whole result as JSON once finished (the JSON output of the
    /// matching `hlctl` command; `{"error": ..., "class": ...}` on failure),
    /// "" before.
    #[zbus(property)]
    fn result_json(&self) -> String {
        lock(&self.job.inner).result.clone()
    }

    /// The unique bus name that owns the job.
    #[zbus(property(emits_changed_signal = "const"))]
    fn owner(&self) -> String {
        self.job.owner.sender.clone()
    }

    /// True when the job outlives its owner's bus connection.
    #[zbus(property(emits_changed_signal = "const"))]
    fn detached(&self) -> bool {
        self.job.detached
    }

    /// The uid of the user who started the job (as UDisks2's Job has it);
    /// that user may cancel or confirm it from any connection.
    #[zbus(property(emits_changed_signal = "const"), name = "StartedByUID")]
    fn started_by_uid(&self) -> u32 {
        self.job.owner.uid.unwrap_or(u32::MAX)
    }

    /// The link objects the job works on (empty when it works on none).
    #[zbus(property(emits_changed_signal = "const"))]
    fn objects(&self) -> Vec<OwnedObjectPath> {
        self.job.objects.clone()
    }

    /// When the job started, in µs since 1970-01-01 UTC.
    #[zbus(property(emits_changed_signal = "const"))]
    fn start_time(&self) -> u64 {
        self.job.start_time_us
    }

    /// Whether `Cancel` can stop it: true while it runs (a tune rolls
    /// back what it changed), false once it has ended.
    #[zbus(property)]
    fn cancelable(&self) -> bool {
        self.job.status().is_active()
    }

    /// Whether `Progress` is an honest fraction of the work; false for a
    /// tune, whose length depends on what it finds.
    #[zbus(property(emits_changed_signal = "const"))]
    fn progress_valid(&self) -> bool {
        self.job.progress_valid
    }

    /// Ask the job to stop. Its owner (the starting connection or the same
    /// user from any connection) may always cancel it; anyone else needs the
    /// run-benchmark authorization.
    async fn cancel(
        &self,
        #[zbus(header)] hdr: Header<'_>,
        #[zbus(connection)] conn: &Connection,
    ) -> Result<()> {
        let who = self.owner_or(conn, &hdr, Action::RunBenchmark).await?;
        if self.job.status().is_active() {
            info!(job = self.job.id, caller_uid = %who.uid_text(), "job {} cancelled by its caller", self.job.id);
            self.job.cancel.cancel();
        }
        Ok(())
    }

    /// Confirm a tune's kept changes, or a try's change (commit-confirm).
    /// Without this call before the confirm timeout, the daemon rolls them
    /// back. Taken only
    /// while the job is `awaiting-confirmation` (else `InvalidState`, and
    /// nothing is remembered for later), from the job's owner or a caller
    /// with the tune authorization.
    async fn confirm(
        &self,
        #[zbus(header)] hdr: Header<'_>,
        #[zbus(connection)] conn: &Connection,
    ) -> Result<()> {
        let not_awaiting = || {
            Error::InvalidState(format!(
                "job {} ({}) is {}, not awaiting confirmation: nothing to confirm",
                self.job.id,
                self.job.kind,
                self.job.status().as_str()
            ))
        };
        let Some(flag) = &self.job.confirm else {
            return Err(not_awaiting());
        };
        if !flag.is_awaiting() {
            return Err(not_awaiting());
        }
        let who = self.owner_or(conn, &hdr, Action::Tune).await?;
        if !flag.confirm() {
            return Err(not_awaiting());
        }
        info!(job = self.job.id, caller_uid = %who.uid_text(), "job {} confirmed", self.job.id);
        Ok(())
    }

    /// The job ended: its final state and its whole result as JSON (as
    /// `ResultJson`; the typed figures are in `Result`).
    #[zbus(signal)]
    async fn finished(
        emitter: &SignalEmitter<'_>,
        state: &str,
        result_json: &str,
    ) -> zbus::Result<()>;
}

/// A job about to start: what it is, whose it is and what it holds.
pub(crate) struct NewJob {
    /// `benchmark:cpu`, `tune:eth0`, ...
    pub(crate) kind: String,
    pub(crate) owner: Caller,
    /// Keeps running when its owner leaves the bus.
    pub(crate) detached: bool,
    /// A held link, released when the work ends.
    pub(crate) claim: Option<Claim>,
    /// A tune's commit-confirm handshake (`Job.Confirm`).
    pub(crate) confirm: Option<Arc<Confirmation>>,
    /// The work measures: it runs only while it holds the host's
    /// measurement lock (waiting for it first).
    pub(crate) measures: bool,
    /// The links it works on (their object paths).
    pub(crate) objects: Vec<OwnedObjectPath>,
    /// Its progress is an honest fraction of the work (a tune's is not).
    pub(crate) progress_valid: bool,
}

impl NewJob {
    /// A measuring job of `owner` on no link: no claim, no commit-confirm,
    /// an honest progress (benchmarks, doctor, report, check; each sets
    /// what differs).
    pub(crate) fn measuring(kind: impl Into<String>, owner: Caller, detached: bool) -> NewJob {
        NewJob {
            kind: kind.into(),
            owner,
            detached,
            claim: None,
            confirm: None,
            measures: true,
            objects: Vec::new(),
            progress_valid: true,
        }
    }
}

/// Register a job object and start `work` on a blocking thread.
pub(crate) async fn start(
    conn: &Connection,
    d: &Arc<Daemon>,
    new: NewJob,
    work: Work,
) -> Result<OwnedObjectPath> {
    let NewJob {
        kind,
        owner,
        detached,
        claim,
        confirm,
        measures,
        objects,
        progress_valid,
    } = new;
    let id = d.next_job_id();
    let start_time_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |t| t.as_micros() as u64);
    let job = Arc::new(JobState {
        id,
        kind,
        owner,
        detached,
        objects,
        start_time_us,
        progress_valid,
        cancel: Cancel::new(),
        confirm,
        inner: std::sync::Mutex::new(JobInner {
            status: JobStatus::Running,
            progress: 0.0,
            message: "starting".into(),
            result: String::new(),
        }),
        changed: tokio::sync::Notify::new(),
    });
    {
        // Checked and counted under one lock: concurrent starts cannot both
        // slip under a limit.
        let mut jobs = lock(&d.jobs);
        limits::admit(&jobs, &job.owner)?;
        jobs.insert(id, job.clone());
    }
    let p = path(id);
    if let Err(e) = conn
        .object_server()
        .at(p.clone(), JobObject { job: job.clone() })
        .await
    {
        lock(&d.jobs).remove(&id);
        return Err(Error::Failed(format!("cannot register job: {e}")));
    }
    info!(
        job = id,
        kind = %job.kind,
        caller_uid = %job.owner.uid_text(),
        sender = %job.owner.sender,
        detached,
        "job {id} started"
    );
    let work = if measures {
        exclusive(d.paths().measure_lock_file(), work)
    } else {
        work
    };
    tokio::spawn(drive(conn.clone(), d.clone(), job, claim, work));
    Ok(p)
}

/// `work`, run once the host's measurement lock at `lock_file` is held
/// (waiting for another measurement to end first, cancellable).
fn exclusive(lock_file: std::path::PathBuf, work: Work) -> Work {
    Box::new(move |progress, cancel| {
        let _held = MeasureLock::acquire_waiting(&lock_file, progress, cancel)
            .map_err(|e| {
                Failure::from(format!(
                    "cannot take the measurement lock {}: {e}",
                    lock_file.display()
                ))
            })?
            .ok_or_else(|| {
                Failure::from("cancelled while waiting for another measurement".to_string())
            })?;
        work(progress, cancel)
    })
}

/// The job's object, for its property and signal announcements.
type JobRef = zbus::object_server::InterfaceRef<JobObject>;

/// Run a job to its end: start its thread, announce its progress, record
/// how it ended, announce that, and keep its object for the linger time.
async fn drive(
    conn: Connection,
    d: Arc<Daemon>,
    job: Arc<JobState>,
    claim: Option<Claim>,
    work: Work,
) {
    let p = path(job.id);
    let task = spawn_work(&job, work);
    let iref = conn
        .object_server()
        .interface::<_, JobObject>(p.clone())
        .await
        .ok();
    let outcome = follow(&job, d.opts.job_lifetime, task, iref.as_ref()).await;
    drop(claim);
    let (status, result) = ending(&job, outcome);
    announce_end(&job, iref.as_ref(), status, &result).await;
    tokio::time::sleep(d.opts.job_linger).await;
    let _ = conn.object_server().remove::<JobObject, _>(p).await;
    lock(&d.jobs).remove(&job.id);
}

type WorkOutcome = std::result::Result<std::result::Result<serde_json::Value, Failure>, RecvError>;
type RecvError = tokio::sync::oneshot::error::RecvError;

/// Long work gets a thread of its own, not one of the runtime's short-task
/// threads; its result arrives on the returned channel.
fn spawn_work(
    job: &Arc<JobState>,
    work: Work,
) -> tokio::sync::oneshot::Receiver<std::result::Result<serde_json::Value, Failure>> {
    let (j, cancel) = (job.clone(), job.cancel.clone());
    let (tx, task) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name(format!("job-{}", job.id))
        .spawn(move || {
            let _ = tx.send(work(&Sink(j), &cancel));
        });
    if let Err(e) = spawned {
        warn!(job = job.id, "cannot start the job's thread: {e}");
    }
    task
}

/// Wait for the work, announcing its progress (at most ten times a second)
/// and cancelling it when it outlives `lifetime`.
async fn follow(
    job: &JobState,
    lifetime: Duration,
    mut task: tokio::sync::oneshot::Receiver<std::result::Result<serde_json::Value, Failure>>,
    iref: Option<&JobRef>,
) -> WorkOutcome {
    let mut announced = JobStatus::Running;
    let end_of_life = tokio::time::sleep(lifetime);
    tokio::pin!(end_of_life);
    loop {
        tokio::select! {
            r = &mut task => return r,
            _ = &mut end_of_life, if !job.cancel.is_cancelled() => {
                warn!(job = job.id, "job {} ran for {} s, the longest a job may run (--max-job-seconds): cancelled", job.id, lifetime.as_secs());
                job.cancel.cancel();
            }
            _ = job.changed.notified() => {
                if let Some(iref) = iref {
                    announce_progress(job, iref, &mut announced).await;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

async fn announce_progress(job: &JobState, iref: &JobRef, announced: &mut JobStatus) {
    let obj = iref.get().await;
    let e = iref.signal_emitter();
    let now = job.status();
    if now != *announced {
        *announced = now;
        let _ = obj.state_changed(e).await;
    }
    let _ = obj.progress_changed(e).await;
    let _ = obj.message_changed(e).await;
}

/// How the job ended, stored in its state: a cancelled benchmark still
/// returns what it measured (marked partial).
fn ending(job: &JobState, outcome: WorkOutcome) -> (JobStatus, String) {
    let cancelled = job.cancel.is_cancelled();
    let (status, result) = match outcome {
        Ok(Ok(v)) if cancelled => (JobStatus::Cancelled, v),
        Ok(Ok(v)) => (JobStatus::Succeeded, v),
        _ if cancelled => (
            JobStatus::Cancelled,
            serde_json::json!({"error": "cancelled"}),
        ),
        Ok(Err(f)) => (
            JobStatus::Failed,
            serde_json::json!({ "error": f.message, "class": f.class.wire() }),
        ),
        Err(_) => (
            JobStatus::Failed,
            serde_json::json!({ "error": "the job's thread ended without a result" }),
        ),
    };
    let result = result.to_string();
    {
        let mut i = lock(&job.inner);
        i.status = status;
        i.result = result.clone();
        if status == JobStatus::Succeeded {
            i.progress = 1.0;
        }
        i.message = status.as_str().to_string();
    }
    info!(job = job.id, kind = %job.kind, "job {} {}", job.id, status.as_str());
    (status, result)
}

/// The end: every changed property, then `Finished`.
async fn announce_end(job: &JobState, iref: Option<&JobRef>, status: JobStatus, result: &str) {
    let Some(iref) = iref else {
        return;
    };
    let obj = iref.get().await;
    let e = iref.signal_emitter();
    let r = obj
        .state_changed(e)
        .await
        .and(obj.progress_changed(e).await)
        .and(obj.message_changed(e).await)
        .and(obj.result_changed(e).await)
        .and(obj.result_json_changed(e).await)
        .and(obj.cancelable_changed(e).await)
        .and(JobObject::finished(e, status.as_str(), result).await);
    if let Err(err) = r {
        warn!(job = job.id, "cannot announce the end of the job: {err}");
    }
}

/// The caller `name` left the bus: cancel its running, attached jobs.
pub(crate) fn owner_left(d: &Daemon, name: &str) {
    for job in lock(&d.jobs).values() {
        if job.owner.sender == name && !job.detached && job.status().is_active() {
            info!(
                job = job.id,
                caller_uid = %job.owner.uid_text(),
                "job {} cancelled: its caller {name} left the bus",
                job.id
            );
            job.cancel.cancel();
        }
    }
}
