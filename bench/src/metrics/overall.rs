//! Suite aggregates: CPGD's "Overall" (mean over suites of score / baseline score) and the plain
//! macro average.

use std::collections::BTreeMap;

/// CPGD's Overall for one metric: the mean over suites of `score[s] / baseline[s]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Overall {
    /// Mean of the ratios over the suites used; `None` when no suite could be used.
    pub value: Option<f64>,
    /// Suites that entered the mean, with their ratio.
    pub ratios: BTreeMap<String, f64>,
    /// Suites left out, with the reason (no baseline value, or a baseline of zero).
    pub skipped: BTreeMap<String, String>,
}

/// Overall relative to a baseline: suites without a (positive) baseline value are skipped and
/// listed, never silently counted.
pub fn overall(scores: &BTreeMap<String, f64>, baseline: &BTreeMap<String, f64>) -> Overall {
    let mut ratios = BTreeMap::new();
    let mut skipped = BTreeMap::new();
    for (suite, &score) in scores {
        match baseline.get(suite) {
            None => {
                skipped.insert(suite.clone(), "no baseline value".to_string());
            }
            Some(&b) if b.is_nan() || b <= 0.0 => {
                skipped.insert(suite.clone(), format!("baseline is {b}"));
            }
            Some(&b) => {
                ratios.insert(suite.clone(), score / b);
            }
        }
    }
    let value = if ratios.is_empty() { None } else { Some(ratios.values().sum::<f64>() / ratios.len() as f64) };
    Overall { value, ratios, skipped }
}

/// The plain macro average over suites (each suite weighs the same).
pub fn macro_average(scores: &BTreeMap<String, f64>) -> Option<f64> {
    if scores.is_empty() {
        None
    } else {
        Some(scores.values().sum::<f64>() / scores.len() as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(items: &[(&str, f64)]) -> BTreeMap<String, f64> {
        items.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn hand_example() {
        // aime24 0.2 vs 0.1 -> 2.0; math500 0.6 vs 0.8 -> 0.75; gsm8k has no baseline.
        let scores = map(&[("aime24", 0.2), ("math500", 0.6), ("gsm8k", 0.9)]);
        let base = map(&[("aime24", 0.1), ("math500", 0.8)]);
        let o = overall(&scores, &base);
        assert!((o.value.unwrap_or(f64::NAN) - 1.375).abs() < 1e-12);
        assert_eq!(o.ratios.len(), 2);
        assert!(o.skipped.contains_key("gsm8k"));
        let m = macro_average(&scores).unwrap_or(f64::NAN);
        assert!((m - (0.2 + 0.6 + 0.9) / 3.0).abs() < 1e-12);
    }

    #[test]
    fn zero_baseline_is_skipped_not_infinite() {
        let o = overall(&map(&[("aime25", 0.1)]), &map(&[("aime25", 0.0)]));
        assert_eq!(o.value, None);
        assert!(o.skipped.contains_key("aime25"));
        assert_eq!(macro_average(&BTreeMap::new()), None);
    }

    #[test]
    fn baseline_against_itself_is_one() {
        let s = map(&[("a", 0.3), ("b", 0.7)]);
        assert_eq!(overall(&s, &s).value, Some(1.0));
    }
}
