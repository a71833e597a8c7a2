//! Reports of a run directory (or of any scored suites): a Markdown table, CSV, JSON, and an SVG plot
//! of Pass@k against k per suite; plus the baseline file for CPGD's Overall.

mod render;
mod suite_check;
mod svg;

pub use render::{csv, markdown, to_json};
pub use suite_check::SuiteCheck;
pub use svg::{line_chart_svg, passk_overlay_svg, passk_svg, Chart, RunCurves, Series, SuiteCurve, XAxis, YAxis};

use crate::metrics::{macro_average, overall, Overall, ProblemTally, SuiteMetrics};
use crate::run::{read_records, suite_file, RunManifest};
use crate::score::{GenRow, GenSample, Scorer};
use rlverify::Config;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Metrics per suite, in run order.
pub type ScoredSuites = Vec<(String, SuiteMetrics)>;

/// Each problem's tally, by id: what `rlbench compare` pairs, so that every registry metric with a
/// per-problem value ([`crate::metrics::Metric::per_problem`]) can be compared. It reads as the
/// map it holds.
#[derive(Clone, Debug, Default)]
pub struct ProblemCounts(BTreeMap<String, ProblemTally>);

impl std::ops::Deref for ProblemCounts {
    type Target = BTreeMap<String, ProblemTally>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl FromIterator<(String, ProblemTally)> for ProblemCounts {
    fn from_iter<I: IntoIterator<Item = (String, ProblemTally)>>(iter: I) -> Self {
        ProblemCounts(iter.into_iter().collect())
    }
}

/// From (samples, correct samples) per problem alone: enough for Avg@K and Pass@k; the other
/// counts of each tally are 0 (no votes, so no majority).
impl FromIterator<(String, (usize, usize))> for ProblemCounts {
    fn from_iter<I: IntoIterator<Item = (String, (usize, usize))>>(iter: I) -> Self {
        iter.into_iter()
            .map(|(id, (n, correct))| (id, ProblemTally { n, correct, ..ProblemTally::default() }))
            .collect()
    }
}

/// One suite of a scored run directory.
#[derive(Clone, Debug)]
pub struct ScoredSuite {
    /// The suite's name.
    pub name: String,
    /// Its metrics.
    pub metrics: SuiteMetrics,
    /// Per-problem counts (what `rlbench compare` pairs).
    pub problems: ProblemCounts,
    /// The suite file as it is now, against the completions.
    pub check: SuiteCheck,
}

/// A scored run directory.
#[derive(Clone, Debug)]
pub struct ScoredRun {
    /// The run's manifest (`run.json`), when it has one.
    pub manifest: Option<RunManifest>,
    /// Its suites, in manifest order.
    pub suites: Vec<ScoredSuite>,
}

impl ScoredRun {
    /// The suites' metrics, in run order.
    pub fn metrics(&self) -> ScoredSuites {
        self.suites.iter().map(|s| (s.name.clone(), s.metrics.clone())).collect()
    }

    /// The suite checks, in run order.
    pub fn checks(&self) -> Vec<(String, SuiteCheck)> {
        self.suites.iter().map(|s| (s.name.clone(), s.check.clone())).collect()
    }
}

/// A note per suite with samples scored against a gold that cannot be read (`invalid_gold`):
/// those samples score 0 whatever the model said, so the dataset row needs fixing.
pub fn invalid_gold_notes(suites: &[(String, SuiteMetrics)]) -> Vec<String> {
    suites
        .iter()
        .filter(|(_, m)| m.invalid_gold > 0)
        .map(|(name, m)| {
            format!(
                "{name}: {} sample(s) were scored against a gold that cannot be read (status invalid_gold, never \
                 rewarded): fix those dataset rows (the same command then scores against the fixed golds)",
                m.invalid_gold
            )
        })
        .collect()
}

/// A note per suite without a single sample: its metrics are n/a and it is left out of the
/// macro average and Overall.
pub fn empty_suite_notes(suites: &[(String, SuiteMetrics)]) -> Vec<String> {
    suites
        .iter()
        .filter(|(_, m)| m.n_samples == 0)
        .map(|(name, _)| format!("{name} has no samples: its metrics are n/a and it is left out of the averages."))
        .collect()
}

/// One sentence per suite that lacks samples: how many, and that the run is incomplete.
pub fn incomplete_notes(suites: &[(String, SuiteMetrics)]) -> Vec<String> {
    suites
        .iter()
        .filter(|(_, m)| !m.is_complete())
        .map(|(name, m)| {
            const SHOWN: usize = 5;
            let mut which: Vec<String> =
                m.short_problems.iter().take(SHOWN).map(|(id, n)| format!("{id} has {n}")).collect();
            if m.short_problems.len() > SHOWN {
                which.push(format!("{} more", m.short_problems.len() - SHOWN));
            }
            let absent = m.incomplete_problems - m.short_problems.len();
            if absent > 0 {
                which.push(format!("{absent} without any"));
            }
            format!(
                "Incomplete: {name} is missing {} of {} samples ({} of {} problems have fewer than K = {}: {}); pass@k is n/a where a problem has fewer than k samples. Re-run the same command to complete it.",
                m.missing_samples,
                m.expected_problems * m.k,
                m.incomplete_problems,
                m.expected_problems,
                m.k,
                which.join(", ")
            )
        })
        .collect()
}

/// Scored suites with their aggregates.
#[derive(Clone, Debug)]
pub struct Report {
    /// The run's manifest, when reporting a run directory.
    pub manifest: Option<RunManifest>,
    /// Metrics per suite, in run order.
    pub suites: Vec<(String, SuiteMetrics)>,
    /// The metric used for the macro average and Overall (e.g. `pass@1`).
    pub metric: String,
    /// Macro average of `metric` over suites.
    pub macro_avg: Option<f64>,
    /// CPGD's Overall of `metric` against a baseline, when one was given.
    pub overall: Option<Overall>,
    /// The baseline file used.
    pub baseline_path: Option<PathBuf>,
    /// The verifier version the scores were computed with.
    pub verifier_version: String,
    /// Per-endpoint requests, failures and tokens of a run against servers (`endpoints.json`).
    pub endpoints: Vec<crate::backend::EndpointStats>,
    /// Sentences printed under the table: what the numbers leave out (skipped lines, missing
    /// samples).
    pub notes: Vec<String>,
    /// Per suite, its file as it is now against the run's completions ([`Report::with_checks`]).
    pub checks: Vec<(String, SuiteCheck)>,
    /// How answers were read: the verifier's `--extract`, `--last-number` and `--truncated`.
    pub scoring: Vec<(&'static str, &'static str)>,
}

impl Report {
    /// Build a report from scored suites; computes the macro average and, with a baseline, Overall.
    pub fn new(
        suites: Vec<(String, SuiteMetrics)>,
        metric: &str,
        baseline: Option<(PathBuf, BTreeMap<String, f64>)>,
    ) -> Report {
        let scores: BTreeMap<String, f64> =
            suites.iter().filter_map(|(n, m)| m.get(metric).map(|v| (n.clone(), v))).collect();
        let overall = baseline.as_ref().map(|(_, b)| overall(&scores, b));
        Report {
            manifest: None,
            macro_avg: macro_average(&scores),
            overall,
            baseline_path: baseline.map(|(p, _)| p),
            notes: incomplete_notes(&suites)
                .into_iter()
                .chain(empty_suite_notes(&suites))
                .chain(invalid_gold_notes(&suites))
                .collect(),
            suites,
            metric: metric.to_string(),
            verifier_version: rlverify::VERSION.to_string(),
            endpoints: Vec::new(),
            checks: Vec::new(),
            scoring: scoring_modes(&Config::default()),
        }
    }

    /// The report of a run: its suite checks, whose findings are added to the notes.
    pub fn with_checks(mut self, checks: Vec<(String, SuiteCheck)>) -> Report {
        self.notes.extend(checks.iter().flat_map(|(name, c)| c.notes(name)));
        self.checks = checks;
        self
    }

    /// The report of answers read with `cfg` (recorded in its header and JSON).
    pub fn scored_with(mut self, cfg: &Config) -> Report {
        self.scoring = scoring_modes(cfg);
        self
    }

    /// Whether the work is not whole ([`Report::shortfalls`]).
    pub fn is_incomplete(&self) -> bool {
        !self.shortfalls().is_empty()
    }

    /// What the report lacks, one phrase each: samples missing, rows of a suite file left out,
    /// completions of statements changed since. Empty: the work is whole.
    pub fn shortfalls(&self) -> Vec<String> {
        let mut out = Vec::new();
        let missing: usize = self.suites.iter().map(|(_, m)| m.missing_samples).sum();
        if missing > 0 {
            out.push(format!("{missing} samples are missing"));
        }
        let left_out: usize = self.checks.iter().map(|(_, c)| c.rows_left_out.len()).sum();
        if left_out > 0 {
            out.push(format!("{left_out} rows of the suite files are left out"));
        }
        let changed: usize = self.checks.iter().map(|(_, c)| c.problems_changed.len()).sum();
        if changed > 0 {
            out.push(format!("{changed} problems changed their statement since generation"));
        }
        out
    }
}

/// The verifier settings that change how an answer is read (every option of
/// [`rlverify::options::AnswerArgs`]), as (flag, value) with the values the command line takes.
pub fn scoring_modes(cfg: &Config) -> Vec<(&'static str, &'static str)> {
    rlverify::options::AnswerArgs::OPTIONS.iter().map(|o| (o.flag(), o.get(cfg))).collect()
}

/// Score every suite of a run directory (the suites of its manifest, or every `*.jsonl` in it when
/// it has none), with the current verifier against the current golds of the suite files the run
/// records ([`SuiteCheck`]), and write each sample's verdict to
/// `scores/<suite>.jsonl` (`{id, sample, correct, status, extracted}`) for inspection. Metrics are
/// named for the K of the manifest (else the most samples of any problem), with the missing
/// samples counted. A directory that is not a run (no `run.json`, and files that are not
/// completions records) is an error that says so and points at `rlbench score`.
pub fn score_run(dir: &Path, cfg: &Config) -> Result<ScoredRun, String> {
    if !dir.is_dir() {
        return Err(format!("`{}` is not a directory (a run directory of `rlbench run`)", dir.display()));
    }
    let manifest = RunManifest::read(dir)?;
    let names: Vec<String> = match &manifest {
        Some(m) => m.suites.clone(),
        None => {
            let mut v: Vec<String> = std::fs::read_dir(dir)
                .map_err(|e| format!("{}: {e}", dir.display()))?
                .filter_map(|e| e.ok())
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    name.strip_suffix(".jsonl").map(str::to_string)
                })
                .collect();
            v.sort();
            v
        }
    };
    let not_a_run = |why: String| {
        format!(
            "`{}` is not a run directory of `rlbench run` (it has no {}{why}); to score a file of generations, use \
             `rlbench score FILE`",
            dir.display(),
            crate::run::MANIFEST_FILE
        )
    };
    if names.is_empty() {
        return Err(not_a_run(" and no completions files".into()));
    }
    let mut out = Vec::new();
    for name in names {
        let mut records = read_records(&suite_file(dir, &name)).map_err(|e| match &manifest {
            Some(_) => e.to_string(),
            None => not_a_run(format!(", and {e}")),
        })?;
        let check = match &manifest {
            Some(m) => SuiteCheck::apply(m.suite_files.get(&name), &mut records),
            None => SuiteCheck::default(),
        };
        let mut scorer = Scorer::new(cfg.clone());
        let rows = records
            .into_iter()
            .map(|r| GenRow {
                id: r.id,
                gold: r.answer,
                suite: None,
                samples: vec![GenSample {
                    sample: Some(r.sample),
                    response: r.response,
                    finish_reason: r.finish_reason,
                    tokens: r.tokens,
                }],
            })
            .collect();
        let mut verdicts = String::new();
        scorer.push_observed(rows, &mut |id, r| {
            let line = serde_json::json!({
                "id": id,
                "sample": r.sample,
                "correct": r.correct,
                "status": r.status.as_str(),
                "extracted": r.extracted,
            });
            verdicts.push_str(&line.to_string());
            verdicts.push('\n');
        });
        let scores_dir = dir.join("scores");
        std::fs::create_dir_all(&scores_dir).map_err(|e| format!("{}: {e}", scores_dir.display()))?;
        let path = scores_dir.join(format!("{name}.jsonl"));
        std::fs::write(&path, verdicts).map_err(|e| format!("{}: {e}", path.display()))?;
        let problems: ProblemCounts = scorer.tallies().map(|(id, t)| (id.to_string(), t.clone())).collect();
        let mut metrics = scorer.finish().all;
        let (k, expected) = match &manifest {
            Some(m) => (m.sampling.k, m.problems.get(&name).copied().unwrap_or(problems.len())),
            None => (metrics.k_max, problems.len()),
        };
        metrics.set_requested(k, expected, problems.iter().map(|(id, t)| (id.as_str(), t.n)));
        out.push(ScoredSuite { name, metrics, problems, check });
    }
    Ok(ScoredRun { manifest, suites: out })
}

/// Read baseline scores for `metric` from a JSON file: a previous report (`metrics.json`, with a
/// `suites` object), an object of suite -> metrics object, or an object of suite -> number. For a
/// registry metric named without `@K` (`avg`, `maj`), its key for whatever K the file has is used
/// (`avg@8`).
pub fn load_baseline(path: &Path, metric: &str) -> Result<BTreeMap<String, f64>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_baseline(&text, &path.display().to_string(), metric)
}

/// `--baseline VALUE`: a file, or the JSON itself when it starts with `{` (`--baseline
/// '{"gsm8k": 0.5}'`). Returns what to name it in the report and the scores.
pub fn baseline_from_arg(arg: &str, metric: &str) -> Result<(PathBuf, BTreeMap<String, f64>), String> {
    if arg.trim_start().starts_with('{') {
        let scores = parse_baseline(arg, "--baseline", metric)?;
        return Ok((PathBuf::from(arg.trim()), scores));
    }
    let path = PathBuf::from(arg);
    Ok((path.clone(), load_baseline(&path, metric)?))
}

/// The baseline scores of a JSON text (`source` names it in errors).
fn parse_baseline(text: &str, source: &str, metric: &str) -> Result<BTreeMap<String, f64>, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("{source}: not JSON: {e}"))?;
    let path = Path::new(source);
    let suites = v.get("suites").unwrap_or(&v);
    let Some(obj) = suites.as_object() else {
        return Err(format!("{}: expected a JSON object of suites", path.display()));
    };
    let mut out = BTreeMap::new();
    for (suite, val) in obj {
        let x = match val {
            Value::Number(n) => n.as_f64(),
            Value::Object(m) => metric_value(m, metric),
            _ => None,
        };
        if let Some(x) = x {
            out.insert(suite.clone(), x);
        }
    }
    if out.is_empty() {
        return Err(format!("{}: no suite has a value for `{metric}`", path.display()));
    }
    // Every selectable metric is a fraction: `{"aime24": 50}` is a percent, and would make
    // Overall 100 times too small.
    let outside: Vec<String> =
        out.iter().filter(|(_, v)| !(0.0..=1.0).contains(*v)).map(|(s, v)| format!("{s}: {v}")).collect();
    if !outside.is_empty() {
        return Err(format!(
            "{}: `{metric}` is a fraction from 0 to 1, but the baseline gives {}; percents? divide them by 100 \
             (50 -> 0.5)",
            path.display(),
            outside.join(", ")
        ));
    }
    Ok(out)
}

fn metric_value(m: &serde_json::Map<String, Value>, metric: &str) -> Option<f64> {
    if let Some(x) = m.get(metric).and_then(Value::as_f64) {
        return Some(x);
    }
    // A registry metric: the JSON key of its first field, for the K it names or any K (`avg` reads
    // `avg@8`, not `avg@8_stderr`).
    let Ok(crate::metrics::MetricName::Named { name, k }) = metric.parse() else { return None };
    let json = crate::metrics::METRICS.iter().find(|x| x.name == name)?.fields.first()?.json;
    let (head, tail) = json.split_once("{K}").unwrap_or((json, ""));
    let k_matches = |key_k: &str| match (json.contains("{K}"), k) {
        (false, _) => key_k.is_empty(),
        (true, Some(k)) => key_k == k.to_string(),
        (true, None) => !key_k.is_empty() && key_k.bytes().all(|b| b.is_ascii_digit()),
    };
    m.iter()
        .find(|(key, _)| key.strip_prefix(head).and_then(|r| r.strip_suffix(tail)).is_some_and(k_matches))
        .and_then(|(_, v)| v.as_f64())
}

/// Write `report.md`, `metrics.csv`, `metrics.json` and `passk.svg` into `dir`; returns the paths.
pub fn write_files(dir: &Path, report: &Report) -> Result<Vec<PathBuf>, String> {
    let files = [
        ("report.md", markdown(report)),
        ("metrics.csv", csv(report)),
        ("metrics.json", serde_json::to_string_pretty(&to_json(report)).map_err(|e| e.to_string())? + "\n"),
        ("passk.svg", passk_svg(&report.suites)),
    ];
    let mut out = Vec::new();
    for (name, text) in files {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))?;
        out.push(p);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A suite without samples (every request failed) shows n/a, not 0.0, and is left out of the
    /// macro average.
    #[test]
    fn a_suite_without_samples_is_n_a_and_left_out_of_the_average() {
        use crate::metrics::{ProblemTally, SampleResult};
        let mut t = ProblemTally::default();
        let right = SampleResult {
            sample: 0,
            correct: true,
            status: rlverify::Status::Correct,
            extracted: Some("1".into()),
            parsed: None,
            truncated: None,
            chars: 3,
            tokens: None,
        };
        t.add(right, &Default::default(), &Default::default());
        let full = SuiteMetrics::from_tallies([&t]);
        let mut empty = SuiteMetrics::from_tallies(std::iter::empty());
        empty.set_requested(1, 5, std::iter::empty());
        for metric in ["avg", "maj", "pass@1"] {
            let r = Report::new(vec![("a".into(), full.clone()), ("b".into(), empty.clone())], metric, None);
            assert_eq!(r.macro_avg, Some(1.0), "{metric}");
            let md = markdown(&r);
            let row = md.lines().find(|l| l.starts_with("| b |")).unwrap_or_default();
            assert!(!row.contains("0.0") && row.contains("n/a"), "{row}");
            assert!(md.contains("over 1 suite(s)") && md.contains("b has no samples"), "{md}");
            let json = to_json(&r);
            assert!(json["suites"]["b"]["avg@1"].is_null() && json["suites"]["b"]["maj@1"].is_null(), "{json}");
        }
    }

    #[test]
    fn baseline_shapes() {
        let dir = std::env::temp_dir().join(format!("rlbench-baseline-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let p = dir.join("b.json");
        let write = |t: &str| std::fs::write(&p, t).is_ok();
        assert!(write(
            r#"{"suites": {"aime24": {"pass@1": 0.1, "avg@8": 0.2, "avg@8_stderr": 0.01}, "gsm8k": {"pass@1": 0.9}}}"#
        ));
        let b = load_baseline(&p, "pass@1");
        assert_eq!(b.map(|b| b.len()), Ok(2));
        assert_eq!(load_baseline(&p, "avg").map(|b| b.get("aime24").copied()), Ok(Some(0.2)));
        assert!(write(r#"{"aime24": 0.3}"#));
        assert_eq!(load_baseline(&p, "pass@1").map(|b| b.get("aime24").copied()), Ok(Some(0.3)));
        assert!(write(r#"[1]"#));
        assert!(load_baseline(&p, "pass@1").is_err());
        assert!(write(r#"{"aime24": {"maj@4": 0.3}}"#));
        assert!(load_baseline(&p, "pass@1").is_err());
        // Given inline, as the help offers it.
        let (name, b) = baseline_from_arg(r#" {"gsm8k": 0.5}"#, "pass@1").expect("inline JSON");
        assert_eq!((name, b.get("gsm8k").copied()), (PathBuf::from(r#"{"gsm8k": 0.5}"#), Some(0.5)));
        // Percents are refused, naming the suite and the fix.
        let err = baseline_from_arg(r#"{"a": 50, "b": 0.5}"#, "pass@1").unwrap_err();
        assert!(err.contains("a: 50") && err.contains("divide them by 100"), "{err}");
        let err = baseline_from_arg("{gsm8k: 0.5}", "pass@1").unwrap_err();
        assert!(err.starts_with("--baseline: not JSON"), "{err}");
        assert_eq!(baseline_from_arg(&p.display().to_string(), "maj").map(|(n, _)| n), Ok(p.clone()));
    }
}
