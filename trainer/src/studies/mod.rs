//! Stability studies (`rltrain study NAME`): each seed paper's stability findings, run on the tiny
//! model under that paper's settings (`--paper`) from many seeds, each finding judged by a paired
//! difference over seeds with its bootstrap interval ([`stats`]).
//!
//! [`run_study`] trains every arm of every setting ([`catalog`]) for each seed, `jobs` runs at a
//! time, into `OUT/runs/<setting>/<objective>-it<N>-s<seed>/`, then writes the report
//! (`report.md`), the numbers behind it (`summary.json`) and the plots (`plots/`, a band over the
//! seeds per arm) into the report folder.
//!
//! **Determinism.** A run's metrics depend only on its configuration and the build: not on
//! `jobs` (`rltrain study --threads`), on which runs share the machine, or on the thread counts (`RAYON_NUM_THREADS`,
//! `CANDLE_NUM_THREADS`; the tests check 1 against 3). The matrix products pick their kernels by the
//! CPU's instruction set, so another CPU family may give other numbers; so may another compiler
//! or dependency version. The report therefore names the commit and the machine.
//!
//! **Resumable.** A run that finished leaves `study-run.json` (its resolved configuration); the
//! same command run again reuses it instead of training it again, so a study stopped by Ctrl-C
//! continues where it stopped. A run whose configuration changed with the code is trained afresh
//! (and counted in [`Progress::Start`]); one trained for other steps, or a report made with other
//! seeds or steps, stops the study before it starts, naming both: each choice of settings has its
//! own folder ([`default_out`]).
//!
//! **Quick checks.** Runs shorter or longer than their setting's own steps (`--steps`) still get
//! verdicts from 8 seeds on, each marked with a caveat ([`FindingResult::caveat`]).

pub mod catalog;
mod commit;
mod folders;
mod report;
pub mod stats;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use serde::Serialize;
use serde_json::json;

use crate::error::{Error, Result};
use crate::plot::{MetricLog, METRICS_FILE};
use crate::TrainConfig;
pub use catalog::{Arm, Finding, Metric, Setting, Study, STUDIES};
pub use commit::source_commit;
pub use folders::default_out;
pub use report::{REPORT_FILE, SUMMARY_FILE};
use stats::{Interval, Verdict};

/// The file a finished run leaves: its resolved configuration.
pub const DONE_FILE: &str = "study-run.json";

/// Where the report's numbers came from, printed at its top.
#[derive(Debug, Clone, Serialize)]
pub struct Provenance {
    /// The commit of the code that ran (with `+modified` when sources differed from it).
    pub commit: String,
    /// The command, as a reader re-runs it.
    pub command: String,
    /// The machine: CPU, instruction set, thread counts.
    pub machine: String,
}

/// How to run a study.
#[derive(Debug, Clone)]
pub struct StudyOptions {
    /// Folder of the runs (`OUT/runs/...`).
    pub out: PathBuf,
    /// Folder of `report.md`, `summary.json` and `plots/`.
    pub report_dir: PathBuf,
    /// Seeds `0..seeds` per arm.
    pub seeds: u64,
    /// Steps of every setting instead of its own (the smoke test's short runs).
    pub steps: Option<u64>,
    /// Runs trained at once.
    pub jobs: usize,
    /// What the report says about how it was made.
    pub provenance: Provenance,
    /// Testing hook: every run's step N has a non-finite loss and the run stops there (the check
    /// that runs stopped early are reported).
    pub inject_nan_at_step: Option<u64>,
}

/// What [`run_study`] reports while it runs.
#[derive(Debug)]
pub enum Progress<'a> {
    /// The runs are planned; `reused` of them finished before and are read back.
    Start {
        /// Runs in the study.
        runs: usize,
        /// Runs found finished with the same configuration.
        reused: usize,
        /// Runs found finished with a configuration the code has changed since: trained again.
        outdated: usize,
    },
    /// A run finished (or was read back).
    RunDone {
        /// Runs finished so far.
        done: usize,
        /// Runs in the study.
        total: usize,
        /// `setting/objective-itN-sS`.
        run: &'a str,
        /// Its last-10 accuracy.
        acc_last: f64,
    },
    /// A run stopped with an error; its metrics so far still count.
    RunFailed {
        /// `setting/objective-itN-sS`.
        run: &'a str,
        /// Why.
        error: String,
    },
}

/// What one run leaves for the report.
#[derive(Debug, Clone, Default)]
pub struct RunSummary {
    /// Mean accuracy over the first 10 steps.
    pub acc_first: f64,
    /// The three metrics of [`catalog::METRICS`], in that order.
    pub values: [f64; 3],
    /// Per-step values of each metric's key, in [`catalog::METRICS`] order.
    pub curves: [Vec<(f64, f64)>; 3],
    /// The error that stopped the run early, if any.
    pub stopped: Option<String>,
}

impl RunSummary {
    /// The run's value of `metric`.
    pub fn value(&self, metric: Metric) -> f64 {
        self.values[metric.index()]
    }

    /// Reads a run's `metrics.jsonl`.
    pub fn read(run: &Path) -> Result<RunSummary> {
        let log = MetricLog::read(&run.join(METRICS_FILE))?;
        let series = |key: &str| log.series.get(key).cloned().unwrap_or_default();
        let mean = |v: &[(f64, f64)]| {
            if v.is_empty() {
                f64::NAN
            } else {
                v.iter().map(|p| p.1).sum::<f64>() / v.len() as f64
            }
        };
        let last10 = |v: &[(f64, f64)]| mean(&v[v.len().saturating_sub(10)..]);
        let acc = series(Metric::Accuracy.key());
        let entropy = series(Metric::Entropy.key());
        let kl = series(Metric::MaxKl.key());
        let max_kl = kl.iter().map(|p| p.1).filter(|v| v.is_finite()).fold(f64::NAN, f64::max);
        Ok(RunSummary {
            acc_first: mean(&acc[..acc.len().min(10)]),
            values: [last10(&acc), last10(&entropy), max_kl],
            curves: [acc, entropy, kl],
            stopped: None,
        })
    }
}

/// One planned run.
#[derive(Debug, Clone)]
struct RunSpec {
    setting: &'static Setting,
    arm: Arm,
    seed: u64,
    dir: PathBuf,
}

impl RunSpec {
    fn name(&self) -> String {
        format!("{}/{}-s{}", self.setting.name, self.arm.slug(), self.seed)
    }
}

/// Every run of one arm, by seed.
#[derive(Debug, Clone)]
pub struct ArmRuns {
    /// The setting.
    pub setting: &'static Setting,
    /// The arm.
    pub arm: Arm,
    /// One summary per seed, seed order.
    pub runs: Vec<RunSummary>,
}

impl ArmRuns {
    /// The per-seed values of `metric`.
    pub fn values(&self, metric: Metric) -> Vec<f64> {
        self.runs.iter().map(|r| r.value(metric)).collect()
    }
}

/// A finding's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct FindingResult {
    /// The finding's id.
    pub id: &'static str,
    /// `a - b` over the seeds, for each of [`catalog::METRICS`] in order (for the KL, the
    /// difference of logarithms: see [`Metric::paired`]).
    pub differences: [Interval; 3],
    /// The verdict on the finding's own metric.
    pub verdict: Verdict,
    /// Why the verdict is `not testable`, if it is.
    pub untestable_because: Option<String>,
    /// What limits a verdict given (runs of other steps than the setting's own), if anything.
    pub caveat: Option<String>,
}

/// What [`run_study`] made.
#[derive(Debug)]
pub struct StudyOutcome {
    /// `report.md`, when the study finished.
    pub report: Option<PathBuf>,
    /// The findings, when the study finished.
    pub findings: Vec<FindingResult>,
    /// Whether `stop` ended it before every run finished (rerun the command to continue).
    pub interrupted: bool,
    /// Runs trained by this call (the rest were reused).
    pub trained: usize,
}

/// The runs of a study, in a stable order (settings, then objectives, iterations and seeds).
fn plan(study: &'static Study, opts: &StudyOptions) -> Vec<RunSpec> {
    let mut specs = Vec::new();
    for setting in study.settings {
        for objective in setting.objectives {
            for &iterations in setting.iterations {
                for seed in 0..opts.seeds {
                    let arm = Arm { objective, iterations };
                    let dir = opts.out.join("runs").join(setting.name).join(format!("{}-s{seed}", arm.slug()));
                    specs.push(RunSpec { setting, arm, seed, dir });
                }
            }
        }
    }
    specs
}

/// The configuration of a run: the paper's settings, the setting's task and schedule, the seed.
fn run_config(study: &Study, spec: &RunSpec, opts: &StudyOptions) -> Result<TrainConfig> {
    let (s, steps) = (spec.setting, opts.steps);
    let mut layer = json!({
        "objective": spec.arm.objective, "paper": study.paper.name(), "data": s.data,
        "max_new_tokens": s.max_new_tokens, "steps": steps.unwrap_or(s.steps), "iterations": spec.arm.iterations,
        "mini_batches": s.mini_batches, "lr": s.lr, "seed": spec.seed, "out": spec.dir,
        "log_every": 0, "save_rollouts": 0,
    });
    if let Some(step) = opts.inject_nan_at_step {
        layer["inject_nan_at_step"] = json!(step);
        layer["max_bad_steps"] = json!(1);
    }
    TrainConfig::resolve(None, &[layer])
}

/// The configuration text a finished run leaves in [`DONE_FILE`].
fn done_text(cfg: &TrainConfig) -> Result<String> {
    serde_json::to_string_pretty(cfg).map_err(|e| Error::invalid_config(format!("config to JSON: {e}")))
}

fn io_error(path: &Path, source: std::io::Error) -> Error {
    Error::Io { path: path.to_path_buf(), source }
}

/// Whether the run in `dir` finished with exactly `cfg`.
fn finished(dir: &Path, cfg: &TrainConfig) -> Result<bool> {
    Ok(std::fs::read_to_string(dir.join(DONE_FILE)).ok() == Some(done_text(cfg)?))
}

/// What training one run gave.
enum RunResult {
    /// Its summary, and whether it was trained now (not read back).
    Done(Box<RunSummary>, bool),
    Interrupted,
}

/// Trains one run (or reads it back when it finished before with the same configuration).
fn run_one(study: &Study, spec: &RunSpec, opts: &StudyOptions, stop: &AtomicBool) -> Result<RunResult> {
    let cfg = run_config(study, spec, opts)?;
    if finished(&spec.dir, &cfg)? {
        return Ok(RunResult::Done(Box::new(RunSummary::read(&spec.dir)?), false));
    }
    if spec.dir.exists() {
        std::fs::remove_dir_all(&spec.dir).map_err(|e| io_error(&spec.dir, e))?;
    }
    let stopped = match crate::train::train_until(&cfg, false, stop, &mut |_| {}) {
        Ok(outcome) if outcome.interrupted => return Ok(RunResult::Interrupted),
        Ok(_) => None,
        Err(e) => Some(e.to_string()),
    };
    let mut summary = RunSummary::read(&spec.dir)?;
    if stopped.is_none() {
        let path = spec.dir.join(DONE_FILE);
        std::fs::write(&path, done_text(&cfg)?).map_err(|e| io_error(&path, e))?;
    }
    summary.stopped = stopped;
    Ok(RunResult::Done(Box::new(summary), true))
}

/// Runs `study` as `opts` say and writes its report; see the module docs. Stops early, keeping
/// what finished, once `stop` is set.
pub fn run_study(
    study: &'static Study,
    opts: &StudyOptions,
    stop: &AtomicBool,
    on_progress: &mut dyn FnMut(Progress),
) -> Result<StudyOutcome> {
    let specs = plan(study, opts);
    folders::check(study, opts, &specs)?;
    let (mut reused, mut outdated) = (0, 0);
    for spec in &specs {
        if finished(&spec.dir, &run_config(study, spec, opts)?)? {
            reused += 1;
        } else if spec.dir.join(DONE_FILE).is_file() {
            outdated += 1;
        }
    }
    on_progress(Progress::Start { runs: specs.len(), reused, outdated });
    // The longest runs first, so that the last ones to finish are short.
    let mut order: Vec<usize> = (0..specs.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(specs[i].arm.iterations));
    let next = AtomicUsize::new(0);
    let mut results: Vec<Option<RunSummary>> = vec![None; specs.len()];
    let mut interrupted = false;
    let mut first_error = None;
    let mut trained = 0;
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|scope| {
        for _ in 0..opts.jobs.clamp(1, specs.len().max(1)) {
            let tx = tx.clone();
            let (specs, order, next) = (&specs, &order, &next);
            scope.spawn(move || loop {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let Some(&i) = order.get(next.fetch_add(1, Ordering::SeqCst)) else { break };
                if tx.send((i, run_one(study, &specs[i], opts, stop))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut done = 0;
        for (i, result) in rx {
            let name = specs[i].name();
            match result {
                Ok(RunResult::Done(summary, was_trained)) => {
                    done += 1;
                    trained += usize::from(was_trained);
                    if let Some(error) = &summary.stopped {
                        on_progress(Progress::RunFailed { run: &name, error: error.clone() });
                    }
                    on_progress(Progress::RunDone {
                        done,
                        total: specs.len(),
                        run: &name,
                        acc_last: summary.value(Metric::Accuracy),
                    });
                    results[i] = Some(*summary);
                }
                Ok(RunResult::Interrupted) => interrupted = true,
                Err(e) => {
                    stop.store(true, Ordering::SeqCst);
                    first_error.get_or_insert(Error::Run(format!("{name}: {e}")));
                }
            }
        }
    });
    if let Some(e) = first_error {
        return Err(e);
    }
    if interrupted || results.iter().any(Option::is_none) {
        return Ok(StudyOutcome { report: None, findings: Vec::new(), interrupted: true, trained });
    }
    // The plan holds each arm's seeds one after the other.
    let per_arm = (opts.seeds as usize).max(1);
    let arms: Vec<ArmRuns> = specs
        .chunks(per_arm)
        .zip(results.chunks(per_arm))
        .map(|(specs, runs)| ArmRuns {
            setting: specs[0].setting,
            arm: specs[0].arm,
            runs: runs.iter().map(|r| r.clone().unwrap_or_default()).collect(),
        })
        .collect();
    let findings = judge(study, &arms, opts.seeds, opts.steps);
    let report = report::write(study, opts, &arms, &findings)?;
    Ok(StudyOutcome { report: Some(report), findings, interrupted: false, trained })
}

/// The runs of `arm` in `setting`.
fn find<'a>(arms: &'a [ArmRuns], setting: &str, arm: Arm) -> Option<&'a ArmRuns> {
    arms.iter().find(|r| r.setting.name == setting && r.arm == arm)
}

/// Each finding's paired differences and verdict, from `seeds` seeds of runs trained for `steps`
/// steps (`None`: each setting's own).
pub fn judge(study: &Study, arms: &[ArmRuns], seeds: u64, steps: Option<u64>) -> Vec<FindingResult> {
    study
        .findings
        .iter()
        .map(|f| {
            let (a, b) = (find(arms, f.setting, f.a), find(arms, f.setting, f.b));
            let differences = catalog::METRICS.map(|m| match (a, b) {
                (Some(a), Some(b)) => m.paired(&a.values(m), &b.values(m)),
                _ => stats::paired_difference(&[], &[]),
            });
            let mut verdict = Verdict::of(&differences[f.metric.index()], f.direction);
            let mut untestable_because = None;
            if let Some(base) = f.requires_learning {
                let acc =
                    find(arms, f.setting, base).map_or(f64::NAN, |r| stats::mean_std(&r.values(Metric::Accuracy)).0);
                if acc.is_nan() || acc < catalog::LEARNED {
                    verdict = Verdict::NotTestable;
                    untestable_because = Some(format!(
                        "{} never learns here (mean last-10 accuracy {acc:.2} < {})",
                        base.label(),
                        catalog::LEARNED
                    ));
                }
            }
            if seeds < catalog::MIN_SEEDS && verdict != Verdict::NotTestable {
                untestable_because = Some(format!("{seeds} seeds: fewer than {} give no verdict", catalog::MIN_SEEDS));
                verdict = Verdict::NotTestable;
            }
            let own = study.setting(f.setting).map_or(0, |s| s.steps);
            let caveat = steps
                .filter(|&n| n != own && verdict != Verdict::NotTestable)
                .map(|n| format!("from {n}-step runs, not the setting's {own}: a quick check, not the finding"));
            FindingResult { id: f.id, differences, verdict, untestable_because, caveat }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(study: &'static Study, arm: Arm, acc: &[f64], entropy: &[f64]) -> ArmRuns {
        let runs = acc
            .iter()
            .zip(entropy)
            .map(|(&a, &e)| RunSummary { acc_first: 0.0, values: [a, e, 1.0], ..RunSummary::default() })
            .collect();
        ArmRuns { setting: &study.settings[0], arm, runs }
    }

    fn cpgd() -> &'static Study {
        Study::from_name("cpgd").expect("the cpgd study")
    }

    #[test]
    fn a_baseline_that_never_learned_cannot_degrade() {
        let study = cpgd();
        let ones = [1.0; 8];
        let mut arms: Vec<ArmRuns> = Vec::new();
        for objective in study.settings[0].objectives {
            for &iterations in study.settings[0].iterations {
                // RLOO stays at chance; everyone else learns at 1 iteration and loses it at 8.
                let acc = match (*objective, iterations) {
                    ("rloo-ppo", _) => [0.05, 0.06, 0.07, 0.05, 0.04, 0.06, 0.05, 0.07],
                    (_, 1) => [0.6, 0.7, 0.65, 0.55, 0.6, 0.7, 0.62, 0.68],
                    _ => [0.3, 0.4, 0.35, 0.2, 0.3, 0.45, 0.33, 0.38],
                };
                arms.push(runs(study, Arm { objective, iterations }, &acc, &ones));
            }
        }
        let results = judge(study, &arms, 8, None);
        assert!(results.iter().all(|r| r.caveat.is_none()), "the setting's own steps: no caveat");
        // The same runs, had they been 12 steps long: the verdicts stand, each with a caveat.
        let short = judge(study, &arms, 8, Some(12));
        for (r, s) in results.iter().zip(&short) {
            assert_eq!(r.verdict, s.verdict);
            let caveat = s.caveat.clone().unwrap_or_default();
            assert_eq!(r.verdict == Verdict::NotTestable, caveat.is_empty(), "{}: {caveat}", r.id);
        }
        assert!(short.iter().any(|s| s.caveat.as_deref().is_some_and(|c| c.contains("12-step runs"))), "{short:?}");
        let verdict = |id: &str| {
            let i = study.findings.iter().position(|f| f.id == id).expect(id);
            (results[i].verdict, results[i].untestable_because.clone())
        };
        assert_eq!(verdict("cpgd-grpo-degrades").0, Verdict::Reproduces);
        assert_eq!(verdict("cpgd-reinforce-pp-degrades").0, Verdict::Reproduces);
        let (rloo, why) = verdict("cpgd-rloo-degrades");
        assert_eq!(rloo, Verdict::NotTestable);
        assert!(why.unwrap_or_default().contains("rloo-ppo ×1 never learns"));
        // CPGD as bad as GRPO at 8 iterations: no difference, no verdict either way.
        assert_eq!(verdict("cpgd-vs-grpo").0, Verdict::Inconclusive);
        assert_eq!(verdict("cpgd-vs-rloo").0, Verdict::Reproduces);
        // The same arms from 7 seeds: no verdict at all.
        let seven: Vec<ArmRuns> = arms.iter().map(|a| ArmRuns { runs: a.runs[..7].to_vec(), ..a.clone() }).collect();
        assert!(judge(study, &seven, 7, None).iter().all(|r| r.verdict == Verdict::NotTestable));
    }

    #[test]
    fn the_plan_names_every_run_once_and_pairs_seeds() {
        let study = Study::from_name("cfpo").expect("cfpo");
        let opts = StudyOptions {
            out: PathBuf::from("o"),
            report_dir: PathBuf::from("o"),
            seeds: 3,
            steps: Some(2),
            jobs: 1,
            provenance: Provenance { commit: String::new(), command: String::new(), machine: String::new() },
            inject_nan_at_step: None,
        };
        let specs = plan(study, &opts);
        assert_eq!(specs.len(), 2 * 4 * 3);
        let names: std::collections::BTreeSet<String> = specs.iter().map(RunSpec::name).collect();
        assert_eq!(names.len(), specs.len());
        assert_eq!(specs[0].dir, PathBuf::from("o/runs/reuse/grpo-it1-s0"));
        // Each arm's seeds are consecutive (the report groups them so).
        for chunk in specs.chunks(3) {
            assert!(chunk.iter().all(|s| s.arm == chunk[0].arm));
            assert_eq!(chunk.iter().map(|s| s.seed).collect::<Vec<_>>(), [0, 1, 2]);
        }
        let cfg = run_config(study, &specs[5], &opts).expect("config");
        assert_eq!(cfg.run.steps, 2);
        assert_eq!(cfg.run.seed, 2);
        assert_eq!(cfg.optim.iterations, 4);
        assert_eq!(cfg.objective.paper, Some(crate::presets::Paper::Cfpo));
    }
}
