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
    assert_eq!(v["scoring"]["extract"], "strict", "how the answers were read: {v}");

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

/// `mini.jsonl` in `data` with problems `c0..c{n-1}` ("the answer is i"), `edit` changing a row's
/// (problem, answer) by index.
fn write_rows(data: &Path, n: usize, edit: &dyn Fn(usize) -> Option<(String, String)>) -> PathBuf {
    std::fs::create_dir_all(data).expect("mkdir");
    let rows: String = (0..n)
        .map(|i| {
            let (problem, answer) = edit(i).unwrap_or((format!("Compute: the answer is {i}."), i.to_string()));
            serde_json::json!({"id": format!("c{i}"), "problem": problem, "answer": answer}).to_string() + "\n"
        })
        .collect();
    let path = data.join("mini.jsonl");
    std::fs::write(&path, rows).expect("write");
    path
}

/// Issue 31, major 1: after the report says "fix those dataset rows" and the row is fixed, the
/// same command scores against the fixed gold, and says which golds changed since generation.
#[test]
fn a_fixed_dataset_row_is_scored_against() {
    let dir = temp_dir("fixed-row");
    let data = dir.join("data");
    let broken = |i: usize| (i == 1).then(|| ("Compute: the answer is 1.".to_string(), r"\frac{1}{2".to_string()));
    let suite = write_rows(&data, 3, &broken);
    let server = FakeServer::start(Behaviour::default());
    let run_dir = dir.join("out");
    let first = run_into(&server, &suite, &run_dir, 2, &[]);
    assert!(String::from_utf8_lossy(&first.stdout).contains("fix those dataset rows"));
    let requests = server.request_count();

    write_rows(&data, 3, &|_| None);
    for again in
        [run_into(&server, &suite, &run_dir, 2, &[]), rlbench().arg("report").arg(&run_dir).output().expect("report")]
    {
        let (stdout, stderr) = (String::from_utf8_lossy(&again.stdout), String::from_utf8_lossy(&again.stderr));
        assert!(again.status.success(), "{stderr}");
        assert!(!stdout.contains("fix those dataset rows"), "{stdout}");
        assert!(stderr.contains("the gold of 1 problem(s)") && stderr.contains("(`c1`)"), "{stderr}");
        let metrics = json_of(&std::fs::read(run_dir.join("metrics.json")).expect("metrics"));
        assert!(approx(&metrics["suites"]["mini"]["invalid_gold"], 0.0), "{metrics}");
        assert_eq!(metrics["suite_checks"]["mini"]["golds_changed"], serde_json::json!(["c1"]), "{metrics}");
        let report = std::fs::read_to_string(run_dir.join("report.md")).expect("report.md");
        assert!(report.contains("scored against the current gold"), "{report}");
    }
    assert_eq!(server.request_count(), requests, "a fixed gold changes no completion");
}

/// `rlbench run` without `--out`, in `cwd`, on the suite `aime24` of `data`.
fn run_aime24(server: &FakeServer, cwd: &Path, data: &Path) -> std::process::Output {
    rlbench()
        .current_dir(cwd)
        .args(["run", "--suite", "aime24", "--prompt", "plain", "--api", "completions", "-k", "2"])
        .args(["--endpoint", &server.url(), "--served-model", "fake", "--retry-delay", "0.01"])
        .arg("--data-dir")
        .arg(data)
        .output()
        .expect("run rlbench")
}

fn run_dirs(cwd: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> =
        std::fs::read_dir(cwd.join("runs")).expect("runs/").filter_map(|e| e.ok()).map(|e| e.path()).collect();
    v.sort();
    v
}

/// Issue 31, major 1: a `--data-dir` copy whose problems differ gets its own run, and the command
/// says that a run of the same settings on other rows exists; a copy whose golds differ reuses
/// the completions (they do not depend on the gold) and is scored against its own golds.
#[test]
fn another_copy_of_a_suite_file_is_noticed() {
    let dir = temp_dir("copies");
    let server = FakeServer::start(Behaviour::default());
    let write = |name: &str, edit: &dyn Fn(usize) -> Option<(String, String)>| {
        let d = dir.join(name);
        let path = write_rows(&d, 3, edit);
        std::fs::rename(path, d.join("aime24.jsonl")).expect("rename");
        d
    };
    let a = write("a", &|_| None);
    let other_problem = write("b", &|i| (i == 0).then(|| ("Compute: the answer is 7.".into(), "7".into())));
    let other_gold = write("c", &|i| (i == 0).then(|| ("Compute: the answer is 0.".into(), "9".into())));

    assert!(run_aime24(&server, &dir, &a).status.success());
    assert_eq!(run_dirs(&dir).len(), 1);
    let o = run_aime24(&server, &dir, &other_problem);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("holds a run of these settings on other rows of the suite files"), "{stderr}");
    assert_eq!(run_dirs(&dir).len(), 2);

    let requests = server.request_count();
    let o = run_aime24(&server, &dir, &other_gold);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(server.request_count(), requests, "the completions of `a` are reused");
    assert_eq!(run_dirs(&dir).len(), 2);
    assert!(stderr.contains("the gold of 1 problem(s)") && stderr.contains("(`c0`)"), "{stderr}");
}

/// A run directory named by an older rlbench (before the suite rows were part of the name, and
/// without the suite files in run.json) is found again by the same command and continued.
#[test]
fn runs_named_by_an_older_rlbench_are_continued() {
    let dir = temp_dir("legacy");
    let data = dir.join("data");
    let path = write_rows(&data, 2, &|_| None);
    std::fs::rename(path, data.join("aime24.jsonl")).expect("rename");
    let server = FakeServer::start(Behaviour::default());
    assert!(run_aime24(&server, &dir, &data).status.success());
    let [run] = run_dirs(&dir).try_into().expect("one run");
    // Make it an older run: no suite files in run.json, and the name of the settings alone.
    let mut manifest: Value = json_of(&std::fs::read(run.join("run.json")).expect("run.json"));
    manifest.as_object_mut().map(|m| m.remove("suite_files"));
    std::fs::write(run.join("run.json"), manifest.to_string()).expect("write");
    let m: rlbench::run::RunManifest = serde_json::from_value(manifest).expect("manifest");
    let legacy = dir.join("runs").join(format!(
        "{}{}",
        rlbench::run::run_name_prefix(&m.model, &m.suites),
        m.legacy_settings_hash()
    ));
    std::fs::rename(&run, &legacy).expect("rename");
    let report = rlbench().arg("report").arg(&legacy).output().expect("report");
    assert!(String::from_utf8_lossy(&report.stdout).contains("made by an older rlbench"));

    let requests = server.request_count();
    let o = run_aime24(&server, &dir, &data);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("continuing {}", Path::new("runs").join(legacy.file_name().expect("name")).display())),
        "{stderr}"
    );
    assert_eq!(server.request_count(), requests);
    assert_eq!(run_dirs(&dir), vec![legacy.clone()]);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("older rlbench"), "the run now records its suite file");
}

/// Issue 31, major 3: a row left out of a suite file (an id used twice) is counted in report.md
/// and metrics.json, and `run` and `report` exit 1 (`report --allow-partial` 0).
#[test]
fn rows_left_out_of_a_suite_are_counted_and_fail_the_run() {
    let dir = temp_dir("dup-ids");
    let data = dir.join("data");
    std::fs::create_dir_all(&data).expect("mkdir");
    let suite = data.join("mini.jsonl");
    let rows = [
        r#"{"id":"c0","problem":"Compute: the answer is 0.","answer":"0"}"#,
        r#"{"id":"c1","problem":"Compute: the answer is 1.","answer":"1"}"#,
        r#"{"id":"c0","problem":"Compute: the answer is 2.","answer":"2"}"#,
    ];
    std::fs::write(&suite, rows.join("\n") + "\n").expect("write");
    let server = FakeServer::start(Behaviour::default());
    let run_dir = dir.join("out");
    let o = run_into(&server, &suite, &run_dir, 1, &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(":3: duplicate id `c0`") && stderr.contains("1 rows of the suite files are left out"),
        "{stderr}"
    );
    let report = std::fs::read_to_string(run_dir.join("report.md")).expect("report.md");
    assert!(report.contains("mini: 1 row(s) of") && report.contains("are left out of the scores"), "{report}");
    let metrics = json_of(&std::fs::read(run_dir.join("metrics.json")).expect("metrics"));
    let left_out = metrics["suite_checks"]["mini"]["rows_left_out"].as_array().cloned().unwrap_or_default();
    assert_eq!(left_out.len(), 1, "{metrics}");

    let o = rlbench().arg("report").arg(&run_dir).output().expect("report");
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let o = rlbench().arg("report").arg(&run_dir).arg("--allow-partial").output().expect("report");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// A finished run of the 2-problem suite `mini` at K = 1 in `<temp>/out`: (temp dir, suite file,
/// its server, run dir).
fn finished_run(name: &str) -> (PathBuf, PathBuf, FakeServer, PathBuf) {
    let dir = temp_dir(name);
    let suite = write_suite(&dir, "mini", 2);
    let server = FakeServer::start(Behaviour::default());
    let run_dir = dir.join("out");
    assert!(run_into(&server, &suite, &run_dir, 1, &[]).status.success());
    (dir, suite, server, run_dir)
}

/// `report --extract lenient` records how it read the answers: in report.md's header and in
/// metrics.json, so a rewritten report never passes for a strict one.
#[test]
fn the_scoring_mode_of_a_report_is_recorded() {
    let (_, _, _, run_dir) = finished_run("modes");
    let read = || {
        let metrics = json_of(&std::fs::read(run_dir.join("metrics.json")).expect("metrics"));
        (metrics["scoring"].clone(), std::fs::read_to_string(run_dir.join("report.md")).expect("report.md"))
    };
    let (scoring, report) = read();
    assert_eq!(scoring, serde_json::json!({"extract": "strict", "last-number": "auto", "truncated": "no-answer"}));
    assert!(report.contains("Answers read with --extract strict, --last-number auto, --truncated no-answer."));
    let o = rlbench().arg("report").arg(&run_dir).args(["--extract", "lenient", "--truncated", "lenient"]).output();
    assert!(o.expect("report").status.success());
    let (scoring, report) = read();
    assert_eq!((scoring["extract"].as_str(), scoring["truncated"].as_str()), (Some("lenient"), Some("lenient")));
    assert!(report.contains("--extract lenient"), "{report}");
}

/// `--truncated lenient` under strict extraction says what it does and does not do.
#[test]
fn truncated_lenient_under_strict_extraction_is_explained() {
    let dir = temp_dir("truncated-mode");
    let file = dir.join("g.jsonl");
    std::fs::write(&file, "{\"id\":\"a\",\"answer\":\"1\",\"response\":\"1\"}\n").expect("write");
    let o = rlbench().args(["score", "--truncated", "lenient"]).arg(&file).output().expect("score");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("--truncated lenient with --extract strict") && stderr.contains("--extract lenient"),
        "{stderr}"
    );
    let o = rlbench().args(["score", "--truncated", "lenient", "--extract", "lenient"]).arg(&file).output();
    assert!(!String::from_utf8_lossy(&o.expect("score").stderr).contains("--truncated lenient with"));
}

/// A percent-scale baseline (`{"mini": 50}`) is refused with the fix, not taken as 50x the score;
/// it and a metric the run cannot have are refused before a run generates anything.
#[test]
fn a_percent_baseline_is_refused() {
    let (dir, suite, server, run_dir) = finished_run("percent");
    let o = rlbench().arg("report").arg(&run_dir).args(["--baseline", r#"{"mini": 50}"#]).output().expect("report");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("mini: 50") && stderr.contains("divide them by 100"), "{stderr}");
    // Refused before generating, as a metric the run cannot have: a new run writes nothing.
    let fresh = dir.join("fresh");
    for (flags, why) in [
        (["--baseline", r#"{"mini": 50}"#], "divide them by 100"),
        (["--metric", "pass@2"], "a run of K = 1 has pass@1 to pass@1"),
    ] {
        let o = run_into(&server, &suite, &fresh, 1, &flags);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(why), "{stderr}");
        assert!(!fresh.exists());
    }
    assert_eq!(server.request_count(), 2, "the first run's requests only");
}

/// `compare` with an incomplete run says so in its output (table and JSON) and exits 1, unless
/// `--allow-partial`.
#[test]
fn comparing_an_incomplete_run_says_so_and_fails() {
    let dir = temp_dir("compare-partial");
    let suite = write_suite(&dir, "mini", 3);
    let (a, b) = (dir.join("a"), dir.join("b"));
    let server = FakeServer::start(Behaviour::default());
    assert!(run_into(&server, &suite, &a, 2, &[]).status.success());
    let faults =
        [vec![support::Fault::Slow(std::time::Duration::ZERO); 4], vec![support::Fault::Status(400); 2]].concat();
    let partial = FakeServer::start(Behaviour { faults, ..Behaviour::default() });
    assert_eq!(run_into(&partial, &suite, &b, 2, &[]).status.code(), Some(1));
    let o = rlbench().arg("compare").arg(&a).arg(&b).arg("--json").output().expect("compare");
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json_of(&o.stdout);
    assert_eq!(v["missing_samples"], serde_json::json!({"a": 0, "b": 2}));
    assert!(v["caveats"][0].as_str().is_some_and(|c| c.contains("run B is incomplete (2 samples missing)")), "{v}");
    let o = rlbench().arg("compare").arg(&a).arg(&b).arg("--allow-partial").output().expect("compare");
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("run B is incomplete"));
    // A gold fixed since generation is scored against, and a caveat says so for each run.
    write_rows(&dir.join("data"), 3, &|i| (i == 0).then(|| ("Compute: the answer is 0.".into(), "5".into())));
    let o = rlbench().arg("compare").arg(&a).arg(&b).arg("--allow-partial").output().expect("compare");
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("**Caveat:** run A: mini: the gold of 1 problem(s)"), "{table}");
    assert!(table.contains("**Caveat:** run B: mini: the gold of 1 problem(s)"), "{table}");
}

/// A run refused in its directory (here a data directory given as `--out`: its suite file is not
/// a completions file) leaves no run.json there and the suite file as it was.
#[test]
fn a_run_refused_in_a_data_directory_writes_nothing_there() {
    let dir = temp_dir("out-is-data");
    let suite = write_suite(&dir, "mini", 2);
    let before = std::fs::read(&suite).expect("suite");
    let server = FakeServer::start(Behaviour::default());
    let o = run_into(&server, &suite, &dir.join("data"), 1, &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("corrupt record"), "{stderr}");
    let names: Vec<_> =
        std::fs::read_dir(dir.join("data")).expect("data").filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
    assert_eq!(names, vec![std::ffi::OsString::from("mini.jsonl")]);
    assert_eq!(std::fs::read(&suite).expect("suite"), before);
    assert_eq!(server.request_count(), 0);
}

/// Two suite files of one name would share a completions file: refused, naming both; the same
/// file twice is one suite.
#[test]
fn two_suites_of_one_name_are_refused() {
    let dir = temp_dir("same-name");
    let (a, b) = (write_suite(&dir.join("a"), "mini", 1), write_suite(&dir.join("b"), "mini", 2));
    let server = FakeServer::start(Behaviour::default());
    let both = format!("{},{}", a.display(), b.display());
    let o = run_into(&server, Path::new(&both), &dir.join("out"), 1, &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("two suites are named `mini`"), "{stderr}");
    assert!(!dir.join("out").exists());
    let twice = format!("{},{}", a.display(), a.display());
    let o = run_into(&server, Path::new(&twice), &dir.join("out"), 1, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(dir.join("out/mini.jsonl")).map(|t| t.lines().count()).ok(), Some(1));
}
