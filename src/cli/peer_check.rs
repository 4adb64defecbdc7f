//! The peer check before any long work: `doctor --peer`, `tune`, `report
//! --peer` stop at once, with the reason, when no iperf3 server answers.

use crate::bench::net::check_peer;
use crate::path::Peer;

use super::exit;

/// Check every peer; on the first that fails, say why (as `hlctl VERB`;
/// every such error names the peer) and return the exit code.
pub(crate) fn require(verb: &str, peers: &[Peer]) -> Result<(), i32> {
    for p in peers {
        if let Err(e) = check_peer(&p.host, p.port) {
            eprintln!("hlctl {verb}: {e}");
            return Err(exit::FAILED);
        }
    }
    Ok(())
}
