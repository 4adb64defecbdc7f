//! The polkit actions hlctld asks for (`polkit/org.hlctl.Daemon1.policy`):
//! named here, on the side both ends share, so a verb's declaration
//! ([`super::verb`]) can say which it needs; `dbus::daemon::auth` asks
//! polkit for them.

/// The polkit actions of `polkit/org.hlctl.Daemon1.policy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    ApplySettings,
    SetSysctl,
    Persist,
    RunBenchmark,
    Tune,
    SaveBaseline,
}

impl Action {
    pub const ALL: [Action; 6] = [
        Action::ApplySettings,
        Action::SetSysctl,
        Action::Persist,
        Action::RunBenchmark,
        Action::Tune,
        Action::SaveBaseline,
    ];

    /// The polkit action id.
    pub fn id(self) -> &'static str {
        match self {
            Action::ApplySettings => "org.hlctl.Daemon1.apply-settings",
            Action::SetSysctl => "org.hlctl.Daemon1.set-sysctl",
            Action::Persist => "org.hlctl.Daemon1.persist",
            Action::RunBenchmark => "org.hlctl.Daemon1.run-benchmark",
            Action::Tune => "org.hlctl.Daemon1.tune",
            Action::SaveBaseline => "org.hlctl.Daemon1.save-baseline",
        }
    }

    /// What it allows, in the words hlctld's log and its errors use.
    pub(crate) fn what(self) -> &'static str {
        match self {
            Action::ApplySettings => "change NIC settings",
            Action::SetSysctl => "change network sysctls",
            Action::Persist => "persist settings across reboots",
            Action::RunBenchmark => "run benchmarks",
            Action::Tune => "tune the network",
            Action::SaveBaseline => "save a baseline of the results",
        }
    }
}
