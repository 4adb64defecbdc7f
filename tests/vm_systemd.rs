//! hlctld on a booted Debian 12 with systemd as PID 1 (issue 9): the .deb
//! installed with apt, journald, polkit with the `hlctl` group, a reboot,
//! a crash, hot-plug, upgrade and purge — in a qemu VM (TCG) with an
//! emulated e1000e NIC on a tap in a test-created namespace.

mod common;

use std::time::{Duration, Instant};

use common::sysvm::{PEER_CIDR, SystemVm, files_disk, system_image};
use common::vm::add_tap;
use common::{NetNs, deb};

fn skip_reason() -> Option<&'static str> {
    if !common::is_root() {
        return Some("needs root (netns, tap)");
    }
    if std::process::Command::new("qemu-system-x86_64")
        .arg("--version")
        .output()
        .is_err()
    {
        return Some("no qemu-system-x86_64 (scripts/setup.sh installs it)");
    }
    None
}

#[test]
fn hlctld_on_a_booted_debian_with_systemd() {
    if let Some(why) = skip_reason() {
        panic!("vm_systemd cannot run here: {why}");
    }
    let t0 = Instant::now();
    let img = system_image();
    deb::took("system image", t0);
    let ns = NetNs::new();
    add_tap(&ns, "tap0", PEER_CIDR);
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let debs = files_disk(tmp.path(), &[deb::deb()]);
    let t = Instant::now();
    let mut vm = SystemVm::boot(&img, &debs, &ns, "tap0");
    let boot_id = vm.wait_agent(Duration::from_secs(300));
    deb::took("boot to the agent", t);
    let (state, failed) = vm.wait_system_running();
    deb::took("boot to is-system-running", t);
    eprintln!("boot {boot_id}: {state}\n{failed}");
    assert_eq!(state, "running", "failed units:\n{failed}");
}
