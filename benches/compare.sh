#!/usr/bin/env bash
# hlctl against the tools people trust, side by side in one run, alternating
# rounds (A B A B ...), printing medians and the ratio us/peer:
#   network: hlctl vs iperf3 3.12 on loopback (benches/compare_net.sh)
#   disk and CPU: hlctl vs fio 3.33 (io_uring) and sysbench 1.0.20 (benches/compare_disk_cpu.sh)
# Needs root: hlctl runs in-process (--local), so the figures and CPU times are those of
# the process doing the work, never of an idle CLI whose benchmark ran inside hlctld.
# Needs the packages scripts/setup.sh installs.
# Usage: sudo ROUNDS=5 benches/compare.sh [DIR-for-the-disk-test | --ram]
#   (--ram: the disk rows on a RAM-backed ext4, see compare_disk_cpu.sh)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
echo "== network (iperf3) =="
"$here/compare_net.sh"
echo
echo "== disk and CPU (fio, sysbench) =="
"$here/compare_disk_cpu.sh" "$@"
