# Sourced first by the scripts that need root (demo.sh, test.sh), before they
# change directory. As root it returns; as anyone else it runs the script
# again through sudo. A Proxmox VE host works as root and has no sudo
# ("sudo: command not found" for a README line that starts with sudo); a
# desktop user has sudo. HLCTL_ROOT_CHECK_ONLY=1 stops the script here with
# status 0 once it runs as root (tests/docs_examples.rs runs the README's
# first two lines that way).
if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || {
        echo "$0: run as root (it creates network namespaces); sudo is not installed" >&2
        exit 2
    }
    exec sudo -- "$(realpath "$0")" "$@"
fi
if [ -n "${HLCTL_ROOT_CHECK_ONLY:-}" ]; then
    echo "$0: as root"
    exit 0
fi
