//! NIC inspection and the change engine.
//!
//! - [`model`]: what a NIC's settings are;
//! - [`read`]: snapshot one or all interfaces;
//! - [`change`]: parse `hlctl set` words into a [`model::ChangeSet`]-like plan and validate it;
//! - [`apply`]: snapshot → apply → read back → restore on failure;
//! - [`persist`]: the NIC state file and the systemd `.link` export;
//! - [`netlink`], [`ioctl`]: the kernel interfaces.

pub mod ioctl;
pub mod model;
pub mod netlink;
