//! The provider profile reader on arbitrary bytes: a profile or a located
//! error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ =
            lostreply_harness::profile_file::parse_profile(text, std::path::Path::new("fuzz.yaml"));
    }
});
