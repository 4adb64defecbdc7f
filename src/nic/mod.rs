//! NIC inspection and the change engine.
//!
//! - [`model`]: what a NIC's settings are; [`registry`]: the one table of settings every layer reads;
//! - [`read`]: snapshot one or all interfaces;
//! - [`change`]: parse `hlctl set` words into a [`model::ChangeSet`]-like plan and validate it;
//! - [`apply`]: snapshot → apply → read back → restore on failure;
//! - [`stack`]: bridges, bonds and their ports; [`stack_find`]: finding them from any member's name;
//! - [`persist`]: the NIC state file and the systemd `.link` export;
//! - [`speed`]: is a reported link speed physical or nominal (the one decision);
//! - [`shortfall`]: a link below its best supported mode or at half duplex;
//! - [`netlink`], [`ioctl`]: the kernel interfaces ([`ioctl`] stands in for ethtool netlink on kernels before 5.6).

pub(crate) mod aliases;
pub(crate) mod apply;
pub(crate) mod change;
pub(crate) mod diff;
pub(crate) mod error;
pub(crate) mod export;
pub(crate) mod features_kept;
pub mod ioctl;
pub(crate) mod irq_affinity;
pub(crate) mod managers;
pub mod model;
pub mod netlink;
pub(crate) mod owner;
pub(crate) mod persist;
pub(crate) mod read;
pub(crate) mod registry;
pub(crate) mod rps;
pub(crate) mod set;
pub(crate) mod shortfall;
pub(crate) mod speed;
pub(crate) mod stack;
pub(crate) mod stack_find;
pub(crate) mod validate;
pub(crate) mod xps;
