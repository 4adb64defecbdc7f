//! One option key of a verb ([`Key`]): what the verb's declaration
//! ([`super::verb`]), its field table ([`super::fields`]) and the declared
//! key lists share. A leaf: it imports nothing of the wire.

/// One option key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    /// The `a{sv}` key.
    pub name: &'static str,
    /// Its D-Bus type signature.
    pub sig: &'static str,
    /// The clap ids of the `hlctl` flags it is built from (none: bus only).
    pub cli: &'static [&'static str],
}

impl Key {
    pub const fn new(name: &'static str, sig: &'static str, cli: &'static [&'static str]) -> Key {
        Key { name, sig, cli }
    }
}
