//! Training and evaluation data: JSONL files (bad lines are reported with `file:line` and
//! skipped), bench's suites by name, and synthetic `task:NAME` problems; and the seeded prompt
//! order whose position is part of the training state.

use std::path::Path;

use rlbench::suite::{find_suite_file, load_jsonl, Fields, Manifest, Problem, SuiteError};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::rng::{derive_seed, TrainRng};
use crate::tasks::Task;

/// Problems with answers, plus what was skipped while reading them.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// Short name (file stem, suite or task name).
    pub name: String,
    /// Usable problems, in file order.
    pub problems: Vec<Problem>,
    /// `path:line: message` of every skipped line.
    pub skipped: Vec<String>,
    /// The task, for `task:` data (its alphabet sizes the task tokenizer).
    pub task: Option<&'static Task>,
}

impl Dataset {
    /// Loads `spec`: `task:NAME`, a JSONL file, or a suite name from bench's manifest.
    /// `task_size`/`seed` size and seed generated tasks; `fields` names the JSONL fields of files.
    pub fn load(spec: &str, fields: &Fields, task_size: usize, seed: u64) -> Result<Self> {
        if let Some(name) = spec.strip_prefix("task:") {
            let task = Task::from_name(name)?;
            return Ok(Dataset {
                name: task.name.into(),
                problems: task.generate(task_size, seed),
                skipped: Vec::new(),
                task: Some(task),
            });
        }
        let path = Path::new(spec);
        if path.is_file() {
            let name = path.file_stem().map_or_else(|| "data".into(), |s| s.to_string_lossy().into_owned());
            return Self::from_jsonl(&name, path, fields);
        }
        let manifest = Manifest::builtin().map_err(|e| Error::Data(e.to_string()))?;
        let Some(suite) = manifest.get(spec) else {
            return Err(Error::Data(format!(
                "`{spec}` is neither a file, a suite ({}) nor `task:NAME`",
                manifest.names().join(", ")
            )));
        };
        let file = find_suite_file(&suite.file, None).map_err(|searched| {
            Error::Data(format!(
                "suite `{spec}`: `{}` not found (searched {}); set RLVR_DATA_DIR",
                suite.file,
                searched.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
            ))
        })?;
        Self::from_jsonl(spec, &file, &suite.fields())
    }

    /// A hash of every problem (id, statement, answer), in order: a checkpoint keeps it, so a
    /// resumed run notices data that changed since.
    pub fn fingerprint(&self) -> u64 {
        let mut h = rlbase::Fnv1a::new();
        for p in &self.problems {
            for field in [&p.id, &p.problem, &p.answer] {
                h.write(field.as_bytes());
                h.write(&[0]);
            }
        }
        h.finish()
    }

    /// Reads a JSONL file as `rlbench run` reads a suite ([`load_jsonl`]): every good line kept,
    /// bad ones reported (`path:line: why`). Fails only when the file cannot be read or no line is
    /// usable.
    pub fn from_jsonl(name: &str, path: &Path, fields: &Fields) -> Result<Self> {
        let read = load_jsonl(path, fields).map_err(|e| match e {
            SuiteError::Io { path, source } => Error::io(path, source),
            other => Error::Data(other.to_string()),
        })?;
        Ok(Dataset { name: name.into(), problems: read.problems, skipped: read.skipped, task: None })
    }
}

/// The order prompts are drawn in: a fresh seeded shuffle each epoch. `(epoch, pos)` is the data
/// position a checkpoint stores.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptOrder {
    /// Seed of the shuffles.
    pub seed: u64,
    /// Number of problems.
    pub len: usize,
    /// Completed passes over the data.
    pub epoch: u64,
    /// Next index into this epoch's order.
    pub pos: usize,
    #[serde(skip)]
    order: Vec<usize>,
}

impl PromptOrder {
    /// The order of `len` problems, starting at the first epoch.
    pub fn new(len: usize, seed: u64) -> Self {
        let mut me = Self { seed, len, epoch: 0, pos: 0, order: Vec::new() };
        me.reshuffle();
        me
    }

    /// Restores a saved position (the order is recomputed from the seed).
    pub fn restored(mut self) -> Self {
        self.reshuffle();
        self
    }

    fn reshuffle(&mut self) {
        self.order = (0..self.len).collect();
        TrainRng::new(derive_seed(&[self.seed, self.epoch])).shuffle(&mut self.order);
    }

    /// The next problem index (never fails: a new epoch starts when one ends; 0 when empty).
    pub fn next_index(&mut self) -> usize {
        if self.pos >= self.order.len() {
            self.epoch += 1;
            self.pos = 0;
            self.reshuffle();
        }
        let i = self.order.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_lines_are_reported_with_file_and_line_and_the_rest_kept() {
        let dir = std::env::temp_dir().join(format!("rltrain-data-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("mixed.jsonl");
        let text = "{\"problem\":\"1+1=\",\"answer\":\"2\"}\nnot json\n\n{\"problem\":\"2+2=\"}\n{\"problem\":\"3+3=\",\"answer\":6}\n{\"problem\":\"\",\"answer\":\"1\"}\n";
        std::fs::write(&p, text).unwrap();
        let d = Dataset::from_jsonl("mixed", &p, &Fields::default()).unwrap();
        assert_eq!(d.problems.iter().map(|p| p.answer.as_str()).collect::<Vec<_>>(), ["2", "6"]);
        assert_eq!(d.problems[1].id, "line-5");
        let lines: Vec<String> = d.skipped.iter().map(|s| s.split(": ").next().unwrap_or("").to_string()).collect();
        let f = p.display().to_string();
        assert_eq!(lines, [format!("{f}:2"), format!("{f}:4"), format!("{f}:6")]);
        assert!(d.skipped[1].contains("field `answer`"), "{:?}", d.skipped);
        std::fs::write(&p, "nope\n").unwrap();
        assert!(
            matches!(Dataset::from_jsonl("x", &p, &Fields::default()), Err(Error::Data(m)) if m.contains(":1: invalid JSON"))
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn prompt_order_covers_each_epoch_and_resumes() {
        let mut o = PromptOrder::new(5, 9);
        let first: Vec<usize> = (0..5).map(|_| o.next_index()).collect();
        let mut sorted = first.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, vec![0, 1, 2, 3, 4]);
        let _ = o.next_index();
        let saved = serde_json::to_string(&o).unwrap();
        let rest: Vec<usize> = (0..7).map(|_| o.next_index()).collect();
        let mut back: PromptOrder = serde_json::from_str(&saved).unwrap();
        back = back.restored();
        assert_eq!((0..7).map(|_| back.next_index()).collect::<Vec<_>>(), rest);
    }

    #[test]
    fn specs_resolve_to_tasks_files_and_errors() {
        let d = Dataset::load("task:succ", &Fields::default(), 12, 0).unwrap();
        assert_eq!((d.problems.len(), d.task.map(|t| t.name)), (12, Some("succ")));
        assert!(Dataset::load("no-such-suite-or-file", &Fields::default(), 1, 0).is_err());
        assert!(Dataset::load("task:nope", &Fields::default(), 1, 0).is_err());
    }
}
