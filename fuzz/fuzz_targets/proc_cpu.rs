#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| hlctl::fuzzing::proc_cpu(data));
