//! Two namespaces joined by a veth pair (`here` 10.70.0.1 ↔ `peer` 10.70.0.2;
//! [`Lab::bridge`] puts `here`'s end under a bridge `vmbr0`),
//! a private state and sysctl.d directory, hlctl run inside `here`, and an
//! iperf3 server in `peer` on a free port, killed by pid when dropped.

use std::process::{Command, Output, Stdio};

use serde_json::Value;

use super::{NetNs, unique};

pub use super::{ChildGuard, HLCTL};
pub const HERE_IP: &str = "10.70.0.1";
pub const PEER_IP: &str = "10.70.0.2";

pub struct Lab {
    pub here: NetNs,
    pub peer: NetNs,
    /// The tuned side's veth (in `here`) and the peer's (in `peer`).
    pub a: String,
    pub b: String,
    pub dir: tempfile::TempDir,
}

/// A server process started by a test; killed (by pid) and reaped on drop.
pub struct Server {
    pub child: ChildGuard,
    pub port: u16,
}

impl Lab {
    pub fn new() -> Lab {
        Lab::with_queues(None)
    }

    /// The lab with a veth pair of one receive and one transmit queue each
    /// (a single-queue NIC: `ethtool -l` maxima 1, not the CPU count).
    pub fn single_queue() -> Lab {
        Lab::with_queues(Some(1))
    }

    fn with_queues(queues: Option<u32>) -> Lab {
        super::require_root("the two-namespace lab");
        let here = NetNs::new();
        let peer = NetNs::new();
        let (a, b) = (unique("ta"), unique("tb"));
        let q = queues.map(|n| n.to_string());
        let mut add = vec!["link", "add", a.as_str()];
        let mut peer_args = vec!["peer", "name", b.as_str()];
        if let Some(n) = &q {
            add.extend(["numrxqueues", n, "numtxqueues", n]);
            peer_args.extend(["numrxqueues", n, "numtxqueues", n]);
        }
        add.extend(["type", "veth"]);
        add.extend(peer_args);
        here.ip(&add);
        here.ip(&["link", "set", &b, "netns", &peer.name]);
        here.ip(&["addr", "add", &format!("{HERE_IP}/24"), "dev", &a]);
        peer.ip(&["addr", "add", &format!("{PEER_IP}/24"), "dev", &b]);
        here.ip(&["link", "set", &a, "up"]);
        peer.ip(&["link", "set", &b, "up"]);
        Lab {
            here,
            peer,
            a,
            b,
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn state_dir(&self) -> std::path::PathBuf {
        self.dir.path().join("state")
    }

    pub fn sysctl_dir(&self) -> std::path::PathBuf {
        self.dir.path().join("sysctl.d")
    }

    /// The argv prefix of hlctl with this lab's directories.
    pub fn argv(&self, args: &[&str]) -> Vec<String> {
        hlctl_argv(self.dir.path(), args)
    }

    /// hlctl inside `here`, unchecked.
    pub fn hlctl(&self, args: &[&str]) -> Output {
        hlctl_in(&self.here, self.dir.path(), args)
    }

    /// hlctl ... --json inside `here`, which must succeed.
    pub fn json(&self, args: &[&str]) -> Value {
        json_of(args, self.hlctl(&with_json(args)))
    }

    /// `hlctl tune ARGS --json`, again (at most three runs) while the step of
    /// `candidate` is not kept: runs of 1 s on a shared 2-core machine are
    /// noisy, and a run where the other direction dips makes the tuner
    /// (rightly) refuse the change. After each refused run `reverted(step)`
    /// asserts that the change was reverted. Returns the last report; the
    /// caller asserts that the step was kept.
    pub fn tune_until_kept(
        &self,
        args: &[&str],
        candidate: &str,
        reverted: impl Fn(&Value),
    ) -> Value {
        let mut r = Value::Null;
        for attempt in 1..=3 {
            r = self.json(args);
            let s = step(&r, candidate);
            if s["status"] == "kept" {
                break;
            }
            eprintln!("attempt {attempt}: {candidate} not kept: {}", s["reason"]);
            reverted(s);
        }
        r
    }

    /// `iperf3 -s` in the peer namespace on a port found free there.
    pub fn iperf3_server(&self) -> Server {
        iperf3_server_in(&self.peer, &self.here, PEER_IP)
    }

    /// `PEER_IP:port`.
    pub fn peer_arg(&self, s: &Server) -> String {
        format!("{PEER_IP}:{}", s.port)
    }

    /// `tc qdisc add dev IFACE root tbf rate RATE` on both ends.
    pub fn shape_both(&self, rate: &str) {
        for (ns, dev) in [(&self.here, &self.a), (&self.peer, &self.b)] {
            ns.exec(&[
                "tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate", rate, "burst", "32kbit",
                "latency", "50ms",
            ]);
        }
    }

    /// `ethtool -k` value of one kernel feature of the tuned veth.
    pub fn feature_on(&self, name: &str) -> bool {
        let out = self.here.exec(&["ethtool", "-k", &self.a]);
        super::ethtool::parse_k(&String::from_utf8_lossy(&out.stdout))
            .get(name)
            .map(|(on, _, _)| *on)
            .unwrap_or_else(|| panic!("ethtool -k {} has no {name}", self.a))
    }

    pub fn mtu(&self) -> u32 {
        self.mtu_of(&self.a)
    }

    /// The MTU of any device in `here`.
    pub fn mtu_of(&self, dev: &str) -> u32 {
        let out = self
            .here
            .exec(&["cat", &format!("/sys/class/net/{dev}/mtu")]);
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
    }

    /// Make `here` a hypervisor: bridge `vmbr0` with the veth `a` as its
    /// port, the address moved from `a` to the bridge (as on Proxmox).
    pub fn bridge(&self) -> &'static str {
        const BR: &str = "vmbr0";
        self.here.ip(&["link", "add", BR, "type", "bridge"]);
        self.here.ip(&["link", "set", &self.a, "master", BR]);
        self.here
            .ip(&["addr", "del", &format!("{HERE_IP}/24"), "dev", &self.a]);
        self.here
            .ip(&["addr", "add", &format!("{HERE_IP}/24"), "dev", BR]);
        self.here.ip(&["link", "set", BR, "up"]);
        // Wait for the port to forward (no STP: at once, but be sure).
        for _ in 0..50 {
            let st = self
                .here
                .exec(&["cat", &format!("/sys/class/net/{}/brport/state", self.a)]);
            if String::from_utf8_lossy(&st.stdout).trim() == "3" {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        BR
    }
}

/// One namespace holding a veth pair `a`–`b` (both up), with a private state
/// and sysctl.d directory; hlctl runs inside the namespace.
pub struct NsLab {
    pub ns: NetNs,
    pub a: String,
    pub b: String,
    pub dir: tempfile::TempDir,
}

impl NsLab {
    pub fn new() -> NsLab {
        super::require_root("the one-namespace lab");
        let ns = NetNs::new();
        let (a, b) = (unique("va"), unique("vb"));
        ns.veth(&a, &b);
        let dir = tempfile::tempdir().unwrap();
        NsLab { ns, a, b, dir }
    }

    /// hlctl inside the namespace, unchecked.
    pub fn hlctl(&self, args: &[&str]) -> Output {
        hlctl_in(&self.ns, self.dir.path(), args)
    }

    /// hlctl ... --json inside the namespace, which must succeed.
    pub fn json(&self, args: &[&str]) -> Value {
        json_of(args, self.hlctl(&with_json(args)))
    }

    /// The model of one interface (`hlctl show IFACE --json`).
    pub fn show(&self, iface: &str) -> Value {
        self.json(&["show", iface])["interfaces"][0].clone()
    }
}

/// hlctl's argv with the state and sysctl.d directories under `dir`.
pub fn hlctl_argv(dir: &std::path::Path, args: &[&str]) -> Vec<String> {
    let mut v = vec![
        HLCTL.to_string(),
        "--state-dir".into(),
        dir.join("state").display().to_string(),
        "--sysctl-dir".into(),
        dir.join("sysctl.d").display().to_string(),
    ];
    v.extend(args.iter().map(|s| s.to_string()));
    v
}

/// hlctl inside `ns` with the directories under `dir`, unchecked.
pub fn hlctl_in(ns: &NetNs, dir: &std::path::Path, args: &[&str]) -> Output {
    let v = hlctl_argv(dir, args);
    let r: Vec<&str> = v.iter().map(String::as_str).collect();
    ns.exec_raw(&r)
}

/// `args` with `--json` appended.
pub fn with_json<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut v = args.to_vec();
    v.push("--json");
    v
}

/// The JSON hlctl `args` printed, failing the test unless it succeeded.
pub fn json_of(args: &[&str], out: Output) -> Value {
    assert!(
        out.status.success(),
        "hlctl {args:?} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("hlctl {args:?}: not JSON ({e})"))
}

/// `iperf3 -s` in `ns` on a port found free there, once `client` (a namespace
/// that reaches `ip`) can connect to it at `ip`.
pub fn iperf3_server_in(ns: &NetNs, client: &NetNs, ip: &str) -> Server {
    let port = ns.run_in(|| {
        std::net::TcpListener::bind("0.0.0.0:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    });
    let child = super::die_with_test(&mut Command::new("ip"))
        .args([
            "netns",
            "exec",
            &ns.name,
            "iperf3",
            "-s",
            "-p",
            &port.to_string(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start iperf3 -s");
    let s = Server {
        child: ChildGuard(child),
        port,
    };
    // Wait until it listens.
    let addr: std::net::SocketAddr = format!("{ip}:{port}").parse().unwrap();
    let ok = client.run_in(move || {
        (0..100).any(|_| {
            if std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_millis(100))
                .is_ok()
            {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
            false
        })
    });
    assert!(ok, "iperf3 -s did not start listening on {addr}");
    s
}

/// The step of a tune report for candidate `id`.
pub fn step<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["candidate"] == id)
        .unwrap_or_else(|| {
            panic!(
                "no step {id} in {}",
                serde_json::to_string_pretty(&report["steps"]).unwrap()
            )
        })
}

/// Throughput tests of one test binary run one at a time: on two cores,
/// parallel iperf3 runs would measure each other.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}
