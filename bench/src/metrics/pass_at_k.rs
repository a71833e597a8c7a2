//! The unbiased Pass@k estimator of Chen et al. (2021), "Evaluating Large Language Models Trained
//! on Code": with `n` samples of which `c` are correct, Pass@k = 1 - C(n-c, k) / C(n, k).
//!
//! The ratio of binomials is computed as the product prod_{i=n-c+1}^{n} (1 - k/i), which never forms
//! a binomial coefficient, so it stays exact to rounding for any `n` (no overflow at n = 1024).

/// Unbiased Pass@k for one problem; `None` when `k` is 0, `k > n` or `c > n`.
pub fn pass_at_k(n: usize, c: usize, k: usize) -> Option<f64> {
    if k == 0 || k > n || c > n {
        return None;
    }
    if n - c < k {
        return Some(1.0);
    }
    let mut all_wrong = 1.0f64;
    for i in (n - c + 1)..=n {
        all_wrong *= 1.0 - k as f64 / i as f64;
    }
    Some(1.0 - all_wrong)
}

/// The k values reported for `n` samples: 1, 2, 4, ... up to `n`, plus `n` itself when it is not a
/// power of two. Empty when `n` is 0.
pub fn ks_up_to(n: usize) -> Vec<usize> {
    let mut ks = Vec::new();
    let mut k = 1;
    while k <= n {
        ks.push(k);
        k *= 2;
    }
    if n > 0 && ks.last() != Some(&n) {
        ks.push(n);
    }
    ks
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pass@k by definition: the fraction of k-subsets of the n samples that hold a correct one.
    fn enumerate(n: usize, c: usize, k: usize) -> f64 {
        let correct = |i: usize| i < c;
        let (mut hit, mut total) = (0u64, 0u64);
        for mask in 0u32..(1u32 << n) {
            if mask.count_ones() as usize != k {
                continue;
            }
            total += 1;
            if (0..n).any(|i| mask & (1 << i) != 0 && correct(i)) {
                hit += 1;
            }
        }
        hit as f64 / total as f64
    }

    #[test]
    fn matches_enumeration_of_all_subsets() {
        for n in 1..=12 {
            for c in 0..=n {
                for k in 1..=n {
                    let est = pass_at_k(n, c, k).unwrap_or(f64::NAN);
                    let exact = enumerate(n, c, k);
                    assert!((est - exact).abs() < 1e-12, "n={n} c={c} k={k}: {est} vs {exact}");
                }
            }
        }
    }

    #[test]
    fn edge_cases() {
        assert_eq!(pass_at_k(4, 0, 1), Some(0.0));
        assert_eq!(pass_at_k(4, 4, 4), Some(1.0));
        assert_eq!(pass_at_k(4, 1, 1), Some(0.25));
        assert_eq!(pass_at_k(4, 3, 2), Some(1.0)); // n-c < k: every pair has a correct one
        assert_eq!(pass_at_k(4, 1, 0), None);
        assert_eq!(pass_at_k(4, 1, 5), None);
        assert_eq!(pass_at_k(4, 5, 1), None);
    }

    #[test]
    fn large_n_stays_finite_and_exact_at_k1() {
        // Binomials of 1024 overflow f64; the product form does not.
        let p = pass_at_k(1024, 1, 512).unwrap_or(f64::NAN);
        assert!((p - 0.5).abs() < 1e-12);
        let p1 = pass_at_k(1024, 300, 1).unwrap_or(f64::NAN);
        assert!((p1 - 300.0 / 1024.0).abs() < 1e-12);
    }

    #[test]
    fn k_ladder() {
        assert_eq!(ks_up_to(0), Vec::<usize>::new());
        assert_eq!(ks_up_to(1), vec![1]);
        assert_eq!(ks_up_to(8), vec![1, 2, 4, 8]);
        assert_eq!(ks_up_to(10), vec![1, 2, 4, 8, 10]);
    }
}
