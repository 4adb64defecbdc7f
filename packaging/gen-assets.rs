//! Generates the packaged documentation from the clap definitions in the
//! library: man pages (hlctl(1) and one page per subcommand, hlctld(8)) and
//! shell completions for bash, zsh and fish.
//!
//! `cargo run --example gen-assets -- OUT_DIR` writes
//! `OUT_DIR/man/man1/*.1`, `OUT_DIR/man/man8/hlctld.8` and
//! `OUT_DIR/completions/{hlctl.bash,_hlctl,hlctl.fish}`; `scripts/build-deb.sh`
//! runs it before cargo-deb packs them. The man pages carry the date of the
//! newest entry in `packaging/changelog`, so the output is reproducible.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::CommandFactory;
use clap_complete::Shell;

fn main() -> Result<()> {
    let mut args = std::env::args_os().skip(1);
    let (Some(out), None) = (args.next(), args.next()) else {
        bail!("usage: gen-assets OUT_DIR");
    };
    let out = PathBuf::from(out);
    let changelog = Path::new(env!("CARGO_MANIFEST_DIR")).join("packaging/changelog");
    let date = changelog_date(
        &std::fs::read_to_string(&changelog).context("read packaging/changelog")?,
    )
    .context("packaging/changelog: no ` -- NAME <EMAIL>  DATE` line with an RFC 2822 date")?;

    let man1 = fresh_dir(&out.join("man/man1"))?;
    let man8 = fresh_dir(&out.join("man/man8"))?;
    let completions = fresh_dir(&out.join("completions"))?;

    let manual = "hlctl manual";
    let hlctl = hlctl::cli::args::Cli::command().disable_help_subcommand(true);
    man_pages(hlctl.clone(), &man1, &date, manual)?;
    let hlctld = hlctl::dbus::daemon::args::DaemonArgs::command();
    clap_mangen::Man::new(hlctld)
        .section("8")
        .date(&date)
        .manual(manual)
        .generate_to(&man8)?;

    for (shell, file) in [
        (Shell::Bash, "hlctl.bash"),
        (Shell::Zsh, "_hlctl"),
        (Shell::Fish, "hlctl.fish"),
    ] {
        let mut f = std::fs::File::create(completions.join(file))?;
        clap_complete::generate(shell, &mut hlctl.clone(), "hlctl", &mut f);
    }
    Ok(())
}

/// The page of `cmd` and one page per visible subcommand, recursively
/// (`hlctl-bench-net.1`...).
fn man_pages(mut cmd: clap::Command, dir: &Path, date: &str, manual: &str) -> Result<()> {
    cmd.build();
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        man_pages(sub.clone(), dir, date, manual)?;
    }
    clap_mangen::Man::new(cmd)
        .date(date)
        .manual(manual)
        .generate_to(dir)?;
    Ok(())
}

/// An empty directory at `dir` (stale pages of removed subcommands go).
fn fresh_dir(dir: &Path) -> Result<PathBuf> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("clear {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
    Ok(dir.to_path_buf())
}

/// `YYYY-MM-DD` from the first trailer line of a Debian changelog
/// (` -- Name <email>  Sun, 30 Nov 2025 00:00:00 +0000`).
fn changelog_date(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with(" -- "))?;
    let (_, date) = line.split_once(">  ")?;
    let mut w = date.split_whitespace().skip(1);
    let (day, month, year) = (w.next()?, w.next()?, w.next()?);
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let m = MONTHS.iter().position(|&x| x == month)? + 1;
    let d: u32 = day.parse().ok()?;
    let y: u32 = year.parse().ok()?;
    Some(format!("{y:04}-{m:02}-{d:02}"))
}
