//! What the configuration means for systemd: the generator
//! (`/usr/lib/systemd/system-generators/hlctl-generator`, which runs
//! `hlctl config systemd-generator DIR`) writes the timer's schedule as a
//! drop-in and enables the timer, the after-boot check and the serve socket
//! as the file says. `systemctl daemon-reload` after editing the file.

use std::path::{Path, PathBuf};

use super::Config;

/// Where the package installs its units.
pub(crate) const UNIT_DIR: &str = "/usr/lib/systemd/system";

/// systemd's calendar shorthands.
const SHORTHANDS: &[&str] = &[
    "minutely",
    "hourly",
    "daily",
    "weekly",
    "monthly",
    "quarterly",
    "semiannually",
    "yearly",
    "annually",
];

/// A schedule must be a systemd shorthand or look like a calendar
/// expression (`Sun *-*-* 03:00`); `systemd-analyze calendar` tells the rest.
pub(crate) fn check_calendar(s: &str) -> Result<(), String> {
    let t = s.trim();
    if SHORTHANDS.contains(&t) {
        return Ok(());
    }
    let ok = !t.is_empty()
        && t.chars().any(|c| c.is_ascii_digit() || c == '*')
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || " *:,/.~-+_".contains(c));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "'{s}': use one of {} or a systemd calendar expression such as 'Sun *-*-* 03:00' (see systemd.time(7))",
            SHORTHANDS.join(", ")
        ))
    }
}

/// One thing the generator creates below its output directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Item {
    File { path: PathBuf, contents: String },
    Link { path: PathBuf, target: PathBuf },
}

/// The generator's output for a configuration.
pub(crate) fn generate(c: &Config) -> Vec<Item> {
    let unit = |n: &str| Path::new(UNIT_DIR).join(n);
    let mut v = vec![Item::File {
        path: "hlctl-check.timer.d/50-hlctl-config.conf".into(),
        contents: format!(
            "# From /etc/hlctl/hlctl.toml ([check] schedule, randomized_delay_s).\n[Timer]\nOnCalendar=\nOnCalendar={}\nRandomizedDelaySec={}\n",
            c.check.schedule.trim(),
            c.check.randomized_delay_s
        ),
    }];
    if c.check_has_work() {
        v.push(Item::Link {
            path: "timers.target.wants/hlctl-check.timer".into(),
            target: unit("hlctl-check.timer"),
        });
        if c.check.after_kernel_change {
            v.push(Item::Link {
                path: "multi-user.target.wants/hlctl-check-boot.service".into(),
                target: unit("hlctl-check-boot.service"),
            });
        }
    }
    if c.serve.enable {
        v.push(Item::Link {
            path: "sockets.target.wants/hlctl-serve.socket".into(),
            target: unit("hlctl-serve.socket"),
        });
        if let Some(contents) = serve_auth_dropin(&c.serve) {
            v.push(Item::File {
                path: "hlctl-serve.service.d/50-hlctl-config.conf".into(),
                contents,
            });
        }
        if c.serve.port != crate::path::peer::DEFAULT_PORT {
            v.push(Item::File {
                path: "hlctl-serve.socket.d/50-hlctl-config.conf".into(),
                contents: format!(
                    "# From /etc/hlctl/hlctl.toml ([serve] port).\n[Socket]\nListenStream=\nListenStream={}\n",
                    c.serve.port
                ),
            });
        }
    }
    v
}

/// The server's authentication as environment for `hlctl serve` (its
/// flags read HLCTL_SERVE_*), if the config turns it on.
fn serve_auth_dropin(s: &super::ServeConfig) -> Option<String> {
    let (key, users) = (
        s.rsa_private_key_path.as_ref()?,
        s.authorized_users_path.as_ref()?,
    );
    let mut out = String::from(
        "# From /etc/hlctl/hlctl.toml ([serve] rsa_private_key_path, authorized_users_path, ...).\n[Service]\n",
    );
    let mut env = |name: &str, value: &str| {
        // systemd's quoting: "NAME=value" with \ and " escaped; % doubled.
        let v = value
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('%', "%%");
        out.push_str(&format!("Environment=\"{name}={v}\"\n"));
    };
    env("HLCTL_SERVE_RSA_PRIVATE_KEY_PATH", &key.to_string_lossy());
    env(
        "HLCTL_SERVE_AUTHORIZED_USERS_PATH",
        &users.to_string_lossy(),
    );
    if let Some(t) = s.time_skew_threshold {
        env("HLCTL_SERVE_TIME_SKEW_THRESHOLD", &t.to_string());
    }
    if s.use_pkcs1_padding {
        env("HLCTL_SERVE_USE_PKCS1_PADDING", "true");
    }
    Some(out)
}

/// Write the items below `dir`.
pub(crate) fn write(dir: &Path, items: &[Item]) -> std::io::Result<()> {
    for it in items {
        match it {
            Item::File { path, contents } => {
                let p = dir.join(path);
                if let Some(parent) = p.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::fs::write(&p, contents)?;
            }
            Item::Link { path, target } => {
                let p = dir.join(path);
                if let Some(parent) = p.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                let _ = std::fs::remove_file(&p);
                std::os::unix::fs::symlink(target, &p)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendars() {
        assert!(check_calendar("weekly").is_ok());
        assert!(check_calendar("Sun *-*-* 03:00").is_ok());
        assert!(check_calendar("every tuesday").is_err());
        assert!(check_calendar("weekly\nExecStart=/bin/sh").is_err());
    }

    #[test]
    fn serve_authentication_as_a_dropin() {
        let mut c = Config::default();
        c.serve.enable = true;
        c.serve.rsa_private_key_path = Some("/etc/hlctl/serve key.pem".into());
        c.serve.authorized_users_path = Some("/etc/hlctl/users.csv".into());
        c.serve.use_pkcs1_padding = true;
        let items = generate(&c);
        let dropin = items.iter().find_map(|i| match i {
            Item::File { path, contents } if path.starts_with("hlctl-serve.service.d") => {
                Some(contents.clone())
            }
            _ => None,
        });
        let dropin = dropin.expect("a drop-in for hlctl-serve.service");
        assert!(
            dropin.contains(
                "Environment=\"HLCTL_SERVE_RSA_PRIVATE_KEY_PATH=/etc/hlctl/serve key.pem\"\n"
            ),
            "{dropin}"
        );
        assert!(dropin.contains("HLCTL_SERVE_AUTHORIZED_USERS_PATH=/etc/hlctl/users.csv"));
        assert!(dropin.contains("HLCTL_SERVE_USE_PKCS1_PADDING=true"));
        assert!(!dropin.contains("TIME_SKEW"));
        c.serve.authorized_users_path = None;
        assert!(generate(&c).iter().all(
            |i| !matches!(i, Item::File { path, .. } if path.starts_with("hlctl-serve.service.d"))
        ));
    }

    #[test]
    fn generator_follows_the_config() {
        let mut c = Config::default();
        c.check.schedule = "Sun *-*-* 03:00".into();
        let items = generate(&c);
        let Item::File { contents, .. } = &items[0] else {
            panic!()
        };
        assert!(contents.contains("OnCalendar=\nOnCalendar=Sun *-*-* 03:00\n"));
        // cpu = true by default: the timer and the boot check are enabled; serve is off.
        let links: Vec<_> = items
            .iter()
            .filter_map(|i| match i {
                Item::Link { path, .. } => Some(path.display().to_string()),
                _ => None,
            })
            .collect();
        assert_eq!(
            links,
            [
                "timers.target.wants/hlctl-check.timer",
                "multi-user.target.wants/hlctl-check-boot.service"
            ]
        );
        c.serve.enable = true;
        c.serve.port = 5301;
        c.check.cpu = false;
        let items = generate(&c);
        assert!(
            items.iter().any(
                |i| matches!(i, Item::Link { path, .. } if path.ends_with("hlctl-serve.socket"))
            )
        );
        assert!(items.iter().any(
            |i| matches!(i, Item::File { contents, .. } if contents.contains("ListenStream=5301"))
        ));
        assert!(
            !items.iter().any(
                |i| matches!(i, Item::Link { path, .. } if path.ends_with("hlctl-check.timer"))
            )
        );
    }
}
