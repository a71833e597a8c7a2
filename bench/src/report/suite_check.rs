//! A run's completions against its suite files as they are now: each completion is scored
//! against the suite's current gold (a fixed dataset row has effect), and a report says which
//! problems changed since generation and which rows of a suite file are left out.

use crate::run::{Record, SuiteSource};
use crate::suite::{load_jsonl, problem_hash, Problem, ProblemFile};
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

/// What the suite file of a run says now, against the completions stored in the run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SuiteCheck {
    /// The suite file read, when the run records one.
    pub file: Option<PathBuf>,
    /// Why the golds stored with the completions were scored against instead of the file's (an
    /// older run that does not record its file, or a file that cannot be read).
    pub stored_golds: Option<String>,
    /// Rows of the suite file left out (invalid, an id used twice), `path:line: why`.
    pub rows_left_out: Vec<String>,
    /// Problems whose gold is not the one stored with their completions: scored against the
    /// current one.
    pub golds_changed: BTreeSet<String>,
    /// Problems whose statement changed since generation: their completions answer the old one.
    pub problems_changed: BTreeSet<String>,
    /// Problems with completions that the suite file no longer holds: scored against the gold
    /// stored with them.
    pub not_in_suite: BTreeSet<String>,
}

/// Ids (or lines) shown in a sentence before "and N more".
const SHOWN: usize = 5;

impl SuiteCheck {
    /// Checks `records` against the suite file of `source` (`None`: a run of an older rlbench,
    /// which did not record it) and gives each record the file's current gold.
    pub fn apply(source: Option<&SuiteSource>, records: &mut [Record]) -> SuiteCheck {
        let Some(source) = source else {
            let why = "the run was made by an older rlbench, which did not record its suite file; run the same \
                       `rlbench run` command to record it";
            return SuiteCheck { stored_golds: Some(why.into()), ..SuiteCheck::default() };
        };
        let mut check = SuiteCheck { file: Some(source.file.clone()), ..SuiteCheck::default() };
        let ProblemFile { problems, skipped } = match load_jsonl(&source.file, &source.fields) {
            Ok(read) => read,
            Err(e) => {
                check.stored_golds = Some(e.to_string());
                return check;
            }
        };
        check.rows_left_out = skipped;
        let by_id: HashMap<&str, &Problem> = problems.iter().map(|p| (p.id.as_str(), p)).collect();
        for r in records {
            let Some(p) = by_id.get(r.id.as_str()) else {
                check.not_in_suite.insert(r.id.clone());
                continue;
            };
            if r.answer != p.answer {
                check.golds_changed.insert(r.id.clone());
                r.answer = p.answer.clone();
            }
            if r.problem_hash.as_ref().is_some_and(|h| *h != problem_hash(&p.problem)) {
                check.problems_changed.insert(r.id.clone());
            }
        }
        check
    }

    /// Whether the scores leave out rows of the suite file, or score completions of statements
    /// that have changed since: the work is not what the suite file asks for.
    pub fn is_incomplete(&self) -> bool {
        !self.rows_left_out.is_empty() || !self.problems_changed.is_empty()
    }

    /// A sentence per finding, for the notes under the table and the warnings.
    pub fn notes(&self, suite: &str) -> Vec<String> {
        let file = self.file.as_ref().map_or_else(|| "its suite file".to_string(), |f| format!("`{}`", f.display()));
        let mut out = Vec::new();
        if let Some(why) = &self.stored_golds {
            out.push(format!("{suite}: scored against the golds stored with the completions: {why}."));
        }
        if !self.rows_left_out.is_empty() {
            out.push(format!(
                "{suite}: {} row(s) of {file} are left out of the scores ({}): fix those rows and run the same command.",
                self.rows_left_out.len(),
                first_few(self.rows_left_out.iter())
            ));
        }
        if !self.golds_changed.is_empty() {
            out.push(format!(
                "{suite}: the gold of {} problem(s) in {file} changed since their completions were generated ({}): \
                 scored against the current gold.",
                self.golds_changed.len(),
                first_few(self.golds_changed.iter())
            ));
        }
        if !self.problems_changed.is_empty() {
            out.push(format!(
                "{suite}: the statement of {} problem(s) in {file} changed since their completions were generated \
                 ({}): those completions answer the old statement; run without --out (or into another --out) to \
                 generate for the new one.",
                self.problems_changed.len(),
                first_few(self.problems_changed.iter())
            ));
        }
        if !self.not_in_suite.is_empty() {
            out.push(format!(
                "{suite}: {} problem(s) with completions are no longer in {file} ({}): scored against the gold \
                 stored with their completions.",
                self.not_in_suite.len(),
                first_few(self.not_in_suite.iter())
            ));
        }
        out
    }

    /// The findings as JSON (`metrics.json`'s `suite_checks`).
    pub fn to_json(&self) -> Value {
        json!({
            "file": self.file.as_ref().map(|f| f.display().to_string()),
            "stored_golds": self.stored_golds,
            "rows_left_out": self.rows_left_out,
            "golds_changed": self.golds_changed,
            "problems_changed": self.problems_changed,
            "not_in_suite": self.not_in_suite,
        })
    }
}

/// The first few items, `, `-joined, then `and N more`.
fn first_few<'a>(items: impl ExactSizeIterator<Item = &'a String>) -> String {
    let n = items.len();
    let mut shown: Vec<String> = items.take(SHOWN).map(|s| format!("`{s}`")).collect();
    if n > SHOWN {
        shown.push(format!("and {} more", n - SHOWN));
    }
    shown.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::Fields;

    fn record(id: &str, answer: &str, problem: &str) -> Record {
        Record {
            id: id.into(),
            sample: 0,
            answer: answer.into(),
            problem_hash: Some(problem_hash(problem)),
            response: "1".into(),
            finish_reason: None,
            tokens: None,
            seed: None,
        }
    }

    /// A fixed gold is scored against, a changed statement and a vanished problem are named, a
    /// left-out row is counted.
    #[test]
    fn changes_since_generation_are_found_and_golds_replaced() {
        let dir = std::env::temp_dir().join(format!("rlbench-suite-check-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let file = dir.join("s.jsonl");
        let rows =
            "{\"id\":\"a\",\"problem\":\"P\",\"answer\":\"2\"}\n{\"id\":\"b\",\"problem\":\"Q2\",\"answer\":\"3\"}\n\
                    {\"id\":\"a\",\"problem\":\"R\",\"answer\":\"4\"}\n";
        assert!(std::fs::write(&file, rows).is_ok());
        let source = SuiteSource { file: file.clone(), fields: Fields::default(), rows_hash: String::new() };
        let mut records = vec![record("a", "1", "P"), record("b", "3", "Q"), record("c", "5", "S")];
        let check = SuiteCheck::apply(Some(&source), &mut records);
        assert_eq!(records.iter().map(|r| r.answer.as_str()).collect::<Vec<_>>(), ["2", "3", "5"]);
        let ids = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>();
        assert_eq!(ids(&check.golds_changed), ["a"]);
        assert_eq!(ids(&check.problems_changed), ["b"]);
        assert_eq!(ids(&check.not_in_suite), ["c"]);
        assert_eq!(check.rows_left_out.len(), 1);
        assert!(check.is_incomplete());
        assert_eq!(check.notes("s").len(), 4, "{:?}", check.notes("s"));

        let mut old = vec![record("a", "1", "P")];
        let check = SuiteCheck::apply(None, &mut old);
        assert_eq!(old[0].answer, "1");
        assert!(check.notes("s")[0].contains("older rlbench"), "{:?}", check.notes("s"));
        assert!(!check.is_incomplete());
    }
}
