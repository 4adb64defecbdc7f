//! NIC inspection and the change engine.
//!
//! - [`model`]: what a NIC's settings are;
//! - [`read`]: snapshot one or all interfaces;
//! - [`change`]: parse `hlctl set` words into a [`model::ChangeSet`]-like plan and validate it;
//! - [`apply`]: snapshot → apply → read back → restore on failure;
//! - [`stack`]: bridges, bonds and their ports (from any member's name);
//! - [`persist`]: the NIC state file and the systemd `.link` export;
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
pub mod set;
pub mod stack;
pub mod validate;
