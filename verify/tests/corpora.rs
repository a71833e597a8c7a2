//! Agreement of the verifier with the labelled corpora in `../shared/corpora`, and the hand
//! adjudications in `tests/verifier_adjudications.jsonl` (compiled into the test-support crate,
//! `rl_tests::VERIFIER_ADJUDICATIONS`).
//!
//! - `verifier_cases_dev.jsonl`: `{gold, pred, expected, note}`, curated equivalence cases;
//! - `real_generations_dev.jsonl`: `{model, suite, problem_id, response, gold, label, label_source}`,
//!   real model outputs with the verdict of the grader that produced them (`label` may be null).
//!
//! The agreement tests print agreement (overall, per label source, per suite), write every
//! disagreement to a JSONL file under `target/` for review, and assert a floor. The floors sit
//! just below the measured agreement and are raised as the verifier improves;
//! `RLVERIFY_MIN_AGREEMENT_VERIFIER_CASES` and `RLVERIFY_MIN_AGREEMENT_REAL_GENERATIONS` override
//! them. A corpus that is missing is skipped with
//! a message (the shared folder is not part of the repository).
//!
//! Adjudications are records we checked by hand, one JSON object per line:
//! `{"corpus": "real_generations_dev", "key": {"model": "...", "problem_id": "..."},
//!   "expected": false, "reason": "..."}`. `key` holds fields that must equal the corpus row's
//! fields and pick exactly one row; `expected` is the right verdict, which the verifier must give.

use rayon::prelude::*;
use rlverify::{score, Config, Score, Status};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

/// Lowest accepted agreement on `verifier_cases_dev`: just below the measured 84.46% (163/193);
/// the rest are math-verify-specific expectations and open cases (`verify/ADJUDICATIONS.md`).
/// The final-answer contract and the equivalence policies reject, on purpose and adjudicated:
/// last-number readings of responses with no answer marker (strict extraction), 3- to 5-digit
/// decimals of exact golds, chains with a false link between numbers, a sentence whose words
/// qualify its number, and a gold made unreadable by a JSON layer (`invalid_gold`).
const MIN_AGREEMENT_VERIFIER_CASES: f64 = 0.835;
/// Lowest accepted agreement on the labelled rows of `real_generations_dev`: just below the
/// measured 98.65% (2779/2817); the disagreements are adjudicated in `tests/verifier_adjudications.jsonl`.
/// (One label rewards a looping response that invents parts and boxes a different value for each,
/// which by policy is `ambiguous`: the parts' boxes are all candidates.)
/// (Five labels reward a right answer followed by the scale word or the money its question
/// counts in, `\boxed{5} dozens`, `\boxed{50} cents`, which by policy scale the value: units and
/// scales, issue 30 class 5.)
/// (Three labels reward responses cut off mid-derivation, which by policy get no answer: `Truncated`;
/// two reward responses with no answer marker, which strict extraction reads no answer into.)
const MIN_AGREEMENT_REAL_GENERATIONS: f64 = 0.986;

/// The rows of JSONL `text` (blank lines skipped); `name` names it in errors.
fn parse_jsonl(name: &str, text: &str) -> Vec<Value> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(k, l)| serde_json::from_str(l).unwrap_or_else(|e| panic!("{name}:{}: invalid JSON: {e}", k + 1)))
        .collect()
}

/// A corpus of `$RLVERIFY_CORPORA_DIR`, else of `../shared/corpora` (the shared-data guard: a skip
/// notice when it is missing, a failure under CI).
fn corpus(name: &str) -> Option<Vec<Value>> {
    let file = format!("{name}.jsonl");
    let path = match std::env::var_os("RLVERIFY_CORPORA_DIR") {
        Some(dir) => PathBuf::from(dir).join(file),
        None => rl_tests::shared_file(&format!("corpora/{file}"))?,
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    Some(parse_jsonl(&path.display().to_string(), &text))
}

fn str_field<'a>(row: &'a Value, field: &str) -> &'a str {
    row.get(field).and_then(Value::as_str).unwrap_or_else(|| panic!("row without string `{field}`: {row}"))
}

/// The floor for `name`, from its environment variable or the constant.
fn floor(var: &str, default: f64) -> f64 {
    match std::env::var(var) {
        Ok(v) => v.parse().unwrap_or_else(|e| panic!("{var}={v:?} is not a number: {e}")),
        Err(_) => default,
    }
}

/// Agreement counts of one group of rows.
#[derive(Default)]
struct Tally {
    agree: usize,
    total: usize,
    /// Labelled wrong, scored correct.
    false_pos: usize,
    /// Labelled correct, scored wrong.
    false_neg: usize,
}

impl Tally {
    fn add(&mut self, expected: bool, got: bool) {
        self.total += 1;
        match (expected, got) {
            (e, g) if e == g => self.agree += 1,
            (false, true) => self.false_pos += 1,
            _ => self.false_neg += 1,
        }
    }

    fn rate(&self) -> f64 {
        if self.total == 0 {
            1.0
        } else {
            self.agree as f64 / self.total as f64
        }
    }

    fn line(&self, name: &str) -> String {
        format!(
            "  {name:<28} {:>6.2}% ({}/{})  false positives {}, false negatives {}",
            100.0 * self.rate(),
            self.agree,
            self.total,
            self.false_pos,
            self.false_neg
        )
    }
}

/// Write the disagreements of a corpus for review and return the path.
fn write_disagreements(corpus: &str, rows: &[Value]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("corpora");
    std::fs::create_dir_all(&dir).expect("create the disagreements dir");
    let path = dir.join(format!("{corpus}.disagreements.jsonl"));
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).expect("create the disagreements file"));
    for row in rows {
        writeln!(file, "{row}").expect("write a disagreement");
    }
    file.flush().expect("flush the disagreements file");
    path
}

fn verdict_json(s: &Score) -> Value {
    json!({"got": s.correct, "status": s.status.as_str(), "extracted": s.extracted, "rule": s.rule,
           "limit": s.limit.map(|k| k.as_str())})
}

#[test]
fn verifier_cases_agreement() {
    let Some(rows) = corpus("verifier_cases_dev") else { return };
    let cfg = Config::default();
    let scored: Vec<(bool, Score)> = rows
        .par_iter()
        .map(|row| {
            let expected =
                row.get("expected").and_then(Value::as_bool).unwrap_or_else(|| panic!("no `expected`: {row}"));
            (expected, score(str_field(row, "pred"), str_field(row, "gold"), &cfg))
        })
        .collect();
    let mut all = Tally::default();
    let mut disagreements = Vec::new();
    for (row, (expected, s)) in rows.iter().zip(&scored) {
        all.add(*expected, s.correct);
        if *expected != s.correct {
            let mut d = row.clone();
            if let (Some(obj), Value::Object(v)) = (d.as_object_mut(), verdict_json(s)) {
                obj.extend(v);
            }
            disagreements.push(d);
        }
    }
    let path = write_disagreements("verifier_cases_dev", &disagreements);
    eprintln!("verifier_cases_dev:\n{}", all.line("all"));
    eprintln!("  disagreements: {}", path.display());
    let min = floor("RLVERIFY_MIN_AGREEMENT_VERIFIER_CASES", MIN_AGREEMENT_VERIFIER_CASES);
    assert!(all.rate() >= min, "agreement {:.4} is below the floor {min}", all.rate());
}

#[test]
fn real_generations_agreement() {
    let Some(rows) = corpus("real_generations_dev") else { return };
    let cfg = Config::default();
    let labelled: Vec<(&Value, bool)> =
        rows.iter().filter_map(|r| r.get("label").and_then(Value::as_bool).map(|l| (r, l))).collect();
    let scored: Vec<Score> =
        labelled.par_iter().map(|(row, _)| score(str_field(row, "response"), str_field(row, "gold"), &cfg)).collect();
    let mut all = Tally::default();
    let mut by_source: BTreeMap<String, Tally> = BTreeMap::new();
    let mut by_suite: BTreeMap<String, Tally> = BTreeMap::new();
    let mut disagreements = Vec::new();
    for ((row, label), s) in labelled.iter().zip(&scored) {
        all.add(*label, s.correct);
        by_source.entry(str_field(row, "label_source").to_string()).or_default().add(*label, s.correct);
        by_suite.entry(str_field(row, "suite").to_string()).or_default().add(*label, s.correct);
        if *label != s.correct {
            let mut d = Map::new();
            for key in ["model", "suite", "problem_id", "label_source", "gold", "label"] {
                d.insert(key.to_string(), row.get(key).cloned().unwrap_or(Value::Null));
            }
            if let Value::Object(v) = verdict_json(s) {
                d.extend(v);
            }
            d.insert("response".to_string(), row.get("response").cloned().unwrap_or(Value::Null));
            disagreements.push(Value::Object(d));
        }
    }
    let path = write_disagreements("real_generations_dev", &disagreements);
    let mut report = format!(
        "real_generations_dev: {} labelled rows, {} unlabelled (skipped)\n{}\n by label_source:\n",
        labelled.len(),
        rows.len() - labelled.len(),
        all.line("all")
    );
    for (name, t) in &by_source {
        report.push_str(&t.line(name));
        report.push('\n');
    }
    report.push_str(" by suite:\n");
    for (name, t) in &by_suite {
        report.push_str(&t.line(name));
        report.push('\n');
    }
    eprintln!("{report}  disagreements: {}", path.display());
    let min = floor("RLVERIFY_MIN_AGREEMENT_REAL_GENERATIONS", MIN_AGREEMENT_REAL_GENERATIONS);
    assert!(all.rate() >= min, "agreement {:.4} is below the floor {min}", all.rate());
}

/// The verdict for a corpus row: `(response, gold)` by corpus.
fn row_inputs<'a>(corpus: &str, row: &'a Value) -> (&'a str, &'a str) {
    match corpus {
        "verifier_cases_dev" => (str_field(row, "pred"), str_field(row, "gold")),
        "real_generations_dev" => (str_field(row, "response"), str_field(row, "gold")),
        other => panic!("unknown corpus `{other}` in an adjudication"),
    }
}

#[test]
fn adjudicated_verdicts_hold() {
    let path = rl_tests::VERIFIER_ADJUDICATIONS_FILE;
    let adjudications = parse_jsonl(path, rl_tests::VERIFIER_ADJUDICATIONS);
    assert!(!adjudications.is_empty(), "{path} is empty");
    let mut corpora: BTreeMap<String, Option<Vec<Value>>> = BTreeMap::new();
    let cfg = Config::default();
    let mut failures = Vec::new();
    let mut checked = 0;
    for (k, adj) in adjudications.iter().enumerate() {
        let at = format!("{path}:{}", k + 1);
        let name = str_field(adj, "corpus");
        let key = adj.get("key").and_then(Value::as_object).unwrap_or_else(|| panic!("{at}: `key` must be an object"));
        let expected = adj.get("expected").and_then(Value::as_bool).unwrap_or_else(|| panic!("{at}: no `expected`"));
        assert!(adj.get("reason").and_then(Value::as_str).is_some_and(|r| !r.is_empty()), "{at}: give a `reason`");
        let Some(rows) = corpora.entry(name.to_string()).or_insert_with(|| corpus(name)) else {
            continue;
        };
        let matches: Vec<&Value> = rows.iter().filter(|row| key.iter().all(|(f, v)| row.get(f) == Some(v))).collect();
        // Exact duplicates in a corpus (the same case twice) count as one row.
        let distinct = matches.iter().all(|m| *m == matches[0]);
        assert!(
            !matches.is_empty() && distinct,
            "{at}: the key must pick exactly one row of {name}, it picks {}",
            matches.len()
        );
        let (response, gold) = row_inputs(name, matches[0]);
        let s = score(response, gold, &cfg);
        checked += 1;
        if s.correct != expected {
            failures.push(format!("{at}: expected {expected}, got {} ({})", s.correct, verdict_json(&s)));
        }
    }
    eprintln!("{checked} adjudications checked");
    assert!(failures.is_empty(), "adjudications not honoured:\n{}", failures.join("\n"));
}

/// Unlabelled rows of `real_generations_dev` the verifier scores right against their gold, at
/// least (630 on 2026-11-27). They carry no label, so the agreement above never sees them: a
/// reading that stops finding answers (structured output in a ```` ```json ```` fence read as
/// code once made 160 of them `no_answer`) shows here. Read the rows that changed before
/// lowering it.
const MIN_UNLABELLED_CORRECT: usize = 625;
/// Unlabelled rows with no answer found, at most (45 on 2026-11-27).
const MAX_UNLABELLED_NO_ANSWER: usize = 50;

#[test]
fn unlabelled_rows_keep_their_answers() {
    let Some(rows) = corpus("real_generations_dev") else { return };
    let cfg = Config::default();
    let unlabelled: Vec<&Value> = rows.iter().filter(|r| r.get("label").and_then(Value::as_bool).is_none()).collect();
    let scored: Vec<Score> =
        unlabelled.par_iter().map(|row| score(str_field(row, "response"), str_field(row, "gold"), &cfg)).collect();
    let correct = scored.iter().filter(|s| s.correct).count();
    let no_answer = scored.iter().filter(|s| s.status == Status::NoAnswer).count();
    eprintln!("real_generations_dev unlabelled: {} rows, {correct} correct, {no_answer} no_answer", unlabelled.len());
    assert!(
        correct >= MIN_UNLABELLED_CORRECT && no_answer <= MAX_UNLABELLED_NO_ANSWER,
        "unlabelled rows: {correct} correct (floor {MIN_UNLABELLED_CORRECT}), {no_answer} no_answer (ceiling \
         {MAX_UNLABELLED_NO_ANSWER}): answers the verifier used to find are lost"
    );
}
