//! iperf3's RSA user authentication, both ways, with the real iperf3 3.12
//! (Debian's, built with OpenSSL) and keys made by `openssl` in a temporary
//! directory: iperf3's client against `hlctl serve`, `hlctl bench net`
//! against `iperf3 -s`, hlctl with itself, and tokens made by `openssl
//! pkeyutl` (expired, from the future, replayed) sent on a raw connection.
//! Everything on 127.0.0.1, free ports, servers stopped by pid.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use common::net::*;
use hlctl::bench::net::{Padding, ServerAuth, ServerConfig};

/// iperf3's "test authorization failed".
const IEAUTHTEST: u32 = 142;
const PARAM_EXCHANGE: u8 = 9;
const CREATE_STREAMS: u8 = 10;
const SERVER_ERROR: u8 = 0xfe;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// A key pair as the docs make it, and a users file with mario/rossi.
struct Keys {
    _dir: tempfile::TempDir,
    private: String,
    public: String,
    users: String,
}

impl Keys {
    fn new() -> Keys {
        let dir = tempfile::tempdir().expect("temp dir");
        let at = |n: &str| dir.path().join(n).to_str().expect("utf-8").to_string();
        let (private, public, users) = (at("private.pem"), at("public.pem"), at("users.csv"));
        openssl(&["genrsa", "-out", &private, "2048"]);
        openssl(&["rsa", "-in", &private, "-pubout", "-out", &public]);
        let hash = sha256_hex("{mario}rossi");
        std::fs::write(&users, format!("# iperf3 users\nmario,{hash}\n")).expect("users file");
        Keys {
            _dir: dir,
            private,
            public,
            users,
        }
    }

    fn server_auth(&self, padding: Padding) -> Arc<ServerAuth> {
        let auth = ServerAuth::load(
            Path::new(&self.private),
            Path::new(&self.users),
            10,
            padding,
        )
        .expect("load the openssl key and users file");
        Arc::new(auth)
    }
}

fn openssl(args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .output()
        .expect("run openssl");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `printf '%s' TEXT | sha256sum`, by `sha256sum` (not our code).
fn sha256_hex(text: &str) -> String {
    let out = pipe("sha256sum", &[], text.as_bytes());
    String::from_utf8_lossy(&out)
        .split_whitespace()
        .next()
        .expect("a hash")
        .to_string()
}

fn pipe(prog: &str, args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut c = Command::new(prog)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    c.stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("write");
    let out = c.wait_with_output().expect("wait");
    assert!(
        out.status.success(),
        "{prog} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// iperf3's token for mario/`pwd` stamped `ts`, encrypted by `openssl
/// pkeyutl` (OAEP, OpenSSL's default SHA-1) and base64-encoded by `base64`.
fn openssl_token(keys: &Keys, pwd: &str, ts: i64) -> String {
    let text = format!("user: mario\npwd:  {pwd}\nts:   {ts}");
    let sealed = pipe(
        "openssl",
        &[
            "pkeyutl",
            "-encrypt",
            "-pubin",
            "-inkey",
            &keys.public,
            "-pkeyopt",
            "rsa_padding_mode:oaep",
        ],
        text.as_bytes(),
    );
    String::from_utf8(pipe("base64", &["-w0"], &sealed)).expect("base64 text")
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64
}

/// `iperf3 -c` with credentials (the password in IPERF3_PASSWORD).
fn iperf3_client_as(port: u16, user: Option<&str>, pwd: &str, keys: &Keys) -> (bool, String) {
    let mut c = Command::new("iperf3");
    c.args(["-c", "127.0.0.1", "-p", &port.to_string(), "-t", "1"]);
    if let Some(u) = user {
        c.args(["--username", u, "--rsa-public-key-path", &keys.public]);
    }
    c.env("IPERF3_PASSWORD", pwd);
    let (status, out, err) = Proc::spawn(&mut c).finish(Duration::from_secs(30));
    (status.is_some_and(|s| s.success()), format!("{out}{err}"))
}

/// iperf3 3.12's client, which pads with PKCS#1 v1.5, against `hlctl serve
/// --use-pkcs1-padding`: accepted with the right password; wrong password,
/// unknown user and no credentials refused with iperf3's own message.
#[test]
fn iperf3_312_client_to_hlctl_serve() {
    let _one = serial();
    let keys = Keys::new();
    let mut cfg = ServerConfig::new(0);
    cfg.auth = Some(keys.server_auth(Padding::Pkcs1));
    let server = HlServer::start(cfg);
    let port = server.port();

    let (ok, out) = iperf3_client_as(port, Some("mario"), "rossi", &keys);
    assert!(
        ok && out.contains("receiver"),
        "refused the right password: {out}"
    );
    let cases = [
        (Some("mario"), "verdi", "user 'mario': wrong password"),
        (Some("luigi"), "rossi", "unknown user 'luigi'"),
        (None, "", "no credentials"),
    ];
    for (user, pwd, why) in cases {
        let (ok, out) = iperf3_client_as(port, user, pwd, &keys);
        assert!(!ok, "{user:?}/{pwd} was let in: {out}");
        assert!(
            out.contains("test authorization failed"),
            "iperf3 did not say iperf3's refusal for {user:?}: {out}"
        );
        let outcomes = server.wait_outcomes(1, Duration::from_secs(5));
        assert!(
            outcomes
                .iter()
                .any(|o| o.as_ref().is_err_and(|e| e.contains(why))),
            "the server's log does not say `{why}`: {outcomes:?}"
        );
    }
    let summary = server.stop();
    assert_eq!((summary.tests_completed, summary.tests_failed), (1, 3));
}

/// Without --use-pkcs1-padding `hlctl serve` takes OAEP (iperf3 3.17+'s
/// default): 3.12's PKCS#1 token is refused, and the log names the padding.
#[test]
fn iperf3_312_client_needs_the_pkcs1_flag_on_hlctl_serve() {
    let _one = serial();
    let keys = Keys::new();
    let mut cfg = ServerConfig::new(0);
    cfg.auth = Some(keys.server_auth(Padding::Oaep));
    let server = HlServer::start(cfg);
    let (ok, out) = iperf3_client_as(server.port(), Some("mario"), "rossi", &keys);
    assert!(!ok && out.contains("test authorization failed"), "{out}");
    let outcomes = server.wait_outcomes(1, Duration::from_secs(5));
    assert!(
        format!("{outcomes:?}").contains("--use-pkcs1-padding"),
        "{outcomes:?}"
    );
}

/// One raw parameter exchange with `token`: the state after the
/// parameters, and iperf3's error number if it is SERVER_ERROR.
fn raw_params(port: u16, token: &str, seed: u8) -> (Option<u8>, Option<u32>) {
    let raw = Raw::connect(([127, 0, 0, 1], port).into());
    raw.send(&cookie(seed));
    assert_eq!(raw.byte(), Some(PARAM_EXCHANGE));
    raw.send_json(&serde_json::json!({
        "tcp": true, "time": 1, "parallel": 1, "len": 131072,
        "client_version": "3.12", "authtoken": token,
    }));
    let state = raw.byte();
    let errno = (state == Some(SERVER_ERROR))
        .then(|| raw.exact(4))
        .flatten()
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    (state, errno)
}

/// Tokens made by openssl: a fresh one is accepted once and refused when
/// sent again; one 60 s old or 60 s ahead is refused (time skew), as is one
/// with the wrong password; each refusal is iperf3's error 142.
#[test]
fn openssl_tokens_expired_future_replayed_wrong() {
    let _one = serial();
    let keys = Keys::new();
    let mut cfg = ServerConfig::new(0);
    cfg.auth = Some(keys.server_auth(Padding::Oaep));
    cfg.setup_timeout = Duration::from_secs(2);
    let server = HlServer::start(cfg);
    let port = server.port();
    let fresh = openssl_token(&keys, "rossi", now());
    assert_eq!(raw_params(port, &fresh, 1), (Some(CREATE_STREAMS), None));
    // That test ends without streams; then the same token again.
    server.wait_outcomes(1, Duration::from_secs(10));
    let refused = Some((Some(SERVER_ERROR), Some(IEAUTHTEST)));
    assert_eq!(Some(raw_params(port, &fresh, 2)), refused, "a replay");
    let old = openssl_token(&keys, "rossi", now() - 60);
    assert_eq!(Some(raw_params(port, &old, 3)), refused, "expired");
    let ahead = openssl_token(&keys, "rossi", now() + 60);
    assert_eq!(
        Some(raw_params(port, &ahead, 4)),
        refused,
        "from the future"
    );
    let wrong = openssl_token(&keys, "verdi", now());
    assert_eq!(Some(raw_params(port, &wrong, 5)), refused, "wrong password");
    let log = format!("{:?}", server.wait_outcomes(5, Duration::from_secs(5)));
    for why in ["a replay", "s from this server's clock", "wrong password"] {
        assert!(log.contains(why), "`{why}` not in {log}");
    }
}

fn hlctl(state: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hlctl"));
    c.arg("--state-dir").arg(state);
    c
}

/// `hlctl bench net --username` to `port` with `pwd` (extra flags after).
fn hlctl_client(state: &Path, port: u16, keys: &Keys, pwd: &str, extra: &[&str]) -> Command {
    let mut c = hlctl(state);
    c.args([
        "--local",
        "bench",
        "net",
        "-c",
        "127.0.0.1",
        "-p",
        &port.to_string(),
    ]);
    c.args(["-t", "1", "--username", "mario"]);
    c.args(["--rsa-public-key-path", &keys.public]);
    c.args(extra).env("IPERF3_PASSWORD", pwd);
    c
}

/// `hlctl bench net` against the real `iperf3 -s` with authentication:
/// accepted with --use-pkcs1-padding (3.12 decrypts only PKCS#1 v1.5);
/// the wrong password and the missing flag each fail with a message that
/// says what to check.
#[test]
fn hlctl_client_to_iperf3_312_server() {
    let _one = serial();
    let keys = Keys::new();
    let state = tempfile::tempdir().expect("state");
    let port = free_port();
    let _server = Proc::spawn(Command::new("iperf3").args([
        "-s",
        "-B",
        "127.0.0.1",
        "-p",
        &port.to_string(),
        "--rsa-private-key-path",
        &keys.private,
        "--authorized-users-path",
        &keys.users,
    ]));
    let pkcs1 = ["--use-pkcs1-padding"];
    let (status, out, err) = until_listening("iperf3 -s", || {
        hlctl_client(state.path(), port, &keys, "rossi", &pkcs1)
    });
    assert!(status.is_some_and(|s| s.success()), "{out}\n{err}");
    assert!(out.contains("receiver"), "{out}");
    let refused = |pwd: &str, extra: &[&str], says: &str| {
        let (status, _, err) =
            Proc::spawn(&mut hlctl_client(state.path(), port, &keys, pwd, extra))
                .finish(Duration::from_secs(30));
        assert_eq!(status.and_then(|s| s.code()), Some(1), "{err}");
        assert!(
            err.contains("test authorization failed") && err.contains(says),
            "{err}"
        );
    };
    refused("verdi", &pkcs1, "check the password (IPERF3_PASSWORD)");
    refused(
        "rossi",
        &[],
        "an iperf3 3.12-3.16 server needs --use-pkcs1-padding",
    );
}

/// hlctl with itself through the CLI: `hlctl serve` with the flags,
/// `hlctl bench net` with OAEP (both ends' default); the wrong password
/// refused; no password at all is an input error before connecting.
#[test]
fn hlctl_to_hlctl_cli() {
    let _one = serial();
    let keys = Keys::new();
    let (server_state, client_state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let port = free_port();
    let serve = Proc::spawn(hlctl(server_state.path()).args([
        "serve",
        "--bind",
        "127.0.0.1",
        "--port",
        &port.to_string(),
        "--rsa-private-key-path",
        &keys.private,
        "--authorized-users-path",
        &keys.users,
    ]));
    let (status, out, err) = until_listening("hlctl serve", || {
        hlctl_client(client_state.path(), port, &keys, "rossi", &[])
    });
    assert!(status.is_some_and(|s| s.success()), "{out}\n{err}");
    let (status, _, err) = Proc::spawn(&mut hlctl_client(
        client_state.path(),
        port,
        &keys,
        "verdi",
        &[],
    ))
    .finish(Duration::from_secs(30));
    assert_eq!(status.and_then(|s| s.code()), Some(1), "{err}");
    assert!(err.contains("test authorization failed"), "{err}");
    let mut no_pwd = hlctl_client(client_state.path(), port, &keys, "", &[]);
    no_pwd.env_remove("IPERF3_PASSWORD");
    let (status, _, err) = Proc::spawn(&mut no_pwd).finish(Duration::from_secs(10));
    assert_eq!(status.and_then(|s| s.code()), Some(2), "{err}");
    assert!(err.contains("IPERF3_PASSWORD"), "{err}");
    let (_, out, _) = serve.finish(Duration::from_millis(100));
    assert!(
        out.contains("Authentication succeeded for user 'mario'"),
        "{out}"
    );
    assert!(out.contains("user 'mario': wrong password"), "{out}");
}
