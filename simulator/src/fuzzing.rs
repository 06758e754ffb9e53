//! Entry points for the fuzz targets in `fuzz/` (docs/fuzzing.md), built only
//! with the `fuzzing` feature: not an API.

/// The question the equivalence test asks of generated bodies, for any
/// bytes: `Ok(true)` when the flat reader takes them and reads them as the
/// parse does, `Ok(false)` when it leaves them to the parse, and both
/// readings when they differ.
pub fn flat_body_agrees(bytes: &[u8]) -> Result<bool, String> {
    crate::provider::flat_reading_agrees(bytes)
}
