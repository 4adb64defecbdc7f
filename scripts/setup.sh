#!/usr/bin/env bash
# Install everything hlctl's tests, demo and benchmarks need on Debian 12 (as root).
# Idempotent: fast when everything is already there.
set -euo pipefail

PKGS=(iproute2 ethtool iperf3 fio sysbench stress-ng strace procps iputils-ping
      qemu-system-x86 busybox-static cpio kmod xz-utils e2fsprogs binutils
      dbus polkitd libxml2-utils jq time systemd
      lintian debootstrap dpkg-dev man-db util-linux
      prometheus prometheus-node-exporter chromium
      chromium-driver python3-selenium  # tests/vm_cockpit.rs drives the Cockpit page
      python3-dbus python3-gi  # the D-Bus API from outside Rust (tests/python/*.py)
      python3-venv  # a venv for the PyPI package iperf3 (below)
      podman buildah  # the OCI image (scripts/build-image.sh) and tests/container.rs
      runc  # tests/container.rs: crun cannot start containers where CI is itself a container
      docker.io  # tests/container.rs: docker load/run (its own dockerd in a test namespace)
      libwrap0)  # libwrap0: rpc.mountd (nfs-kernel-server, unpacked for the NFS VM test) links it

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

# Node.js and npm for tests/grafana_dashboard.rs (it type-checks the Grafana
# dashboard with tsc and @grafana/schema, which it installs itself with `npm
# ci`). Only when missing: a machine may carry its own Node.js build.
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
    echo "setup: installing nodejs npm"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
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

# The kernel the qemu VM tests boot (Debian's stock kernel, with e1000e, veth, netem...).
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -x "$here/tests/vm/fetch-kernel.sh" ]; then
    # + virtio_net for tests/vm_slow_link.rs (its paravirtual NIC).
    "$here/tests/vm/fetch-kernel.sh" virtio_pci virtio_net >/dev/null
    # vm_stacks_nfs.rs: bonding and the NFS server/client modules, and the
    # NFS tools unpacked from Debian's packages (never installed on the host).
    "$here/tests/vm/fetch-kernel.sh" bonding nfsd nfsv4 >/dev/null
    "$here/tests/vm/fetch-debs.sh" nfs-kernel-server nfs-common >/dev/null
fi
# cargo-deb (pinned in scripts/build-deb.sh) for the package tests: installed
# with `cargo install --locked` into ~/.cargo/bin only when missing (~3 min once).
"$here/scripts/build-deb.sh" --install-cargo-deb
echo "setup: ok"
