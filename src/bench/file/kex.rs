//! The algorithms an SSH session negotiated, from `ssh -v`'s lines
//! `debug1: kex: client->server cipher: C MAC: M compression: none`.

use super::SshAlgorithms;

/// The negotiated ciphers and MACs; None when a direction's line is missing.
pub(crate) fn parse(verbose: &str) -> Option<SshAlgorithms> {
    let mut out = SshAlgorithms::default();
    let (mut c2s, mut s2c) = (false, false);
    for line in verbose.lines() {
        let Some(rest) = line.split_once("kex: ").map(|(_, r)| r) else {
            continue;
        };
        let (dir, rest) = match rest.split_once(" cipher: ") {
            Some(x) => x,
            None => continue,
        };
        let (cipher, rest) = rest.split_once(" MAC: ").unwrap_or((rest, ""));
        let mac = rest.split(" compression:").next().unwrap_or("").trim();
        match dir {
            "client->server" => {
                out.cipher_client_to_server = cipher.trim().into();
                out.mac_client_to_server = mac.into();
                c2s = true;
            }
            "server->client" => {
                out.cipher_server_to_client = cipher.trim().into();
                out.mac_server_to_client = mac.into();
                s2c = true;
            }
            _ => {}
        }
    }
    (c2s && s2c).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// OpenSSH 9.2p1's `ssh -v` against a Debian 12 sshd.
    const V: &str = "\
debug1: kex: algorithm: sntrup761x25519-sha512
debug1: kex: host key algorithm: ssh-ed25519
debug1: kex: server->client cipher: aes128-ctr MAC: umac-64-etm@openssh.com compression: none
debug1: kex: client->server cipher: chacha20-poly1305@openssh.com MAC: <implicit> compression: none
";

    #[test]
    fn both_directions_cipher_and_mac_are_read() {
        let a = parse(V).unwrap();
        assert_eq!(a.cipher_client_to_server, "chacha20-poly1305@openssh.com");
        assert_eq!(a.mac_client_to_server, "<implicit>");
        assert_eq!(a.cipher_server_to_client, "aes128-ctr");
        assert_eq!(a.mac_server_to_client, "umac-64-etm@openssh.com");
        assert_eq!(parse(&V[..V.find("debug1: kex: client").unwrap()]), None);
        assert_eq!(parse(""), None);
    }
}
