//! Link settings: ETHTOOL_GLINKSETTINGS / ETHTOOL_SLINKSETTINGS (`ethtool
//! DEV`, `ethtool -s DEV ...`), with the legacy ETHTOOL_GSET / ETHTOOL_SSET
//! on kernels before 4.6, and ETHTOOL_GLINK for "link detected".
//!
//! GLINKSETTINGS is a handshake: asked with `link_mode_masks_nwords` 0, the
//! kernel answers with minus its number of mask words; asked again with that
//! number, it fills the three masks (supported, advertising, partner).

use std::os::fd::OwnedFd;

use super::{Command, IoctlError, call, ctl_socket, link_modes, not_supported};
use crate::nic::model::{Duplex, LinkModes, LinkSet, mode_speed_duplex, port_name};

const GSET: u32 = 0x01;
const SSET: u32 = 0x02;
const GLINK: u32 = 0x0a;
const GLINKSETTINGS: u32 = 0x4c;
const SLINKSETTINGS: u32 = 0x4d;
const OP_GET: &str = "ETHTOOL_GLINKSETTINGS";
/// The most mask words `link_mode_masks_nwords` (an s8) can announce.
const MAX_NWORDS: usize = 127;
const DUPLEX_HALF: u8 = 0;
const DUPLEX_FULL: u8 = 1;

/// `struct ethtool_link_settings` with room for the largest masks.
#[repr(C)]
struct LinkSettings {
    cmd: u32,
    speed: u32,
    duplex: u8,
    port: u8,
    phy_address: u8,
    autoneg: u8,
    mdio_support: u8,
    eth_tp_mdix: u8,
    eth_tp_mdix_ctrl: u8,
    nwords: i8,
    transceiver: u8,
    master_slave_cfg: u8,
    master_slave_state: u8,
    rate_matching: u8,
    reserved: [u32; 7],
    masks: [u32; 3 * MAX_NWORDS],
}

// SAFETY: struct ethtool_link_settings; the kernel writes 3 × nwords (≤ 127) mask words.
unsafe impl Command for LinkSettings {}

/// `struct ethtool_cmd` (the legacy GSET/SSET).
#[repr(C)]
struct LegacyCmd {
    cmd: u32,
    supported: u32,
    advertising: u32,
    speed: u16,
    duplex: u8,
    port: u8,
    phy_address: u8,
    transceiver: u8,
    autoneg: u8,
    mdio_support: u8,
    maxtxpkt: u32,
    maxrxpkt: u32,
    speed_hi: u16,
    eth_tp_mdix: u8,
    eth_tp_mdix_ctrl: u8,
    lp_advertising: u32,
    reserved: [u32; 2],
}

// SAFETY: struct ethtool_cmd, plain integers (size asserted below).
unsafe impl Command for LegacyCmd {}

/// `struct ethtool_value` (GLINK).
#[repr(C)]
struct Value {
    cmd: u32,
    data: u32,
}

// SAFETY: struct ethtool_value, two u32s.
unsafe impl Command for Value {}

/// What either answer says, each mask as u32 words.
#[derive(Clone, Debug, Default, PartialEq)]
struct Settings {
    speed: u32,
    duplex: u8,
    port: u8,
    autoneg: bool,
    supported: Vec<u32>,
    advertising: Vec<u32>,
    partner: Vec<u32>,
}

/// The answer as the kernel gave it, to be written back changed.
enum Wire {
    Current(Box<LinkSettings>),
    Legacy(LegacyCmd),
}

impl Wire {
    fn settings(&self) -> Settings {
        match self {
            Wire::Current(v) => {
                let n = v.nwords.max(0) as usize;
                Settings {
                    speed: v.speed,
                    duplex: v.duplex,
                    port: v.port,
                    autoneg: v.autoneg != 0,
                    supported: v.masks[..n].to_vec(),
                    advertising: v.masks[n..2 * n].to_vec(),
                    partner: v.masks[2 * n..3 * n].to_vec(),
                }
            }
            Wire::Legacy(c) => Settings {
                speed: u32::from(c.speed) | u32::from(c.speed_hi) << 16,
                duplex: c.duplex,
                port: c.port,
                autoneg: c.autoneg != 0,
                supported: vec![c.supported],
                advertising: vec![c.advertising],
                partner: vec![c.lp_advertising],
            },
        }
    }

    /// Put speed, duplex, autoneg and advertising back, as the SET command.
    fn store(&mut self, s: &Settings) {
        match self {
            Wire::Current(v) => {
                let n = v.nwords.max(0) as usize;
                v.cmd = SLINKSETTINGS;
                (v.speed, v.duplex, v.autoneg) = (s.speed, s.duplex, u8::from(s.autoneg));
                v.masks[n..2 * n].copy_from_slice(&s.advertising);
                // The ioctl takes no master/slave settings: non-zero is EINVAL.
                (v.master_slave_cfg, v.master_slave_state) = (0, 0);
            }
            Wire::Legacy(c) => {
                c.cmd = SSET;
                c.speed = s.speed as u16;
                c.speed_hi = (s.speed >> 16) as u16;
                (c.duplex, c.autoneg) = (s.duplex, u8::from(s.autoneg));
                c.advertising = s.advertising[0];
            }
        }
    }
}

fn err<'a>(ifname: &'a str, op: &'static str) -> impl Fn(std::io::Error) -> IoctlError + 'a {
    move |e| IoctlError::new(ifname, op, e)
}

/// GLINKSETTINGS (the handshake), else GSET; `None` when the driver has neither.
fn read_wire(fd: &OwnedFd, ifname: &str) -> Result<Option<Wire>, IoctlError> {
    let mut v = Box::new(LinkSettings::with_cmd(GLINKSETTINGS));
    match call(fd, ifname, &mut *v) {
        Ok(()) => {}
        Err(e) if not_supported(&e) => return read_legacy(fd, ifname),
        Err(e) => return Err(err(ifname, OP_GET)(e)),
    }
    let n = -i32::from(v.nwords);
    if n <= 0 {
        let m = format!("the kernel answered {} mask words to 0", v.nwords);
        return Err(IoctlError::invalid(ifname, OP_GET, m));
    }
    let mut v = Box::new(LinkSettings::with_cmd(GLINKSETTINGS));
    v.nwords = n as i8;
    call(fd, ifname, &mut *v).map_err(err(ifname, OP_GET))?;
    if i32::from(v.nwords) != n {
        let m = format!("the kernel changed its mask words from {n} to {}", v.nwords);
        return Err(IoctlError::invalid(ifname, OP_GET, m));
    }
    Ok(Some(Wire::Current(v)))
}

fn read_legacy(fd: &OwnedFd, ifname: &str) -> Result<Option<Wire>, IoctlError> {
    let mut c = LegacyCmd::with_cmd(GSET);
    match call(fd, ifname, &mut c) {
        Ok(()) => Ok(Some(Wire::Legacy(c))),
        Err(e) if not_supported(&e) => Ok(None),
        Err(e) => Err(err(ifname, "ETHTOOL_GSET")(e)),
    }
}

fn bits(words: &[u32]) -> impl Iterator<Item = usize> + '_ {
    (0..words.len() * 32).filter(|i| words[i / 32] & (1 << (i % 32)) != 0)
}

fn named(words: &[u32], names: &[String]) -> Vec<String> {
    bits(words).map(|i| link_modes::name(names, i)).collect()
}

/// As LINKMODES_GET + LINKINFO_GET answer: advertised modes are those of
/// the supported ones that are advertised (netlink lists the supported mask).
fn to_link_modes(s: &Settings, names: &[String]) -> LinkModes {
    let advertised: Vec<u32> = s
        .advertising
        .iter()
        .zip(&s.supported)
        .map(|(a, b)| a & b)
        .collect();
    LinkModes {
        // 0 and all-ones (16 or 32 bit) mean unknown, as in ethtool.
        speed_mbps: Some(s.speed).filter(|v| ![0, u16::MAX as u32, u32::MAX].contains(v)),
        duplex: match s.duplex {
            DUPLEX_HALF => Some(Duplex::Half),
            DUPLEX_FULL => Some(Duplex::Full),
            _ => None,
        },
        autoneg: s.autoneg,
        port: Some(port_name(s.port)),
        lanes: None,
        supported_modes: named(&s.supported, names),
        advertised_modes: named(&advertised, names),
        partner_modes: named(&s.partner, names),
        capabilities: Vec::new(),
        detected: None,
    }
}

/// ETHTOOL_GLINK; `None` when the driver cannot tell.
fn detected(fd: &OwnedFd, ifname: &str) -> Result<Option<bool>, IoctlError> {
    let mut v = Value::with_cmd(GLINK);
    match call(fd, ifname, &mut v) {
        Ok(()) => Ok(Some(v.data != 0)),
        Err(e) if not_supported(&e) => Ok(None),
        Err(e) => Err(err(ifname, "ETHTOOL_GLINK")(e)),
    }
}

pub(crate) fn read(ifname: &str) -> Result<Option<LinkModes>, IoctlError> {
    let fd = ctl_socket().map_err(err(ifname, OP_GET))?;
    let Some(wire) = read_wire(&fd, ifname)? else {
        return Ok(None);
    };
    let names = link_modes::names();
    let mut modes = to_link_modes(&wire.settings(), &names);
    modes.detected = detected(&fd, ifname)?;
    Ok(Some(modes))
}

/// Set bit `i` of `words` to `on`; false when `words` has no bit `i`.
fn put_bit(words: &mut [u32], i: usize, on: bool) -> bool {
    let Some(w) = words.get_mut(i / 32) else {
        return false;
    };
    if on {
        *w |= 1 << (i % 32);
    } else {
        *w &= !(1 << (i % 32));
    }
    true
}

/// The speed-mode bits of `names` (not `Autoneg`, `TP`, `Pause`, ...).
fn speed_modes(names: &[String]) -> impl Iterator<Item = (usize, (u32, &str))> + '_ {
    names
        .iter()
        .enumerate()
        .filter_map(|(i, n)| mode_speed_duplex(n).map(|sd| (i, sd)))
}

/// Advertise exactly `wanted` among the speed modes; capability bits stay.
fn advertise(s: &mut Settings, wanted: &[String], names: &[String]) -> Result<(), String> {
    for (i, _) in speed_modes(names) {
        put_bit(&mut s.advertising, i, false);
    }
    for w in wanted {
        let i = names
            .iter()
            .position(|n| n == w)
            .ok_or_else(|| format!("the kernel has no link mode named {w}"))?;
        if !put_bit(&mut s.advertising, i, true) {
            return Err(format!("{w} does not fit this kernel's link mode masks"));
        }
    }
    Ok(())
}

/// What LINKMODES_SET does for autoneg with a speed or duplex and no
/// advertised list: advertise the supported modes of that speed and duplex.
fn advertise_matching(s: &mut Settings, set: &LinkSet, names: &[String]) {
    let want_duplex = set.duplex.map(|d| match d {
        Duplex::Full => "Full",
        Duplex::Half => "Half",
    });
    let supported: Vec<usize> = bits(&s.supported).collect();
    for (i, (speed, duplex)) in speed_modes(names) {
        let on = supported.contains(&i)
            && set.speed_mbps.is_none_or(|v| v == speed)
            && want_duplex.is_none_or(|d| d == duplex);
        put_bit(&mut s.advertising, i, on);
    }
}

fn apply(s: &mut Settings, set: &LinkSet, names: &[String]) -> Result<(), String> {
    if let Some(v) = set.speed_mbps {
        s.speed = v;
    }
    if let Some(d) = set.duplex {
        s.duplex = if d == Duplex::Full {
            DUPLEX_FULL
        } else {
            DUPLEX_HALF
        };
    }
    if let Some(a) = set.autoneg {
        s.autoneg = a;
    }
    match &set.advertise {
        Some(wanted) => advertise(s, wanted, names)?,
        None if s.autoneg && (set.speed_mbps.is_some() || set.duplex.is_some()) => {
            advertise_matching(s, set, names)
        }
        None => {}
    }
    Ok(())
}

pub(crate) fn write(ifname: &str, set: &LinkSet) -> Result<(), IoctlError> {
    const OP_SET: &str = "ETHTOOL_SLINKSETTINGS";
    if *set == LinkSet::default() {
        return Ok(());
    }
    let fd = ctl_socket().map_err(err(ifname, OP_SET))?;
    let Some(mut wire) = read_wire(&fd, ifname)? else {
        return Err(err(ifname, OP_GET)(std::io::Error::from_raw_os_error(
            libc::EOPNOTSUPP,
        )));
    };
    let names = link_modes::names();
    let mut s = wire.settings();
    apply(&mut s, set, &names).map_err(|m| IoctlError::invalid(ifname, OP_SET, m))?;
    wire.store(&s);
    let op = if matches!(wire, Wire::Legacy(_)) {
        "ETHTOOL_SSET"
    } else {
        OP_SET
    };
    match &mut wire {
        Wire::Current(v) => call(&fd, ifname, &mut **v),
        Wire::Legacy(c) => call(&fd, ifname, c),
    }
    .map_err(err(ifname, op))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_layouts_match_the_kernel() {
        assert_eq!(std::mem::offset_of!(LinkSettings, nwords), 15);
        assert_eq!(std::mem::offset_of!(LinkSettings, masks), 48);
        assert_eq!(size_of::<LegacyCmd>(), 44);
        assert_eq!(std::mem::offset_of!(LegacyCmd, speed_hi), 28);
        assert_eq!(std::mem::offset_of!(LegacyCmd, lp_advertising), 32);
        assert_eq!(size_of::<Value>(), 8);
    }

    /// The first eight names of the table: a short table, so that higher
    /// bits are ones it does not name.
    fn names() -> Vec<String> {
        link_modes::NAMES[..8]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn e1000() -> Settings {
        Settings {
            speed: 1000,
            duplex: DUPLEX_FULL,
            autoneg: true,
            supported: vec![0b1110_1111],
            advertising: vec![0b1110_1111],
            partner: vec![0b10_0000],
            ..Default::default()
        }
    }

    #[test]
    fn settings_to_modes() {
        let m = to_link_modes(&e1000(), &names());
        assert_eq!(
            (m.speed_mbps, m.duplex, m.port.as_deref()),
            (Some(1000), Some(Duplex::Full), Some("TP"))
        );
        assert_eq!(m.supported_modes.len(), 7);
        assert_eq!(m.partner_modes, vec!["1000baseT/Full"]);
        let unknown = Settings {
            speed: u32::MAX,
            duplex: 0xff,
            ..e1000()
        };
        let m = to_link_modes(&unknown, &names());
        assert_eq!((m.speed_mbps, m.duplex), (None, None));
    }

    #[test]
    fn advertise_exactly_the_wanted_modes() {
        let mut s = e1000();
        let set = LinkSet {
            advertise: Some(vec!["100baseT/Full".into()]),
            ..Default::default()
        };
        apply(&mut s, &set, &names()).unwrap();
        assert_eq!(s.advertising, vec![0b1100_1000]);
        let bad = LinkSet {
            advertise: Some(vec!["9baseX/Full".into()]),
            ..Default::default()
        };
        assert!(
            apply(&mut s, &bad, &names())
                .unwrap_err()
                .contains("9baseX/Full")
        );
    }

    #[test]
    fn autoneg_with_a_speed_advertises_that_speed() {
        let mut s = e1000();
        let set = LinkSet {
            speed_mbps: Some(100),
            ..Default::default()
        };
        apply(&mut s, &set, &names()).unwrap();
        assert_eq!((s.speed, s.advertising.clone()), (100, vec![0b1100_1100]));
        let mut forced = e1000();
        let off = LinkSet {
            speed_mbps: Some(10),
            duplex: Some(Duplex::Half),
            autoneg: Some(false),
            ..Default::default()
        };
        apply(&mut forced, &off, &names()).unwrap();
        assert_eq!(
            (forced.speed, forced.duplex, forced.autoneg),
            (10, DUPLEX_HALF, false)
        );
        assert_eq!(forced.advertising, e1000().advertising);
    }

    /// The legacy GSET (kernels before 4.6) says what GLINKSETTINGS says, in
    /// 32 bits of masks: read-only, on the first interface of this
    /// namespace whose driver answers both (none: nothing to compare).
    #[test]
    fn legacy_gset_agrees_with_glinksettings() {
        let fd = ctl_socket().unwrap();
        let mut names: Vec<String> = std::fs::read_dir("/sys/class/net")
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in names {
            let Ok(Some(Wire::Current(current))) = read_wire(&fd, &name) else {
                continue;
            };
            let Ok(Some(legacy)) = read_legacy(&fd, &name) else {
                continue;
            };
            let (new, old) = (Wire::Current(current).settings(), legacy.settings());
            let first_word = |s: &Settings| Settings {
                supported: s.supported[..1].to_vec(),
                advertising: s.advertising[..1].to_vec(),
                partner: s.partner[..1].to_vec(),
                ..s.clone()
            };
            assert_eq!(first_word(&new), old, "{name}");
            return;
        }
        eprintln!("no interface here answers GLINKSETTINGS and GSET");
    }
}
