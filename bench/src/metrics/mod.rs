//! Benchmark metrics over K samples per problem: unbiased Pass@k, Avg@K with its standard error,
//! Maj@K, no-answer and truncation rates, mean length; and the suite aggregates.

pub mod majority;
pub mod overall;
pub mod paired;
pub mod pass_at_k;
pub mod registry;
pub mod stats;

pub use majority::{Ballot, VoteGroup, Votes};
pub use overall::{macro_average, overall, Overall};
pub use paired::{paired_bootstrap, Bootstrap, PairedDiff};
pub use pass_at_k::{ks_up_to, pass_at_k};
pub use registry::{Metric, MetricName, METRICS};
pub use stats::mean_stderr;

use rlverify::{EquivOptions, Expr, Limits, Status};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// What the metrics need to know about one scored sample.
#[derive(Clone, Debug)]
pub struct SampleResult {
    /// Sample index within its problem.
    pub sample: usize,
    /// Whether the verifier judged it right.
    pub correct: bool,
    /// The verifier's status (correct, wrong, no answer, truncated, ...).
    pub status: Status,
    /// The extracted final answer, if any.
    pub extracted: Option<String>,
    /// The parsed extracted answer (for Maj@K grouping).
    pub parsed: Option<Expr>,
    /// `Some(true)` when generation stopped on the length limit; `None` when unknown.
    pub truncated: Option<bool>,
    /// Response length in characters.
    pub chars: usize,
    /// Response length in tokens, when the backend reported it.
    pub tokens: Option<u64>,
}

/// Running counts for one problem; fold samples in with [`ProblemTally::add`].
#[derive(Clone, Debug, Default)]
pub struct ProblemTally {
    /// Samples seen.
    pub n: usize,
    /// Correct samples.
    pub correct: usize,
    /// Samples with no extracted answer.
    pub no_answer: usize,
    /// Samples whose final statement offers several candidates (a hedge).
    pub ambiguous: usize,
    /// Samples scored against a gold that cannot be read (counted apart: a bad dataset row).
    pub invalid_gold: usize,
    /// Samples cut by the length limit.
    pub truncated: usize,
    /// Samples whose finish reason is known.
    pub finish_known: usize,
    /// Total characters.
    pub chars: u64,
    /// Total tokens over the samples that report them.
    pub tokens: u64,
    /// Samples that report a token count.
    pub tokens_known: usize,
    /// The Maj@K ballot box.
    pub votes: Votes,
}

impl ProblemTally {
    /// Fold one scored sample in.
    pub fn add(&mut self, s: SampleResult, equiv: &EquivOptions, limits: &Limits) {
        self.n += 1;
        self.correct += usize::from(s.correct);
        self.no_answer += usize::from(s.status == Status::NoAnswer);
        self.ambiguous += usize::from(s.status == Status::Ambiguous);
        self.invalid_gold += usize::from(s.status == Status::InvalidGold);
        if let Some(t) = s.truncated {
            self.finish_known += 1;
            self.truncated += usize::from(t);
        }
        self.chars += s.chars as u64;
        if let Some(t) = s.tokens {
            self.tokens += t;
            self.tokens_known += 1;
        }
        if let Some(text) = s.extracted {
            self.votes.add(Ballot { sample: s.sample, text, parsed: s.parsed, correct: s.correct }, equiv, limits);
        }
    }
}

/// The metrics of one suite (or one scored file).
#[derive(Clone, Debug, PartialEq)]
pub struct SuiteMetrics {
    /// Problems scored.
    pub n_problems: usize,
    /// Samples scored.
    pub n_samples: usize,
    /// The K the metrics are named for: the K a run asked for ([`SuiteMetrics::set_requested`]),
    /// else `k_min`. Keys stay `avg@K`, `maj@K`, `pass@1..K` even when samples are missing.
    pub k: usize,
    /// Samples short of K for every problem asked for (0 for a complete run).
    pub missing_samples: usize,
    /// Problems with fewer than K samples, those without any included.
    pub incomplete_problems: usize,
    /// Problems asked for (`n_problems` unless a run said otherwise).
    pub expected_problems: usize,
    /// (id, samples present) of each problem that has some but fewer than K, by id.
    pub short_problems: Vec<(String, usize)>,
    /// Fewest samples of any problem: Pass@k is reported for k up to this.
    pub k_min: usize,
    /// Most samples of any problem (equal to `k_min` in a complete run).
    pub k_max: usize,
    /// (k, mean unbiased Pass@k over problems) for k = 1, 2, 4, ..., `k_min`.
    pub pass_at: Vec<(usize, f64)>,
    /// The values of every metric of the registry ([`METRICS`]), by name, one per field: what
    /// the tables, `--metric` and rltrain's evaluation lines show. The fields below are typed
    /// copies of the built-in ones, for callers; a new metric needs none.
    pub values: BTreeMap<&'static str, Vec<Option<f64>>>,
    /// Avg@K: mean over problems of the fraction of correct samples.
    pub avg: f64,
    /// Standard error of `avg` over problems.
    pub avg_stderr: f64,
    /// Maj@K: fraction of problems whose majority answer is correct.
    pub maj: f64,
    /// Fraction of samples with no extracted answer.
    pub no_answer_rate: f64,
    /// Fraction of samples whose final statement offers several candidates (`ambiguous`).
    pub ambiguous_rate: f64,
    /// Samples scored against a gold that cannot be read (`invalid_gold`): never rewarded, and
    /// a sign of a bad dataset row rather than of the model.
    pub invalid_gold: usize,
    /// Fraction of samples cut by the length limit, over samples whose finish reason is known.
    pub truncation_rate: Option<f64>,
    /// Mean response length in characters.
    pub mean_chars: f64,
    /// Mean response length in tokens, over samples that report it.
    pub mean_tokens: Option<f64>,
}

impl SuiteMetrics {
    /// Compute the metrics from per-problem tallies (problems with no sample are ignored).
    pub fn from_tallies<'a>(tallies: impl IntoIterator<Item = &'a ProblemTally>) -> SuiteMetrics {
        let tallies: Vec<&ProblemTally> = tallies.into_iter().filter(|t| t.n > 0).collect();
        let n_problems = tallies.len();
        let k_min = tallies.iter().map(|t| t.n).min().unwrap_or(0);
        let k_max = tallies.iter().map(|t| t.n).max().unwrap_or(0);
        let pass_at = ks_up_to(k_min)
            .into_iter()
            .map(|k| {
                let sum: f64 = tallies.iter().filter_map(|t| pass_at_k(t.n, t.correct, k)).sum();
                (k, sum / n_problems as f64)
            })
            .collect();
        let n_samples: usize = tallies.iter().map(|t| t.n).sum();
        let values: BTreeMap<&'static str, Vec<Option<f64>>> =
            METRICS.iter().map(|metric| (metric.name, metric.compute(&tallies))).collect();
        let field = |name: &str, i: usize| values.get(name).and_then(|v| v.get(i).copied().flatten());
        SuiteMetrics {
            n_problems,
            n_samples,
            k: k_min,
            missing_samples: 0,
            incomplete_problems: 0,
            expected_problems: n_problems,
            short_problems: Vec::new(),
            k_min,
            k_max,
            pass_at,
            avg: field("avg", 0).unwrap_or(0.0),
            avg_stderr: field("avg", 1).unwrap_or(0.0),
            maj: field("maj", 0).unwrap_or(0.0),
            no_answer_rate: field("no-answer", 0).unwrap_or(0.0),
            ambiguous_rate: field("ambiguous", 0).unwrap_or(0.0),
            invalid_gold: field("invalid-gold", 0).map_or(0, |x| x as usize),
            truncation_rate: field("truncated", 0),
            mean_chars: field("length", 0).unwrap_or(0.0),
            mean_tokens: field("length", 1),
            values,
        }
    }

    /// A registry metric's values in this suite, one per field (empty for a name the registry
    /// lacks).
    pub fn metric_values(&self, metric: &Metric) -> &[Option<f64>] {
        self.values.get(metric.name).map_or(&[], Vec::as_slice)
    }

    /// Field `i` of the registry metric `name` (`None` when the suite has no value for it).
    pub fn field_value(&self, name: &str, i: usize) -> Option<f64> {
        self.values.get(name).and_then(|v| v.get(i).copied().flatten())
    }

    /// Name the metrics for the K a run asked for and count what is missing: `samples` holds
    /// (id, sample count) of each problem that has any, `expected_problems` how many were asked for.
    pub fn set_requested<'a>(
        &mut self,
        k: usize,
        expected_problems: usize,
        samples: impl IntoIterator<Item = (&'a str, usize)>,
    ) {
        let (mut missing, mut seen) = (0, 0);
        let mut short = Vec::new();
        for (id, n) in samples {
            seen += 1;
            if n < k {
                missing += k - n;
                short.push((id.to_string(), n));
            }
        }
        short.sort();
        let absent = expected_problems.saturating_sub(seen);
        self.k = k;
        self.missing_samples = missing + absent * k;
        self.incomplete_problems = short.len() + absent;
        self.short_problems = short;
        self.expected_problems = expected_problems.max(seen);
    }

    /// Whether every problem asked for has its K samples.
    pub fn is_complete(&self) -> bool {
        self.missing_samples == 0
    }

    /// The value of a metric by name ([`MetricName`]): `pass@k`, `avg@K` / `avg`, `maj@K` / `maj`,
    /// or any selectable metric of the registry.
    pub fn get(&self, metric: &str) -> Option<f64> {
        metric.parse::<MetricName>().ok()?.value(self)
    }

    /// One flat JSON object with stable keys: `n_problems`, `n_samples`, `k`, `pass@1`, `pass@2`,
    /// ..., `pass@K` (`null` when some problem has fewer than k samples), `avg@K`, `avg@K_stderr`,
    /// `maj@K`, `no_answer_rate`, `truncation_rate`, `mean_chars`, `mean_tokens` (all rates as
    /// fractions), `missing_samples`, `incomplete_problems`, and for an incomplete run
    /// `samples_present` (id -> samples, for each problem with some but fewer than K).
    pub fn to_json(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("n_problems".into(), json!(self.n_problems));
        m.insert("n_samples".into(), json!(self.n_samples));
        m.insert("k".into(), json!(self.k));
        if self.k_max != self.k_min {
            m.insert("k_min".into(), json!(self.k_min));
            m.insert("k_max".into(), json!(self.k_max));
        }
        let mut ks = ks_up_to(self.k);
        ks.extend(self.pass_at.iter().map(|(k, _)| *k).filter(|k| *k > self.k));
        for k in ks {
            m.insert(format!("pass@{k}"), json!(self.pass_at.iter().find(|(kk, _)| *kk == k).map(|(_, v)| *v)));
        }
        for metric in METRICS {
            for (i, f) in metric.fields.iter().enumerate() {
                m.insert(f.json_key(self.k), json!(self.field_value(metric.name, i)));
            }
        }
        m.insert("missing_samples".into(), json!(self.missing_samples));
        m.insert("incomplete_problems".into(), json!(self.incomplete_problems));
        if !self.short_problems.is_empty() {
            let short: Map<String, Value> = self.short_problems.iter().map(|(id, n)| (id.clone(), json!(n))).collect();
            m.insert("samples_present".into(), Value::Object(short));
        }
        m
    }
}

fn ratio(num: u64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        num as f64 / den as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(outcomes: &[(&str, bool)]) -> ProblemTally {
        let mut t = ProblemTally::default();
        for (i, &(ans, ok)) in outcomes.iter().enumerate() {
            let status = if ans.is_empty() {
                Status::NoAnswer
            } else if ok {
                Status::Correct
            } else {
                Status::Wrong
            };
            let extracted = (!ans.is_empty()).then(|| ans.to_string());
            let parsed = extracted.as_deref().and_then(|a| rlverify::parse(a, &Limits::default()).ok());
            t.add(
                SampleResult {
                    sample: i,
                    correct: ok,
                    status,
                    extracted,
                    parsed,
                    truncated: Some(ans.is_empty()),
                    chars: 10,
                    tokens: None,
                },
                &EquivOptions::default(),
                &Limits::default(),
            );
        }
        t
    }

    #[test]
    fn suite_metrics_on_a_hand_example() {
        // Problem A: 4 of 4 correct. Problem B: 1 of 4 correct, majority wrong.
        // Problem C: 0 of 4, two without an answer (and truncated).
        let a = tally(&[("1", true), ("1", true), ("1", true), ("1", true)]);
        let b = tally(&[("2", true), ("3", false), ("3", false), ("4", false)]);
        let c = tally(&[("", false), ("5", false), ("", false), ("6", false)]);
        let m = SuiteMetrics::from_tallies([&a, &b, &c]);
        assert_eq!((m.n_problems, m.n_samples, m.k_min), (3, 12, 4));
        // Pass@1 = mean(1, 1/4, 0); Pass@2 for B = 1 - C(3,2)/C(4,2) = 1/2; Pass@4 for B = 1.
        let get = |k| m.pass_at.iter().find(|(kk, _)| *kk == k).map(|(_, v)| *v).unwrap_or(f64::NAN);
        assert!((get(1) - 1.25 / 3.0).abs() < 1e-12);
        assert!((get(2) - 1.5 / 3.0).abs() < 1e-12);
        assert!((get(4) - 2.0 / 3.0).abs() < 1e-12);
        assert!((m.avg - 1.25 / 3.0).abs() < 1e-12);
        assert!((m.maj - 1.0 / 3.0).abs() < 1e-12);
        assert!((m.no_answer_rate - 2.0 / 12.0).abs() < 1e-12);
        assert_eq!(m.truncation_rate, Some(2.0 / 12.0));
        assert_eq!(m.mean_tokens, None);
        assert_eq!(m.get("pass@2"), Some(get(2)));
        assert_eq!(m.get("avg@4"), Some(m.avg));
        assert_eq!(m.get("avg"), Some(m.avg));
        assert_eq!(m.get("maj@4"), Some(m.maj));
        assert_eq!(m.get("maj@8"), None);
        assert_eq!(m.get("pass@3"), None);
        let j = m.to_json();
        for key in ["n_problems", "pass@1", "pass@2", "pass@4", "avg@4", "avg@4_stderr", "maj@4"] {
            assert!(j.contains_key(key), "missing {key}");
        }
        assert!(m.is_complete());
    }

    /// The observed bug (an incomplete run, here 66 of 80 samples: 20 problems, K = 4). The metrics keep K = 4 and their
    /// names (`avg@4`, `maj@4`, `pass@2`, `pass@4` with `null` where undefined) and count what is
    /// missing, problems without any sample included.
    #[test]
    fn an_incomplete_run_keeps_its_k_and_its_metric_names() {
        let full = tally(&[("1", true), ("1", true), ("2", false), ("2", false)]);
        let short = tally(&[("1", true)]);
        // 16 problems with 4 samples, 2 with 1 sample, 2 with none: 64 + 2 = 66 of 80.
        let mut tallies: Vec<&ProblemTally> = vec![&full; 16];
        tallies.extend([&short, &short]);
        let mut m = SuiteMetrics::from_tallies(tallies.iter().copied());
        assert_eq!((m.k, m.k_min, m.k_max), (1, 1, 4), "a scored file names metrics for its fewest samples");
        let ids: Vec<String> = (0..tallies.len()).map(|i| format!("p{i:02}")).collect();
        m.set_requested(4, 20, ids.iter().map(String::as_str).zip(tallies.iter().map(|t| t.n)));
        assert_eq!((m.k, m.missing_samples, m.incomplete_problems, m.expected_problems), (4, 14, 4, 20));
        assert_eq!(m.short_problems, vec![("p16".to_string(), 1), ("p17".to_string(), 1)]);
        assert!(!m.is_complete());
        let j = m.to_json();
        assert_eq!(j.get("k"), Some(&json!(4)));
        for key in ["avg@4", "avg@4_stderr", "maj@4", "pass@1"] {
            assert!(j.get(key).is_some_and(Value::is_number), "{key}: {j:?}");
        }
        for key in ["pass@2", "pass@4"] {
            assert_eq!(j.get(key), Some(&Value::Null), "{key} is reported as undefined, not dropped");
        }
        assert!(!j.contains_key("avg@1") && !j.contains_key("maj@1"), "{j:?}");
        assert_eq!(j.get("missing_samples"), Some(&json!(14)));
        assert_eq!(j.get("samples_present"), Some(&json!({"p16": 1, "p17": 1})));
        assert_eq!(m.get("avg@4"), Some(m.avg));
        assert_eq!(m.get("avg@1"), None);
        assert_eq!(m.get("pass@4"), None);
    }
}
