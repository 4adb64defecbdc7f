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
use hlctl::cli::assets;

fn main() -> Result<()> {
    let mut args = std::env::args_os().skip(1);
    let (Some(out), None) = (args.next(), args.next()) else {
        bail!("usage: gen-assets OUT_DIR");
    };
    let out = PathBuf::from(out);
    let changelog = Path::new(env!("CARGO_MANIFEST_DIR")).join("packaging/changelog");
    let date = assets::changelog_date(
        &std::fs::read_to_string(&changelog).context("read packaging/changelog")?,
    )
    .context("packaging/changelog: no ` -- NAME <EMAIL>  DATE` line with an RFC 2822 date")?;

    let man1 = fresh_dir(&out.join("man/man1"))?;
    let man8 = fresh_dir(&out.join("man/man8"))?;
    let completions = fresh_dir(&out.join("completions"))?;

    let hlctl = hlctl::cli::args::hlctl_command();
    assets::write_man_pages(hlctl.clone(), &man1, &date)?;
    let hlctld = hlctl::dbus::daemon::args::DaemonArgs::command();
    clap_mangen::Man::new(hlctld)
        .section("8")
        .date(&date)
        .manual(assets::MANUAL)
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

/// An empty directory at `dir` (stale pages of removed subcommands go).
fn fresh_dir(dir: &Path) -> Result<PathBuf> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("clear {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
    Ok(dir.to_path_buf())
}
