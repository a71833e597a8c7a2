//! Generation runs: K completions per problem for each suite, written to a run directory as they
//! arrive, resumable after any interruption.
//!
//! Layout of a run directory:
//! - `run.json`: the [`RunManifest`] (model, backend, sampling, prompt and its hash, versions, seed);
//! - `<suite>.jsonl`: one [`Record`] per completion, appended as it arrives;
//! - `run.lock`: held while a run writes ([`RunLock`]): one run per directory at a time;
//! - report files written by [`crate::report`].
//!
//! Resume: running the same command again scans each suite file, cuts an unterminated last line,
//! and requests only the (problem, sample index) pairs that are missing, with the same per-request
//! seeds, so no completion is lost or generated twice. A manifest whose generation settings differ
//! from the command's is refused ([`RunManifest::conflicts`]).

pub mod lock;
pub mod manifest;
pub mod store;

pub use lock::{remove_held_locks, LockError, RunLock, LOCK_FILE};
pub use manifest::{utc_now, PromptInfo, RunManifest, SamplingSettings, SuiteSource, MANIFEST_FILE};
pub use store::{read_records, scan_and_repair, Appender, Record, Scan, StoreError};

use crate::backend::{with_retries_until, Backend, BackendError, Completion, RetryPolicy, SamplingParams};
use crate::prompt::PromptTemplate;
use crate::suite::{problem_hash, LoadedSuite};
use rlbase::splitmix64;
use rlbase::Fnv1a as Fnv;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};

/// What to generate and where.
#[derive(Clone, Debug)]
pub struct RunSpec {
    /// The run directory.
    pub out: PathBuf,
    /// The suites to generate for.
    pub suites: Vec<LoadedSuite>,
    /// The prompt template.
    pub prompt: PromptTemplate,
    /// K and the sampling settings.
    pub sampling: SamplingSettings,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// How failed requests are retried.
    pub retry: RetryPolicy,
    /// Stop starting requests once this many have failed for good with a server-side error
    /// (unreachable, timed out, 5xx after retries; a request the server rejects as invalid does
    /// not count). 0: never stop.
    pub max_failures: usize,
    /// Server URL to record in the manifest.
    pub endpoint: Option<String>,
    /// `--limit` to record in the manifest.
    pub limit: Option<usize>,
}

/// A request that failed for good (after retries).
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// The suite of the problem.
    pub suite: String,
    /// The problem id.
    pub id: String,
    /// The first sample index the request asked for.
    pub first_sample: usize,
    /// Samples the request asked for.
    pub count: usize,
    /// The last error.
    pub error: String,
}

/// What a run invocation did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunOutcome {
    /// Completions written by this invocation.
    pub generated: usize,
    /// Completions that were already in the run directory.
    pub already_present: usize,
    /// Completions still missing (from failed requests, and those not started).
    pub missing: usize,
    /// Requests that failed for good.
    pub failures: Vec<Failure>,
    /// Bytes of partial last lines cut off during the resume scan.
    pub cut_bytes: u64,
    /// Duplicate records found (ignored: the first one counts).
    pub duplicates: usize,
    /// Completions not requested because the run stopped at its failure budget.
    pub not_started: usize,
    /// The run stopped early: `max_failures` requests failed.
    pub stopped: bool,
}

/// Why a run could not proceed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{dir} was created with other settings, so it cannot be resumed by this command:\n  {}\nuse the original settings, or pass another --out", .conflicts.join("\n  "))]
    /// The run directory was created with other settings.
    Conflict {
        /// The run directory.
        dir: PathBuf,
        /// Each differing setting, `name: was -> now`.
        conflicts: Vec<String>,
    },
    #[error("{0}")]
    /// A file of the run directory could not be read or written.
    Io(String),
    #[error(transparent)]
    /// The completions file.
    Store(#[from] StoreError),
    #[error(transparent)]
    /// The run directory's lock.
    Lock(#[from] LockError),
}

/// One request: `count` samples of one problem starting at `first_sample`.
#[derive(Clone, Debug, PartialEq)]
struct Job {
    suite: usize,
    problem: usize,
    first_sample: usize,
    count: usize,
    seed: Option<u64>,
}

/// The seed of the request that starts at `first_sample` of problem `id` in `suite`: a mix of all
/// four, kept to 31 bits so every server accepts it. For a backend that mixes the prompt into its
/// sample seeds ([`Backend::seeds_mix_prompt`]) the runner passes empty `suite` and `id`.
pub fn request_seed(base: u64, suite: &str, id: &str, first_sample: usize) -> u64 {
    let mut h = Fnv::new();
    h.write(suite.as_bytes());
    h.write(&[0]);
    h.write(id.as_bytes());
    splitmix64(h.finish() ^ splitmix64(base) ^ splitmix64(first_sample as u64 + 1)) & 0x7fff_ffff
}

/// The seed of a request of `spec` starting at `first_sample` (see [`request_seed`]).
fn job_seed(spec: &RunSpec, backend: &dyn Backend, suite: &str, id: &str, first_sample: usize) -> Option<u64> {
    spec.sampling.seed.map(|b| {
        if backend.seeds_mix_prompt() {
            request_seed(b, "", "", first_sample)
        } else {
            request_seed(b, suite, id, first_sample)
        }
    })
}

/// The manifest a spec would write for a backend.
pub fn manifest_for(spec: &RunSpec, backend: &dyn Backend) -> RunManifest {
    RunManifest {
        rlbench_version: env!("CARGO_PKG_VERSION").to_string(),
        verifier_version: rlverify::VERSION.to_string(),
        created: utc_now(),
        backend: backend.kind(),
        model: backend.model(),
        endpoint: spec.endpoint.clone(),
        prompt: PromptInfo { name: spec.prompt.name.clone(), hash: spec.prompt.hash() },
        sampling: spec.sampling.clone(),
        suites: spec.suites.iter().map(|s| s.name.clone()).collect(),
        problems: spec.suites.iter().map(|s| (s.name.clone(), s.problems.len())).collect(),
        suite_files: spec
            .suites
            .iter()
            .map(|s| {
                let file = std::fs::canonicalize(&s.path).unwrap_or_else(|_| s.path.clone());
                (s.name.clone(), SuiteSource { file, fields: s.fields.clone(), rows_hash: s.rows_hash.clone() })
            })
            .collect(),
        limit: spec.limit,
        complete: false,
    }
}

/// Split the missing sample indices of a problem into contiguous runs of at most `per_request`.
fn missing_runs(
    k: usize,
    present: Option<&std::collections::BTreeSet<usize>>,
    per_request: usize,
) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < k {
        if present.is_some_and(|p| p.contains(&i)) {
            i += 1;
            continue;
        }
        let start = i;
        while i < k && i - start < per_request.max(1) && !present.is_some_and(|p| p.contains(&i)) {
            i += 1;
        }
        runs.push((start, i - start));
    }
    runs
}

/// Generate every missing completion of `spec` with `backend`. `progress(done, total)` is called
/// on the calling thread after each request completes. Failed requests are reported in the
/// outcome (re-running resumes them); I/O errors and setting conflicts stop the run. A run
/// refused before it generated (settings that conflict, a file in the directory that is not a
/// completions file) writes no `run.json`, and removes the directory when it created it.
pub fn run(
    spec: &RunSpec,
    backend: &dyn Backend,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<RunOutcome, RunError> {
    let dir = &spec.out;
    let created = !dir.exists();
    std::fs::create_dir_all(dir).map_err(|e| RunError::Io(format!("{}: {e}", dir.display())))?;
    let result = run_in(spec, backend, progress, created);
    if created && result.is_err() {
        // Removes the directory only when nothing is in it.
        let _ = std::fs::remove_dir(dir);
    }
    result
}

/// [`run`] in its directory, which exists (`created`: by this run).
fn run_in(
    spec: &RunSpec,
    backend: &dyn Backend,
    progress: &mut dyn FnMut(usize, usize),
    created: bool,
) -> Result<RunOutcome, RunError> {
    let dir = &spec.out;
    // Two runs on one directory would request the same samples twice.
    let lock = RunLock::acquire(dir)?;
    let mut manifest = manifest_for(spec, backend);
    let old_manifest = RunManifest::read(dir).map_err(RunError::Io)?;
    let fresh = old_manifest.is_none();
    if let Some(old) = old_manifest {
        let conflicts = old.conflicts(&manifest);
        if !conflicts.is_empty() {
            return Err(RunError::Conflict { dir: dir.clone(), conflicts });
        }
        let mut suites = old.suites.clone();
        for s in &manifest.suites {
            if !suites.contains(s) {
                suites.push(s.clone());
            }
        }
        manifest.suites = suites;
        let mut problems = old.problems.clone();
        problems.extend(manifest.problems.clone());
        manifest.problems = problems;
        let mut suite_files = old.suite_files.clone();
        suite_files.extend(manifest.suite_files.clone());
        manifest.suite_files = suite_files;
        manifest.created = old.created;
        manifest.verifier_version = old.verifier_version;
    }

    let k = spec.sampling.k;
    let mut outcome = RunOutcome::default();
    let mut jobs = VecDeque::new();
    // Every completions file is read before anything is written: a directory holding other JSONL
    // files (a data directory given as --out) is refused as it was found.
    let mut scans = Vec::new();
    for suite in &spec.suites {
        let scan = scan_and_repair(&suite_file(dir, &suite.name)).map_err(|e| match e {
            StoreError::Corrupt { .. } if fresh => RunError::Io(format!(
                "{e}\n{} is not a run directory (it has no {MANIFEST_FILE}, and files that are not completions): pass \
                 another --out",
                dir.display()
            )),
            e => e.into(),
        })?;
        scans.push(scan);
    }
    manifest.write(dir).map_err(RunError::Io)?;
    let mut appenders = Vec::new();
    for ((si, suite), scan) in spec.suites.iter().enumerate().zip(scans) {
        let path = suite_file(dir, &suite.name);
        outcome.cut_bytes += scan.cut_bytes;
        outcome.duplicates += scan.duplicates;
        for (pi, p) in suite.problems.iter().enumerate() {
            let present = scan.present.get(&p.id);
            outcome.already_present += present.map_or(0, |s| s.iter().filter(|&&i| i < k).count());
            for (first_sample, count) in missing_runs(k, present, spec.sampling.samples_per_request) {
                let seed = job_seed(spec, backend, &suite.name, &p.id, first_sample);
                jobs.push_back(Job { suite: si, problem: pi, first_sample, count, seed });
            }
        }
        appenders.push(Appender::open(&path)?);
    }
    if backend.seeds_mix_prompt() {
        // Requests of one sample index share a seed: in flight together, they merge into one
        // engine call.
        jobs.make_contiguous().sort_by_key(|j| j.first_sample);
    }
    let total: usize = jobs.iter().map(|j| j.count).sum();
    progress(0, total);

    let queue = Mutex::new(jobs);
    let stop = AtomicBool::new(false);
    // A failure carries its message and whether it counts against the failure budget.
    let (tx, rx) = mpsc::channel::<(Job, Result<Vec<Completion>, (String, bool)>)>();
    // Failures counted against `max_failures`, by the workers themselves: a server that is gone
    // fails requests at once, faster than this thread reads their results.
    let budget_used = AtomicUsize::new(0);
    let mut write_error = None;
    std::thread::scope(|s| {
        for _ in 0..spec.concurrency.max(1) {
            let tx = tx.clone();
            let (queue, stop, budget_used) = (&queue, &stop, &budget_used);
            s.spawn(move || loop {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let job = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
                let Some(job) = job else { return };
                let suite = &spec.suites[job.suite];
                let problem = &suite.problems[job.problem];
                let prompt = spec.prompt.render(&problem.problem);
                // A server may return fewer choices than asked for: keep them and ask for the
                // rest, each follow-up seeded as a resume starting at that sample would be.
                let (mut first_sample, mut remaining, mut seed) = (job.first_sample, job.count, job.seed);
                while remaining > 0 {
                    let part = Job { first_sample, count: remaining, seed, ..job.clone() };
                    let params = SamplingParams {
                        n: remaining,
                        temperature: spec.sampling.temperature,
                        top_p: spec.sampling.top_p,
                        top_k: spec.sampling.top_k,
                        max_new_tokens: spec.sampling.max_tokens,
                        stop: spec.sampling.stop.clone(),
                        seed,
                    };
                    let jitter = seed.unwrap_or(job.problem as u64) ^ first_sample as u64;
                    // Once the run stops (failure budget spent, a write failed), requests in
                    // flight retry no more: a server that fails every request ends the run soon.
                    let stopped = || stop.load(Ordering::SeqCst);
                    let result = with_retries_until(&spec.retry, jitter, stopped, |_| {
                        match backend.generate(&prompt, &params) {
                            Ok(c) if c.is_empty() => {
                                Err(BackendError::Protocol(format!("asked for {remaining} completions, got none")))
                            }
                            other => other,
                        }
                    })
                    .map_err(|e| {
                        let server_side = e.last.is_retryable() || matches!(e.last, BackendError::Fatal(_));
                        (e.to_string(), server_side)
                    });
                    let got = match &result {
                        Ok(c) => c.len().min(remaining),
                        Err((_, server_side)) => {
                            if *server_side {
                                let used = budget_used.fetch_add(1, Ordering::SeqCst) + 1;
                                if spec.max_failures > 0 && used >= spec.max_failures {
                                    stop.store(true, Ordering::SeqCst);
                                }
                            }
                            remaining
                        }
                    };
                    let failed = result.is_err();
                    if tx.send((Job { count: got, ..part }, result)).is_err() {
                        return;
                    }
                    if failed {
                        break;
                    }
                    first_sample += got;
                    remaining -= got;
                    if remaining > 0 {
                        seed = job_seed(spec, backend, &suite.name, &problem.id, first_sample);
                    }
                }
            });
        }
        drop(tx);
        let mut done = 0;
        for (job, result) in rx {
            if write_error.is_some() {
                continue;
            }
            let suite = &spec.suites[job.suite];
            let problem = &suite.problems[job.problem];
            match result {
                Ok(completions) => {
                    for (j, c) in completions.into_iter().take(job.count).enumerate() {
                        let rec = Record {
                            id: problem.id.clone(),
                            sample: job.first_sample + j,
                            answer: problem.answer.clone(),
                            problem_hash: Some(problem_hash(&problem.problem)),
                            response: c.text,
                            finish_reason: c.finish_reason,
                            tokens: c.tokens,
                            seed: job.seed,
                        };
                        if let Err(e) = appenders[job.suite].append(&rec) {
                            write_error = Some(e);
                            stop.store(true, Ordering::Relaxed);
                            break;
                        }
                        outcome.generated += 1;
                    }
                }
                Err((error, _)) => {
                    outcome.missing += job.count;
                    outcome.failures.push(Failure {
                        suite: suite.name.clone(),
                        id: problem.id.clone(),
                        first_sample: job.first_sample,
                        count: job.count,
                        error,
                    });
                }
            }
            done += job.count;
            progress(done, total);
        }
    });
    if let Some(e) = write_error {
        return Err(e.into());
    }
    outcome.stopped = spec.max_failures > 0 && budget_used.load(Ordering::SeqCst) >= spec.max_failures;
    outcome.not_started = queue.into_inner().unwrap_or_else(|e| e.into_inner()).iter().map(|j| j.count).sum();
    outcome.missing += outcome.not_started;
    if fresh && outcome.generated + outcome.already_present == 0 {
        // Nothing came of a new run (every request refused): leave no run behind, so the next
        // command, with these settings or others, starts clean.
        remove_empty_run(dir, spec, created);
        drop(lock);
        if created {
            let _ = std::fs::remove_dir(dir);
        }
        return Ok(outcome);
    }
    manifest.complete = outcome.failures.is_empty() && outcome.not_started == 0;
    manifest.write(dir).map_err(RunError::Io)?;
    Ok(outcome)
}

/// Removes what a run that produced nothing wrote: its manifest and empty completions files.
fn remove_empty_run(dir: &Path, spec: &RunSpec, created: bool) {
    let _ = std::fs::remove_file(dir.join(MANIFEST_FILE));
    for suite in &spec.suites {
        let path = suite_file(dir, &suite.name);
        if created || std::fs::metadata(&path).is_ok_and(|m| m.len() == 0) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// The completions file of a suite in a run directory.
pub fn suite_file(dir: &Path, suite: &str) -> PathBuf {
    dir.join(format!("{suite}.jsonl"))
}

/// The default run directory name: `<model>_<suites>_<settings hash>`
/// ([`RunManifest::settings_hash`]), with the model's last path component and only
/// `[A-Za-z0-9._+-]` kept. The same command finds its run again (to continue it, or to re-print
/// its report); commands with other settings, run in parallel or not, never share one.
pub fn default_run_name(manifest: &RunManifest) -> String {
    format!("{}{}", run_name_prefix(&manifest.model, &manifest.suites), manifest.settings_hash())
}

/// Where `rlbench run` without `--out` writes, and what it found on the way.
#[derive(Clone, Debug, PartialEq)]
pub struct DefaultRunDir {
    /// The run directory.
    pub path: PathBuf,
    /// `path` is the directory an older rlbench named for these settings, before the suite rows
    /// were part of the name (its run is continued).
    pub legacy: bool,
    /// Runs of the same settings on other rows of the suite files (a changed file, or another copy
    /// of it): their completions answer other problems, so they are not continued.
    pub other_rows: Vec<PathBuf>,
}

/// The default run directory under `root` ([`default_run_name`]). When it does not exist yet, the
/// directory an older rlbench named for the same settings ([`RunManifest::legacy_settings_hash`])
/// is continued instead, unless it records other suite rows; runs of the same settings on other
/// suite rows are listed, so that a changed suite file never starts a new run without a word.
pub fn default_run_dir(root: &Path, manifest: &RunManifest) -> DefaultRunDir {
    let prefix = run_name_prefix(&manifest.model, &manifest.suites);
    let path = root.join(default_run_name(manifest));
    let same_settings = |dir: &Path| RunManifest::read(dir).ok().flatten().filter(|m| m.conflicts(manifest).is_empty());
    let same_rows = |m: &RunManifest| {
        manifest
            .suite_files
            .iter()
            .all(|(name, now)| m.suite_files.get(name).is_none_or(|s| s.rows_hash == now.rows_hash))
    };
    if path.exists() {
        return DefaultRunDir { path, legacy: false, other_rows: Vec::new() };
    }
    let legacy = root.join(format!("{prefix}{}", manifest.legacy_settings_hash()));
    if legacy != path && same_settings(&legacy).is_some_and(|m| same_rows(&m)) {
        return DefaultRunDir { path: legacy, legacy: true, other_rows: Vec::new() };
    }
    let mut other_rows: Vec<PathBuf> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .filter(|d| same_settings(d).is_some())
        .collect();
    other_rows.sort();
    DefaultRunDir { path, legacy: false, other_rows }
}

/// The part of [`default_run_name`] before the hash.
pub fn run_name_prefix(model: &str, suites: &[String]) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+') { c } else { '-' })
            .collect()
    };
    let model = model.trim_end_matches('/').rsplit('/').next().unwrap_or(model);
    let mut suites = clean(&suites.join("+").replace('/', "-"));
    if suites.len() > 60 {
        suites.truncate(60);
    }
    format!("{}_{}_", clean(model), suites)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn missing_samples_become_contiguous_requests() {
        let present: BTreeSet<usize> = [1, 2, 5].into_iter().collect();
        assert_eq!(missing_runs(8, Some(&present), 1), vec![(0, 1), (3, 1), (4, 1), (6, 1), (7, 1)]);
        assert_eq!(missing_runs(8, Some(&present), 8), vec![(0, 1), (3, 2), (6, 2)]);
        assert_eq!(missing_runs(5, None, 2), vec![(0, 2), (2, 2), (4, 1)]);
        let all: BTreeSet<usize> = (0..4).collect();
        assert_eq!(missing_runs(4, Some(&all), 4), vec![]);
    }

    #[test]
    fn seeds_are_stable_and_distinct() {
        let a = request_seed(0, "aime24", "p1", 0);
        assert_eq!(a, request_seed(0, "aime24", "p1", 0));
        assert!(a < (1 << 31));
        let others = [
            request_seed(1, "aime24", "p1", 0),
            request_seed(0, "aime25", "p1", 0),
            request_seed(0, "aime24", "p2", 0),
            request_seed(0, "aime24", "p1", 1),
        ];
        assert!(others.iter().all(|&o| o != a));
    }

    #[test]
    fn run_names() {
        assert_eq!(
            run_name_prefix("Qwen/Qwen2.5-Math-7B", &["aime24".into(), "math500".into()]),
            "Qwen2.5-Math-7B_aime24+math500_"
        );
        assert_eq!(run_name_prefix("/models/my model/", &["x/y.jsonl".into()]), "my-model_x-y.jsonl_");
    }
}
