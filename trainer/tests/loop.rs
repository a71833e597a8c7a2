//! The training loop end to end on a seeded tiny model (CPU): learning, exact resume,
//! checkpoints, bad data, the NaN guard, and the command line.

use std::path::{Path, PathBuf};

use rlengine::{Engine, ModelSource, ModelSpec};
use rltrain::policy::{response_logprobs_detached, SequenceBatch};
use rltrain::{train, Event, TrainConfig};
use serde_json::{json, Value};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rltrain-loop-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The learning recipe: a 2-layer width-64 model answering `n+1=` (one token) with the task's
/// 15-token tokenizer; chance is 1/15.
fn tiny(out: &Path) -> TrainConfig {
    set(
        &TrainConfig::default(),
        json!({
            "model": "tiny", "data": "task:succ", "out": out, "steps": 4, "prompts_per_step": 8,
            "group_size": 8, "max_new_tokens": 1, "lr": 3e-3, "log_every": 0,
        }),
    )
}

/// `cfg` with `settings` (flag names, as the command line sets them) over it.
fn set(cfg: &TrainConfig, settings: Value) -> TrainConfig {
    cfg.merged(&settings).expect("valid settings")
}

fn metrics(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("metrics.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn quiet(_: Event) {}

/// Keys every step line carries (verl/TRL-like names).
const STEP_KEYS: [&str; 27] = [
    "step",
    "reward/mean",
    "reward/std",
    "acc",
    "response_length/mean",
    "response_length/max",
    "response_length/clip_ratio",
    "clip_frac/LN",
    "clip_frac/HP",
    "clip_frac/LP",
    "clip_frac/HN",
    "clip_frac/total",
    "ratio/mean",
    "ratio/min",
    "ratio/max",
    "kl/old_k3",
    "kl/ref",
    "entropy",
    "loss",
    "grad_norm",
    "lr",
    "time/rollout_s",
    "time/train_s",
    "time/step_s",
    "tokens_per_s",
    "skipped",
    "frac_zero_std_groups",
];

#[test]
fn reward_rises_from_chance_to_at_least_0_8_for_grpo_cpgd_cfpo_dgpo() {
    for objective in ["grpo", "cpgd", "cfpo", "dgpo"] {
        let out = tmp(&format!("learn-{objective}"));
        let cfg = set(&tiny(&out), json!({ "objective": objective, "steps": LEARN_STEPS }));
        let outcome = train(&cfg, false, &mut quiet).unwrap();
        assert_eq!(outcome.steps, LEARN_STEPS);
        let m = metrics(&out);
        let acc: Vec<f64> = m.iter().filter_map(|v| v.get("acc").and_then(Value::as_f64)).collect();
        let start = acc[..3].iter().sum::<f64>() / 3.0;
        let end = acc[acc.len() - 5..].iter().sum::<f64>() / 5.0;
        assert!(start < 0.2, "{objective}: starts at {start}, not near chance; {acc:?}");
        assert!(end >= 0.8, "{objective}: ends at {end}; {acc:?}");
        let _ = std::fs::remove_dir_all(&out);
    }
}

/// Steps of the learning test.
const LEARN_STEPS: u64 = 100;

fn without_timings(mut v: Value) -> Value {
    if let Value::Object(m) = &mut v {
        m.retain(|k, _| !k.starts_with("time/") && k != "tokens_per_s");
    }
    v
}

#[test]
fn a_resumed_run_matches_an_uninterrupted_one_bit_for_bit() {
    // Sample reuse, two mini-batches and a reference model exercise every piece of state.
    let base =
        |out: &Path| set(&tiny(out), json!({"objective": "grpo", "iterations": 2, "mini_batches": 2, "steps": 4}));
    let full = tmp("resume-full");
    train(&base(&full), false, &mut quiet).unwrap();
    let part = tmp("resume-part");
    train(&set(&base(&part), json!({"steps": 2})), false, &mut quiet).unwrap();
    // A stale line from a step after the checkpoint must be dropped on resume.
    let stale = format!("{}\n", serde_json::json!({"step": 3, "acc": -1}));
    let mut text = std::fs::read_to_string(part.join("metrics.jsonl")).unwrap();
    text.push_str(&stale);
    std::fs::write(part.join("metrics.jsonl"), text).unwrap();
    train(&base(&part), true, &mut quiet).unwrap();
    let weights = |d: &Path| std::fs::read(d.join("checkpoints/step-4/model.safetensors")).unwrap();
    assert!(weights(&full) == weights(&part), "weights differ after resume");
    let moments = |d: &Path| std::fs::read(d.join("checkpoints/step-4/optimizer.safetensors")).unwrap();
    assert!(moments(&full) == moments(&part), "optimizer state differs after resume");
    let a: Vec<Value> = metrics(&full).into_iter().map(without_timings).collect();
    let b: Vec<Value> = metrics(&part).into_iter().map(without_timings).collect();
    assert_eq!(a.len(), 4);
    assert_eq!(a, b);
    let latest = std::fs::read_to_string(part.join("checkpoints/latest")).unwrap();
    assert_eq!(latest.trim(), "step-4");
    // Starting a fresh run over an existing one is refused.
    assert!(train(&base(&full), false, &mut quiet).is_err());
    let _ = std::fs::remove_dir_all(&full);
    let _ = std::fs::remove_dir_all(&part);
}

#[test]
fn checkpoints_load_in_the_engine_with_the_same_logprobs() {
    let out = tmp("roundtrip");
    let outcome = train(&set(&tiny(&out), json!({"steps": 2})), false, &mut quiet).unwrap();
    let dir = out.join("checkpoints/step-2");
    for f in ["model.safetensors", "config.json", "tokenizer.json", "optimizer.safetensors", "trainer_state.json"] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    let mut spec = ModelSpec::new(ModelSource::HfDir(dir));
    spec.device = rlengine::Device::Cpu;
    let loaded = Engine::load(&spec).unwrap();
    let tok = loaded.tokenizer();
    let rows: Vec<(Vec<u32>, Vec<u32>)> = [("3+4=", "7"), ("1+1=", "2"), ("4+4=", "8")]
        .iter()
        .map(|(p, r)| (tok.encode(p).unwrap(), tok.encode(r).unwrap()))
        .collect();
    let pairs: Vec<(&[u32], &[u32])> = rows.iter().map(|(p, r)| (p.as_slice(), r.as_slice())).collect();
    let seqs = SequenceBatch::new(&pairs, tok.pad_id(), &rlengine::Device::Cpu).unwrap();
    let a = response_logprobs_detached(outcome.engine.model(), &seqs, 1.0).unwrap().logp.to_vec2::<f32>().unwrap();
    let b = response_logprobs_detached(loaded.model(), &seqs, 1.0).unwrap().logp.to_vec2::<f32>().unwrap();
    assert_eq!(a, b);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn bad_data_lines_are_reported_with_file_and_line_and_the_rest_trained_on() {
    let out = tmp("baddata");
    std::fs::create_dir_all(&out).unwrap();
    let data = out.join("train.jsonl");
    let text = "{\"q\":\"1+1=\",\"a\":\"2\"}\n{\"q\":\"2+2=\"}\nnot json\n{\"q\":\"3+3=\",\"a\":\"6\"}\n";
    std::fs::write(&data, text).unwrap();
    let cfg = set(
        &tiny(&out),
        json!({"data": data, "problem_field": "q", "answer_field": "a", "out": out.join("run"), "steps": 2}),
    );
    let mut warnings = Vec::new();
    let outcome = train(&cfg, false, &mut |e| {
        if let Event::Warning(w) = e {
            warnings.push(w.to_string());
        }
    })
    .unwrap();
    assert_eq!(outcome.steps, 2);
    let f = data.display().to_string();
    assert!(warnings.iter().any(|w| w.contains(&format!("{f}:2: field `a`"))), "{warnings:?}");
    assert!(warnings.iter().any(|w| w.contains(&format!("{f}:3: invalid JSON"))), "{warnings:?}");
    let rollouts = std::fs::read_to_string(out.join("run/rollouts.jsonl")).unwrap();
    assert!(rollouts.contains("1+1=") || rollouts.contains("3+3="));
    assert!(!rollouts.contains("2+2="));
    assert_eq!(outcome.skipped_data_lines.len(), 2, "{:?}", outcome.skipped_data_lines);
    let _ = std::fs::remove_dir_all(&out);
}

/// The command line: a run that skipped data lines (of its training or evaluation data) finishes,
/// then exits 1 with a closing line that counts them; the same run on clean data exits 0.
#[test]
fn cli_exits_1_after_a_run_that_skipped_data_lines() {
    let exe = env!("CARGO_BIN_EXE_rltrain");
    let out = tmp("cli-baddata");
    std::fs::create_dir_all(&out).unwrap();
    let (bad, clean) = (out.join("bad.jsonl"), out.join("clean.jsonl"));
    std::fs::write(&bad, "{\"problem\":\"1+1=\",\"answer\":\"2\"}\nnot json\n{\"problem\":\"2+2=\"}\n").unwrap();
    std::fs::write(&clean, "{\"problem\":\"1+1=\",\"answer\":\"2\"}\n{\"problem\":\"3+3=\",\"answer\":\"6\"}\n")
        .unwrap();
    let run = |data: &std::path::Path, eval: &std::path::Path, dir: &str| {
        std::process::Command::new(exe)
            .args(["--model", "tiny", "--steps", "1", "--prompts-per-step", "2", "--group-size", "2"])
            .args(["--eval-every", "1", "--eval-k", "1", "--data"])
            .arg(data)
            .arg("--eval-data")
            .arg(eval)
            .arg("--out")
            .arg(out.join(dir))
            .output()
            .unwrap()
    };
    let o = run(&bad, &bad, "bad");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    let f = bad.display().to_string();
    assert!(stderr.contains(&format!("skipped bad data line {f}:2: invalid JSON")), "{stderr}");
    assert!(stderr.contains("done: 1 steps"), "the run finishes: {stderr}");
    // Two lines of the training data, two of the evaluation data (the same file).
    assert_eq!(stderr.lines().last(), Some("4 data lines were skipped (file:line listed above)"), "{stderr}");
    assert!(metrics(&out.join("bad")).iter().any(|m| m["step"] == 1 && m.get("acc").is_some()));
    let o = run(&clean, &clean, "clean");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_non_finite_loss_is_reported_and_skipped_and_too_many_stop_the_run() {
    let out = tmp("nan");
    let cfg = set(&tiny(&out), json!({"steps": 3, "inject_nan_at_step": 2}));
    let mut warnings = Vec::new();
    train(&cfg, false, &mut |e| {
        if let Event::Warning(w) = e {
            warnings.push(w.to_string());
        }
    })
    .unwrap();
    let m = metrics(&out);
    let skipped: Vec<u64> = m.iter().map(|v| v["skipped"].as_u64().unwrap_or(99)).collect();
    assert_eq!(skipped, [0, 1, 0]);
    let cause = m[1]["nan_guard"][0].as_str().unwrap_or("");
    assert!(cause.contains("step 2") && cause.contains("policy loss term"), "{cause}");
    assert!(m[1]["grad_norm"].is_null() && m[1]["loss"].is_null());
    assert!(warnings.iter().any(|w| w.contains("update skipped")));
    let out2 = tmp("nan-stop");
    let stop = set(&cfg, json!({"max_bad_steps": 1, "out": out2}));
    let err = train(&stop, false, &mut quiet).unwrap_err().to_string();
    assert!(err.contains("consecutive non-finite") && err.contains("step 2"), "{err}");
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&out2);
}

#[test]
fn cli_lists_objectives_and_a_two_step_run_writes_every_metric() {
    let exe = env!("CARGO_BIN_EXE_rltrain");
    let o = std::process::Command::new(exe).arg("objectives").output().unwrap();
    assert!(o.status.success());
    let table = String::from_utf8_lossy(&o.stdout);
    for name in rltrain::objectives::Objective::names() {
        assert!(table.contains(&format!("| {name} |")), "{name} missing from `rltrain objectives`");
    }
    let out = tmp("cli");
    let o = std::process::Command::new(exe)
        .args(["--objective", "dgpo", "--model", "tiny", "--data", "task:add-small", "--steps", "2"])
        .args(["--dgpo-n", "2", "--kl-coef", "0.01", "--max-new-tokens", "3", "--mini-batches", "2", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let m = metrics(&out);
    assert_eq!(m.len(), 2);
    for key in STEP_KEYS {
        assert!(m[1].get(key).is_some(), "metrics.jsonl lacks `{key}`: {}", m[1]);
    }
    assert!(m[1]["kl/ref"].is_number(), "a KL coefficient loads a reference model");
    let cfg: Value = serde_json::from_str(&std::fs::read_to_string(out.join("config.json")).unwrap()).unwrap();
    assert_eq!(
        (cfg["objective"]["objective"].as_str(), cfg["objective"]["overrides"]["dgpo_n"].as_f64()),
        (Some("dgpo"), Some(2.0))
    );
    // --resume continues the run from its config.json and checkpoint; flags still override.
    let o = std::process::Command::new(exe).args(["--resume"]).arg(&out).args(["--steps", "3"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(metrics(&out).iter().map(|v| v["step"].as_u64().unwrap_or(0)).collect::<Vec<_>>(), [1, 2, 3]);
    // A config file is the base, flags override it.
    let file = out.join("my.json");
    std::fs::write(&file, r#"{"objective": "cpgd", "steps": 1, "overrides": {"clip_eps": 0.3}, "data": "task:succ"}"#)
        .unwrap();
    let o = std::process::Command::new(exe)
        .args(["train", "--config"])
        .arg(&file)
        .args(["--drift-coef", "0.05", "--out"])
        .arg(out.join("cfg"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let cfg: Value = serde_json::from_str(&std::fs::read_to_string(out.join("cfg/config.json")).unwrap()).unwrap();
    assert_eq!(cfg["objective"]["objective"], "cpgd");
    assert_eq!(
        (cfg["objective"]["overrides"]["clip_eps"].as_f64(), cfg["objective"]["overrides"]["drift_coef"].as_f64()),
        (Some(0.3), Some(0.05))
    );
    std::fs::write(&file, r#"{"objectiv": "cpgd"}"#).unwrap();
    let o = std::process::Command::new(exe).arg("--config").arg(&file).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("objectiv"));
    // Unknown objective: a clear error listing valid names, exit code 2.
    let o =
        std::process::Command::new(exe).args(["--objective", "grpoo", "--out"]).arg(out.join("x")).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("valid names"));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn micro_batches_change_memory_not_the_update() {
    // Global normalisers make the loss and gradient of micro-batches those of the whole
    // mini-batch (up to float summation order). Compared on the first update, before Adam
    // (which amplifies rounding noise in near-zero gradients) has acted.
    let first = |micro: usize, name: &str| {
        let out = tmp(name);
        let cfg = set(&tiny(&out), json!({"objective": "cpgd", "micro_batch_size": micro, "steps": 1}));
        train(&cfg, false, &mut quiet).unwrap();
        let m = metrics(&out);
        let _ = std::fs::remove_dir_all(&out);
        (m[0]["loss"].as_f64().unwrap_or(f64::NAN), m[0]["grad_norm"].as_f64().unwrap_or(f64::NAN))
    };
    let (whole, micro) = (first(0, "micro-0"), first(5, "micro-5"));
    assert!((whole.0 - micro.0).abs() < 1e-6, "loss {whole:?} vs {micro:?}");
    assert!((whole.1 - micro.1).abs() < 1e-5 * whole.1.max(1.0), "grad norm {whole:?} vs {micro:?}");
    assert!(whole.1 > 0.0);
}

#[test]
fn micro_batches_give_the_whole_mini_batch_update_in_every_aggregation() {
    // Responses of 1 to 3 tokens (EOS or the limit): token-mean over the mini-batch is not a
    // mean of micro-batch means, seq-mean-token-sum-norm's width is the mini-batch's, and so on.
    for aggregation in [
        "token-mean",
        "seq-mean-token-mean",
        "seq-mean-token-sum",
        "seq-mean-token-sum-norm",
        "dr-grpo",
        "group-token-mean",
    ] {
        let first = |micro: usize| {
            let out = tmp(&format!("agg-{aggregation}-{micro}"));
            // An entropy bonus gives a gradient even where every group's rewards are equal.
            let settings = json!({"objective": "grpo", "aggregation": aggregation, "max_new_tokens": 3,
                                  "entropy_coef": 0.01, "micro_batch_size": micro, "steps": 1});
            train(&set(&tiny(&out), settings), false, &mut quiet).unwrap();
            let m = metrics(&out);
            let _ = std::fs::remove_dir_all(&out);
            let get = |k: &str| m[0][k].as_f64().unwrap_or(f64::NAN);
            (get("loss"), get("grad_norm"), get("response_length/mean"))
        };
        let (whole, micro) = (first(0), first(7));
        assert!(whole.2 > 1.0 && whole.2 < 3.0, "{aggregation}: lengths must vary: {whole:?}");
        assert!((whole.0 - micro.0).abs() < 1e-6, "{aggregation}: loss {whole:?} vs {micro:?}");
        assert!((whole.1 - micro.1).abs() < 1e-5 * whole.1.max(1.0), "{aggregation}: grad norm {whole:?} vs {micro:?}");
        assert!(whole.1 > 0.0, "{aggregation}");
    }
}

#[test]
fn the_tiny_model_plans_the_whole_mini_batch_and_records_why() {
    // The automatic choice keeps the tiny runs (resume, studies) in one micro-batch, as before.
    let out = tmp("plan");
    train(&set(&tiny(&out), json!({"steps": 1})), false, &mut quiet).unwrap();
    let cfg: Value = serde_json::from_str(&std::fs::read_to_string(out.join("config.json")).unwrap()).unwrap();
    let plan = &cfg["memory"];
    assert_eq!(plan["micro_batch_size"], 64, "{plan}");
    assert_eq!((plan["chosen_by"].as_str(), plan["recompute_activations"].as_bool()), (Some("auto"), Some(false)));
    let (predicted, budget, available) = (
        plan["predicted_peak_bytes"].as_u64().unwrap_or(0),
        plan["budget_bytes"].as_u64().unwrap_or(0),
        plan["available_bytes"].as_u64().unwrap_or(0),
    );
    assert!(0 < predicted && predicted <= budget && budget < available, "{plan}");
    // A resumed run reads the plan back.
    assert!(TrainConfig::from_json(&cfg.to_string()).is_ok());
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_model_too_large_for_memory_is_refused_before_anything_exists() {
    // 100,000 wide: ~360 GB of weights; refused before they are allocated or the run folder made.
    let out = tmp("huge");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_rltrain"))
        .args(["--model", "tiny", "--tiny-hidden", "100000", "--data", "task:succ", "--steps", "1", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("weights, gradients and AdamW moments") && err.contains("GiB available"), "{err}");
    assert!(!out.exists(), "the run folder was created");
    // A row that cannot fit even recomputed: refused with the figures, before any rollout.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_rltrain"))
        .args(["--model", "tiny", "--data", "task:succ", "--max-new-tokens", "10000000", "--steps", "1", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("does not fit") && err.contains("--max-new-tokens") && err.contains("GiB"), "{err}");
    assert!(!out.exists(), "the run folder was created");
}

#[test]
fn recomputed_activations_change_memory_not_the_update() {
    // Two steps, with micro-batches too: the second step's loss depends on the first update.
    let run = |recompute: bool, name: &str| {
        let out = tmp(name);
        let settings =
            json!({"objective": "grpo", "micro_batch_size": 5, "recompute_activations": recompute, "steps": 2});
        let cfg = set(&tiny(&out), settings);
        train(&cfg, false, &mut quiet).unwrap();
        let m = metrics(&out);
        let _ = std::fs::remove_dir_all(&out);
        m.iter().filter_map(|l| Some((l["loss"].as_f64()?, l["grad_norm"].as_f64()?))).collect::<Vec<_>>()
    };
    let (plain, recomputed) = (run(false, "recompute-off"), run(true, "recompute-on"));
    assert!(plain.len() == 2 && recomputed.len() == 2, "{plain:?} vs {recomputed:?}");
    for (a, b) in plain.iter().zip(&recomputed) {
        assert!((a.0 - b.0).abs() < 1e-5, "loss {plain:?} vs {recomputed:?}");
        assert!((a.1 - b.1).abs() < 1e-4 * a.1.max(1.0), "grad norm {plain:?} vs {recomputed:?}");
        assert!(a.1 > 0.0);
    }
}

#[test]
fn dapo_drops_all_equal_groups_and_evaluation_lines_are_recorded() {
    let out = tmp("dapo");
    let cfg = set(
        &tiny(&out),
        json!({"objective": "dapo", "steps": 2, "eval_every": 1, "eval_data": ["task:succ"], "eval_k": 3, "eval_limit": 5}),
    );
    train(&cfg, false, &mut quiet).unwrap();
    let m = metrics(&out);
    let steps: Vec<&Value> = m.iter().filter(|v| v.get("acc").is_some()).collect();
    let evals: Vec<&Value> = m.iter().filter(|v| v.get("eval/succ/avg@3").is_some()).collect();
    assert_eq!(steps.len(), 2);
    assert_eq!(evals.iter().map(|v| v["step"].as_u64().unwrap_or(99)).collect::<Vec<_>>(), [0, 1, 2]);
    for e in &evals {
        let (avg, pass) =
            (e["eval/succ/avg@3"].as_f64().unwrap_or(-1.0), e["eval/succ/pass@3"].as_f64().unwrap_or(-1.0));
        assert!((0.0..=1.0).contains(&avg) && avg <= pass && pass <= 1.0, "{e}");
    }
    // At chance most groups of 8 are all wrong: dynamic sampling drops them.
    assert!(steps.iter().any(|v| v["dynamic_sampling/dropped_groups"].as_u64().unwrap_or(0) > 0), "{steps:?}");
    let cfg: Value = serde_json::from_str(&std::fs::read_to_string(out.join("config.json")).unwrap()).unwrap();
    assert_eq!(cfg["objective"]["objective"], "dapo");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn checkpoints_are_pruned_shared_like_the_run_and_stop_and_resume_say_what_happened() {
    let out = tmp("trust");
    let cfg = set(&tiny(&out), json!({"steps": 3, "save_every": 1, "keep_checkpoints": 2}));
    train(&cfg, false, &mut quiet).unwrap();
    assert_eq!(rltrain::checkpoint::steps(&out.join("checkpoints")).unwrap(), vec![2, 3]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: PathBuf| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let run_mode = mode(out.join("config.json"));
        for f in ["model.safetensors", "optimizer.safetensors", "trainer_state.json"] {
            assert_eq!(mode(out.join("checkpoints/step-3").join(f)), run_mode, "{f}");
        }
    }
    // --steps below the checkpoint's step is an error that names both.
    let err = train(&set(&cfg, json!({"steps": 2})), true, &mut quiet).unwrap_err().to_string();
    assert!(err.contains("--steps 2") && err.contains("step-3") && err.contains("(3)"), "{err}");
    // Changed settings are listed; free ones are not.
    let changed = set(&cfg, json!({"objective": "dgpo", "lr": 1e-3, "steps": 9, "log_every": 3}));
    let fields: Vec<String> = changed.changes_from(&cfg).unwrap().into_iter().map(|(k, _, _)| k).collect();
    assert_eq!(fields, ["lr", "objective"]);
    let bin = env!("CARGO_BIN_EXE_rltrain");
    let run = std::process::Command::new(bin)
        .args(["--resume", out.to_str().unwrap(), "--steps", "4", "--group-size", "4"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success() && stderr.contains("group_size: 8 -> 4") && stderr.contains("--allow-changes"));
    let run = std::process::Command::new(bin)
        .args(["--resume", out.to_str().unwrap(), "--steps", "4", "--group-size", "4", "--allow-changes"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let recorded: TrainConfig =
        serde_json::from_str(&std::fs::read_to_string(out.join("config.json")).unwrap()).unwrap();
    assert_eq!(recorded.changes.len(), 1);
    assert_eq!((recorded.changes[0].step, recorded.changes[0].field.as_str()), (3, "group_size"));
    let _ = std::fs::remove_dir_all(&out);
    // A stop request (Ctrl-C in the binary) ends the run after the step, with a checkpoint.
    let out = tmp("stop");
    let stop = std::sync::atomic::AtomicBool::new(true);
    let outcome = rltrain::train_until(&set(&tiny(&out), json!({"steps": 50})), false, &stop, &mut quiet).unwrap();
    assert!(outcome.interrupted);
    assert_eq!(outcome.steps, 1);
    assert_eq!(outcome.checkpoint, Some(out.join("checkpoints").join("step-1")));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn quantized_rollouts_recompute_pi_old_and_log_the_mismatch() {
    // One update per step takes π_old from that update's own forward; two mini-batches need a
    // separate no-grad forward first. Both log the mismatch and apply the TIS weight.
    for mini_batches in [1, 2] {
        let out = tmp(&format!("quantized-{mini_batches}"));
        let settings = json!({"steps": 2, "mini_batches": mini_batches, "rollout_decode": "quantized", "tis_cap": 2.0});
        let cfg = set(&tiny(&out), settings);
        assert!(cfg.quantized_rollouts());
        train(&cfg, false, &mut quiet).unwrap();
        for m in metrics(&out) {
            let get = |k: &str| m.get(k).and_then(Value::as_f64).unwrap_or(f64::NAN);
            // Q8_0 weights move log-probs a little, never much, and never to exactly the trainer's.
            let diff = get("rollout/logp_abs_diff");
            assert!(diff > 0.0 && diff < 0.05, "{m}");
            assert!(get("rollout/kl_k3") >= 0.0 && get("rollout/kl_k3") < 0.01, "{m}");
            assert!((get("rollout/tis_weight_mean") - 1.0).abs() < 0.05, "{m}");
            if mini_batches == 1 {
                // π_old is the trainer's own forward: the update is on-policy.
                assert!(get("kl/old_k3").abs() < 1e-6, "{m}");
            }
        }
        let _ = std::fs::remove_dir_all(&out);
    }
    let dense = set(&tiny(&tmp("auto")), json!({"rollout_decode": "auto"}));
    assert!(!dense.quantized_rollouts(), "auto keeps the tiny model on the dense path");
}
