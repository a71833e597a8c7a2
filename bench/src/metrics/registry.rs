//! The metric registry: every per-suite metric after the Pass@k family, as one entry that computes
//! its values and that the Markdown, CSV and JSON writers ([`crate::report`]), `--metric`
//! ([`MetricName`]), `rlbench compare` ([`crate::compare`]) and rltrain's `eval/` lines all read.
//!
//! Adding a metric is one entry of [`METRICS`]: its name, its Markdown column and cell, its CSV/JSON
//! fields, each computed from the suite's per-problem tallies ([`ProblemTally`]; a count a metric
//! needs and the tally lacks is added to [`ProblemTally::add`]), and, where comparing two runs
//! problem by problem makes sense, its value on one problem. [`SuiteMetrics::from_tallies`] stores
//! every entry's values; the tables show them; `selectable: true` lets `--metric NAME` (or `NAME@K`)
//! pick it for the macro average and CPGD's Overall and puts it on rltrain's evaluation lines;
//! `per_problem: Some(..)` gives it `NAME@K` rows in `rlbench compare`.

use super::{mean_stderr, ratio, ProblemTally, SuiteMetrics};
use std::fmt;
use std::str::FromStr;

/// One CSV column and JSON key of a metric, and how to compute it.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    /// CSV column name.
    pub csv: &'static str,
    /// JSON key; `{K}` stands for the suite's K.
    pub json: &'static str,
    /// Its value over the suite's problems that have samples (an empty slice for a suite without
    /// any); `None` shows as an empty CSV cell and a JSON `null`.
    pub value: fn(&[&ProblemTally]) -> Option<f64>,
}

/// A metric of a suite: how it is computed and how every writer shows it.
#[derive(Clone, Copy, Debug)]
pub struct Metric {
    /// Registry name; `--metric NAME` (or `NAME@K`) selects it when `selectable`.
    pub name: &'static str,
    /// One line on what it is.
    pub about: &'static str,
    /// Whether `--metric` may select it (its value is that of its first field); rltrain's
    /// evaluation lines report every selectable metric (`eval/<set>/NAME@K`).
    pub selectable: bool,
    /// Header of its Markdown column.
    pub markdown: &'static str,
    /// Its Markdown cell from its fields' values, in field order (percentages for rates); only
    /// asked for a suite with samples (a suite without any shows `n/a`).
    pub cell: fn(&[Option<f64>]) -> String,
    /// Its CSV columns and JSON keys, in order, each with its computation.
    pub fields: &'static [Field],
    /// Its value on one problem, where a paired comparison of two runs makes sense: `rlbench
    /// compare` then reports `NAME@K` (B − A over the paired problems, with a bootstrap interval).
    /// The mean over problems should be the first field.
    pub per_problem: Option<fn(&ProblemTally) -> f64>,
}

/// A fraction as a percentage with one decimal, as the Markdown table shows rates.
pub fn pct(x: f64) -> String {
    format!("{:.1}", 100.0 * x)
}

/// [`pct`] of a value that may be missing (`n/a`).
fn pct_or_na(x: Option<f64>) -> String {
    x.map_or_else(|| "n/a".to_string(), pct)
}

/// Field `i` of a metric's values (`None` past the end).
fn at(values: &[Option<f64>], i: usize) -> Option<f64> {
    values.get(i).copied().flatten()
}

/// `v`, when the suite has samples: a suite without any has no rate or mean (`n/a`, `null`),
/// never a 0 that would count in the macro average.
fn scored(t: &[&ProblemTally], v: f64) -> Option<f64> {
    (!t.is_empty()).then_some(v)
}

/// The sum of a count over problems.
fn total(t: &[&ProblemTally], count: impl Fn(&ProblemTally) -> u64) -> u64 {
    t.iter().map(|p| count(p)).sum()
}

/// The samples of a suite.
fn samples(t: &[&ProblemTally]) -> u64 {
    total(t, |p| p.n as u64)
}

/// A count over the suite's samples (`None` without samples).
fn per_sample(t: &[&ProblemTally], count: impl Fn(&ProblemTally) -> u64) -> Option<f64> {
    scored(t, ratio(total(t, count), samples(t)))
}

/// A problem's fraction of correct samples.
fn accuracy(p: &ProblemTally) -> f64 {
    p.correct as f64 / p.n as f64
}

/// Mean and standard error over problems of their fractions of correct samples.
fn avg_and_stderr(t: &[&ProblemTally]) -> Option<(f64, f64)> {
    mean_stderr(&t.iter().map(|p| accuracy(p)).collect::<Vec<f64>>())
}

/// Every metric after Pass@k, in table order.
pub static METRICS: &[Metric] = &[
    Metric {
        name: "avg",
        about: "Avg@K: mean over problems of the fraction of correct samples, with its standard error",
        selectable: true,
        markdown: "avg@K ± se",
        cell: |v| format!("{} ± {}", pct_or_na(at(v, 0)), pct_or_na(at(v, 1))),
        fields: &[
            Field { csv: "avg", json: "avg@{K}", value: |t| avg_and_stderr(t).map(|(m, _)| m) },
            Field { csv: "avg_stderr", json: "avg@{K}_stderr", value: |t| avg_and_stderr(t).map(|(_, se)| se) },
        ],
        per_problem: Some(accuracy),
    },
    Metric {
        name: "maj",
        about: "Maj@K: fraction of problems whose majority answer is correct",
        selectable: true,
        markdown: "maj@K",
        cell: |v| pct_or_na(at(v, 0)),
        fields: &[Field {
            csv: "maj",
            json: "maj@{K}",
            value: |t| scored(t, ratio(total(t, |p| u64::from(p.votes.maj_correct())), t.len() as u64)),
        }],
        per_problem: None,
    },
    Metric {
        name: "no-answer",
        about: "fraction of samples with no extracted answer",
        selectable: false,
        markdown: "no answer",
        cell: |v| pct_or_na(at(v, 0)),
        fields: &[Field {
            csv: "no_answer_rate",
            json: "no_answer_rate",
            value: |t| per_sample(t, |p| p.no_answer as u64),
        }],
        per_problem: None,
    },
    Metric {
        name: "ambiguous",
        about: "fraction of samples whose final statement offers several candidates (a hedge; never rewarded)",
        selectable: false,
        markdown: "ambiguous",
        cell: |v| pct_or_na(at(v, 0)),
        fields: &[Field {
            csv: "ambiguous_rate",
            json: "ambiguous_rate",
            value: |t| per_sample(t, |p| p.ambiguous as u64),
        }],
        per_problem: None,
    },
    Metric {
        name: "invalid-gold",
        about: "samples scored against a gold that cannot be read (a bad dataset row; never rewarded)",
        selectable: false,
        markdown: "invalid gold",
        cell: |v| format!("{:.0}", at(v, 0).unwrap_or(0.0)),
        fields: &[Field {
            csv: "invalid_gold",
            json: "invalid_gold",
            value: |t| Some(total(t, |p| p.invalid_gold as u64) as f64),
        }],
        per_problem: None,
    },
    Metric {
        name: "truncated",
        about: "fraction of samples cut by the length limit, over those whose finish reason is known",
        selectable: false,
        markdown: "truncated",
        cell: |v| pct_or_na(at(v, 0)),
        fields: &[Field {
            csv: "truncation_rate",
            json: "truncation_rate",
            value: |t| {
                let known = total(t, |p| p.finish_known as u64);
                (known > 0).then(|| ratio(total(t, |p| p.truncated as u64), known))
            },
        }],
        per_problem: None,
    },
    Metric {
        name: "length",
        about: "mean response length in tokens (in characters when the backend reports no tokens)",
        selectable: false,
        markdown: "mean tokens",
        cell: |v| at(v, 1).map_or_else(|| format!("{:.0} chars", at(v, 0).unwrap_or(0.0)), |t| format!("{t:.0}")),
        fields: &[
            Field { csv: "mean_chars", json: "mean_chars", value: |t| per_sample(t, |p| p.chars) },
            Field {
                csv: "mean_tokens",
                json: "mean_tokens",
                value: |t| {
                    let known = total(t, |p| p.tokens_known as u64);
                    (known > 0).then(|| ratio(total(t, |p| p.tokens), known))
                },
            },
        ],
        per_problem: None,
    },
];

impl Metric {
    /// Its values over a suite's problems that have samples, one per field.
    pub fn compute(&self, tallies: &[&ProblemTally]) -> Vec<Option<f64>> {
        self.fields.iter().map(|f| (f.value)(tallies)).collect()
    }
}

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
            Self::Named { name, .. } => m.field_value(name, 0),
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

    /// A suite of varied problems: right, wrong, unanswered, hedged, truncated, with and without
    /// token counts, so that no registry value is trivially 0.
    fn varied_tallies() -> Vec<ProblemTally> {
        use rlverify::{EquivOptions, Limits, Status};
        let sample = |i: usize, answer: &str, status: Status| crate::metrics::SampleResult {
            sample: i,
            correct: status == Status::Correct,
            status,
            extracted: (!answer.is_empty()).then(|| answer.to_string()),
            parsed: None,
            truncated: (i % 3 != 2).then_some(i.is_multiple_of(3)),
            chars: 10 + 7 * i,
            tokens: i.is_multiple_of(2).then_some(3 + i as u64),
        };
        let problems: [&[(&str, Status)]; 4] = [
            &[("1", Status::Correct), ("1", Status::Correct), ("2", Status::Wrong), ("1", Status::Correct)],
            &[("3", Status::Wrong), ("", Status::NoAnswer), ("3", Status::Wrong), ("4", Status::Correct)],
            &[("5 or 6", Status::Ambiguous), ("", Status::NoAnswer), ("7", Status::InvalidGold), ("8", Status::Wrong)],
            &[("9", Status::Correct), ("9", Status::Correct), ("9", Status::Correct), ("9", Status::Correct)],
        ];
        problems
            .iter()
            .map(|samples| {
                let mut t = ProblemTally::default();
                for (i, (answer, status)) in samples.iter().enumerate() {
                    t.add(sample(i, answer, *status), &EquivOptions::default(), &Limits::default());
                }
                t
            })
            .collect()
    }

    /// Adding a metric is one registry entry: every entry, whatever it is, reaches the Markdown
    /// table (its column, with the cell of its own values), `metrics.csv` (its columns and values),
    /// `metrics.json` (its keys and values), `--metric` when selectable, and `rlbench compare`'s
    /// rows when it has a per-problem value; and the suite's values are those the entry computes.
    /// The test iterates the registry and names no metric.
    #[test]
    fn every_entry_computes_its_values_and_reaches_every_writer_and_compare() {
        use crate::compare::{compare, OVERALL};
        use crate::metrics::{ks_up_to, Bootstrap};
        use crate::report::{csv, markdown, to_json, ProblemCounts, Report, ScoredRun, ScoredSuite};
        let tallies = varied_tallies();
        let refs: Vec<&ProblemTally> = tallies.iter().collect();
        let m = SuiteMetrics::from_tallies(refs.iter().copied());
        let report = Report::new(vec![("s".into(), m.clone())], "pass@1", None);
        let cells = |line: &str| -> Vec<String> {
            line.trim().trim_start_matches("| ").trim_end_matches(" |").split(" | ").map(str::to_string).collect()
        };
        let md = markdown(&report);
        let md_head = cells(md.lines().find(|l| l.starts_with("| suite |")).unwrap_or_default());
        let md_row = cells(md.lines().find(|l| l.starts_with("| s |")).unwrap_or_default());
        let csv_text = csv(&report);
        let mut csv_lines = csv_text.lines();
        let csv_head: Vec<&str> = csv_lines.next().unwrap_or_default().split(',').collect();
        let csv_row: Vec<&str> = csv_lines.next().unwrap_or_default().split(',').collect();
        let json = to_json(&report);
        let problems = |t: &[ProblemTally]| -> ProblemCounts {
            t.iter().enumerate().map(|(i, t)| (format!("p{i}"), t.clone())).collect()
        };
        let run = |t: &[ProblemTally]| ScoredRun {
            manifest: None,
            suites: vec![ScoredSuite {
                name: "s".into(),
                metrics: m.clone(),
                problems: problems(t),
                check: Default::default(),
            }],
        };
        // B: the same problems, the first one answered worse.
        let mut worse = tallies.clone();
        worse[0] = tallies[1].clone();
        let c = compare(&run(&tallies), &run(&worse), &Bootstrap { resamples: 50, ..Bootstrap::default() })
            .unwrap_or_else(|e| panic!("{e}"));
        let mut compared = 0;
        for metric in METRICS {
            let values = metric.compute(&refs);
            assert_eq!(values.len(), metric.fields.len(), "{}", metric.name);
            assert!(values.iter().any(Option::is_some), "{}: no value on the varied suite", metric.name);
            assert_eq!(m.metric_values(metric), values.as_slice(), "{}", metric.name);
            let col = md_head.iter().position(|h| h == metric.markdown);
            assert_eq!(col.map(|i| md_row[i].clone()), Some((metric.cell)(&values)), "{}: {md}", metric.name);
            for (f, v) in metric.fields.iter().zip(&values) {
                let col = csv_head.iter().position(|h| *h == f.csv);
                let shown = v.map_or(String::new(), |x| x.to_string());
                assert_eq!(col.map(|i| csv_row[i]), Some(shown.as_str()), "{}: {csv_text}", f.csv);
                assert_eq!(json["suites"]["s"].get(f.json_key(m.k)), Some(&serde_json::json!(v)), "{}", f.json);
            }
            if metric.selectable {
                for name in [metric.name.to_string(), format!("{}@{}", metric.name, m.k)] {
                    assert_eq!(m.get(&name), values[0], "--metric {name}");
                }
            }
            let Some(per_problem) = metric.per_problem else { continue };
            compared += 1;
            let mean = |t: &[ProblemTally]| t.iter().map(per_problem).sum::<f64>() / t.len() as f64;
            assert_eq!(
                values[0],
                Some(mean(&tallies)),
                "{}: the first field is the mean of the per-problem value",
                metric.name
            );
            for suite in ["s", OVERALL] {
                let row = c.rows.iter().find(|r| r.suite == suite && r.metric == format!("{}@K", metric.name));
                let d = row.map(|r| (r.diff.a, r.diff.b, r.diff.n));
                assert_eq!(d, Some((mean(&tallies), mean(&worse), tallies.len())), "{}: {:?}", metric.name, c.rows);
            }
        }
        // Per suite and overall: the metrics with a per-problem value, then pass@k.
        assert_eq!(c.rows.len(), 2 * (compared + ks_up_to(4).len()), "{:?}", c.rows);
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
