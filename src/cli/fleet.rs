//! `--prometheus` and `--host-label` of the verbs that judge a file
//! transfer's server (`bench file`, `doctor --dir`): the fleet where that
//! server's own figures are read ([`crate::matrix::Fleet`]).

use clap::Args;

#[derive(Debug, Args)]
pub(crate) struct FleetArgs {
    /// The fleet's Prometheus (http://[USER:PASSWORD@]HOST[:PORT][/PATH], or
    /// HOST[:PORT]): when the server (the transfer's, a network --dir's) is
    /// a host of the fleet, its own disk and CPU figures from its last
    /// `hlctl check` are read there, and a server disk no faster than the
    /// transfer is named the limit.
    #[arg(long, value_name = "URL", env = "HLCTL_PROMETHEUS")]
    pub(crate) prometheus: Option<String>,

    /// The scrape label that names a host in that Prometheus.
    #[arg(
        long,
        value_name = "LABEL",
        default_value = crate::matrix::HOST_LABEL,
        requires = "prometheus"
    )]
    pub(crate) host_label: String,
}

impl FleetArgs {
    /// The pair as the bus carries it: the label only with a Prometheus.
    pub(crate) fn wire(&self) -> (Option<String>, Option<String>) {
        let label = self.prometheus.as_ref().map(|_| self.host_label.clone());
        (self.prometheus.clone(), label)
    }
}
