//! What a VM run produced, and readers for the guest's marked sections.

use std::time::Duration;

const START: &str = "===HLCTL-GUEST-START===";
const EXIT: &str = "===HLCTL-GUEST-EXIT rc=";

/// One `section NAME CMD` block the guest printed.
#[derive(Clone, Debug)]
pub struct Section {
    pub text: String,
    /// CMD's exit code (from the END marker).
    pub rc: i32,
}

/// What a VM run produced.
#[derive(Debug)]
pub struct VmOutput {
    /// Everything qemu wrote to stdout (serial console), `\r` removed.
    pub serial: String,
    /// qemu's own stderr (warnings).
    pub qemu_stderr: String,
    /// The guest script's exit code; None when the guest never finished.
    pub guest_rc: Option<i32>,
    /// True when qemu was killed at the timeout.
    pub timed_out: bool,
    /// From spawning qemu to its exit.
    pub elapsed: Duration,
    /// qemu's pid (gone by the time `run()` returns).
    pub qemu_pid: u32,
}

impl VmOutput {
    /// Panic (showing the whole console) unless the guest script exited 0.
    pub fn assert_success(&self) {
        assert!(
            self.guest_rc == Some(0) && !self.timed_out,
            "VM guest failed: rc={:?} timed_out={} after {:?}\n--- serial ---\n{}\n--- qemu stderr ---\n{}",
            self.guest_rc,
            self.timed_out,
            self.elapsed,
            self.serial,
            self.qemu_stderr
        );
    }

    /// The end of every VM test's run: print the boot-to-power-off time and
    /// the sections `show` (with their stderr) for the log, then
    /// [`assert_success`](Self::assert_success).
    pub fn report_and_assert_success(&self, show: &[&str]) {
        eprintln!("VM boot to power-off: {:.1} s", self.elapsed.as_secs_f64());
        for name in show {
            if let Some(s) = self.try_section(name) {
                eprintln!("=== {name} (rc {}) ===\n{}", s.rc, s.text);
            }
            if let Some(s) = self.try_section(&format!("{name}.stderr")) {
                eprintln!("=== {name} stderr ===\n{}", s.text);
            }
        }
        self.assert_success();
    }

    /// What the guest script printed (between the start and exit markers).
    pub fn guest_output(&self) -> &str {
        let start = self.serial.find(START).map_or(0, |i| i + START.len());
        let end = self.serial[start..]
            .find(EXIT)
            .map_or(self.serial.len(), |i| start + i);
        self.serial[start..end].trim_matches('\n')
    }

    /// The first section NAME; panics (showing the console) when missing.
    pub fn section(&self, name: &str) -> Section {
        self.try_section(name).unwrap_or_else(|| {
            panic!(
                "guest printed no section {name:?}\n--- serial ---\n{}",
                self.serial
            )
        })
    }

    /// The first section NAME, if the guest printed it.
    pub fn try_section(&self, name: &str) -> Option<Section> {
        let begin = format!("===BEGIN {name}===\n");
        let end = format!("===END {name} rc=");
        let from = self.serial.find(&begin)? + begin.len();
        let len = self.serial[from..].find(&end)?;
        let rest = &self.serial[from + len + end.len()..];
        let rc = rest.split("===").next()?.trim().parse().ok()?;
        let text = self.serial[from..from + len].to_string();
        Some(Section { text, rc })
    }

    /// Section NAME parsed as JSON; panics with the text when it is not.
    pub fn json(&self, name: &str) -> serde_json::Value {
        let s = self.section(name);
        serde_json::from_str(&s.text)
            .unwrap_or_else(|e| panic!("section {name:?} is not JSON ({e}):\n{}", s.text))
    }

    /// Modules that failed to load in the guest.
    pub fn insmod_failures(&self) -> Vec<String> {
        self.serial
            .lines()
            .filter_map(|l| l.strip_prefix("===HLCTL-INSMOD-FAILED "))
            .map(|l| l.trim_end_matches('=').trim().to_string())
            .collect()
    }

    pub(crate) fn parse_guest_rc(serial: &str) -> Option<i32> {
        let i = serial.rfind(EXIT)? + EXIT.len();
        serial[i..].split("===").next()?.trim().parse().ok()
    }
}
