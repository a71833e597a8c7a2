//! Scoring generations with the verifier, in parallel (rayon) and streaming: responses are scored
//! batch by batch and folded into per-problem tallies, so memory grows with the number of problems
//! (and distinct answers), not with the number of responses.
//!
//! Rows are read by the verifier's reader ([`rlverify::input`]), the one `rlverify score` uses:
//! the same field names in the same order, the same shapes, the same per-line error messages.

use crate::metrics::{ProblemTally, SampleResult, SuiteMetrics};
use rayon::prelude::*;
use rlbase::Fnv1a as Fnv;
use rlverify::input::{parse_line, FieldSpec, GroupKey, InputError, JsonLines, Record, Responses};
use rlverify::{Config, Extraction, Gold, LastNumber, Source, Status, Truncated};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// One response to score.
#[derive(Clone, Debug, PartialEq)]
pub struct GenSample {
    /// Sample index within the problem; `None` numbers samples in arrival order.
    pub sample: Option<usize>,
    /// The response text.
    pub response: String,
    /// `stop`, `length`, ... when the input says.
    pub finish_reason: Option<String>,
    /// Completion tokens, when the input says.
    pub tokens: Option<u64>,
}

/// A problem's gold answer and one or more of its responses (one input row).
#[derive(Clone, Debug, PartialEq)]
pub struct GenRow {
    /// The problem id (or the prompt, for rows without one).
    pub id: String,
    /// The gold answer.
    pub gold: String,
    /// The suite the row belongs to, when the input says.
    pub suite: Option<String>,
    /// Its responses.
    pub samples: Vec<GenSample>,
}

/// The problem id a group key stands for: the id itself, or `prompt-<hash>` of the prompt text
/// for rows grouped by their prompt.
pub fn problem_id(key: &GroupKey) -> String {
    match key {
        GroupKey::Id(id) => id.clone(),
        GroupKey::Prompt(p) => {
            let mut h = Fnv::new();
            h.write(p.as_bytes());
            format!("prompt-{:016x}", h.finish())
        }
    }
}

/// A row read by the shared reader ([`rlverify::input`]) as a [`GenRow`]. Rows are grouped into
/// problems by their id, else by their prompt ([`Record::group_key`]); a row of K responses with
/// neither is one problem of its own (`line-N`), and a one-response row with neither is an error:
/// counting each such row as a problem would turn K samples of one problem into K problems.
pub fn gen_row(rec: Record, line: u64, fields: &FieldSpec) -> Result<GenRow, InputError> {
    let id = match rec.group_key() {
        Some(key) => problem_id(&key),
        None if matches!(rec.responses, Responses::Many(_)) => format!("line-{line}"),
        None => return Err(InputError::no_group(fields)),
    };
    let one = matches!(rec.responses, Responses::One(_));
    let texts = match rec.responses {
        Responses::One(r) => vec![r],
        Responses::Many(rs) => rs,
    };
    let samples = texts
        .into_iter()
        .zip(rec.info)
        .enumerate()
        .map(|(k, (response, info))| GenSample {
            sample: if one { rec.sample.map(|s| s as usize) } else { Some(k) },
            response,
            finish_reason: info.finish_reason,
            tokens: info.tokens,
        })
        .collect();
    Ok(GenRow { id, gold: rec.gold, suite: rec.suite, samples })
}

/// The finish reason of a completion cut off at its token limit (OpenAI, vLLM, SGLang,
/// llama.cpp).
pub const FINISH_LENGTH: &str = "length";

/// Score one response against a parsed gold. A response the server cut off at its token limit
/// (`finish_reason: length`) is truncated whatever its text looks like: under `--truncated
/// no-answer` it answers only with what it marked as its answer (a box, an answer tag or phrase,
/// `####`, a bold line) or a whole bare answer, never with its last formula, number, choice line
/// or sentence, which are steps of an unfinished derivation.
pub fn score_sample(gold: &Gold, s: &GenSample, sample: usize, cfg: &Config) -> SampleResult {
    let ex = gold.score_explained(&s.response, cfg);
    let truncated = s.finish_reason.as_deref().map(|r| r == FINISH_LENGTH);
    let (mut correct, mut status, mut extracted, mut parsed) =
        (ex.score.correct, ex.score.status, ex.score.extracted, ex.parsed.and_then(Result::ok));
    let unmarked = ex.answer.as_ref().is_some_and(|a| {
        matches!(a.source, Source::MathDelimiters | Source::LastNumber | Source::Choice | Source::Conclusion)
    });
    if truncated == Some(true) && cfg.truncated == Truncated::NoAnswer && unmarked {
        (correct, status, extracted, parsed) = (false, Status::NoAnswer, None, None);
    }
    SampleResult {
        sample,
        correct,
        status,
        extracted,
        parsed,
        truncated,
        chars: s.response.chars().count(),
        tokens: s.tokens,
    }
}

/// Why `--truncated lenient` does less than it may seem under `cfg`, when it does: with strict
/// extraction a cut-off response answers with its choice line or concluding sentence, never with
/// its last formula or number, which only `--extract lenient` reads (or `--last-number always`).
pub fn truncated_mode_note(cfg: &Config) -> Option<String> {
    let lenient = cfg.truncated == Truncated::Lenient && cfg.extract == Extraction::Strict;
    (lenient && cfg.last_number != LastNumber::Always).then(|| {
        "--truncated lenient with --extract strict: a cut-off response may answer with its choice line or \
         concluding sentence only; its last formula or number counts with --extract lenient (its last number \
         with --last-number always)"
            .to_string()
    })
}

struct ProblemState {
    id: String,
    suite: Option<String>,
    gold: Arc<Gold>,
    next_sample: usize,
    tally: ProblemTally,
}

/// The suite of rows that name none, in an input where other rows name theirs.
pub const NO_SUITE: &str = "(no suite)";

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

    /// Each problem pushed so far, by id, with its tally (in the order first seen; an id repeats
    /// when rows of several suites share it).
    pub fn tallies(&self) -> impl Iterator<Item = (&str, &ProblemTally)> {
        self.problems.iter().map(|p| (p.id.as_str(), &p.tally))
    }

    /// The metrics of everything pushed. When some rows name their suite, the problems of rows
    /// that name none are the suite [`NO_SUITE`]: every scored row is in the tables.
    pub fn finish(self) -> ScoreSummary {
        let all = SuiteMetrics::from_tallies(self.problems.iter().map(|p| &p.tally));
        let mut by_suite: BTreeMap<String, Vec<&ProblemTally>> = BTreeMap::new();
        let named = self.problems.iter().any(|p| p.suite.is_some());
        for p in &self.problems {
            match &p.suite {
                Some(s) => by_suite.entry(s.clone()).or_default().push(&p.tally),
                None if named => by_suite.entry(NO_SUITE.to_string()).or_default().push(&p.tally),
                None => {}
            }
        }
        let suites = by_suite.into_iter().map(|(k, v)| (k, SuiteMetrics::from_tallies(v))).collect();
        ScoreSummary { all, suites, n_responses: self.n_responses }
    }
}

/// Whether two golds given for one problem are one answer: the same text, or equivalent for the
/// verifier (`1` and ` 1`, `1/2` and `0.5`), read as leniently as a gold is.
fn same_gold(first: &str, other: &str, cfg: &Config) -> bool {
    first.trim() == other.trim() || {
        let lenient = Config { extract: Extraction::Lenient, ..cfg.clone() };
        Gold::new(first, &lenient).score(other, &lenient).correct
    }
}

/// A line that could not be read, as `rlverify score` reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct LineError {
    /// 1-based line number.
    pub line: u64,
    /// The shared reader's message ([`InputError`]'s `Display`).
    pub message: String,
    /// A missing field (the fix is `--response-field`, `--gold-field` or `--id-field`).
    pub missing_field: bool,
}

/// What a read of a generations stream found.
#[derive(Clone, Debug)]
pub struct ScoredInput {
    /// The verdict counts.
    pub summary: ScoreSummary,
    /// Lines skipped, in order.
    pub errors: Vec<LineError>,
    /// Non-blank lines read.
    pub lines: u64,
    /// Rows without an id, grouped by their prompt, and the problems they make.
    pub grouped_by_prompt: usize,
    /// Problems made of such rows.
    pub prompt_problems: usize,
}

/// Read a generations JSONL stream with the shared reader and score it in batches of `batch`
/// responses. Bad lines (invalid UTF-8 or JSON, missing fields) are collected and skipped, never
/// stopping the read; I/O errors stop it.
pub fn score_reader(
    reader: impl std::io::BufRead,
    cfg: Config,
    fields: &FieldSpec,
    batch: usize,
    on_batch: impl FnMut(usize),
) -> std::io::Result<ScoredInput> {
    score_reader_observed(reader, cfg, fields, batch, on_batch, &mut |_, _| {})
}

/// [`score_reader`], also showing each scored sample to `observe(problem id, result)`, in input
/// order.
pub fn score_reader_observed(
    reader: impl std::io::BufRead,
    cfg: Config,
    fields: &FieldSpec,
    batch: usize,
    mut on_batch: impl FnMut(usize),
    observe: &mut dyn FnMut(&str, &SampleResult),
) -> std::io::Result<ScoredInput> {
    let mut scorer = Scorer::new(cfg);
    let mut rows = Vec::new();
    let mut pending = 0usize;
    let mut errors = Vec::new();
    let mut lines = JsonLines::new(reader);
    let (mut n_lines, mut by_prompt) = (0u64, 0usize);
    let mut prompt_ids = std::collections::HashSet::new();
    // The gold of each problem and the line it came from: a problem has one gold, so a row that
    // gives it another is an error (as `rlverify score`, which scores each row against its own
    // gold, would otherwise give it a different verdict).
    let mut golds: HashMap<(Option<String>, String), (String, u64)> = HashMap::new();
    while let Some(line) = lines.next_line()? {
        n_lines += 1;
        let read = parse_line(&line.bytes, fields).and_then(|rec| {
            let grouped_by_prompt = rec.id.is_none() && rec.prompt.is_some();
            gen_row(rec, line.number, fields).map(|row| (row, grouped_by_prompt))
        });
        let read = read.map_err(|e| (e.to_string(), e.is_missing_field())).and_then(|(row, by_prompt)| {
            let key = (row.suite.clone(), row.id.clone());
            match golds.get(&key) {
                Some((gold, first)) if !same_gold(gold, &row.gold, &scorer.cfg) => Err((
                    format!(
                        "problem `{}` has the gold `{}` here but `{gold}` on line {first}: a problem has one gold \
                         (fix the row, or give it its own id)",
                        row.id, row.gold
                    ),
                    false,
                )),
                Some(_) => Ok((row, by_prompt)),
                None => {
                    golds.insert(key, (row.gold.clone(), line.number));
                    Ok((row, by_prompt))
                }
            }
        });
        match read {
            Ok((row, grouped_by_prompt)) => {
                if grouped_by_prompt {
                    by_prompt += 1;
                    prompt_ids.insert(row.id.clone());
                }
                pending += row.samples.len();
                rows.push(row);
            }
            Err((message, missing_field)) => errors.push(LineError { line: line.number, message, missing_field }),
        }
        if pending >= batch.max(1) {
            scorer.push_observed(std::mem::take(&mut rows), observe);
            on_batch(pending);
            pending = 0;
        }
    }
    if !rows.is_empty() {
        scorer.push_observed(rows, observe);
        on_batch(pending);
    }
    Ok(ScoredInput {
        summary: scorer.finish(),
        errors,
        lines: n_lines,
        grouped_by_prompt: by_prompt,
        prompt_problems: prompt_ids.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(line: &str) -> Result<GenRow, InputError> {
        let fields = FieldSpec::default();
        parse_line(line.as_bytes(), &fields).and_then(|r| gen_row(r, 7, &fields))
    }

    #[test]
    fn row_shapes() {
        let flat = row(r#"{"problem_id": "p1", "gold": "4", "response": "4", "suite": "s"}"#);
        assert_eq!(
            flat,
            Ok(GenRow {
                id: "p1".into(),
                gold: "4".into(),
                suite: Some("s".into()),
                samples: vec![GenSample { sample: None, response: "4".into(), finish_reason: None, tokens: None }]
            })
        );
        let Ok(list) = row(r#"{"id": 3, "answer": 2, "responses": ["2", {"text": "3", "finish_reason": "length"}]}"#)
        else {
            panic!("list row")
        };
        assert_eq!((list.id.as_str(), list.gold.as_str(), list.samples.len()), ("3", "2", 2));
        assert_eq!(list.samples[1].finish_reason.as_deref(), Some("length"));
        assert_eq!(list.samples[1].sample, Some(1));
        let qwen = row(r#"{"idx": 0, "gt": "5", "code": ["a", "b"], "pred": ["a", "b"]}"#);
        assert_eq!(qwen.map(|r| (r.id, r.gold, r.samples.len())), Ok(("0".to_string(), "5".to_string(), 2)));
        // A list row without an id is one problem; a one-response row is grouped by its prompt.
        let verl = row(r#"{"reward_model": {"ground_truth": "x"}, "responses": ["x"]}"#);
        assert_eq!(verl.map(|r| (r.id, r.gold)), Ok(("line-7".to_string(), "x".to_string())));
        let a = row(r#"{"prompt": "What is 2+2?", "answer": "4", "response": "4", "sample": 3}"#);
        let b = row(r#"{"prompt": "What is 2+2?", "answer": "4", "response": "5"}"#);
        let (Ok(a), Ok(b)) = (a, b) else { panic!("prompt rows") };
        assert!(a.id.starts_with("prompt-") && a.id == b.id);
        assert_eq!((a.samples[0].sample, b.samples[0].sample), (Some(3), None));
        let lone = row(r#"{"answer": "4", "response": "5"}"#).map_err(|e| e.to_string());
        assert!(matches!(&lone, Err(m) if m.starts_with("no id or prompt field")), "{lone:?}");
        assert!(row(r#"{"id": "a", "response": "1"}"#).is_err());
        assert!(row(r#"{"id": "a", "answer": "1"}"#).is_err());
        assert!(row("[1]").is_err());
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
        let fields = FieldSpec::default();
        let run = |batch| score_reader(std::io::Cursor::new(text.clone()), Config::default(), &fields, batch, |_| {});
        let Ok(one) = run(1000) else { panic!("read") };
        let Ok(many) = run(1) else { panic!("read") };
        assert_eq!(one.summary.all, many.summary.all);
        assert_eq!(one.errors.len(), 1);
        assert_eq!(one.errors[0].line, 7);
        assert!(one.errors[0].message.starts_with("invalid JSON"));
        assert_eq!(one.lines, 7);
        let m = one.summary.all;
        assert_eq!((m.n_problems, m.n_samples, m.k_min, one.summary.n_responses), (2, 8, 4, 8));
        assert!((m.avg - 0.25).abs() < 1e-12);
        assert_eq!(m.get("pass@1"), Some(0.25));
        // a: 1 - C(2,2)/C(4,2) = 5/6; b: 0.
        assert!((m.get("pass@2").unwrap_or(f64::NAN) - 5.0 / 12.0).abs() < 1e-12);
        assert_eq!(m.get("pass@4"), Some(0.5));
        // a: "1" twice wins; b: "6" twice wins (wrong).
        assert_eq!(m.maj, 0.5);
        assert_eq!(m.truncation_rate, Some(0.5));
    }

    /// Four samples of one prompt without an id are one problem of K = 4, not four problems of
    /// K = 1.
    #[test]
    fn rows_without_ids_are_grouped_by_prompt() {
        let text: String = ["4", "4", "5", "6"]
            .iter()
            .map(|r| format!("{{\"prompt\": \"2+2?\", \"answer\": \"4\", \"response\": \"{r}\"}}\n"))
            .collect();
        let read = score_reader(std::io::Cursor::new(text), Config::default(), &FieldSpec::default(), 2, |_| {});
        let Ok(read) = read else { panic!("read") };
        let m = &read.summary.all;
        assert_eq!((m.n_problems, m.k_min, read.grouped_by_prompt, read.prompt_problems), (1, 4, 4, 1));
        assert_eq!(m.maj, 1.0);
        assert_eq!(m.avg, 0.5);
    }

    /// A problem has one gold: a row that gives its id another is a line error naming both
    /// lines, so `rlbench score` and `rlverify score` never disagree on the same row.
    #[test]
    fn two_golds_for_one_problem_are_an_error() {
        let text = [
            r#"{"id":"a","answer":"1","response":"1"}"#,
            r#"{"id":"a","answer":"2","response":"2"}"#,
            r#"{"id":"a","answer":"1","response":"2"}"#,
        ]
        .join("\n");
        let read = score_reader(std::io::Cursor::new(text), Config::default(), &FieldSpec::default(), 8, |_| {});
        let Ok(read) = read else { panic!("read") };
        assert_eq!(read.errors.len(), 1);
        assert_eq!(read.errors[0].line, 2);
        assert!(read.errors[0].message.contains("`2` here but `1` on line 1"), "{}", read.errors[0].message);
        assert_eq!((read.summary.all.n_samples, read.summary.all.avg), (2, 0.5));
    }

    /// Golds that differ in text only (` 1` for `1`, `0.5` for `1/2`) are one gold: compared by
    /// the verifier, not as strings, so no row is dropped.
    #[test]
    fn equivalent_golds_of_one_problem_are_one_gold() {
        let text = [
            r#"{"id":"a","answer":"1","response":"1"}"#,
            r#"{"id":"a","answer":" 1","response":"2"}"#,
            r#"{"id":"b","answer":"1/2","response":"0.5"}"#,
            r#"{"id":"b","answer":"0.5","response":"\\frac{1}{2}"}"#,
            r#"{"id":"b","answer":"\\frac{1}{2}","response":"1"}"#,
        ]
        .join("\n");
        let read = score_reader(std::io::Cursor::new(text), Config::default(), &FieldSpec::default(), 8, |_| {});
        let Ok(read) = read else { panic!("read") };
        assert_eq!(read.errors, vec![]);
        assert_eq!((read.summary.all.n_samples, read.summary.all.n_problems), (5, 2));
        // a: 1 of 2 right, b: 2 of 3, each against its first gold.
        assert!((read.summary.all.avg - (0.5 + 2.0 / 3.0) / 2.0).abs() < 1e-12, "{}", read.summary.all.avg);
    }

    /// A completion cut off at its token limit answers only with what it marked: its last
    /// formula is a step (`--truncated no-answer`, the default), unless `--truncated lenient`.
    #[test]
    fn finish_reason_length_marks_a_truncated_response() {
        let cfg = Config { extract: Extraction::Lenient, ..Config::default() };
        let gold = Gold::new("5", &cfg);
        let sample = |text: &str, finish: Option<&str>| GenSample {
            sample: Some(0),
            response: text.into(),
            finish_reason: finish.map(str::to_string),
            tokens: None,
        };
        let cut = sample("Adding the two parts we get $5$ and then we divide", Some("length"));
        let done = sample("Adding the two parts we get $5$ and then we divide", Some("stop"));
        let boxed = sample("So the answer is \\boxed{5} and to check it we", Some("length"));
        let r = score_sample(&gold, &cut, 0, &cfg);
        assert_eq!((r.correct, r.status, r.truncated), (false, Status::NoAnswer, Some(true)));
        assert!(score_sample(&gold, &done, 0, &cfg).correct);
        assert!(score_sample(&gold, &boxed, 0, &cfg).correct, "a marked answer stands");
        let lenient = Config { truncated: Truncated::Lenient, ..cfg.clone() };
        assert!(score_sample(&gold, &cut, 0, &lenient).correct);
        assert!(truncated_mode_note(&Config { truncated: Truncated::Lenient, ..Config::default() }).is_some());
        assert!(truncated_mode_note(&lenient).is_none());
    }

    /// Rows that name no suite, among rows that do, are a suite of their own in the tables.
    #[test]
    fn rows_without_a_suite_are_not_left_out() {
        let text =
            [r#"{"id":"a","suite":"s","answer":"1","response":"1"}"#, r#"{"id":"b","answer":"1","response":"1"}"#]
                .join("\n");
        let read = score_reader(std::io::Cursor::new(text), Config::default(), &FieldSpec::default(), 8, |_| {});
        let Ok(read) = read else { panic!("read") };
        let names: Vec<&str> = read.summary.suites.keys().map(String::as_str).collect();
        assert_eq!(names, ["(no suite)", "s"]);
    }
}
