//! hlctld's life: read every link, register the objects, own the bus name,
//! tell systemd we are ready, follow netlink changes, re-apply persisted
//! settings, cancel jobs whose callers left, and shut down cleanly on SIGTERM.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tracing::{info, warn};
use zbus::Connection;

use super::link::{self, LinkObject};
use super::manager::Manager;
use super::sampler::Sampler;
use super::state::{Daemon, LinkState, Options, lock};
use super::{job, memory, monitor, notify, reapply};
use crate::dbus::wire::{BUS_NAME, PATH};
use crate::nic::error::NicError;

/// How long an idle thread of the blocking pool waits for more work.
const BLOCKING_KEEP_ALIVE: Duration = Duration::from_secs(5);

/// Which bus to serve on.
#[derive(Clone, Debug)]
pub enum Bus {
    /// The system bus (`DBUS_SYSTEM_BUS_ADDRESS` or the standard socket).
    System,
    /// The session bus (development).
    Session,
    /// Any D-Bus address (`unix:path=/run/test/bus`).
    Address(String),
}

/// Why the daemon could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("cannot read the links: {0}")]
    Engine(#[from] NicError),
    #[error("cannot connect to the bus or own {BUS_NAME}: {0}")]
    Bus(#[from] zbus::Error),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("the bus connection was lost")]
    BusLost,
}

/// Build a connection builder for `bus`.
pub(crate) fn builder(bus: &Bus) -> zbus::connection::Builder<'static> {
    match bus {
        Bus::System => zbus::connection::Builder::system(),
        Bus::Session => zbus::connection::Builder::session(),
        Bus::Address(a) => zbus::connection::Builder::address(a.as_str()),
    }
}

/// Run the daemon until SIGTERM or SIGINT.
pub fn run(bus: Bus, opts: Options) -> Result<(), ServiceError> {
    memory::one_arena();
    crate::crashpoint::init()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
    // A tune interrupted by a crash left journalled settings: restore them
    // before anything else, then watch the confirm deadlines.
    super::tune::on_start(&opts.paths);
    // One thread runs every D-Bus request (they only read the cache or wait
    // for polkit); netlink reads and changes go to the blocking pool, whose
    // threads end (and give their memory back) soon after a burst; benchmarks
    // and tunes run on threads of their own.
    let rt = tokio::runtime::Builder::new_current_thread()
        .max_blocking_threads(4)
        .thread_keep_alive(BLOCKING_KEEP_ALIVE)
        .on_thread_stop(memory::trim)
        .enable_all()
        .build()?;
    let r = rt.block_on(serve(bus, opts));
    // Jobs were cancelled; do not wait forever for a blocking task that ignores it.
    rt.shutdown_timeout(Duration::from_secs(2));
    r
}

async fn serve(bus: Bus, opts: Options) -> Result<(), ServiceError> {
    let t0 = Instant::now();
    let config = load_config(&opts);
    let d = Daemon::new(opts)?;
    let conn = connect(&bus, &d).await?;
    let sampler = Sampler::spawn(&d, config, d.opts.usage_interval);
    info!(
        links = d.all_links().len(),
        "hlctld {} serving {BUS_NAME} ({} ms to the bus name)",
        env!("CARGO_PKG_VERSION"),
        t0.elapsed().as_millis()
    );
    // Reading every link and registering the objects left free heap behind.
    memory::trim();
    let lost_rx = start_tasks(&conn, &d);
    let lost = tokio::select! {
        r = wait_for_signal() => { r?; false }
        _ = lost_rx => true,
    };
    if lost {
        warn!("lost the bus connection; shutting down");
    } else {
        info!("shutting down");
    }
    cancel_jobs(&d).await;
    if let Some(s) = sampler {
        let _ = tokio::task::spawn_blocking(move || s.stop()).await;
    }
    if lost {
        return Err(ServiceError::BusLost);
    }
    info!("stopped");
    let _ = conn.release_name(BUS_NAME).await;
    Ok(())
}

/// Announce `HeldBy` of each link whose holder changed (a change or a job
/// claimed or released it).
fn announce_holders(conn: &Connection, d: &Arc<Daemon>) {
    let Some(mut rx) = lock(&d.held_rx).take() else {
        return;
    };
    let conn = conn.clone();
    tokio::spawn(async move {
        while let Some(ifindex) = rx.recv().await {
            let server = conn.object_server();
            if let Ok(iref) = server.interface::<_, LinkObject>(link::path(ifindex)).await {
                let _ = iref
                    .get()
                    .await
                    .held_by_changed(iref.signal_emitter())
                    .await;
            }
        }
    });
}

/// Read the configuration and start rewriting the metrics file. A bad
/// configuration file is logged (file, line, key) and its good keys used:
/// the daemon serves regardless.
fn load_config(opts: &Options) -> crate::config::Config {
    let config = crate::config::load(&opts.paths.config_file, false);
    for p in &config.problems {
        warn!("configuration: {p} (ignored; the rest is used)");
    }
    crate::metrics::watch::spawn(opts.paths.clone(), config.config.clone());
    config.config
}

/// Read every link, register the manager and one object per link, and own
/// the bus name.
async fn connect(bus: &Bus, d: &Arc<Daemon>) -> Result<Connection, ServiceError> {
    let dd = d.clone();
    let ifaces = tokio::task::spawn_blocking(move || dd.read_all())
        .await
        .map_err(std::io::Error::other)??;
    // The ObjectManager first: clients (Cockpit, gdbus, a page) list every
    // link and job in one call and watch them come and go.
    let mut b = builder(bus)
        .serve_at(PATH, zbus::fdo::ObjectManager)
        .serve_at(PATH, Manager { daemon: d.clone() });
    {
        let mut links = d.links.write().unwrap_or_else(|p| p.into_inner());
        for iface in ifaces {
            let state = Arc::new(LinkState::new(iface, d.held.clone()));
            b = b.serve_at(
                link::path(state.ifindex),
                LinkObject {
                    daemon: d.clone(),
                    link: state.clone(),
                },
            );
            links.insert(state.ifindex, state);
        }
    }
    Ok(b.name(BUS_NAME).build().await?)
}

/// Follow netlink changes, watch callers leaving the bus, and re-apply the
/// persisted settings (then tell systemd we are ready). The receiver fires
/// when the bus connection is lost.
fn start_tasks(conn: &Connection, d: &Arc<Daemon>) -> tokio::sync::oneshot::Receiver<()> {
    let (conn_for_watch, dd_for_watch) = (conn.clone(), d.clone());
    if let Err(e) = monitor::spawn(conn, d) {
        warn!(
            "cannot follow netlink changes: {e}; properties refresh on reads and our own changes only"
        );
    }
    announce_holders(conn, d);
    super::counters::spawn(conn, d);
    let (lost_tx, lost_rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        watch_owners(conn_for_watch, dd_for_watch).await;
        let _ = lost_tx.send(());
    });
    let (c, dd) = (conn.clone(), d.clone());
    tokio::spawn(async move {
        for l in dd.all_links() {
            reapply::reapply(&c, &dd, &l, "hlctld started").await;
        }
        // Start-up is over: the code it ran need not stay mapped.
        let code = memory::unmap_code();
        tracing::debug!(
            "start-up done: {} KiB of code mappings dropped",
            code / 1024
        );
        // Type=notify: systemd counts hlctld as started (and lets
        // network-pre.target, hence the network configuration, go on) only
        // once the persisted settings are back.
        match notify::notify("READY=1") {
            Ok(true) => info!("persisted settings re-applied; told systemd we are ready"),
            Ok(false) => {}
            Err(e) => warn!("sd_notify: {e}"),
        }
    });
    lost_rx
}

/// Cancel every job and give them up to 3 s to end.
async fn cancel_jobs(d: &Daemon) {
    let jobs: Vec<_> = lock(&d.jobs).values().cloned().collect();
    for j in &jobs {
        j.cancel.cancel();
    }
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline && jobs.iter().any(|j| j.status().is_active()) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn wait_for_signal() -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    tokio::select! {
        _ = term.recv() => info!("SIGTERM"),
        _ = int.recv() => info!("SIGINT"),
    }
    Ok(())
}

/// Cancel the attached jobs of callers that leave the bus. Returns when the
/// bus connection is gone.
async fn watch_owners(conn: Connection, d: Arc<Daemon>) {
    let stream = async {
        let bus = zbus::fdo::DBusProxy::new(&conn).await?;
        bus.receive_name_owner_changed().await
    };
    let mut stream = match stream.await {
        Ok(s) => s,
        Err(e) => {
            return warn!(
                "cannot watch callers leaving the bus: {e}; jobs are not cancelled when they do"
            );
        }
    };
    while let Some(sig) = crate::dbus::wire::next(&mut stream).await {
        let Ok(args) = sig.args() else { continue };
        if args.new_owner().is_none() {
            let name = args.name().to_string();
            if name.starts_with(':') {
                job::owner_left(&d, &name);
                d.counters.left(&name);
            }
        }
    }
}
