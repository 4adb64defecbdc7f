//! What the host kernel cannot build (no bonding, no NFS), in one boot of
//! Debian's kernel under qemu:
//! - a bond `bond0` (active-backup) over two veth pairs: `show` and `doctor`
//!   by the upper and by a slave's name find the same stack, the bond mode
//!   and the active slave; offloads planted off on the active slave are
//!   found, and `tune bond0` fixes them (kept on a measured gain); against a
//!   peer that carries only 1500 it tries MTU 9000 on the bond and both
//!   slaves as one change and reverts it as one;
//! - the NFS playbook against a real NFS export: the guest's kernel nfsd
//!   (nfs-kernel-server's rpc.nfsd/rpc.mountd/exportfs, NFSv4 only, no
//!   rpcbind) serves a tmpfs to a client namespace over a veth pair. Mounted
//!   `vers=4.0,sync` with 64 KiB blocks, doctor measures write and read on
//!   the mount and on a local directory and names the mount options as the
//!   limit (with the option findings read from the real mountinfo); mounted
//!   well over a link shaped to 20 Mbit/s, with `--peer` measuring that
//!   link, it names the network; an export on a disk slow to write
//!   (ext4 under dm-delay), exported `sync` and then `async`: `bench file`
//!   names the sync export from its WRITEs' round trips
//!   (`/proc/self/mountstats`) against its reads', and not the async one;
//! - SMB3 against a real server: Samba's smbd (Debian 12's 4.17, unpacked,
//!   never installed on the host; ksmbd cannot serve on this kernel, see
//!   tests/vm/README.md) serves three tmpfs shares to the kernel's cifs
//!   client in the same client namespace, all SMB 3.1.1: `plain`; `sealed`,
//!   mounted with `seal`; and `required`, mounted without `seal` on a share
//!   whose server requires encryption (`smb encrypt = required`), which
//!   the mount's options never show. `bench file` on each reads the
//!   kernel's `/proc/fs/cifs/DebugData`, names the encryption of the two
//!   encrypted shares and none of the plain one, with the cipher the server
//!   itself reports (`smbstatus`), and the two encrypted shares are the
//!   slower ones; with the file's local side on an ext4 whose loop device a
//!   cgroup's `io.max` caps at 4 MB/s, the local disk is the named limit;
//!   and on the plain share bench file is measured beside `dd` on the mount
//!   and Samba's own `smbclient`, alternating.

mod common;

use std::process::Command;

use common::lab::step;
use common::report::{evidence, finding, passed, sorted_strings, step_settings, strings};
use common::vm::{Vm, VmOutput, vm_dir};
use serde_json::Value;

/// Unpacked nfs-kernel-server and nfs-common (fetch-debs.sh, cached).
fn nfs_utils_root() -> String {
    unpacked(&["nfs-kernel-server", "nfs-common"])
}

/// Debian packages unpacked by fetch-debs.sh (cached): their root.
fn unpacked(packages: &[&str]) -> String {
    let out = Command::new(vm_dir().join("fetch-debs.sh"))
        .args(packages)
        .output()
        .expect("run fetch-debs.sh");
    assert!(
        out.status.success(),
        "fetch-debs.sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("ROOT=").map(str::to_string))
        .expect("fetch-debs.sh printed no ROOT=")
}

/// (source, guest path) of smbd, pdbedit, smbstatus and smbclient and every library
/// they load (tests/vm/samba-files.sh).
fn samba_files() -> Vec<(String, String)> {
    let root = unpacked(&[
        "samba",
        "samba-libs",
        "libldb2",
        "liblmdb0",
        "libpopt0",
        "libtalloc2",
        "libtdb1",
        "libtevent0",
        "libwbclient0",
        "smbclient",
        "libsmbclient",
    ]);
    let out = Command::new(vm_dir().join("samba-files.sh"))
        .arg(&root)
        .args([
            "usr/sbin/smbd",
            "usr/bin/pdbedit",
            "usr/bin/smbstatus",
            "usr/bin/smbclient",
        ])
        .output()
        .expect("run samba-files.sh");
    assert!(
        out.status.success(),
        "samba-files.sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let (src, dest) = l.split_once(':').expect("SRC:DEST");
            (src.to_string(), dest.to_string())
        })
        .collect()
}

const BOND: &str = r#"
# Loading the module made a balance-rr bond0 already (max_bonds=1).
ip link del bond0 2>/dev/null
ip link add bond0 type bond mode active-backup miimon 100
ip netns add bp
for i in 1 2; do
    ip link add ba$i type veth peer name bb$i
    ip link set bb$i netns bp
    ip -n bp link set bb$i up
    ip link set ba$i master bond0
done
ip link set bond0 type bond primary ba1
ip link set bond0 up
ip -n bp link set lo up
# Offloads planted off on the active slave (the one that carries the traffic).
ethtool -K ba1 gso off tso off sg off
wait_carrier bond0 10 || true
section bshow_upper hlctl --json show bond0
section bshow_lower hlctl --json show ba2
section bshow_text hlctl show ba1
section bdoc_upper hlctl --json doctor bond0 --stress 0
section bdoc_lower hlctl --json doctor ba2 --stress 0
# A peer behind the bond (the primary slave's other end), carrying MTU 1500:
# MTU 9000 on bond0 and both slaves is tried as one change and reverted as one.
ip -n bp addr add 10.1.0.2/24 dev bb1
ip addr add 10.1.0.1/24 dev bond0
ip netns exec bp /opt/bin/iperf3 -s -D -B 10.1.0.2
sleep 1
section bping ping -c 2 -W 2 10.1.0.2
# The tune fixes the slave's offloads (kept on a measured gain: on TCG a noisy
# run may refuse it, so at most three tries, each refused one reverted) and
# tries MTU 9000 on the whole bond. Offloads back on are a 3-6x gain upload;
# the download they leave alone moves by tens of percent from one 1 s run to
# the next under TCG. Two runs each way and --min-gain 30 keep that noise
# from reading as a loss (with one run no noise is measured, so any drop of
# the untouched direction beyond --min-gain's 3% counts as worse: on CI a 23%
# one reverted the gain in three tries running).
for try in 1 2 3; do
    hlctl --json tune bond0 --peer 10.1.0.2:5201 --yes --runs 2 --time 1 --min-gain 30 --no-persist > /tmp/btune.json
    echo "try $try" >> /tmp/btries
    ethtool -k ba1 | grep -q '^tcp-segmentation-offload: on' && break
    ethtool -K ba1 gso off tso off sg off
done
section btune cat /tmp/btune.json
section btries cat /tmp/btries
section bk1 ethtool -k ba1
section bmtu cat /sys/class/net/bond0/mtu /sys/class/net/ba1/mtu /sys/class/net/ba2/mtu
"#;

const NFS: &str = r#"
mkdir -p /export /var/lib/nfs/v4recovery /tmp/local /proc/fs/nfsd
mount -t tmpfs -o size=96m tmpfs /export
mount -t nfsd nfsd /proc/fs/nfsd
# The server's largest rsize/wsize defaults to a fraction of RAM (128 KiB here).
echo 1048576 > /proc/fs/nfsd/max_block_size
ip netns add cli
ip link add vs type veth peer name vc
ip link set vc netns cli
ip addr add 10.0.0.1/24 dev vs
ip link set vs up
ip -n cli addr add 10.0.0.2/24 dev vc
ip -n cli link set vc up
ip -n cli link set lo up
echo '/export 10.0.0.0/24(rw,fsid=0,insecure,no_subtree_check,async,no_root_squash)' > /etc/exports
touch /var/lib/nfs/etab /var/lib/nfs/rmtab
section exportfs exportfs -rav
section mountd rpc.mountd -N 3 --no-udp
section nfsd rpc.nfsd -N 3 --no-udp -p 2049 -G 10 -L 10 4
section versions cat /proc/fs/nfsd/versions
iperf3 -s -D -B 10.0.0.1
# NFSv4's grace period (10 s here) must pass before the first OPEN.
sleep 11
# The client's mounts live in `ip netns exec`'s own mount namespace: each
# scenario mounts, measures and unmounts in one script.
cat > /tmp/client1.sh <<'X'
mkdir -p /mnt/nas
/opt/bin/mount.nfs4 10.0.0.1:/ /mnt/nas -o vers=4.0,sync,rsize=65536,wsize=65536 || exit 10
grep ' /mnt/nas ' /proc/self/mountinfo > /tmp/mountinfo1.txt
/opt/bin/hlctl --json doctor --dir /mnt/nas --dir /tmp/local --disk-size 8 --stress 0 > /tmp/nfs_opts.json || exit 11
/opt/bin/hlctl doctor --dir /mnt/nas --dir /tmp/local --disk-size 8 --stress 0 > /tmp/nfs_opts.txt 2>&1 || exit 12
umount /mnt/nas
X
cat > /tmp/client2.sh <<'X'
/opt/bin/mount.nfs4 10.0.0.1:/ /mnt/nas -o vers=4.2,rsize=1048576,wsize=1048576 || exit 14
grep ' /mnt/nas ' /proc/self/mountinfo > /tmp/mountinfo2.txt
/opt/bin/tc qdisc add dev vc root tbf rate 20mbit burst 32kbit latency 50ms
/opt/bin/hlctl --json doctor --dir /mnt/nas --dir /tmp/local --disk-size 8 --stress 0 --peer 10.0.0.1:5201 --time 3 > /tmp/nfs_net.json || exit 15
/opt/bin/hlctl doctor --dir /mnt/nas --dir /tmp/local --disk-size 8 --stress 0 --peer 10.0.0.1:5201 --time 3 > /tmp/nfs_net.txt 2>&1 || exit 16
# The mount's read as bench file measures it, then a workload judged
# without measuring (--disk-size 0): its read layer from that figure.
/opt/bin/hlctl --json bench file --dir /mnt/nas --size 4M > /tmp/nfs_file.json || exit 17
/opt/bin/hlctl --json doctor --dir /mnt/nas --disk-size 0 --stress 0 --workload plex-1080p > /tmp/nfs_workload.json || exit 18
umount /mnt/nas
X
# Side by side on a well-mounted, unshaped export: bench file and dd
# (O_DIRECT both, 1 MiB blocks, the same 32 MiB), alternating, 3 rounds.
cat > /tmp/client3.sh <<'X'
/opt/bin/tc qdisc del dev vc root 2>/dev/null
/opt/bin/mount.nfs4 10.0.0.1:/ /mnt/nas -o vers=4.2,rsize=1048576,wsize=1048576 || exit 19
for i in 1 2 3; do
    /opt/bin/hlctl --json bench file --dir /mnt/nas --size 32M --no-net --no-disk --no-crypto > /tmp/side_hlctl$i.json || exit 20
    # dd's own figure (its stderr: bytes copied over the seconds it timed).
    /opt/bin/dd if=/dev/zero of=/mnt/nas/dd.bin bs=1M count=32 oflag=direct 2>> /tmp/side_dd.txt || exit 21
    /opt/bin/dd if=/mnt/nas/dd.bin of=/dev/null bs=1M iflag=direct 2>> /tmp/side_dd.txt || exit 22
    rm -f /mnt/nas/dd.bin
done
ls -A /mnt/nas > /tmp/side_left.txt
umount /mnt/nas
X
section client1 ip netns exec cli sh /tmp/client1.sh
tc qdisc add dev vs root tbf rate 20mbit burst 32kbit latency 50ms
section client2 ip netns exec cli sh /tmp/client2.sh
tc qdisc del dev vs root
section client3 ip netns exec cli sh /tmp/client3.sh
# The server's disk slow to write: ext4 on a loop device under dm-delay
# (each write and flush waits 20 ms, reads none), exported `sync`, then
# the same export `async`; the client writes and reads 16 MiB on each
# (and 4 MiB for the text); ext4's lost+found is the disk's own.
dd if=/dev/zero of=/tmp/nfsdisk.img bs=1M count=64 2>/dev/null
losetup /dev/loop1 /tmp/nfsdisk.img
section dmsetup dmsetup create nfsslow --noudevsync --table '0 131072 delay /dev/loop1 0 0 /dev/loop1 0 20'
dmsetup mknodes nfsslow
section mkfs_export /opt/bin/mkfs.ext4 -q -E lazy_itable_init=1,lazy_journal_init=1 /dev/mapper/nfsslow
mkdir -p /export/slow
mount -t ext4 /dev/mapper/nfsslow /export/slow
cat > /tmp/client4.sh <<'X'
mkdir -p /mnt/slow
/opt/bin/mount.nfs4 10.0.0.1:/slow /mnt/slow -o vers=4.2,rsize=1048576,wsize=1048576 || exit 23
/opt/bin/hlctl --json bench file --dir /mnt/slow --size 16M --no-net --no-disk --no-crypto > /tmp/export_$1.json || exit 24
/opt/bin/hlctl bench file --dir /mnt/slow --size 4M --no-net --no-disk --no-crypto > /tmp/export_$1.txt 2>&1 || exit 25
ls -A /mnt/slow | grep -vx lost+found > /tmp/export_left_$1.txt
umount /mnt/slow
X
for how in sync async; do
    section exportfs_$how exportfs -o rw,insecure,no_subtree_check,$how,no_root_squash,fsid=1 10.0.0.0/24:/export/slow
    section client4_$how ip netns exec cli sh /tmp/client4.sh $how
    exportfs -u 10.0.0.0/24:/export/slow
done
for how in sync async; do
    section export_$how cat /tmp/export_$how.json
    section export_text_$how cat /tmp/export_$how.txt
    section export_left_$how cat /tmp/export_left_$how.txt
done
section side_dd cat /tmp/side_dd.txt
section side_left cat /tmp/side_left.txt
for i in 1 2 3; do section side_hlctl$i cat /tmp/side_hlctl$i.json; done
section mountinfo1 cat /tmp/mountinfo1.txt
section mountinfo2 cat /tmp/mountinfo2.txt
section nfs_opts cat /tmp/nfs_opts.json
section nfs_opts_text cat /tmp/nfs_opts.txt
section nfs_net cat /tmp/nfs_net.json
section nfs_net_text cat /tmp/nfs_net.txt
section nfs_file cat /tmp/nfs_file.json
section nfs_workload cat /tmp/nfs_workload.json
"#;

/// After NFS: smbd on 10.0.0.1 (the NFS server's side of the veth pair),
/// the client in namespace `cli`.
const SMB: &str = r#"
echo 'lab:x:1000:1000:lab:/srv:/bin/false' >> /etc/passwd
echo 'lab:x:1000:' >> /etc/group
mkdir -p /etc/samba /var/lib/samba/private /var/cache/samba /var/log/samba /run/samba /srv
mount -t tmpfs -o size=96m tmpfs /srv
mkdir -p /srv/plain /srv/sealed /srv/required /srv/signing
chown lab:lab /srv/plain /srv/sealed /srv/required /srv/signing
cat > /etc/samba/smb.conf <<'X'
[global]
	netbios name = HLGUEST
	server role = standalone server
	server min protocol = SMB3
	passdb backend = tdbsam
	disable netbios = yes
	smb ports = 445
	dos charset = ASCII
	load printers = no
	printing = bsd
	printcap name = /dev/null
	disable spoolss = yes
	log file = /var/log/samba/log.%m
	log level = 1
[plain]
	path = /srv/plain
	read only = no
[sealed]
	path = /srv/sealed
	read only = no
[required]
	path = /srv/required
	read only = no
	smb encrypt = required
[signing]
	path = /srv/signing
	read only = no
X
printf 'secret\nsecret\n' | section pdbedit /usr/bin/pdbedit -a -t -u lab
section smbd /usr/sbin/smbd -D
# smbd listens on 445 (0x01BD) within 10 s.
i=0; while ! grep -q ':01BD 00000000:0000 0A' /proc/net/tcp && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
# A local disk throttled to 4 MB/s each way: ext4 on a loop device whose
# reads and writes a cgroup's io.max caps (memory too, so that writeback
# is charged to the cgroup).
dd if=/dev/zero of=/tmp/slow.img bs=1M count=112 2>/dev/null
losetup /dev/loop0 /tmp/slow.img
section mkfs /opt/bin/mkfs.ext4 -q /dev/loop0
mkdir -p /slow /sys/fs/cgroup
mount -t ext4 /dev/loop0 /slow
mount -t cgroup2 none /sys/fs/cgroup
echo '+io +memory' > /sys/fs/cgroup/cgroup.subtree_control
mkdir /sys/fs/cgroup/slow
section iomax sh -c 'echo "7:0 rbps=4000000 wbps=4000000" > /sys/fs/cgroup/slow/io.max'
cat > /tmp/smb.sh <<'X'
o=username=lab,password=secret,vers=3.1.1
for s in plain sealed required signed; do mkdir -p /mnt/$s; done
/opt/bin/mount.cifs //10.0.0.1/plain /mnt/plain -o $o || exit 30
/opt/bin/mount.cifs //10.0.0.1/sealed /mnt/sealed -o $o,seal || exit 31
/opt/bin/mount.cifs //10.0.0.1/required /mnt/required -o $o || exit 32
/opt/bin/mount.cifs //10.0.0.1/signing /mnt/signed -o $o,sign || exit 29
grep ' - cifs ' /proc/self/mountinfo > /tmp/smb_mountinfo.txt
cat /proc/fs/cifs/DebugData > /tmp/smb_debugdata.txt
for s in plain sealed required signed; do
    /opt/bin/hlctl --json bench file --dir /mnt/$s --size 8M --no-disk > /tmp/smb_$s.json || exit 33
done
/opt/bin/hlctl bench file --dir /mnt/required --size 1M --no-disk --no-net > /tmp/smb_required.txt 2>&1 || exit 34
# Side by side on the plain share, alternating, 3 rounds of 16 MiB: bench
# file, dd on the mount (its write synced, its read after dropping the
# caches) and Samba's own client, smbclient (put, then get).
/opt/bin/dd if=/dev/zero of=/tmp/src16 bs=1M count=16 2>/dev/null
for i in 1 2 3; do
    /opt/bin/hlctl --json bench file --dir /mnt/plain --size 16M --no-net --no-disk --no-crypto > /tmp/smb_side_hlctl$i.json || exit 36
    /opt/bin/dd if=/tmp/src16 of=/mnt/plain/dd.bin bs=1M conv=fsync 2>> /tmp/smb_side_dd.txt || exit 37
    echo 3 > /proc/sys/vm/drop_caches
    /opt/bin/dd if=/mnt/plain/dd.bin of=/dev/null bs=1M 2>> /tmp/smb_side_dd.txt || exit 38
    rm -f /mnt/plain/dd.bin
    /usr/bin/smbclient //10.0.0.1/plain -U lab%secret -m SMB3 \
        -c 'put /tmp/src16 sc.bin; get sc.bin /dev/null; rm sc.bin' >> /tmp/smb_side_smbclient.txt 2>&1 || exit 39
done
ls -A /mnt/plain /mnt/sealed /mnt/required /mnt/signed > /tmp/smb_left.txt
# The server's own word on each session's cipher, while they are up.
/usr/bin/smbstatus -b > /tmp/smbstatus.txt 2>&1
umount /mnt/plain /mnt/sealed /mnt/required /mnt/signed
X
section smb ip netns exec cli sh /tmp/smb.sh
# The plain share, with the file's local side on the throttled disk: the
# client joins the cgroup before `ip netns exec`, whose own /sys has no
# cgroup mount.
cat > /tmp/smb_slow.sh <<'X'
mkdir -p /mnt/plain
/opt/bin/mount.cifs //10.0.0.1/plain /mnt/plain -o username=lab,password=secret,vers=3.1.1 || exit 40
/opt/bin/hlctl --json bench file --dir /mnt/plain --size 8M --no-net --local-dir /slow > /tmp/smb_slowdisk.json || exit 41
umount /mnt/plain
X
section smb_slow sh -c 'echo $$ > /sys/fs/cgroup/slow/cgroup.procs && exec /opt/bin/ip netns exec cli sh /tmp/smb_slow.sh'
section smbstatus cat /tmp/smbstatus.txt
section smb_mountinfo cat /tmp/smb_mountinfo.txt
section smb_debugdata cat /tmp/smb_debugdata.txt
for s in plain sealed required signed; do section smb_$s cat /tmp/smb_$s.json; done
section smb_required_text cat /tmp/smb_required.txt
section smb_slowdisk cat /tmp/smb_slowdisk.json
section smb_side_dd cat /tmp/smb_side_dd.txt
section smb_side_smbclient cat /tmp/smb_side_smbclient.txt
for i in 1 2 3; do section smb_side_hlctl$i cat /tmp/smb_side_hlctl$i.json; done
section smb_left cat /tmp/smb_left.txt
"#;

fn boot() -> VmOutput {
    let root = nfs_utils_root();
    let cifs = unpacked(&["cifs-utils"]);
    let sbin = |b: &str| format!("{root}/usr/sbin/{b}");
    let mut vm = Vm::builder();
    for (src, dest) in samba_files() {
        vm = vm.file(src, &dest);
    }
    for m in [
        "loop",
        "crc32c_generic",
        "ext4",
        "cifs",
        "cmac",
        "ccm",
        "gcm",
        "ctr",
        "ghash_generic",
        "sha512_generic",
    ] {
        vm = vm.module(m);
    }
    vm.binary(format!("{cifs}/sbin/mount.cifs"))
        .binary("/usr/sbin/mkfs.ext4")
        .iproute2()
        .binary("/usr/sbin/ethtool")
        .binary("/usr/bin/iperf3")
        .binary("/usr/bin/dd")
        .binary("/usr/sbin/dmsetup")
        .binary(env!("CARGO_BIN_EXE_hlctl"))
        .binary(sbin("rpc.nfsd"))
        .binary(sbin("rpc.mountd"))
        .binary(sbin("exportfs"))
        .binary_as(format!("{root}/sbin/mount.nfs"), "mount.nfs4")
        .file("/etc/netconfig", "/etc/netconfig")
        .module("veth")
        .module("bonding")
        .module("sch_tbf")
        .module("nfsd")
        .module("nfsv4")
        .module("dm_delay")
        .memory_mb(768)
        .script(BOND)
        .script(NFS)
        .script(SMB)
        .timeout(480)
        .run()
}

fn stack_of(show: &Value) -> &Value {
    &show["interfaces"][0]["stack"]
}

fn check_bond(out: &VmOutput) {
    let upper = out.json("bshow_upper");
    let lower = out.json("bshow_lower");
    let st = stack_of(&upper);
    assert_eq!(st["top"], "bond0", "{st}");
    assert_eq!(st, stack_of(&lower), "the same stack from bond0 and ba2");
    let bond = &st["members"][0];
    assert_eq!(bond["name"], "bond0");
    assert_eq!(bond["bond_mode"], "active-backup", "{bond}");
    assert_eq!(strings(&bond["lowers"]), ["ba1", "ba2"], "{bond}");
    let active = bond["active_slave"].as_str().expect("an active slave");
    let states: Vec<(&str, &str)> = st["members"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|m| {
            (
                m["name"].as_str().unwrap(),
                m["port_state"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(states.contains(&(active, "active")), "{states:?}");
    let text = out.section("bshow_text").text;
    assert!(
        text.contains(&format!(
            "bond0: active-backup, slaves ba1 ba2, active {active}"
        )),
        "{text}"
    );
    assert!(text.contains("ba1: slave of bond0"), "{text}");
    assert!(text.contains("sum of its active slaves"), "{text}");

    let du = out.json("bdoc_upper");
    let dl = out.json("bdoc_lower");
    assert_eq!(du["stacks"], dl["stacks"]);
    for d in [&du, &dl] {
        assert_eq!(
            sorted_strings(&d["interfaces"]),
            ["ba1", "ba2", "bond0"],
            "{d}"
        );
        let off = finding(d, "offload-off").unwrap_or_else(|| panic!("{d}"));
        assert_eq!(off["interface"], "ba1", "{off}");
        assert!(passed(d, "bond-speed"), "{d}");
    }

    // The offloads planted off on the slave are fixed by tuning the bond.
    let t = out.json("btune");
    let tries = out.section("btries").text;
    eprintln!("bond tune: {} tr(ies)", tries.lines().count());
    let o = step(&t, "offloads-on");
    eprintln!("bond tune, offloads back on: {}", o["reason"]);
    assert_eq!(
        o["status"], "kept",
        "offloads on the slave not kept in 3 tries: {o}"
    );
    assert!(
        step_settings(o)
            .iter()
            .any(|x| x.starts_with("ba1: feature")),
        "{o}"
    );
    let k = out.section("bk1").text;
    for f in [
        "tcp-segmentation-offload: on",
        "generic-segmentation-offload: on",
        "scatter-gather: on",
    ] {
        assert!(k.contains(f), "ba1 after the tune: {f} missing:\n{k}");
    }

    // The MTU candidate covers the bond and both slaves, and is undone as one.
    let s = step(&t, "mtu-jumbo");
    assert_eq!(step_settings(s), ["mtu", "ba1: mtu", "ba2: mtu"], "{s}");
    assert_eq!(s["status"], "reverted", "{s}");
    assert!(
        s["reason"]
            .as_str()
            .unwrap()
            .contains("does not reach the peer"),
        "{s}"
    );
    let bmtu = out.section("bmtu").text;
    let mtus: Vec<&str> = bmtu.lines().map(str::trim).collect();
    assert_eq!(mtus, ["1500", "1500", "1500"]);
}

/// dd's own figures (its stderr, "33554432 bytes (34 MB, 32 MiB) copied,
/// 0.27 s, 124 MB/s"), in bytes/s, each of `bytes`.
fn dd_rates(text: &str, bytes: u64) -> Vec<f64> {
    text.lines()
        .filter(|l| l.contains(" copied, "))
        .map(|l| {
            let n: u64 = l.split(' ').next().unwrap().parse().unwrap();
            assert_eq!(n, bytes, "{l}");
            let secs: f64 = l
                .split(" copied, ")
                .nth(1)
                .and_then(|r| r.split(' ').next())
                .and_then(|t| t.parse().ok())
                .unwrap_or_else(|| panic!("no seconds in {l}"));
            n as f64 / secs
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// bench file's figures on the mount against dd's on the same export in the
/// same boot, alternating: each direction's median of 3 within a factor of
/// 1.67 of dd's own (both O_DIRECT, 1 MiB blocks, 32 MiB, each timing only its
/// transfer: dd's figure is the one it prints, not its process's run,
/// whose start alone is a large share under TCG; a TCG guest on a shared
/// machine moves single runs by more than the issue's 10 %, so the ratios
/// are printed for the record and only a wrong measurement — the page
/// cache, a wrong size or time — fails), and nothing left on the export.
fn check_side_by_side(out: &VmOutput) {
    assert_eq!(
        out.section("client3").rc,
        0,
        "client3: {:?}",
        out.try_section("client3.stderr").map(|s| s.text)
    );
    let rates = dd_rates(&out.section("side_dd").text, 32 << 20);
    let dd: Vec<(f64, f64)> = rates.chunks(2).map(|c| (c[0], c[1])).collect();
    assert_eq!(dd.len(), 3, "{dd:?}");
    let mut hl = (Vec::new(), Vec::new());
    for i in 1..=3 {
        let f = out.json(&format!("side_hlctl{i}"));
        assert_eq!(f["file"]["protocol"], "nfs4", "{f}");
        assert_eq!(f["file"]["io"]["direct"], true, "{f}");
        hl.0.push(f["file"]["write"]["bytes_per_second"].as_f64().unwrap());
        hl.1.push(f["file"]["read"]["bytes_per_second"].as_f64().unwrap());
    }
    let (hw, hr) = (median(hl.0), median(hl.1));
    let (dw, dr) = (
        median(dd.iter().map(|x| x.0).collect()),
        median(dd.iter().map(|x| x.1).collect()),
    );
    eprintln!(
        "NFS 4.2 side by side, medians of 3 (MB/s): write hlctl {:.1} dd {:.1} ({:.3}x), read hlctl {:.1} dd {:.1} ({:.3}x)",
        hw / 1e6,
        dw / 1e6,
        hw / dw,
        hr / 1e6,
        dr / 1e6,
        hr / dr
    );
    for (what, ratio) in [("write", hw / dw), ("read", hr / dr)] {
        assert!(
            (0.6..=1.67).contains(&ratio),
            "{what}: bench file {ratio:.3}x dd's figure"
        );
    }
    assert_eq!(
        out.section("side_left").text.trim(),
        "",
        "a file was left on the export"
    );
}

fn check_nfs(out: &VmOutput) {
    for c in ["client1", "client2"] {
        let client = out.section(c);
        assert_eq!(
            client.rc,
            0,
            "{c} failed: {:?}; nfsd: {:?} mountd: {:?} exportfs: {:?}",
            out.try_section(&format!("{c}.stderr")).map(|s| s.text),
            out.try_section("nfsd.stderr").map(|s| s.text),
            out.try_section("mountd.stderr").map(|s| s.text),
            out.try_section("exportfs.stderr").map(|s| s.text),
        );
    }
    // A real NFS mount with the options asked for, as the kernel reports them.
    let mi = out.section("mountinfo1").text;
    assert!(mi.contains(" - nfs4 10.0.0.1:/ "), "{mi}");
    assert!(
        mi.contains("vers=4.0") && mi.contains("rsize=65536"),
        "{mi}"
    );

    // Bad options, no network figure: the options are the limit.
    let r = out.json("nfs_opts");
    let storage = r["storage"].as_array().unwrap();
    assert_eq!(storage.len(), 2, "{r}");
    for s in storage {
        let m = &s["measured"]["Ok"];
        assert!(m["write_mb_s"].as_f64().unwrap() > 0.0, "{s}");
        assert!(m["read_mb_s"].as_f64().unwrap() > 0.0, "{s}");
    }
    for id in ["nfs-small-rsize-wsize", "nfs-sync", "nfs-old-version"] {
        assert!(finding(&r, id).is_some(), "no {id} in {r}");
    }
    let f = finding(&r, "storage-layer").unwrap_or_else(|| panic!("{r}"));
    assert_eq!(evidence(f, "limit"), "settings", "{f}");
    // bench file's own sentence for the same mount, its rules and words
    // (on the slower direction: 64 KiB blocks either way, sync on writes).
    let v = evidence(f, "verdict");
    assert!(
        v.starts_with("NFS4 ")
            && v.contains("the protocol's settings hold it (")
            && v.contains("=65536, below 1 MiB"),
        "{v}"
    );
    let t = out.section("nfs_opts_text").text;
    eprintln!("{t}");
    assert!(
        t.contains("/mnt/nas (nfs4): limited by its mount options"),
        "{t}"
    );

    // Good options, a 20 Mbit/s link measured with --peer: the network.
    let mi = out.section("mountinfo2").text;
    assert!(
        mi.contains("vers=4.2") && mi.contains("rsize=1048576"),
        "{mi}"
    );
    let r = out.json("nfs_net");
    assert!(finding(&r, "nfs-sync").is_none(), "{r}");
    let f = finding(&r, "storage-layer").unwrap_or_else(|| panic!("{r}"));
    assert_eq!(evidence(f, "limit"), "network", "{f}");
    let net: f64 = evidence(f, "network to the peer (slower direction)")
        .trim_end_matches(" MB/s")
        .parse()
        .unwrap();
    // What the peer measured is the shaped link's (at most 20 Mbit/s = 2.5
    // MB/s; TCG and a shared machine make it slower, never faster).
    assert!(
        net > 0.0 && net < 3.0,
        "20 Mbit/s = 2.5 MB/s, measured {net} MB/s"
    );
    let t = out.section("nfs_net_text").text;
    eprintln!("{t}");
    assert!(t.contains("/mnt/nas (nfs4): limited by the network"), "{t}");

    // A workload on the mount is judged on the mount's read over NFS
    // (`bench file --dir`'s "file nfs4 read"), the newest read of it.
    let file = out.json("nfs_file");
    let read = file["file"]["read"]["bytes_per_second"]
        .as_f64()
        .unwrap_or_else(|| panic!("no read figure: {file}"));
    let r = out.json("nfs_workload");
    let row = r["workloads"][0]["rows"]
        .as_array()
        .and_then(|rows| rows.iter().find(|x| x["layer"] == "disk-read"))
        .unwrap_or_else(|| panic!("no disk-read row: {r}"));
    let source = row["source"].as_str().unwrap();
    assert!(
        source.contains("file nfs4 read of /mnt/nas (file,"),
        "the read layer is not the mount's: {row}"
    );
    assert_eq!(row["measured"].as_f64(), Some(read), "{row}");
}

/// The export on a disk slow to write, `sync` then `async`: the sync
/// export's write verdict names it, from the WRITEs' round trips against
/// the reads'; the async export's does not, and writes faster.
fn check_sync_export(out: &VmOutput) {
    let mut write_mb = Vec::new();
    for how in ["sync", "async"] {
        let c = out.section(&format!("client4_{how}"));
        assert_eq!(
            c.rc,
            0,
            "{how} export: {:?}; exportfs: {:?}; dmsetup: {:?}",
            out.try_section(&format!("client4_{how}.stderr"))
                .map(|s| s.text),
            out.try_section(&format!("exportfs_{how}.stderr"))
                .map(|s| s.text),
            out.try_section("dmsetup.stderr").map(|s| s.text),
        );
        let r = out.json(&format!("export_{how}"));
        let write = &r["file"]["write"];
        let rpcs = &write["nfs_rpcs"];
        assert!(
            rpcs["ops"].as_u64().unwrap_or(0) > 0,
            "{how}: no WRITE counted: {write}"
        );
        assert!(
            r["file"]["read"]["nfs_rpcs"]["ops"].as_u64().unwrap_or(0) > 0,
            "{how}: {r}"
        );
        let v = r["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["direction"] == "write")
            .unwrap_or_else(|| panic!("no write verdict: {r}"));
        let sentence = v["sentence"].as_str().unwrap();
        eprintln!("{how} export: {sentence}; write RPCs {rpcs}");
        let names_sync = sentence.contains("a `sync` export");
        assert_eq!(names_sync, how == "sync", "{how} export: {sentence}");
        if how == "sync" {
            assert_eq!(v["limit"], "settings", "{v}");
            let text = out.section("export_text_sync").text;
            assert!(text.contains("a `sync` export"), "{text}");
        }
        assert_eq!(
            out.section(&format!("export_left_{how}")).text.trim(),
            "",
            "left behind"
        );
        write_mb.push(write["bytes_per_second"].as_f64().unwrap() / 1e6);
    }
    // Its cost, as the verdict says it: the async export writes faster.
    assert!(write_mb[1] > write_mb[0], "sync {write_mb:?} async MB/s");
}

/// The three SMB shares through `bench file`: what the kernel's client
/// says of each, the encryption named, and its cost.
fn check_smb(out: &VmOutput) {
    let smb = out.section("smb");
    assert_eq!(
        smb.rc,
        0,
        "the SMB client failed: {:?}; smbd: {:?}; pdbedit: {:?}",
        out.try_section("smb.stderr").map(|s| s.text),
        out.try_section("smbd.stderr").map(|s| s.text),
        out.try_section("pdbedit.stderr").map(|s| s.text),
    );
    // Only the sealed mount's options say `seal`.
    let mi = out.section("smb_mountinfo").text;
    let line = |share: &str| {
        mi.lines()
            .find(|l| l.contains(&format!(" //10.0.0.1/{share} ")))
            .unwrap_or_else(|| panic!("no {share} mount: {mi}"))
    };
    assert!(line("sealed").contains(",seal,"), "{mi}");
    for share in ["plain", "required"] {
        assert!(!line(share).contains("seal"), "{mi}");
    }
    // The cipher the server says each session uses.
    let status = out.section("smbstatus").text;
    eprintln!("smbstatus -b:\n{status}");
    let ran = |share: &str| out.json(&format!("smb_{share}"));
    let (plain, sealed, required) = (ran("plain"), ran("sealed"), ran("required"));
    let signed = ran("signed");
    // DebugData says `Encrypted` of both encrypted shares, and the share
    // flag of the one whose server requires it; a share mounted with
    // `sign` (which its options do not show) is named for its signing, from
    // the connection DebugData calls `signed`.
    for (share, r, encrypted, server, named) in [
        ("plain", &plain, false, false, None),
        ("sealed", &sealed, true, false, Some("AES-128-GCM via seal")),
        (
            "required",
            &required,
            true,
            true,
            Some("AES-128-GCM required by the server for this share"),
        ),
        (
            "signing",
            &signed,
            false,
            false,
            Some("AES-128-CMAC signing (the connection signs)"),
        ),
    ] {
        let s = &r["file"]["mount"]["smb"];
        assert_eq!(s["unc"], format!(r"\\10.0.0.1\{share}"), "{r}");
        // The server's address and the client's interface toward it: the
        // matrix's link share (vc is a veth: its speed is nominal).
        assert_eq!(
            (r["address"].as_str(), r["interface"].as_str()),
            (Some("10.0.0.1"), Some("vc")),
            "{share}"
        );
        assert_eq!(s["dialect"], "3.1.1", "{s}");
        assert_eq!(s["encrypted"], encrypted, "{share}: {s}");
        assert_eq!(s["server_encrypts"], server, "{share}: {s}");
        assert_eq!(s["signed"], share == "signing", "{share}: {s}");
        for v in r["verdicts"].as_array().expect("verdicts") {
            eprintln!("{share}: {}", v["sentence"]);
            assert_eq!(v["encryption"].as_str(), named, "{share}: {v}");
            let sentence = v["sentence"].as_str().unwrap();
            if v["limit"] == "encryption" {
                assert!(sentence.contains(named.unwrap()), "{sentence}");
            }
            // Signing's cost is measured (AES-128-CMAC per core) and said,
            // as the limit or as evidence when nothing here holds it.
            if share == "signing"
                && ["encryption", "elsewhere"].contains(&v["limit"].as_str().unwrap())
            {
                assert!(sentence.contains("this CPU signs"), "{sentence}");
            }
        }
        if let Some(named) = named {
            let cipher = named.split(' ').next().unwrap();
            assert!(
                status.contains(cipher),
                "the server says otherwise: {status}"
            );
        }
    }
    // The kernel's SMB client receives in cifsd: counted for the plain
    // share's read (0.25 of a core seen under TCG), named in the JSON.
    let kernel = plain["file"]["read"]["kernel_threads"]
        .as_array()
        .unwrap_or_else(|| panic!("no kernel threads: {plain}"));
    assert!(
        kernel
            .iter()
            .any(|k| k["name"] == "cifsd" && k["cores"].as_f64().unwrap() > 0.01),
        "{kernel:?}"
    );
    // Encryption costs: each encrypted share reads slower than the plain
    // one (5-10x under TCG, where neither side has AES-NI's speed).
    let read = |r: &Value| r["file"]["read"]["bytes_per_second"].as_f64().unwrap();
    for (share, r) in [("sealed", &sealed), ("required", &required)] {
        assert!(
            read(r) < 0.7 * read(&plain),
            "{share} read {:.1} MB/s, plain {:.1} MB/s",
            read(r) / 1e6,
            read(&plain) / 1e6
        );
    }
    let t = out.section("smb_required_text").text;
    assert!(
        t.contains(r"smb: \\10.0.0.1\required 3.1.1, encrypted (the server requires it)"),
        "{t}"
    );
    assert_eq!(
        out.section("smb_left")
            .text
            .lines()
            .filter(|l| l.starts_with(".hlctl"))
            .count(),
        0
    );
}

/// smbclient's own figures: (put, get) in bytes/s per round, from
/// "putting file … (4096.0 kb/s) (average …)" and "getting file … (…
/// KiloBytes/sec) …", both KiB/s.
fn smbclient_rates(text: &str) -> Vec<(f64, f64)> {
    let rate = |l: &str| -> f64 {
        let inner = l.split('(').nth(1).and_then(|r| r.split(' ').next());
        inner
            .and_then(|n| n.parse::<f64>().ok())
            .unwrap_or_else(|| panic!("no rate in {l}"))
            * 1024.0
    };
    let puts = text.lines().filter(|l| l.starts_with("putting file"));
    let gets = text.lines().filter(|l| l.starts_with("getting file"));
    puts.zip(gets).map(|(p, g)| (rate(p), rate(g))).collect()
}

/// The SMB share's throttled local disk, and bench file beside dd and
/// smbclient on the plain share.
fn check_smb_disk_and_side_by_side(out: &VmOutput) {
    // The file's local side on a disk capped at 4 MB/s: the disk is named,
    // with the directory it was measured in.
    assert_eq!(
        out.section("smb_slow").rc,
        0,
        "{:?}",
        out.try_section("smb_slow.stderr").map(|s| s.text)
    );
    let r = out.json("smb_slowdisk");
    let disk = &r["disk"]["measured"];
    eprintln!("throttled disk: {disk}");
    for k in ["write_bytes_per_second", "read_bytes_per_second"] {
        let bps = disk[k].as_f64().unwrap_or_else(|| panic!("{k}: {r}"));
        assert!(bps < 6e6, "{k} {bps} above the 4 MB/s cap");
    }
    for v in r["verdicts"].as_array().unwrap() {
        eprintln!("throttled disk: {}", v["sentence"]);
        assert_eq!(v["limit"], "local-disk", "{v}");
        assert!(v["sentence"].as_str().unwrap().contains("/slow"), "{v}");
    }
    // Side by side, medians of 3 alternating rounds.
    let dd = dd_rates(&out.section("smb_side_dd").text, 16 << 20);
    assert_eq!(dd.len(), 6, "{dd:?}");
    let sc = smbclient_rates(&out.section("smb_side_smbclient").text);
    assert_eq!(sc.len(), 3, "{}", out.section("smb_side_smbclient").text);
    let (mut hw, mut hr) = (Vec::new(), Vec::new());
    for i in 1..=3 {
        let f = out.json(&format!("smb_side_hlctl{i}"));
        assert_eq!(f["file"]["protocol"], "cifs", "{f}");
        hw.push(f["file"]["write"]["bytes_per_second"].as_f64().unwrap());
        hr.push(f["file"]["read"]["bytes_per_second"].as_f64().unwrap());
    }
    let (hw, hr) = (median(hw), median(hr));
    let dw = median(dd.iter().step_by(2).copied().collect());
    let dr = median(dd.iter().skip(1).step_by(2).copied().collect());
    let sw = median(sc.iter().map(|x| x.0).collect());
    let sr = median(sc.iter().map(|x| x.1).collect());
    eprintln!(
        "SMB 3.1.1 plain share side by side, medians of 3 (MB/s): \
         write hlctl {:.1} dd {:.1} ({:.3}x) smbclient {:.1} ({:.3}x); \
         read hlctl {:.1} dd {:.1} ({:.3}x) smbclient {:.1} ({:.3}x)",
        hw / 1e6,
        dw / 1e6,
        hw / dw,
        sw / 1e6,
        hw / sw,
        hr / 1e6,
        dr / 1e6,
        hr / dr,
        sr / 1e6,
        hr / sr
    );
    // The same kernel client as dd: the NFS bounds (see check_side_by_side).
    // smbclient is Samba's own client in user space, another code path that
    // writes 2-3.3x faster than the kernel's under TCG (0.30x seen): a
    // factor of 5 either way still catches a figure in bits for bytes or of
    // the wrong time.
    for (what, ratio, lo, hi) in [
        ("write vs dd", hw / dw, 0.6, 1.67),
        ("read vs dd", hr / dr, 0.6, 1.67),
        ("write vs smbclient", hw / sw, 0.2, 5.0),
        ("read vs smbclient", hr / sr, 0.2, 5.0),
    ] {
        assert!((lo..=hi).contains(&ratio), "{what}: bench file {ratio:.3}x");
    }
}

#[test]
fn bond_stack_and_nfs_and_smb_playbooks_in_one_boot() {
    let out = boot();
    out.report_and_assert_success(&[]);
    check_bond(&out);
    check_nfs(&out);
    check_sync_export(&out);
    check_side_by_side(&out);
    check_smb(&out);
    check_smb_disk_and_side_by_side(&out);
}
