//! `hlctl set ... --try [SECONDS]` and `hlctl sysctl KEY=VALUE... --try
//! [SECONDS]`: apply, print what changed, then "Press Enter within N s to
//! keep these settings". Enter keeps them (and persists them with
//! `--persist`); otherwise they are restored: when the time runs out, on
//! SIGINT, SIGTERM or SIGHUP of hlctl, or when hlctl dies.
//!
//! Through hlctld the change is a job hlctld restores at its deadline, or
//! at once when hlctl's connection to the bus goes. With `--local` this
//! process keeps the journal and restores it; after a crash of hlctl the
//! journal is restored by hlctld's deadline watchdog, by hlctld's start or
//! by `hlctl rollback`.
//!
//! Standard input at its end (not a terminal, `< /dev/null`) never
//! confirms: the change stays for the window and is restored at its end.

use std::time::{Duration, Instant};

use serde::Serialize;
use zbus::OwnedObjectPath;

use super::backend::Backend;
use super::error::CliError;
use super::exit;
use super::output::print_json;
use crate::nic::model::ChangeSet;
use crate::nic::set::SetReply;
use crate::ops::try_change::{self, Answer, Pending, TryEnd};
use crate::sysctl::set::SysctlReply;

/// A change waiting for its confirmation.
pub(crate) enum Trying {
    /// Journalled by this process.
    Local(Box<Pending>),
    /// hlctld's job that waits for `Job.Confirm`.
    Bus(OwnedObjectPath),
}

impl Backend {
    /// `set IFACE ... --try SECONDS`: applied, not persisted yet.
    pub(crate) fn set_try(
        &mut self,
        iface: &str,
        cs: &ChangeSet,
        persist: bool,
        secs: u32,
    ) -> Result<(SetReply, Option<Trying>), CliError> {
        match self {
            Backend::Local { paths, nl } => {
                let nl = Self::netlink(nl)?;
                let t = Duration::from_secs(secs.into());
                let (r, p) = try_change::begin_set(nl, paths, iface, cs, persist, t)?;
                Ok((r, p.map(|p| Trying::Local(Box::new(p)))))
            }
            Backend::Bus(r) => {
                let (reply, job) = r.set(iface, cs, (false, persist), secs)?;
                Ok((reply, job.map(Trying::Bus)))
            }
        }
    }

    /// `sysctl KEY=VALUE... --try SECONDS`.
    pub(crate) fn sysctl_try(
        &mut self,
        assignments: &[(String, String)],
        persist: bool,
        secs: u32,
    ) -> Result<(SysctlReply, Option<Trying>), CliError> {
        match self {
            Backend::Local { paths, .. } => {
                let t = Duration::from_secs(secs.into());
                let (r, p) = try_change::begin_sysctl(paths, assignments, persist, t)?;
                Ok((r, p.map(|p| Trying::Local(Box::new(p)))))
            }
            Backend::Bus(r) => {
                let (reply, job) = r.sysctl_set(assignments, (false, persist), secs)?;
                Ok((reply, job.map(Trying::Bus)))
            }
        }
    }

    /// Keep or restore by `answer`.
    fn end_try(&mut self, t: Trying, answer: Answer) -> Result<TryEnd, CliError> {
        match (self, t) {
            (Backend::Local { nl, .. }, Trying::Local(p)) => {
                let nl = Self::netlink(nl).ok();
                Ok(try_change::finish(*p, answer, nl))
            }
            (Backend::Bus(r), Trying::Bus(path)) => r.end_try(&path, answer),
            (_, Trying::Local(p)) => Ok(try_change::finish(*p, answer, None)),
            (_, Trying::Bus(_)) => Err(CliError::new("a try of hlctld without hlctld", 1)),
        }
    }
}

/// Ask, and wait for Enter, a signal or the end of the window.
fn ask(secs: u32, json: bool) -> Answer {
    let deadline = Instant::now() + Duration::from_secs(secs.into());
    let cancel = super::interrupt::cancel_on_interrupt_or_hangup();
    let msg =
        format!("Press Enter within {secs} s to keep these settings (otherwise they are restored)");
    // With --json, stdout holds only the JSON.
    if json {
        eprintln!("{msg}");
    } else {
        println!("{msg}");
    }
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let entered = matches!(std::io::stdin().read_line(&mut line), Ok(n) if n > 0);
        let _ = tx.send(entered);
    });
    try_change::wait(deadline, &|| rx.try_recv() == Ok(true), &|| {
        cancel.is_cancelled()
    })
}

/// How one `--try` command shows its change.
pub(crate) struct Shown<'a, R> {
    pub(crate) json: bool,
    /// The exit code of the change itself.
    pub(crate) code: i32,
    pub(crate) text: &'a dyn Fn(&R) -> String,
}

/// Show the change, ask, keep or restore, and show how it ended. Exit 0
/// only when the change was kept (and persisted, when asked).
pub(crate) fn run<R: Serialize>(
    backend: &mut Backend,
    secs: u32,
    (reply, trying): (R, Option<Trying>),
    shown: Shown<'_, R>,
) -> i32 {
    let Some(t) = trying else {
        // The change failed and was restored: nothing to confirm.
        if shown.json {
            print_json(&reply);
        } else {
            print!("{}", (shown.text)(&reply));
        }
        return shown.code;
    };
    if !shown.json {
        print!("{}", (shown.text)(&reply));
    }
    let answer = ask(secs, shown.json);
    let end = match backend.end_try(t, answer) {
        Ok(e) => e,
        Err(e) => return e.report(),
    };
    if shown.json {
        let mut v = serde_json::to_value(&reply).unwrap_or_default();
        if let Some(m) = v.as_object_mut() {
            m.insert("kept".into(), end.kept.into());
            m.insert("try".into(), serde_json::to_value(&end).unwrap_or_default());
        }
        print_json(&v);
    } else {
        print!("{}", end_text(&end));
    }
    match (end.kept, end.errors.is_empty()) {
        (true, true) => shown.code,
        _ => exit::FAILED,
    }
}

/// How a try ended, in words.
pub(crate) fn end_text(end: &TryEnd) -> String {
    let mut s = if end.kept {
        format!("kept ({})\n", end.why)
    } else {
        format!("restored the previous settings: {}\n", end.why)
    };
    if let Some(p) = &end.persisted {
        s += &format!("persisted in {}\n", crate::mounted::shown(p));
    }
    for e in &end.errors {
        s += &format!("error: {e}\n");
    }
    s
}
