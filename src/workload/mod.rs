//! The owner's question "will it carry what I run?": named workloads and
//! custom needs per layer ([`needs`]), judged against what doctor measured
//! ([`verdict`]). `ops::doctor` gathers the figures; the CLI and the bus
//! print and carry the answers.

pub(crate) mod needs;
pub(crate) mod verdict;

pub(crate) use needs::{Layer, Workload};
pub(crate) use verdict::{Answer, Measured, judge};
