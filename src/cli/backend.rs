//! The seam between the verbs and where the work happens: through hlctld on
//! D-Bus (the default) or in this process (`--local`, or when the daemon
//! cannot be reached and we are root). Both sides return the same types, so
//! output and exit codes do not depend on the path taken.

use super::error::CliError;
use super::exit;
use super::global::Global;
use super::remote::Remote;
use crate::nic::error::NicError;
use crate::nic::model::{ChangeSet, Interface};
use crate::nic::netlink::Netlink;
use crate::nic::set::SetReply;
use crate::ops;
use crate::paths::Paths;
use crate::sysctl;

/// Where the verbs' work happens.
pub(crate) enum Backend {
    /// The engine in this process.
    Local {
        paths: Box<Paths>,
        nl: Option<Netlink>,
    },
    /// hlctld over D-Bus.
    Bus(Remote),
}

fn is_root() -> bool {
    nix::unistd::Uid::effective().is_root()
}

/// What a verb needs from the place it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Need {
    /// Nothing any user lacks: reading links and sysctls, measuring into
    /// one's own directories, one's own history.
    Nothing,
    /// A change to the machine: root, or hlctld with polkit's word.
    Privilege,
}

impl Backend {
    /// This process, whatever hlctld would say (a verb that must not hand
    /// its input to the daemon, such as a password).
    pub(crate) fn local(global: &Global) -> Backend {
        Backend::Local {
            paths: Box::new(global.paths()),
            nl: None,
        }
    }

    /// Where a verb runs — the one rule, for every verb and every user:
    /// 1. `--local`: in this process (for a change, root only);
    /// 2. `--bus ADDRESS`: hlctld on that bus;
    /// 3. hlctld on the system bus, when it answers;
    /// 4. else in this process for root, and for anyone when the verb
    ///    needs no privilege (said once on stderr; an unprivileged user's
    ///    history is their own, under `$XDG_STATE_HOME/hlctl`); a change
    ///    by anyone else is refused with how to start hlctld.
    pub(crate) fn select(global: &Global, need: Need) -> Result<Backend, CliError> {
        let local = || Backend::local(global);
        if global.local {
            if need == Need::Privilege && !is_root() {
                return Err(CliError::new(
                    "--local runs a change in this process and needs root; without it hlctl asks hlctld",
                    exit::NOT_PERMITTED,
                ));
            }
            return Ok(local());
        }
        match Remote::connect(global.bus.as_deref()) {
            Ok(r) => Ok(Backend::Bus(r)),
            Err(why) if is_root() => {
                eprintln!("hlctl: hlctld is not reachable ({why}); running in-process as root");
                Ok(local())
            }
            Err(why) if need == Need::Nothing && global.bus.is_none() => {
                let l = local();
                if let Backend::Local { paths, .. } = &l {
                    eprintln!(
                        "hlctl: hlctld is not reachable; running in this process as uid {} \
                         (history in {})",
                        nix::unistd::getuid(),
                        paths.state_dir.display()
                    );
                }
                let _ = why;
                Ok(l)
            }
            // Without the daemon only root may change the machine.
            Err(why) => Err(CliError::new(
                format!(
                    "hlctld is not reachable ({why}).\n\
                     Start it with `sudo systemctl start hlctld` (or install hlctl's D-Bus \
                     activation files so the bus starts it), or run this command as root to \
                     work without the daemon."
                ),
                exit::NO_DAEMON,
            )),
        }
    }

    pub(super) fn netlink(nl: &mut Option<Netlink>) -> Result<&mut Netlink, CliError> {
        if nl.is_none() {
            *nl = Some(Netlink::new().map_err(NicError::Connect)?);
        }
        Ok(nl.as_mut().expect("just set"))
    }

    /// `hlctl show`: the named interfaces, or all but `lo` (physical first).
    pub(crate) fn show(&mut self, names: &[String]) -> Result<Vec<Interface>, CliError> {
        match self {
            Backend::Local { nl, paths } => {
                let paths = paths.clone();
                Ok(ops::nic::show(Self::netlink(nl)?, &paths, names)?)
            }
            Backend::Bus(r) => r.show(names),
        }
    }

    /// `hlctl set`: apply (or plan) a change set, and persist it when asked.
    pub(crate) fn set(
        &mut self,
        iface: &str,
        cs: &ChangeSet,
        dry_run: bool,
        persist: bool,
    ) -> Result<SetReply, CliError> {
        match self {
            Backend::Local { paths, nl } => Ok(ops::nic::set(
                Self::netlink(nl)?,
                paths,
                iface,
                cs,
                dry_run,
                persist,
            )?),
            Backend::Bus(r) => Ok(r.set(iface, cs, (dry_run, persist), 0)?.0),
        }
    }

    /// `hlctl sysctl [KEY...]`.
    pub(crate) fn sysctl_show(&mut self, keys: &[String]) -> Result<Vec<sysctl::Entry>, CliError> {
        match self {
            Backend::Local { paths, .. } => Ok(ops::sysctl::show(paths, keys)?),
            Backend::Bus(r) => r.sysctl_show(keys),
        }
    }

    /// `hlctl sysctl KEY=VALUE...`.
    pub(crate) fn sysctl_set(
        &mut self,
        assignments: &[(String, String)],
        dry_run: bool,
        persist: bool,
    ) -> Result<sysctl::set::SysctlReply, CliError> {
        match self {
            Backend::Local { paths, .. } => {
                Ok(ops::sysctl::set(paths, assignments, dry_run, persist)?)
            }
            Backend::Bus(r) => Ok(r.sysctl_set(assignments, (dry_run, persist), 0)?.0),
        }
    }
}

impl Backend {
    /// Run benchmark `kind`: in-process through `local` (Ctrl-C cancels it),
    /// or as a daemon job with its progress on `bar` (Ctrl-C cancels the job).
    /// Either way a cancelled run returns its partial report.
    pub(crate) fn bench<P, R>(
        &mut self,
        kind: &str,
        params: &P,
        bar: &super::output::ProgressBar,
        local: impl FnOnce(
            &super::output::ProgressBar,
            crate::bench::progress::Cancel,
        ) -> Result<R, CliError>,
    ) -> Result<R, CliError>
    where
        P: serde::Serialize,
        R: serde::de::DeserializeOwned,
    {
        match self {
            Backend::Local { .. } => local(bar, super::interrupt::cancel_on_interrupt()),
            Backend::Bus(r) => {
                // Each value as the D-Bus type the kind's declaration gives it.
                let keys = crate::dbus::wire::verb::bench_params(kind).unwrap_or_default();
                let params = crate::dbus::wire::params::encode_typed(params, &keys)
                    .map_err(|e| CliError::new(e, exit::FAILED))?;
                let call = super::remote::JobCall {
                    what: "benchmark",
                    progress: bar,
                    confirm: false,
                    cancelling: "cancelling",
                    partial_ok: true,
                };
                let start =
                    r.manager
                        .start_benchmark(kind, &params, std::collections::HashMap::new());
                r.follow(call, start)
            }
        }
    }
}
