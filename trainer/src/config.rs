//! The resolved training configuration: one typed struct with a default and a doc line per field,
//! written to `RUN_DIR/config.json`; and how the objective's registry defaults are overridden.
//!
//! Precedence: built-in defaults < `--config FILE.json` < command-line flags.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::advantage::{CpgdWeight, Estimator, GpgNorm, RewardEncoding, Whitening};
use crate::aggregate::AggMode;
use crate::error::{Error, Result};
use crate::kl::{KlEstimator, RefKl};
use crate::objectives::{DriftConfig, LossConfig, Objective, ObjectiveConfig};

/// Every setting of a training run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrainConfig {
    /// Objective name from the registry (`rltrain objectives`).
    pub objective: String,
    /// Overrides of the objective's hyper-parameters (JSON key `overrides`).
    pub overrides: ObjectiveOverrides,
    /// `default` (SmolLM2-135M-Instruct), a `.gguf` file, a Hugging Face folder, or `tiny`.
    pub model: String,
    /// Width of the `tiny` model.
    pub tiny_hidden: usize,
    /// Layers of the `tiny` model.
    pub tiny_layers: usize,
    /// Tokenizer of the `tiny` model: `auto` (the task's own alphabet for `task:` data, else
    /// bytes), `task` or `byte`.
    pub tokenizer: String,
    /// `FILE.jsonl`, a suite name, or `task:NAME`.
    pub data: String,
    /// Field holding the problem in JSONL files.
    pub problem_field: String,
    /// Field holding the gold answer in JSONL files.
    pub answer_field: String,
    /// Problems generated for `task:` data.
    pub task_size: usize,
    /// How a problem becomes a prompt: `auto` (raw for `tiny`, else chat), `raw` or `chat`.
    pub prompt_template: String,
    /// Instruction appended to the problem in chat prompts.
    pub instruction: String,
    /// Run directory.
    pub out: PathBuf,
    /// Training steps (one rollout batch each).
    pub steps: u64,
    /// Prompts per step (P).
    pub prompts_per_step: usize,
    /// Responses per prompt (G).
    pub group_size: usize,
    /// Passes over each rollout batch (sample reuse, μ).
    pub iterations: usize,
    /// Mini-batches per pass (one optimizer step each).
    pub mini_batches: usize,
    /// Rows per forward/backward (gradient accumulation); 0 = whole mini-batch.
    pub micro_batch_size: usize,
    /// Sampling temperature (log-probs are taken at the same temperature).
    pub temperature: f64,
    /// Nucleus sampling mass (1 = off).
    pub top_p: f64,
    /// Most tokens per response (also Dr.GRPO's `L_max`).
    pub max_new_tokens: usize,
    /// Rows decoded together during rollouts.
    pub gen_batch: usize,
    /// `zero-one` or `plus-minus-one`; `auto` = ±1 for dapo and dgpo, else {0,1}.
    pub reward: String,
    /// Weight of the `<think>..</think><answer>..</answer>` format reward (0 = off).
    pub format_reward: f64,
    /// DAPO dynamic sampling (drop groups with equal rewards and refill); `None` = on for dapo.
    pub dynamic_sampling: Option<bool>,
    /// Extra generation rounds dynamic sampling may use to refill the batch.
    pub dynamic_sampling_rounds: usize,
    /// DAPO soft overlong punishment buffer `L_cache` in tokens; `None` = max_new_tokens/4 for
    /// dapo, off otherwise; 0 = off.
    pub overlong_buffer: Option<usize>,
    /// Peak learning rate.
    pub lr: f64,
    /// `constant`, `linear` (decay to `min_lr_ratio`) or `cosine`; all with linear warm-up.
    pub lr_schedule: String,
    /// Warm-up steps.
    pub warmup_steps: u64,
    /// Final learning rate as a fraction of `lr` (linear and cosine).
    pub min_lr_ratio: f64,
    /// Decoupled weight decay (matrices only; norms and biases are not decayed).
    pub weight_decay: f64,
    /// AdamW β1.
    pub adam_beta1: f64,
    /// AdamW β2.
    pub adam_beta2: f64,
    /// AdamW ε.
    pub adam_eps: f64,
    /// Clip the gradient's global L2 norm to this (0 = off).
    pub grad_clip: f64,
    /// Seed of everything random (model init, prompt order, sampling, shuffles).
    pub seed: u64,
    /// `cpu`, `cuda`, `cuda:N` or `auto`.
    pub device: String,
    /// Checkpoint every N steps (0 = only at the end).
    pub save_every: u64,
    /// Rollout samples written to rollouts.jsonl per step.
    pub save_rollouts: usize,
    /// One-line summary on stderr every N steps (0 = off).
    pub log_every: u64,
    /// Consecutive non-finite updates that stop the run.
    pub max_bad_steps: usize,
    /// Evaluate every N steps (0 = off).
    pub eval_every: u64,
    /// Evaluation data (files, suites or `task:NAME`), comma-separated on the command line.
    pub eval_data: Vec<String>,
    /// Samples per evaluation problem (k of avg@k and pass@k).
    pub eval_k: usize,
    /// Problems per evaluation set (0 = all).
    pub eval_limit: usize,
    /// Sampling temperature of evaluations.
    pub eval_temperature: f64,
    /// Testing hook: make the loss of the first update of this step non-finite.
    pub inject_nan_at_step: Option<u64>,
}

impl Default for TrainConfig {
    fn default() -> Self {
        Self {
            objective: "grpo".into(),
            overrides: ObjectiveOverrides::default(),
            model: "tiny".into(),
            tiny_hidden: 64,
            tiny_layers: 2,
            tokenizer: "auto".into(),
            data: "task:succ".into(),
            problem_field: "problem".into(),
            answer_field: "answer".into(),
            task_size: 1000,
            prompt_template: "auto".into(),
            instruction: "Please reason step by step, and put your final answer within \\boxed{}.".into(),
            out: PathBuf::from("runs/rltrain"),
            steps: 100,
            prompts_per_step: 8,
            group_size: 8,
            iterations: 1,
            mini_batches: 1,
            micro_batch_size: 0,
            temperature: 1.0,
            top_p: 1.0,
            max_new_tokens: 1,
            gen_batch: 64,
            reward: "auto".into(),
            format_reward: 0.0,
            dynamic_sampling: None,
            dynamic_sampling_rounds: 2,
            overlong_buffer: None,
            lr: 3e-3,
            lr_schedule: "constant".into(),
            warmup_steps: 0,
            min_lr_ratio: 0.0,
            weight_decay: 0.0,
            adam_beta1: 0.9,
            adam_beta2: 0.99,
            adam_eps: 1e-8,
            grad_clip: 1.0,
            seed: 0,
            device: "cpu".into(),
            save_every: 0,
            save_rollouts: 4,
            log_every: 10,
            max_bad_steps: 5,
            eval_every: 0,
            eval_data: Vec::new(),
            eval_k: 4,
            eval_limit: 64,
            eval_temperature: 1.0,
            inject_nan_at_step: None,
        }
    }
}

/// Overrides of the registry defaults (`None` keeps the objective's own value).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ObjectiveOverrides {
    /// Lower clip width `ε_l` (PPO family, DGPO, GPPO, ASPO, GSPO, CISPO, Clip-Cov).
    pub clip_low: Option<f64>,
    /// Upper clip width `ε_h`.
    pub clip_high: Option<f64>,
    /// Single width `ε` (CPG/CPGD, CFPO); for two-sided kernels sets both sides.
    pub clip_eps: Option<f64>,
    /// Dual-clip constant `c` (PPO family, GPPO).
    pub dual_clip: Option<f64>,
    /// CPGD tight-to-loose factor `λ` (1 = constant width).
    pub cpg_lambda: Option<f64>,
    /// CPGD drift coefficient `α` (0 = no drift term).
    pub drift_coef: Option<f64>,
    /// Cap `c` of the drift gradient coefficient.
    pub drift_clip: Option<f64>,
    /// DGPO `n` (left boundary power).
    pub dgpo_n: Option<f64>,
    /// DGPO `m` (right boundary root).
    pub dgpo_m: Option<f64>,
    /// Reference-KL coefficient `β` (0 = no reference model).
    pub kl_coef: Option<f64>,
    /// Reference-KL estimator: k1, k2, k3, low-var-kl, k3+.
    pub kl_estimator: Option<String>,
    /// Entropy bonus coefficient.
    pub entropy_coef: Option<f64>,
    /// Aggregation: token-mean, seq-mean-token-mean, seq-mean-token-sum, seq-mean-token-sum-norm,
    /// dr-grpo, group-token-mean.
    pub aggregation: Option<String>,
    /// Advantage estimator: group-norm, mean-centred, loo, reinforce++, reinforce++-baseline,
    /// gpg, cpgd, opo, raw.
    pub advantage: Option<String>,
}

/// Names accepted by `--kl-estimator`.
pub const KL_ESTIMATORS: [&str; 5] = ["k1", "k2", "k3", "low-var-kl", "k3+"];
/// Names accepted by `--aggregation`.
pub const AGGREGATIONS: [&str; 6] = [
    "token-mean",
    "seq-mean-token-mean",
    "seq-mean-token-sum",
    "seq-mean-token-sum-norm",
    "dr-grpo",
    "group-token-mean",
];
/// Names accepted by `--advantage`.
pub const ADVANTAGES: [&str; 9] =
    ["group-norm", "mean-centred", "loo", "reinforce++", "reinforce++-baseline", "gpg", "cpgd", "opo", "raw"];

fn kl_estimator(name: &str) -> Result<KlEstimator> {
    Ok(match name {
        "k1" => KlEstimator::K1,
        "k2" => KlEstimator::K2,
        "k3" => KlEstimator::K3,
        "low-var-kl" | "low_var_kl" => KlEstimator::LowVarK3,
        "k3+" => KlEstimator::K3Plus,
        other => {
            return Err(Error::InvalidConfig(format!(
                "unknown KL estimator `{other}`; valid: {}",
                KL_ESTIMATORS.join(", ")
            )))
        }
    })
}

fn aggregation(name: &str, l_max: usize) -> Result<AggMode> {
    Ok(match name {
        "token-mean" => AggMode::TokenMean,
        "seq-mean-token-mean" => AggMode::SeqMeanTokenMean,
        "seq-mean-token-sum" => AggMode::SeqMeanTokenSum,
        "seq-mean-token-sum-norm" => AggMode::SeqMeanTokenSumNorm { l_norm: None },
        "dr-grpo" => AggMode::DrGrpo { l_max },
        "group-token-mean" => AggMode::GroupTokenMean,
        other => {
            return Err(Error::InvalidConfig(format!(
                "unknown aggregation `{other}`; valid: {}",
                AGGREGATIONS.join(", ")
            )))
        }
    })
}

fn advantage(name: &str) -> Result<Estimator> {
    Ok(match name {
        "group-norm" => Estimator::GroupNorm { eps_std: 1e-6, unbiased: true },
        "mean-centred" | "mean-centered" => Estimator::MeanCentred,
        "loo" => Estimator::Loo { kl_coef: 0.0, whitening: None },
        "reinforce++" => Estimator::ReinforcePP { kl_coef: 0.01, gamma: 1.0, whitening: Whitening::Biased },
        "reinforce++-baseline" => Estimator::ReinforcePPBaseline { whitening: Whitening::Biased },
        "gpg" => Estimator::Gpg { f_norm: GpgNorm::One },
        "cpgd" => Estimator::Cpgd { weight: CpgdWeight::Std { eps: 1e-6 } },
        "opo" => Estimator::Opo,
        "raw" => Estimator::Raw,
        other => {
            return Err(Error::InvalidConfig(format!(
                "unknown advantage estimator `{other}`; valid: {}",
                ADVANTAGES.join(", ")
            )))
        }
    })
}

impl ObjectiveOverrides {
    /// The objective's defaults with these overrides applied; Dr.GRPO's `L_max` is `l_max`.
    pub fn apply(&self, objective: &Objective, l_max: usize) -> Result<LossConfig> {
        let mut cfg = objective.defaults();
        let name = objective.name;
        let kernel = cfg.objective.kernel();
        let unsupported =
            |flag: &str| Error::InvalidConfig(format!("objective `{name}` ({kernel}) has no `{flag}` parameter"));
        let lo = self.clip_low.or(self.clip_eps);
        let hi = self.clip_high.or(self.clip_eps);
        if lo.is_some() || hi.is_some() {
            let set = |l: &mut f64, h: &mut f64| {
                if let Some(v) = lo {
                    *l = v;
                }
                if let Some(v) = hi {
                    *h = v;
                }
            };
            match &mut cfg.objective {
                ObjectiveConfig::PpoClip(c) => set(&mut c.eps_low, &mut c.eps_high),
                ObjectiveConfig::Dgpo(c) => set(&mut c.eps_low, &mut c.eps_high),
                ObjectiveConfig::Gppo(c) => set(&mut c.eps_low, &mut c.eps_high),
                ObjectiveConfig::Aspo(c) => set(&mut c.eps_low, &mut c.eps_high),
                ObjectiveConfig::Gspo(c) | ObjectiveConfig::GspoToken(c) => set(&mut c.eps_low, &mut c.eps_high),
                ObjectiveConfig::ClipCov(c) => set(&mut c.eps_low, &mut c.eps_high),
                ObjectiveConfig::Cispo(c) => {
                    if lo.is_some() {
                        c.eps_low = lo;
                    }
                    if let Some(v) = hi {
                        c.eps_high = v;
                    }
                }
                ObjectiveConfig::Cpg(c) => match (self.clip_eps, self.clip_low, self.clip_high) {
                    (Some(e), None, None) => c.eps = e,
                    _ => {
                        return Err(Error::InvalidConfig(format!(
                            "objective `{name}` has one clip width: use --clip-eps"
                        )))
                    }
                },
                ObjectiveConfig::Cfpo(c) => match (self.clip_eps, self.clip_low, self.clip_high) {
                    (Some(e), None, None) => c.eps = e,
                    _ => return Err(Error::InvalidConfig(format!("objective `{name}` has one width: use --clip-eps"))),
                },
                _ => return Err(unsupported("clip")),
            }
        }
        if let Some(c) = self.dual_clip {
            match &mut cfg.objective {
                ObjectiveConfig::PpoClip(p) => p.dual_clip = Some(c),
                ObjectiveConfig::Gppo(p) => p.dual_clip = Some(c),
                _ => return Err(unsupported("dual-clip")),
            }
        }
        if let Some(l) = self.cpg_lambda {
            match &mut cfg.objective {
                ObjectiveConfig::Cpg(c) => c.lambda = l,
                _ => return Err(unsupported("cpg-lambda")),
            }
        }
        if self.dgpo_n.is_some() || self.dgpo_m.is_some() {
            match &mut cfg.objective {
                ObjectiveConfig::Dgpo(c) => {
                    c.n = self.dgpo_n.unwrap_or(c.n);
                    c.m = self.dgpo_m.unwrap_or(c.m);
                }
                _ => return Err(unsupported("dgpo-n/dgpo-m")),
            }
        }
        if self.drift_coef.is_some() || self.drift_clip.is_some() {
            let base = cfg.drift.unwrap_or_default();
            let d =
                DriftConfig { coef: self.drift_coef.unwrap_or(base.coef), clip: self.drift_clip.unwrap_or(base.clip) };
            cfg.drift = if d.coef == 0.0 { None } else { Some(d) };
        }
        if self.kl_coef.is_some() || self.kl_estimator.is_some() {
            let est = match &self.kl_estimator {
                Some(n) => kl_estimator(n)?,
                None => cfg.ref_kl.map_or(KlEstimator::K3, |k| k.estimator),
            };
            let coef = self.kl_coef.or(cfg.ref_kl.map(|k| k.coef)).unwrap_or(0.0);
            cfg.ref_kl = if coef == 0.0 { None } else { Some(RefKl { estimator: est, coef }) };
        }
        if let Some(c) = self.entropy_coef {
            cfg.entropy_coef = c;
        }
        if let Some(a) = &self.aggregation {
            cfg.agg = aggregation(a, l_max)?;
        }
        if let AggMode::DrGrpo { l_max: l } = &mut cfg.agg {
            *l = l_max;
        }
        if let Some(a) = &self.advantage {
            cfg.advantage = advantage(a)?;
        }
        cfg.validate()?;
        Ok(cfg)
    }
}

impl TrainConfig {
    /// Parses a JSON config file's text (unknown keys are an error, naming the key).
    pub fn from_json(text: &str) -> Result<Self> {
        serde_json::from_str(text).map_err(|e| Error::InvalidConfig(format!("config file: {e}")))
    }

    /// Layers `overlay` (a JSON object of set fields) over this config.
    pub fn merged(&self, overlay: &Value) -> Result<Self> {
        fn deep_merge(base: &mut Value, overlay: &Value) {
            match (base, overlay) {
                (Value::Object(b), Value::Object(o)) => {
                    for (k, v) in o {
                        match b.get_mut(k) {
                            Some(slot) if slot.is_object() && v.is_object() => deep_merge(slot, v),
                            _ => {
                                b.insert(k.clone(), v.clone());
                            }
                        }
                    }
                }
                (b, o) => *b = o.clone(),
            }
        }
        let mut base = serde_json::to_value(self).map_err(|e| Error::InvalidConfig(e.to_string()))?;
        deep_merge(&mut base, overlay);
        serde_json::from_value(base).map_err(|e| Error::InvalidConfig(format!("{e}")))
    }

    /// The registry entry of `objective`.
    pub fn objective(&self) -> Result<&'static Objective> {
        Objective::from_name(&self.objective)
    }

    /// The loss recipe: registry defaults plus overrides.
    pub fn loss_config(&self) -> Result<LossConfig> {
        self.overrides.apply(self.objective()?, self.max_new_tokens)
    }

    /// The binary reward encoding.
    pub fn reward_encoding(&self) -> Result<RewardEncoding> {
        match self.reward.as_str() {
            "auto" if matches!(self.objective.as_str(), "dapo" | "dgpo") => Ok(RewardEncoding::PlusMinusOne),
            "auto" | "zero-one" => Ok(RewardEncoding::ZeroOne),
            "plus-minus-one" => Ok(RewardEncoding::PlusMinusOne),
            other => Err(Error::InvalidConfig(format!(
                "unknown reward encoding `{other}`; valid: auto, zero-one, plus-minus-one"
            ))),
        }
    }

    /// Whether DAPO dynamic sampling is on.
    pub fn dynamic_sampling_on(&self) -> bool {
        self.dynamic_sampling.unwrap_or(self.objective == "dapo")
    }

    /// The overlong-punishment buffer `L_cache` (0 = off).
    pub fn overlong_buffer_tokens(&self) -> usize {
        self.overlong_buffer.unwrap_or(if self.objective == "dapo" { self.max_new_tokens / 4 } else { 0 })
    }

    /// Checks ranges that would otherwise fail deep inside the loop.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::InvalidConfig(m));
        self.loss_config()?;
        self.reward_encoding()?;
        if self.prompts_per_step == 0 || self.group_size == 0 {
            return bad("--prompts-per-step and --group-size must be at least 1".into());
        }
        if self.iterations == 0 || self.mini_batches == 0 {
            return bad("--iterations and --mini-batches must be at least 1".into());
        }
        if self.mini_batches > self.prompts_per_step * self.group_size {
            return bad(format!(
                "--mini-batches {} exceeds the {} responses of a step",
                self.mini_batches,
                self.prompts_per_step * self.group_size
            ));
        }
        if self.max_new_tokens == 0 {
            return bad("--max-new-tokens must be at least 1".into());
        }
        if !(self.temperature.is_finite() && self.temperature > 0.0) {
            return bad(format!("--temperature must be > 0 (log-probs are taken at it), got {}", self.temperature));
        }
        if !(self.top_p > 0.0 && self.top_p <= 1.0) {
            return bad(format!("--top-p must be in (0, 1], got {}", self.top_p));
        }
        if !(self.lr.is_finite() && self.lr >= 0.0) {
            return bad(format!("--lr must be finite and >= 0, got {}", self.lr));
        }
        if !matches!(self.lr_schedule.as_str(), "constant" | "linear" | "cosine") {
            return bad(format!("unknown --lr-schedule `{}`; valid: constant, linear, cosine", self.lr_schedule));
        }
        if !matches!(self.prompt_template.as_str(), "auto" | "raw" | "chat") {
            return bad(format!("unknown --prompt-template `{}`; valid: auto, raw, chat", self.prompt_template));
        }
        if !matches!(self.tokenizer.as_str(), "auto" | "task" | "byte") {
            return bad(format!("unknown --tokenizer `{}`; valid: auto, task, byte", self.tokenizer));
        }
        if !(0.0..1.0).contains(&self.adam_beta1) || !(0.0..1.0).contains(&self.adam_beta2) {
            return bad("AdamW betas must be in [0, 1)".into());
        }
        if self.max_bad_steps == 0 {
            return bad("--max-bad-steps must be at least 1".into());
        }
        if self.eval_every > 0 && self.eval_data.is_empty() {
            return bad("--eval-every needs --eval-data".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_reach_the_kernel_and_terms() {
        let mut c = TrainConfig { objective: "dgpo".into(), ..TrainConfig::default() };
        c.overrides.clip_low = Some(0.1);
        c.overrides.dgpo_m = Some(3.0);
        c.overrides.kl_coef = Some(0.05);
        let l = c.loss_config().unwrap();
        match l.objective {
            ObjectiveConfig::Dgpo(d) => assert_eq!((d.eps_low, d.eps_high, d.n, d.m), (0.1, 0.2, 1.0, 3.0)),
            other => panic!("{other:?}"),
        }
        assert_eq!(l.ref_kl, Some(RefKl { estimator: KlEstimator::K3, coef: 0.05 }));
        // GRPO's reference KL can be switched off.
        let mut g = TrainConfig::default();
        g.overrides.kl_coef = Some(0.0);
        assert_eq!(g.loss_config().unwrap().ref_kl, None);
        // Dr.GRPO's L_max is the generation length.
        let d = TrainConfig { objective: "dr-grpo".into(), max_new_tokens: 7, ..TrainConfig::default() };
        assert_eq!(d.loss_config().unwrap().agg, AggMode::DrGrpo { l_max: 7 });
    }

    #[test]
    fn mismatched_overrides_are_errors() {
        let cases: [(&str, ObjectiveOverrides); 4] = [
            ("grpo", ObjectiveOverrides { dgpo_n: Some(2.0), ..Default::default() }),
            ("cpgd", ObjectiveOverrides { clip_low: Some(0.1), ..Default::default() }),
            ("dgpo", ObjectiveOverrides { aggregation: Some("tokenmean".into()), ..Default::default() }),
            ("gspo", ObjectiveOverrides { aggregation: Some("token-mean".into()), ..Default::default() }),
        ];
        for (objective, overrides) in cases {
            let c = TrainConfig { objective: objective.into(), overrides: overrides.clone(), ..TrainConfig::default() };
            assert!(c.loss_config().is_err(), "{objective} {overrides:?}");
        }
    }

    #[test]
    fn json_layers_and_unknown_keys() {
        let c = TrainConfig::from_json(r#"{"objective": "cpgd", "overrides": {"clip_eps": 0.3}, "steps": 5}"#).unwrap();
        assert_eq!((c.objective.as_str(), c.overrides.clip_eps, c.steps), ("cpgd", Some(0.3), 5));
        let m =
            c.merged(&serde_json::json!({"steps": 9, "overrides": {"dual_clip": null, "drift_coef": 0.1}})).unwrap();
        assert_eq!((m.steps, m.overrides.clip_eps, m.overrides.drift_coef), (9, Some(0.3), Some(0.1)));
        assert!(TrainConfig::from_json(r#"{"stpes": 5}"#).is_err());
        let round = TrainConfig::from_json(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(round, m);
    }
}
