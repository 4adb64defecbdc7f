//! hlctld on a booted Debian 12 with systemd as PID 1 (issue 9): the .deb
//! installed with apt, journald, polkit with the `hlctl` group, a reboot
//! with nobody logged in — in a qemu VM (TCG, rig in tests/common/sysvm.rs)
//! with an emulated e1000e `eth0` on a tap in a test-created namespace.
//!
//! One qemu process, two boots of the same disk (`systemctl reboot` resets
//! the machine; the disk is a snapshot of the cached image, kept across the
//! reset): boot 1 installs and changes, boot 2 checks what came back.

mod common;

use std::time::{Duration, Instant};

use common::deb;
use common::sysvm::{SystemVm, files_disk, guest_image};
use serde_json::Value;

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

/// The same package with a higher version: `dpkg-deb -R`, the control
/// file's Version changed, `dpkg-deb -b`.
fn higher_version(
    deb: &std::path::Path,
    version: &str,
    dir: &std::path::Path,
) -> std::path::PathBuf {
    let tree = dir.join("newer");
    let tree_s = tree.to_str().unwrap();
    deb::ok(
        "dpkg-deb -R",
        &deb::run("dpkg-deb", &["-R", deb.to_str().unwrap(), tree_s]),
    );
    let control = tree.join("DEBIAN/control");
    let text = std::fs::read_to_string(&control).unwrap();
    assert!(text.contains("\nVersion: 0.1.0-1\n"), "{text}");
    std::fs::write(
        &control,
        text.replace("\nVersion: 0.1.0-1\n", &format!("\nVersion: {version}\n")),
    )
    .unwrap();
    let out = dir.join(format!("hlctl_{version}_amd64.deb"));
    deb::ok(
        "dpkg-deb -b",
        &deb::run("dpkg-deb", &["-Znone", "-b", tree_s, out.to_str().unwrap()]),
    );
    out
}

/// `journalctl -o json` lines, parsed.
fn journal(vm: &mut SystemVm, args: &str) -> Vec<Value> {
    vm.ok(&format!("journalctl -o json --no-pager {args}"))
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn field<'a>(e: &'a Value, k: &str) -> &'a str {
    e.get(k).and_then(Value::as_str).unwrap_or("")
}

fn monotonic(e: &Value) -> u64 {
    field(e, "__MONOTONIC_TIMESTAMP").parse().unwrap()
}

/// Run `cmd` as alice in a new login (`runuser` opens a PAM session, so
/// her groups are read afresh).
fn alice(vm: &mut SystemVm, cmd: &str) -> (i32, String) {
    vm.sh(&format!("runuser -l alice -c '{cmd}'"))
}

/// `ethtool -g eth0`'s current RX and TX lines, whitespace collapsed
/// ("RX: 256 TX: 256").
fn rings(vm: &mut SystemVm) -> String {
    words(&vm.ok("ethtool -g eth0 | sed -n '/Current/,$p' | grep -E '^(RX|TX):'"))
}

fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The .debs' disk at /run/debs (a tmpfs: again after a reboot).
fn mount_debs(vm: &mut SystemVm) {
    vm.ok("mkdir -p /run/debs && { mountpoint -q /run/debs || mount -o ro /dev/vdb /run/debs; }");
}

/// Item 1: installed, enabled, active, owning its name; nothing failed or
/// warned; the unit verifies; exposure ≤ 2.5; no ordering cycle.
fn install_checks(vm: &mut SystemVm) {
    mount_debs(vm);
    let out = vm.ok(
        "DEBIAN_FRONTEND=noninteractive apt-get install -y -q /run/debs/hlctl_0.1.0-1_amd64.deb",
    );
    eprintln!("apt-get install:\n{out}");
    assert_eq!(vm.ok("systemctl is-enabled hlctld").trim(), "enabled");
    assert_eq!(vm.ok("systemctl is-active hlctld").trim(), "active");
    let pid = vm.ok("systemctl show -p MainPID --value hlctld");
    let pid = pid.trim();
    assert_ne!(pid, "0");
    let bus = vm.ok("busctl status org.hlctl.Daemon1");
    assert!(
        bus.lines().any(|l| l == format!("PID={pid}")),
        "busctl status names another pid than hlctld's {pid}:\n{bus}"
    );
    assert_eq!(vm.ok("systemctl --failed --no-legend --plain").trim(), "");
    let warnings = vm.ok("journalctl -b -p warning -t hlctld -q --no-pager");
    assert_eq!(warnings.trim(), "", "hlctld warned at boot");
    // man-db is not in the image: the Documentation= pages are checked by
    // tests/deb_package.rs.
    let verify = vm.ok("systemd-analyze verify --man=no hlctld.service");
    assert_eq!(verify.trim(), "", "systemd-analyze verify complains");
    let security = vm.ok("systemd-analyze security hlctld.service --no-pager");
    let exposure: f64 = security
        .lines()
        .find_map(|l| l.strip_prefix("→ Overall exposure level for hlctld.service: "))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no exposure level in:\n{security}"));
    eprintln!("guest: systemd-analyze security hlctld.service: exposure {exposure:.1}");
    assert!(exposure <= 2.5, "exposure {exposure} > 2.5");
    let cycles = vm
        .sh("journalctl -b --no-pager | grep -i 'ordering cycle'")
        .1;
    assert_eq!(cycles.trim(), "", "ordering cycle at boot");
    eprintln!(
        "guest: systemctl status hlctld\n{}",
        vm.sh("systemctl status hlctld --no-pager -l").1
    );
}

/// Issue 39 §2: what `set --persist` and `sysctl --persist` report as
/// written survives a power cut right after the reply. The files live on
/// ext4 on a loop device under dm-flakey: after the commands, the table is
/// swapped for one with `drop_writes` (suspended without flushing, so
/// nothing dirty reaches the disk on the way), so every write after the cut
/// is lost, as unsynced data is when the power goes; the filesystem is then
/// unmounted (its writeback goes nowhere) and the bare loop device mounted
/// again (the journal replayed). A file written without fsync just before
/// the cut must be gone, or the rig would prove nothing; hlctl's own state
/// file, ifupdown2's stanza, a systemd-networkd drop-in (in a directory
/// hlctl made for it), hlctl's netplan file (the managers' files) and
/// `90-hlctl.conf` must be there, whole. (NetworkManager's profiles are
/// written by NetworkManager itself, through its D-Bus API: their
/// durability is its own.) `commit=600` keeps ext4's own
/// 5-second commit from syncing anything hlctl did not sync itself.
fn power_cut(vm: &mut SystemVm) {
    let old_wmem = vm.ok("cat /proc/sys/net/ipv4/tcp_wmem");
    vm.ok(
        "set -e; img=/var/tmp/power.img; rm -f $img; truncate -s 64M $img
         dev=$(losetup -f --show $img); echo $dev > /run/power.dev
         mkfs.ext4 -q $dev
         dmsetup create hlpower --table \"0 $(blockdev --getsz $dev) flakey $dev 0 3600 0\"
         mkdir -p /mnt/power; mount -o commit=600 /dev/mapper/hlpower /mnt/power
         R=/mnt/power/root; mkdir -p $R/usr/share/ifupdown2 $R/etc/network
         printf 'auto lo\\niface lo inet loopback\\n\\niface dum9 inet manual\\n' > $R/etc/network/interfaces
         ip link add dum9 type dummy
         # dum8: systemd-networkd's, from a .network file of the user's;
         # dum7: networkd's too, from the file netplan rendered of 01-lab.yaml.
         ip link add dum8 type dummy; ip link add dum7 type dummy
         mkdir -p $R/run/systemd/netif/links $R/etc/systemd/network $R/run/systemd/network $R/etc/netplan
         for n in 8 7; do
             i=$(cat /sys/class/net/dum$n/ifindex)
             f=/etc/systemd/network/10-dum$n.network
             [ $n = 7 ] && f=/run/systemd/network/10-netplan-dum$n.network
             printf 'ADMIN_STATE=configured\nOPER_STATE=routable\nNETWORK_FILE=%s\n' $f > $R/run/systemd/netif/links/$i
             printf '[Match]\nName=dum%s\n\n[Link]\nMTUBytes=1500\n' $n > $R$f
         done
         printf 'network:\n  version: 2\n  ethernets:\n    dum7:\n      mtu: 1500\n' > $R/etc/netplan/01-lab.yaml
         chmod 600 $R/etc/netplan/01-lab.yaml
         sync -f /mnt/power",
    );
    let set = vm.ok("hlctl --local --root /mnt/power/root set dum9 mtu 1400 --persist --json");
    let managed: Vec<String> = ["dum8", "dum7"]
        .iter()
        .map(|d| {
            vm.ok(&format!(
                "hlctl --local --root /mnt/power/root set {d} mtu 1400 --persist --json"
            ))
        })
        .collect();
    let sysctl = vm.ok(
        "hlctl --local --root /mnt/power/root sysctl 'net.ipv4.tcp_wmem=4096 16384 131072' --persist --json",
    );
    // The cut, right after the replies, and what the disk holds then.
    vm.ok("set -e; echo unsynced > /mnt/power/control
         dev=$(cat /run/power.dev); n=$(blockdev --getsz $dev)
         dmsetup suspend --nolockfs --noflush hlpower
         dmsetup load hlpower --table \"0 $n flakey $dev 0 0 3600 1 drop_writes\"
         dmsetup resume hlpower
         umount /mnt/power; dmsetup remove hlpower
         mount $dev /mnt/power");
    let files = vm.ok(
        "cd /mnt/power; ls control 2>/dev/null || echo 'control: gone'
         cat root/var/lib/hlctl/nic-settings.json; echo ===
         cat root/etc/network/interfaces; echo ===
         cat root/etc/sysctl.d/90-hlctl.conf; echo ===
         ls root/etc/network/; echo ===
         cat root/etc/systemd/network/10-dum8.network.d/90-hlctl.conf; echo ===
         cat root/etc/netplan/90-hlctl.yaml",
    );
    vm.ok(&format!(
        "umount /mnt/power; losetup -d $(cat /run/power.dev); rm -f /var/tmp/power.img
         ip link del dum9; ip link del dum8; ip link del dum7; sysctl -qw 'net.ipv4.tcp_wmem={}'",
        old_wmem.trim()
    ));
    eprintln!("guest: after the power cut:\n{files}");
    let reply: Value = serde_json::from_str(&set).unwrap();
    assert!(
        reply["persisted"].is_string() || reply["persisted"].is_array(),
        "set: {set}"
    );
    let reply: Value = serde_json::from_str(&sysctl).unwrap();
    assert!(reply["persisted"].is_string(), "sysctl: {sysctl}");
    let parts: Vec<&str> = files.split("===\n").collect();
    assert!(
        parts[0].starts_with("control: gone"),
        "the rig kept an unsynced write:\n{files}"
    );
    let state: Value = serde_json::from_str(parts[0].trim_start_matches("control: gone\n"))
        .unwrap_or_else(|e| panic!("nic-settings.json after the cut ({e}):\n{files}"));
    let dum9 = state["interfaces"]
        .as_array()
        .and_then(|l| l.iter().find(|e| e["name"] == "dum9"))
        .unwrap_or_else(|| panic!("dum9 not in nic-settings.json:\n{files}"));
    assert_eq!(dum9["settings"]["mtu"], 1400, "{files}");
    assert!(
        parts[1].contains("iface dum9 inet manual\n\tmtu 1400"),
        "ifupdown2's stanza lost the MTU:\n{files}"
    );
    assert!(
        parts[2]
            .lines()
            .any(|l| l.replace(' ', "") == "net.ipv4.tcp_wmem=409616384131072"),
        "90-hlctl.conf lost the line:\n{files}"
    );
    // The managers' files: written through networkd (a drop-in in a
    // directory made for it) and netplan (hlctl's own YAML), whole.
    for (d, reply) in ["dum8", "dum7"].iter().zip(&managed) {
        let r: Value = serde_json::from_str(reply).unwrap();
        assert!(
            r["persisted_through"]
                .as_array()
                .is_some_and(|a| !a.is_empty()),
            "{d}: not persisted through its manager: {reply}"
        );
    }
    assert!(
        parts[4].ends_with("[Link]\nMTUBytes=1400\n"),
        "networkd's drop-in lost the MTU:\n{files}"
    );
    assert!(
        parts[5].ends_with("network:\n  version: 2\n  ethernets:\n    dum7:\n      mtu: 1400\n"),
        "netplan's file lost the MTU:\n{files}"
    );
}

/// Item 3: an ordinary user reads but may not change; in the `hlctl` group
/// she may (polkit rule of the package, no password).
fn polkit_group(vm: &mut SystemVm) -> String {
    vm.ok("useradd -m -s /bin/bash alice");
    let uid = vm.ok("id -u alice").trim().to_string();
    for cmd in ["hlctl show", "hlctl doctor", "hlctl status"] {
        let (rc, out) = alice(vm, cmd);
        assert_eq!(rc, 0, "alice: {cmd} failed:\n{out}");
    }
    let before = rings(vm);
    let (rc, out) = alice(vm, "hlctl set eth0 ring rx 4096");
    assert_eq!(rc, 3, "alice's set was not refused with exit 3:\n{out}");
    assert_eq!(rings(vm), before, "a refused set changed the rings");
    assert!(
        vm.ok("getent group hlctl").starts_with("hlctl:x:"),
        "the package made no group hlctl"
    );
    vm.ok("adduser alice hlctl");
    let (rc, out) = alice(vm, "hlctl set eth0 ring rx 4096 --persist");
    assert_eq!(rc, 0, "alice in group hlctl: set failed:\n{out}");
    assert!(rings(vm).starts_with("RX: 4096 "), "{}", rings(vm));
    uid
}

/// Item 2: our entries in the journal, with our fields, and the refusal.
fn journald_fields(vm: &mut SystemVm, uid: &str) {
    let entries = journal(vm, "-u hlctld");
    let ours: Vec<&Value> = entries
        .iter()
        .filter(|e| field(e, "SYSLOG_IDENTIFIER") == "hlctld")
        .collect();
    assert!(!ours.is_empty(), "no hlctld entries in the journal");
    assert!(ours.iter().all(|e| !field(e, "PRIORITY").is_empty()));
    let change = ours
        .iter()
        .find(|e| {
            field(e, "HLCTL_ACTION") == "apply-settings"
                && field(e, "HLCTL_IFACE") == "eth0"
                && field(e, "HLCTL_CALLER_UID") == uid
        })
        .unwrap_or_else(|| panic!("no change entry of eth0 by uid {uid}: {ours:#?}"));
    eprintln!("journal: a change: {change}");
    let refused = ours
        .iter()
        .find(|e| {
            field(e, "HLCTL_ACTION") == "org.hlctl.Daemon1.apply-settings"
                && field(e, "HLCTL_CALLER_UID") == uid
                && field(e, "MESSAGE").starts_with("refused")
        })
        .unwrap_or_else(|| panic!("no refusal logged with uid {uid}: {ours:#?}"));
    eprintln!("journal: the refusal: {refused}");
}

/// `ethtool -k eth0`: is `feature` on?
fn feature_on(vm: &mut SystemVm, feature: &str) -> bool {
    let k = vm.ok("ethtool -k eth0");
    k.lines().any(|l| l.starts_with(&format!("{feature}: on")))
}

const TUNE: &str = "hlctl tune eth0 --peer 10.77.0.1 --yes --runs 3 --time 1 --no-mtu";

/// Item 5: alice tunes through hlctld against the peer on this machine:
/// the planted offloads-off is fixed, kept and persisted (the reboot checks
/// it is still in effect).
fn tune_kept(vm: &mut SystemVm) {
    vm.ok("ethtool -K eth0 tso off gso off sg off");
    assert!(!feature_on(vm, "tcp-segmentation-offload"));
    // A noisy run may make the tuner (rightly) refuse: it must then have
    // reverted the change; try again, at most three times.
    let mut kept = Value::Null;
    for attempt in 1..=3 {
        let (rc, out) = alice(vm, &format!("{TUNE} --json 2>/tmp/tune.err"));
        assert_eq!(
            rc,
            0,
            "alice: tune failed:\n{out}\n{}",
            vm.sh("cat /tmp/tune.err").1
        );
        let r: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        let s = common::lab::step(&r, "offloads-on").clone();
        if s["status"] == "kept" {
            kept = s;
            break;
        }
        eprintln!(
            "tune attempt {attempt}: offloads-on not kept: {}",
            s["reason"]
        );
        assert!(
            !feature_on(vm, "tcp-segmentation-offload"),
            "a candidate that was not kept must be reverted: {s}"
        );
    }
    assert_eq!(kept["status"], "kept", "offloads-on never kept in 3 tunes");
    eprintln!("tune: offloads-on kept: {kept}");
    assert!(feature_on(vm, "tcp-segmentation-offload"));
    let state = vm.ok("cat /var/lib/hlctl/nic-settings.json");
    assert!(
        state.contains("\"tx-tcp-segmentation\""),
        "not persisted: {state}"
    );
}

/// Item 6, second half: a tune in flight when hlctld is killed is rolled
/// back by the restarted hlctld. Its own candidate (GRO off) is not among
/// the persisted settings, so the re-apply after the restart cannot hide
/// whether the rollback happened.
fn crash_during_tune(vm: &mut SystemVm) {
    assert!(feature_on(vm, "generic-receive-offload"));
    let old = main_pid(vm);
    vm.send(&format!(
        "runuser -l alice -c '{TUNE} --try \"feature gro off\"' >/tmp/tune-killed.log 2>&1"
    ));
    // Kill it while GRO off is being measured.
    vm.ok(
        "for i in $(seq 900); do grep -Eq '\"candidate\": ?\"try-1\"' /var/lib/hlctl/tune/journal-eth0.json 2>/dev/null && exit 0; sleep 0.2; done; exit 1",
    );
    let trying = vm.ok("cat /var/lib/hlctl/tune/journal-eth0.json");
    let gro_while_trying = feature_on(vm, "generic-receive-offload");
    vm.ok(&format!("kill -9 {old}"));
    let new = wait_new_pid(vm, &old);
    let restored = journal(vm, &format!("-b -t hlctld _PID={new}"));
    let line = restored
        .iter()
        .map(|e| field(e, "MESSAGE"))
        .find(|m| m.starts_with("restored the settings of an unfinished tune"))
        .unwrap_or_else(|| {
            panic!("the restarted hlctld (pid {new}) did not restore the tune in flight ({trying}): {restored:#?}")
        })
        .to_string();
    assert!(
        !gro_while_trying,
        "the tune was not trying GRO off: {trying}"
    );
    vm.ok("test ! -e /var/lib/hlctl/tune/journal-eth0.json");
    assert!(
        feature_on(vm, "generic-receive-offload"),
        "GRO (the tune's candidate in flight) not rolled back after the restart"
    );
    eprintln!(
        "crash during a tune: killed while trying {trying}\nhlctld pid {new}: {line}\nthe client said: {}",
        vm.sh("cat /tmp/tune-killed.log").1
    );
}

const SYSCTLS: &str = "net.core.rmem_max=33554432 net.ipv4.tcp_rmem=\"4096 131072 33554432\"";

/// Item 4, before the reboot: alice persists settings and sysctls.
fn persist_for_reboot(vm: &mut SystemVm) {
    let (rc, out) = alice(
        vm,
        "hlctl set eth0 ring rx 4096 tx 4096 pause autoneg off rx off tx off mtu 9000 --persist",
    );
    assert_eq!(rc, 0, "alice: set --persist failed:\n{out}");
    let (rc, out) = alice(vm, &format!("hlctl sysctl {SYSCTLS} --persist"));
    assert_eq!(rc, 0, "alice: sysctl --persist failed:\n{out}");
}

/// Item 4, after the reboot: everything back, hlctld's re-apply before
/// network-online.target, with nobody logged in.
fn after_reboot(vm: &mut SystemVm) {
    assert_eq!(
        vm.ok("loginctl list-sessions --no-legend").trim(),
        "",
        "somebody is logged in"
    );
    assert_eq!(rings(vm), "RX: 4096 TX: 4096", "rings after reboot");
    let pause = words(&vm.ok("ethtool -a eth0"));
    for l in ["Autonegotiate: off", "RX: off", "TX: off"] {
        assert!(
            pause.contains(l),
            "pause after reboot lacks {l:?}:\n{pause}"
        );
    }
    assert!(vm.ok("ip link show eth0").contains(" mtu 9000 "));
    // Item 5: what the tune kept in boot 1.
    assert!(
        feature_on(vm, "tcp-segmentation-offload"),
        "the tune's offloads are not back after the reboot"
    );
    assert_eq!(vm.ok("sysctl -n net.core.rmem_max").trim(), "33554432");
    assert_eq!(
        vm.ok("sysctl -n net.ipv4.tcp_rmem")
            .split_whitespace()
            .collect::<Vec<_>>(),
        ["4096", "131072", "33554432"]
    );
    let reapplied = journal(vm, "-b -t hlctld HLCTL_ACTION=reapply HLCTL_IFACE=eth0");
    let last_reapply = reapplied
        .iter()
        .filter(|e| field(e, "MESSAGE").starts_with("persisted eth0"))
        .map(monotonic)
        .max()
        .unwrap_or_else(|| panic!("hlctld did not re-apply eth0's settings: {reapplied:#?}"));
    let pre = journal(vm, "-b UNIT=network-pre.target JOB_RESULT=done");
    let pre_at = pre
        .iter()
        .map(monotonic)
        .min()
        .expect("network-pre.target was never reached");
    let online = journal(vm, "-b UNIT=network-online.target JOB_RESULT=done");
    let online_at = online
        .iter()
        .map(monotonic)
        .min()
        .expect("network-online.target was never reached");
    eprintln!(
        "reboot evidence:\n{}",
        vm.ok(
            "journalctl -b -o short-monotonic --no-pager -t hlctld -t systemd \
             | grep -E 'hlctld|persisted|re-applying|ready|network-pre|network-online'"
        )
    );
    // Type=notify + Before=network-pre.target: the settings are back before
    // the network is even configured.
    assert!(
        last_reapply < pre_at,
        "hlctld re-applied eth0 at {last_reapply} µs, after network-pre.target at {pre_at} µs"
    );
    assert!(
        last_reapply < online_at,
        "hlctld re-applied eth0 at {last_reapply} µs, after network-online.target at {online_at} µs"
    );
}

/// Item 9: what hlctld costs at idle (recorded, not asserted: emulated CPU).
fn cost(vm: &mut SystemVm) {
    let blame = vm.ok("systemd-analyze blame --no-pager | grep hlctld.service");
    let mem = vm.ok("systemctl show -p MemoryCurrent hlctld");
    eprintln!(
        "cost: systemd-analyze blame: {}; {}",
        blame.trim(),
        mem.trim()
    );
    assert!(mem.trim().starts_with("MemoryCurrent="), "{mem}");
}

fn main_pid(vm: &mut SystemVm) -> String {
    vm.ok("systemctl show -p MainPID --value hlctld")
        .trim()
        .to_string()
}

/// Wait (30 s at most) until hlctld is active with a main pid other than
/// `old`; the new pid.
fn wait_new_pid(vm: &mut SystemVm, old: &str) -> String {
    vm.ok(&format!(
        "for i in $(seq 100); do p=$(systemctl show -p MainPID --value hlctld); \
         [ \"$p\" != 0 ] && [ \"$p\" != {old} ] && systemctl is-active -q hlctld && exit 0; \
         sleep 0.3; done; systemctl status hlctld --no-pager; exit 1"
    ));
    main_pid(vm)
}

/// Item 6: SIGKILL → systemd restarts hlctld, which re-applies.
fn crash(vm: &mut SystemVm) {
    let old = main_pid(vm);
    // Drift from the persisted rings, so that the re-apply has work to do.
    vm.ok("ethtool -G eth0 rx 256 tx 256");
    assert_eq!(rings(vm), "RX: 256 TX: 256");
    vm.ok(&format!("kill -9 {old}"));
    let new = wait_new_pid(vm, &old);
    assert_eq!(
        vm.ok("systemctl show -p NRestarts --value hlctld").trim(),
        "1",
        "systemd did not restart hlctld once"
    );
    let reapplied = journal(
        vm,
        &format!("-b -t hlctld _PID={new} HLCTL_ACTION=reapply HLCTL_IFACE=eth0"),
    );
    assert!(
        reapplied
            .iter()
            .any(|e| field(e, "MESSAGE").starts_with("persisted eth0 ring rx: 256 -> 4096")),
        "the restarted hlctld (pid {new}) did not re-apply eth0's rings: {reapplied:#?}"
    );
    assert_eq!(rings(vm), "RX: 4096 TX: 4096", "rings after the restart");
    let (rc, out) = alice(vm, "hlctl show eth0");
    assert_eq!(rc, 0, "hlctl show after the restart:\n{out}");
    eprintln!(
        "crash evidence:\n{}",
        vm.ok("journalctl -b -o short-monotonic --no-pager -u hlctld \
             | grep -E 'KILL|signal|restart|Started|Stopped|serving|ready|re-applying'")
    );
}

/// Item 7: a NIC plugged in at run time (qemu monitor) gets its persisted
/// settings within 2 s of appearing.
fn hot_plug(vm: &mut SystemVm) {
    let add = "device_add e1000e,netdev=hp1,id=nic1,mac=52:54:00:77:00:03,romfile=";
    let reply = vm.monitor("netdev_add hubport,id=hp1,hubid=9");
    assert!(!reply.contains("Error"), "{reply}");
    let reply = vm.monitor(add);
    assert!(!reply.contains("Error"), "{reply}");
    let wait_eth1 =
        "for i in $(seq 150); do [ -e /sys/class/net/eth1 ] && exit 0; sleep 0.2; done; exit 1";
    vm.ok(wait_eth1);
    vm.ok("hlctl set eth1 ring rx 1024 tx 1024 --persist");
    vm.monitor("device_del nic1");
    vm.ok("for i in $(seq 150); do [ -e /sys/class/net/eth1 ] || exit 0; sleep 0.2; done; exit 1");
    let since = vm.ok("date +%s.%N").trim().to_string();
    // qemu frees the device's id only once the guest has finished the
    // unplug, a little after eth1 is gone (on a busy machine, seconds).
    let mut reply = vm.monitor(add);
    for _ in 0..40 {
        if !reply.contains("Duplicate device ID") {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
        reply = vm.monitor(add);
    }
    assert!(!reply.contains("Error"), "{reply}");
    vm.ok(wait_eth1);
    // Wait for hlctld's re-apply (at most 20 s) before reading the journal.
    vm.ok(
        "for i in $(seq 100); do ethtool -g eth1 | sed -n '/Current/,$p' | grep -q '^RX:.*1024' && exit 0; sleep 0.2; done; exit 1",
    );
    let kernel = journal(vm, &format!("-b -k --since @{since}"));
    let appeared = kernel
        .iter()
        .filter(|e| field(e, "MESSAGE").contains("eth1: "))
        .map(monotonic)
        .min()
        .unwrap_or_else(|| panic!("no kernel line about eth1: {kernel:#?}"));
    let ours = journal(
        vm,
        &format!("-b -t hlctld HLCTL_IFACE=eth1 --since @{since}"),
    );
    let applied = ours
        .iter()
        .filter(|e| field(e, "MESSAGE").starts_with("persisted eth1 ring"))
        .map(monotonic)
        .max()
        .unwrap_or_else(|| panic!("hlctld did not re-apply eth1: {ours:#?}"));
    let took_ms = applied.saturating_sub(appeared) / 1000;
    eprintln!(
        "hot-plug: eth1's persisted settings applied {took_ms} ms after the kernel named it\n{}",
        vm.ok(&format!(
            "journalctl -b -o short-monotonic --no-pager --since @{since} | grep -E 'eth1|hlctld'"
        ))
    );
    assert!(took_ms <= 2000, "eth1's settings took {took_ms} ms");
}

/// The hardening lets the daemon do its jobs: a disk benchmark with
/// io_uring in /srv (ReadWritePaths=, SystemCallFilter=), run by hlctld for
/// alice.
fn disk_bench_in_srv(vm: &mut SystemVm) {
    let since = vm.ok("date +%s.%N").trim().to_string();
    let (rc, out) = alice(
        vm,
        "hlctl bench disk --dir /srv --engine io_uring --size 8M --runtime 1 --json 2>/tmp/bench.err",
    );
    assert_eq!(
        rc,
        0,
        "bench disk in /srv through hlctld failed:\n{out}\n{}",
        vm.sh("cat /tmp/bench.err").1
    );
    assert!(out.contains("\"engine\": \"io_uring\""), "{out}");
    // It ran in hlctld, as a job of alice's.
    let jobs = journal(vm, &format!("-b -t hlctld --since @{since}"));
    let uid = vm.ok("id -u alice").trim().to_string();
    assert!(
        jobs.iter().any(|e| {
            let m = field(e, "MESSAGE");
            m.starts_with("job ") && m.ends_with(" started") && field(e, "HLCTL_CALLER_UID") == uid
        }),
        "the disk benchmark did not run as a job in hlctld: {jobs:#?}"
    );
    eprintln!("bench disk /srv (io_uring, in hlctld): {}", out.trim());
}

/// Item 8: upgrade to a higher version, remove, purge.
fn upgrade_remove_purge(vm: &mut SystemVm) {
    mount_debs(vm);
    let old = main_pid(vm);
    vm.ok("test -s /etc/sysctl.d/90-hlctl.conf && test -n \"$(ls /var/lib/hlctl)\"");
    let t = Instant::now();
    vm.ok("DEBIAN_FRONTEND=noninteractive apt-get install -y -q /run/debs/hlctl_0.1.1-1_amd64.deb");
    deb::took("apt-get install (upgrade)", t);
    assert_eq!(vm.ok("dpkg-query -W -f='${Version}' hlctl"), "0.1.1-1");
    let new = wait_new_pid(vm, &old);
    vm.ok("test -s /etc/sysctl.d/90-hlctl.conf && test -n \"$(ls /var/lib/hlctl)\"");
    let reapplied = journal(
        vm,
        &format!("-b -t hlctld _PID={new} HLCTL_ACTION=reapply HLCTL_IFACE=eth0"),
    );
    assert!(
        !reapplied.is_empty(),
        "the upgraded hlctld (pid {new}) did not re-apply eth0"
    );
    assert_eq!(rings(vm), "RX: 4096 TX: 4096", "rings after the upgrade");

    let t = Instant::now();
    vm.ok("DEBIAN_FRONTEND=noninteractive apt-get remove -y -q hlctl");
    deb::took("apt-get remove", t);
    assert_ne!(vm.sh("systemctl is-active hlctld").1.trim(), "active");
    assert_eq!(vm.sh("pidof hlctld").0, 1, "hlctld still runs after remove");
    vm.ok("test -s /etc/sysctl.d/90-hlctl.conf && test -d /var/lib/hlctl");

    let t = Instant::now();
    let purge = vm.ok("DEBIAN_FRONTEND=noninteractive apt-get purge -y -q hlctl");
    deb::took("apt-get purge", t);
    vm.ok("test ! -e /var/lib/hlctl && test ! -e /etc/sysctl.d/90-hlctl.conf");
    let units = vm.sh("systemctl list-unit-files --no-pager | grep hlctl").1;
    assert_eq!(units.trim(), "", "unit files left after purge");
    // alice is still in the group: it stays, and purge says so.
    assert!(purge.contains("kept the group hlctl"), "{purge}");
    assert!(vm.ok("getent group hlctl").contains("alice"));
    eprintln!("purge:\n{purge}");
}

#[test]
fn hlctld_on_a_booted_debian_with_systemd() {
    if let Some(why) = skip_reason() {
        panic!("vm_systemd cannot run here: {why}");
    }
    let t0 = Instant::now();
    let img = guest_image();
    // The peer of the tunes: iperf3 -s on the tap's side, in the namespace.
    let (ns, _peer) = common::sysvm::tap_with_iperf3_peer();
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let newer = higher_version(deb::deb(), "0.1.1-1", tmp.path());
    let debs = files_disk(tmp.path(), &[deb::deb(), &newer]);
    deb::took("image and .deb", t0);

    let t = Instant::now();
    let mut vm = SystemVm::boot(&img, &debs, &ns, "tap0");
    let boot1 = vm.wait_agent(Duration::from_secs(300));
    let (state, failed) = vm.wait_system_running();
    deb::took("boot 1 to is-system-running", t);
    assert_eq!(state, "running", "failed units:\n{failed}");

    let t = Instant::now();
    install_checks(&mut vm);
    let t1 = Instant::now();
    power_cut(&mut vm);
    deb::took("power cut", t1);
    let uid = polkit_group(&mut vm);
    journald_fields(&mut vm, &uid);
    let t1 = Instant::now();
    tune_kept(&mut vm);
    deb::took("tune", t1);
    persist_for_reboot(&mut vm);
    deb::took("boot 1 checks", t);

    let t = Instant::now();
    vm.send("systemctl reboot");
    let boot2 = vm.wait_agent(Duration::from_secs(300));
    assert_ne!(boot1, boot2, "no new boot");
    let (state, failed) = vm.wait_system_running();
    deb::took("reboot to is-system-running", t);
    assert_eq!(state, "running", "failed units after reboot:\n{failed}");
    after_reboot(&mut vm);
    cost(&mut vm);
    let t = Instant::now();
    crash(&mut vm);
    crash_during_tune(&mut vm);
    deb::took("crash", t);
    let t = Instant::now();
    hot_plug(&mut vm);
    deb::took("hot-plug", t);
    let t = Instant::now();
    disk_bench_in_srv(&mut vm);
    deb::took("bench disk", t);
    let t = Instant::now();
    upgrade_remove_purge(&mut vm);
    deb::took("upgrade, remove, purge", t);
    deb::took("the whole test", t0);
}
