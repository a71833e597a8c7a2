//! Paired differences over seeds, their bootstrap confidence interval, and the verdict a finding
//! gets from it.
//!
//! Two arms of a study run from the same seeds (same model initialisation, same prompt order,
//! same sampling stream until their updates differ), so a finding compares them seed by seed:
//! `d_s = metric(a, s) - metric(b, s)`. The interval is the percentile bootstrap of the mean of
//! the `d_s` (Efron & Tibshirani 1993, ch. 13): [`RESAMPLES`] resamples of the seeds with
//! replacement, drawn from a fixed seed so that a report is the same every time it is made.
//! With 8-16 seeds the percentile interval is somewhat narrow (it ignores the small-sample
//! t correction); the verdicts therefore need the whole interval on one side of zero.

use rlbase::SplitMix64;
use serde::Serialize;

/// Bootstrap resamples per interval.
pub const RESAMPLES: usize = 10_000;

/// Coverage of the interval (two-sided).
pub const CONFIDENCE: f64 = 0.95;

/// The seed of the resampling stream (any fixed value: it only makes reports reproducible).
const BOOTSTRAP_SEED: u64 = 0x5EED_B007;

/// The mean of paired differences and its bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    /// Pairs used (seeds where both arms gave a finite value).
    pub n: usize,
    /// Mean difference.
    pub mean: f64,
    /// Lower end of the [`CONFIDENCE`] interval.
    pub low: f64,
    /// Upper end.
    pub high: f64,
}

impl Interval {
    /// `+0.123 [+0.045, +0.201]`, with `digits` decimals; `n/a` without pairs.
    pub fn render(&self, digits: usize) -> String {
        if self.n == 0 {
            return "n/a".into();
        }
        format!("{:+.digits$} [{:+.digits$}, {:+.digits$}]", self.mean, self.low, self.high)
    }

    /// An interval of log differences as ratios: `×0.52 [×0.31, ×0.86]`.
    pub fn render_ratio(&self, digits: usize) -> String {
        if self.n == 0 {
            return "n/a".into();
        }
        format!("×{:.digits$} [×{:.digits$}, ×{:.digits$}]", self.mean.exp(), self.low.exp(), self.high.exp())
    }
}

/// [`paired_difference`] of the logarithms: the geometric mean of `a[i] / b[i]` (as a log) with
/// its interval, for a metric that spans orders of magnitude across seeds (the largest KL between
/// consecutive policies ran from 0.3 to 510 in one arm), where one seed would swamp a plain mean.
/// Pairs with a side that is not positive are left out.
pub fn paired_log_ratio(a: &[f64], b: &[f64]) -> Interval {
    let ln = |v: &[f64]| -> Vec<f64> { v.iter().map(|x| if *x > 0.0 { x.ln() } else { f64::NAN }).collect() };
    paired_difference(&ln(a), &ln(b))
}

/// The mean of `a[i] - b[i]` over the pairs where both are finite, with its percentile bootstrap
/// interval. The same inputs give the same interval (the resampling seed is fixed).
pub fn paired_difference(a: &[f64], b: &[f64]) -> Interval {
    let diffs: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).filter(|d| d.is_finite()).collect();
    let n = diffs.len();
    if n == 0 {
        return Interval { n, mean: f64::NAN, low: f64::NAN, high: f64::NAN };
    }
    let mean = diffs.iter().sum::<f64>() / n as f64;
    let mut rng = SplitMix64::new(BOOTSTRAP_SEED);
    let mut means: Vec<f64> =
        (0..RESAMPLES).map(|_| (0..n).map(|_| diffs[rng.below(n)]).sum::<f64>() / n as f64).collect();
    means.sort_by(f64::total_cmp);
    let tail = (1.0 - CONFIDENCE) / 2.0;
    Interval { n, mean, low: quantile(&means, tail), high: quantile(&means, 1.0 - tail) }
}

/// The `q`-quantile of sorted, non-empty values, by linear interpolation between order statistics.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// The sign a finding predicts for `a - b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// `a` above `b`.
    Higher,
    /// `a` below `b`.
    Lower,
}

impl Direction {
    /// `>` or `<`.
    pub fn symbol(self) -> &'static str {
        match self {
            Direction::Higher => ">",
            Direction::Lower => "<",
        }
    }
}

/// What the data say about a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The whole interval lies on the predicted side of zero.
    Reproduces,
    /// The whole interval lies on the other side.
    Contradicts,
    /// The interval contains zero: this many seeds cannot tell.
    Inconclusive,
    /// The finding's precondition failed (the baseline did not learn, so it cannot degrade).
    NotTestable,
}

impl Verdict {
    /// The verdict of `interval` for a finding that predicts `direction`.
    pub fn of(interval: &Interval, direction: Direction) -> Verdict {
        if interval.n == 0 {
            return Verdict::NotTestable;
        }
        let (above, below) = (interval.low > 0.0, interval.high < 0.0);
        match (direction, above, below) {
            (Direction::Higher, true, _) | (Direction::Lower, _, true) => Verdict::Reproduces,
            (Direction::Higher, _, true) | (Direction::Lower, true, _) => Verdict::Contradicts,
            _ => Verdict::Inconclusive,
        }
    }

    /// The word a report prints.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Reproduces => "reproduces",
            Verdict::Contradicts => "contradicts",
            Verdict::Inconclusive => "inconclusive",
            Verdict::NotTestable => "not testable",
        }
    }
}

/// Mean and sample standard deviation of the finite values (`NaN`, 0 without any).
pub fn mean_std(values: &[f64]) -> (f64, f64) {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let n = finite.len();
    if n == 0 {
        return (f64::NAN, 0.0);
    }
    let mean = finite.iter().sum::<f64>() / n as f64;
    let var = if n > 1 { finite.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64 } else { 0.0 };
    (mean, var.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clear_shift_is_inside_its_interval_and_reproduces() {
        let a = [0.50, 0.61, 0.55, 0.70, 0.52, 0.66, 0.58, 0.63];
        let b = [0.20, 0.25, 0.31, 0.22, 0.18, 0.35, 0.27, 0.24];
        let d = paired_difference(&a, &b);
        assert_eq!(d.n, 8);
        assert!((d.mean - 0.34125).abs() < 1e-12, "{}", d.mean);
        assert!(d.low < d.mean && d.mean < d.high && d.low > 0.2 && d.high < 0.45, "{d:?}");
        assert_eq!(Verdict::of(&d, Direction::Higher), Verdict::Reproduces);
        assert_eq!(Verdict::of(&d, Direction::Lower), Verdict::Contradicts);
        assert_eq!(paired_difference(&a, &b), d, "a fixed resampling seed: the same interval every time");
    }

    #[test]
    fn noise_around_zero_is_inconclusive() {
        let a = [0.1, -0.2, 0.3, -0.1, 0.2, -0.3, 0.05, -0.05];
        let d = paired_difference(&a, &[0.0; 8]);
        assert!(d.low < 0.0 && d.high > 0.0, "{d:?}");
        assert_eq!(Verdict::of(&d, Direction::Higher), Verdict::Inconclusive);
        assert_eq!(Verdict::of(&d, Direction::Lower), Verdict::Inconclusive);
    }

    #[test]
    fn pairing_removes_what_the_seeds_share() {
        // Each seed moves both arms alike: unpaired, the spread swamps the 0.05 gap; paired, the
        // gap is exact.
        let b: Vec<f64> = (0..8).map(|s| 0.1 * s as f64).collect();
        let a: Vec<f64> = b.iter().map(|x| x + 0.05).collect();
        let d = paired_difference(&a, &b);
        assert!((d.low - 0.05).abs() < 1e-12 && (d.high - 0.05).abs() < 1e-12, "{d:?}");
    }

    #[test]
    fn pairs_with_a_non_finite_side_are_left_out() {
        let d = paired_difference(&[1.0, f64::NAN, 3.0], &[0.0, 0.0, f64::INFINITY]);
        assert_eq!((d.n, d.mean), (1, 1.0));
        let none = paired_difference(&[f64::NAN], &[0.0]);
        assert_eq!(none.n, 0);
        assert_eq!(none.render(2), "n/a");
        assert_eq!(Verdict::of(&none, Direction::Higher), Verdict::NotTestable);
    }

    #[test]
    fn ratios_are_judged_on_their_logarithm() {
        // One seed 500x larger: it makes the plain mean difference 62, the geometric mean ratio of
        // the eight pairs is 1.08 (seven of them are about 0.5).
        let a = [0.5, 0.4, 0.6, 0.5, 0.3, 0.5, 0.4, 500.0];
        let b = [1.0; 8];
        assert!(paired_difference(&a, &b).mean > 60.0);
        let r = paired_log_ratio(&a, &b);
        assert_eq!(r.n, 8);
        let product: f64 = a.iter().product();
        assert!((r.mean.exp() - product.powf(1.0 / 8.0)).abs() < 1e-12, "{}", r.render_ratio(2));
        assert_eq!(r.render_ratio(2).split(' ').next(), Some("×1.08"));
        let r = paired_log_ratio(&[2.0, 4.0, 0.0], &[1.0, 2.0, 1.0]);
        assert_eq!(r.n, 2, "a zero KL has no logarithm");
        assert_eq!(r.render_ratio(2), "×2.00 [×2.00, ×2.00]");
    }

    #[test]
    fn renders_signed_values() {
        let i = Interval { n: 3, mean: 0.1234, low: -0.01, high: 0.25 };
        assert_eq!(i.render(2), "+0.12 [-0.01, +0.25]");
    }

    #[test]
    fn mean_and_sample_std() {
        let (m, s) = mean_std(&[1.0, 2.0, 3.0, f64::NAN]);
        assert_eq!(m, 2.0);
        assert!((s - 1.0).abs() < 1e-12);
        assert!(mean_std(&[]).0.is_nan());
    }
}
