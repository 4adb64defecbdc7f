#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hlctl::fuzzing::sys_values(data));
