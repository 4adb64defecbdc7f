//! Where `bench file` writes: `ssh://[USER@]HOST[:PORT][/DIR]` (one word
//! naming the host, the port and the remote directory, as `scp`/`rsync`
//! users write a remote place) or a local directory (`--dir`).

use std::path::PathBuf;

use super::FileError;

/// A target of `bench file`.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    Ssh(SshTarget),
    /// An absolute directory: a network mount or a local one.
    Dir(PathBuf),
}

impl Target {
    /// One word as `[check] files` takes it: `ssh://[USER@]HOST[:PORT][/DIR]`
    /// or an absolute directory.
    pub(crate) fn parse(word: &str) -> Result<Target, FileError> {
        if word.starts_with("ssh://") {
            return SshTarget::parse(word).map(Target::Ssh);
        }
        if word.starts_with('/') && !word.chars().any(char::is_control) {
            return Ok(Target::Dir(PathBuf::from(word)));
        }
        Err(FileError::InvalidConfig {
            field: "target",
            reason: format!(
                "{word:?}: allowed ssh://[USER@]HOST[:PORT][/DIR] or an absolute directory (a mount's, or a local one)"
            ),
        })
    }
}

/// An SSH target and how to reach it with the user's OpenSSH client.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SshTarget {
    pub(crate) user: Option<String>,
    pub(crate) host: String,
    pub(crate) port: Option<u16>,
    /// The remote directory; empty: the remote user's home.
    pub(crate) dir: String,
    /// `ssh -F FILE` (else the user's own ~/.ssh/config).
    pub(crate) config: Option<PathBuf>,
    /// `ssh -c CIPHER` (else what the two ends negotiate).
    pub(crate) cipher: Option<String>,
}

impl SshTarget {
    /// `ssh://[USER@]HOST[:PORT][/DIR]`; HOST may be `[v6 address]`.
    pub(crate) fn parse(url: &str) -> Result<SshTarget, FileError> {
        let bad = |why: &str| FileError::InvalidConfig {
            field: "target",
            reason: format!("{url:?}: {why}; allowed ssh://[USER@]HOST[:PORT][/DIR]"),
        };
        let rest = url
            .strip_prefix("ssh://")
            .ok_or_else(|| bad("not an ssh:// URL"))?;
        if rest.chars().any(|c| c.is_control() || c == '\'') {
            return Err(bad("control characters and quotes are not allowed"));
        }
        let (authority, dir) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let (user, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) if !u.is_empty() => (Some(u.to_string()), h),
            Some(_) => return Err(bad("empty user")),
            None => (None, authority),
        };
        let (host, port) = split_port(hostport).ok_or_else(|| bad("bad port"))?;
        if host.is_empty() || host.starts_with('-') {
            return Err(bad("no host"));
        }
        let dir = dir.trim_end_matches('/');
        Ok(SshTarget {
            user,
            host: host.to_string(),
            port,
            dir: if dir.is_empty() && rest.contains('/') {
                "/".into()
            } else {
                dir.into()
            },
            config: None,
            cipher: None,
        })
    }

    /// `[user@]host` as ssh takes it.
    pub(crate) fn destination(&self) -> String {
        match &self.user {
            Some(u) => format!("{u}@{}", self.host),
            None => self.host.clone(),
        }
    }

    /// `user@host:port:/dir` for reports and history rows.
    pub(crate) fn label(&self) -> String {
        let port = self.port.map(|p| format!(":{p}")).unwrap_or_default();
        let dir = if self.dir.is_empty() { "~" } else { &self.dir };
        format!("{}{port}:{dir}", self.destination())
    }
}

/// `host`, `host:port`, `[v6]`, `[v6]:port`.
fn split_port(s: &str) -> Option<(&str, Option<u16>)> {
    if let Some(rest) = s.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        return match after.strip_prefix(':') {
            Some(p) => Some((host, Some(p.parse().ok().filter(|&p| p > 0)?))),
            None if after.is_empty() => Some((host, None)),
            None => None,
        };
    }
    match s.split_once(':') {
        Some((h, p)) => Some((h, Some(p.parse().ok().filter(|&p| p > 0)?))),
        None => Some((s, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ssh_url_names_user_host_port_and_directory() {
        let t = SshTarget::parse("ssh://root@nas:2222/mnt/tank/").unwrap();
        assert_eq!(t.user.as_deref(), Some("root"));
        assert_eq!((t.host.as_str(), t.port), ("nas", Some(2222)));
        assert_eq!(t.dir, "/mnt/tank");
        assert_eq!(t.label(), "root@nas:2222:/mnt/tank");
        let t = SshTarget::parse("ssh://[fd00::2]").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.dir.as_str()),
            ("fd00::2", None, "")
        );
        assert_eq!(t.label(), "fd00::2:~");
        assert_eq!(SshTarget::parse("ssh://h/").unwrap().dir, "/");
        for bad in [
            "nas:/x",
            "ssh://",
            "ssh://u@:22/x",
            "ssh://h:0/x",
            "ssh://h:99999",
            "ssh://-oProxyCommand=x/",
            "ssh://h/a'b",
            "ssh://@h/x",
        ] {
            let e = SshTarget::parse(bad).unwrap_err().to_string();
            assert!(
                e.contains("allowed ssh://[USER@]HOST[:PORT][/DIR]"),
                "{bad}: {e}"
            );
        }
    }
}
