//! Paper presets, the CPGD multi-epoch correction and the clip-filter-like weight, and where each
//! resolved value comes from (defaults, preset, model, user).
//!
//! The expected settings are written out from the papers: CPGD (arXiv:2505.12504 §5.1, eq. 2),
//! CFPO (arXiv:2601.22801 §5, eq. 8), DGPO (arXiv:2603.14389 §5.1, eq. 10).

use rltrain::advantage::{self, CpgdWeight, Estimator, Rollout, Whitening};
use rltrain::aggregate::AggMode;
use rltrain::config::{Source, TrainConfig};
use rltrain::objectives::{
    cpgd, AspoConfig, CfpoConfig, CispoConfig, CpgConfig, CpgValue, DgpoConfig, DriftConfig, GppoConfig, LossConfig,
    NoClipConfig, Objective, ObjectiveConfig, PgConfig, PgValue, PpoClipConfig,
};
use rltrain::presets::{Paper, PAPERS};
use rlverify::RewardKind;
use serde_json::json;

const GROUP: Estimator = Estimator::GroupNorm { eps_std: 1e-6, unbiased: true };
const CPGD_STD: Estimator = Estimator::Cpgd { weight: CpgdWeight::Std { eps: 1e-6 } };
const PPO: ObjectiveConfig = ObjectiveConfig::PpoClip(PpoClipConfig { eps_low: 0.2, eps_high: 0.2, dual_clip: None });
const DRIFT: Option<DriftConfig> = Some(DriftConfig { coef: 0.01, clip: 2.0 });

fn resolved(paper: &str, objective: &str) -> TrainConfig {
    TrainConfig::resolve(None, &[json!({ "paper": paper, "objective": objective })])
        .unwrap_or_else(|e| panic!("{paper}/{objective}: {e}"))
}

fn recipe(objective: ObjectiveConfig, agg: AggMode, advantage: Estimator, drift: Option<DriftConfig>) -> LossConfig {
    LossConfig { objective, agg, advantage, drift, ref_kl: None, entropy_coef: 0.0 }
}

/// Checks every objective of a paper against the settings written out here.
fn check(paper: &str, want: &[(&str, LossConfig)], reward: RewardKind, temperature: f64) {
    let p = PAPERS.iter().find(|p| p.name() == paper).copied().unwrap_or(Paper::Cpgd);
    let mut names: Vec<&str> = want.iter().map(|(n, _)| *n).collect();
    names.sort_unstable();
    let mut listed = p.objectives().to_vec();
    listed.sort_unstable();
    assert_eq!(names, listed, "{paper}: the test covers exactly the paper's objectives");
    for (objective, loss) in want {
        let cfg = resolved(paper, objective);
        assert_eq!(cfg.loss_config().unwrap(), *loss, "{paper}/{objective}");
        assert_eq!(cfg.reward_kind().unwrap(), reward, "{paper}/{objective}");
        assert_eq!(cfg.rollout.temperature, temperature, "{paper}/{objective}");
        assert_eq!(cfg.sources.get("reward"), Some(&Source::Preset), "{paper}/{objective}");
    }
}

#[test]
fn cpgd_preset_matches_the_paper() {
    let seq = AggMode::SeqMeanTokenMean;
    let gtm = AggMode::GroupTokenMean;
    let pg_ratio = ObjectiveConfig::Pg(PgConfig { value: PgValue::LogRatio });
    let cpg = ObjectiveConfig::Cpg(CpgConfig { eps: 0.2, lambda: 1.0, value: CpgValue::LogRatio });
    let dual = ObjectiveConfig::PpoClip(PpoClipConfig { eps_low: 0.2, eps_high: 0.2, dual_clip: Some(3.0) });
    let rpp = Estimator::ReinforcePP { kl_coef: 0.01, gamma: 1.0, whitening: Whitening::Biased };
    let rloo = Estimator::Loo { kl_coef: 0.01, whitening: Some(Whitening::Biased) };
    check(
        "cpgd",
        &[
            ("grpo", recipe(PPO, seq, GROUP, None)),
            ("grpo-dual-clip", recipe(dual, seq, GROUP, None)),
            ("grpo-no-clip", recipe(ObjectiveConfig::NoClip(NoClipConfig), seq, GROUP, None)),
            ("grpo-drift", recipe(PPO, seq, GROUP, DRIFT)),
            ("reinforce-pp", recipe(PPO, seq, rpp, None)),
            ("rloo-ppo", recipe(PPO, seq, rloo, None)),
            ("cpgd-pg", recipe(pg_ratio, gtm, CPGD_STD, None)),
            ("pgd", recipe(pg_ratio, gtm, CPGD_STD, DRIFT)),
            ("cpg", recipe(cpg, gtm, CPGD_STD, None)),
            ("cpgd", recipe(cpg, gtm, CPGD_STD, DRIFT)),
            ("cpgd-official", recipe(cpg, seq, CPGD_STD, DRIFT)),
        ],
        RewardKind::Binary,
        1.0,
    );
}

#[test]
fn cfpo_preset_matches_the_paper() {
    let seq = AggMode::SeqMeanTokenMean;
    check(
        "cfpo",
        &[
            ("grpo", recipe(PPO, seq, GROUP, None)),
            ("cfpo", recipe(ObjectiveConfig::Cfpo(CfpoConfig { eps: 0.2 }), seq, GROUP, None)),
        ],
        RewardKind::Binary,
        0.9,
    );
}

#[test]
fn dgpo_preset_matches_the_paper() {
    let gtm = AggMode::GroupTokenMean;
    let gppo = GppoConfig { eps_low: 0.2, eps_high: 0.2, beta1: 1.0, beta2: 1.0, dual_clip: None };
    check(
        "dgpo",
        &[
            (
                "grpo",
                recipe(
                    ObjectiveConfig::PpoClip(PpoClipConfig { eps_low: 0.2, eps_high: 0.2, dual_clip: Some(3.0) }),
                    gtm,
                    GROUP,
                    None,
                ),
            ),
            (
                "cispo",
                recipe(
                    ObjectiveConfig::Cispo(CispoConfig { eps_low: Some(0.2), eps_high: 0.2, abs_cap: None }),
                    gtm,
                    GROUP,
                    None,
                ),
            ),
            ("gppo", recipe(ObjectiveConfig::Gppo(gppo), gtm, GROUP, None)),
            (
                "ce-gppo",
                recipe(
                    ObjectiveConfig::Gppo(GppoConfig { beta1: 0.75, dual_clip: Some(10.0), ..gppo }),
                    gtm,
                    GROUP,
                    None,
                ),
            ),
            (
                "aspo",
                recipe(
                    ObjectiveConfig::Aspo(AspoConfig { eps_low: 0.2, eps_high: 0.2, c_neg: 3.0, c_pos: 3.0 }),
                    gtm,
                    GROUP,
                    None,
                ),
            ),
            (
                "dgpo",
                recipe(
                    ObjectiveConfig::Dgpo(DgpoConfig { eps_low: 0.2, eps_high: 0.2, n: 1.0, m: 2.0 }),
                    gtm,
                    GROUP,
                    None,
                ),
            ),
        ],
        RewardKind::Signed,
        1.0,
    );
    let cfg = resolved("dgpo", "dgpo");
    assert_eq!((cfg.optim.adam_beta2, cfg.optim.grad_clip), (0.95, 1.0));
}

#[test]
fn user_settings_win_over_the_preset_and_unknown_pairs_fail() {
    let cfg = TrainConfig::resolve(
        None,
        &[json!({"paper": "dgpo", "objective": "grpo", "temperature": 0.7, "overrides": {"dual_clip": 10.0}})],
    )
    .unwrap();
    assert_eq!(cfg.rollout.temperature, 0.7);
    assert_eq!(cfg.sources.get("temperature"), Some(&Source::User));
    assert_eq!(cfg.sources.get("dual_clip"), Some(&Source::User));
    assert_eq!(cfg.sources.get("clip_low"), Some(&Source::Preset));
    assert!(matches!(cfg.loss_config().unwrap().objective, ObjectiveConfig::PpoClip(c) if c.dual_clip == Some(10.0)));
    let err = TrainConfig::resolve(None, &[json!({"paper": "cfpo", "objective": "dgpo"})]).unwrap_err().to_string();
    assert!(err.contains("--paper cfpo") && err.contains("grpo, cfpo") && err.contains("`dgpo`"), "{err}");
}

#[test]
fn pretrained_models_get_their_own_learning_rate_unless_the_user_sets_one() {
    let tiny = TrainConfig::resolve(None, &[json!({"steps": 50})]).unwrap();
    assert_eq!((tiny.optim.lr, tiny.optim.warmup_steps), (3e-3, 0));
    assert_eq!(tiny.sources.get("lr"), Some(&Source::Default));
    assert_eq!(tiny.sources.get("steps"), Some(&Source::User));
    let gguf = TrainConfig::resolve(None, &[json!({"model": "m.gguf", "steps": 50})]).unwrap();
    assert_eq!((gguf.optim.lr, gguf.optim.warmup_steps), (1e-6, 5));
    assert_eq!(serde_json::to_value(gguf.optim.lr_schedule).unwrap(), json!("cosine"));
    assert_eq!(gguf.sources.get("lr"), Some(&Source::Model));
    assert_eq!(gguf.sources.get("lr_schedule"), Some(&Source::Model));
    let user = TrainConfig::resolve(None, &[json!({"model": "default"}), json!({"lr": 2e-5})]).unwrap();
    assert_eq!(user.optim.lr, 2e-5);
    assert_eq!(user.sources.get("lr"), Some(&Source::User));
    assert_eq!(user.sources.get("warmup_steps"), Some(&Source::Model));
    // A resumed run keeps what it resolved to; nothing is re-applied.
    let resumed = TrainConfig::resolve(Some(&gguf), &[json!({"steps": 80})]).unwrap();
    assert_eq!((resumed.optim.lr, resumed.run.steps, resumed.optim.warmup_steps), (1e-6, 80, 5));
    assert_eq!(resumed.sources.get("lr"), Some(&Source::Model));
}

#[test]
fn cpgd_epoch_correction_matches_a_hand_computation() {
    // Two responses; ε = 0.2. Weights clip(exp(prev - old), 0.8, 1.2):
    // exp(0.1) = 1.105171 (kept), exp(0.5) = 1.648721 → 1.2, exp(-0.5) = 0.606531 → 0.8, exp(0) = 1.
    let adv = vec![vec![2.0, 2.0], vec![-1.0]];
    let old: Vec<Vec<f32>> = vec![vec![-1.0, -2.0], vec![-0.5, -9.0]];
    let prev: Vec<Vec<f32>> = vec![vec![-0.9, -1.5], vec![-1.0, -3.0]];
    let old_rows: Vec<&[f32]> = old.iter().map(Vec::as_slice).collect();
    let (got, mean) = cpgd::epoch_corrected_advantages(&adv, &prev, &old_rows, 0.2).unwrap();
    let want = [vec![2.0 * 1.105_171, 2.0 * 1.2], vec![-0.8]];
    for (g, w) in got.iter().flatten().zip(want.iter().flatten()) {
        assert!((g - w).abs() < 1e-5, "{got:?} vs {want:?}");
    }
    assert!((mean - (1.105_171 + 1.2 + 0.8) / 3.0).abs() < 1e-5, "{mean}");
    assert!(cpgd::epoch_corrected_advantages(&adv, &prev[..1], &old_rows, 0.2).is_err());
    assert!(cpgd::epoch_corrected_advantages(&adv, &prev, &old_rows, 1.5).is_err());
}

#[test]
fn cpgd_epoch_correction_is_on_for_cpg_objectives_with_reuse() {
    let at = |objective: &str, iterations: usize, flag: Option<bool>| {
        let mut cfg = TrainConfig::default();
        (cfg.objective.objective, cfg.optim.iterations, cfg.optim.cpgd_epoch_correction) =
            (Objective::from_name(objective).unwrap(), iterations, flag);
        cfg.cpgd_epoch_correction_eps()
    };
    assert_eq!(at("cpgd", 8, None).unwrap(), Some(0.2));
    assert_eq!(at("cpgd-official", 2, None).unwrap(), Some(0.2));
    assert_eq!(at("cpgd", 1, None).unwrap(), None);
    assert_eq!(at("cpgd", 8, Some(false)).unwrap(), None);
    assert_eq!(at("grpo", 8, None).unwrap(), None);
    assert!(at("grpo", 8, Some(true)).unwrap_err().to_string().contains("CPG objective"));
}

#[test]
fn clip_filter_weight_is_reachable_with_a_settable_cap() {
    // Four prompts of two responses, one with reward variance: P/P≠0 = 4, capped at c_ω.
    let rewards = [1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0];
    let groups = [0, 0, 1, 1, 2, 2, 3, 3];
    let ro = Rollout { rewards: &rewards, groups: &groups, lengths: &[1; 8], kl: None };
    for (cap, w) in [(None, 3.0), (Some(2.5), 2.5), (Some(10.0), 4.0)] {
        let cfg = TrainConfig::resolve(
            None,
            &[json!({"objective": "cpgd", "overrides": {"advantage": "cpgd-clip-filter", "cpgd_weight_cap": cap}})],
        )
        .unwrap();
        let est = cfg.loss_config().unwrap().advantage;
        assert_eq!(est, Estimator::Cpgd { weight: CpgdWeight::ClipFilterLike { cap: cap.unwrap_or(3.0) } });
        let a = advantage::compute(&est, &ro).unwrap();
        assert!((a[0][0] - w * 0.5).abs() < 1e-12 && (a[1][0] + w * 0.5).abs() < 1e-12, "{cap:?}: {a:?}");
        assert_eq!(a[2][0], 0.0);
    }
    let err = TrainConfig::resolve(None, &[json!({"objective": "cpgd", "overrides": {"cpgd_weight_cap": 2.0}})])
        .unwrap_err()
        .to_string();
    assert!(err.contains("cpgd-clip-filter"), "{err}");
}

#[test]
fn dapo_overlong_buffer_is_a_fifth_of_the_length() {
    let cfg = TrainConfig::default().merged(&json!({"objective": "dapo", "max_new_tokens": 20480})).unwrap();
    assert_eq!(cfg.overlong_buffer_tokens(), 4096);
}

#[test]
fn truncated_importance_weights_match_a_hand_computation() {
    // w = min(exp(old - sampler), 1.5): exp(0.5) = 1.6487 -> 1.5; exp(-1) = 0.367879; exp(0) = 1.
    let mut adv = vec![vec![2.0, 2.0], vec![-1.0]];
    let old: Vec<Vec<f32>> = vec![vec![-1.0, -2.0], vec![-0.5]];
    let sampler = vec![vec![-1.5, -1.0], vec![-0.5]];
    let rows: Vec<&[f32]> = old.iter().map(Vec::as_slice).collect();
    let mean = advantage::truncated_is(&mut adv, &rows, &sampler, 1.5);
    let want = [3.0, 2.0 * 0.367_879, -1.0];
    for (g, w) in adv.iter().flatten().zip(want) {
        assert!((g - w).abs() < 1e-5, "{adv:?}");
    }
    assert!((mean - (1.5 + 0.367_879 + 1.0) / 3.0).abs() < 1e-5, "{mean}");
}
