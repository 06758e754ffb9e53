//! The scenario reader on arbitrary bytes: any text is answered with a
//! scenario or a located error, never a panic, a hang or unbounded memory.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = lostreply_harness::scenario::parse(text, "fuzz.yaml");
    }
});
