//! Throw-away qemu VM running Debian's stock kernel with real NIC drivers.
//!
//! ```ignore
//! let out = Vm::builder()
//!     .binary("/usr/sbin/ethtool")
//!     .nic_e1000e()
//!     .script("section ring ethtool -g eth0")
//!     .run();
//! out.assert_success();
//! assert!(out.section("ring").text.contains("4096"));
//! ```
//!
//! `run()` calls `tests/vm/fetch-kernel.sh` (cached kernel + modules) and
//! `tests/vm/build-initramfs.sh` (busybox, modules, the binaries with their
//! libraries, the script), then boots qemu with TCG (KVM hangs on these
//! machines) and returns the serial console. Guest scripts run under busybox
//! `sh`; every binary passed in lives in `/opt/bin` and is callable by its
//! name. The guest shell function `section NAME CMD...` prints CMD's stdout
//! between `===BEGIN NAME===` and `===END NAME rc=N===` (stderr follows as
//! section `NAME.stderr` when not empty); [`VmOutput::section`] reads it back.
//!
//! Env: `HLCTL_VM_CACHE` (kernel cache dir), `HLCTL_VM_VERBOSE=1` (echo the
//! serial console to stderr while the VM runs).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::NetNs;

mod output;
pub mod run;

#[allow(unused_imports)] // not every test crate names both
pub use output::{Section, VmOutput};

/// Where a NIC's other end goes.
#[derive(Clone, Debug)]
pub enum NicBackend {
    /// A qemu hub with no other port: carrier is up, frames go nowhere.
    Isolated,
    /// A tap device (already created, in the namespace qemu runs in).
    Tap(String),
}

#[derive(Clone, Debug)]
struct Nic {
    model: String,
    backend: NicBackend,
    /// Extra `,key=value` options of the `-netdev` and of the `-device`.
    netdev_opts: String,
    device_opts: String,
}

/// Builder for one VM boot. See the module docs.
#[derive(Clone, Debug)]
pub struct VmBuilder {
    binaries: Vec<(PathBuf, Option<String>)>,
    files: Vec<(PathBuf, String)>,
    modules: Vec<String>,
    nics: Vec<Nic>,
    script: String,
    timeout: Duration,
    memory_mb: u32,
    cpus: u32,
    netns: Option<String>,
}

/// Entry point: `Vm::builder()`.
pub struct Vm;

impl Vm {
    pub fn builder() -> VmBuilder {
        VmBuilder {
            binaries: Vec::new(),
            files: Vec::new(),
            modules: Vec::new(),
            nics: Vec::new(),
            script: String::new(),
            timeout: Duration::from_secs(180),
            memory_mb: 512,
            cpus: 1,
            netns: None,
        }
    }
}

impl VmBuilder {
    /// A host binary, installed as `/opt/bin/<file name>` with its libraries.
    pub fn binary(mut self, path: impl AsRef<Path>) -> Self {
        self.binaries.push((path.as_ref().to_path_buf(), None));
        self
    }

    /// A host binary installed as `/opt/bin/NAME`.
    pub fn binary_as(mut self, path: impl AsRef<Path>, name: &str) -> Self {
        self.binaries
            .push((path.as_ref().to_path_buf(), Some(name.to_string())));
        self
    }

    /// Real `ip` and `tc` (iproute2) plus tc's netem distribution tables.
    pub fn iproute2(mut self) -> Self {
        self = self.binary("/usr/sbin/ip").binary("/usr/sbin/tc");
        for dir in ["/usr/lib/x86_64-linux-gnu/tc", "/usr/lib/tc"] {
            if Path::new(dir).is_dir() {
                self = self.file(dir, dir);
            }
        }
        self
    }

    /// Any host file or directory, copied to `dest` in the guest.
    pub fn file(mut self, src: impl AsRef<Path>, dest: &str) -> Self {
        self.files
            .push((src.as_ref().to_path_buf(), dest.to_string()));
        self
    }

    /// A kernel module to insmod at boot (dependencies come along). Modules
    /// built into the kernel (e.g. `sch_fq_codel`) are accepted and skipped.
    pub fn module(mut self, name: &str) -> Self {
        let name = name.replace('-', "_");
        if !self.modules.contains(&name) {
            self.modules.push(name);
        }
        self
    }

    /// A NIC of qemu model `model` (e.g. "e1000e", "virtio-net-pci").
    pub fn nic(self, model: &str, backend: NicBackend) -> Self {
        self.nic_opts(model, backend, "", "")
    }

    /// A NIC with extra `-netdev` and `-device` options (comma-separated,
    /// e.g. "queues=2" and "mq=on,vectors=6": a multi-queue virtio NIC,
    /// whose tap needs [`add_tap_multi_queue`]).
    pub fn nic_opts(
        mut self,
        model: &str,
        backend: NicBackend,
        netdev: &str,
        device: &str,
    ) -> Self {
        self.nics.push(Nic {
            model: model.to_string(),
            backend,
            netdev_opts: netdev.to_string(),
            device_opts: device.to_string(),
        });
        self
    }

    /// An emulated Intel 82574L (e1000e driver) on an isolated hub: `eth0`
    /// for the first NIC.
    pub fn nic_e1000e(self) -> Self {
        self.module("e1000e").nic("e1000e", NicBackend::Isolated)
    }

    /// An e1000e NIC wired to tap `tap` inside namespace `ns` (create it with
    /// [`add_tap`]); qemu then runs inside `ns`.
    pub fn nic_e1000e_tap(mut self, ns: &NetNs, tap: &str) -> Self {
        self.netns = Some(ns.name.clone());
        self.module("e1000e")
            .nic("e1000e", NicBackend::Tap(tap.to_string()))
    }

    /// Run qemu inside this network namespace (for tap backends).
    pub fn netns(mut self, ns: &NetNs) -> Self {
        self.netns = Some(ns.name.clone());
        self
    }

    /// The guest script (busybox sh). Appended to any earlier script text.
    pub fn script(mut self, text: &str) -> Self {
        self.script.push_str(text);
        self.script.push('\n');
        self
    }

    /// Hard limit for the whole boot; qemu is killed when it overruns.
    pub fn timeout(mut self, secs: u64) -> Self {
        self.timeout = Duration::from_secs(secs);
        self
    }

    pub fn memory_mb(mut self, mb: u32) -> Self {
        self.memory_mb = mb;
        self
    }

    pub fn cpus(mut self, n: u32) -> Self {
        self.cpus = n;
        self
    }

    /// Build the initramfs, boot, wait for power-off (or the timeout).
    pub fn run(self) -> VmOutput {
        let dir = tempfile::Builder::new()
            .prefix("hlctl-vm.")
            .tempdir()
            .expect("create VM temp dir");
        let (kernel, modules) = fetch_kernel(&self.modules);
        let initrd = dir.path().join("initramfs.cpio.gz");
        self.build_initramfs(dir.path(), &modules, &initrd);
        let args = self.qemu_args(&kernel, &initrd);
        run::run_qemu(self.netns.as_deref(), &args, self.timeout)
    }

    fn build_initramfs(&self, dir: &Path, modules: &Path, out: &Path) {
        let script = dir.join("guest.sh");
        std::fs::write(&script, &self.script).expect("write guest script");
        let mut cmd = Command::new(vm_dir().join("build-initramfs.sh"));
        cmd.arg("-o")
            .arg(out)
            .arg("-k")
            .arg(modules)
            .arg("-s")
            .arg(&script);
        for m in &self.modules {
            cmd.arg("-m").arg(m);
        }
        for (path, name) in &self.binaries {
            let mut spec = path.as_os_str().to_owned();
            if let Some(name) = name {
                spec.push(format!(":{name}"));
            }
            cmd.arg("-b").arg(spec);
        }
        for (src, dest) in &self.files {
            let mut spec = src.as_os_str().to_owned();
            spec.push(format!(":{dest}"));
            cmd.arg("-f").arg(spec);
        }
        checked(cmd, "build-initramfs.sh");
    }

    fn qemu_args(&self, kernel: &Path, initrd: &Path) -> Vec<String> {
        // Several vCPUs: one host thread each (multi-threaded TCG).
        let accel = if self.cpus > 1 {
            "tcg,thread=multi"
        } else {
            "tcg"
        };
        let mut a: Vec<String> = ["-accel", accel, "-nographic", "-no-reboot", "-vga", "none"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        a.extend(["-m".into(), self.memory_mb.to_string()]);
        a.extend(["-smp".into(), self.cpus.to_string()]);
        a.extend(["-kernel".into(), kernel.display().to_string()]);
        a.extend(["-initrd".into(), initrd.display().to_string()]);
        a.extend(["-append".into(), "console=ttyS0 quiet panic=-1".into()]);
        if self.nics.is_empty() {
            a.extend(["-nic".into(), "none".into()]);
        }
        for (i, nic) in self.nics.iter().enumerate() {
            let netdev = match &nic.backend {
                // Each isolated NIC gets a hub of its own.
                NicBackend::Isolated => format!("hubport,id=n{i},hubid={i}"),
                NicBackend::Tap(tap) => {
                    format!("tap,id=n{i},ifname={tap},script=no,downscript=no")
                }
            };
            a.extend(["-netdev".into(), with_opts(netdev, &nic.netdev_opts)]);
            // romfile= : no iPXE option ROM, boots faster.
            let device = format!("{},netdev=n{i},romfile=", nic.model);
            a.extend(["-device".into(), with_opts(device, &nic.device_opts)]);
        }
        a
    }
}

/// Create tap `name` inside `ns` with address `cidr` (e.g. "10.9.0.1/24"),
/// up. It shows carrier once qemu attaches; the namespace's guard deletes it.
pub fn add_tap(ns: &NetNs, name: &str, cidr: &str) {
    tap_up(ns, &["tuntap", "add", name, "mode", "tap"], name, cidr);
}

/// [`add_tap`] with several queues (`ip tuntap ... multi_queue`), for a
/// `-netdev tap,queues=N` of a multi-queue virtio NIC.
pub fn add_tap_multi_queue(ns: &NetNs, name: &str, cidr: &str) {
    let add = ["tuntap", "add", name, "mode", "tap", "multi_queue"];
    tap_up(ns, &add, name, cidr);
}

fn tap_up(ns: &NetNs, add: &[&str], name: &str, cidr: &str) {
    ns.ip(add);
    ns.ip(&["addr", "add", cidr, "dev", name]);
    ns.ip(&["link", "set", name, "up"]);
}

/// `base` followed by `,opts` when there are any.
fn with_opts(base: String, opts: &str) -> String {
    if opts.is_empty() {
        base
    } else {
        format!("{base},{opts}")
    }
}

/// The scripts' directory, `tests/vm/`.
pub fn vm_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vm")
}

/// The modules scripts/setup.sh fetches the kernel with (fetch-kernel.sh's
/// default set): `tests/vm/modules.txt`, optional ones without their `?`.
pub fn fetched_modules() -> Vec<String> {
    let listed = std::fs::read_to_string(vm_dir().join("modules.txt")).unwrap();
    listed
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.trim_end_matches('?').to_string())
        .collect()
}

/// Run fetch-kernel.sh for `modules`; returns (vmlinuz, modules dir).
/// Every module must be one that setup.sh fetched (so no test downloads the
/// kernel package a second time): a new one goes into tests/vm/modules.txt.
pub fn fetch_kernel(modules: &[String]) -> (PathBuf, PathBuf) {
    let fetched = fetched_modules();
    for m in modules {
        assert!(
            fetched.contains(&m.replace('-', "_")),
            "module {m} is not in tests/vm/modules.txt: add it there, so that \
             scripts/setup.sh fetches it with the kernel"
        );
    }
    let mut cmd = Command::new(vm_dir().join("fetch-kernel.sh"));
    cmd.args(modules);
    let out = checked(cmd, "fetch-kernel.sh");
    let field = |key| PathBuf::from(printed(&out, key, "fetch-kernel.sh"));
    (field("KERNEL="), field("MODULES="))
}

/// The value of the `KEY=value` line a script printed (`key` with its `=`).
fn printed<'a>(out: &'a str, key: &str, script: &str) -> &'a str {
    out.lines()
        .find_map(|l| l.strip_prefix(key))
        .unwrap_or_else(|| panic!("{script} printed no {key}: {out}"))
}

/// `failnic.ko` (tests/vm/failnic: a NIC that refuses setting requests on
/// demand) built for the kernel the VMs boot, with that kernel's headers
/// (scripts/setup.sh installs them).
pub fn failnic() -> PathBuf {
    let kernel = checked(
        Command::new(vm_dir().join("fetch-kernel.sh")),
        "fetch-kernel.sh",
    );
    let mut cmd = Command::new(vm_dir().join("failnic/build.sh"));
    cmd.arg(printed(&kernel, "KVER=", "fetch-kernel.sh"));
    let built = checked(cmd, "failnic/build.sh");
    PathBuf::from(printed(&built, "FAILNIC=", "failnic/build.sh"))
}

fn checked(mut cmd: Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
