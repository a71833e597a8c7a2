//! Paired bootstrap over problems: is run B better than run A on the same problems?
//!
//! Each problem gives a pair (a, b) of per-problem scores (its accuracy, or its unbiased Pass@k).
//! The difference is the mean of b - a. Problems are resampled with replacement, within each group
//! (suite), the same indices for both runs, so the interval reflects which problems happened to be
//! in the benchmark while keeping each problem's pairing. The overall difference is the mean over
//! groups of the group differences (the report's macro average), resampled group by group.
//!
//! - interval: the percentile interval of the resampled differences;
//! - p-value (two-sided, no difference): the share of resampled differences at least as far from
//!   the observed one as the observed one is from 0 (the bootstrap distribution shifted to the
//!   null), as `(1 + count) / (1 + resamples)`, so never 0 and exactly 1 when nothing differs.

use rlbase::splitmix64;

/// The estimate of one difference.
#[derive(Clone, Debug, PartialEq)]
pub struct PairedDiff {
    /// Problems paired.
    pub n: usize,
    /// Mean of run A's scores.
    pub a: f64,
    /// Mean of run B's scores.
    pub b: f64,
    /// `b - a`.
    pub diff: f64,
    /// Percentile bootstrap interval of `diff`.
    pub ci: (f64, f64),
    /// Two-sided bootstrap p-value of "no difference".
    pub p_value: f64,
}

/// Bootstrap settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bootstrap {
    /// Resamples drawn (at least 1).
    pub resamples: usize,
    /// Seed of the resampling: the same seed gives the same intervals and p-values.
    pub seed: u64,
    /// Coverage of the interval, e.g. 0.95.
    pub level: f64,
}

impl Default for Bootstrap {
    fn default() -> Self {
        Bootstrap { resamples: 10_000, seed: 0, level: 0.95 }
    }
}

/// A deterministic stream of uniform indices (SplitMix64, Lemire's multiply for the range).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        ((u128::from(splitmix64(self.0)) * n as u128) >> 64) as usize
    }
}

/// The paired bootstrap of each group's `(a, b)` pairs and of their macro average. Returns one
/// estimate per group (`None` for a group without pairs) and the overall one (`None` when no group
/// has pairs).
pub fn paired_bootstrap(groups: &[Vec<(f64, f64)>], opts: &Bootstrap) -> (Vec<Option<PairedDiff>>, Option<PairedDiff>) {
    let resamples = opts.resamples.max(1);
    let used: Vec<&Vec<(f64, f64)>> = groups.iter().filter(|g| !g.is_empty()).collect();
    let mean = |xs: &mut dyn Iterator<Item = f64>, n: usize| xs.sum::<f64>() / n as f64;
    let diffs: Vec<Vec<f64>> = used.iter().map(|g| g.iter().map(|(a, b)| b - a).collect()).collect();
    let mut boots: Vec<Vec<f64>> = vec![Vec::with_capacity(resamples); used.len()];
    let mut overall_boot = Vec::with_capacity(resamples);
    let mut rng = Rng(opts.seed);
    for _ in 0..resamples {
        let mut sum = 0.0;
        for (g, d) in diffs.iter().enumerate() {
            let mut total = 0.0;
            for _ in 0..d.len() {
                total += d[rng.below(d.len())];
            }
            let m = total / d.len() as f64;
            boots[g].push(m);
            sum += m;
        }
        overall_boot.push(sum / used.len().max(1) as f64);
    }
    let estimate = |a: f64, b: f64, n: usize, diff: f64, boot: Vec<f64>| PairedDiff {
        n,
        a,
        b,
        diff,
        ci: percentile_interval(boot.clone(), opts.level),
        p_value: p_value(&boot, diff),
    };
    let mut per_group = Vec::with_capacity(used.len());
    let (mut sum_a, mut sum_b, mut sum_d) = (0.0, 0.0, 0.0);
    for ((g, d), boot) in used.iter().zip(&diffs).zip(boots) {
        let a = mean(&mut g.iter().map(|p| p.0), g.len());
        let b = mean(&mut g.iter().map(|p| p.1), g.len());
        let diff = mean(&mut d.iter().copied(), d.len());
        sum_a += a;
        sum_b += b;
        sum_d += diff;
        per_group.push(estimate(a, b, g.len(), diff, boot));
    }
    let k = used.len() as f64;
    let overall = (!used.is_empty()).then(|| {
        let n = used.iter().map(|g| g.len()).sum();
        estimate(sum_a / k, sum_b / k, n, sum_d / k, overall_boot)
    });
    let mut per_group = per_group.into_iter();
    let out = groups.iter().map(|g| if g.is_empty() { None } else { per_group.next() }).collect();
    (out, overall)
}

/// The central `level` interval of a sample (linear interpolation between order statistics).
fn percentile_interval(mut xs: Vec<f64>, level: f64) -> (f64, f64) {
    xs.sort_by(f64::total_cmp);
    let tail = ((1.0 - level) / 2.0).clamp(0.0, 0.5);
    (quantile(&xs, tail), quantile(&xs, 1.0 - tail))
}

/// The `q` quantile of sorted values (0 for none).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let Some(last) = sorted.len().checked_sub(1) else { return 0.0 };
    let pos = q * last as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi.min(last)] - sorted[lo]) * (pos - lo as f64)
}

/// Two-sided p-value of "no difference" from the bootstrap distribution shifted to mean 0.
fn p_value(boot: &[f64], observed: f64) -> f64 {
    // Rounding in the resampled means must not count as a difference.
    let tol = 1e-12 * (1.0 + observed.abs());
    let extreme = boot.iter().filter(|&&m| (m - observed).abs() + tol >= observed.abs()).count();
    (1 + extreme) as f64 / (1 + boot.len()) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(resamples: usize) -> Bootstrap {
        Bootstrap { resamples, seed: 7, level: 0.95 }
    }

    #[test]
    fn identical_runs_differ_by_zero_with_p_one() {
        let g = vec![(0.25, 0.25), (1.0, 1.0), (0.0, 0.0), (0.5, 0.5)];
        let (per, overall) = paired_bootstrap(&[g.clone(), g], &opts(500));
        for d in per.iter().flatten().chain(overall.as_ref()) {
            assert_eq!((d.diff, d.ci, d.p_value), (0.0, (0.0, 0.0), 1.0), "{d:?}");
            assert!((d.a - 0.4375).abs() < 1e-15 && d.a == d.b);
        }
        assert_eq!(overall.map(|o| o.n), Some(8));
    }

    /// A solves none of 20 problems, B 15: diff 0.75 by hand; p at its floor 1/(R+1) (a resample
    /// is as far from 0.75 as 0.75 is from 0 only if it draws none of B's 15, chance 0.25^20);
    /// an interval above 0 that holds 0.75.
    #[test]
    fn a_clearly_better_run_has_a_small_p_and_an_interval_holding_its_difference() {
        let g: Vec<(f64, f64)> = (0..20).map(|i| (0.0, if i < 15 { 1.0 } else { 0.0 })).collect();
        let r = 2000;
        let (per, overall) = paired_bootstrap(&[g], &opts(r));
        let Some(Some(d)) = per.first().cloned() else { panic!("{per:?}") };
        assert!((d.diff - 0.75).abs() < 1e-15);
        assert_eq!((d.a, d.b, d.n), (0.0, 0.75, 20));
        assert!(d.p_value <= 1.0 / (r as f64 + 1.0) + 1e-15, "p = {}", d.p_value);
        assert!(d.ci.0 > 0.3 && d.ci.0 <= d.diff && d.diff <= d.ci.1 && d.ci.1 <= 1.0, "{:?}", d.ci);
        assert_eq!(overall, Some(d), "one group: overall is the group");
    }

    /// A noisy difference around 0: a large p, an interval across 0 that holds the difference;
    /// the same seed gives the same numbers, another seed close ones.
    #[test]
    fn noise_is_not_a_difference_and_the_seed_fixes_the_numbers() {
        let g: Vec<(f64, f64)> =
            (0..40).map(|i| (f64::from(u8::from(i % 3 == 0)), f64::from(u8::from(i % 4 == 0)))).collect();
        let (per, _) = paired_bootstrap(std::slice::from_ref(&g), &opts(3000));
        let Some(Some(d)) = per.first().cloned() else { panic!("{per:?}") };
        // A: 14 of 40 (i % 3 == 0), B: 10 of 40: diff = -0.1.
        assert!((d.diff + 0.1).abs() < 1e-12, "{}", d.diff);
        assert!(d.ci.0 < d.diff && d.diff < d.ci.1 && d.ci.1 > 0.0, "{:?}", d.ci);
        assert!(d.p_value > 0.2, "p = {}", d.p_value);
        let (again, _) = paired_bootstrap(std::slice::from_ref(&g), &opts(3000));
        assert_eq!(again[0].as_ref(), Some(&d));
        let (other, _) = paired_bootstrap(&[g], &Bootstrap { seed: 8, ..opts(3000) });
        let o = other[0].clone().unwrap_or_else(|| panic!("estimate"));
        assert!((o.ci.0 - d.ci.0).abs() <= 0.05 && (o.ci.1 - d.ci.1).abs() <= 0.05, "{:?} vs {:?}", o.ci, d.ci);
        assert!((o.p_value - d.p_value).abs() < 0.1);
    }

    /// Overall is the mean over groups (each suite counts once), empty groups are left out.
    #[test]
    fn overall_is_the_macro_average_of_groups() {
        let small = vec![(0.0, 1.0)];
        let large: Vec<(f64, f64)> = vec![(0.5, 0.5); 9];
        let (per, overall) = paired_bootstrap(&[small, Vec::new(), large], &opts(100));
        assert!(per[1].is_none());
        let o = overall.unwrap_or_else(|| panic!("overall"));
        assert!((o.diff - 0.5).abs() < 1e-15 && (o.a - 0.25).abs() < 1e-15 && (o.b - 0.75).abs() < 1e-15);
        assert_eq!(o.n, 10);
        assert_eq!(o.ci, (0.5, 0.5), "no variation inside either group");
        assert_eq!(paired_bootstrap(&[], &opts(10)), (vec![], None));
    }

    #[test]
    fn quantiles_interpolate() {
        let xs = [0.0, 1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&xs, 0.0), 0.0);
        assert_eq!(quantile(&xs, 0.5), 2.0);
        assert_eq!(quantile(&xs, 0.125), 0.5);
        assert_eq!(quantile(&xs, 1.0), 4.0);
        assert_eq!(p_value(&[0.0, 0.0], 0.0), 1.0);
        // Observed 0.5: draws at 0.0 and 1.0 are as extreme, 0.5 is not: (1 + 2) / (1 + 3).
        assert_eq!(p_value(&[0.0, 0.5, 1.0], 0.5), 0.75);
    }
}
