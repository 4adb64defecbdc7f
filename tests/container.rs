//! The OCI image (scripts/build-image.sh) run by Debian's podman, rootful,
//! with `--network ns:/run/netns/<test namespace>` so it stays inside the
//! test's namespaces (never the host's network): `serve` detached is the
//! peer of the host's `hlctl bench net` and of a real `iperf3 -c`; `doctor
//! --peer` in a container finds offloads planted off on the namespace's
//! veth and `tune --yes` in another fixes them (read back with `ethtool -k`
//! outside the container); `set` without `--cap-add NET_ADMIN` is refused
//! naming the capability and changes nothing, with it the change is made
//! and persisted; history and state persist across container runs on a
//! bind-mounted directory. Every container is started by [`podman_run`]
//! (runc and explicit limits: why there), has a unique name and is removed
//! (`podman rm -f`) when its guard drops, also when the test fails.
//!
//! Docker: see docs/nas.md ("What was tested") for why `docker load` and
//! `docker run` are not run here.

mod common;

use std::process::{Command, Output};
use std::time::Duration;

use common::lab::{Lab, PEER_IP};
use common::{NetNs, static_bin};
use serde_json::Value;

/// A container by name, removed when dropped (also when the test fails).
struct Container(String);

impl Drop for Container {
    fn drop(&mut self) {
        let _ = Command::new("podman")
            .args(["rm", "-f", "-t", "1", &self.0])
            .output();
    }
}

fn podman(args: &[&str]) -> Output {
    Command::new("podman")
        .args(args)
        .output()
        .expect("run podman: missing? run scripts/setup.sh")
}

/// This process's hard limit of `resource` (getrlimit).
fn hard_limit(resource: libc::__rlimit_resource_t) -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct it is given, which outlives the call.
    let rc = unsafe { libc::getrlimit(resource, &mut r) };
    assert_eq!(rc, 0, "getrlimit: {}", std::io::Error::last_os_error());
    r.rlim_max
}

/// `podman --runtime runc run --ulimit nofile=N:N --ulimit nproc=M:M --name
/// NAME --network NETWORK EXTRA IMAGE ARGS`, unchecked: every container of
/// these tests starts here. This machine (and CI's) is itself a container:
/// podman's default runtime crun fails there (`setrlimit RLIMIT_NOFILE:
/// Operation not permitted`: podman asks for nofile 1048576, above the hard
/// limit it has; and `cgroups in hybrid mode not supported`). runc (Debian's
/// `runc`, installed by scripts/setup.sh) starts containers under hybrid
/// cgroups, and explicit limits at or below this process's hard limits can
/// be set (`--ulimit host` cannot). Capped at 65536 open files and 4096
/// processes, plenty for hlctl; nproc above the kernel's pid_max (32768
/// here) was refused too.
fn podman_run(name: &str, network: &str, extra: &[&str], args: &[&str]) -> Output {
    let img = static_bin::image();
    let nofile = hard_limit(libc::RLIMIT_NOFILE).min(65536);
    let nproc = hard_limit(libc::RLIMIT_NPROC).min(4096);
    let nofile = format!("nofile={nofile}:{nofile}");
    let nproc = format!("nproc={nproc}:{nproc}");
    let mut v = vec!["--runtime", "runc", "run", "--ulimit", &nofile];
    v.extend(["--ulimit", &nproc, "--name", name, "--network", network]);
    v.extend_from_slice(extra);
    v.push(&img.id);
    v.extend_from_slice(args);
    podman(&v)
}

/// `--network ns:/run/netns/NS`: the container joins the test's namespace,
/// never the host's network.
fn network_of(ns: &NetNs) -> String {
    format!("ns:/run/netns/{}", ns.name)
}

/// `podman run --rm` in `ns` with `extra` options, unchecked; the container
/// is removed by name on the way out whatever happened.
fn run_in(ns: &NetNs, extra: &[&str], args: &[&str]) -> Output {
    let name = common::unique("hlc");
    let _guard = Container(name.clone());
    let extra = [&["--rm"], extra].concat();
    podman_run(&name, &network_of(ns), &extra, args)
}

/// `hlctl serve --port PORT` as a detached container in `ns`, listening at
/// `ip:port` as seen from `client` before this returns.
fn serve_in(ns: &NetNs, client: &NetNs, ip: &str, port: u16) -> Container {
    let name = common::unique("hls");
    let guard = Container(name.clone());
    let d = podman_run(
        &name,
        &network_of(ns),
        &["-d"],
        &["serve", "--port", &port.to_string()],
    );
    assert!(d.status.success(), "{}", common::output_text(&d));
    let addr: std::net::SocketAddr = format!("{ip}:{port}").parse().unwrap();
    let up = client.run_in(move || {
        (0..100).any(|_| {
            let ok = std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(100));
            ok.is_ok() || {
                std::thread::sleep(Duration::from_millis(50));
                false
            }
        })
    });
    let logs = podman(&["logs", &name]);
    assert!(up, "serve never listened: {}", common::output_text(&logs));
    guard
}

/// Root and podman, or fail: CI runs as root and installs podman and runc.
fn require_podman() {
    common::require_root("rootful podman in test namespaces");
    let v = podman(&["--version"]);
    assert!(v.status.success(), "podman: {}", common::output_text(&v));
}

/// `ethtool -k IFACE` in `ns`, from outside any container: one feature.
fn feature_on(ns: &NetNs, iface: &str, name: &str) -> bool {
    let out = ns.exec(&["ethtool", "-k", iface]);
    common::ethtool::parse_k(&String::from_utf8_lossy(&out.stdout))
        .get(name)
        .map(|(on, _, _)| *on)
        .unwrap_or_else(|| panic!("ethtool -k {iface} has no {name}"))
}

#[test]
fn the_archive_loads_is_small_and_runs() {
    require_podman();
    let img = static_bin::image();
    let size = std::fs::metadata(&img.archive).unwrap().len();
    eprintln!("{}: {size} bytes", img.archive.display());
    assert!(size < 10 << 20, "image archive {size} bytes, over 10 MiB");
    let load = podman(&["load", "-q", "-i", img.archive.to_str().unwrap()]);
    assert!(load.status.success(), "{}", common::output_text(&load));
    let inspect = podman(&["image", "inspect", &img.id]);
    let v: Value = serde_json::from_slice(&inspect.stdout).unwrap();
    let cfg = &v[0]["Config"];
    assert_eq!(cfg["Entrypoint"][0], "/usr/bin/hlctl", "{cfg}");
    assert!(cfg["Env"].to_string().contains("HLCTL_LOCAL=true"), "{cfg}");
    assert_eq!(
        cfg["Labels"]["org.opencontainers.image.title"], "hlctl",
        "{cfg}"
    );
    assert_eq!(
        v[0]["RootFS"]["Layers"].as_array().map(Vec::len),
        Some(1),
        "scratch + one layer"
    );
    let name = common::unique("hlv");
    let _guard = Container(name.clone());
    let o = podman_run(&name, "none", &["--rm"], &["--version"]);
    assert!(o.status.success(), "{}", common::output_text(&o));
    let version = String::from_utf8_lossy(&o.stdout);
    assert_eq!(version.trim(), concat!("hlctl ", env!("CARGO_PKG_VERSION")));
}

#[test]
fn serve_in_a_container_is_the_peer_of_hlctl_and_iperf3() {
    require_podman();
    let _serial = common::lab::serial();
    let lab = Lab::new();
    let port = common::net::free_port();
    let guard = serve_in(&lab.peer, &lab.here, PEER_IP, port);
    let peer = format!("{PEER_IP}:{port}");
    let bench = lab.hlctl(&["--json", "bench", "net", "--peer", &peer, "-t", "1"]);
    let r: Value = serde_json::from_slice(&bench.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", common::output_text(&bench)));
    let bps = r["end"]["sum_received"]["bits_per_second"]
        .as_f64()
        .unwrap_or(0.0);
    assert!(bps > 1e6, "hlctl bench net: {r}");
    let iperf = lab.here.exec_raw(&[
        "iperf3",
        "-c",
        PEER_IP,
        "-p",
        &port.to_string(),
        "-t",
        "1",
        "--json",
    ]);
    let r: Value = serde_json::from_slice(&iperf.stdout).unwrap_or_default();
    let bps = r["end"]["sum_received"]["bits_per_second"]
        .as_f64()
        .unwrap_or(0.0);
    assert!(
        bps > 1e6,
        "iperf3 -c against the container: {}",
        common::output_text(&iperf)
    );
    let name = guard.0.clone();
    let state = podman(&["inspect", "-f", "{{.State.Running}}", &name]);
    assert_eq!(
        String::from_utf8_lossy(&state.stdout).trim(),
        "true",
        "serve still running after both clients: {}",
        common::output_text(&podman(&["logs", &name]))
    );
    drop(guard);
    assert!(
        !podman(&["container", "exists", &name]).status.success(),
        "removed by its guard"
    );
}

#[test]
fn set_in_a_container_needs_net_admin_and_history_stays_on_the_volume() {
    require_podman();
    let lab = Lab::new();
    let vol = tempfile::tempdir().unwrap();
    let mount = format!("{}:/var/lib/hlctl", vol.path().display());
    let gro = |on: bool| {
        let now = feature_on(&lab.here, &lab.a, "rx-gro");
        assert_eq!(now, on, "ethtool -k {} in the namespace: rx-gro", lab.a);
    };
    lab.here.exec(&["ethtool", "-K", &lab.a, "gro", "off"]);
    gro(false);

    let refused = run_in(
        &lab.here,
        &["-v", &mount],
        &["set", &lab.a, "feature", "gro", "on", "--persist"],
    );
    let text = common::output_text(&refused);
    assert_eq!(refused.status.code(), Some(3), "{text}");
    assert!(
        text.contains("needs CAP_NET_ADMIN: add --cap-add NET_ADMIN"),
        "{text}"
    );
    gro(false);
    assert!(!vol.path().join("nic-settings.json").exists(), "{text}");

    let done = run_in(
        &lab.here,
        &["--cap-add", "NET_ADMIN", "-v", &mount],
        &["set", &lab.a, "feature", "gro", "on", "--persist"],
    );
    let text = common::output_text(&done);
    assert!(done.status.success(), "{text}");
    gro(true);
    let state = std::fs::read_to_string(vol.path().join("nic-settings.json")).unwrap();
    assert!(state.contains(&lab.a), "{state}");
    // Named as the user mounted it: the directory below its filesystem's
    // root, and that filesystem's device (src/mounted.rs).
    let want = format!(
        "persisted in /var/lib/hlctl/nic-settings.json (mounted from {}/nic-settings.json on ",
        below_its_mount(vol.path())
    );
    assert!(text.contains(&want), "want {want:?} in\n{text}");

    // Two runs on the same volume: the second sees the first's row.
    let bench = run_in(&lab.here, &["-v", &mount], &["bench", "cpu", "--time", "1"]);
    assert!(bench.status.success(), "{}", common::output_text(&bench));
    assert!(
        vol.path().join("history.db").exists(),
        "history on the volume"
    );
    let kinds = history_kinds(&lab.here, &mount);
    assert!(kinds.iter().any(|k| k == "cpu"), "{kinds:?}");
    disk_and_export_on_the_volume(&lab, vol.path(), &mount);
}

/// `bench disk` in the bind-mounted directory leaves its row in the same
/// history and no file behind; `export` prints the persisted offload as a
/// systemd .link line.
fn disk_and_export_on_the_volume(lab: &Lab, vol: &std::path::Path, mount: &str) {
    let before = names_in(vol);
    let disk = run_in(
        &lab.here,
        &["-v", mount],
        &[
            "bench",
            "disk",
            "--dir",
            "/var/lib/hlctl",
            "--rw",
            "write",
            "--bs",
            "1M",
            "--size",
            "16M",
            "--json",
        ],
    );
    let text = common::output_text(&disk);
    assert!(disk.status.success(), "{text}");
    let d: Value = serde_json::from_slice(&disk.stdout).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(d["dir"], "/var/lib/hlctl", "{d}");
    assert_eq!(d["total_bytes"].as_u64(), Some(16 << 20), "{d}");
    assert!(d["bytes_per_second"].as_f64().unwrap() > 0.0, "{d}");
    let kinds = history_kinds(&lab.here, mount);
    assert!(kinds.iter().any(|k| k == "disk"), "{kinds:?}");
    assert!(kinds.iter().any(|k| k == "cpu"), "{kinds:?}");
    let after = names_in(vol);
    assert_eq!(
        after
            .iter()
            .filter(|n| !before.contains(n))
            .collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "bench disk left files on the volume (before {before:?})"
    );

    let export = run_in(&lab.here, &["-v", mount], &["export", &lab.a]);
    let text = common::output_text(&export);
    assert!(export.status.success(), "{text}");
    assert!(
        String::from_utf8_lossy(&export.stdout).contains("\nGenericReceiveOffload=yes\n"),
        "{text}"
    );
}

/// The kinds of the rows `history --json` lists, run in a container with
/// the volume `mount`.
fn history_kinds(ns: &NetNs, mount: &str) -> Vec<String> {
    let h = run_in(ns, &["-v", mount], &["history", "--json"]);
    let v: Value = serde_json::from_slice(&h.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", common::output_text(&h)));
    v["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no results in {v}"))
        .iter()
        .filter_map(|r| r["kind"].as_str().map(String::from))
        .collect()
}

/// The names in `dir`, sorted.
fn names_in(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    v.sort();
    v
}

/// `dir` named from the root of the filesystem holding it (`stat -c %m`: its
/// mount point on this machine), as mountinfo's root field names a bind
/// mount of it: `dir` itself where that is `/`.
fn below_its_mount(dir: &std::path::Path) -> String {
    let m = common::sh(&["stat", "-c", "%m", dir.to_str().unwrap()]);
    let point = String::from_utf8_lossy(&m.stdout).trim().to_string();
    let rest = dir.strip_prefix(&point).unwrap();
    std::path::Path::new(&mount_root(&point))
        .join(rest)
        .display()
        .to_string()
}

/// The directory of its filesystem that the mount at `point` shows
/// (mountinfo's fourth field): `/` for a whole filesystem, the bound
/// directory for a bind mount (a chroot's own root is one).
fn mount_root(point: &str) -> String {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    info.lines()
        .map(|l| l.split(' ').collect::<Vec<_>>())
        .filter(|f| f.len() > 4 && f[4] == point)
        .map(|f| f[3].to_string())
        .next_back()
        .unwrap_or_else(|| panic!("{point} is not a mount point in mountinfo"))
}

/// The tune report's step `id`.
fn step<'a>(r: &'a Value, id: &str) -> &'a Value {
    common::lab::step(r, id)
}

#[test]
fn doctor_and_tune_in_a_container_find_and_fix_offloads_planted_off() {
    require_podman();
    let _serial = common::lab::serial();
    let lab = Lab::new();
    let vol = tempfile::tempdir().unwrap();
    let mount = format!("{}:/var/lib/hlctl", vol.path().display());
    let gso = || feature_on(&lab.here, &lab.a, "tx-generic-segmentation");
    let off = ["gso", "off", "tso", "off", "sg", "off"];
    lab.here
        .exec(&[&["ethtool", "-K", lab.a.as_str()][..], &off].concat());
    assert!(!gso());
    let port = common::net::free_port();
    let _srv = serve_in(&lab.peer, &lab.here, PEER_IP, port);
    let peer = format!("{PEER_IP}:{port}");

    let d = run_in(
        &lab.here,
        &["-v", &mount],
        &["doctor", &lab.a, "--peer", &peer, "--stress", "0", "--json"],
    );
    let r: Value = serde_json::from_slice(&d.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", common::output_text(&d)));
    let f = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "offload-off" && f["interface"] == lab.a.as_str())
        .unwrap_or_else(|| panic!("no offload-off finding: {r}"));
    let fix = f["fix"][0].as_str().unwrap();
    assert!(
        fix.starts_with(&format!("hlctl set {} feature", lab.a)),
        "{f}"
    );
    assert!(fix.contains("gso on") && fix.contains("tso on"), "{f}");
    assert!(!gso(), "doctor changed nothing");

    // Runs of 1 s on a shared 2-core machine are noisy: a run where the other
    // direction dips makes the tuner (rightly) revert; up to three tunes.
    let tune = [
        "tune", &lab.a, "--peer", &peer, "--yes", "--runs", "3", "--time", "1", "--no-mtu",
        "--json",
    ];
    let mut r = Value::Null;
    for attempt in 1..=3 {
        let t = run_in(&lab.here, &["--cap-add", "NET_ADMIN", "-v", &mount], &tune);
        r = serde_json::from_slice(&t.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", common::output_text(&t)));
        let s = step(&r, "offloads-on");
        if s["status"] == "kept" {
            break;
        }
        eprintln!("attempt {attempt}: offloads-on not kept: {}", s["reason"]);
        assert!(!gso(), "a step not kept is reverted: {s}");
    }
    assert_eq!(step(&r, "offloads-on")["status"], "kept", "{r}");
    assert!(gso(), "ethtool -k outside the container: gso on");
    assert!(feature_on(&lab.here, &lab.a, "tx-tcp-segmentation"));
    let state = std::fs::read_to_string(vol.path().join("nic-settings.json")).unwrap();
    let state: Value = serde_json::from_str(&state).unwrap();
    assert_eq!(
        state["interfaces"][0]["settings"]["features"]["tx-generic-segmentation"], true,
        "persisted on the volume: {state}"
    );
}

/// Debian's `dockerd` (docker.io) in `ns`, entered with `nsenter --net` (`ip
/// netns exec` remounts /sys, and dockerd then finds no cgroup mounts): its
/// `--network host` is that namespace, never the host's network. Its own
/// data root, exec root and socket under a temporary directory; no bridge,
/// no iptables rules, no forwarding or masquerading (nothing global is
/// changed); the vfs storage driver (no overlay mounts left behind).
/// Stopped by its pid (SIGTERM, then SIGKILL) when dropped, and the network
/// namespace mount it keeps under its exec root unmounted.
struct Dockerd {
    child: Option<common::ChildGuard>,
    dir: tempfile::TempDir,
}

impl Dockerd {
    fn start(ns: &NetNs) -> Dockerd {
        let dir = tempfile::tempdir().unwrap();
        let p = |s: &str| dir.path().join(s).display().to_string();
        let netns = format!("--net=/run/netns/{}", ns.name);
        let child = common::die_with_test(&mut Command::new("nsenter"))
            .args([&netns, "dockerd", "--data-root", &p("root")])
            .args(["--exec-root", &p("exec"), "--pidfile", &p("dockerd.pid")])
            .args(["-H", &format!("unix://{}", p("docker.sock"))])
            .args(["--containerd-namespace", &common::unique("hld")])
            .args(["--bridge=none", "--iptables=false", "--ip6tables=false"])
            .args([
                "--ip-forward=false",
                "--ip-masq=false",
                "--storage-driver=vfs",
            ])
            .stdout(std::fs::File::create(p("dockerd.log")).unwrap())
            .stderr(std::fs::File::create(p("dockerd.err")).unwrap())
            .spawn()
            .expect("start dockerd (docker.io: run scripts/setup.sh)");
        let log = p("dockerd.err");
        let d = Dockerd {
            child: Some(common::ChildGuard(child)),
            dir,
        };
        let up = (0..150).any(|_| {
            d.docker(&["info"]).status.success() || {
                std::thread::sleep(Duration::from_millis(200));
                false
            }
        });
        let log = std::fs::read_to_string(log).unwrap_or_default();
        assert!(up, "dockerd never answered:\n{log}");
        d
    }

    fn docker(&self, args: &[&str]) -> Output {
        let sock = self.dir.path().join("docker.sock");
        Command::new("docker")
            .arg("-H")
            .arg(format!("unix://{}", sock.display()))
            .args(args)
            .output()
            .expect("run docker")
    }
}

impl Drop for Dockerd {
    fn drop(&mut self) {
        if let Some(mut g) = self.child.take() {
            let pid = nix::unistd::Pid::from_raw(g.pid() as i32);
            if let Ok(None) = g.0.try_wait() {
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
                for _ in 0..100 {
                    if !matches!(g.0.try_wait(), Ok(None)) {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        } // the guard: SIGKILL if it still runs, and reap
        let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        for line in info.lines() {
            let point = line.split(' ').nth(4).unwrap_or("");
            if std::path::Path::new(point).starts_with(self.dir.path()) {
                let _ = Command::new("umount").args(["-l", point]).output();
            }
        }
    }
}

impl Dockerd {
    /// `docker load` of the image's Docker archive (and of its OCI archive,
    /// which docs/nas.md says Docker 20.10 cannot load: held here).
    fn load(&self, img: &static_bin::Image) {
        let version = self.docker(&["version", "-f", "{{.Server.Version}}"]);
        let version = String::from_utf8_lossy(&version.stdout).trim().to_string();
        let oci = self.docker(&["load", "-i", img.archive.to_str().unwrap()]);
        let text = common::output_text(&oci);
        eprintln!("docker {version}: load of the OCI archive: {text}");
        if version.starts_with("20.") {
            let refused = !oci.status.success() && text.contains("blobs/json");
            assert!(refused, "{text}");
        }
        let tar = format!("hlctl-{}.docker.tar.gz", env!("CARGO_PKG_VERSION"));
        let tar = img.archive.with_file_name(tar);
        let load = self.docker(&["load", "-i", tar.to_str().unwrap()]);
        let text = common::output_text(&load);
        assert!(load.status.success(), "{text}");
        let loaded = format!("Loaded image: {}", img.tag);
        assert!(text.contains(&loaded), "{text}");
    }

    /// `docker run --name NAME --network host EXTRA IMAGE ARGS`, unchecked;
    /// the container removed by name after it.
    fn run(&self, image: &str, extra: &[&str], args: &[&str]) -> Output {
        let name = common::unique("hld");
        let head = ["run", "--name", &name, "--network", "host"];
        let out = self.docker(&[&head[..], extra, &[image], args].concat());
        let _ = self.docker(&["rm", "-f", &name]);
        out
    }
}

/// The README's `docker run` lines, as a NAS owner runs them: Debian's
/// Docker 20.10 loads the Docker archive (not the OCI one), `show` with
/// `--network host` sees the namespace's veth, `set` is refused without
/// `--cap-add NET_ADMIN` and made with it (read back from outside), and
/// `serve` detached with `--restart unless-stopped` answers `hlctl bench
/// net` from the peer namespace on iperf3's port 5201.
#[test]
fn docker_loads_the_docker_archive_and_runs_it_on_the_host_network() {
    common::require_root("dockerd in a test namespace");
    let img = static_bin::image();
    let lab = Lab::new();
    let d = Dockerd::start(&lab.here);
    d.load(&img);
    let show = d.run(&img.tag, &["--rm"], &["show", "--json"]);
    let v: Value = serde_json::from_slice(&show.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", common::output_text(&show)));
    let names = common::interface_names(&v);
    let only_the_namespaces = names.contains(&lab.a.as_str()) && !names.contains(&"eth0");
    assert!(only_the_namespaces, "{names:?}");

    let set = ["set", lab.a.as_str(), "mtu", "1400"];
    let refused = d.run(&img.tag, &["--rm"], &set);
    let text = common::output_text(&refused);
    assert_eq!(refused.status.code(), Some(3), "{text}");
    let named = text.contains("needs CAP_NET_ADMIN: add --cap-add NET_ADMIN");
    assert!(named, "{text}");
    assert_eq!(lab.mtu(), 1500, "nothing changed");
    let done = d.run(&img.tag, &["--rm", "--cap-add", "NET_ADMIN"], &set);
    assert!(done.status.success(), "{}", common::output_text(&done));
    assert_eq!(lab.mtu(), 1400, "ip link in the namespace");

    let _serial = common::lab::serial();
    let serve = ["-d", "--restart", "unless-stopped"];
    let s = d.docker(
        &[
            &["run", "--name", "hlctl-serve", "--network", "host"][..],
            &serve,
            &[&img.tag, "serve"],
        ]
        .concat(),
    );
    assert!(s.status.success(), "{}", common::output_text(&s));
    let bench = [
        "--json",
        "bench",
        "net",
        "--peer",
        common::lab::HERE_IP,
        "-t",
        "1",
    ];
    let (status, out, err) = common::net::until_listening("hlctl serve under docker", || {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &lab.peer.name])
            .args(common::lab::hlctl_argv(lab.dir.path(), &bench));
        c
    });
    let ok = status.is_some_and(|s| s.success());
    assert!(ok, "bench net from the peer namespace: {out}\n{err}");
    let _ = d.docker(&["rm", "-f", "hlctl-serve"]);
}
