//! A feature request the driver refused while the kernel answered success.
//!
//! ethtool's FEATURES_SET does not fail when the driver's `ndo_set_features`
//! does: the kernel logs "set_features() failed", keeps the features active
//! as they were and the request as asked (`ethtool -k` shows the feature
//! "requested on" but off). So a feature request is read back, and a feature
//! whose request took but whose state did not is the driver's refusal.

use std::collections::BTreeMap;

use crate::nic::model::Feature;
use crate::nic::netlink::NetlinkError;

/// The error for the features of `wanted` that `now` holds requested but not
/// active; `Ok` when every one took.
pub(crate) fn check(
    ifname: &str,
    wanted: &BTreeMap<String, bool>,
    now: &BTreeMap<String, Feature>,
) -> Result<(), NetlinkError> {
    let kept: Vec<String> = wanted
        .iter()
        .filter_map(|(name, &on)| {
            let f = now.get(name)?;
            (f.requested == on && f.active != on).then(|| format!("{name} {}", on_off(f.active)))
        })
        .collect();
    if kept.is_empty() {
        return Ok(());
    }
    Err(NetlinkError {
        op: "FEATURES_SET",
        ifname: Some(ifname.to_string()),
        errno: 0,
        extack: Some(format!(
            "the driver kept {} (the kernel answers success and logs the driver's error: see dmesg)",
            kept.join(", ")
        )),
    })
}

fn on_off(b: bool) -> &'static str {
    if b { "on" } else { "off" }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(active: bool, requested: bool) -> Feature {
        Feature {
            active,
            requested,
            fixed: false,
        }
    }

    #[test]
    fn a_feature_requested_but_not_active_is_the_drivers_refusal() {
        let wanted = BTreeMap::from([("rx-gro".to_string(), false)]);
        let now = BTreeMap::from([("rx-gro".to_string(), f(true, false))]);
        let e = check("fail0", &wanted, &now).unwrap_err();
        assert_eq!(e.errno, 0);
        assert_eq!(
            e.to_string(),
            "FEATURES_SET on fail0: the driver kept rx-gro on (the kernel answers success and \
             logs the driver's error: see dmesg)"
        );
    }

    #[test]
    fn features_that_took_or_were_never_asked_for_pass() {
        let wanted = BTreeMap::from([("rx-gro".to_string(), false)]);
        let now = BTreeMap::from([
            ("rx-gro".to_string(), f(false, false)),
            // Not asked for: its state is not this request's.
            ("tx-tcp-segmentation".to_string(), f(false, true)),
        ]);
        assert!(check("fail0", &wanted, &now).is_ok());
    }
}
