//! Tests of the settings: the loss recipe and shaping they give, the fold's order and provenance,
//! every setting through every layer, and the config files of every shape rltrain has written.

use serde_json::{json, Value};

use super::*;
use crate::aggregate::AggMode;
use crate::kl::{KlEstimator, RefKl};
use crate::objectives::ObjectiveConfig;
use rlverify::RewardKind;

/// The defaults with `settings` (flag names, flat) over them.
fn with(settings: Value) -> TrainConfig {
    TrainConfig::default().merged(&settings).unwrap()
}

#[test]
fn overrides_reach_the_kernel_and_terms() {
    let c = with(json!({"objective": "dgpo", "clip_low": 0.1, "dgpo_m": 3.0, "kl_coef": 0.05}));
    let l = c.loss_config().unwrap();
    match l.objective {
        ObjectiveConfig::Dgpo(d) => assert_eq!((d.eps_low, d.eps_high, d.n, d.m), (0.1, 0.2, 1.0, 3.0)),
        other => panic!("{other:?}"),
    }
    assert_eq!(l.ref_kl, Some(RefKl { estimator: KlEstimator::K3, coef: 0.05 }));
    // GRPO's reference KL can be switched off.
    assert_eq!(with(json!({"kl_coef": 0.0})).loss_config().unwrap().ref_kl, None);
    // Dr.GRPO's L_max is the generation length.
    let d = with(json!({"objective": "dr-grpo", "max_new_tokens": 7}));
    assert_eq!(d.loss_config().unwrap().agg, AggMode::DrGrpo { l_max: 7 });
    let d = with(json!({"aggregation": "dr-grpo", "max_new_tokens": 9}));
    assert_eq!(d.loss_config().unwrap().agg, AggMode::DrGrpo { l_max: 9 });
}

/// The reward encoding and DAPO's shaping come from the objective's registry entry.
#[test]
fn shaping_comes_from_the_registry_entry() {
    let run = |o: &str| with(json!({"objective": o, "max_new_tokens": 20480}));
    let shaping = |c: &TrainConfig| (c.reward_kind().unwrap(), c.dynamic_sampling_on(), c.overlong_buffer_tokens());
    assert_eq!(shaping(&run("dapo")), (RewardKind::Signed, true, 4096));
    assert_eq!(shaping(&run("dgpo")), (RewardKind::Signed, false, 0));
    assert_eq!(shaping(&run("grpo")), (RewardKind::Binary, false, 0));
    let mut user = run("dapo");
    (user.rollout.reward, user.rollout.dynamic_sampling, user.rollout.overlong_buffer) =
        (RewardChoice::Kind(RewardKind::Binary), Some(false), Some(0));
    assert_eq!(shaping(&user), (RewardKind::Binary, false, 0));
    let resolved = run("dapo").resolved().unwrap();
    assert_eq!(
        (resolved.objective.name, resolved.overlong, resolved.dynamic_sampling),
        ("dapo", Some((20480, 4096)), true)
    );
    assert_eq!(resolved.verify.reward, RewardKind::Signed);
}

#[test]
fn mismatched_overrides_are_errors() {
    let cases: [(&str, ObjectiveOverrides); 4] = [
        ("grpo", ObjectiveOverrides { dgpo_n: Some(2.0), ..Default::default() }),
        ("cpgd", ObjectiveOverrides { clip_low: Some(0.1), ..Default::default() }),
        ("grpo", ObjectiveOverrides { cpgd_weight_cap: Some(2.0), ..Default::default() }),
        ("gspo", ObjectiveOverrides { aggregation: Some(AggMode::TokenMean), ..Default::default() }),
    ];
    for (objective, overrides) in cases {
        let mut c = with(json!({ "objective": objective }));
        c.objective.overrides = overrides.clone();
        assert!(c.loss_config().is_err(), "{objective} {overrides:?}");
    }
}

/// A pretrained model gets responses it can reason in and periodic checkpoints, unless set;
/// the tiny model keeps one token and a checkpoint at the end.
#[test]
fn pretrained_models_get_real_lengths_and_checkpoints() {
    let resolve = |layer: Value| TrainConfig::resolve(None, &[layer]).expect("resolve");
    let c = resolve(json!({"model": "default", "steps": 200}));
    let got = (c.rollout.max_new_tokens, c.run.save_every, c.run.keep_checkpoints);
    assert_eq!(got, (PRETRAINED_MAX_NEW_TOKENS, 20, 3));
    assert_eq!(c.sources.get("max_new_tokens"), Some(&Source::Model));
    let c = resolve(json!({"model": "default", "max_new_tokens": 64, "save_every": 0}));
    assert_eq!((c.rollout.max_new_tokens, c.run.save_every), (64, 0));
    let c = resolve(json!({"model": "tiny"}));
    assert_eq!((c.rollout.max_new_tokens, c.run.save_every), (1, 0));
}

/// The fold's order: defaults < preset and model defaults < config file < flags, whichever
/// order the settings were written in; each value's source is the layer that set it last, and a
/// resumed run keeps the sources its config.json recorded.
#[test]
fn fold_order_and_provenance() {
    let file = TrainLayer::from_json(&json!({"temperature": 0.5, "lr": 1e-4, "clip_low": 0.3})).unwrap();
    let flags =
        TrainLayer::from_json(&json!({"lr": 2e-4, "paper": "dgpo", "objective": "dgpo", "model": "m.gguf"})).unwrap();
    let c = TrainConfig::resolve_layers(None, &[file, flags]).unwrap();
    let at = |k: &str| (c.settings()[k].clone(), c.sources[k]);
    assert_eq!(at("temperature"), (json!(0.5), Source::User)); // the file over the preset's 1.0
    assert_eq!(at("lr"), (json!(2e-4), Source::User)); // the flags over the file and the model's 1e-6
    assert_eq!(at("clip_low"), (json!(0.3), Source::User)); // the file over the preset's 0.2
    assert_eq!(at("clip_high"), (json!(0.2), Source::Preset));
    assert_eq!(at("adam_beta2"), (json!(0.95), Source::Preset));
    assert_eq!(at("warmup_steps"), (json!(10), Source::Model)); // a tenth of the default 100 steps
    assert_eq!(at("seed"), (json!(0), Source::Default));
    assert_eq!(c.sources.len(), TrainConfig::names().len());
    // Resumed: no preset or model layer again; the recorded sources stay, a flag is the user's.
    let resumed = TrainConfig::resolve(Some(&c), &[json!({"steps": 300, "temperature": 0.7})]).unwrap();
    assert_eq!((resumed.optim.warmup_steps, resumed.sources["warmup_steps"]), (10, Source::Model));
    assert_eq!((resumed.rollout.temperature, resumed.sources["temperature"]), (0.7, Source::User));
    let changes: Vec<String> = resumed.changes_from(&c).unwrap().into_iter().map(|(k, _, _)| k).collect();
    assert_eq!(changes, ["temperature"], "steps is free on resume");
}

/// The settings a resumed run may change are marked once, where they are declared.
#[test]
fn free_on_resume_is_the_declared_list() {
    let mut free = TrainConfig::free_on_resume();
    free.sort_unstable();
    let mut want = vec![
        "steps",
        "out",
        "device",
        "log_every",
        "save_every",
        "keep_checkpoints",
        "save_rollouts",
        "max_bad_steps",
        "eval_every",
        "eval_data",
        "eval_k",
        "eval_limit",
        "eval_temperature",
        "gen_batch",
        "micro_batch_size",
        "recompute_activations",
        "inject_nan_at_step",
    ];
    want.sort_unstable();
    assert_eq!(free, want);
}

/// Older config files name the reward encodings `zero-one` and `plus-minus-one`; the
/// verifier's options are written by their flag names, and a wrong one lists the right ones.
#[test]
fn older_reward_names_are_read() {
    let c = TrainConfig::from_json(r#"{"reward": "plus-minus-one"}"#).unwrap();
    assert_eq!(c.rollout.reward, RewardChoice::Kind(RewardKind::Signed));
    let text = serde_json::to_string(&c).unwrap();
    assert!(text.contains(r#""reward":"signed""#) && text.contains(r#""extract":"strict""#), "{text}");
    assert!(TrainConfig::from_json(r#"{"extract": "lenientt"}"#).is_err_and(|e| e.to_string().contains("strict")));
}

/// A config file may write names in any case, as the flags take them.
#[test]
fn config_names_in_any_case() {
    let text = r#"{"objective": "DGPO", "paper": "DGPO", "advantage": "Group-Norm", "kl_estimator": "K3",
                   "aggregation": "Token-Mean"}"#;
    let c = TrainConfig::from_json(text).unwrap();
    let o = &c.objective;
    assert_eq!((o.objective.name, o.paper), ("dgpo", Some(Paper::Dgpo)));
    assert_eq!(
        (o.overrides.advantage.as_deref(), o.overrides.kl_estimator, o.overrides.aggregation),
        (Some("group-norm"), Some(KlEstimator::K3), Some(AggMode::TokenMean))
    );
    let c = TrainConfig::resolve(None, &[json!({"objective": "Dr_GRPO"})]).unwrap();
    assert_eq!(c.objective.objective.name, "dr-grpo");
}

/// `config.json` is nested by the help's groups; flat layers (an older `config.json`, a file of
/// flag names) and nested ones read the same; an unknown key is an error naming it.
#[test]
fn json_layers_and_unknown_keys() {
    let flat = r#"{"objective": "cpgd", "overrides": {"clip_eps": 0.3}, "steps": 5}"#;
    let nested = r#"{"objective": {"objective": "cpgd", "overrides": {"clip_eps": 0.3}}, "run": {"steps": 5}}"#;
    let c = TrainConfig::from_json(flat).unwrap();
    assert_eq!(c, TrainConfig::from_json(nested).unwrap());
    assert_eq!((c.objective.objective.name, c.objective.overrides.clip_eps, c.run.steps), ("cpgd", Some(0.3), 5));
    let m = c.merged(&json!({"steps": 9, "overrides": {"dual_clip": null, "drift_coef": 0.1}})).unwrap();
    assert_eq!(
        (m.run.steps, m.objective.overrides.clip_eps, m.objective.overrides.drift_coef),
        (9, Some(0.3), Some(0.1))
    );
    let err = TrainConfig::from_json(r#"{"stpes": 5}"#).unwrap_err().to_string();
    assert!(err.contains("stpes"), "{err}");
    let err = TrainLayer::from_json(&json!({"optim": {"lrr": 5}})).unwrap_err().to_string();
    assert!(err.contains("lrr"), "{err}");
    let text = serde_json::to_string(&m).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!((v["optim"]["lr"].as_f64(), v["run"]["steps"].as_u64()), (Some(3e-3), Some(9)));
    assert_eq!(v["objective"]["overrides"]["drift_coef"].as_f64(), Some(0.1));
    assert_eq!(TrainConfig::from_json(&text).unwrap(), m);
}

/// The `config.json` files main wrote (a tiny run; a DGPO preset run with flags over it; the
/// flat shape before the groups) load; the nested ones are written back byte for byte, so a
/// finished study run is still recognised as finished; apart from the settings added since main
/// wrote them (a verifier option, say), each at its default ([`without_new_settings`]).
#[test]
fn config_json_written_by_main_loads_and_writes_back_unchanged() {
    for name in ["config-main-tiny.json", "config-main-dgpo-paper.json", "config-flat-dgpo-paper.json"] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        let c = TrainConfig::from_json(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        c.validate().unwrap();
        if name.starts_with("config-main") {
            let written = without_new_settings(&serde_json::to_string_pretty(&c).unwrap(), &text);
            assert_eq!(written, text.trim_end(), "{name}");
        }
        if name.contains("dgpo") {
            assert_eq!((c.objective.objective.name, c.objective.paper), ("dgpo", Some(Paper::Dgpo)));
            assert_eq!(c.objective.overrides.kl_estimator, Some(KlEstimator::LowVarK3));
            assert_eq!(
                (c.rollout.reward, c.rollout.answer.extract),
                (RewardChoice::Kind(RewardKind::Signed), rlverify::Extraction::Lenient)
            );
            assert_eq!((c.sources["clip_low"], c.sources["kl_coef"]), (Source::Preset, Source::User));
        }
    }
}

/// A setting is one declaration: every setting of a non-default run (the DGPO fixture, with every
/// optional setting set) goes through its flag (named as the setting, taking the value as
/// `config.json` writes it), the command line's layer, the fold, `config.json` and back unchanged.
#[cfg(feature = "cli")]
#[test]
fn every_setting_round_trips_through_flag_layer_fold_and_config_json() {
    use clap::{Args, Command};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/config-main-dgpo-paper.json");
    let fixture = TrainConfig::from_json(&std::fs::read_to_string(path).unwrap()).unwrap();
    // The optional settings the fixture leaves unset (a new optional setting needs a value here).
    let optional = json!({
        "inject_nan_at_step": 7, "micro_batch_size": 4, "recompute_activations": true,
        "cpgd_epoch_correction": false, "dynamic_sampling": true, "overlong_buffer": 3,
        "clip_eps": 0.25, "dual_clip": 2.5, "cpg_lambda": 1.5, "drift_coef": 0.02, "drift_clip": 3.0,
        "entropy_coef": 0.001, "cpgd_weight_cap": 2.0,
    });
    let mut want = fixture.merged(&optional).unwrap();
    want.memory = None;
    let settings = want.settings();
    let unset: Vec<&String> = settings.iter().filter(|(_, v)| v.is_null()).map(|(k, _)| k).collect();
    assert!(unset.is_empty(), "give these optional settings a value above: {unset:?}");

    let cmd = TrainLayer::augment_args(Command::new("t")).no_binary_name(true);
    let flags: Vec<String> = cmd.get_arguments().filter_map(|a| a.get_long().map(String::from)).collect();
    let mut args = Vec::new();
    let mut no_flag = Vec::new();
    for (name, value) in &settings {
        let flag = name.replace('_', "-");
        if !flags.contains(&flag) {
            no_flag.push(name.as_str());
            continue;
        }
        let text = match value {
            Value::Null => continue,
            Value::String(s) => s.clone(),
            Value::Array(items) => {
                items.iter().map(|v| v.as_str().unwrap_or_default().to_string()).collect::<Vec<_>>().join(",")
            }
            other => other.to_string(),
        };
        args.push(format!("--{flag}={text}"));
    }
    assert_eq!(no_flag, ["dynamic_sampling_rounds"], "settings without a flag");
    let matches = cmd.try_get_matches_from(&args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
    let mut layer = <TrainLayer as clap::FromArgMatches>::from_arg_matches(&matches).unwrap();
    layer.rollout.dynamic_sampling_rounds = Some(want.rollout.dynamic_sampling_rounds);
    assert_eq!(layer, want.to_layer(), "the flags' layer");
    // No objective takes every override at once: folded without the checks across settings.
    let got = TrainConfig::fold_layers(None, &[layer]).unwrap();
    assert_eq!(got.settings(), settings, "the folded settings");
    let given: Vec<&String> = got.sources.iter().filter(|(_, s)| **s != Source::User).map(|(k, _)| k).collect();
    assert!(given.is_empty(), "set by a flag, yet from another layer: {given:?}");
    let reloaded = TrainConfig::from_json(&serde_json::to_string_pretty(&got).unwrap()).unwrap();
    assert_eq!(reloaded, got, "config.json read back");
}

/// `written` (a config as `config.json` writes it) without the lines of the settings that the
/// `config.json` in `old` does not name, each checked to hold its default: the settings added
/// since `old` was written, which the comparison with `old` leaves out.
fn without_new_settings(written: &str, old: &str) -> String {
    let old: Value = serde_json::from_str(old).unwrap();
    let known: std::collections::BTreeSet<String> =
        super::flat::flat_entries(&old).into_iter().map(|(k, _)| k).collect();
    let (defaults, now) = (TrainConfig::default().settings(), TrainConfig::from_json(written).unwrap().settings());
    let new = |key: &str| {
        let added = TrainConfig::names().contains(&key) && !known.contains(key);
        assert!(!added || now[key] == defaults[key], "{key}, added since, is not at its default");
        added
    };
    let mut lines: Vec<String> = Vec::new();
    for line in written.lines() {
        let key = line.trim_start().strip_prefix('"').and_then(|l| l.split_once("\":")).map(|(k, _)| k);
        if key.is_some_and(new) {
            continue;
        }
        if line.trim_start().starts_with('}') {
            if let Some(last) = lines.last_mut().filter(|l| l.ends_with(',')) {
                last.pop();
            }
        }
        lines.push(line.to_string());
    }
    lines.join("\n")
}
