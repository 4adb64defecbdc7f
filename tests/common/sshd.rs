//! A real OpenSSH server for a test: Debian's `/usr/sbin/sshd` on
//! 127.0.0.1 and a free port (or, for a lab, on an address and ports of a
//! network namespace of the test), with its own config, a throwaway host key and
//! a throwaway client key pair in `authorized_keys` for root, and an
//! `ssh_config` for the client (`-F`): nothing of the system's sshd or of
//! ~/.ssh is read or touched. The server dies with its guard (and with the
//! test thread, [`super::die_with_test`]); its temp dir goes with it.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{ChildGuard, NetNs, die_with_test, sh};

pub struct Sshd {
    pub port: u16,
    pub dir: tempfile::TempDir,
    addr: String,
    ns: Option<String>,
    _server: ChildGuard,
}

impl Sshd {
    /// Start it on 127.0.0.1 and a free port, and wait until a login works.
    pub fn start() -> Sshd {
        Sshd::start_on(None, "127.0.0.1", &[free_port()])
    }

    /// Start it in `ns` (None: this namespace) on `addr` and every one of
    /// `ports`, and wait until a login on the first port works.
    pub fn start_on(ns: Option<&NetNs>, addr: &str, ports: &[u16]) -> Sshd {
        super::require_root("a test sshd (its privilege separation, root's login)");
        assert!(
            Path::new("/usr/sbin/sshd").exists(),
            "/usr/sbin/sshd is missing: scripts/setup.sh installs openssh-server"
        );
        // sshd's privilege separation directory (the ssh unit's
        // RuntimeDirectory); made when missing, left in place after.
        std::fs::create_dir_all("/run/sshd").unwrap();
        let dir = tempfile::Builder::new()
            .prefix("hlctl-sshd-")
            .tempdir_in("/var/tmp")
            .unwrap();
        let d = dir.path();
        for key in ["host", "client", "stranger"] {
            let f = d.join(key);
            sh(&[
                "ssh-keygen",
                "-q",
                "-t",
                "ed25519",
                "-N",
                "",
                "-f",
                f.to_str().unwrap(),
            ]);
        }
        std::fs::copy(d.join("client.pub"), d.join("authorized_keys")).unwrap();
        let port = ports[0];
        let listen: String = ports
            .iter()
            .map(|p| format!("ListenAddress {addr}:{p}\n"))
            .collect();
        let cfg = format!(
            "{listen}HostKey {d}/host\nAuthorizedKeysFile {d}/authorized_keys\n\
             StrictModes no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             UsePAM no\nPermitRootLogin prohibit-password\nPidFile none\n\
             Subsystem sftp /usr/lib/openssh/sftp-server\n",
            d = d.display()
        );
        std::fs::write(d.join("sshd_config"), cfg).unwrap();
        for (name, key) in [("ssh_config", "client"), ("stranger_config", "stranger")] {
            let text = format!(
                "Host *\n  IdentityFile {d}/{key}\n  IdentitiesOnly yes\n  \
                 UserKnownHostsFile {d}/known_hosts\n  StrictHostKeyChecking no\n  \
                 KexAlgorithms curve25519-sha256\n  LogLevel ERROR\n",
                d = d.display()
            );
            std::fs::write(d.join(name), text).unwrap();
        }
        let mut cmd = match ns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", &ns.name, "/usr/sbin/sshd"]);
                c
            }
            None => Command::new("/usr/sbin/sshd"),
        };
        let child = die_with_test(cmd.args(["-D", "-e", "-f"]).arg(d.join("sshd_config")))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start sshd");
        let sshd = Sshd {
            port,
            dir,
            addr: addr.to_string(),
            ns: ns.map(|n| n.name.clone()),
            _server: ChildGuard(child),
        };
        sshd.wait_ready();
        sshd
    }

    pub fn config(&self) -> PathBuf {
        self.dir.path().join("ssh_config")
    }

    /// A client config whose key the server does not know.
    pub fn stranger_config(&self) -> PathBuf {
        self.dir.path().join("stranger_config")
    }

    /// `ssh -F CONFIG -p PORT [extra] root@ADDR REMOTE` (in the server's
    /// namespace), ready to run.
    pub fn ssh(&self, extra: &[&str], remote: &str) -> Command {
        let mut c = match &self.ns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, "ssh"]);
                c
            }
            None => Command::new("ssh"),
        };
        c.arg("-F")
            .arg(self.config())
            .args(["-o", "BatchMode=yes", "-p", &self.port.to_string()])
            .args(extra)
            .arg(format!("root@{}", self.addr))
            .arg(remote);
        c
    }

    fn wait_ready(&self) {
        let start = Instant::now();
        loop {
            let ok = self
                .ssh(&[], "true")
                .stdin(Stdio::null())
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false);
            if ok {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(15),
                "the test sshd on port {} did not accept a login within 15 s",
                self.port
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// A TCP port on 127.0.0.1 that nothing listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
