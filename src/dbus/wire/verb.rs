//! One declaration per verb ([`Verb`], all of them in [`VERBS`]): its
//! `hlctl` command, its D-Bus method, whether it is a job, the polkit
//! action it needs, the history kind it stores, the D-Bus errors the method
//! answers with (and so its error classes), and its option keys with their
//! D-Bus types and the `hlctl` flags they come from.
//!
//! The keys of a verb with a field table (`Doctor`, `Report`, `Check`,
//! `Tune`, `StartBenchmark`'s options: [`super::fields`]) are that table's:
//! the `a{sv}` encoding and decoding read the same rows. hlctld asks polkit
//! for the action declared here. `tests/verbs.rs` checks every declaration
//! against the XML, the polkit policy, clap's commands, the codec (a full
//! options struct encodes to every declared key, with its type, and
//! decodes back to itself) and the history kinds.

use std::collections::HashMap;

use zbus::OwnedVariant;

use super::action::Action;
use super::fields::{self, Field};
pub use super::key::Key;
use super::records::{Dict, OwnedDict};
use super::{bench, bench_keys, check, doctor, params, report, settings, start};
use crate::class::Class;
use crate::history::Kind;

/// How a method answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nature {
    /// Returns a job's path at once; the work, its progress and its result
    /// are the job's.
    Job,
    /// Answers when done; with `rollback_timeout_s` > 0 also a `try:` job
    /// that waits for `Job.Confirm`.
    MaybeTryJob,
    /// Answers when done.
    Method,
}

/// A list of keys (a field table's, or a declared list's).
pub type Keys = fn() -> Vec<Key>;
/// Every (key, D-Bus type) a full options value encodes to, or what differed.
pub type Encoded = Result<Vec<(String, String)>, String>;
/// A verb's round trip of its options.
pub type RoundTrip = fn() -> Encoded;

/// One verb, declared once.
pub struct Verb {
    /// The `hlctl` command's words (`["bench", "net"]`).
    pub command: &'static [&'static str],
    /// The D-Bus interface, short (`Manager`, `Link`).
    pub interface: &'static str,
    pub member: &'static str,
    pub nature: Nature,
    /// The polkit action it needs (`None`: open to everyone; `Doctor` needs
    /// it only for its measurements).
    pub action: Option<Action>,
    /// Whether persisting (an option, or unless `no_persist`) also needs
    /// the persist action.
    pub persist: bool,
    /// Whether the client lets polkit ask the user (the call's
    /// allow-interactive-authorization flag); not for `Doctor`, which
    /// without the action runs its read-only checks instead.
    pub interactive: bool,
    /// The kind of the history rows it stores.
    pub history: Option<Kind>,
    /// The D-Bus errors the method answers with (short names).
    pub errors: &'static [&'static str],
    /// The options argument's keys.
    pub options: Keys,
    /// A benchmark's kind and its `params` keys (`Params[KIND]` in the XML).
    pub params: Option<(&'static str, Keys)>,
    /// `hlctl` flags that are no option on the bus: the command's own
    /// (`--out`, `--yes`), or the method's plain arguments (a name).
    pub cli_only: &'static [&'static str],
    /// Encodes a value with every option set, decodes it and compares:
    /// the (key, D-Bus type) pairs encoded, or what differed.
    pub round_trip: Option<RoundTrip>,
}

impl Verb {
    /// The polkit actions hlctld asks for: the verb's, and persist when
    /// this call persists and the verb declares it.
    pub fn actions(&self, persisting: bool) -> Vec<Action> {
        let persist = (persisting && self.persist).then_some(Action::Persist);
        self.action.into_iter().chain(persist).collect()
    }

    /// Its error classes: those of its D-Bus errors, and a job's failure.
    pub fn classes(&self) -> Vec<Class> {
        let mut c: Vec<Class> = self
            .errors
            .iter()
            .map(|e| super::error::class_of_name(&format!("org.hlctl.Daemon1.Error.{e}")))
            .collect();
        if self.nature != Nature::Method {
            c.push(Class::Failed);
        }
        Class::ALL.into_iter().filter(|x| c.contains(x)).collect()
    }
}

fn none() -> Vec<Key> {
    Vec::new()
}

const JOB_ERRORS: &[&str] = &[
    "NotAuthorized",
    "InteractiveAuthorizationRequired",
    "InvalidArgument",
    "LimitExceeded",
];
const BENCH_ERRORS: &[&str] = &[
    "NotAuthorized",
    "InteractiveAuthorizationRequired",
    "InvalidArgument",
    "NoSuchInterface",
    "Busy",
    "LimitExceeded",
];

const fn bench(
    command: &'static [&'static str],
    kind: &'static str,
    history: Option<Kind>,
    keys: Keys,
    cli_only: &'static [&'static str],
    round_trip: RoundTrip,
) -> Verb {
    Verb {
        command,
        interface: "Manager",
        member: "StartBenchmark",
        nature: Nature::Job,
        action: Some(Action::RunBenchmark),
        persist: false,
        interactive: true,
        history,
        errors: BENCH_ERRORS,
        options: || fields::keys(start::BENCH_FIELDS),
        params: Some((kind, keys)),
        cli_only,
        round_trip: Some(round_trip),
    }
}

/// `hlctl bench net`.
pub const BENCH_NET: Verb = bench(
    &["bench", "net"],
    "net",
    Some(Kind::Net),
    || bench_keys::NET_KEYS.to_vec(),
    // `--json-stream` runs the test in this process (its events are printed
    // as the test runs them); so does a test with credentials
    // (`--username`, `--rsa-public-key-path`, `--use-pkcs1-padding`), so the
    // password never travels to hlctld.
    // `-Z`, `--gsro` and `--cntl-ka` are refused before any job starts.
    &[
        "stray",
        "json_stream",
        "username",
        "rsa_public_key_path",
        "use_pkcs1_padding",
        "zerocopy",
        "gsro",
        "cntl_ka",
    ],
    || bench_trip("net", &[bench::NetParams::full()], bench_keys::NET_KEYS),
);
/// `hlctl bench cpu`.
pub const BENCH_CPU: Verb = bench(
    &["bench", "cpu"],
    "cpu",
    Some(Kind::Cpu),
    || bench_keys::CPU_KEYS.to_vec(),
    &[],
    || bench_trip("cpu", &[bench::CpuParams::full()], bench_keys::CPU_KEYS),
);
/// `hlctl bench disk` (`--seq-dd` runs in this process only).
pub const BENCH_DISK: Verb = bench(
    &["bench", "disk"],
    "disk",
    Some(Kind::Disk),
    || bench_keys::DISK_KEYS.to_vec(),
    &["seq_dd"],
    || bench_trip("disk", &[bench::DiskParams::full()], bench_keys::DISK_KEYS),
);
/// `hlctl bench file --dir` (an `ssh://` target, `--ssh-config`,
/// `--cipher` and `--crypto-only` run in the user's own process: their
/// keys, their agent).
pub const BENCH_FILE: Verb = bench(
    &["bench", "file"],
    "file",
    Some(Kind::File),
    || bench_keys::FILE_KEYS.to_vec(),
    &["target", "ssh_config", "cipher", "crypto_only"],
    || bench_trip("file", &[bench::FileParams::full()], bench_keys::FILE_KEYS),
);
/// `hlctl bench stress` (stored nowhere: it is a load, not a measurement).
pub const BENCH_STRESS: Verb = bench(
    &["bench", "stress"],
    "stress",
    None,
    || bench_keys::STRESS_KEYS.to_vec(),
    &[],
    || {
        let both = [
            bench::StressParams::full(),
            bench::StressParams::full_percent(),
        ];
        bench_trip("stress", &both, bench_keys::STRESS_KEYS)
    },
);

/// `hlctl tune`.
pub const TUNE: Verb = Verb {
    command: &["tune"],
    interface: "Manager",
    member: "Tune",
    nature: Nature::Job,
    action: Some(Action::Tune),
    persist: true,
    interactive: true,
    history: Some(Kind::Tune),
    errors: BENCH_ERRORS,
    options: || fields::keys(start::TUNE_FIELDS),
    params: None,
    cli_only: &["yes"],
    round_trip: Some(|| {
        table_trip(
            start::TUNE_FIELDS,
            start::TuneOptions::full(),
            start::TuneOptions::decode,
        )
    }),
};

/// `hlctl doctor` (run-benchmark only for what it measures).
pub const DOCTOR: Verb = Verb {
    command: &["doctor"],
    interface: "Manager",
    member: "Doctor",
    nature: Nature::Job,
    action: Some(Action::RunBenchmark),
    persist: false,
    interactive: false,
    history: Some(Kind::Doctor),
    errors: &["InvalidArgument", "LimitExceeded"],
    options: || fields::keys(doctor::FIELDS),
    params: None,
    cli_only: &[],
    round_trip: Some(|| {
        table_trip(
            doctor::FIELDS,
            doctor::DoctorParams::full(),
            doctor::DoctorParams::decode,
        )
    }),
};

/// `hlctl report`.
pub const REPORT: Verb = Verb {
    command: &["report"],
    interface: "Manager",
    member: "Report",
    nature: Nature::Job,
    action: Some(Action::RunBenchmark),
    persist: false,
    interactive: true,
    history: Some(Kind::Report),
    errors: JOB_ERRORS,
    options: || fields::keys(report::FIELDS),
    params: None,
    cli_only: &["out"],
    round_trip: Some(|| {
        table_trip(
            report::FIELDS,
            report::ReportParams::full(),
            report::ReportParams::decode,
        )
    }),
};

/// `hlctl check`.
pub const CHECK: Verb = Verb {
    command: &["check"],
    interface: "Manager",
    member: "Check",
    nature: Nature::Job,
    action: Some(Action::RunBenchmark),
    persist: false,
    interactive: true,
    history: Some(Kind::Check),
    errors: JOB_ERRORS,
    options: || fields::keys(check::FIELDS),
    params: None,
    cli_only: &[],
    round_trip: Some(|| {
        table_trip(
            check::FIELDS,
            check::CheckParams::full(),
            check::CheckParams::decode,
        )
    }),
};

/// `hlctl set IFACE WORDS...` (`--try`: a `try:IFACE` job).
pub const SET: Verb = Verb {
    command: &["set"],
    interface: "Link",
    member: "ApplyChanges",
    nature: Nature::MaybeTryJob,
    action: Some(Action::ApplySettings),
    persist: true,
    interactive: true,
    history: None,
    errors: &[
        "NotAuthorized",
        "InteractiveAuthorizationRequired",
        "InvalidArgument",
        "NotSupported",
        "Busy",
        "NoSuchInterface",
        "Failed",
    ],
    options: || settings::CHANGE_KEYS.to_vec(),
    params: None,
    cli_only: &["interface", "settings"],
    round_trip: Some(change_trip),
};

/// `hlctl sysctl KEY=VALUE...` (`--try`: a `try:sysctl` job).
pub const SYSCTL: Verb = Verb {
    command: &["sysctl"],
    interface: "Manager",
    member: "SetSysctl",
    nature: Nature::MaybeTryJob,
    action: Some(Action::SetSysctl),
    persist: true,
    interactive: true,
    history: None,
    errors: &[
        "NotAuthorized",
        "InteractiveAuthorizationRequired",
        "InvalidArgument",
        "Failed",
    ],
    options: || settings::CHANGE_KEYS.to_vec(),
    params: None,
    cli_only: &["items"],
    round_trip: Some(change_trip),
};

/// `hlctl history` (`--html` writes the page here).
pub const HISTORY: Verb = Verb {
    command: &["history"],
    interface: "Manager",
    member: "ListHistory",
    nature: Nature::Method,
    action: None,
    persist: false,
    interactive: false,
    history: None,
    errors: &["InvalidArgument", "Failed"],
    options: || super::records::HISTORY_KEYS.to_vec(),
    params: None,
    cli_only: &["html"],
    round_trip: Some(history_trip),
};

/// `hlctl compare [NAME]`.
pub const COMPARE: Verb = Verb {
    command: &["compare"],
    interface: "Manager",
    member: "Compare",
    nature: Nature::Method,
    action: None,
    persist: false,
    interactive: false,
    history: None,
    errors: &["InvalidArgument", "Failed"],
    options: || super::records::COMPARE_KEYS.to_vec(),
    params: None,
    cli_only: &["name"],
    round_trip: None,
};

/// `hlctl usage [IFACE]`.
pub const USAGE: Verb = Verb {
    command: &["usage"],
    interface: "Manager",
    member: "Usage",
    nature: Nature::Method,
    action: None,
    persist: false,
    interactive: false,
    history: None,
    errors: &["InvalidArgument", "Failed"],
    options: || super::records::USAGE_KEYS.to_vec(),
    params: None,
    cli_only: &["iface"],
    round_trip: None,
};

/// `hlctl rollback [IFACE]`.
pub const ROLLBACK: Verb = Verb {
    command: &["rollback"],
    interface: "Manager",
    member: "Rollback",
    nature: Nature::Method,
    action: Some(Action::Tune),
    persist: false,
    interactive: true,
    history: None,
    errors: &[
        "NotAuthorized",
        "InteractiveAuthorizationRequired",
        "NoSuchInterface",
        "Failed",
    ],
    options: none,
    params: None,
    cli_only: &["interface"],
    round_trip: None,
};

/// `hlctl baseline save NAME`.
pub const SAVE_BASELINE: Verb = Verb {
    command: &["baseline", "save"],
    interface: "Manager",
    member: "SaveBaseline",
    nature: Nature::Method,
    action: Some(Action::SaveBaseline),
    persist: false,
    interactive: true,
    history: None,
    errors: &[
        "NotAuthorized",
        "InteractiveAuthorizationRequired",
        "InvalidArgument",
        "Failed",
    ],
    options: none,
    params: None,
    cli_only: &["name"],
    round_trip: None,
};

/// Every declared verb.
pub const VERBS: &[Verb] = &[
    BENCH_NET,
    BENCH_CPU,
    BENCH_DISK,
    BENCH_STRESS,
    BENCH_FILE,
    TUNE,
    DOCTOR,
    REPORT,
    CHECK,
    SET,
    SYSCTL,
    HISTORY,
    COMPARE,
    USAGE,
    ROLLBACK,
    SAVE_BASELINE,
];

/// The declared `params` keys of benchmark `kind`.
pub(crate) fn bench_params(kind: &str) -> Option<Vec<Key>> {
    VERBS
        .iter()
        .find_map(|v| v.params.filter(|(k, _)| *k == kind).map(|(_, keys)| keys()))
}

/// The keys of an encoded dictionary with the D-Bus type of each value.
fn typed_keys(d: &Dict) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = d
        .iter()
        .map(|(k, x)| (k.clone(), x.value_signature().to_string()))
        .collect();
    v.sort();
    v
}

fn owned(d: &Dict) -> Result<OwnedDict, String> {
    d.iter()
        .map(|(k, v)| Ok((k.clone(), v.try_to_owned().map_err(|e| e.to_string())?)))
        .collect()
}

/// A field table's round trip: `full` encoded, decoded, compared.
fn table_trip<T: PartialEq + std::fmt::Debug>(
    table: &[Field<T>],
    full: T,
    decode: fn(&OwnedDict) -> super::error::Result<T>,
) -> Encoded {
    let d = fields::encode(table, &full);
    let back = decode(&owned(&d)?).map_err(|e| format!("{e:?}"))?;
    if back != full {
        return Err(format!("encoded {full:?}, decoded {back:?}"));
    }
    Ok(typed_keys(&d))
}

/// A benchmark's parameters (each of `fulls`): encoded typed by the
/// declared keys, decoded by the daemon's decoder, compared as JSON; and
/// `StartBenchmark`'s options. Every (key, type) encoded.
fn bench_trip<T: serde::Serialize + serde::de::DeserializeOwned>(
    kind: &str,
    fulls: &[T],
    keys: &[Key],
) -> Encoded {
    let mut seen = table_trip(
        start::BENCH_FIELDS,
        start::BenchOptions::full(),
        start::BenchOptions::decode,
    )?;
    for full in fulls {
        let m: HashMap<String, OwnedVariant> = params::encode_typed(full, keys)?;
        let back: T = params::decode(kind, &m)?;
        let (a, b) = (json(full)?, json(&back)?);
        if a != b {
            return Err(format!("encoded {a}, decoded {b}"));
        }
        seen.extend(
            m.iter()
                .map(|(k, x)| (k.clone(), x.value_signature().to_string())),
        );
    }
    seen.sort();
    seen.dedup();
    Ok(seen)
}

fn json<T: serde::Serialize>(v: &T) -> Result<serde_json::Value, String> {
    serde_json::to_value(v).map_err(|e| e.to_string())
}

/// A change's options: a persisting try encoded, decoded to the same.
fn change_trip() -> Encoded {
    let d: Dict = settings::encode_change_options(false, true, 30)
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let mode =
        settings::decode_change_mode(&owned(&d)?, 60).map_err(|p| crate::problem::join(&p))?;
    let want = crate::ops::try_change::ChangeMode::new(false, true, Some(30));
    if mode != want {
        return Err(format!("encoded {want:?}, decoded {mode:?}"));
    }
    Ok(typed_keys(&d))
}

/// `ListHistory`'s filter with every key set, encoded and decoded.
fn history_trip() -> Encoded {
    let full = super::records::HistoryFilter {
        kind: Some(Kind::Check),
        since: Some(1_700_000_000),
        limit: 7,
    };
    let d = full.encode();
    let back = super::records::HistoryFilter::decode(&owned(&d)?).map_err(|e| format!("{e:?}"))?;
    if back != full {
        return Err(format!("encoded {full:?}, decoded {back:?}"));
    }
    Ok(typed_keys(&d))
}
