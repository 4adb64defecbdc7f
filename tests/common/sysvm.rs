//! A booted Debian 12 with systemd as PID 1, under qemu (TCG).
//!
//! [`system_image`] makes (once; cached under /var/tmp/hlctl-sysvm by a hash
//! of its inputs) an ext4 disk image from a debootstrap root
//! ([`deb::SYSTEM_ROOT`]: systemd, udev, dbus, polkitd, iproute2, ethtool,
//! iperf3) with `mkfs.ext4 -d` (no loop mounts), plus a busybox initramfs
//! that loads the modules Debian's stock kernel needs for it (virtio disk,
//! ext4, virtio console, e1000e) and `switch_root`s to systemd.
//!
//! [`SystemVm::boot`] starts qemu on that image (`snapshot=on`: the cached
//! image is never written; a reboot inside the same qemu keeps the disk),
//! with the .debs of a test on a second, read-only disk (`/dev/vdb`), an
//! e1000e `eth0` on a tap in a test-created namespace (the guest is
//! 10.77.0.2/24 by systemd-networkd, the tap 10.77.0.1/24), a qemu monitor
//! for hot-plug, and the kernel/systemd console in a log file. The test
//! drives the guest through a root shell that a oneshot-free unit of the
//! image (`harness-agent.service`) runs on the virtio console `hvc0`:
//! [`SystemVm::sh`] sends a command and returns its exit code and output.
//! No one logs in: the agent is a service, not a session.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::NetNs;
use super::deb::{DebianRoot, RootRecipe, cached_tarball, ok, run, took};
use super::vm::run::{QemuGuard, drain, drain_into, spawn_qemu};
use super::vm::{fetch_kernel, vm_dir};

/// The one root of every booted-system test (vm_systemd, vm_netmgr,
/// vm_cockpit): systemd as init (systemd-sysv), udev, dbus, polkitd (with
/// logind: libpam-systemd), the tools the tests read the NIC with, adduser
/// for the `hlctl` group; the network managers of issue 24 (ifupdown2 as on
/// Proxmox VE 8, NetworkManager, netplan); Debian's Cockpit 287 (issue 27:
/// the page of `packaging/cockpit/hlctl`) and sudo for its administrative
/// access (dbus-user-session: dconf-service, which cockpit-ws pulls in,
/// needs a session bus that debootstrap cannot pick from an alternative);
/// mkfs.ext4 and dmsetup for vm_systemd's power cut.
/// One package set, one cached image: a bare machine debootstraps once.
/// Services that would act on their own are off at boot and started by the
/// test that needs them ([`GUEST_CUSTOMIZE`]).
pub const GUEST_ROOT: RootRecipe = RootRecipe {
    include: "dbus,polkitd,systemd,systemd-sysv,udev,libpam-systemd,iproute2,ethtool,iperf3,adduser,kmod,procps,\
              ifupdown2,network-manager,netplan.io,\
              sudo,dbus-user-session,cockpit-ws,cockpit-bridge,cockpit-system,\
              e2fsprogs,dmsetup",
    cache_dir: "/var/tmp/hlctl-sysvm-guest",
    version: 1,
    image_customize: GUEST_CUSTOMIZE,
};

/// [`GUEST_ROOT`]'s own customisation:
/// - NetworkManager stays off at boot (it would take eth0, which
///   systemd-networkd configures; disabled, which also drops its D-Bus
///   activation alias): vm_netmgr starts it. netplan has no YAML, so its
///   generator renders nothing at boot; ifupdown2's `networking.service`
///   brings up only `lo` until vm_netmgr writes a stanza.
/// - Cockpit's socket stays off at boot: vm_cockpit starts it. Cockpit as
///   Debian sets it up (cockpit-tls on 9090 with the self-signed certificate
///   it makes at its first start); `admin` may sudo, `viewer` may not (both
///   with the password `foobar`). (Not `cockpit-ws --no-tls` in
///   cockpit.service: that unit's NoNewPrivileges keeps the setuid
///   cockpit-session from authenticating.)
const GUEST_CUSTOMIZE: &str = "set -e
systemctl disable NetworkManager.service NetworkManager-wait-online.service
systemctl disable cockpit.socket
useradd -m -s /bin/bash admin
useradd -m -s /bin/bash viewer
echo admin:foobar | chpasswd
echo viewer:foobar | chpasswd
adduser admin sudo
";

/// Kernel modules the initramfs loads before `switch_root`.
/// (ext4 asks the crypto API for crc32c at mount time: crc32c_generic.)
/// (bridge, bonding, dummy, 8021q: the stacks of vm_netmgr and vm_cockpit;
/// loop, dm_mod, dm_flakey: vm_systemd's power cut; the root holds no
/// modules of the test kernel.)
const MODULES: &[&str] = &[
    "virtio_pci",
    "virtio_blk",
    "crc32c_generic",
    "ext4",
    "virtio_console",
    "e1000e",
    "bridge",
    "bonding",
    "dummy",
    "8021q",
    "loop",
    "dm_mod",
    "dm_flakey",
];
/// Bump when the image recipe (below) changes in a way the hash misses.
const IMAGE_VERSION: u32 = 1;
const IMAGE_SIZE: &str = "1536M";
/// The guest's and the tap's addresses.
pub const GUEST_ADDR: &str = "10.77.0.2";
pub const PEER_ADDR: &str = "10.77.0.1";
pub const PEER_CIDR: &str = "10.77.0.1/24";
/// eth0's MAC (fixed: settings are persisted per MAC).
pub const ETH0_MAC: &str = "52:54:00:77:00:02";

/// A root shell on /dev/hvc0 for the test harness. The tty is raw without
/// echo; commands arrive through a pipe, so bash is not interactive.
const AGENT_SCRIPT: &str = r#"#!/bin/sh
# harness-agent: a root shell on the virtio console for hlctl's tests.
exec 3<>/dev/hvc0
stty -F /dev/hvc0 raw -echo
echo "@@AGENT-UP $(cat /proc/sys/kernel/random/boot_id)" >&3
cat <&3 | bash --noprofile --norc >&3 2>&3
"#;

const AGENT_UNIT: &str = "[Unit]
Description=test harness agent (root shell on hvc0)
DefaultDependencies=no
After=systemd-journald.socket

[Service]
ExecStart=/usr/local/sbin/harness-agent
Environment=HOME=/root TERM=dumb SYSTEMD_PAGER= SYSTEMD_COLORS=0 LANG=C.UTF-8

[Install]
WantedBy=sysinit.target
";

const NETWORK: &str = "[Match]
Name=eth0

[Network]
Address=10.77.0.2/24
";

/// Make the root a bootable system; runs chrooted in the unpacked root.
const CUSTOMIZE: &str = r#"set -e
echo hlvm >/etc/hostname
printf '127.0.0.1 localhost\n127.0.1.1 hlvm\n' >/etc/hosts
printf '/dev/vda / ext4 rw,errors=remount-ro 0 0\n' >/etc/fstab
echo 6c6374c0ffee4d0a9b1e0000000077aa >/etc/machine-id
mkdir -p /var/log/journal
chmod 755 /usr/local/sbin/harness-agent
systemctl enable harness-agent.service systemd-networkd.service systemd-networkd-wait-online.service
# Something on a real server wants the network online (NFS mounts, ...).
ln -sf /lib/systemd/system/network-online.target /etc/systemd/system/multi-user.target.wants/
# No gettys: the harness uses its agent, nobody logs in.
ln -sf /dev/null /etc/systemd/system/serial-getty@hvc0.service
ln -sf /dev/null /etc/systemd/system/serial-getty@ttyS0.service
ln -sf /dev/null /etc/systemd/system/getty@tty1.service
"#;

/// The cached disk image, and the kernel and initramfs that boot it.
pub struct SystemImage {
    pub disk: PathBuf,
    pub kernel: PathBuf,
    pub initrd: PathBuf,
}

/// The guest image ([`GUEST_ROOT`]), built when its inputs changed (under a
/// lock): every booted-system test boots this one image.
pub fn guest_image() -> SystemImage {
    let recipe = &GUEST_ROOT;
    let mods: Vec<String> = MODULES.iter().map(|m| m.to_string()).collect();
    let (kernel, moddir) = fetch_kernel(&mods);
    let tarball = cached_tarball(recipe);
    let initramfs_script = std::fs::read(vm_dir().join("build-initramfs.sh")).unwrap();
    let key = hash(&[
        tarball.to_string_lossy().as_bytes(),
        kernel.to_string_lossy().as_bytes(),
        AGENT_SCRIPT.as_bytes(),
        AGENT_UNIT.as_bytes(),
        NETWORK.as_bytes(),
        CUSTOMIZE.as_bytes(),
        recipe.image_customize.as_bytes(),
        MODULES.join(" ").as_bytes(),
        &initramfs_script,
        IMAGE_SIZE.as_bytes(),
        &IMAGE_VERSION.to_le_bytes(),
    ]);
    let dir = Path::new(recipe.cache_dir);
    let img = SystemImage {
        disk: dir.join(format!("system-{key}.ext4")),
        kernel,
        initrd: dir.join(format!("system-{key}.initrd.gz")),
    };
    let _lock = super::cache_lock(dir.join(".image.lock"));
    if img.disk.exists() && img.initrd.exists() {
        return img;
    }
    // Images of older recipes go (this cache directory is ours alone).
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("system-") {
            let _ = std::fs::remove_file(&p);
        }
    }
    let t = Instant::now();
    build_initrd(&moddir, MODULES, &img.initrd);
    build_disk(recipe, &img.disk);
    took("building the systemd VM image (once; cached)", t);
    img
}

fn build_initrd(moddir: &Path, modules: &[&str], out: &Path) {
    let part = out.with_extension("part");
    let mut args = vec![
        "-o".to_string(),
        part.display().to_string(),
        "-k".into(),
        moddir.display().to_string(),
        "-r".into(),
        "/dev/vda".into(),
    ];
    for m in modules {
        args.extend(["-m".to_string(), m.to_string()]);
    }
    let script = vm_dir().join("build-initramfs.sh");
    let o = Command::new(&script).args(&args).output().unwrap();
    ok("build-initramfs.sh (switch_root)", &o);
    std::fs::rename(&part, out).unwrap();
}

fn build_disk(recipe: &RootRecipe, out: &Path) {
    let root = DebianRoot::fresh_from(recipe);
    let put = |p: &str, text: &str| {
        let f = root.join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, text).unwrap();
    };
    put("/usr/local/sbin/harness-agent", AGENT_SCRIPT);
    put("/etc/systemd/system/harness-agent.service", AGENT_UNIT);
    put("/etc/systemd/network/10-eth0.network", NETWORK);
    ok("customising the system root", &root.sh(CUSTOMIZE));
    if !recipe.image_customize.is_empty() {
        ok(
            "the recipe's own customisation of the system root",
            &root.sh(recipe.image_customize),
        );
    }
    let part = out.with_extension("part");
    let _ = std::fs::remove_file(&part);
    let o = run(
        "mkfs.ext4",
        &[
            "-q",
            "-F",
            "-L",
            "hlroot",
            "-d",
            root.path().to_str().unwrap(),
            part.to_str().unwrap(),
            IMAGE_SIZE,
        ],
    );
    ok("mkfs.ext4 -d (the system image)", &o);
    std::fs::rename(&part, out).unwrap();
}

/// A small read-only ext4 image holding `files` at its top (the .debs).
pub fn files_disk(dir: &Path, files: &[&Path]) -> PathBuf {
    let content = dir.join("debs");
    std::fs::create_dir_all(&content).unwrap();
    for f in files {
        std::fs::copy(f, content.join(f.file_name().unwrap())).unwrap();
    }
    let img = dir.join("debs.ext4");
    let o = run(
        "mkfs.ext4",
        &[
            "-q",
            "-F",
            "-d",
            content.to_str().unwrap(),
            img.to_str().unwrap(),
            "128M",
        ],
    );
    ok("mkfs.ext4 -d (the .deb disk)", &o);
    img
}

/// The first 16 hex digits of a SHA-256 over `parts` (each length-prefixed): a
/// cache key.
pub fn hash(parts: &[&[u8]]) -> String {
    let mut child = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run sha256sum");
    {
        let mut w = child.stdin.take().unwrap();
        for p in parts {
            w.write_all(&(p.len() as u64).to_le_bytes()).unwrap();
            w.write_all(p).unwrap();
        }
    }
    let o = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&o.stdout)[..16].to_string()
}

/// A running system VM. Dropping it kills qemu (by pid).
pub struct SystemVm {
    guard: QemuGuard,
    agent: UnixStream,
    monitor: PathBuf,
    console: PathBuf,
    buf: Vec<u8>,
    pos: usize,
    seq: u32,
    echo: bool,
    _dir: tempfile::TempDir,
}

impl SystemVm {
    /// Boot `img` with `extra_disk` as /dev/vdb, eth0 on `tap` in `ns`.
    pub fn boot(img: &SystemImage, extra_disk: &Path, ns: &NetNs, tap: &str) -> SystemVm {
        let dir = tempfile::Builder::new()
            .prefix("hlctl-sysvm.")
            .tempdir_in("/var/tmp")
            .unwrap();
        let agent_sock = dir.path().join("agent.sock");
        let monitor = dir.path().join("monitor.sock");
        let console = dir.path().join("console.log");
        let args: Vec<String> = [
            "-accel",
            "tcg",
            "-m",
            "1024",
            "-smp",
            "2",
            "-nographic",
            "-vga",
            "none",
            "-kernel",
            img.kernel.to_str().unwrap(),
            "-initrd",
            img.initrd.to_str().unwrap(),
            "-append",
            "console=ttyS0 net.ifnames=0 panic=-1 systemd.show_status=0 loglevel=4",
            "-drive",
            &format!(
                "file={},format=raw,if=virtio,snapshot=on",
                img.disk.display()
            ),
            "-drive",
            &format!(
                "file={},format=raw,if=virtio,readonly=on",
                extra_disk.display()
            ),
            "-device",
            "virtio-serial-pci",
            "-chardev",
            &format!(
                "socket,id=agent,path={},server=on,wait=off",
                agent_sock.display()
            ),
            "-device",
            "virtconsole,chardev=agent",
            "-monitor",
            &format!("unix:{},server=on,wait=off", monitor.display()),
            "-netdev",
            &format!("tap,id=n0,ifname={tap},script=no,downscript=no"),
            "-device",
            &format!("e1000e,netdev=n0,mac={ETH0_MAC},romfile="),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let echo = std::env::var_os("HLCTL_VM_VERBOSE").is_some_and(|v| v != "0");
        let mut child = spawn_qemu(Some(&ns.name), &args, Stdio::null());
        let out = child.stdout.take().unwrap();
        let err = child.stderr.take().unwrap();
        let mut guard = QemuGuard(child);
        // The console goes to a file as it comes (read on failure).
        drain_into(out, echo, std::fs::File::create(&console).unwrap());
        drain(err, true);
        let t = Instant::now();
        let agent = loop {
            if let Ok(s) = UnixStream::connect(&agent_sock) {
                break s;
            }
            if let Ok(Some(st)) = guard.0.try_wait() {
                panic!("qemu exited at start: {st}");
            }
            assert!(t.elapsed() < Duration::from_secs(30), "no agent socket");
            std::thread::sleep(Duration::from_millis(100));
        };
        agent
            .set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        SystemVm {
            guard,
            agent,
            monitor,
            console,
            buf: Vec::new(),
            pos: 0,
            seq: 0,
            echo,
            _dir: dir,
        }
    }

    /// Wait until the agent of a (new) boot is up; returns the boot id.
    pub fn wait_agent(&mut self, timeout: Duration) -> String {
        let line = self.read_until("@@AGENT-UP ", timeout);
        line.trim().to_string()
    }

    /// Read until `marker` appears after the current position; return the
    /// rest of its line, and move past it. Text before it is skipped.
    fn read_until(&mut self, marker: &str, timeout: Duration) -> String {
        let t = Instant::now();
        loop {
            let hay = String::from_utf8_lossy(&self.buf[self.pos..]).into_owned();
            if let Some(i) = hay.find(marker)
                && let Some(nl) = hay[i..].find('\n')
            {
                let rest = hay[i + marker.len()..i + nl].to_string();
                self.pos += hay[..i + nl + 1].len();
                return rest;
            }
            if t.elapsed() > timeout {
                panic!(
                    "guest: no {marker:?} within {timeout:?}; agent said:\n{}\nconsole:\n{}",
                    String::from_utf8_lossy(&self.buf[self.pos..]),
                    self.console_tail()
                );
            }
            if let Ok(Some(st)) = self.guard.0.try_wait() {
                std::thread::sleep(Duration::from_millis(300));
                panic!(
                    "qemu exited ({st}) waiting for {marker:?}; console:\n{}",
                    self.console_tail()
                );
            }
            let mut chunk = [0u8; 8192];
            match self.agent.read(&mut chunk) {
                Ok(0) => std::thread::sleep(Duration::from_millis(200)),
                Ok(n) => {
                    if self.echo {
                        let _ = std::io::stderr().write_all(&chunk[..n]);
                    }
                    self.buf.extend_from_slice(&chunk[..n]);
                }
                Err(_) => {}
            }
        }
    }

    /// The last part of the serial console so far (kernel, systemd).
    pub fn console_tail(&self) -> String {
        let t = std::fs::read(&self.console).unwrap_or_default();
        let start = t.len().saturating_sub(4000);
        String::from_utf8_lossy(&t[start..]).into_owned()
    }

    /// Run `cmd` (bash, stdin /dev/null, stderr into stdout) as root in the
    /// guest; its exit code and output.
    pub fn sh_timeout(&mut self, cmd: &str, timeout: Duration) -> (i32, String) {
        self.seq += 1;
        let end = format!("@@END{} rc=", self.seq);
        let text = format!(
            "(\n{cmd}\n) </dev/null 2>&1; echo \"@@END{} rc=$?\"\n",
            self.seq
        );
        self.agent.write_all(text.as_bytes()).unwrap();
        let start = self.pos;
        let rc = self.read_until(&end, timeout);
        let whole = String::from_utf8_lossy(&self.buf[start..self.pos]).into_owned();
        let out = whole[..whole.rfind(&end).unwrap()].to_string();
        (rc.trim().parse().unwrap_or(-1), out)
    }

    pub fn sh(&mut self, cmd: &str) -> (i32, String) {
        self.sh_timeout(cmd, Duration::from_secs(300))
    }

    /// Run `cmd`; panic unless it exits 0; its output.
    pub fn ok(&mut self, cmd: &str) -> String {
        let (rc, out) = self.sh(cmd);
        assert_eq!(rc, 0, "guest: `{cmd}` failed (rc {rc}):\n{out}");
        out
    }

    /// Send `cmd` without waiting for it to finish (e.g. `systemctl reboot`).
    pub fn send(&mut self, cmd: &str) {
        self.agent
            .write_all(format!("( {cmd} ) </dev/null >/dev/null 2>&1 &\n").as_bytes())
            .unwrap();
    }

    /// A qemu monitor (HMP) command; its reply.
    pub fn monitor(&self, cmd: &str) -> String {
        let mut s = UnixStream::connect(&self.monitor).expect("connect the qemu monitor");
        s.set_read_timeout(Some(Duration::from_millis(700)))
            .unwrap();
        s.write_all(format!("{cmd}\n").as_bytes()).unwrap();
        let mut out = Vec::new();
        let mut chunk = [0u8; 4096];
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(5) {
            match s.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => out.extend_from_slice(&chunk[..n]),
                Err(_) if !out.is_empty() => break,
                Err(_) => {}
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    /// Wait until systemd finished starting; the state and, if not
    /// `running`, the failed units.
    pub fn wait_system_running(&mut self) -> (String, String) {
        let (_, state) = self.sh_timeout(
            "timeout 400 systemctl is-system-running --wait",
            Duration::from_secs(420),
        );
        let state = state.trim().to_string();
        let failed = if state == "running" {
            String::new()
        } else {
            self.sh("systemctl --failed --no-legend --plain").1
        };
        (state, failed)
    }

    /// qemu's pid.
    pub fn pid(&self) -> u32 {
        self.guard.0.id()
    }
}

/// A namespace with the guest's tap (`tap0`, the peer address of
/// [`PEER_CIDR`]) and `iperf3 -s` on that address: the peer of the guest's
/// benchmarks and tunes, killed by pid when dropped (before the namespace).
pub fn tap_with_iperf3_peer() -> (NetNs, super::ChildGuard) {
    let ns = NetNs::new();
    super::vm::add_tap(&ns, "tap0", PEER_CIDR);
    let peer = super::ChildGuard(
        Command::new("ip")
            .args(["netns", "exec", &ns.name, "iperf3", "-s", "-B", "10.77.0.1"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start iperf3 -s"),
    );
    (ns, peer)
}
