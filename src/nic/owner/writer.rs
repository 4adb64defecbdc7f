//! What every manager's writer does ([`Writer`]): persist the settings it can
//! hold, and put one key it wrote back to a value (or take it out). One
//! implementation per manager ([`super::edit_nm::Nm`],
//! [`super::edit_netplan::Netplan`], [`super::edit_ifupdown::Ifupdown`],
//! [`super::edit_networkd::Networkd`]); undoing a step is the same for all.

use serde_json::Value;

use super::error::OwnerError;
use super::placed::Placed;
use super::{Manager, Roots};

pub(crate) trait Writer: Sync {
    /// The managers whose [`Placed`] keys this writer writes and sets back.
    fn managers(&self) -> &'static [Manager];

    /// Write what it can of `wanted` for `iface` where its manager reads it.
    fn persist(
        &self,
        roots: &Roots,
        iface: &str,
        ifindex: u32,
        wanted: &[(String, Value)],
    ) -> Result<Vec<Placed>, OwnerError>;

    /// Put the key of `p` back to `target` (`None`: take it out).
    fn set_back(
        &self,
        roots: &Roots,
        iface: &str,
        p: &Placed,
        target: Option<String>,
    ) -> Result<(), OwnerError>;

    /// Take back what a step wrote before a later part of it failed (newest
    /// first; the step's own error is the one reported).
    fn undo(&self, roots: &Roots, iface: &str, placed: &[Placed]) {
        for p in placed.iter().rev() {
            let _ = self.set_back(roots, iface, p, p.before.clone());
        }
    }
}
