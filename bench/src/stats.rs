//! Percentiles and medians over raw samples. Samples are kept whole (a few
//! hundred thousand `u32` at most per point), so percentiles are exact, not binned.

/// Latency percentiles of one measured point, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Percentiles {
    /// Samples.
    pub count: usize,
    /// Median.
    pub p50_us: u32,
    /// 99th percentile.
    pub p99_us: u32,
    /// Largest.
    pub max_us: u32,
}

/// Sorts `samples` and reads p50, p99 and max (nearest-rank); zeros when empty.
pub fn percentiles(samples: &mut [u32]) -> Percentiles {
    samples.sort_unstable();
    Percentiles {
        count: samples.len(),
        p50_us: nearest_rank(samples, 0.50),
        p99_us: nearest_rank(samples, 0.99),
        max_us: samples.last().copied().unwrap_or(0),
    }
}

/// The nearest-rank percentile `q` (0..=1) of sorted samples; 0 when empty.
fn nearest_rank(sorted: &[u32], q: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The median of `values` (the mean of the middle two for an even count); 0 when empty.
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The exponent `k` in `t ∝ n^k` between two measured sizes: 1 is linear, 2 quadratic.
pub fn growth_exponent(n1: u64, t1: f64, n2: u64, t2: f64) -> Option<f64> {
    if n1 == 0 || n2 == n1 || t1 <= 0.0 || t2 <= 0.0 {
        return None;
    }
    Some((t2 / t1).ln() / (n2 as f64 / n1 as f64).ln())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut samples: Vec<u32> = (1..=100).rev().collect();
        let p = percentiles(&mut samples);
        assert_eq!(
            p,
            Percentiles {
                count: 100,
                p50_us: 50,
                p99_us: 99,
                max_us: 100
            }
        );
        assert_eq!(percentiles(&mut []), Percentiles::default());
        assert_eq!(percentiles(&mut [7]).p99_us, 7);
    }

    #[test]
    fn medians_and_exponents() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
        let k = growth_exponent(1000, 1.0, 10_000, 100.0).unwrap();
        assert!((k - 2.0).abs() < 1e-9);
        assert_eq!(growth_exponent(1000, 0.0, 10_000, 1.0), None);
    }
}
