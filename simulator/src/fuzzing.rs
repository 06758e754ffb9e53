//! Entry points for the fuzz targets in `fuzz/` (docs/fuzzing.md), built only
//! with the `fuzzing` feature: not an API.

/// Whether the flat create-body reader and serde_json's parse agree on
/// `bytes`: `Ok(true)` when the reader takes the body and makes of it what
/// the parse makes (fingerprint, arguments, reference, metadata), `Ok(false)`
/// when it leaves the body to the parse, both readings when they differ.
pub fn flat_body_agrees(bytes: &[u8]) -> Result<bool, String> {
    crate::provider::flat_reading_agrees(bytes)
}
