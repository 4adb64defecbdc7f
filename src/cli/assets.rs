//! Shell completions and man pages from the clap definitions: `hlctl
//! completions SHELL` and `hlctl man [COMMAND...]` for a cargo install, and
//! the same pages `packaging/gen-assets.rs` writes into the .deb.

use std::io::{IsTerminal, Write};
use std::path::Path;

use clap::{Args, ValueEnum};

use super::exit;

/// Print a shell completion script on stdout.
///
/// Install it where your shell looks, e.g.
///   hlctl completions bash | sudo tee /usr/share/bash-completion/completions/hlctl
///   hlctl completions zsh  | sudo tee /usr/local/share/zsh/site-functions/_hlctl
///   hlctl completions fish > ~/.config/fish/completions/hlctl.fish
/// (the .deb installs all three).
#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: CompletionShell,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}

/// Show the manual page of hlctl or of one command (`hlctl man bench net`).
///
/// On a terminal the page is shown with `man`; otherwise (or with --roff)
/// its roff source is printed, e.g. `hlctl man tune > hlctl-tune.1`.
/// `--out DIR` writes every page (hlctl.1, hlctl-COMMAND.1 for each command
/// and subcommand) into DIR, as the .deb installs them in
/// /usr/share/man/man1.
#[derive(Debug, Args)]
pub(crate) struct ManArgs {
    /// The command whose page to show, e.g. `tune` or `bench net` [default: hlctl itself].
    #[arg(value_name = "COMMAND")]
    command: Vec<String>,
    /// Print the roff source even on a terminal.
    #[arg(long)]
    roff: bool,
    /// Write every page into this directory instead.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    out: Option<std::path::PathBuf>,
}

/// The date the man pages carry: the newest entry of `packaging/changelog`,
/// so the pages of one version are the same wherever they are made.
pub fn manual_date() -> String {
    changelog_date(include_str!("../../packaging/changelog")).unwrap_or_default()
}

/// The name of the manual the pages belong to.
pub const MANUAL: &str = "hlctl manual";

/// `hlctl completions`: `cmd` is hlctl's clap tree ([`super::args::hlctl_command`]).
pub(crate) fn completions(args: CompletionsArgs, mut cmd: clap::Command) -> i32 {
    let shell = match args.shell {
        CompletionShell::Bash => clap_complete::Shell::Bash,
        CompletionShell::Zsh => clap_complete::Shell::Zsh,
        CompletionShell::Fish => clap_complete::Shell::Fish,
    };
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "hlctl", &mut script);
    print_bytes(&script)
}

/// Write `bytes` on stdout; a reader that went away (`| head`) is not an error.
fn print_bytes(bytes: &[u8]) -> i32 {
    match std::io::stdout().lock().write_all(bytes) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => super::fail(&e, exit::FAILED),
        _ => exit::OK,
    }
}

/// `hlctl man`: `cmd` is hlctl's clap tree ([`super::args::hlctl_command`]).
pub(crate) fn man(args: ManArgs, cmd: clap::Command) -> i32 {
    if let Some(dir) = &args.out {
        return match write_man_pages(cmd, dir, &manual_date()) {
            Ok(n) => {
                println!("wrote {n} pages into {}", dir.display());
                exit::OK
            }
            Err(e) => super::fail(&e, exit::FAILED),
        };
    }
    let names = command_names(&cmd);
    let Some(cmd) = find(cmd, &args.command) else {
        eprintln!(
            "hlctl man: no command `{}`; commands: {}",
            args.command.join(" "),
            names.join(", ")
        );
        return exit::INVALID;
    };
    let mut page = Vec::new();
    if let Err(e) = page_of(cmd, &manual_date()).render(&mut page) {
        return super::fail(&e, exit::FAILED);
    }
    if !args.roff && std::io::stdout().is_terminal() && show_with_man(&page) {
        return exit::OK;
    }
    print_bytes(&page)
}

/// Write the page of `cmd` and one page per visible subcommand, recursively
/// (`hlctl-bench-net.1` ...), into `dir`; returns how many.
pub fn write_man_pages(cmd: clap::Command, dir: &Path, date: &str) -> std::io::Result<usize> {
    std::fs::create_dir_all(dir)?;
    let mut n = 0;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        n += write_man_pages(sub.clone(), dir, date)?;
    }
    page_of(cmd, date).generate_to(dir)?;
    Ok(n + 1)
}

fn page_of(cmd: clap::Command, date: &str) -> clap_mangen::Man {
    clap_mangen::Man::new(cmd).date(date).manual(MANUAL)
}

/// The subcommand at `path` of the built tree, whose display name is the
/// page's (`hlctl-bench-net`), so its title and synopsis are the full command.
fn find(cmd: clap::Command, path: &[String]) -> Option<clap::Command> {
    let mut cur = cmd;
    for word in path {
        cur = cur.find_subcommand(word)?.clone();
    }
    Some(cur)
}

fn command_names(cmd: &clap::Command) -> Vec<String> {
    cmd.get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_string())
        .collect()
}

/// Show a roff page with `man -l -`; false when `man` is not there or failed.
fn show_with_man(page: &[u8]) -> bool {
    let child = std::process::Command::new("man")
        .args(["-l", "-"])
        .stdin(std::process::Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        return false;
    };
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(page);
    }
    child.wait().is_ok_and(|s| s.success())
}

/// `YYYY-MM-DD` from the first trailer line of a Debian changelog
/// (` -- Name <email>  Sun, 30 Nov 2025 00:00:00 +0000`).
pub fn changelog_date(text: &str) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_changelog_gives_the_pages_a_date() {
        let d = manual_date();
        assert_eq!(d.len(), 10, "{d:?}");
        assert!(d.starts_with("20"), "{d:?}");
        assert_eq!(
            changelog_date(" -- A <a@b>  Sun, 30 Nov 2025 00:00:00 +0000").as_deref(),
            Some("2025-11-30")
        );
        assert_eq!(changelog_date("no trailer"), None);
    }

    #[test]
    fn a_subcommand_page_is_named_by_its_full_command() {
        let mut tree = clap::Command::new("hlctl")
            .subcommand(clap::Command::new("bench").subcommand(clap::Command::new("net")));
        tree.build();
        let c = find(tree.clone(), &["bench".into(), "net".into()]).unwrap();
        assert_eq!(c.get_display_name(), Some("hlctl-bench-net"));
        assert!(find(tree, &["nosuch".into()]).is_none());
    }
}
