//! The provider's flat create-body reader against serde_json's parse, on
//! arbitrary bytes: wherever the reader takes a body it must make of it
//! exactly what the parse makes (the fingerprint, the arguments' text, the
//! reference, the metadata), and it must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(difference) = lostreply_simulator::fuzzing::flat_body_agrees(data) {
        panic!(
            "the flat reader and the parse disagree on {:?}: {difference}",
            String::from_utf8_lossy(data)
        );
    }
});
