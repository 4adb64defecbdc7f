//! A three-host lab for the fleet tests: namespaces `nas`, `pve1`, `pve2`
//! joined by a bridge in a fourth (`switch`) namespace, each host with its
//! own state directory, hlctl.toml, textfile directory and `hlctl serve`;
//! node_exporter per host and one Prometheus (in `switch`) scraping the
//! three. Every process is started by the test and stopped by its pid.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::lab::{ChildGuard, HLCTL};
use super::{NetNs, unique};

pub const HOSTS: [&str; 3] = ["nas", "pve1", "pve2"];
pub const PROM_IP: &str = "10.71.0.254";
pub const SERVE_PORT: u16 = 5201;

pub fn ip_of(i: usize) -> String {
    format!("10.71.0.{}", i + 1)
}

pub struct Host {
    pub name: &'static str,
    pub ns: NetNs,
    /// The host's port (in its namespace) and its bridge end (in `switch`).
    pub dev: String,
    pub port: String,
    pub ip: String,
    pub dir: PathBuf,
}

impl Host {
    pub fn state_dir(&self) -> PathBuf {
        self.dir.join("state")
    }
    pub fn config(&self) -> PathBuf {
        self.dir.join("hlctl.toml")
    }
    pub fn textfile_dir(&self) -> PathBuf {
        self.dir.join("textfile")
    }

    /// The environment that points hlctl at this host's files.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            (
                "HLCTL_STATE_DIR".into(),
                self.state_dir().display().to_string(),
            ),
            ("HLCTL_CONFIG".into(), self.config().display().to_string()),
            ("HLCTL_LOCAL".into(), "true".into()),
        ]
    }

    /// A command run inside the namespace with this host's environment.
    pub fn command(&self, argv: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns.name]).args(argv);
        c.envs(self.env());
        c
    }

    pub fn hlctl(&self, args: &[&str]) -> std::process::Output {
        let mut v = vec![HLCTL];
        v.extend_from_slice(args);
        self.command(&v).output().expect("run hlctl")
    }
}

/// Fields drop in order: the processes are stopped (by pid) before the
/// namespaces and the files they use go.
pub struct Fleet {
    pub procs: Vec<ChildGuard>,
    pub switch: NetNs,
    pub hosts: Vec<Host>,
    pub dir: tempfile::TempDir,
    /// Further scrape targets (`addr:port`, host label), from [`Fleet::textfile_node`].
    pub extra_targets: Vec<(String, String)>,
}

impl Fleet {
    /// The namespaces, the bridge, and each host's files; `config` gives the
    /// text of a host's hlctl.toml (index, host).
    pub fn new(config: impl Fn(usize, &Host) -> String) -> Fleet {
        super::require_root("the fleet lab");
        let dir = tempfile::tempdir().unwrap();
        let switch = NetNs::new();
        switch.ip(&["link", "add", "br0", "type", "bridge"]);
        switch.ip(&["link", "set", "br0", "up"]);
        switch.ip(&["addr", "add", &format!("{PROM_IP}/24"), "dev", "br0"]);
        let mut hosts = Vec::new();
        for (i, name) in HOSTS.iter().enumerate() {
            let ns = NetNs::new();
            let (dev, port) = (unique("fh"), unique("fp"));
            ns.ip(&["link", "add", &dev, "type", "veth", "peer", "name", &port]);
            ns.ip(&["link", "set", &port, "netns", &switch.name]);
            switch.ip(&["link", "set", &port, "master", "br0"]);
            switch.ip(&["link", "set", &port, "up"]);
            ns.ip(&["addr", "add", &format!("{}/24", ip_of(i)), "dev", &dev]);
            ns.ip(&["link", "set", &dev, "up"]);
            let h = Host {
                name,
                ns,
                dev,
                port,
                ip: ip_of(i),
                dir: dir.path().join(name),
            };
            std::fs::create_dir_all(h.state_dir()).unwrap();
            std::fs::create_dir_all(h.textfile_dir()).unwrap();
            hosts.push(h);
        }
        for (i, h) in hosts.iter().enumerate() {
            std::fs::write(h.config(), config(i, h)).unwrap();
        }
        Fleet {
            procs: Vec::new(),
            switch,
            hosts,
            dir,
            extra_targets: Vec::new(),
        }
    }

    pub fn host(&self, name: &str) -> &Host {
        self.hosts.iter().find(|h| h.name == name).unwrap()
    }

    /// The other hosts' `IP:5201`, as TOML array items.
    pub fn peers_of(i: usize) -> String {
        (0..HOSTS.len())
            .filter(|j| *j != i)
            .map(|j| format!("\"{}:{SERVE_PORT}\"", ip_of(j)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn spawn(&mut self, mut c: Command, log: &Path) {
        let f = std::fs::File::create(log).unwrap();
        c.stdout(f.try_clone().unwrap())
            .stderr(f)
            .stdin(Stdio::null());
        let what = format!("{c:?}");
        let child = c
            .spawn()
            .unwrap_or_else(|e| panic!("{what}: {e} (scripts/setup.sh installs it)"));
        self.procs.push(ChildGuard(child));
    }

    /// `hlctl serve` in every host, waiting until each listens.
    pub fn serve_all(&mut self) {
        for i in 0..self.hosts.len() {
            let h = &self.hosts[i];
            let c = h.command(&[HLCTL, "serve", "-p", &SERVE_PORT.to_string()]);
            let log = h.dir.join("serve.log");
            self.spawn(c, &log);
        }
        for h in &self.hosts {
            wait_port_or_log(&self.switch, &h.ip, SERVE_PORT, &h.dir.join("serve.log"));
        }
    }

    /// node_exporter per host on its own address, textfile collector only.
    pub fn node_exporters(&mut self) {
        for i in 0..self.hosts.len() {
            let h = &self.hosts[i];
            let c = h.command(&[
                "prometheus-node-exporter",
                &format!("--web.listen-address={}:9100", h.ip),
                "--collector.disable-defaults",
                "--collector.textfile",
                &format!(
                    "--collector.textfile.directory={}",
                    h.textfile_dir().display()
                ),
            ]);
            let log = h.dir.join("node-exporter.log");
            self.spawn(c, &log);
        }
        for h in &self.hosts {
            wait_port_or_log(&self.switch, &h.ip, 9100, &h.dir.join("node-exporter.log"));
        }
    }

    /// A further host's textfile directory (e.g. a VM's hlctl.prom, copied
    /// out of its console): a node_exporter in `switch` on `PROM_IP:port`,
    /// scraped with label `host`. Call before [`Fleet::prometheus`].
    pub fn textfile_node(&mut self, host: &str, port: u16) -> PathBuf {
        let dir = self.dir.path().join(host).join("textfile");
        std::fs::create_dir_all(&dir).unwrap();
        let mut c = Command::new("ip");
        c.args([
            "netns",
            "exec",
            &self.switch.name,
            "prometheus-node-exporter",
        ])
        .arg(format!("--web.listen-address={PROM_IP}:{port}"))
        .args(["--collector.disable-defaults", "--collector.textfile"])
        .arg(format!("--collector.textfile.directory={}", dir.display()));
        let log = self.dir.path().join(host).join("node-exporter.log");
        self.spawn(c, &log);
        wait_port_or_log(&self.switch, PROM_IP, port, &log);
        self.extra_targets
            .push((format!("{PROM_IP}:{port}"), host.to_string()));
        dir
    }

    /// Prometheus in `switch`, scraping the three every second, with `rules`
    /// (a file path) loaded when given.
    pub fn prometheus(&mut self, rules: Option<&Path>) {
        let dir = self.dir.path().join("prometheus");
        std::fs::create_dir_all(dir.join("data")).unwrap();
        let mut cfg = String::from(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: node\n    static_configs:\n",
        );
        for h in &self.hosts {
            cfg += &format!(
                "      - targets: ['{}:9100']\n        labels: {{host: {}}}\n",
                h.ip, h.name
            );
        }
        for (addr, host) in &self.extra_targets {
            cfg += &format!("      - targets: ['{addr}']\n        labels: {{host: {host}}}\n");
        }
        if let Some(r) = rules {
            cfg += &format!("rule_files: ['{}']\n", r.display());
        }
        let conf = dir.join("prometheus.yml");
        std::fs::write(&conf, cfg).unwrap();
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.switch.name, "prometheus"])
            .arg(format!("--config.file={}", conf.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address={PROM_IP}:9090"));
        self.spawn(c, &dir.join("prometheus.log"));
        wait_port_or_log(&self.switch, PROM_IP, 9090, &dir.join("prometheus.log"));
    }

    /// GET a Prometheus API path (in `switch`); the JSON answer.
    pub fn prom_get(&self, path_and_query: &str) -> Value {
        let req = format!("GET {path_and_query} HTTP/1.0\r\nHost: {PROM_IP}:9090\r\n\r\n");
        let body = self.switch.run_in(move || {
            use std::io::{Read, Write};
            let mut s = std::net::TcpStream::connect((PROM_IP, 9090)).expect("connect prometheus");
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            s.write_all(req.as_bytes()).unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).unwrap();
            out
        });
        let json = body.split_once("\r\n\r\n").map(|x| x.1).unwrap_or("");
        serde_json::from_str(json).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
    }

    /// An instant query's result vector.
    pub fn query(&self, promql: &str) -> Vec<Value> {
        let v = self.prom_get(&format!("/api/v1/query?query={}", urlencode(promql)));
        assert_eq!(v["status"], "success", "{promql}: {v}");
        v["data"]["result"].as_array().cloned().unwrap_or_default()
    }

    /// Poll `promql` until `ok` holds for its result (at most `secs`).
    pub fn query_until(
        &self,
        promql: &str,
        secs: u64,
        ok: impl Fn(&[Value]) -> bool,
    ) -> Vec<Value> {
        let t0 = Instant::now();
        loop {
            let r = self.query(promql);
            if ok(&r) || t0.elapsed() > Duration::from_secs(secs) {
                return r;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

pub fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Wait until `ip:port` accepts connections; else fail with the server's log.
pub fn wait_port_or_log(from: &NetNs, ip: &str, port: u16, log: &Path) {
    if !port_answers(from, ip, port) {
        panic!(
            "nothing listens on {ip}:{port}; {}:\n{}",
            log.display(),
            std::fs::read_to_string(log).unwrap_or_default()
        );
    }
}

/// Whether `ip:port` accepts connections within 10 s (seen from `from`).
pub fn port_answers(from: &NetNs, ip: &str, port: u16) -> bool {
    let addr: std::net::SocketAddr = format!("{ip}:{port}").parse().unwrap();
    from.run_in(move || {
        (0..200).any(|_| {
            if let Ok(s) = std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(100)) {
                drop(s);
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
            false
        })
    })
}

/// One host's own hlctl files for a check of a local directory only (no
/// peers, no CPU, 4 MiB disk runs of 1 s): a state directory, a disk
/// directory and hlctl.toml with `extra` lines appended to `[check]`.
pub struct DiskCheckHost {
    _dir: tempfile::TempDir,
    pub state: PathBuf,
    pub conf: PathBuf,
}

impl DiskCheckHost {
    pub fn new(extra: &str) -> DiskCheckHost {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let disk = dir.path().join("disk");
        std::fs::create_dir_all(&disk).unwrap();
        let conf = dir.path().join("hlctl.toml");
        std::fs::write(
            &conf,
            format!(
                "[check]\ndirs = [\"{}\"]\ncpu = false\ndisk_size_mib = 4\nbench_time_s = 1\n{extra}",
                disk.display()
            ),
        )
        .unwrap();
        DiskCheckHost {
            _dir: dir,
            state,
            conf,
        }
    }

    /// `hlctl --state-dir STATE --config CONF ARGS...`.
    pub fn hlctl(&self, args: &[&str]) -> std::process::Output {
        Command::new(HLCTL)
            .arg("--state-dir")
            .arg(&self.state)
            .arg("--config")
            .arg(&self.conf)
            .args(args)
            .output()
            .unwrap()
    }
}
