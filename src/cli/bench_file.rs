//! `hlctl bench file`: a file written and read over SSH or through a
//! mount, beside raw TCP, the local disk and this CPU's encryption, with
//! the layer that limits each direction named.

use std::path::PathBuf;

use clap::Args;

use super::bench_parse;
use super::error::CliError;
use super::exit;
use super::global::Global;
use super::output::{ProgressBar, print_json};
use crate::bench::file::{SshTarget, Target};
use crate::dbus::wire::bench::FileParams;
use crate::protocol::FileRun;

/// Time a file over the path a copy takes, and name what limits it.
///
/// TARGET `ssh://[USER@]HOST[:PORT][/DIR]` runs your own OpenSSH client
/// (your ssh config, keys and agent; BatchMode, so never a password prompt):
/// `cat > FILE` then `cat FILE` on the server, timed from the command's
/// start to the last byte, with the negotiated cipher and MAC reported. It
/// runs in this process, never in hlctld (which has neither your keys nor
/// your agent). `--dir DIR` writes and reads through a mount the host has
/// (NFS, CIFS) or a local directory, with O_DIRECT where the filesystem
/// takes it, else buffered with the page cache dropped, and says which.
///
/// Beside the transfer, in the same run: raw TCP both ways to the same host
/// (an iperf3 server there: `hlctl serve` or `iperf3 -s`), a short dd-style
/// run on the local disk the file comes from, and what this CPU encrypts
/// per core with AES-128-GCM, AES-128-CCM, AES-256-GCM and
/// ChaCha20-Poly1305 and signs with AES-128-CMAC (SMB3's signing). Each
/// direction's verdict names the limiting layer: the network, the local
/// disk, encryption or signing, the client CPU, the protocol's
/// settings, or the server. The test file (`.hlctl-bench-...`) is removed
/// at the end, also on errors and Ctrl-C.
#[derive(Debug, Args)]
pub(crate) struct FileArgs {
    /// `ssh://[USER@]HOST[:PORT][/DIR]`: the SSH server and remote directory
    /// (default: the remote user's home).
    #[arg(value_name = "TARGET", required_unless_present_any = ["dir", "crypto_only"], conflicts_with = "dir")]
    pub(crate) target: Option<String>,
    /// A mount the host already has (NFS, CIFS) or a local directory.
    #[arg(long, value_name = "PATH")]
    pub(crate) dir: Option<PathBuf>,
    /// Bytes written and read back, binary units, a whole number of MiB.
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = bench_parse::size)]
    pub(crate) size: u64,
    /// ssh's configuration file (`ssh -F`) instead of your ~/.ssh/config.
    #[arg(long, value_name = "FILE", requires = "target")]
    pub(crate) ssh_config: Option<PathBuf>,
    /// Force an SSH cipher (`ssh -c`, e.g. aes128-gcm@openssh.com).
    #[arg(long, value_name = "NAME", requires = "target")]
    pub(crate) cipher: Option<String>,
    /// The iperf3 server for raw TCP, HOST[:PORT] [default: the transfer's host, port 5201].
    #[arg(long, value_name = "HOST[:PORT]", conflicts_with = "no_net")]
    pub(crate) net_peer: Option<String>,
    /// Skip raw TCP.
    #[arg(long)]
    pub(crate) no_net: bool,
    /// Seconds of raw TCP each way (1 to 60).
    #[arg(long, value_name = "SECONDS", default_value_t = 3, value_parser = crate::units::ranged(1u32, 60))]
    pub(crate) net_time: u32,
    /// The local directory the file comes from, measured beside [default: /var/tmp].
    #[arg(long, value_name = "PATH", conflicts_with = "no_disk")]
    pub(crate) local_dir: Option<PathBuf>,
    /// Skip the local disk.
    #[arg(long)]
    pub(crate) no_disk: bool,
    /// Skip this CPU's encryption figures.
    #[arg(long)]
    pub(crate) no_crypto: bool,
    #[command(flatten)]
    pub(crate) fleet: super::fleet::FleetArgs,
    /// Only this CPU's encryption figures (no transfer).
    #[arg(long, conflicts_with_all = ["target", "dir", "no_crypto"])]
    pub(crate) crypto_only: bool,
}

pub(crate) fn run(global: &Global, args: FileArgs) -> i32 {
    if args.crypto_only {
        return crypto_only(global);
    }
    let bar = ProgressBar::new(global.json);
    let res = match &args.target {
        Some(url) => over_ssh(global, &args, url, &bar),
        None => through_dir(global, &args, &bar),
    };
    bar.finish();
    match res {
        Ok(r) => {
            if global.json {
                print_json(&r);
            } else {
                super::bench_file_text::print(&r);
            }
            exit::OK
        }
        Err(e) => {
            eprintln!("hlctl bench file: {}", e.message);
            e.code
        }
    }
}

/// The parameters as they travel (in process or to hlctld).
fn params(args: &FileArgs) -> FileParams {
    let abs = |p: &PathBuf| {
        std::path::absolute(p)
            .unwrap_or(p.clone())
            .display()
            .to_string()
    };
    let (prometheus, host_label) = args.fleet.wire();
    FileParams {
        dir: args.dir.as_ref().map(abs).unwrap_or_default(),
        size: Some(args.size),
        net_peer: args.net_peer.clone(),
        no_net: args.no_net,
        net_time_s: Some(args.net_time),
        local_dir: args.local_dir.as_ref().map(abs),
        no_disk: args.no_disk,
        no_crypto: args.no_crypto,
        prometheus,
        host_label,
    }
}

/// An SSH target: always in this process (the user's keys and agent).
fn over_ssh(
    global: &Global,
    args: &FileArgs,
    url: &str,
    bar: &ProgressBar,
) -> Result<FileRun, CliError> {
    let invalid = |m: String| CliError::new(m, exit::INVALID);
    let mut t = SshTarget::parse(url).map_err(|e| invalid(e.to_string()))?;
    t.config = args.ssh_config.clone();
    t.cipher = args.cipher.clone();
    let req = params(args).request(Target::Ssh(t)).map_err(invalid)?;
    let cancel = super::interrupt::cancel_on_interrupt();
    let who = crate::ops::Requester::this_process();
    crate::ops::bench::file(&global.paths(), &req, who, bar, &cancel)
        .map(super::kept::warn_unstored)
        .map_err(|e| CliError::new(e.to_string(), e.class().exit_code()))
}

/// `--dir`: in process or as hlctld's job.
fn through_dir(global: &Global, args: &FileArgs, bar: &ProgressBar) -> Result<FileRun, CliError> {
    let params = params(args);
    let mut backend = super::backend::Backend::select(global, super::backend::Need::Nothing)?;
    backend.bench("file", &params, bar, |bar, cancel| {
        let req = params
            .config()
            .map_err(|m| CliError::new(m, exit::INVALID))?;
        let who = crate::ops::Requester::this_process();
        crate::ops::bench::file(&global.paths(), &req, who, bar, &cancel)
            .map(super::kept::warn_unstored)
            .map_err(|e| CliError::new(e.to_string(), e.class().exit_code()))
    })
}

/// `--crypto-only`: the four AEADs and the signing MAC, one core each, in
/// this process.
fn crypto_only(global: &Global) -> i32 {
    let cancel = super::interrupt::cancel_on_interrupt();
    let figures = crate::bench::crypto::measure_all(crate::bench::crypto::PER_AEAD, &cancel);
    if global.json {
        print_json(&figures);
    } else {
        super::bench_file_text::print_crypto(&figures);
    }
    if cancel.is_cancelled() {
        exit::FAILED
    } else {
        exit::OK
    }
}
