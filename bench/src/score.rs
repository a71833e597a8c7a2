//! Scoring generations with the verifier, in parallel (rayon) and streaming: responses are scored
//! batch by batch and folded into per-problem tallies, so memory grows with the number of problems
//! (and distinct answers), not with the number of responses.

use crate::metrics::{ProblemTally, SampleResult, SuiteMetrics};
use rayon::prelude::*;
use rlverify::{Config, Gold};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// One response to score.
#[derive(Clone, Debug, PartialEq)]
pub struct GenSample {
    /// Sample index within the problem; `None` numbers samples in arrival order.
    pub sample: Option<usize>,
    pub response: String,
    pub finish_reason: Option<String>,
    pub tokens: Option<u64>,
}

/// A problem's gold answer and one or more of its responses (one input row).
#[derive(Clone, Debug, PartialEq)]
pub struct GenRow {
    pub id: String,
    pub gold: String,
    /// The suite the row belongs to, when the input says.
    pub suite: Option<String>,
    pub samples: Vec<GenSample>,
}

const ID_FIELDS: &[&str] = &["id", "problem_id", "idx", "index", "unique_id", "question_id"];
const GOLD_FIELDS: &[&str] = &["answer", "gold", "ground_truth", "gt", "target"];
/// Lists of K responses; `code` is what Qwen2.5-Math's evaluation writes its generations to.
const LIST_FIELDS: &[&str] = &["responses", "completions", "outputs", "generations", "samples", "code"];
const ONE_FIELDS: &[&str] = &["response", "pred", "completion", "output", "generation", "model_output", "text"];
const SUITE_FIELDS: &[&str] = &["suite", "data_source"];

/// Read one generations row. Accepted shapes (the ones `rlverify score` reads):
/// - one response per row: `{"id", "answer"|"gold"|"ground_truth", "response"|"pred"|"completion"|...}`,
///   optionally `sample`, `finish_reason`, `tokens`/`completion_tokens`, `suite`;
/// - K responses per row: `{"id", "answer", "responses": [..]}` (strings, or objects with `text`),
///   optionally `finish_reasons: [..]`;
/// - the gold may also sit in `reward_model.ground_truth` (verl).
///
/// A row without an id gets `line-N`.
pub fn parse_row(v: &Value, lineno: usize) -> Result<GenRow, String> {
    if !v.is_object() {
        return Err("expected a JSON object".into());
    }
    let id = first_text(v, ID_FIELDS).unwrap_or_else(|| format!("line-{lineno}"));
    let gold = first_text(v, GOLD_FIELDS)
        .or_else(|| v.get("reward_model").and_then(|r| text(r.get("ground_truth")?)))
        .ok_or_else(|| format!("no gold answer (fields tried: {})", GOLD_FIELDS.join(", ")))?;
    let suite = first_text(v, SUITE_FIELDS);
    let mut samples = Vec::new();
    if let Some(list) = LIST_FIELDS.iter().find_map(|f| v.get(*f).and_then(Value::as_array)) {
        let reasons = v.get("finish_reasons").and_then(Value::as_array);
        for (i, item) in list.iter().enumerate() {
            let response = match item {
                Value::String(s) => s.clone(),
                Value::Object(_) => first_text(item, &["text", "response", "content"])
                    .ok_or_else(|| format!("response {i} has no `text`"))?,
                _ => return Err(format!("response {i} is not a string")),
            };
            let finish_reason = item
                .get("finish_reason")
                .and_then(Value::as_str)
                .or_else(|| reasons.and_then(|r| r.get(i)).and_then(Value::as_str))
                .map(str::to_string);
            let tokens = item.get("tokens").and_then(Value::as_u64);
            samples.push(GenSample { sample: Some(i), response, finish_reason, tokens });
        }
    } else if let Some(response) = ONE_FIELDS.iter().find_map(|f| v.get(*f).and_then(Value::as_str)) {
        let sample = ["sample", "sample_idx", "sample_index"]
            .iter()
            .find_map(|f| v.get(*f).and_then(Value::as_u64))
            .map(|s| s as usize);
        let tokens = ["tokens", "completion_tokens"].iter().find_map(|f| v.get(*f).and_then(Value::as_u64));
        let finish_reason = v.get("finish_reason").and_then(Value::as_str).map(str::to_string);
        samples.push(GenSample { sample, response: response.to_string(), finish_reason, tokens });
    } else {
        return Err(format!("no response (fields tried: {}, {})", LIST_FIELDS.join(", "), ONE_FIELDS.join(", ")));
    }
    Ok(GenRow { id, gold, suite, samples })
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn first_text(v: &Value, fields: &[&str]) -> Option<String> {
    fields.iter().find_map(|f| v.get(*f).and_then(text))
}

/// Score one response against a parsed gold.
pub fn score_sample(gold: &Gold, s: &GenSample, sample: usize, cfg: &Config) -> SampleResult {
    let ex = gold.score_explained(&s.response, cfg);
    SampleResult {
        sample,
        correct: ex.score.correct,
        status: ex.score.status,
        extracted: ex.score.extracted,
        parsed: ex.parsed.and_then(Result::ok),
        truncated: s.finish_reason.as_deref().map(|r| r == "length"),
        chars: s.response.chars().count(),
        tokens: s.tokens,
    }
}

struct ProblemState {
    id: String,
    suite: Option<String>,
    gold: Arc<Gold>,
    next_sample: usize,
    tally: ProblemTally,
}

/// Per-suite and whole-input metrics of a scored set of generations.
#[derive(Clone, Debug)]
pub struct ScoreSummary {
    /// Metrics over every problem.
    pub all: SuiteMetrics,
    /// Metrics per suite, when rows name their suite.
    pub suites: BTreeMap<String, SuiteMetrics>,
    /// Responses scored.
    pub n_responses: usize,
}

/// A streaming scorer: push rows in batches, then [`Scorer::finish`].
pub struct Scorer {
    cfg: Config,
    problems: Vec<ProblemState>,
    index: HashMap<(Option<String>, String), usize>,
    n_responses: usize,
}

impl Scorer {
    /// A scorer with a verifier config.
    pub fn new(cfg: Config) -> Scorer {
        Scorer { cfg, problems: Vec::new(), index: HashMap::new(), n_responses: 0 }
    }

    /// Score a batch of rows (in parallel on the current rayon pool) and fold them in. Rows of one
    /// problem may be spread over batches and arrive in any order; a problem is keyed by
    /// (suite, id), and its gold is taken from its first row.
    pub fn push(&mut self, rows: Vec<GenRow>) {
        self.push_observed(rows, &mut |_, _| {});
    }

    /// [`Scorer::push`], also showing each scored sample to `observe(problem id, result)`, in
    /// input order.
    pub fn push_observed(&mut self, rows: Vec<GenRow>, observe: &mut dyn FnMut(&str, &SampleResult)) {
        let mut work: Vec<(usize, usize, GenSample)> = Vec::new();
        for row in rows {
            let key = (row.suite.clone(), row.id.clone());
            let idx = match self.index.get(&key) {
                Some(&i) => i,
                None => {
                    let i = self.problems.len();
                    self.problems.push(ProblemState {
                        id: row.id,
                        suite: row.suite,
                        gold: Arc::new(Gold::new(&row.gold, &self.cfg)),
                        next_sample: 0,
                        tally: ProblemTally::default(),
                    });
                    self.index.insert(key, i);
                    i
                }
            };
            for s in row.samples {
                let p = &mut self.problems[idx];
                let sample = s.sample.unwrap_or(p.next_sample);
                p.next_sample = p.next_sample.max(sample + 1);
                work.push((idx, sample, s));
            }
        }
        self.n_responses += work.len();
        let cfg = &self.cfg;
        let problems = &self.problems;
        let results: Vec<(usize, SampleResult)> = work
            .par_iter()
            .map(|(idx, sample, s)| (*idx, score_sample(&problems[*idx].gold, s, *sample, cfg)))
            .collect();
        for (idx, r) in results {
            observe(&self.problems[idx].id, &r);
            self.problems[idx].tally.add(r, &self.cfg.equiv, &self.cfg.limits);
        }
    }

    /// The metrics of everything pushed.
    pub fn finish(self) -> ScoreSummary {
        let all = SuiteMetrics::from_tallies(self.problems.iter().map(|p| &p.tally));
        let mut by_suite: BTreeMap<String, Vec<&ProblemTally>> = BTreeMap::new();
        for p in &self.problems {
            if let Some(s) = &p.suite {
                by_suite.entry(s.clone()).or_default().push(&p.tally);
            }
        }
        let suites = by_suite.into_iter().map(|(k, v)| (k, SuiteMetrics::from_tallies(v))).collect();
        ScoreSummary { all, suites, n_responses: self.n_responses }
    }
}

/// Read a generations JSONL stream and score it in batches of `batch` responses. Bad rows are
/// collected as `line N: message` and skipped; I/O errors stop the read.
pub fn score_reader(
    reader: impl std::io::BufRead,
    cfg: Config,
    batch: usize,
    mut on_batch: impl FnMut(usize),
) -> std::io::Result<(ScoreSummary, Vec<String>)> {
    let mut scorer = Scorer::new(cfg);
    let mut rows = Vec::new();
    let mut pending = 0usize;
    let mut errors = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let parsed = serde_json::from_str::<Value>(&line)
            .map_err(|e| format!("invalid JSON: {e}"))
            .and_then(|v| parse_row(&v, i + 1));
        match parsed {
            Ok(row) => {
                pending += row.samples.len();
                rows.push(row);
            }
            Err(e) => errors.push(format!("line {}: {e}", i + 1)),
        }
        if pending >= batch.max(1) {
            scorer.push(std::mem::take(&mut rows));
            on_batch(pending);
            pending = 0;
        }
    }
    if !rows.is_empty() {
        scorer.push(rows);
        on_batch(pending);
    }
    Ok((scorer.finish(), errors))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn row_shapes() {
        let flat = parse_row(&json!({"problem_id": "p1", "gold": "4", "response": "4", "suite": "s"}), 1);
        assert_eq!(
            flat,
            Ok(GenRow {
                id: "p1".into(),
                gold: "4".into(),
                suite: Some("s".into()),
                samples: vec![GenSample { sample: None, response: "4".into(), finish_reason: None, tokens: None }]
            })
        );
        let list =
            parse_row(&json!({"id": 3, "answer": 2, "responses": ["2", {"text": "3", "finish_reason": "length"}]}), 1)
                .map_err(|e| e.to_string());
        let Ok(list) = list else { panic!("{list:?}") };
        assert_eq!((list.id.as_str(), list.gold.as_str(), list.samples.len()), ("3", "2", 2));
        assert_eq!(list.samples[1].finish_reason.as_deref(), Some("length"));
        assert_eq!(list.samples[1].sample, Some(1));
        let qwen = parse_row(&json!({"idx": 0, "gt": "5", "code": ["a", "b"], "pred": ["a", "b"]}), 1);
        assert_eq!(qwen.map(|r| (r.id, r.gold, r.samples.len())), Ok(("0".to_string(), "5".to_string(), 2)));
        let verl = parse_row(&json!({"reward_model": {"ground_truth": "x"}, "responses": ["x"]}), 7);
        assert_eq!(verl.map(|r| (r.id, r.gold)), Ok(("line-7".to_string(), "x".to_string())));
        assert!(parse_row(&json!({"id": "a", "response": "1"}), 1).is_err());
        assert!(parse_row(&json!({"id": "a", "answer": "1"}), 1).is_err());
        assert!(parse_row(&json!([1]), 1).is_err());
    }

    #[test]
    fn streaming_matches_one_batch_and_ignores_order() {
        // Problem a: 2 of 4 right; b: 0 of 4; rows interleaved.
        let text = [
            r#"{"id":"a","answer":"1","response":"1","finish_reason":"stop"}"#,
            r#"{"id":"b","answer":"5","response":"6"}"#,
            r#"{"id":"a","answer":"1","response":"2","finish_reason":"length"}"#,
            r#"{"id":"b","answer":"5","responses":["7","6","8"]}"#,
            "",
            r#"{"id":"a","answer":"1","response":"1"}"#,
            r#"not json"#,
            r#"{"id":"a","answer":"1","response":"3"}"#,
        ]
        .join("\n");
        let run = |batch| score_reader(std::io::Cursor::new(text.clone()), Config::default(), batch, |_| {});
        let Ok((one, errors)) = run(1000) else { panic!("read") };
        let Ok((many, _)) = run(1) else { panic!("read") };
        assert_eq!(one.all, many.all);
        assert_eq!(errors.len(), 1);
        assert!(errors[0].starts_with("line 7:"));
        let m = one.all;
        assert_eq!((m.n_problems, m.n_samples, m.k_min, one.n_responses), (2, 8, 4, 8));
        assert!((m.avg - 0.25).abs() < 1e-12);
        assert_eq!(m.get("pass@1"), Some(0.25));
        // a: 1 - C(2,2)/C(4,2) = 5/6; b: 0.
        assert!((m.get("pass@2").unwrap_or(f64::NAN) - 5.0 / 12.0).abs() < 1e-12);
        assert_eq!(m.get("pass@4"), Some(0.5));
        // a: "1" twice wins; b: "6" twice wins (wrong).
        assert_eq!(m.maj, 0.5);
        assert_eq!(m.truncation_rate, Some(0.5));
    }
}
