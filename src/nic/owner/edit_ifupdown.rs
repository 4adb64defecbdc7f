//! Persisting through ifupdown2/ifupdown: the option line in the
//! interface's stanza. ifupdown2 resets the MTU of every interface it has a
//! stanza for on each `ifreload -a`, so an MTU always goes into the stanza;
//! another setting only where the stanza already sets it (a line that is
//! not there is not re-applied, so hlctl's own re-apply keeps it).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::error::OwnerError;
use super::ifupdown::{self, Target};
use super::write::{self, Placed, requested};
use super::{Manager, Roots};
use crate::nic::registry::value_text;

/// One line to write: option key, value, the settings it carries, its file.
struct Line {
    file: PathBuf,
    key: &'static str,
    value: String,
    settings: Vec<String>,
}

/// The value a change set gives an option, when it gives one (a feature
/// short name only when all its requested kernel features agree).
fn value_for(target: Target, wanted: &[(String, Value)]) -> Option<(String, Vec<String>)> {
    let names = ifupdown::settings_of(target);
    let values: Vec<String> = wanted
        .iter()
        .filter(|(n, _)| names.contains(n))
        .map(|(_, v)| value_text(v))
        .collect();
    let first = values.first()?.clone();
    values.iter().all(|v| *v == first).then_some((first, names))
}

/// The lines `cs` needs in the stanzas of `iface`.
fn plan(
    files: &[ifupdown::File],
    manager: Manager,
    iface: &str,
    wanted: &[(String, Value)],
) -> Vec<Line> {
    let found = ifupdown::stanzas(files, iface);
    let mut out = Vec::new();
    for (key, target) in ifupdown::options(manager) {
        let Some((value, settings)) = value_for(*target, wanted) else {
            continue;
        };
        let with_line = found.iter().find(|(_, s)| s.option(key).is_some());
        let always = *key == "mtu" && manager == Manager::Ifupdown2;
        let Some((file, _)) = with_line.or(found.first().filter(|_| always)) else {
            continue;
        };
        out.push(Line {
            file: file.path.clone(),
            key,
            value,
            settings,
        });
    }
    out
}

/// Write the lines `cs` needs into the stanzas of `iface`.
pub(crate) fn persist(
    roots: &Roots,
    iface: &str,
    cs: &crate::nic::model::ChangeSet,
) -> Result<Vec<Placed>, OwnerError> {
    let files = ifupdown::load(roots);
    if ifupdown::stanzas(&files, iface).is_empty() {
        return Ok(Vec::new());
    }
    let manager = if roots.has_ifupdown2() {
        Manager::Ifupdown2
    } else {
        Manager::Ifupdown
    };
    let lines = plan(&files, manager, iface, &requested(cs));
    let mut paths: Vec<&PathBuf> = lines.iter().map(|l| &l.file).collect();
    paths.sort();
    paths.dedup();
    let mut placed = Vec::new();
    for path in paths {
        let mine: Vec<&Line> = lines.iter().filter(|l| &l.file == path).collect();
        match edit_one_file(roots, manager, iface, path, &mine) {
            Ok(p) => placed.extend(p),
            Err(e) => {
                let _ = write::undo(roots, iface, &placed);
                return Err(e);
            }
        }
    }
    Ok(placed)
}

/// Set `lines` in the stanza of `iface` in one file, then check it.
fn edit_one_file(
    roots: &Roots,
    manager: Manager,
    iface: &str,
    path: &Path,
    lines: &[&Line],
) -> Result<Vec<Placed>, OwnerError> {
    let mut placed = Vec::new();
    let keys: Vec<&str> = lines.iter().map(|l| l.key).collect();
    write::edit_file(
        roots,
        iface,
        path,
        |old| {
            let mut text = old.to_string();
            for l in lines {
                let before = set_line(&mut text, iface, l.key, Some(&l.value));
                placed.push(Placed {
                    manager,
                    file: roots.live(path),
                    section: format!("iface {iface}"),
                    key: l.key.to_string(),
                    value: l.value.clone(),
                    before,
                    settings: l.settings.clone(),
                });
            }
            Ok(text)
        },
        || check(roots, manager, iface, path, &keys),
    )?;
    Ok(placed)
}

/// Set (or with `None` remove) option `key` in the stanza of `iface` in
/// `text`: the stanza that has the line, else the first. Returns the old value.
fn set_line(text: &mut String, iface: &str, key: &str, value: Option<&str>) -> Option<String> {
    let parsed = ifupdown::parse(text);
    let mine: Vec<&ifupdown::Stanza> = parsed.stanzas.iter().filter(|s| s.iface == iface).collect();
    let stanza = mine
        .iter()
        .find(|s| s.option(key).is_some())
        .or(mine.first())?;
    let before = stanza.option(key).map(|o| o.value.clone());
    *text = match value {
        Some(v) => ifupdown::set_option(text, stanza, key, v),
        None => ifupdown::remove_option(text, stanza, key),
    };
    before
}

/// ifupdown2's own check of the edited stanza (`ifquery --check IFACE`):
/// a `[fail]` on one of the lines hlctl wrote puts the file back.
fn check(
    roots: &Roots,
    manager: Manager,
    iface: &str,
    path: &Path,
    keys: &[&str],
) -> Result<(), OwnerError> {
    if !roots.tools || manager != Manager::Ifupdown2 || !write::have("ifquery") {
        return Ok(());
    }
    let out = std::process::Command::new("ifquery")
        .args(["--check", iface])
        .output()
        .map_err(|e| OwnerError::io(iface, Path::new("ifquery"), e))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let failed: Vec<&str> = text
        .lines()
        .filter(|l| {
            l.contains("[fail]") && keys.iter().any(|k| l.split_whitespace().next() == Some(*k))
        })
        .collect();
    if failed.is_empty() {
        return Ok(());
    }
    Err(OwnerError::Tool {
        iface: iface.to_string(),
        command: format!("ifquery --check {iface}"),
        status: out.status.to_string(),
        output: failed.join("; "),
        path: path.display().to_string(),
    })
}

/// Put one line hlctl wrote back to `target` (`None`: remove it).
pub(crate) fn set_back(
    roots: &Roots,
    iface: &str,
    p: &Placed,
    target: Option<String>,
) -> Result<(), OwnerError> {
    let path = roots.at(&p.file);
    let stanza_iface = p
        .section
        .strip_prefix("iface ")
        .unwrap_or(iface)
        .to_string();
    write::edit_file(
        roots,
        iface,
        &path,
        |old| {
            let mut text = old.to_string();
            set_line(&mut text, &stanza_iface, &p.key, target.as_deref());
            Ok(text)
        },
        || Ok(()),
    )
    .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::model::ChangeSet;

    const PVE: &str = "auto lo\niface lo inet loopback\n\niface enp1s0 inet manual\n\nauto vmbr0\niface vmbr0 inet static\n\taddress 192.168.1.10/24\n\tgateway 192.168.1.1\n\tbridge-ports enp1s0\n\tbridge-stp off\n\tbridge-fd 0\n\tgro-offload on\n\nsource /etc/network/interfaces.d/*\n";

    fn roots(dir: &Path) -> Roots {
        let r = Roots {
            root: dir.to_path_buf(),
            backup_dir: dir.join("var/lib/hlctl/owner-backup"),
            tools: false,
        };
        std::fs::create_dir_all(r.at("/etc/network/interfaces.d")).unwrap();
        std::fs::create_dir_all(r.at("/usr/share/ifupdown2")).unwrap();
        std::fs::write(r.interfaces(), PVE).unwrap();
        r
    }

    fn cs(mtu: u32, gro: Option<bool>, ring: Option<u32>) -> ChangeSet {
        let mut c = ChangeSet {
            mtu: Some(mtu),
            ..Default::default()
        };
        if let Some(g) = gro {
            c.features.insert("rx-gro".into(), g);
        }
        if let Some(r) = ring {
            c.rings = Some(crate::nic::model::RingsSet {
                rx: Some(r),
                ..Default::default()
            });
        }
        c
    }

    #[test]
    fn mtu_goes_into_the_stanza_and_undo_restores_the_file_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let r = roots(dir.path());
        let placed = write::persist(&r, "vmbr0", 7, &cs(9000, Some(false), Some(4096))).unwrap();
        let text = std::fs::read_to_string(r.interfaces()).unwrap();
        assert!(
            text.contains("\tgro-offload off\n\tmtu 9000\n\nsource"),
            "{text}"
        );
        assert!(
            !text.contains("ring"),
            "ifupdown2 has no ring option: {text}"
        );
        assert_eq!(placed.len(), 2);
        assert_eq!(placed[0].key, "mtu");
        assert_eq!(placed[0].before, None);
        assert_eq!(placed[1].before.as_deref(), Some("on"));
        assert_eq!(placed[1].file, "/etc/network/interfaces");
        // The port's stanza has no mtu line either: ifreload would reset it too.
        let port = write::persist(&r, "enp1s0", 6, &cs(9000, None, None)).unwrap();
        assert!(
            std::fs::read_to_string(r.interfaces())
                .unwrap()
                .contains("iface enp1s0 inet manual\n\tmtu 9000\n")
        );
        let backups = std::fs::read_dir(&r.backup_dir).unwrap().count();
        assert!(backups >= 1, "a copy of the file before the edit is kept");
        write::undo(&r, "enp1s0", &port).unwrap();
        write::undo(&r, "vmbr0", &placed).unwrap();
        assert_eq!(std::fs::read_to_string(r.interfaces()).unwrap(), PVE);
    }

    #[test]
    fn classic_ifupdown_gets_only_lines_it_already_has_and_others_are_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let r = roots(dir.path());
        std::fs::remove_dir(r.at("/usr/share/ifupdown2")).unwrap();
        assert!(
            write::persist(&r, "vmbr0", 7, &cs(9000, None, None))
                .unwrap()
                .is_empty()
        );
        assert_eq!(std::fs::read_to_string(r.interfaces()).unwrap(), PVE);
        assert!(
            write::persist(&r, "eth9", 9, &cs(9000, None, None))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn writing_again_keeps_the_first_before_and_restore_goes_back_a_step() {
        let dir = tempfile::tempdir().unwrap();
        let r = roots(dir.path());
        let mut list = write::persist(&r, "vmbr0", 7, &cs(9000, None, None)).unwrap();
        let earlier = list.clone();
        let again = write::persist(&r, "vmbr0", 7, &cs(4000, None, None)).unwrap();
        assert_eq!(again[0].before.as_deref(), Some("9000"));
        write::merge(&mut list, &again);
        assert_eq!(
            (list[0].value.as_str(), list[0].before.as_deref()),
            ("4000", None)
        );
        write::restore(&r, "vmbr0", &list, &earlier).unwrap();
        assert!(
            std::fs::read_to_string(r.interfaces())
                .unwrap()
                .contains("\tmtu 9000\n")
        );
        write::undo(&r, "vmbr0", &earlier).unwrap();
        assert_eq!(std::fs::read_to_string(r.interfaces()).unwrap(), PVE);
    }
}
