//! Finding data directories and reading JSONL problem files.

use super::SuiteError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// One benchmark problem.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    /// Stable id (the file's id field, or `line-N` when it has none).
    pub id: String,
    /// The problem statement.
    pub problem: String,
    /// The gold answer as given.
    pub answer: String,
}

/// A suite read from disk.
#[derive(Clone, Debug)]
pub struct LoadedSuite {
    /// The suite's name.
    pub name: String,
    /// The file it was read from.
    pub path: PathBuf,
    /// The field names it was read with.
    pub fields: Fields,
    /// Its problems, in file order (after `--limit`).
    pub problems: Vec<Problem>,
    /// Rows of the file left out (invalid, a repeated id), `path:line: why`: they are not
    /// evaluated, and reports count them.
    pub left_out: Vec<String>,
    /// [`rows_hash`] of every usable row of the file (before `--limit`): part of the default run
    /// name, so another version of the file gets its own run.
    pub rows_hash: String,
    /// Other non-fatal problems found while loading (e.g. an unexpected count).
    pub warnings: Vec<String>,
}

/// Field names of a problem file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fields {
    /// Field of the problem text.
    pub problem: String,
    /// Field of the gold answer.
    pub answer: String,
    /// Field of the problem id.
    pub id: String,
}

impl Default for Fields {
    fn default() -> Self {
        Fields { problem: "problem".into(), answer: "answer".into(), id: "id".into() }
    }
}

/// The directories searched for suite files, in order: `explicit` (`--data-dir`), `$RLVR_DATA_DIR`,
/// then for the current directory and its parents (up to 3 levels): `data/benchmarks` and
/// `../shared/data/benchmarks`; then the same two under the workspace rlbench was built in; then the
/// current directory itself. Duplicates are removed.
pub fn data_dir_candidates(explicit: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(d) = explicit {
        dirs.push(d.to_path_buf());
    }
    if let Some(d) = std::env::var_os("RLVR_DATA_DIR").filter(|d| !d.is_empty()) {
        dirs.push(PathBuf::from(d));
    }
    let cwd = std::env::current_dir().ok();
    if let Some(cwd) = &cwd {
        for base in cwd.ancestors().take(4) {
            dirs.push(base.join("data/benchmarks"));
            dirs.push(base.join("../shared/data/benchmarks"));
        }
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    dirs.push(workspace.join("data/benchmarks"));
    dirs.push(workspace.join("../shared/data/benchmarks"));
    if let Some(cwd) = cwd {
        dirs.push(cwd);
    }
    let mut seen = Vec::new();
    dirs.retain(|d| {
        let key = d.canonicalize().unwrap_or_else(|_| d.clone());
        if seen.contains(&key) {
            false
        } else {
            seen.push(key);
            true
        }
    });
    dirs
}

/// The first candidate directory holding `file`; on failure, the directories searched.
pub fn find_suite_file(file: &str, explicit: Option<&Path>) -> Result<PathBuf, Vec<PathBuf>> {
    let dirs = data_dir_candidates(explicit);
    dirs.iter().map(|d| d.join(file)).find(|p| p.is_file()).ok_or(dirs)
}

/// A short hash of a problem statement, stored with each completion so a report can tell when the
/// suite's statement changed after generation.
pub fn problem_hash(problem: &str) -> String {
    let mut h = rlbase::Fnv1a::new();
    h.write(problem.as_bytes());
    format!("{:016x}", h.finish())
}

/// A short hash of what generation depends on in a suite: each row's id and problem statement, in
/// file order. Golds are not in it: they change no completion, and every report scores against
/// the suite's current golds.
pub fn rows_hash(problems: &[Problem]) -> String {
    let mut h = rlbase::Fnv1a::new();
    for p in problems {
        h.write(p.id.as_bytes());
        h.write(&[0]);
        h.write(p.problem.as_bytes());
        h.write(&[0]);
    }
    format!("{:016x}", h.finish())
}

/// The problems of a JSONL file, and the lines skipped.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProblemFile {
    /// Usable problems, in file order.
    pub problems: Vec<Problem>,
    /// `path:line: why` of every line left out.
    pub skipped: Vec<String>,
}

/// Read a JSONL problem file, as `rlbench run` and `rltrain` both do. Blank lines are skipped; a
/// malformed row (invalid JSON, the problem or answer missing or empty) and a repeated id (which
/// would mix two problems' golds and completions) are left out and listed with their line, and
/// the rest of the file is read. Ids default to `line-N`; numeric answers are accepted and written
/// as text. Fails only when the file cannot be read or holds no usable problem.
pub fn load_jsonl(path: &Path, fields: &Fields) -> Result<ProblemFile, SuiteError> {
    let io = |source| SuiteError::Io { path: path.to_path_buf(), source };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut out = ProblemFile::default();
    let mut first_line: HashMap<String, usize> = HashMap::new();
    for (idx, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(io)?;
        let lineno = idx + 1;
        if line.trim().is_empty() {
            continue;
        }
        let problem = match parse_problem_line(&line, lineno, fields) {
            Ok(p) => p,
            Err(why) => {
                out.skipped.push(format!("{}:{lineno}: {why}", path.display()));
                continue;
            }
        };
        if let Some(&first) = first_line.get(&problem.id) {
            out.skipped.push(format!(
                "{}:{lineno}: duplicate id `{}` (field `{}`): line {first} has it already; give every problem its own id",
                path.display(),
                problem.id,
                fields.id
            ));
            continue;
        }
        first_line.insert(problem.id.clone(), lineno);
        out.problems.push(problem);
    }
    if out.problems.is_empty() {
        return Err(SuiteError::NoProblem {
            path: path.to_path_buf(),
            skipped: out.skipped.len(),
            first: out.skipped.first().cloned().unwrap_or_else(|| "the file is empty".into()),
        });
    }
    Ok(out)
}

/// One JSONL line as a [`Problem`] (`lineno` names it when it has no id field), or why it is not one:
/// invalid JSON, or the problem or answer field missing, empty or not a string/number. A row
/// without the problem field but with a chat (`messages` or `prompt`: a list of `{role,
/// content}`) takes its last user message as the problem.
pub fn parse_problem_line(line: &str, lineno: usize, fields: &Fields) -> Result<Problem, String> {
    let v: Value = serde_json::from_str(line).map_err(|e| format!("invalid JSON: {e}"))?;
    let problem = text_field(&v, &fields.problem)
        .or_else(|| ["messages", "prompt"].iter().find_map(|f| last_user_message(v.get(*f)?)))
        .ok_or_else(|| format!("field `{}` is missing or not a string", fields.problem))?;
    if problem.trim().is_empty() {
        return Err(format!("field `{}` is empty", fields.problem));
    }
    let answer = text_field(&v, &fields.answer)
        .filter(|a| !a.trim().is_empty())
        .ok_or_else(|| format!("field `{}` is missing or empty", fields.answer))?;
    let id = text_field(&v, &fields.id).unwrap_or_else(|| format!("line-{lineno}"));
    Ok(Problem { id, problem, answer })
}

/// The content of the last `user` message of a chat (a list of `{role, content}`).
fn last_user_message(chat: &Value) -> Option<String> {
    chat.as_array()?
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .and_then(|m| m.get("content")?.as_str().map(str::to_string))
}

/// A string or number field as text.
fn text_field(v: &Value, name: &str) -> Option<String> {
    match v.get(name)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rlbench-loader-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let _ = std::fs::create_dir_all(&d);
        d
    }

    #[test]
    fn explicit_dir_is_searched_first_and_listed_on_failure() {
        let d = tmp("search");
        assert!(std::fs::write(d.join("mine.jsonl"), "").is_ok());
        assert_eq!(find_suite_file("mine.jsonl", Some(&d)), Ok(d.join("mine.jsonl")));
        let Err(searched) = find_suite_file("no-such-suite-file.jsonl", Some(&d)) else { panic!("found") };
        assert_eq!(searched.first(), Some(&d));
        assert!(searched.len() > 2);
    }

    #[test]
    fn rows_fields_and_errors() {
        let d = tmp("rows");
        let p = d.join("s.jsonl");
        let ok = "{\"id\":\"a\",\"q\":\"P\",\"gt\":27.0}\n\n{\"q\":\"Q\",\"gt\":\"x\"}\n";
        assert!(std::fs::write(&p, ok).is_ok());
        let f = Fields { problem: "q".into(), answer: "gt".into(), id: "id".into() };
        let rows = load_jsonl(&p, &f).map(|r| r.problems).map_err(|e| e.to_string());
        assert_eq!(
            rows,
            Ok(vec![
                Problem { id: "a".into(), problem: "P".into(), answer: "27.0".into() },
                Problem { id: "line-3".into(), problem: "Q".into(), answer: "x".into() },
            ])
        );
        assert!(std::fs::write(&p, "{\"q\":\"P\",\"gt\":\"\"}\n").is_ok());
        let err = load_jsonl(&p, &f).map_err(|e| e.to_string());
        assert!(matches!(&err, Err(m) if m.contains(":1: field `gt` is missing or empty")), "{err:?}");
        // A bad line is listed with its line; the rest of the file is read.
        assert!(std::fs::write(&p, "{\"q\":\"P\",\"gt\":\"1\"}\nnot json\n{\"q\":\"R\",\"gt\":\"\"}\n").is_ok());
        let read = load_jsonl(&p, &f).expect("one usable row");
        assert_eq!(read.problems.len(), 1);
        assert_eq!(read.skipped.len(), 2);
        assert!(read.skipped[0].ends_with(":2: invalid JSON: expected ident at line 1 column 2"), "{:?}", read.skipped);
        assert!(read.skipped[1].ends_with(":3: field `gt` is missing or empty"), "{:?}", read.skipped);
    }

    /// A chat row (`messages`) without a problem field asks its last user message.
    #[test]
    fn chat_rows_ask_their_last_user_message() {
        let row =
            r#"{"messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "2+2?"}], "answer": "4"}"#;
        let p = parse_problem_line(row, 1, &Fields::default()).expect("a problem");
        assert_eq!((p.problem.as_str(), p.answer.as_str()), ("2+2?", "4"));
        assert!(parse_problem_line(r#"{"problem": " ", "answer": "4"}"#, 1, &Fields::default()).is_err());
    }

    /// Two problems under one id would merge (golds mixed, the second counted as done on resume):
    /// the second is left out and listed, naming both lines, also when one id is the `line-N`
    /// default.
    #[test]
    fn duplicate_ids_are_an_error_naming_both_lines() {
        let d = tmp("dups");
        let p = d.join("s.jsonl");
        let rows = "{\"id\":\"a\",\"problem\":\"P\",\"answer\":\"1\"}\n\n{\"id\":\"b\",\"problem\":\"Q\",\"answer\":\"2\"}\n{\"id\":\"a\",\"problem\":\"R\",\"answer\":\"3\"}\n";
        assert!(std::fs::write(&p, rows).is_ok());
        let read = load_jsonl(&p, &Fields::default()).expect("readable");
        let want = format!("{}:4: duplicate id `a` (field `id`): line 1 has it already", p.display());
        assert!(read.skipped[0].starts_with(&want), "{:?}", read.skipped);
        assert_eq!(read.problems.iter().map(|p| p.id.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        let rows = "{\"problem\":\"P\",\"answer\":\"1\"}\n{\"id\":\"line-1\",\"problem\":\"Q\",\"answer\":\"2\"}\n";
        assert!(std::fs::write(&p, rows).is_ok());
        let read = load_jsonl(&p, &Fields::default()).expect("readable");
        assert!(read.skipped[0].contains(":2: duplicate id `line-1`"), "{:?}", read.skipped);
    }
}
