//! The metric registry: every per-suite metric after the Pass@k family, as one entry that the
//! Markdown, CSV and JSON writers ([`crate::report`]) and `--metric` ([`MetricName`]) all read.
//!
//! Adding a metric is one entry of [`METRICS`]: its name, its Markdown column and cell, and its
//! CSV/JSON fields (a value of [`SuiteMetrics`], computed in [`SuiteMetrics::from_tallies`]);
//! `selectable: true` lets `--metric NAME` (or `NAME@K`) pick it for the macro average and
//! CPGD's Overall.

use super::SuiteMetrics;
use std::fmt;
use std::str::FromStr;

/// One CSV column and JSON key of a metric.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    /// CSV column name.
    pub csv: &'static str,
    /// JSON key; `{K}` stands for the suite's K.
    pub json: &'static str,
    /// The value (`None` shows as an empty CSV cell and a JSON `null`).
    pub value: fn(&SuiteMetrics) -> Option<f64>,
}

/// A metric of a suite, as every writer shows it.
#[derive(Clone, Copy, Debug)]
pub struct Metric {
    /// Registry name; `--metric NAME` (or `NAME@K`) selects it when `selectable`.
    pub name: &'static str,
    /// One line on what it is.
    pub about: &'static str,
    /// Whether `--metric` may select it; its value is that of its first field.
    pub selectable: bool,
    /// Header of its Markdown column.
    pub markdown: &'static str,
    /// Its Markdown cell (percentages for rates).
    pub cell: fn(&SuiteMetrics) -> String,
    /// Its CSV columns and JSON keys, in order.
    pub fields: &'static [Field],
}

/// A fraction as a percentage with one decimal, as the Markdown table shows rates.
pub fn pct(x: f64) -> String {
    format!("{:.1}", 100.0 * x)
}

/// `v`, when the suite has samples: a suite without any has no rate or mean (`n/a`, `null`),
/// never a 0 that would count in the macro average.
fn scored(m: &SuiteMetrics, v: f64) -> Option<f64> {
    (m.n_samples > 0).then_some(v)
}

/// Every metric after Pass@k, in table order.
pub static METRICS: &[Metric] = &[
    Metric {
        name: "avg",
        about: "Avg@K: mean over problems of the fraction of correct samples, with its standard error",
        selectable: true,
        markdown: "avg@K ± se",
        cell: |m| format!("{} ± {}", pct(m.avg), pct(m.avg_stderr)),
        fields: &[
            Field { csv: "avg", json: "avg@{K}", value: |m| scored(m, m.avg) },
            Field { csv: "avg_stderr", json: "avg@{K}_stderr", value: |m| scored(m, m.avg_stderr) },
        ],
    },
    Metric {
        name: "maj",
        about: "Maj@K: fraction of problems whose majority answer is correct",
        selectable: true,
        markdown: "maj@K",
        cell: |m| pct(m.maj),
        fields: &[Field { csv: "maj", json: "maj@{K}", value: |m| scored(m, m.maj) }],
    },
    Metric {
        name: "no-answer",
        about: "fraction of samples with no extracted answer",
        selectable: false,
        markdown: "no answer",
        cell: |m| pct(m.no_answer_rate),
        fields: &[Field { csv: "no_answer_rate", json: "no_answer_rate", value: |m| scored(m, m.no_answer_rate) }],
    },
    Metric {
        name: "ambiguous",
        about: "fraction of samples whose final statement offers several candidates (a hedge; never rewarded)",
        selectable: false,
        markdown: "ambiguous",
        cell: |m| pct(m.ambiguous_rate),
        fields: &[Field { csv: "ambiguous_rate", json: "ambiguous_rate", value: |m| scored(m, m.ambiguous_rate) }],
    },
    Metric {
        name: "invalid-gold",
        about: "samples scored against a gold that cannot be read (a bad dataset row; never rewarded)",
        selectable: false,
        markdown: "invalid gold",
        cell: |m| m.invalid_gold.to_string(),
        fields: &[Field { csv: "invalid_gold", json: "invalid_gold", value: |m| Some(m.invalid_gold as f64) }],
    },
    Metric {
        name: "truncated",
        about: "fraction of samples cut by the length limit, over those whose finish reason is known",
        selectable: false,
        markdown: "truncated",
        cell: |m| m.truncation_rate.map_or("n/a".into(), pct),
        fields: &[Field { csv: "truncation_rate", json: "truncation_rate", value: |m| m.truncation_rate }],
    },
    Metric {
        name: "length",
        about: "mean response length in tokens (in characters when the backend reports no tokens)",
        selectable: false,
        markdown: "mean tokens",
        cell: |m| m.mean_tokens.map_or_else(|| format!("{:.0} chars", m.mean_chars), |t| format!("{t:.0}")),
        fields: &[
            Field { csv: "mean_chars", json: "mean_chars", value: |m| scored(m, m.mean_chars) },
            Field { csv: "mean_tokens", json: "mean_tokens", value: |m| m.mean_tokens },
        ],
    },
];

impl Field {
    /// The JSON key for a suite of K samples.
    pub fn json_key(&self, k: usize) -> String {
        self.json.replace("{K}", &k.to_string())
    }
}

/// A metric `--metric` names: `pass@k`, or a selectable registry metric, optionally `@K` (which
/// must then be the suite's K).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricName {
    /// Unbiased Pass@k.
    PassAt(usize),
    /// A selectable metric of [`METRICS`], with the K it was named for.
    Named {
        /// Its registry name.
        name: &'static str,
        /// `Some(K)` for `NAME@K`.
        k: Option<usize>,
    },
}

impl MetricName {
    /// The spellings `--metric` takes, for help and errors: `pass@k, avg, maj, avg@K or maj@K`.
    pub fn spellings() -> String {
        let names: Vec<&str> = METRICS.iter().filter(|m| m.selectable).map(|m| m.name).collect();
        let at_k: Vec<String> = names.iter().map(|n| format!("{n}@K")).collect();
        format!("pass@k, {}, {}", names.join(", "), at_k.join(" or "))
    }

    /// Its value in a suite's metrics (`None` when the suite lacks it, e.g. `pass@8` of a K = 4
    /// run, or `avg@8` of a K = 4 suite).
    pub fn value(&self, m: &SuiteMetrics) -> Option<f64> {
        match *self {
            Self::PassAt(k) => m.pass_at.iter().find(|(kk, _)| *kk == k).map(|(_, v)| *v),
            Self::Named { k: Some(k), .. } if k != m.k => None,
            Self::Named { name, .. } => {
                let metric = METRICS.iter().find(|x| x.name == name)?;
                metric.fields.first().and_then(|f| (f.value)(m))
            }
        }
    }
}

impl MetricName {
    /// Whether a run of K samples per problem has this metric; the error says which it has.
    pub fn check_k(&self, k: usize) -> Result<(), String> {
        match *self {
            Self::PassAt(p) if p > k => Err(format!("--metric {self}: a run of K = {k} has pass@1 to pass@{k}")),
            Self::Named { name, k: Some(named) } if named != k => {
                Err(format!("--metric {self}: this run has K = {k}: use {name}@{k}, or {name}"))
            }
            _ => Ok(()),
        }
    }
}

impl FromStr for MetricName {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let m = s.trim().to_ascii_lowercase();
        let (name, k) = m.split_once('@').map_or((m.as_str(), None), |(a, b)| (a, Some(b)));
        let k = match k.map(|k| k.parse::<usize>()) {
            None => None,
            Some(Ok(k)) if k >= 1 => Some(k),
            Some(_) => return Err(format!("`{s}` is not a metric: {} (k, K 1 or more)", Self::spellings())),
        };
        match (name, k) {
            ("pass", Some(k)) => Ok(Self::PassAt(k)),
            _ => METRICS
                .iter()
                .find(|x| x.selectable && x.name == name)
                .map(|x| Self::Named { name: x.name, k })
                .ok_or_else(|| format!("`{s}` is not a metric: {} (k, K 1 or more)", Self::spellings())),
        }
    }
}

impl fmt::Display for MetricName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PassAt(k) => write!(f, "pass@{k}"),
            Self::Named { name, k: None } => f.write_str(name),
            Self::Named { name, k: Some(k) } => write!(f, "{name}@{k}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_print_and_reject() {
        for (text, shown) in [("pass@4", "pass@4"), ("avg", "avg"), ("Maj@8", "maj@8"), ("avg@16", "avg@16")] {
            assert_eq!(text.parse::<MetricName>().map(|m| m.to_string()).as_deref(), Ok(shown));
        }
        for bad in ["pass@0", "pass", "acc", "avg@x", "no-answer", "avg@0"] {
            let err = bad.parse::<MetricName>().unwrap_err();
            assert!(err.contains("pass@k, avg, maj, avg@K or maj@K"), "{bad}: {err}");
        }
        assert_eq!(MetricName::spellings(), "pass@k, avg, maj, avg@K or maj@K");
    }

    #[test]
    fn every_metric_has_a_column_a_field_and_a_unique_name() {
        let mut names: Vec<&str> = METRICS.iter().map(|m| m.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), METRICS.len());
        for m in METRICS {
            assert!(!m.markdown.is_empty() && !m.fields.is_empty() && !m.about.is_empty(), "{}", m.name);
        }
    }
}
