//! The `rlbench` binary end to end: `score --json`, `run` against a local server, `report` with a
//! baseline, suite discovery through `--data-dir`, and clear errors for
//! missing suites and models.

mod support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::{Behaviour, FakeServer};

fn rlbench() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rlbench"));
    c.env_remove("RLVR_DATA_DIR").env_remove("OPENAI_API_KEY");
    c
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rlbench-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn json_of(stdout: &[u8]) -> Value {
    serde_json::from_slice(stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(stdout)))
}

fn approx(v: &Value, x: f64) -> bool {
    v.as_f64().is_some_and(|y| (y - x).abs() < 1e-12)
}

#[test]
fn score_json_on_lists_of_k() {
    let dir = temp_dir("score");
    let file = dir.join("gens.jsonl");
    // p1: 3 of 4 right; p2: 1 of 4 right, majority wrong ("8" twice).
    std::fs::write(
        &file,
        concat!(
            r#"{"id": "p1", "answer": "5", "responses": ["5", "5", "6", "5"]}"#,
            "\n",
            r#"{"id": "p2", "answer": "7", "responses": ["8", "7", "8", "9"]}"#,
            "\n"
        ),
    )
    .expect("write");
    let out = rlbench().args(["score", "--json"]).arg(&file).output().expect("run rlbench");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = json_of(&out.stdout);
    assert_eq!(v["n_problems"], 2);
    assert!(approx(&v["pass@1"], (0.75 + 0.25) / 2.0));
    // p1: 1 - C(1,2)/C(4,2) = 1; p2: 1 - C(3,2)/C(4,2) = 1/2.
    assert!(approx(&v["pass@2"], 0.75));
    assert!(approx(&v["pass@4"], 1.0));
    assert!(approx(&v["avg@4"], 0.5));
    assert!(approx(&v["maj@4"], 0.5));
    assert!(v["avg@4_stderr"].is_number());

    let out = rlbench().args(["score", "--json", "/nonexistent/file.jsonl"]).output().expect("run rlbench");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn run_then_report_with_a_baseline() {
    let dir = temp_dir("run");
    let data = dir.join("data");
    std::fs::create_dir_all(&data).expect("mkdir");
    // A 3-problem "aime24": the manifest expects 30, so loading warns and names the file.
    let rows: String = (0..3)
        .map(|i| format!("{{\"id\":\"a{i}\",\"problem\":\"Compute: the answer is {i}.\",\"answer\":\"{i}\"}}\n"))
        .collect();
    std::fs::write(data.join("aime24.jsonl"), rows).expect("write");
    let server = FakeServer::start(Behaviour::default());
    let run_dir = dir.join("out");
    let run = |extra: &[&str]| {
        rlbench()
            .args(["run", "--suite", "aime24", "--prompt", "plain", "--api", "completions", "-k", "4"])
            .args(["--endpoint", &server.url(), "--served-model", "fake", "--retry-delay", "0.01"])
            .arg("--data-dir")
            .arg(&data)
            .arg("--out")
            .arg(&run_dir)
            .args(extra)
            .output()
            .expect("run rlbench")
    };
    let out = run(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("expected 30 problems in") && stderr.contains("aime24.jsonl"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("| aime24 | 3 | 4 |"));
    for f in
        ["run.json", "aime24.jsonl", "report.md", "metrics.csv", "metrics.json", "passk.svg", "scores/aime24.jsonl"]
    {
        assert!(run_dir.join(f).is_file(), "{f} missing");
    }
    let manifest = json_of(&std::fs::read(run_dir.join("run.json")).expect("manifest"));
    assert_eq!(manifest["model"], "fake");
    assert_eq!(manifest["backend"], "openai-completions");
    assert_eq!(manifest["sampling"]["k"], 4);
    assert_eq!(manifest["verifier_version"], rlbench::rlverify::VERSION);
    assert!(manifest["prompt"]["hash"].as_str().is_some_and(|h| h.len() == 16));

    // The same command again generates nothing new.
    let requests = server.request_count();
    assert!(run(&[]).status.success());
    assert_eq!(server.request_count(), requests);
    // Other settings are refused.
    let out = run(&["--temperature", "1.0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("temperature: run has 0.6"));

    let baseline = dir.join("baseline.json");
    std::fs::copy(run_dir.join("metrics.json"), &baseline).expect("copy");
    let out = rlbench().arg("report").arg(&run_dir).arg("--baseline").arg(&baseline).output().expect("report");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let metrics = json_of(&std::fs::read(run_dir.join("metrics.json")).expect("metrics"));
    assert!(approx(&metrics["overall"]["value"], 1.0), "{metrics}");
    assert!(metrics["suites"]["aime24"]["pass@4"].is_number());
    let verdicts = std::fs::read_to_string(run_dir.join("scores/aime24.jsonl")).expect("verdicts");
    assert_eq!(verdicts.lines().count(), 12);
    let correct = verdicts.lines().filter(|l| l.contains("\"correct\":true")).count();
    assert!(approx(&metrics["suites"]["aime24"]["avg@4"], correct as f64 / 12.0), "{metrics}");
    let csv = std::fs::read_to_string(run_dir.join("metrics.csv")).expect("csv");
    assert!(csv.starts_with("suite,n_problems,n_samples,k,pass@1,pass@2,pass@4,avg,"), "{csv}");
}

#[test]
fn missing_suites_and_models_fail_clearly() {
    let out = rlbench().args(["run", "--suite", "nope-suite"]).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("known suites: aime24"));

    let data = temp_dir("engine");
    std::fs::write(data.join("x.jsonl"), "{\"id\":\"1\",\"problem\":\"p\",\"answer\":\"1\"}\n").expect("write");
    let file = data.join("x.jsonl");
    let out = rlbench().args(["run", "--model", "smol.gguf", "--suite"]).arg(&file).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    // No such model file: a clear error before any work, not a panic.
    assert!(String::from_utf8_lossy(&out.stderr).contains("--model: model `smol.gguf` is neither"));
    // Unknown devices and dtypes are refused before the model loads.
    for (flag, value, message) in
        [("--device", "tpu", "unknown device `tpu`"), ("--dtype", "f64", "unknown dtype `f64`")]
    {
        let out = rlbench()
            .args(["run", "--model", "random:smollm2-135m", flag, value, "--suite"])
            .arg(&file)
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2), "{flag}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(flag) && stderr.contains(message), "{stderr}");
    }
}

#[test]
fn shared_suites_load_with_their_expected_counts() {
    // Reads ../shared/data/benchmarks when it is there (the default search finds it).
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/benchmarks");
    if !shared.is_dir() {
        // CI runs beside `shared/`: there a missing folder is a failure, not a silent pass.
        assert!(std::env::var_os("CI").is_none(), "{} is missing: CI runs beside `shared/`", shared.display());
        eprintln!("skipped: {} not found (the read-only `shared/` folder beside the workspace)", shared.display());
        return;
    }
    let manifest = rlbench::suite::Manifest::builtin().expect("manifest");
    for spec in &manifest.suites {
        let q = rlbench::suite::SuiteQuery { data_dir: Some(shared.clone()), ..Default::default() };
        let s = rlbench::suite::load_suite(&manifest, &spec.name, &q).unwrap_or_else(|e| panic!("{}: {e}", spec.name));
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        assert_eq!(Some(s.problems.len()), spec.count);
        assert!(s.problems.iter().all(|p| !p.answer.is_empty() && !p.problem.is_empty()));
    }
}

#[test]
fn rerunning_the_same_command_without_out_continues_the_unfinished_run() {
    let dir = temp_dir("default-out");
    let rows: String = (0..4)
        .map(|i| format!("{{\"id\":\"q{i}\",\"problem\":\"Compute: the answer is {i}.\",\"answer\":\"{i}\"}}\n"))
        .collect();
    std::fs::write(dir.join("mini.jsonl"), rows).expect("write");
    // The first three requests are rejected (HTTP 400 is final), so the first invocation fails.
    let faults = vec![support::Fault::Status(400); 3];
    let server = FakeServer::start(Behaviour { faults, ..Behaviour::default() });
    let run = || {
        rlbench()
            .current_dir(&dir)
            .args(["run", "--suite", "mini.jsonl", "-k", "2", "--prompt", "plain", "--concurrency", "1"])
            .args(["--endpoint", &server.url(), "--served-model", "org/fake-7b", "--retry-delay", "0.01"])
            .output()
            .expect("run rlbench")
    };
    let first = run();
    assert_eq!(first.status.code(), Some(1), "{}", String::from_utf8_lossy(&first.stderr));
    assert!(String::from_utf8_lossy(&first.stderr).contains("3 requests failed; re-run the same command to continue"));
    let second = run();
    assert!(second.status.success(), "{}", String::from_utf8_lossy(&second.stderr));
    let runs: Vec<PathBuf> =
        std::fs::read_dir(dir.join("runs")).expect("runs/").filter_map(|e| e.ok()).map(|e| e.path()).collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    let name = runs[0].file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    assert!(name.starts_with("fake-7b_mini_"), "{name}");
    let lines = std::fs::read_to_string(runs[0].join("mini.jsonl")).expect("completions");
    assert_eq!(lines.lines().count(), 8);
    assert_eq!(server.request_count(), 8 + 3);
    // Once complete, the same command starts a fresh run directory.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert!(run().status.success());
    assert_eq!(std::fs::read_dir(dir.join("runs")).map(|d| d.count()).ok(), Some(2));
}
