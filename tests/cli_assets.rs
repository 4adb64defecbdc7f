//! Completions and man pages without the .deb (issue 30): `hlctl completions
//! SHELL` is a script the real bash completes with, `hlctl man` a page the
//! real `man` renders.

mod common;

use common::{HLCTL, hlctl, output_text, run};

#[test]
fn bash_completes_commands_and_flags_with_the_generated_script() {
    // Source the script into a real bash and ask it what it offers for
    // `hlctl tu<TAB>` and `hlctl tune --pe<TAB>`.
    let script = format!(
        "source <({HLCTL} completions bash) || exit 9
         COMP_WORDS=(hlctl tu); COMP_CWORD=1; COMP_LINE='hlctl tu'; _hlctl hlctl tu hlctl
         echo \"1:${{COMPREPLY[*]}}\"
         COMP_WORDS=(hlctl tune --pe); COMP_CWORD=2; COMP_LINE='hlctl tune --pe'; _hlctl hlctl --pe tune
         echo \"2:${{COMPREPLY[*]}}\""
    );
    let out = run("bash", &["-c", &script]);
    assert!(out.status.success(), "{}", output_text(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1:tune"), "{text}");
    assert!(text.contains("2:--peer"), "{text}");
}

#[test]
fn zsh_and_fish_scripts_name_every_command() {
    for shell in ["zsh", "fish"] {
        let out = hlctl(&["completions", shell]);
        assert!(out.status.success(), "{}", output_text(&out));
        let text = String::from_utf8_lossy(&out.stdout);
        for verb in ["show", "tune", "doctor", "rollback", "man"] {
            assert!(text.contains(verb), "{shell}: {verb} missing");
        }
    }
    let out = hlctl(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2), "{}", output_text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bash, zsh, fish"));
}

#[test]
fn man_renders_a_commands_page_with_its_flags() {
    let out = hlctl(&["man", "tune", "--roff"]);
    assert!(out.status.success(), "{}", output_text(&out));
    let roff = String::from_utf8_lossy(&out.stdout);
    assert!(roff.contains(".TH hlctl-tune 1"), "{roff}");

    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("hlctl-tune.1");
    std::fs::write(&page, &out.stdout).unwrap();
    let shown = std::process::Command::new("man")
        .args(["-l", "-P", "cat"])
        .arg(&page)
        .env("MANWIDTH", "100")
        .output()
        .expect("man (scripts/setup.sh installs man-db)");
    assert!(shown.status.success(), "{}", output_text(&shown));
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("--peer"), "{text}");
    assert!(text.contains("hlctl-tune"), "{text}");

    let out = hlctl(&["man", "nosuch"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no command `nosuch`") && err.contains("tune"),
        "{err}"
    );
}

#[test]
fn man_out_writes_a_page_for_every_command_and_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let out = hlctl(&["man", "--out", dir.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", output_text(&out));
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for want in [
        "hlctl.1",
        "hlctl-tune.1",
        "hlctl-bench-net.1",
        "hlctl-man.1",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} not in {names:?}");
    }
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(&format!("wrote {} pages", names.len())),
        "{said}"
    );
}
