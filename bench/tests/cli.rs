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
    // Unknown devices and dtypes are refused at parse time, before the model loads.
    for (flag, value, message) in [
        ("--device", "tpu", "unknown device `tpu`"),
        ("--device", "cuda:x", "unknown device `cuda:x`"),
        ("--dtype", "f64", "[possible values: auto, f32, bf16, f16]"),
    ] {
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
    let Some(shared) = rl_tests::shared_path("data/benchmarks") else { return };
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
    // Once complete, the same command finds its run: nothing is generated, the report is printed.
    let third = run();
    assert!(third.status.success(), "{}", String::from_utf8_lossy(&third.stderr));
    assert!(String::from_utf8_lossy(&third.stdout).contains("| mini | 4 | 2 |"));
    assert_eq!(server.request_count(), 8 + 3);
    assert_eq!(std::fs::read_dir(dir.join("runs")).map(|d| d.count()).ok(), Some(1));
    assert!(!runs[0].join("run.lock").exists(), "the lock goes with the run");
}

/// A sweep without `--out`: commands with other settings, started together, each get their own
/// run directory (named by a hash of the settings, not by the second they started in).
#[test]
fn parallel_runs_with_other_settings_never_share_a_directory() {
    let dir = temp_dir("sweep");
    let rows: String =
        (0..3).map(|i| format!("{{\"id\":\"q{i}\",\"problem\":\"P{i}\",\"answer\":\"{i}\"}}\n")).collect();
    std::fs::write(dir.join("mini.jsonl"), rows).expect("write");
    let server = FakeServer::start(Behaviour::default());
    let children: Vec<_> = (0..4)
        .map(|seed| {
            rlbench()
                .current_dir(&dir)
                .args(["run", "--suite", "mini.jsonl", "-k", "2", "--prompt", "plain", "--seed", &seed.to_string()])
                .args(["--endpoint", &server.url(), "--served-model", "fake"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn")
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().expect("wait");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let runs: Vec<PathBuf> =
        std::fs::read_dir(dir.join("runs")).expect("runs").filter_map(|e| e.ok()).map(|e| e.path()).collect();
    assert_eq!(runs.len(), 4, "{runs:?}");
    for r in runs {
        assert_eq!(std::fs::read_to_string(r.join("mini.jsonl")).map(|t| t.lines().count()).ok(), Some(6));
    }
}

/// A run whose every request is refused leaves nothing behind: no run.json, no run.lock, no
/// directory; `report` on a directory that is not a run says so.
#[test]
fn a_refused_run_leaves_no_run_behind() {
    let dir = temp_dir("refused");
    let suite = write_suite(&dir, "mini", 2);
    let server = FakeServer::start(Behaviour { faults: vec![support::Fault::Status(400); 4], ..Behaviour::default() });
    let out = dir.join("out");
    let o = run_into(&server, &suite, &out, 2, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        !out.exists(),
        "{:?}",
        std::fs::read_dir(&out).map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name()).collect::<Vec<_>>())
    );
    // `report` on something that is not a run.
    std::fs::write(dir.join("data/notes.jsonl"), "{\"x\": 1}\n").expect("write");
    let o = rlbench().arg("report").arg(dir.join("data")).output().expect("report");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("is not a run directory") && err.contains("rlbench score"), "{err}");
}

/// A suite file of `n` problems `c0..` whose answers are their index, in `dir/data/<name>.jsonl`.
fn write_suite(dir: &Path, name: &str, n: usize) -> PathBuf {
    let data = dir.join("data");
    std::fs::create_dir_all(&data).expect("mkdir");
    let rows: String = (0..n)
        .map(|i| format!("{{\"id\":\"c{i}\",\"problem\":\"Compute: the answer is {i}.\",\"answer\":\"{i}\"}}\n"))
        .collect();
    let path = data.join(format!("{name}.jsonl"));
    std::fs::write(&path, rows).expect("write");
    path
}

/// `rlbench run` of `suite` against `server` into `out` with K = `k`; extra flags appended.
fn run_into(server: &FakeServer, suite: &Path, out: &Path, k: usize, extra: &[&str]) -> std::process::Output {
    rlbench()
        .args(["run", "--prompt", "plain", "--api", "completions", "--concurrency", "1", "--retries", "0"])
        .args(["--endpoint", &server.url(), "--served-model", "fake", "--retry-delay", "0.01", "-k", &k.to_string()])
        .arg("--suite")
        .arg(suite)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .expect("run rlbench")
}

/// The observed bug: an incomplete run kept K = 4 in its header but dropped pass@2 and pass@4,
/// renamed avg@4 to avg@1 and `report` exited 0. Now the metrics keep K and their names, the
/// report says how many samples are missing, and `report` fails unless `--allow-partial`.
#[test]
fn an_incomplete_run_is_reported_as_such() {
    let dir = temp_dir("partial");
    let suite = write_suite(&dir, "mini", 3);
    // 10 answers, then 2 requests rejected (HTTP 400 is final): 2 of 12 samples missing (the last
    // problem has 2 of 4).
    let mut faults = vec![support::Fault::Slow(std::time::Duration::ZERO); 10];
    faults.extend([support::Fault::Status(400); 2]);
    let server = FakeServer::start(Behaviour { faults, ..Behaviour::default() });
    let run_dir = dir.join("out");
    let out = run_into(&server, &suite, &run_dir, 4, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));

    let report = rlbench().arg("report").arg(&run_dir).output().expect("report");
    let stdout = String::from_utf8_lossy(&report.stdout);
    let stderr = String::from_utf8_lossy(&report.stderr);
    assert_eq!(report.status.code(), Some(1), "{stderr}");
    assert!(
        stdout
            .contains("Incomplete: mini is missing 2 of 12 samples (1 of 3 problems have fewer than K = 4: c2 has 2)"),
        "{stdout}"
    );
    assert!(stdout.contains("| mini | 3 | 4 (2-4 present) |"), "{stdout}");
    assert!(stderr.contains("2 samples are missing") && stderr.contains("--allow-partial"), "{stderr}");
    let metrics = json_of(&std::fs::read(run_dir.join("metrics.json")).expect("metrics"));
    let m = &metrics["suites"]["mini"];
    assert_eq!(m["k"], 4, "{m}");
    assert_eq!(m["missing_samples"], 2);
    assert_eq!(m["samples_present"], serde_json::json!({"c2": 2}));
    assert!(m["avg@4"].is_number() && m["maj@4"].is_number() && m["pass@2"].is_number(), "{m}");
    assert!(m["pass@4"].is_null(), "pass@4 is undefined with 2 samples, and says so: {m}");
    assert!(m.get("avg@2").is_none() && m.get("maj@2").is_none(), "{m}");

    let allowed = rlbench().arg("report").arg(&run_dir).arg("--allow-partial").output().expect("report");
    assert!(allowed.status.success(), "{}", String::from_utf8_lossy(&allowed.stderr));
    assert!(String::from_utf8_lossy(&allowed.stdout).contains("Incomplete: mini is missing 2 of 12"));

    // Completed by a re-run, the report is whole and exits 0.
    let healthy = FakeServer::start(Behaviour::default());
    let out = run_into(&healthy, &suite, &run_dir, 4, &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = rlbench().arg("report").arg(&run_dir).output().expect("report");
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));
    assert!(!String::from_utf8_lossy(&report.stdout).contains("Incomplete"));
}

/// `--temperature 0.6` reaches the server and run.json as 0.6 (not 0.6000000238418579), and the
/// manifest reads back: resuming with the same value is no conflict.
#[test]
fn sampling_values_reach_the_server_and_the_manifest_as_typed() {
    let dir = temp_dir("f64");
    let suite = write_suite(&dir, "mini", 1);
    let server = FakeServer::start(Behaviour::default());
    let run_dir = dir.join("out");
    let flags = ["--temperature", "0.6", "--top-p", "0.9"];
    let out = run_into(&server, &suite, &run_dir, 1, &flags);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(run_dir.join("run.json")).expect("manifest");
    assert!(text.contains("\"temperature\": 0.6,") && text.contains("\"top_p\": 0.9,"), "{text}");
    let sent = server.log.lock().map(|l| l.requests[0].1.clone()).expect("log");
    assert_eq!(sent["temperature"].to_string(), "0.6");
    assert_eq!(sent["top_p"].to_string(), "0.9");
    let again = run_into(&server, &suite, &run_dir, 1, &flags);
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
}

/// `rlbench compare`: a run against itself differs by 0 with p = 1; against a run on a server
/// that gets everything right, B is better with a small p; `--seed` fixes the numbers; problems
/// of one run only are listed and left out; `--svg` overlays both runs.
#[test]
fn compare_two_runs() {
    let dir = temp_dir("compare");
    let suite = write_suite(&dir, "mini", 12);
    let (a, b) = (dir.join("a"), dir.join("b"));
    let server = FakeServer::start(Behaviour::default());
    assert!(run_into(&server, &suite, &a, 4, &[]).status.success());
    // B: a 13th problem A lacks, and answers that are always right (completions echo the gold).
    let suite_b = write_suite(&dir.join("b-data"), "mini", 13);
    for line in std::fs::read_to_string(&suite_b).expect("suite").lines() {
        let v: Value = serde_json::from_str(line).expect("row");
        let id = v["id"].as_str().unwrap_or_default().to_string();
        std::fs::create_dir_all(&b).expect("mkdir");
        let mut records = String::new();
        for sample in 0..4 {
            records.push_str(&format!(
                "{{\"id\":\"{id}\",\"sample\":{sample},\"answer\":\"{}\",\"response\":\"\\\\boxed{{{}}}\"}}\n",
                v["answer"].as_str().unwrap_or_default(),
                v["answer"].as_str().unwrap_or_default()
            ));
        }
        let path = b.join("mini.jsonl");
        let mut all = std::fs::read_to_string(&path).unwrap_or_default();
        all.push_str(&records);
        std::fs::write(&path, all).expect("write");
    }
    let compare = |x: &Path, y: &Path, extra: &[&str]| {
        let out = rlbench()
            .arg("compare")
            .arg(x)
            .arg(y)
            .args(["--json", "--resamples", "2000"])
            .args(extra)
            .output()
            .expect("compare");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        json_of(&out.stdout)
    };
    let same = compare(&a, &a, &[]);
    let rows = same["rows"].as_array().cloned().unwrap_or_default();
    assert!(!rows.is_empty());
    for r in &rows {
        assert!(approx(&r["diff"], 0.0) && approx(&r["ci_low"], 0.0) && approx(&r["ci_high"], 0.0), "{r}");
        assert!(approx(&r["p_value"], 1.0), "{r}");
    }
    let better = compare(&a, &b, &["--seed", "5"]);
    let avg = better["rows"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["suite"] == "mini" && r["metric"] == "avg@K").cloned())
        .expect("avg row");
    assert_eq!(avg["problems"], 12);
    assert!(approx(&avg["b"], 1.0), "{avg}");
    let diff = avg["diff"].as_f64().unwrap_or(f64::NAN);
    assert!(diff > 0.0 && approx(&avg["a"], 1.0 - diff), "{avg}");
    let (lo, hi) = (avg["ci_low"].as_f64().unwrap_or(f64::NAN), avg["ci_high"].as_f64().unwrap_or(f64::NAN));
    assert!(lo > 0.0 && lo <= diff && diff <= hi, "{avg}");
    assert!(avg["p_value"].as_f64().is_some_and(|p| p < 0.01), "{avg}");
    assert_eq!(better["unpaired"][0]["only_b"][0], "c12");
    assert_eq!(compare(&a, &b, &["--seed", "5"]), better, "the seed fixes the numbers");

    let svg = dir.join("overlay.svg");
    let out = rlbench().arg("compare").arg(&a).arg(&b).arg("--svg").arg(&svg).output().expect("compare");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("| suite | problems | metric | A | B | B − A | 95% CI | p |"), "{table}");
    assert!(table.contains("1 only in B (`c12`)"), "{table}");
    let svg = std::fs::read_to_string(&svg).expect("svg");
    assert!(svg.contains(&format!("A {} mini", a.display())) && svg.contains(&format!("B {} mini", b.display())));
}
