//! Mean and standard error over problems.

/// Mean and standard error of the mean (sample standard deviation with n-1, divided by sqrt(n)).
/// The standard error is 0 for a single value and `None`s are returned for an empty slice.
pub fn mean_stderr(values: &[f64]) -> Option<(f64, f64)> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return Some((mean, 0.0));
    }
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1) as f64;
    Some((mean, (var / n as f64).sqrt()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_example() {
        // Per-problem accuracies 1, 0.5, 0, 0.5: mean 0.5; sample variance (0.25+0+0.25+0)/3 = 1/6;
        // stderr = sqrt(1/6 / 4) = sqrt(1/24).
        let (m, se) = mean_stderr(&[1.0, 0.5, 0.0, 0.5]).unwrap_or((f64::NAN, f64::NAN));
        assert!((m - 0.5).abs() < 1e-15);
        assert!((se - (1.0f64 / 24.0).sqrt()).abs() < 1e-15);
    }

    #[test]
    fn degenerate() {
        assert_eq!(mean_stderr(&[]), None);
        assert_eq!(mean_stderr(&[0.25]), Some((0.25, 0.0)));
        assert_eq!(mean_stderr(&[1.0, 1.0, 1.0]), Some((1.0, 0.0)));
    }
}
