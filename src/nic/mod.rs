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
//! - [`netlink`], [`ioctl`]: the kernel interfaces.

pub mod aliases;
pub mod apply;
pub mod change;
pub mod diff;
pub mod error;
pub mod export;
pub mod ioctl;
pub mod model;
pub mod netlink;
pub mod persist;
pub mod read;
pub mod registry;
pub mod set;
pub mod shortfall;
pub mod speed;
pub mod stack;
pub mod stack_find;
pub mod validate;
