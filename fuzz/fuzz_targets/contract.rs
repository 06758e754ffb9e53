//! The certify contract readers on arbitrary bytes, as the command line
//! picks them (`kind: mcp` or not; no environment variable is set): a
//! contract or a located error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lostreply_certify::contract::{self, Kind};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let env = |_: &str| None;
        match contract::kind_of(text) {
            Kind::Mcp => {
                let _ = lostreply_certify::mcp::contract::parse(text, "fuzz.yaml", &env);
            }
            Kind::Http => {
                let _ = contract::parse(text, "fuzz.yaml", &env);
            }
        }
    }
});
