//! A real D-Bus system bus and the real polkitd, private to one test, with
//! hlctl's own bus policy and polkit actions installed where they read them,
//! and hlctld started inside a test network namespace.
//!
//! Every process started here is killed by pid in a `Drop` guard; every file
//! installed outside the test's temp dir is removed again when it was not
//! there before.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::NetNs;

pub use super::HLCTL;
pub const HLCTLD: &str = env!("CARGO_BIN_EXE_hlctld");
pub const BUS_NAME: &str = "org.hlctl.Daemon1";
const POLKITD: &str = "/usr/lib/polkit-1/polkitd";

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

/// Our files, installed where the bus and polkitd read them.
const INSTALLS: &[(&str, &str)] = &[
    (
        "dbus/org.hlctl.Daemon1.conf",
        "/usr/share/dbus-1/system.d/org.hlctl.Daemon1.conf",
    ),
    (
        "polkit/org.hlctl.Daemon1.policy",
        "/usr/share/polkit-1/actions/org.hlctl.Daemon1.policy",
    ),
];

/// Held (shared) while tests use our files in the system directories above,
/// and exclusively while the package test installs and purges the .deb on this
/// machine (`tests/deb_package.rs`), so that neither pulls the files from
/// under the other, in this process or another one: the other lane's test
/// binary (scripts/test.sh runs two side by side) or another developer's.
const SYSTEM_FILES_LOCK: &str = "/tmp/hlctl-tests-system-files.lock";

/// Held exclusively, for a moment, by whoever installs our files or decides
/// whether to remove them, so that no two processes do it at once.
const SYSTEM_FILES_MUTEX: &str = "/tmp/hlctl-tests-system-files.mutex";

/// The files of [`INSTALLS`] that tests put there (one path a line): the
/// last process to stop using them removes these, whichever put them there.
const SYSTEM_FILES_CREATED: &str = "/tmp/hlctl-tests-system-files.created";

/// Take the system files lock, shared or exclusive (blocks until granted).
pub fn system_files_lock(exclusive: bool) -> nix::fcntl::Flock<std::fs::File> {
    let arg = if exclusive {
        nix::fcntl::FlockArg::LockExclusive
    } else {
        nix::fcntl::FlockArg::LockShared
    };
    super::flock_file(SYSTEM_FILES_LOCK, arg).expect("a blocking flock")
}

fn system_files_mutex() -> nix::fcntl::Flock<std::fs::File> {
    super::flock_file(SYSTEM_FILES_MUTEX, nix::fcntl::FlockArg::LockExclusive)
        .expect("a blocking flock")
}

/// The paths [`SYSTEM_FILES_CREATED`] lists.
fn created_by_tests() -> Vec<PathBuf> {
    std::fs::read_to_string(SYSTEM_FILES_CREATED)
        .unwrap_or_default()
        .lines()
        .map(PathBuf::from)
        .collect()
}

/// This process's users of the installation, and the shared system files
/// lock it holds while there are any.
struct Installed {
    users: usize,
    lock: Option<nix::fcntl::Flock<std::fs::File>>,
}

static INSTALLED: Mutex<Installed> = Mutex::new(Installed {
    users: 0,
    lock: None,
});

/// Keeps our bus policy and polkit actions installed while alive.
pub struct Install;

impl Install {
    pub fn new() -> Install {
        let mut g = INSTALLED.lock().unwrap_or_else(|p| p.into_inner());
        if g.lock.is_none() {
            g.lock = Some(system_files_lock(false));
        }
        let _mutex = system_files_mutex();
        let mut created = created_by_tests();
        for (src, dst) in INSTALLS {
            let dst = Path::new(dst);
            let fresh = !dst.exists();
            install_file(&repo(src), dst);
            if fresh && !created.iter().any(|p| p == dst) {
                created.push(dst.to_path_buf());
            }
        }
        let list: String = created
            .iter()
            .map(|p| format!("{}\n", p.display()))
            .collect();
        std::fs::write(SYSTEM_FILES_CREATED, list)
            .unwrap_or_else(|e| panic!("write {SYSTEM_FILES_CREATED}: {e}"));
        g.users += 1;
        Install
    }
}

/// Put `src` at `dst` whole: left alone when it is there already, else
/// written beside it and renamed over it. polkitd and dbus-daemon re-read
/// these directories whenever anything in them changes, so a copy over the
/// file while another test's polkitd uses it can be read half-written. On
/// CI (2 Dec) a polkitd refused one call as "not registered" and allowed
/// the same action 50 ms later, most likely so (not reproduced).
fn install_file(src: &Path, dst: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let want = std::fs::read(src).unwrap_or_else(|e| panic!("read {src:?}: {e}"));
    if std::fs::read(dst).is_ok_and(|have| have == want) {
        return;
    }
    std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
    let name = dst.file_name().unwrap().to_string_lossy();
    // Not ending in .policy or .conf: neither daemon reads it.
    let tmp = dst.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::write(&tmp, &want)
        .and_then(|()| std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o644)))
        .and_then(|()| std::fs::rename(&tmp, dst));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        panic!("install {dst:?}: {e}");
    }
}

impl Drop for Install {
    /// The last user in this process lets go of the shared lock; the files
    /// go only when no other process holds it either. (Removing what this
    /// process created when its own last user ended pulled the bus policy
    /// from under the other lane's test binary: dbus-daemon re-read its
    /// configuration and refused every call to hlctld with AccessDenied.)
    fn drop(&mut self) {
        let mut g = INSTALLED.lock().unwrap_or_else(|p| p.into_inner());
        g.users -= 1;
        if g.users > 0 {
            return;
        }
        let _mutex = system_files_mutex();
        g.lock = None;
        let Some(_alone) = super::flock_file(
            SYSTEM_FILES_LOCK,
            nix::fcntl::FlockArg::LockExclusiveNonblock,
        ) else {
            // Another process uses them: the last one removes them.
            return;
        };
        for p in created_by_tests() {
            let _ = std::fs::remove_file(p);
        }
        let _ = std::fs::remove_file(SYSTEM_FILES_CREATED);
    }
}

/// A child process killed (by its pid) and reaped when dropped.
pub use super::ChildGuard as Proc;

/// A bus with polkitd, a namespace with a veth pair `a`–`b`, and hlctld
/// serving that namespace with its state under `state` (dropped first).
pub struct DaemonLab {
    pub daemon: Daemon,
    pub ns: NetNs,
    pub rig: Rig,
    pub a: String,
    pub b: String,
    pub state: tempfile::TempDir,
}

impl DaemonLab {
    /// hlctld started with `extra` arguments.
    pub fn new(extra: &[&str]) -> DaemonLab {
        let rig = Rig::start();
        let ns = NetNs::new();
        let (a, b) = (super::unique("da"), super::unique("db"));
        ns.veth(&a, &b);
        let state = tempfile::tempdir().unwrap();
        let daemon = rig.daemon(&ns, state.path(), extra);
        DaemonLab {
            daemon,
            ns,
            rig,
            a,
            b,
            state,
        }
    }

    /// The daemon's log so far.
    pub fn log(&self) -> String {
        self.daemon.log()
    }

    /// `out`, failing the test with it and the daemon's log unless it succeeded.
    pub fn ok(&self, out: Output) -> Output {
        assert!(
            out.status.success(),
            "failed ({:?}): {}\n{}\ndaemon log:\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            self.log()
        );
        out
    }

    /// `hlctl ARGS --json` through the daemon, which must succeed.
    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        let out = self.ok(self.rig.hlctl(&super::lab::with_json(args)));
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// The model of one interface through the daemon.
    pub fn show(&self, iface: &str) -> serde_json::Value {
        self.json(&["show", iface])["interfaces"][0].clone()
    }

    /// A sysctl's value inside the lab's namespace, whitespace normalised.
    pub fn sysctl_in_ns(&self, key: &str) -> String {
        let out = self
            .ns
            .exec(&["cat", &format!("/proc/sys/{}", key.replace('.', "/"))]);
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The object path of the link `iface` (`Manager.GetLink`).
    pub fn link_path(&self, iface: &str) -> String {
        self.rig.rt.block_on(async {
            let r = self
                .rig
                .conn
                .call_method(
                    Some(BUS_NAME),
                    "/org/hlctl/Daemon1",
                    Some("org.hlctl.Daemon1.Manager"),
                    "GetLink",
                    &(iface,),
                )
                .await
                .unwrap();
            r.body()
                .deserialize::<zbus::OwnedObjectPath>()
                .unwrap()
                .to_string()
        })
    }

    /// `PropertiesChanged` of the objects at and below `path`.
    pub fn properties_changed(&self, path: &str) -> zbus::MessageStream {
        self.signals(
            zbus::MatchRule::builder()
                .msg_type(zbus::message::Type::Signal)
                .interface("org.freedesktop.DBus.Properties")
                .member("PropertiesChanged")
                .path_namespace(path.to_string())
                .build()
                .unwrap(),
        )
    }

    /// The signals `rule` matches, on the test connection.
    pub fn signals(&self, rule: zbus::MatchRule<'_>) -> zbus::MessageStream {
        self.rig.rt.block_on(async {
            zbus::MessageStream::for_match_rule(rule, &self.rig.conn, None)
                .await
                .unwrap()
        })
    }
}

/// A process the test did not spawn itself (e.g. started by bus activation),
/// killed by pid when dropped.
pub struct PidGuard(pub u32);

impl Drop for PidGuard {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.0 as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

/// A private system bus with polkitd on it.
pub struct Rig {
    pub dir: tempfile::TempDir,
    pub address: String,
    pub rt: tokio::runtime::Runtime,
    pub conn: zbus::Connection,
    polkit: Option<Proc>,
    _dbus: Proc,
    _install: Option<Install>,
}

/// The bus configuration: the system bus's own, listening on our socket.
/// With `services`, the bus starts services from that directory itself
/// (activation without the setuid helper, which only knows the real bus).
fn bus_config(socket: &Path, services: Option<&Path>) -> String {
    let sys = std::fs::read_to_string("/usr/share/dbus-1/system.conf").expect("dbus installed");
    let mut out = String::new();
    for line in sys.lines() {
        let t = line.trim();
        if t.starts_with("<user>")
            || t.starts_with("<pidfile>")
            || t == "<fork/>"
            || t == "<standard_system_servicedirs/>"
        {
            continue;
        }
        if t.starts_with("<servicehelper>") {
            if let Some(dir) = services {
                out.push_str(&format!("  <servicedir>{}</servicedir>\n", dir.display()));
            }
            continue;
        }
        if t.starts_with("<listen>") {
            out.push_str(&format!(
                "  <listen>unix:path={}</listen>\n",
                socket.display()
            ));
            continue;
        }
        if t == "<includedir>system.d</includedir>" {
            out.push_str("  <includedir>/usr/share/dbus-1/system.d</includedir>\n");
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

impl Rig {
    pub fn start() -> Rig {
        Self::start_with(None, true)
    }

    /// A rig whose bus activates `org.hlctl.Daemon1` by running `exec`
    /// (a command line; `{bus}` is replaced by the bus address).
    pub fn with_activation(exec: &str) -> Rig {
        Self::start_with(Some(exec), true)
    }

    /// A rig that installs nothing: the bus policy and polkit actions are the
    /// ones already in the system directories (put there by the .deb).
    pub fn with_installed_files() -> Rig {
        Self::start_with(None, false)
    }

    fn start_with(activation: Option<&str>, install: bool) -> Rig {
        super::require_root("the bus rig");
        let install = install.then(Install::new);
        let dir = tempfile::Builder::new()
            .prefix("hlctl-bus")
            .tempdir()
            .unwrap();
        // polkitd and `nobody` must reach the socket.
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let socket = dir.path().join("bus");
        let conf = dir.path().join("bus.conf");
        let address = format!("unix:path={}", socket.display());
        let services = activation.map(|exec| {
            let dir = dir.path().join("services");
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(
                dir.join("org.hlctl.Daemon1.service"),
                format!(
                    "[D-BUS Service]\nName={BUS_NAME}\nExec={}\nUser=root\n",
                    exec.replace("{bus}", &address)
                ),
            )
            .unwrap();
            dir
        });
        std::fs::write(&conf, bus_config(&socket, services.as_deref())).unwrap();
        let dbus = Proc(
            super::die_with_test(&mut Command::new("dbus-daemon"))
                .arg(format!("--config-file={}", conf.display()))
                .arg("--nofork")
                .arg("--nosyslog")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start dbus-daemon"),
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        while !socket.exists() {
            assert!(
                Instant::now() < deadline,
                "dbus-daemon did not create {socket:?}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        // The socket file exists a moment before the bus listens on it.
        let conn = loop {
            match rt.block_on(zbus::connection::Builder::address(address.as_str()).build()) {
                Ok(c) => break c,
                Err(e) if Instant::now() < deadline => {
                    let _ = e;
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => panic!("connect to the test bus: {e}"),
            }
        };
        let mut rig = Rig {
            dir,
            address,
            rt,
            conn,
            polkit: None,
            _dbus: dbus,
            _install: install,
        };
        rig.start_polkit();
        rig
    }

    /// (Re)start polkitd, e.g. after writing a rules file.
    pub fn start_polkit(&mut self) {
        self.polkit = None;
        self.wait_name_gone("org.freedesktop.PolicyKit1", Duration::from_secs(10));
        let p = Proc(
            super::die_with_test(&mut Command::new(POLKITD))
                .arg("--no-debug")
                .env("DBUS_SYSTEM_BUS_ADDRESS", &self.address)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start polkitd"),
        );
        self.polkit = Some(p);
        self.wait_name("org.freedesktop.PolicyKit1", Duration::from_secs(20));
    }

    pub fn has_owner(&self, name: &str) -> bool {
        self.rt.block_on(async {
            let bus = zbus::fdo::DBusProxy::new(&self.conn).await.unwrap();
            bus.name_has_owner(name.try_into().unwrap())
                .await
                .unwrap_or(false)
        })
    }

    pub fn wait_name(&self, name: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while !self.has_owner(name) {
            assert!(
                Instant::now() < deadline,
                "{name} did not appear on the bus"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn wait_name_gone(&self, name: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while self.has_owner(name) {
            assert!(Instant::now() < deadline, "{name} did not leave the bus");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Start hlctld inside `ns`, with its state and sysctl.d under `state`,
    /// and wait until it owns its name. Its stderr goes to `state/hlctld.log`.
    pub fn daemon(&self, ns: &NetNs, state: &Path, extra: &[&str]) -> Daemon {
        self.daemon_exe(HLCTLD, ns, state, extra)
    }

    /// [`Rig::daemon`] with another hlctld executable (e.g. the installed one).
    pub fn daemon_exe(&self, exe: &str, ns: &NetNs, state: &Path, extra: &[&str]) -> Daemon {
        self.daemon_env(exe, ns, state, extra, &[])
    }

    /// [`Rig::daemon_exe`] with variables added to hlctld's environment
    /// (`ip netns exec` passes them on).
    pub fn daemon_env(
        &self,
        exe: &str,
        ns: &NetNs,
        state: &Path,
        extra: &[&str],
        env: &[(&str, &std::ffi::OsStr)],
    ) -> Daemon {
        std::fs::create_dir_all(state).unwrap();
        let log_path = state.join("hlctld.log");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .unwrap();
        let child = super::die_with_test(&mut Command::new("ip"))
            .args(["netns", "exec", &ns.name, exe, "--bus", &self.address])
            .arg("--state-dir")
            .arg(state.join("state"))
            .arg("--sysctl-dir")
            .arg(state.join("sysctl.d"))
            .args(extra)
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start hlctld");
        // `ip netns exec` execs hlctld in place: the pid is hlctld's.
        let d = Daemon {
            proc: Proc(child),
            log: log_path,
        };
        self.wait_name(BUS_NAME, Duration::from_secs(20));
        d
    }

    /// Property `name` of interface `iface` on object `path`, read by root on
    /// this bus.
    pub fn property(&self, path: &str, iface: &str, name: &str) -> zbus::OwnedVariant {
        self.rt.block_on(async {
            let r = self
                .conn
                .call_method(
                    Some(BUS_NAME),
                    path,
                    Some("org.freedesktop.DBus.Properties"),
                    "Get",
                    &(iface, name),
                )
                .await
                .unwrap_or_else(|e| panic!("get {iface}.{name} of {path}: {e}"));
            r.body().deserialize::<zbus::OwnedVariant>().unwrap()
        })
    }

    /// Run hlctl as root through the daemon on this bus.
    pub fn hlctl(&self, args: &[&str]) -> Output {
        Command::new(HLCTL)
            .arg("--bus")
            .arg(&self.address)
            .args(args)
            .env_remove("HLCTL_LOCAL")
            .output()
            .expect("run hlctl")
    }

    /// Run hlctl as another user (uid, gid) through the daemon on this bus.
    pub fn hlctl_as(&self, uid: u32, gid: u32, args: &[&str]) -> Output {
        self.hlctl_exe_as(HLCTL, uid, gid, args)
    }

    /// [`Rig::hlctl_as`] with another hlctl executable (e.g. the installed one).
    pub fn hlctl_exe_as(&self, exe: &str, uid: u32, gid: u32, args: &[&str]) -> Output {
        let mut c = setpriv(uid, gid);
        c.arg(exe).arg("--bus").arg(&self.address).args(args);
        c.output().expect("run hlctl via setpriv")
    }

    /// `busctl ARGS...` on this bus as another user.
    pub fn busctl_as(&self, uid: u32, gid: u32, args: &[&str]) -> Output {
        let mut c = setpriv(uid, gid);
        c.args(["busctl", "--address", &self.address, "--no-pager"])
            .args(args);
        c.output().expect("run busctl via setpriv")
    }

    /// Run this test binary's `helper` test as another user, with `call` in
    /// `HLCTL_TEST_CALL`: the helper makes one D-Bus call and prints
    /// `RESULT:OK:<reply>` or `RESULT:ERR:<error name>:<message>`.
    pub fn call_as(
        &self,
        uid: u32,
        gid: u32,
        helper: &str,
        call: &str,
    ) -> Result<String, (String, String)> {
        let exe = std::env::current_exe().unwrap();
        let mut c = setpriv(uid, gid);
        c.arg(exe)
            .args(["--exact", helper, "--ignored", "--nocapture"])
            .args(["--test-threads", "1"])
            .env("HLCTL_TEST_CALL", call)
            .env("HLCTL_TEST_BUS", &self.address);
        let out = c.output().expect("run the helper");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let line = text
            .lines()
            .find_map(|l| l.find("RESULT:").map(|i| &l[i + "RESULT:".len()..]))
            .unwrap_or_else(|| {
                panic!(
                    "helper printed no result: {text}\n{}",
                    String::from_utf8_lossy(&out.stderr)
                )
            })
            .to_string();
        match line.strip_prefix("OK:") {
            Some(ok) => Ok(ok.to_string()),
            None => {
                let rest = line.strip_prefix("ERR:").unwrap_or(&line);
                let (name, msg) = rest.split_once(':').unwrap_or((rest, ""));
                Err((name.to_string(), msg.to_string()))
            }
        }
    }
}

fn setpriv(uid: u32, gid: u32) -> Command {
    let mut c = Command::new("setpriv");
    c.arg(format!("--reuid={uid}"))
        .arg(format!("--regid={gid}"))
        .arg("--clear-groups")
        .env_remove("HLCTL_LOCAL")
        .env("HOME", "/");
    c
}

/// A running hlctld.
pub struct Daemon {
    pub proc: Proc,
    pub log: PathBuf,
}

impl Daemon {
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGKILL, as a crash would.
    pub fn kill9(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.proc.pid() as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        let _ = self.proc.0.wait();
    }

    /// SIGTERM and wait for the exit status.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.proc.pid() as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
        self.proc.0.wait().expect("wait hlctld")
    }
}

/// A throw-away user in a throw-away group, both deleted when dropped.
pub struct TempUser {
    pub name: String,
    pub group: String,
    pub uid: u32,
    pub gid: u32,
}

impl TempUser {
    pub fn new() -> TempUser {
        let name = super::unique("hlu");
        let group = super::unique("hlg");
        super::sh(&["groupadd", &group]);
        let mut user = TempUser {
            name: name.clone(),
            group: group.clone(),
            uid: 0,
            gid: 0,
        };
        super::sh(&[
            "useradd",
            "-M",
            "-N",
            "-g",
            "nogroup",
            "-G",
            &group,
            "-s",
            "/usr/sbin/nologin",
            &name,
        ]);
        let id = |flag: &str, who: &str| -> u32 {
            let o = super::sh(&["id", flag, who]);
            String::from_utf8_lossy(&o.stdout).trim().parse().unwrap()
        };
        user.uid = id("-u", &name);
        user.gid = id("-g", &name);
        user
    }
}

impl Drop for TempUser {
    fn drop(&mut self) {
        if self.uid != 0 {
            let _ = Command::new("userdel").arg(&self.name).output();
        }
        let _ = Command::new("groupdel").arg(&self.group).output();
    }
}

/// A file written now and removed when dropped.
pub struct TempFile(pub PathBuf);

impl TempFile {
    pub fn write(path: impl Into<PathBuf>, text: &str) -> TempFile {
        let p = path.into();
        std::fs::write(&p, text).unwrap();
        TempFile(p)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A polkit rules file in /etc/polkit-1/rules.d (removed when dropped) that
/// grants members of `group` the `org.hlctl.Daemon1.` actions named in
/// `actions` (`apply-settings`, ...), or every one of them when it is empty.
/// polkitd reads rules when it starts: write them before `start_polkit`.
pub fn grant(group: &str, actions: &[&str]) -> TempFile {
    let which = if actions.is_empty() {
        "action.id.indexOf(\"org.hlctl.Daemon1.\") == 0".to_string()
    } else {
        let ids: Vec<String> = actions
            .iter()
            .map(|a| format!("action.id == \"org.hlctl.Daemon1.{a}\""))
            .collect();
        format!("({})", ids.join(" || "))
    };
    TempFile::write(
        format!(
            "/etc/polkit-1/rules.d/49-{}.rules",
            super::unique("hlctl-test")
        ),
        &format!(
            "// Written by hlctl's tests; removed when the test ends.\n\
             polkit.addRule(function(action, subject) {{\n\
             \x20   if ({which} && subject.isInGroup(\"{group}\")) {{\n\
             \x20       return polkit.Result.YES;\n\
             \x20   }}\n\
             }});\n"
        ),
    )
}

/// `StartBenchmark`'s `a{sv}` parameters from a JSON object.
pub fn bench_params(json: &str) -> std::collections::HashMap<String, zbus::OwnedVariant> {
    let v: serde_json::Value = serde_json::from_str(json).expect("benchmark parameters as JSON");
    hlctl::dbus::wire::params::encode(&v).expect("flat benchmark parameters")
}

/// The body of a test binary's `helper` test: when `HLCTL_TEST_CALL` is set
/// (by [`Rig::call_as`]), make that one call on `HLCTL_TEST_BUS` and print the
/// result; run any other way it fails and says so. Calls (space-separated words):
/// `apply PATH KEY VALUE [persist]`, `set_sysctl KEY VALUE [persist]`,
/// `tune`, `bench KIND PARAMS_JSON [detached] [stay=MS]`, `cancel JOB_PATH`,
/// `get PATH IFACE PROP`. (PARAMS_JSON must not contain spaces.)
pub fn helper_main() {
    use std::collections::HashMap;
    use zbus::Variant;
    let (Ok(call), Ok(bus)) = (
        std::env::var("HLCTL_TEST_CALL"),
        std::env::var("HLCTL_TEST_BUS"),
    ) else {
        panic!("the helper runs only through Rig::call_as (HLCTL_TEST_CALL and HLCTL_TEST_BUS)");
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let w: Vec<&str> = call.split(' ').collect();
    let r: zbus::Result<String> = rt.block_on(async {
        let conn = zbus::connection::Builder::address(bus.as_str())
            .build()
            .await?;
        let opts = |persist: bool| {
            let mut o: HashMap<&str, Variant<'_>> = HashMap::new();
            if persist {
                o.insert("persist", Variant::Bool(true));
            }
            o
        };
        let persist = w.last() == Some(&"persist");
        let reply = match w[0] {
            "apply" => {
                let mut s: HashMap<&str, Variant<'_>> = HashMap::new();
                s.insert(w[2], Variant::U32(w[3].parse().unwrap()));
                conn.call_method(
                    Some(BUS_NAME),
                    w[1],
                    Some("org.hlctl.Daemon1.Link"),
                    "ApplyChanges",
                    &(s, opts(persist)),
                )
                .await?
            }
            "set_sysctl" => {
                let v = vec![(w[1], w[2])];
                conn.call_method(
                    Some(BUS_NAME),
                    "/org/hlctl/Daemon1",
                    Some("org.hlctl.Daemon1.Manager"),
                    "SetSysctl",
                    &(v, opts(persist)),
                )
                .await?
            }
            "tune" => {
                conn.call_method(
                    Some(BUS_NAME),
                    "/org/hlctl/Daemon1",
                    Some("org.hlctl.Daemon1.Manager"),
                    "Tune",
                    &(opts(false),),
                )
                .await?
            }
            "bench" => {
                // bench KIND PARAMS [detached] [stay=MS]
                let mut o = opts(false);
                if w.contains(&"detached") {
                    o.insert("detached", Variant::Bool(true));
                }
                let r = conn
                    .call_method(
                        Some(BUS_NAME),
                        "/org/hlctl/Daemon1",
                        Some("org.hlctl.Daemon1.Manager"),
                        "StartBenchmark",
                        &(w[1], bench_params(w[2]), o),
                    )
                    .await?;
                if let Some(ms) = w.iter().find_map(|x| x.strip_prefix("stay=")) {
                    tokio::time::sleep(Duration::from_millis(ms.parse().unwrap())).await;
                }
                r
            }
            "cancel" => {
                conn.call_method(
                    Some(BUS_NAME),
                    w[1],
                    Some("org.hlctl.Daemon1.Job"),
                    "Cancel",
                    &(),
                )
                .await?
            }
            "describe" => {
                conn.call_method(
                    Some(BUS_NAME),
                    w[1],
                    Some("org.hlctl.Daemon1.Link"),
                    "Describe",
                    &(),
                )
                .await?
            }
            "get" => {
                conn.call_method(
                    Some(BUS_NAME),
                    w[1],
                    Some("org.freedesktop.DBus.Properties"),
                    "Get",
                    &(w[2], w[3]),
                )
                .await?
            }
            other => panic!("unknown helper call {other}"),
        };
        let body = reply.body();
        let sig = body.signature().to_string();
        Ok(match sig.as_str() {
            "" => String::new(),
            "s" => body.deserialize::<String>()?,
            "o" => body.deserialize::<zbus::OwnedObjectPath>()?.to_string(),
            "v" => format!("{:?}", &*body.deserialize::<zbus::OwnedVariant>()?),
            other => format!("<reply of type {other}>"),
        })
    });
    match r {
        Ok(s) => println!("\nRESULT:OK:{}", s.replace('\n', " ")),
        Err(zbus::Error::MethodError(name, msg, _)) => println!(
            "RESULT:ERR:{}:{}",
            name.as_str(),
            msg.unwrap_or_default().replace('\n', " ")
        ),
        // Standard names (org.freedesktop.DBus.Error.*) arrive as fdo errors.
        Err(zbus::Error::FDO(e)) => println!(
            "RESULT:ERR:{}:{}",
            zbus::DBusError::name(&*e).as_str(),
            zbus::DBusError::description(&*e)
                .unwrap_or_default()
                .replace('\n', " ")
        ),
        Err(e) => println!("\nRESULT:ERR:transport:{e}"),
    }
}
