#!/usr/bin/env bash
# Install everything hlctl's tests, demo and benchmarks need on Debian 12 (as root).
# Idempotent: fast when everything is already there.
set -euo pipefail

# Every package is used by a test, a benchmark or a build step (the comment
# says which when the name does not); one apt transaction installs them all.
PKGS=(iproute2 ethtool iperf3 fio sysbench strace procps iputils-ping
      dnsmasq-base  # the resolver's search-list test: a real DNS server in a test namespace
      qemu-system-x86 busybox-static cpio e2fsprogs  # the VM rig: tests/vm/, mkfs.ext4 -d for tests/common/sysvm.rs
      xz-utils  # tests/vm/fetch-kernel.sh, when a kernel ships compressed modules
      binutils  # readelf: scripts/build-static.sh, tests/static_binary.rs
      dbus polkitd libxml2-utils jq time systemd
      lintian debootstrap dpkg-dev man-db util-linux  # the .deb (dpkg-shlibdeps for cargo-deb), tests/deb_*.rs
      prometheus prometheus-node-exporter chromium
      chromium-driver python3-selenium  # tests/vm_cockpit.rs drives the Cockpit page
      python3-dbus python3-gi  # the D-Bus API from outside Rust (tests/python/*.py)
      python3-venv  # a venv for the PyPI package iperf3 (below)
      podman buildah  # the OCI image (scripts/build-image.sh) and tests/container.rs
      runc  # tests/container.rs: crun cannot start containers where CI is itself a container
      docker.io  # tests/container.rs: docker load/run (its own dockerd in a test namespace)
      openssh-server  # tests/bench_file_ssh.rs: its own sshd on 127.0.0.1 (policy-rc.d keeps the system one stopped)
      dmsetup  # tests/vm_stacks_nfs.rs: the NFS export's slow disk (dm-delay) in the guest
      libwrap0  # libwrap0: rpc.mountd (nfs-kernel-server, unpacked for the NFS VM test) links it
      # The host's libraries that Samba's smbd, smbclient and mount.cifs (unpacked for
      # the SMB part of tests/vm_stacks_nfs.rs, never installed) link:
      libacl1 libavahi-client3 libavahi-common3 libbsd0 libcap-ng0 libgnutls30
      libicu72 libjansson4 libldap-2.5-0 libgssapi-krb5-2 libkrb5-3 libsystemd0
      libtasn1-6 libzstd1 liblz4-1 libarchive13)
# Node.js and npm for scripts/bundle-patternfly.sh (PatternFly's CSS in the
# .deb's Cockpit page, from the npm registry) and tests/grafana_dashboard.rs (it type-checks the Grafana
# dashboard with tsc and @grafana/schema, which it installs itself with `npm
# ci`), in the same transaction. Only when missing: a machine may carry its
# own Node.js build.
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
    PKGS+=(nodejs npm)
fi

here=$(cd "$(dirname "$0")/.." && pwd)
# cargo-deb (pinned in scripts/build-deb.sh) for the package tests: installed
# with `cargo install --locked` into ~/.cargo/bin only when missing. It
# compiles for ~3 min on a bare machine, on the cores, while apt below waits
# on the network and dpkg: the two run side by side.
deb_log=$(mktemp /tmp/hlctl-setup-cargo-deb.XXXXXX)
"$here/scripts/build-deb.sh" --install-cargo-deb >"$deb_log" 2>&1 &
deb_pid=$!
trap 'kill "$deb_pid" 2>/dev/null || true' EXIT

missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # prometheus and prometheus-node-exporter would start their own services
    # on the host: the fleet tests run their own instances in namespaces.
    own_policy=
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
        chmod 755 /usr/sbin/policy-rc.d
        own_policy=1
    fi
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    [ -z "$own_policy" ] || rm -f /usr/sbin/policy-rc.d
fi

# tests/iperf3_json.rs reads `hlctl bench net -J` with a published reader of
# iperf3's JSON, the PyPI package iperf3 (its TestResult), in a venv of its
# own so that Debian's python3 stays as Debian installed it.
venv=/var/tmp/hlctl-venv
if ! "$venv/bin/python" -c 'import iperf3' 2>/dev/null; then
    echo "setup: installing the PyPI package iperf3 into $venv"
    /usr/bin/python3 -m venv --clear "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check iperf3==0.1.11
fi

# rustfmt and clippy for scripts/test.sh (a minimal rustup profile has neither).
if command -v rustup >/dev/null; then
    for c in rustfmt clippy; do
        rustup component list --installed 2>/dev/null | grep -q "^$c" || rustup component add "$c"
    done
fi

# The kernel the qemu VM tests boot (Debian's stock kernel), fetched once with
# every module any VM test loads (tests/vm/modules.txt), so that no test
# downloads it again; and the NFS tools for tests/vm_stacks_nfs.rs, unpacked
# from Debian's packages (never installed on the host).
# That kernel's headers build tests/vm/failnic (a NIC that refuses setting
# requests on demand; Debian's kernel has no netdevsim) for the refusal tests.
if [ -x "$here/tests/vm/fetch-kernel.sh" ]; then
    kver=$("$here/tests/vm/fetch-kernel.sh" | sed -n 's/^KVER=//p')
    "$here/tests/vm/fetch-debs.sh" nfs-kernel-server nfs-common >/dev/null
    "$here/tests/vm/fetch-debs.sh" samba samba-libs libldb2 liblmdb0 libpopt0 libtalloc2 \
        libtdb1 libtevent0 libwbclient0 smbclient libsmbclient >/dev/null
    "$here/tests/vm/fetch-debs.sh" cifs-utils >/dev/null
    if [ ! -f "/usr/src/linux-headers-$kver/Makefile" ]; then
        apt-get install -y -qq --no-install-recommends "linux-headers-$kver" make >/dev/null
    fi
fi
if ! wait "$deb_pid"; then
    cat "$deb_log" >&2
    echo "setup: installing cargo-deb failed (its output above)" >&2
    exit 1
fi
trap - EXIT
cat "$deb_log" >&2
rm -f "$deb_log"
echo "setup: ok"
