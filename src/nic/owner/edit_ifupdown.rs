//! Persisting through ifupdown2/ifupdown: the option line in the
//! interface's stanza. ifupdown2 resets the MTU of every interface it has a
//! stanza for on each `ifreload -a`, so an MTU always goes into the stanza;
//! another setting only where the stanza already sets it (a line that is
//! not there is not re-applied, so hlctl's own re-apply keeps it).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::error::OwnerError;
use super::fileedit;
use super::ifupdown::{self, Target};
use super::placed::Placed;
use super::writer::Writer;
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

/// Write the lines `wanted` needs into the stanzas of `iface`.
fn persist(
    roots: &Roots,
    iface: &str,
    wanted: &[(String, Value)],
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
    let lines = plan(&files, manager, iface, wanted);
    let mut paths: Vec<&PathBuf> = lines.iter().map(|l| &l.file).collect();
    paths.sort();
    paths.dedup();
    let mut placed = Vec::new();
    for path in paths {
        let mine: Vec<&Line> = lines.iter().filter(|l| &l.file == path).collect();
        match edit_one_file(roots, manager, iface, path, &mine) {
            Ok(p) => placed.extend(p),
            Err(e) => {
                Ifupdown.undo(roots, iface, &placed);
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
    fileedit::edit_file(
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
    if !roots.tools || manager != Manager::Ifupdown2 || !fileedit::have("ifquery") {
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
fn set_back(
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
    fileedit::edit_file(
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

/// The [`Writer`] of the stanza's lines of ifupdown2 and ifupdown.
pub(crate) struct Ifupdown;

impl Writer for Ifupdown {
    fn managers(&self) -> &'static [Manager] {
        &[Manager::Ifupdown2, Manager::Ifupdown]
    }

    fn persist(
        &self,
        roots: &Roots,
        iface: &str,
        _ifindex: u32,
        wanted: &[(String, Value)],
    ) -> Result<Vec<Placed>, OwnerError> {
        persist(roots, iface, wanted)
    }

    fn set_back(
        &self,
        roots: &Roots,
        iface: &str,
        p: &Placed,
        target: Option<String>,
    ) -> Result<(), OwnerError> {
        set_back(roots, iface, p, target)
    }
}
