//! One seed per run. Every random choice of a scenario run derives from the
//! run's seed and a stable label (the scenario's id), so a verdict depends
//! neither on `--jobs` nor on which other scenarios ran, or in which order.

/// The seed used when none is given: fixed, so that two runs of the same
/// command are the same run.
pub const DEFAULT_SEED: u64 = 1;

/// A scenario's seed: derived from the run's seed and the scenario's id only, so
/// that it does not depend on which other scenarios run or in which order.
pub fn scenario_seed(run_seed: u64, scenario_id: &str) -> u64 {
    // FNV-1a over the id, then splitmix64 with the run seed: stable across Rust versions.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in scenario_id.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let mut z = h ^ run_seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
