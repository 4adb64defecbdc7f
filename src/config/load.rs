//! Reading `hlctl.toml`: every key is looked up in a table of known keys
//! (unknown sections and keys are refused, like serde's
//! `deny_unknown_fields`), deserialized with serde on its own and then
//! validated, so that one run lists every problem with its line, and the
//! keys that are right are still used.

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;
use toml::Spanned;
use toml::de::{DeTable, DeValue, ValueDeserializer};

use super::Config;

/// One thing wrong in the file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct ConfigProblem {
    pub(crate) file: PathBuf,
    /// 1-based; 0 when the problem is the file itself (unreadable).
    pub(crate) line: usize,
    /// `check.peers`; empty for a syntax error or an unreadable file.
    pub(crate) key: String,
    pub(crate) message: String,
}

impl std::fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file.display())?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
        }
        if !self.key.is_empty() {
            write!(f, ": {}", self.key)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// A configuration and what was wrong with its file (the wrong keys kept
/// their defaults).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Loaded {
    pub(crate) file: PathBuf,
    /// False when the file does not exist (all defaults; not a problem).
    pub(crate) exists: bool,
    pub(crate) config: Config,
    pub(crate) problems: Vec<ConfigProblem>,
}

/// Read `file`. A missing file is all defaults when `required` is false.
pub(crate) fn load(file: &Path, required: bool) -> Loaded {
    let mut out = Loaded {
        file: file.to_path_buf(),
        exists: false,
        config: Config::default(),
        problems: Vec::new(),
    };
    match std::fs::read_to_string(file) {
        Ok(text) => {
            out.exists = true;
            let (config, problems) = parse(file, &text);
            out.config = config;
            out.problems = problems;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => {}
        Err(e) => out.problems.push(ConfigProblem {
            file: file.to_path_buf(),
            line: 0,
            key: String::new(),
            message: format!("cannot read: {e}"),
        }),
    }
    out
}

/// Parse the text of `file` (named in the problems).
pub(crate) fn parse(file: &Path, text: &str) -> (Config, Vec<ConfigProblem>) {
    let mut p = Parser {
        file,
        text,
        problems: Vec::new(),
        config: Config::default(),
    };
    match DeTable::parse(text) {
        Ok(root) => p.root(root.get_ref()),
        Err(e) => {
            let line = e.span().map_or(0, |s| p.line(&s));
            p.problems.push(ConfigProblem {
                file: file.to_path_buf(),
                line,
                key: String::new(),
                message: format!("not valid TOML: {}", e.message().trim()),
            });
        }
    }
    // The table is sorted by key: report in the file's order.
    p.problems.sort_by_key(|x| x.line);
    (p.config, p.problems)
}

struct Parser<'a> {
    file: &'a Path,
    text: &'a str,
    problems: Vec<ConfigProblem>,
    config: Config,
}

const SECTIONS: &str = "[check], [metrics], [serve], [workload], [usage]";
const CHECK_KEYS: &str = "peers, dirs, cpu, files, file_size_mib, ssh_config, schedule, randomized_delay_s, after_kernel_change, baseline, threshold_percent, time_s, disk_size_mib, bench_time_s, busy_window_s";
const METRICS_KEYS: &str = "textfile_dir, debounce_s";
const SERVE_KEYS: &str = "enable, port, rsa_private_key_path, authorized_users_path, time_skew_threshold, use_pkcs1_padding";
const USAGE_KEYS: &str = "enable, minute_days, retention_days, links (e.g. [\"vmbr0:1G\"])";
const WORKLOAD_KEYS: &str = "run (e.g. [\"plex-4k:3\"]), need (e.g. \"net=400M,cpu=3000\")";

impl Parser<'_> {
    fn line(&self, span: &Range<usize>) -> usize {
        let end = span.start.min(self.text.len());
        self.text[..end].matches('\n').count() + 1
    }

    fn problem(&mut self, span: &Range<usize>, key: &str, message: String) {
        let line = self.line(span);
        self.problems.push(ConfigProblem {
            file: self.file.to_path_buf(),
            line,
            key: key.to_string(),
            message,
        });
    }

    fn root(&mut self, root: &DeTable<'_>) {
        for (k, v) in root {
            let name = k.get_ref().as_ref();
            let Some(table) = v.get_ref().as_table() else {
                self.problem(
                    &k.span(),
                    name,
                    format!("a key outside any section; sections are {SECTIONS}"),
                );
                continue;
            };
            for (key, value) in table {
                let kname = key.get_ref().as_ref();
                let full = format!("{name}.{kname}");
                let span = key.span();
                let r = match name {
                    "check" => self.check_key(kname, &full, value),
                    "metrics" => self.metrics_key(kname, &full, value),
                    "serve" => self.serve_key(kname, &full, value),
                    "workload" => self.workload_key(kname, value),
                    "usage" => self.usage_key(kname, value),
                    _ => {
                        self.problem(
                            &k.span(),
                            name,
                            format!("unknown section [{name}]; allowed {SECTIONS}"),
                        );
                        break;
                    }
                };
                if let Err(msg) = r {
                    self.problem(&span, &full, msg);
                }
            }
            if name == "serve" {
                self.serve_auth_pair(&k.span());
            }
            if table.is_empty()
                && !matches!(name, "check" | "metrics" | "serve" | "workload" | "usage")
            {
                self.problem(
                    &k.span(),
                    name,
                    format!("unknown section [{name}]; allowed {SECTIONS}"),
                );
            }
        }
    }

    fn check_key(&mut self, k: &str, _full: &str, v: &Spanned<DeValue<'_>>) -> Result<(), String> {
        let c = &mut self.config.check;
        match k {
            "peers" => {
                let list: Vec<String> = value(v)?;
                let mut bad = Vec::new();
                for p in &list {
                    if let Err(e) = crate::path::Peer::parse(p) {
                        bad.push(e);
                    }
                }
                if !bad.is_empty() {
                    // Keep the good ones: the check still measures to them.
                    c.peers = list
                        .into_iter()
                        .filter(|p| crate::path::Peer::parse(p).is_ok())
                        .collect();
                    return Err(bad.join("; "));
                }
                c.peers = list;
            }
            "dirs" => {
                let list: Vec<String> = value(v)?;
                if let Some(d) = list.iter().find(|d| !d.starts_with('/')) {
                    return Err(format!("'{d}': use absolute directories"));
                }
                c.dirs = list;
            }
            "files" => {
                let list: Vec<String> = value(v)?;
                let bad: Vec<String> = list
                    .iter()
                    .filter_map(|f| crate::bench::file::Target::parse(f).err())
                    .map(|e| e.to_string())
                    .collect();
                // Keep the good ones, as peers does.
                c.files = list
                    .into_iter()
                    .filter(|f| crate::bench::file::Target::parse(f).is_ok())
                    .collect();
                if !bad.is_empty() {
                    return Err(bad.join("; "));
                }
            }
            "file_size_mib" => c.file_size_mib = ranged(v, 1, 1 << 20)?,
            "ssh_config" => {
                let s: String = value(v)?;
                if !s.starts_with('/') {
                    return Err(format!("'{s}': use an absolute path"));
                }
                c.ssh_config = Some(PathBuf::from(s));
            }
            "cpu" => c.cpu = value(v)?,
            "schedule" => {
                let s: String = value(v)?;
                super::systemd::check_calendar(&s)?;
                c.schedule = s;
            }
            "randomized_delay_s" => c.randomized_delay_s = ranged(v, 0, 86_400 * 7)?,
            "after_kernel_change" => c.after_kernel_change = value(v)?,
            "baseline" => {
                let s: String = value(v)?;
                crate::history::compare::check_name(&s).map_err(|e| e.to_string())?;
                c.baseline = Some(s);
            }
            "threshold_percent" => {
                let t: f64 = value(v)?;
                if !(0.0..=1000.0).contains(&t) {
                    return Err(format!("{t}: allowed 0 to 1000 (percent)"));
                }
                c.threshold_percent = t;
            }
            "time_s" => c.time_s = ranged(v, 1, 60)? as u32,
            "disk_size_mib" => c.disk_size_mib = ranged(v, 1, 1 << 20)?,
            "bench_time_s" => c.bench_time_s = ranged(v, 1, 600)?,
            "busy_window_s" => c.busy_window_s = ranged(v, 0, 86_400)?,
            _ => return Err(format!("unknown key; [check] allows {CHECK_KEYS}")),
        }
        Ok(())
    }

    fn metrics_key(
        &mut self,
        k: &str,
        _full: &str,
        v: &Spanned<DeValue<'_>>,
    ) -> Result<(), String> {
        let m = &mut self.config.metrics;
        match k {
            "textfile_dir" => {
                let s: String = value(v)?;
                if !s.starts_with('/') {
                    return Err(format!("'{s}': use an absolute directory"));
                }
                m.textfile_dir = Some(PathBuf::from(s));
            }
            "debounce_s" => m.debounce_s = ranged(v, 0, 3600)?,
            _ => return Err(format!("unknown key; [metrics] allows {METRICS_KEYS}")),
        }
        Ok(())
    }

    fn usage_key(&mut self, k: &str, v: &Spanned<DeValue<'_>>) -> Result<(), String> {
        let u = &mut self.config.usage;
        match k {
            "enable" => u.enable = value(v)?,
            "minute_days" => u.minute_days = ranged(v, 1, 90)? as u32,
            "retention_days" => u.retention_days = ranged(v, 1, 3650)? as u32,
            "links" => {
                let list: Vec<String> = value(v)?;
                let parsed: Vec<_> = list
                    .iter()
                    .map(|l| super::UsageConfig::parse_link(l))
                    .collect();
                let bad: Vec<String> = parsed.iter().filter_map(|p| p.clone().err()).collect();
                u.links = parsed.into_iter().filter_map(Result::ok).collect();
                if !bad.is_empty() {
                    return Err(bad.join("; "));
                }
            }
            _ => return Err(format!("unknown key; [usage] allows {USAGE_KEYS}")),
        }
        Ok(())
    }

    fn workload_key(&mut self, k: &str, v: &Spanned<DeValue<'_>>) -> Result<(), String> {
        let specs: Vec<String> = match k {
            "run" => value(v)?,
            "need" => vec![format!("need:{}", value::<String>(v)?)],
            _ => return Err(format!("unknown key; [workload] allows {WORKLOAD_KEYS}")),
        };
        let bad: Vec<String> = specs
            .iter()
            .filter_map(|s| crate::workload::Workload::parse_spec(s).err())
            .collect();
        // Keep the good ones: the check still judges them.
        self.config.workload.specs.extend(
            specs
                .into_iter()
                .filter(|s| crate::workload::Workload::parse_spec(s).is_ok()),
        );
        if bad.is_empty() {
            Ok(())
        } else {
            Err(bad.join("; "))
        }
    }

    /// The two paths of authentication come together (as the flags do).
    fn serve_auth_pair(&mut self, span: &Range<usize>) {
        let s = &self.config.serve;
        if s.rsa_private_key_path.is_some() != s.authorized_users_path.is_some() {
            self.config.serve.rsa_private_key_path = None;
            self.config.serve.authorized_users_path = None;
            self.problem(
                span,
                "serve",
                "rsa_private_key_path and authorized_users_path go together: give both or neither \
                 (authentication stays off)"
                    .into(),
            );
        }
    }

    fn serve_key(&mut self, k: &str, _full: &str, v: &Spanned<DeValue<'_>>) -> Result<(), String> {
        let s = &mut self.config.serve;
        match k {
            "enable" => s.enable = value(v)?,
            "port" => s.port = ranged(v, 1, 65535)? as u16,
            "rsa_private_key_path" => s.rsa_private_key_path = Some(absolute(v)?),
            "authorized_users_path" => s.authorized_users_path = Some(absolute(v)?),
            "time_skew_threshold" => s.time_skew_threshold = Some(ranged(v, 1, 86_400)? as u32),
            "use_pkcs1_padding" => s.use_pkcs1_padding = value(v)?,
            _ => return Err(format!("unknown key; [serve] allows {SERVE_KEYS}")),
        }
        Ok(())
    }
}

/// An absolute path.
fn absolute(v: &Spanned<DeValue<'_>>) -> Result<PathBuf, String> {
    let s: String = value(v)?;
    if s.starts_with('/') {
        Ok(PathBuf::from(s))
    } else {
        Err(format!("'{s}': use an absolute path"))
    }
}

/// One value through serde.
fn value<T: DeserializeOwned>(v: &Spanned<DeValue<'_>>) -> Result<T, String> {
    let mut owned = v.clone();
    owned.get_mut().make_owned();
    T::deserialize(ValueDeserializer::from(owned)).map_err(|e| e.message().trim().to_string())
}

fn ranged(v: &Spanned<DeValue<'_>>, lo: u64, hi: u64) -> Result<u64, String> {
    let n: i64 = value(v)?;
    if n < lo as i64 || n as u64 > hi {
        return Err(format!("{n}: allowed {lo} to {hi}"));
    }
    Ok(n as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> (Config, Vec<String>) {
        let (c, probs) = parse(Path::new("/etc/hlctl/hlctl.toml"), text);
        (c, probs.iter().map(|p| p.to_string()).collect())
    }

    #[test]
    fn a_good_file() {
        let (c, probs) = p(r#"
[check]
peers = ["nas.lan", "pve2.lan:5202"]
dirs = ["/mnt/nas", "/srv"]
cpu = true
schedule = "weekly"
after_kernel_change = true
baseline = "good"

[metrics]
textfile_dir = "/var/lib/prometheus/node-exporter"

[serve]
enable = false
"#);
        assert!(probs.is_empty(), "{probs:?}");
        assert_eq!(c.check.peers, ["nas.lan", "pve2.lan:5202"]);
        assert_eq!(c.peers()[1].port, 5202);
        assert_eq!(c.check.baseline.as_deref(), Some("good"));
        assert_eq!(
            c.metrics.textfile_dir.as_deref(),
            Some(Path::new("/var/lib/prometheus/node-exporter"))
        );
        assert!(!c.serve.enable);
    }

    /// `[check] files`: SSH places and directories kept, anything else a
    /// problem naming what is allowed (the good ones still measured).
    #[test]
    fn file_targets_are_ssh_places_or_directories() {
        let (c, probs) = p(r#"[check]
files = ["ssh://backup@nas.lan:2222/srv/bench", "/mnt/media", "nas:/srv"]
file_size_mib = 64
ssh_config = "/etc/hlctl/ssh_config"
"#);
        assert_eq!(
            c.check.files,
            ["ssh://backup@nas.lan:2222/srv/bench", "/mnt/media"]
        );
        assert_eq!(c.check.file_size_mib, 64);
        assert_eq!(
            c.check.ssh_config.as_deref(),
            Some(Path::new("/etc/hlctl/ssh_config"))
        );
        assert_eq!(probs.len(), 1, "{probs:?}");
        assert!(
            probs[0].starts_with("/etc/hlctl/hlctl.toml:2: check.files: ")
                && probs[0].contains(
                    "\"nas:/srv\": allowed ssh://[USER@]HOST[:PORT][/DIR] or an absolute directory"
                ),
            "{probs:?}"
        );
        let (_, probs) = p("[check]\nfile_size_mib = 0\n");
        assert!(probs[0].contains("0: allowed 1 to 1048576"), "{probs:?}");
    }

    #[test]
    fn every_problem_with_line_and_key_and_the_rest_is_kept() {
        let (c, probs) = p(r#"[check]
peers = ["nas.lan", "bad host:1"]
cpu = "yes"
colour = "blue"
dirs = ["/srv"]

[serve]
enable = true
port = 70000

[extra]
x = 1
"#);
        assert_eq!(probs.len(), 5, "{probs:?}");
        let all = probs.join("\n");
        assert!(
            probs[0].starts_with("/etc/hlctl/hlctl.toml:2: check.peers: peer 'bad host:1'"),
            "{all}"
        );
        assert!(probs[1].starts_with("/etc/hlctl/hlctl.toml:3: check.cpu: invalid type"));
        assert!(probs[2].starts_with("/etc/hlctl/hlctl.toml:4: check.colour: unknown key"));
        assert!(
            probs[3].starts_with("/etc/hlctl/hlctl.toml:9: serve.port: 70000: allowed 1 to 65535")
        );
        assert!(probs[4].starts_with("/etc/hlctl/hlctl.toml:11: extra: unknown section [extra]"));
        // The good keys are used, the bad ones keep their defaults.
        assert_eq!(c.check.peers, ["nas.lan"]);
        assert_eq!(c.check.dirs, ["/srv"]);
        assert!(c.check.cpu);
        assert!(c.serve.enable);
        assert_eq!(c.serve.port, 5201);
    }

    #[test]
    fn serve_authentication_keys() {
        let (c, probs) = p(
            "[serve]\nenable = true\nrsa_private_key_path = \"/etc/hlctl/serve-key.pem\"\nauthorized_users_path = \"/etc/hlctl/serve-users.csv\"\ntime_skew_threshold = 30\nuse_pkcs1_padding = true\n",
        );
        assert!(probs.is_empty(), "{probs:?}");
        assert_eq!(
            c.serve.rsa_private_key_path.as_deref(),
            Some(Path::new("/etc/hlctl/serve-key.pem"))
        );
        assert_eq!(c.serve.time_skew_threshold, Some(30));
        assert!(c.serve.use_pkcs1_padding);
        let (c, probs) = p("[serve]\nrsa_private_key_path = \"/k.pem\"\n");
        assert_eq!(probs.len(), 1, "{probs:?}");
        assert!(probs[0].to_string().contains("go together"), "{}", probs[0]);
        assert!(c.serve.rsa_private_key_path.is_none());
        let (_, probs) = p("[serve]\nauthorized_users_path = \"users.csv\"\n");
        assert!(
            probs.iter().any(|x| x.to_string().contains("absolute")),
            "{probs:?}"
        );
    }

    #[test]
    fn usage_links_are_read_and_a_bad_one_named() {
        let (c, probs) =
            p("[usage]\nretention_days = 30\nlinks = [\"vmbr0:1G\", \"veth1\", \"x:fast\"]\n");
        assert_eq!(c.usage.retention_days, 30);
        assert_eq!(
            c.usage.links,
            vec![
                ("vmbr0".to_string(), Some(1e9)),
                ("veth1".to_string(), None)
            ]
        );
        assert_eq!(probs.len(), 1, "{probs:?}");
        assert!(
            probs[0].to_string().contains(":3: usage.links: "),
            "{}",
            probs[0]
        );
    }

    #[test]
    fn workloads_are_read_and_a_bad_one_named() {
        let (c, probs) =
            p("[workload]\nrun = [\"plex-4k:3\", \"plex4k\"]\nneed = \"net=400M,cpu=3000\"\n");
        assert_eq!(probs.len(), 1, "{probs:?}");
        assert!(
            probs[0].starts_with("/etc/hlctl/hlctl.toml:2: workload.run: plex4k: no such workload"),
            "{probs:?}"
        );
        let mut specs = c.workload.specs.clone();
        specs.sort();
        assert_eq!(specs, ["need:net=400M,cpu=3000", "plex-4k:3"]);
        assert_eq!(c.workload.workloads().len(), 2);
    }

    #[test]
    fn syntax_error_names_the_line() {
        let (_, probs) = p("[check]\ncpu = true\npeers = [\"a\"\n");
        assert_eq!(probs.len(), 1);
        assert!(
            probs[0].starts_with("/etc/hlctl/hlctl.toml:3: not valid TOML"),
            "{probs:?}"
        );
    }

    #[test]
    fn missing_file_is_defaults_unless_required() {
        let l = load(Path::new("/nonexistent/hlctl.toml"), false);
        assert!(l.problems.is_empty() && !l.exists);
        let l = load(Path::new("/nonexistent/hlctl.toml"), true);
        assert_eq!(l.problems.len(), 1);
        assert!(l.problems[0].to_string().contains("cannot read"));
    }
}
