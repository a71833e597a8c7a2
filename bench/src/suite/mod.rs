//! Benchmark suites: the manifest in `data/suites.json`, where the data files are found, and how a
//! JSONL problem file is read.

mod loader;
mod manifest;

pub use loader::{
    data_dir_candidates, find_suite_file, load_jsonl, parse_problem_line, problem_hash, rows_hash, Fields, LoadedSuite,
    Problem, ProblemFile,
};
pub use manifest::{Manifest, SuiteSpec};

use std::path::{Path, PathBuf};

/// Errors while finding or reading a suite.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// The suite name is neither in the manifest nor an existing file.
    #[error("unknown suite `{name}`; known suites: {known}; or give a path to a JSONL file")]
    Unknown {
        /// The name given.
        name: String,
        /// The manifest's suites, comma-separated.
        known: String,
    },
    /// The suite's file is in none of the searched directories.
    #[error("suite `{name}`: `{file}` not found in any data directory (searched: {searched}); pass --data-dir or set RLVR_DATA_DIR")]
    NotFound {
        /// The suite.
        name: String,
        /// Its file name.
        file: String,
        /// The directories searched, comma-separated.
        searched: String,
    },
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A line of the file is not a valid problem.
    #[error("{path}:{line}: {message}")]
    Row {
        /// The file.
        path: PathBuf,
        /// The line number (from 1).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// No line of the file is a usable problem.
    #[error("{path}: no usable problem ({skipped} lines left out; first: {first})")]
    NoProblem {
        /// The file.
        path: PathBuf,
        /// Lines left out.
        skipped: usize,
        /// The first of them, `path:line: why`.
        first: String,
    },
    /// `--data-dir` (or `RLVR_DATA_DIR`) names no directory.
    #[error("data directory `{0}` does not exist or is not a directory (--data-dir or RLVR_DATA_DIR)")]
    DataDir(PathBuf),
    /// The manifest itself is malformed.
    #[error("suite manifest: {0}")]
    Manifest(String),
}

/// `--data-dir` must name a directory: a typo never falls back to the defaults silently.
pub fn check_data_dir(dir: Option<&Path>) -> Result<(), SuiteError> {
    match dir {
        Some(d) if !d.is_dir() => Err(SuiteError::DataDir(d.to_path_buf())),
        _ => Ok(()),
    }
}

/// How suites are located: an explicit data directory, if any, and the field names for files that
/// are not in the manifest.
#[derive(Clone, Debug, Default)]
pub struct SuiteQuery {
    /// `--data-dir`: searched first.
    pub data_dir: Option<PathBuf>,
    /// Field names for arbitrary JSONL files (`--problem-field`, `--answer-field`, `--id-field`).
    pub fields: Fields,
    /// `--limit`: keep the first N problems of each suite.
    pub limit: Option<usize>,
}

/// Resolve a suite by manifest name or file path and load it. Rows left out and warnings (count
/// mismatches) are returned with the suite, never printed.
pub fn load_suite(manifest: &Manifest, name_or_path: &str, q: &SuiteQuery) -> Result<LoadedSuite, SuiteError> {
    check_data_dir(q.data_dir.as_deref())?;
    let (name, path, spec) = if let Some(spec) = manifest.get(name_or_path) {
        let path = find_suite_file(&spec.file, q.data_dir.as_deref()).map_err(|searched| SuiteError::NotFound {
            name: spec.name.clone(),
            file: spec.file.clone(),
            searched: searched.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "),
        })?;
        (spec.name.clone(), path, Some(spec))
    } else if Path::new(name_or_path).is_file() {
        let p = PathBuf::from(name_or_path);
        let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "custom".into());
        (stem, p, None)
    } else {
        return Err(SuiteError::Unknown { name: name_or_path.to_string(), known: manifest.names().join(", ") });
    };
    let fields = match spec {
        Some(s) => s.fields(),
        None => q.fields.clone(),
    };
    let ProblemFile { mut problems, skipped } = load_jsonl(&path, &fields)?;
    let rows_hash = rows_hash(&problems);
    let mut warnings = Vec::new();
    if let Some(expected) = spec.and_then(|s| s.count) {
        if problems.len() != expected {
            warnings.push(format!(
                "suite `{name}`: expected {expected} problems in {}, found {}",
                path.display(),
                problems.len()
            ));
        }
    }
    if let Some(limit) = q.limit {
        problems.truncate(limit);
    }
    Ok(LoadedSuite { name, path, fields, problems, left_out: skipped, rows_hash, warnings })
}
