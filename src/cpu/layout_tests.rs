use std::process::Command;

use super::*;

fn ip(args: &[&str]) -> std::process::Output {
    let o = Command::new("ip").args(args).output().expect("run ip");
    assert!(
        o.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Deletes the test's namespace, even when an assertion failed.
struct Ns(String);

impl Drop for Ns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

const CHILD: &str = "HLCTL_LAYOUT_CHILD";

/// A veth pair with 2 receive and 2 transmit queues in a namespace this test
/// creates; RPS set on rx-1 through sysfs there; the layout read in that
/// namespace (this test binary again, under `ip netns exec`, which mounts the
/// namespace's sysfs) and cross-checked with the files.
#[test]
fn veth_in_a_namespace_reads_back_the_rps_it_was_given() {
    if let Ok(name) = std::env::var(CHILD) {
        println!("LAYOUT{}", serde_json::to_string(&read(&name)).unwrap());
        return;
    }
    // A test that cannot run fails (tests/no_silent_skip.rs' rule for the
    // suite, which runs as root).
    assert!(
        nix::unistd::geteuid().is_root(),
        "did not run: the layout test needs root for a network namespace"
    );
    let ns = Ns(format!("hlly{}", std::process::id()));
    ip(&["netns", "add", &ns.0]);
    ip(&[
        "-n",
        &ns.0,
        "link",
        "add",
        "vly0",
        "numrxqueues",
        "2",
        "numtxqueues",
        "2",
        "type",
        "veth",
        "peer",
        "name",
        "vly1",
    ]);
    let q = "/sys/class/net/vly0/queues";
    let set = format!("echo 1 > {q}/rx-1/rps_cpus && echo 64 > {q}/rx-1/rps_flow_cnt");
    ip(&["netns", "exec", &ns.0, "sh", "-c", &set]);
    let cat = |f: &str| {
        let o = ip(&["netns", "exec", &ns.0, "cat", &format!("{q}/{f}")]);
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    let exe = std::env::current_exe().unwrap();
    let test = "cpu::layout::tests::veth_in_a_namespace_reads_back_the_rps_it_was_given";
    let o = Command::new("ip")
        .args(["netns", "exec", &ns.0, "env", &format!("{CHILD}=vly0")])
        .arg(exe)
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let json = out
        .lines()
        .find_map(|l| Some(&l[l.find("LAYOUT")? + 6..]))
        .unwrap_or_else(|| panic!("{out}"));
    let l: QueueLayout = serde_json::from_str(json).unwrap();
    assert_eq!(l.rx.iter().map(|r| r.index).collect::<Vec<_>>(), vec![0, 1]);
    assert_eq!(l.tx.len(), 2);
    assert_eq!(
        l.rx[1].rps_cpus.as_deref(),
        Some(cat("rx-1/rps_cpus").as_str())
    );
    assert_eq!(
        l.rx[0].rps_cpus.as_deref(),
        Some(cat("rx-0/rps_cpus").as_str())
    );
    assert_ne!(l.rx[1].rps_cpus, l.rx[0].rps_cpus, "rx-1 was given CPU 0");
    assert_eq!(l.rx[1].rps_flow_cnt, Some(64));
    assert_eq!(
        l.tx[0].xps_cpus.as_deref(),
        Some(cat("tx-0/xps_cpus").as_str())
    );
    // veth has no IRQs and no device: no vectors, no NUMA node.
    assert!(l.vectors.is_empty() && l.numa_node.is_none());
}

#[test]
fn this_hosts_devices_and_cores() {
    for e in std::fs::read_dir("/sys/class/net").unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        let l = read(&name);
        let rx = std::fs::read_dir(format!("/sys/class/net/{name}/queues"))
            .map(|d| {
                d.filter(|e| {
                    e.as_ref()
                        .unwrap()
                        .file_name()
                        .to_string_lossy()
                        .starts_with("rx-")
                })
                .count()
            })
            .unwrap_or(0);
        assert_eq!(l.rx.len(), rx, "{name}");
        for v in &l.vectors {
            let want =
                std::fs::read_to_string(format!("/proc/irq/{}/smp_affinity_list", v.irq)).ok();
            assert_eq!(
                v.smp_affinity_list,
                want.map(|w| w.trim().to_string()),
                "{name}"
            );
        }
    }
    let cores = read("lo").physical_cores.expect("topology in sysfs");
    let online = std::thread::available_parallelism().unwrap().get() as u32;
    assert!(cores >= 1 && cores <= online.max(cores), "{cores}");
}

/// A sysfs tree of `cpus` CPUs under a temporary directory: for each, its
/// files (relative to `cpuN/`) and their contents.
fn cpu_tree(cpus: &[&[(&str, &str)]]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for (n, files) in cpus.iter().enumerate() {
        let cpu = d.path().join(format!("devices/system/cpu/cpu{n}"));
        std::fs::create_dir_all(cpu.join("topology")).unwrap();
        for (f, v) in *files {
            std::fs::write(cpu.join(f), format!("{v}\n")).unwrap();
        }
    }
    std::fs::create_dir_all(d.path().join("devices/system/cpu/cpufreq")).unwrap();
    d
}

/// A 2-core 4-thread Celeron/Core i3 (`core_cpus_list` 0,2 and 1,3): 2
/// physical cores; the same without `core_cpus_list` (kernels before 5.4)
/// by `thread_siblings_list`; without either by package and core id; an
/// offline CPU not counted.
#[test]
fn hyperthreads_of_one_core_count_once() {
    let smt = cpu_tree(&[
        &[("topology/core_cpus_list", "0,2")],
        &[("topology/core_cpus_list", "1,3")],
        &[("topology/core_cpus_list", "0,2"), ("online", "1")],
        &[("topology/core_cpus_list", "1,3"), ("online", "1")],
    ]);
    assert_eq!(physical_cores(smt.path()), Some(2));
    let old = cpu_tree(&[
        &[("topology/thread_siblings_list", "0-1")],
        &[("topology/thread_siblings_list", "0-1")],
        &[("topology/thread_siblings_list", "2-3")],
        &[("topology/thread_siblings_list", "2-3")],
    ]);
    assert_eq!(physical_cores(old.path()), Some(2));
    let ids = cpu_tree(&[
        &[
            ("topology/physical_package_id", "0"),
            ("topology/core_id", "0"),
        ],
        &[
            ("topology/physical_package_id", "0"),
            ("topology/core_id", "1"),
        ],
        &[
            ("topology/physical_package_id", "1"),
            ("topology/core_id", "0"),
        ],
    ]);
    assert_eq!(physical_cores(ids.path()), Some(3));
    let offline = cpu_tree(&[
        &[("topology/core_cpus_list", "0")],
        &[("topology/core_cpus_list", "1")],
        &[("topology/core_cpus_list", "2"), ("online", "0")],
    ]);
    assert_eq!(physical_cores(offline.path()), Some(2));
    assert_eq!(physical_cores(tempfile::tempdir().unwrap().path()), None);
}
