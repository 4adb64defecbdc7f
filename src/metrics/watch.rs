//! hlctld's part: rewrite `hlctl.prom` at start and after link changes
//! (netlink link and ethtool notifications), debounced — a burst of changes
//! (a link flapping, a change set of ten settings) is one rewrite.

use std::sync::mpsc;
use std::time::Duration;

use crate::config::Config;
use crate::nic::netlink::monitor;
use crate::paths::Paths;

/// Start the watcher threads when the configuration names a textfile
/// directory. Returns whether it runs; failures are logged, never fatal.
pub(crate) fn spawn(paths: Paths, cfg: Config) -> bool {
    let Some(dir) = cfg.metrics.textfile_dir.clone() else {
        return false;
    };
    let receivers = match monitor::subscribe() {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(
                "metrics: cannot follow link changes: {e}; {} is written once",
                dir.display()
            );
            write_once(&paths, &cfg);
            return false;
        }
    };
    let (tx, rx) = mpsc::channel::<()>();
    for mut r in receivers {
        let tx = tx.clone();
        let spawned = std::thread::Builder::new()
            .name("metrics-monitor".into())
            .spawn(move || {
                loop {
                    match r.wait() {
                        Ok(ev) if ev.is_empty() => {}
                        Ok(_) => {
                            if tx.send(()).is_err() {
                                break;
                            }
                        }
                        Err(_) => std::thread::sleep(Duration::from_secs(1)),
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("metrics: {e}");
        }
    }
    let debounce = Duration::from_secs(cfg.metrics.debounce_s);
    let spawned = std::thread::Builder::new()
        .name("metrics-writer".into())
        .spawn(move || {
            write_once(&paths, &cfg);
            while rx.recv().is_ok() {
                std::thread::sleep(debounce);
                while rx.try_recv().is_ok() {}
                write_once(&paths, &cfg);
            }
        });
    spawned.is_ok()
}

fn write_once(paths: &Paths, cfg: &Config) {
    match super::refresh(paths, cfg) {
        Some(Ok(p)) => tracing::debug!("metrics written to {}", p.display()),
        Some(Err(e)) => tracing::warn!("metrics file not written: {e}"),
        None => {}
    }
}
