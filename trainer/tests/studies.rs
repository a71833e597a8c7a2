//! `rltrain study`: every study runs and writes its report (two seeds, a few steps: the full studies
//! take minutes each and stay out of CI); the same command gives the same numbers whatever the
//! thread counts and `--threads`; finished runs are reused; SIGINT keeps them and the same command
//! continues.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use rltrain::studies::STUDIES;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_rltrain");

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rltrain-studies-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// `rltrain study NAME --seeds S --steps N --out OUT` with the thread counts given.
fn study(name: &str, seeds: u64, steps: u64, out: &Path, jobs: u64, threads: u64) -> Command {
    let mut c = study_in_default_folder(name, seeds, steps, jobs, threads);
    c.arg("--out").arg(out);
    c
}

/// `rltrain study NAME --seeds S --steps N` with the thread counts given.
fn study_in_default_folder(name: &str, seeds: u64, steps: u64, jobs: u64, threads: u64) -> Command {
    let mut c = Command::new(BIN);
    c.args(["study", name, "--seeds", &seeds.to_string(), "--steps", &steps.to_string(), "-j", &jobs.to_string()])
        .env("RAYON_NUM_THREADS", threads.to_string())
        .env("CANDLE_NUM_THREADS", threads.to_string());
    c
}

fn run_ok(c: &mut Command) -> Output {
    let o = c.output().expect("run rltrain study");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn summary(out: &Path) -> Value {
    serde_json::from_str(&read(&out.join("summary.json"))).expect("summary.json is JSON")
}

/// The report below its provenance lines (commit, command, machine differ between the runs).
fn results(out: &Path) -> String {
    let report = read(&out.join("report.md"));
    let at = report.find("## Findings").expect("a findings section");
    report[at..].to_string()
}

/// A run's metrics without the wall-clock keys.
fn metrics_without_timing(run: &Path) -> Vec<Value> {
    read(&run.join("metrics.jsonl"))
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).expect("metrics line");
            if let Some(m) = v.as_object_mut() {
                m.retain(|k, _| !k.starts_with("time/") && k != "tokens_per_s");
            }
            v
        })
        .collect()
}

/// Runs of one seed of the study `name`.
fn runs_per_seed(name: &str) -> usize {
    let study = rltrain::studies::Study::from_name(name).expect("a study");
    study.settings.iter().map(|s| s.objectives.len() * s.iterations.len()).sum()
}

fn run_dirs(out: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for setting in std::fs::read_dir(out.join("runs")).expect("runs/") {
        for run in std::fs::read_dir(setting.expect("entry").path()).expect("setting dir") {
            dirs.push(run.expect("entry").path());
        }
    }
    dirs.sort();
    dirs
}

#[test]
fn every_study_runs_and_writes_its_report() {
    for s in STUDIES {
        let out = tmp(&format!("smoke-{}", s.name));
        let o = run_ok(&mut study(s.name, 2, 3, &out, 2, 1));
        let stdout = String::from_utf8_lossy(&o.stdout);
        let report = read(&out.join("report.md"));
        assert!(report.contains("- Commit: `") && report.contains("- Command: `rltrain study"), "{report}");
        for f in s.findings {
            assert!(report.contains(&format!("`{}`", f.id)), "{}: finding {} in the report", s.name, f.id);
            assert!(stdout.contains(f.id), "{}: finding {} printed", s.name, f.id);
        }
        // Two seeds give no verdict.
        assert!(!report.contains("**reproduces**") && !report.contains("**contradicts**"), "{report}");
        assert!(report.contains("fewer than 8 give no verdict"), "{report}");
        // Every linked plot exists and has its band.
        let links: Vec<&str> = report.split("](").skip(1).filter_map(|l| l.split(')').next()).collect();
        assert!(!links.is_empty(), "plots linked");
        for link in links {
            let svg = read(&out.join(link));
            assert!(svg.contains("<polygon"), "{link}: a band over the seeds");
        }
        let summary = summary(&out);
        let arms = summary["arms"].as_array().expect("arms");
        let expected: usize = s.settings.iter().map(|x| x.objectives.len() * x.iterations.len()).sum();
        assert_eq!(arms.len(), expected, "{}", s.name);
        for arm in arms {
            for metric in ["accuracy", "entropy", "maxkl"] {
                let values = arm["per_seed"][metric].as_array().expect("per-seed values");
                assert_eq!(values.len(), 2);
                assert!(values.iter().all(|v| v.as_f64().is_some_and(f64::is_finite)), "{arm}");
            }
        }
        assert_eq!(summary["findings"].as_array().map(Vec::len), Some(s.findings.len()));
        let _ = std::fs::remove_dir_all(&out);
    }
}

/// The determinism the reports rely on: one thread or three, one run at a time or two, the same
/// metrics at every step, the same tables.
#[test]
fn the_same_command_gives_the_same_numbers_whatever_the_threads() {
    let (a, b) = (tmp("threads-1"), tmp("threads-3"));
    run_ok(&mut study("dgpo", 2, 6, &a, 1, 1));
    run_ok(&mut study("dgpo", 2, 6, &b, 2, 3));
    assert_eq!(results(&a), results(&b));
    assert_eq!(summary(&a)["arms"], summary(&b)["arms"]);
    assert_eq!(summary(&a)["findings"], summary(&b)["findings"]);
    let (runs_a, runs_b) = (run_dirs(&a), run_dirs(&b));
    assert_eq!(runs_a.len(), 2 * runs_per_seed("dgpo"));
    for (ra, rb) in runs_a.iter().zip(&runs_b) {
        assert_eq!(ra.file_name(), rb.file_name());
        assert_eq!(metrics_without_timing(ra), metrics_without_timing(rb), "{}", ra.display());
    }
    // The runs did move (a test of identical numbers must not pass on runs that never trained).
    let first = metrics_without_timing(&runs_a[0]);
    assert_ne!(first[0]["entropy"], first[5]["entropy"]);
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
}

#[test]
fn finished_runs_are_reused_and_runs_the_code_changed_trained_again() {
    let out = tmp("reuse");
    run_ok(&mut study("dgpo", 1, 2, &out, 2, 1));
    let before = results(&out);
    let n = runs_per_seed("dgpo");
    let o = run_ok(&mut study("dgpo", 1, 2, &out, 2, 1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains(&format!("{n} runs ({n} finished before, reused)")), "{stderr}");
    assert_eq!(results(&out), before);
    // A run whose recorded configuration differs otherwise than in its steps (as after a code
    // change): trained again, and said so.
    let done = run_dirs(&out)[0].join(rltrain::studies::DONE_FILE);
    let text = read(&done);
    std::fs::write(&done, text.replacen("\"log_every\": 0", "\"log_every\": 7", 1)).expect("edit");
    assert_ne!(read(&done), text, "the edit took");
    let o = run_ok(&mut study("dgpo", 1, 2, &out, 2, 1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    let said =
        format!("{} finished before, reused, 1 finished before with a configuration the code has changed", n - 1);
    assert!(stderr.contains(&said), "{stderr}");
    assert_eq!(results(&out), before);
    let _ = std::fs::remove_dir_all(&out);
}

/// Runs that stop early (here every run, by the hidden NaN hook with one bad step allowed): the
/// study still writes its report, then exits 1 with a closing line that counts them and says where
/// their errors are; the same command without the hook trains them again and exits 0.
#[test]
fn runs_that_stop_early_make_the_study_exit_1() {
    let out = tmp("stopped");
    let n = runs_per_seed("dgpo");
    let o = study("dgpo", 1, 2, &out, 2, 1).args(["--inject-nan-at-step", "1"]).output().expect("run");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    let summary_path = out.join("summary.json");
    assert!(
        last.contains(&format!("{n} runs of {n} stopped early"))
            && last.contains(&format!("`stopped` in {}", summary_path.display())),
        "{stderr}"
    );
    assert!(stderr.contains("stopped early: stopping after 1 consecutive non-finite steps"), "{stderr}");
    let stopped = summary(&out)["arms"][0]["stopped"][0].as_str().unwrap_or_default().to_string();
    assert!(stopped.contains("non-finite"), "{stopped}");
    assert!(out.join("report.md").is_file());
    let o = run_ok(&mut study("dgpo", 1, 2, &out, 2, 1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains(&format!("{n} runs (0 finished before, reused)")) && !stderr.contains("stopped early"));
    let _ = std::fs::remove_dir_all(&out);
}

/// The README's quick check in a folder that holds a study of other settings: refused before
/// anything trains, naming both settings; the finished runs and the report are kept. Without
/// `--out`, each choice of settings gets its own folder.
#[test]
fn a_study_of_other_settings_is_refused_and_quick_checks_get_their_own_folder() {
    let out = tmp("settings");
    run_ok(&mut study("dgpo", 1, 2, &out, 2, 1));
    let report = read(&out.join("report.md"));
    let metrics = read(&run_dirs(&out)[0].join("metrics.jsonl"));
    let refused = |seeds: u64, steps: u64, expected: &[&str]| {
        let o = study("dgpo", seeds, steps, &out, 2, 1).output().expect("run");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        assert!(expected.iter().all(|e| stderr.contains(e)) && stderr.contains("another --"), "{stderr}");
        assert_eq!(read(&run_dirs(&out)[0].join("metrics.jsonl")), metrics, "the runs are kept");
    };
    // The report names its settings.
    refused(1, 3, &["study dgpo, 1 seeds, 2 steps", "study dgpo, 1 seeds, 3 steps"]);
    refused(2, 2, &["study dgpo, 1 seeds, 2 steps", "study dgpo, 2 seeds, 2 steps"]);
    assert_eq!(read(&out.join("report.md")), report, "the report is kept");
    // Without a report (a study stopped early), each finished run names its steps.
    std::fs::remove_file(out.join("summary.json")).expect("rm summary.json");
    refused(1, 3, &["trained for 2 steps", "trains 3 steps"]);
    let _ = std::fs::remove_dir_all(&out);
}

/// Run in another git repository without `--out`: the quick check goes to a folder named by its
/// settings, never the full study's, and the report names this project's commit, not the
/// current directory's.
#[test]
fn a_quick_check_elsewhere_gets_its_own_folder_and_this_project_s_commit() {
    let cwd = tmp("elsewhere");
    std::fs::create_dir_all(&cwd).expect("mkdir");
    let git = |dir: &Path, args: &[&str]| {
        Command::new("git").arg("-C").arg(dir).args(args).output().ok().filter(|o| o.status.success())
    };
    let other_repo = git(&cwd, &["init", "-q"]).is_some()
        && git(&cwd, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"])
            .is_some();
    run_ok(study_in_default_folder("dgpo", 1, 2, 2, 1).current_dir(&cwd));
    let folder = cwd.join("runs/study-dgpo-seeds1-steps2");
    let report = read(&folder.join("report.md"));
    assert!(!cwd.join("runs/study-dgpo").exists());
    let commit = report.lines().find_map(|l| l.strip_prefix("- Commit: `")).unwrap_or_default();
    let ours = git(Path::new(env!("CARGO_MANIFEST_DIR")), &["rev-parse", "--short=12", "HEAD"]);
    match ours {
        Some(o) => assert!(commit.starts_with(String::from_utf8_lossy(&o.stdout).trim()), "{commit}"),
        None => assert!(commit.starts_with("unknown"), "{commit}"),
    }
    if other_repo {
        let theirs = git(&cwd, &["rev-parse", "--short=12", "HEAD"]).expect("the other repository's commit");
        assert!(!commit.starts_with(String::from_utf8_lossy(&theirs.stdout).trim()), "{commit}");
    }
    let _ = std::fs::remove_dir_all(&cwd);
}

/// A report or runs folder that cannot be written stops the study before it trains.
#[test]
fn an_unwritable_report_or_out_fails_before_training() {
    let base = tmp("unwritable");
    std::fs::create_dir_all(&base).expect("mkdir");
    let file = base.join("a-file");
    std::fs::write(&file, "").expect("a file where a folder should be");
    let (out, report) = (base.join("out"), file.join("report"));
    let o = study("dgpo", 1, 2, &out, 2, 1).arg("--report").arg(&report).output().expect("run");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--report") && stderr.contains(&report.display().to_string()), "{stderr}");
    assert!(!out.join("runs").exists(), "nothing trained");
    let o = study("dgpo", 1, 2, &file.join("out"), 2, 1).output().expect("run");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--out"), "{stderr}");
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn a_report_folder_apart_from_the_runs() {
    let (out, report) = (tmp("apart-runs"), tmp("apart-report"));
    run_ok(study("dgpo", 1, 2, &out, 2, 1).arg("--report").arg(&report));
    assert!(report.join("report.md").is_file() && report.join("summary.json").is_file());
    assert!(report.join("plots").is_dir() && !report.join("runs").exists());
    assert!(out.join("runs").is_dir() && !out.join("report.md").exists());
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&report);
}

#[test]
fn bad_study_flags_are_refused_with_the_valid_values() {
    let o = Command::new(BIN).args(["study", "ppo"]).output().expect("run");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cfpo") && stderr.contains("dgpo"), "{stderr}");
    let o = Command::new(BIN).args(["study", "dgpo", "--seeds", "0"]).output().expect("run");
    assert_eq!(o.status.code(), Some(2));
    let o = run_ok(Command::new(BIN).arg("study"));
    let listing = String::from_utf8_lossy(&o.stdout);
    for s in STUDIES {
        assert!(listing.contains(s.name) && listing.contains("arXiv:"), "{listing}");
    }
}

/// Ctrl-C finishes the runs under way, keeps every finished run and exits 130; the same command
/// then trains only what is missing.
#[cfg(unix)]
#[test]
fn sigint_keeps_finished_runs_and_the_same_command_continues() {
    let out = tmp("sigint");
    let mut child =
        study("cfpo", 2, 30, &out, 1, 1).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("spawn");
    let start = Instant::now();
    let done = |out: &Path| -> usize {
        run_dirs_if_any(out).iter().filter(|d| d.join(rltrain::studies::DONE_FILE).is_file()).count()
    };
    while done(&out) < 1 {
        assert!(child.try_wait().expect("wait").is_none(), "the study ended before its first run");
        assert!(start.elapsed() < Duration::from_secs(300), "no run finished within 300 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: kill(2) on the pid of a child this test started and has not yet reaped.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) }, 0);
    let o = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("run the same command to continue"), "{stderr}");
    assert!(!out.join("report.md").exists(), "no report from half the runs");
    let kept = done(&out);
    let total = 2 * runs_per_seed("cfpo");
    assert!(kept >= 1 && kept < total, "{kept}");
    let o = run_ok(&mut study("cfpo", 2, 30, &out, 2, 1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains(&format!("{total} runs ({kept} finished before, reused)")), "{stderr}");
    assert!(out.join("report.md").is_file());
    let _ = std::fs::remove_dir_all(&out);
}

fn run_dirs_if_any(out: &Path) -> Vec<PathBuf> {
    if out.join("runs").is_dir() {
        run_dirs(out)
    } else {
        Vec::new()
    }
}
