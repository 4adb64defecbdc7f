//! Linux capabilities this process holds, and whether it runs in a
//! container: a change refused for lack of one says which, and how to get
//! it (`--cap-add NET_ADMIN` in a container, root otherwise), before
//! anything is touched.

/// One capability: its bit in `CapEff` and the names users type.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cap {
    pub(crate) bit: u32,
    /// `CAP_NET_ADMIN`
    pub(crate) name: &'static str,
    /// `NET_ADMIN`, as `--cap-add` takes it.
    pub(crate) short: &'static str,
}

/// Changing NIC settings (netlink `RTM_NEWLINK`, ethtool `*_SET`).
pub(crate) const NET_ADMIN: Cap = Cap {
    bit: 12,
    name: "CAP_NET_ADMIN",
    short: "NET_ADMIN",
};

/// The effective capability set, from /proc/self/status (`None`: unknown).
fn effective() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_cap_eff(&status)
}

fn parse_cap_eff(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("CapEff:"))?;
    u64::from_str_radix(line["CapEff:".len()..].trim(), 16).ok()
}

/// True unless the process surely lacks `cap` (unknown counts as held: the
/// kernel still refuses then, with its own EPERM).
pub(crate) fn has(cap: Cap) -> bool {
    effective().is_none_or(|e| e & (1 << cap.bit) != 0)
}

/// Docker (`/.dockerenv`), podman (`/run/.containerenv`), or the
/// `container` environment variable systemd-nspawn, LXC and podman set.
pub(crate) fn in_container() -> bool {
    std::path::Path::new("/.dockerenv").exists()
        || std::path::Path::new("/run/.containerenv").exists()
        || std::env::var_os("container").is_some()
}

/// "`what` needs CAP_X: how to get it", or `None` when the process holds it.
pub(crate) fn missing(what: &str, cap: Cap) -> Option<String> {
    (!has(cap)).then(|| message(what, cap, in_container()))
}

fn message(what: &str, cap: Cap, container: bool) -> String {
    let how = if container {
        format!("add --cap-add {} to `docker run`/`podman run`", cap.short)
    } else {
        "run it as root (or through hlctld)".to_string()
    };
    format!("{what} needs {}: {how}", cap.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_eff_and_messages() {
        // Docker's and podman's default set: no NET_ADMIN; with --cap-add NET_ADMIN.
        let s = "Name:\thlctl\nCapInh:\t0000000000000000\nCapEff:\t00000000a80425fb\n";
        let e = parse_cap_eff(s).unwrap();
        assert_eq!(e & (1 << NET_ADMIN.bit), 0);
        let added = parse_cap_eff("CapEff:\t00000000a80435fb\n").unwrap();
        assert_ne!(added & (1 << NET_ADMIN.bit), 0);
        assert_eq!(parse_cap_eff("CapEff:\t0000000000000000\n"), Some(0));
        assert_eq!(parse_cap_eff("Name: x\n"), None);
        assert_eq!(
            message("changing ring rx", NET_ADMIN, true),
            "changing ring rx needs CAP_NET_ADMIN: add --cap-add NET_ADMIN to `docker run`/`podman run`"
        );
        assert!(
            message("changing mtu", NET_ADMIN, false)
                .ends_with("run it as root (or through hlctld)")
        );
    }
}
