//! The resolved training configuration: one typed struct with a default and a doc line per field,
//! written to `RUN_DIR/config.json`; how the objective's registry defaults are overridden; and
//! where each value came from ([`Source`]).
//!
//! Precedence: built-in defaults < paper preset (`--paper`) and model defaults (a pretrained
//! model's learning rate and schedule) < `--config FILE.json` < command-line flags. A preset or
//! model default never replaces a value the user set.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::advantage::{CpgdWeight, Estimator};
use crate::aggregate::AggMode;
use crate::config_values::{self as values, by_flag_name};
use crate::error::{Error, Result};
use crate::kl::{KlEstimator, RefKl};
use crate::objectives::{DriftConfig, LossConfig, Objective, ObjectiveConfig, Param};
use crate::optim::ScheduleKind;
pub use crate::presets::Paper;
use rlbase::DeviceSpec;
use rlverify::{Extraction, LastNumber, RewardKind, Truncated};

/// Every setting of a training run, grouped as `rltrain help train` groups its flags; each field
/// is named as its flag (`--lr` is `optim.lr`), and `config.json` keeps the groups.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrainConfig {
    /// Run: how the run is kept: where it writes, how long it runs, its seed and device, what it logs and saves.
    pub run: RunSettings,
    /// Model: the policy: a pretrained model or the seeded `tiny` one.
    pub model: ModelSettings,
    /// Data: the training problems and how they become prompts.
    pub data: DataSettings,
    /// Rollout: sampling the rollout batch and rewarding it.
    pub rollout: RolloutSettings,
    /// Optimisation: passes over the batch, the optimizer and its schedule.
    pub optim: OptimSettings,
    /// Objective: the objective of the registry, a paper preset, and overrides of its hyper-parameters.
    pub objective: ObjectiveSettings,
    /// Evaluation: periodic evaluation.
    pub eval: EvalSettings,
    /// Where each value came from, by flag name (`lr`, `clip_low`); filled by
    /// [`TrainConfig::resolve`].
    pub sources: BTreeMap<String, Source>,
    /// Settings changed when the run was resumed (`rltrain --resume DIR --allow-changes`).
    pub changes: Vec<ResumeChange>,
    /// The memory plan the run chose (micro-batch size, recomputation) and the figures behind it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<crate::memory::plan::MemoryPlan>,
}

/// Run (`run` in `config.json`): how the run is kept: where it writes, how long it runs, its seed and device, what it logs and saves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunSettings {
    /// Run directory.
    pub out: PathBuf,
    /// Training steps (one rollout batch each).
    pub steps: u64,
    /// Seed of everything random (model init, prompt order, sampling, shuffles).
    pub seed: u64,
    /// `cpu`, `cuda`, `cuda:N` or `auto` (checked where it is typed: [`DeviceSpec`]).
    pub device: DeviceSpec,
    /// Checkpoint every N steps (0 = only at the end).
    pub save_every: u64,
    /// Checkpoints kept on disk, newest first (0 = all).
    pub keep_checkpoints: usize,
    /// Rollout samples written to rollouts.jsonl per step.
    pub save_rollouts: usize,
    /// One-line summary on stderr every N steps (0 = off).
    pub log_every: u64,
    /// Consecutive non-finite updates that stop the run.
    pub max_bad_steps: usize,
    /// Testing hook: make the loss of the first update of this step non-finite.
    pub inject_nan_at_step: Option<u64>,
}

impl Default for RunSettings {
    fn default() -> Self {
        Self {
            out: PathBuf::from("runs/rltrain"),
            steps: 100,
            seed: 0,
            device: DeviceSpec::Cpu,
            save_every: 0,
            keep_checkpoints: 0,
            save_rollouts: 4,
            log_every: 10,
            max_bad_steps: 5,
            inject_nan_at_step: None,
        }
    }
}

/// Model (`model` in `config.json`): the policy: a pretrained model or the seeded `tiny` one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelSettings {
    /// `default` (SmolLM2-135M-Instruct), a `.gguf` file, a Hugging Face folder, or `tiny`.
    pub model: String,
    /// Width of the `tiny` model.
    pub tiny_hidden: usize,
    /// Layers of the `tiny` model.
    pub tiny_layers: usize,
    /// Tokenizer of the `tiny` model.
    pub tokenizer: TokenizerChoice,
}

impl Default for ModelSettings {
    fn default() -> Self {
        Self { model: "tiny".into(), tiny_hidden: 64, tiny_layers: 2, tokenizer: TokenizerChoice::Auto }
    }
}

impl ModelSettings {
    /// The tiny model's shape: at least one layer, and a width of 4 attention heads of an even
    /// size (a multiple of 8).
    fn check_tiny(&self) -> Result<()> {
        if self.tiny_layers == 0 {
            return Err(Error::invalid_config("--tiny-layers must be at least 1"));
        }
        if self.tiny_hidden == 0 || !self.tiny_hidden.is_multiple_of(8) {
            return Err(Error::invalid_config(format!(
                "--tiny-hidden must be a positive multiple of 8 (4 attention heads of an even width), got {}",
                self.tiny_hidden
            )));
        }
        Ok(())
    }
}

/// Data (`data` in `config.json`): the training problems and how they become prompts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DataSettings {
    /// `FILE.jsonl`, a suite name, or `task:NAME`.
    pub data: String,
    /// Field holding the problem in JSONL files.
    pub problem_field: String,
    /// Field holding the gold answer in JSONL files.
    pub answer_field: String,
    /// Problems generated for `task:` data.
    pub task_size: usize,
    /// How a problem becomes a prompt.
    pub prompt_template: PromptTemplate,
    /// Instruction appended to the problem in chat prompts.
    pub instruction: String,
}

impl Default for DataSettings {
    fn default() -> Self {
        Self {
            data: "task:succ".into(),
            problem_field: "problem".into(),
            answer_field: "answer".into(),
            task_size: 1000,
            prompt_template: PromptTemplate::Auto,
            instruction: "Please reason step by step, and put your final answer within \\boxed{}.".into(),
        }
    }
}

/// Rollout (`rollout` in `config.json`): sampling the rollout batch and rewarding it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RolloutSettings {
    /// Prompts per step (P).
    pub prompts_per_step: usize,
    /// Responses per prompt (G).
    pub group_size: usize,
    /// Sampling temperature (log-probs are taken at the same temperature).
    pub temperature: f64,
    /// Nucleus sampling mass (1 = off).
    pub top_p: f64,
    /// Most tokens per response (also Dr.GRPO's `L_max`).
    pub max_new_tokens: usize,
    /// Rows decoded together during rollouts.
    pub gen_batch: usize,
    /// How rollouts decode on the CPU.
    pub rollout_decode: RolloutDecode,
    /// Truncated importance correction of the sampler/trainer mismatch: with quantized rollouts,
    /// each token's advantage is weighted by `min(π_old/π_sampler, C)` (`None` = off).
    pub tis_cap: Option<f64>,
    /// Reward encoding of the verdict.
    pub reward: RewardChoice,
    /// Which readings of a response count as its answer (`--extract`, as in `rlverify score`).
    #[serde(with = "by_flag_name")]
    pub extract: Extraction,
    /// When the last number of a response is its answer (`--last-number`, as in `rlverify score`).
    #[serde(with = "by_flag_name")]
    pub last_number: LastNumber,
    /// What a response cut off mid-derivation answers (`--truncated`, as in `rlverify score`).
    #[serde(with = "by_flag_name")]
    pub truncated: Truncated,
    /// Weight of the `<think>..</think><answer>..</answer>` format reward (0 = off).
    pub format_reward: f64,
    /// DAPO dynamic sampling (drop groups with equal rewards and refill); `None` = the objective's
    /// default (`Shaping::dynamic_sampling`: on for dapo).
    pub dynamic_sampling: Option<bool>,
    /// Extra generation rounds dynamic sampling may use to refill the batch.
    pub dynamic_sampling_rounds: usize,
    /// DAPO soft overlong punishment buffer `L_cache` in tokens; `None` = max_new_tokens/5 for
    /// dapo (DAPO arXiv:2503.14476 §3.4: 4096 of 20480), off otherwise; 0 = off.
    pub overlong_buffer: Option<usize>,
}

impl Default for RolloutSettings {
    fn default() -> Self {
        Self {
            prompts_per_step: 8,
            group_size: 8,
            temperature: 1.0,
            top_p: 1.0,
            max_new_tokens: 1,
            gen_batch: 64,
            rollout_decode: RolloutDecode::Auto,
            tis_cap: None,
            reward: RewardChoice::Auto,
            extract: rlverify::Config::default().extract,
            last_number: rlverify::Config::default().last_number,
            truncated: rlverify::Config::default().truncated,
            format_reward: 0.0,
            dynamic_sampling: None,
            dynamic_sampling_rounds: 2,
            overlong_buffer: None,
        }
    }
}

/// Optimisation (`optim` in `config.json`): passes over the batch, the optimizer and its schedule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OptimSettings {
    /// Passes over each rollout batch (sample reuse, μ).
    pub iterations: usize,
    /// Mini-batches per pass (one optimizer step each).
    pub mini_batches: usize,
    /// Rows per forward/backward (gradient accumulation); 0 = whole mini-batch; `None` = the
    /// largest that fits in memory ([`crate::memory::plan`]).
    pub micro_batch_size: Option<usize>,
    /// Activation recomputation: keep only each decoder layer's input in the forward and rerun
    /// the layer in the backward (same gradients; less memory, one more forward of the layers);
    /// `None` = only when one row does not fit without it.
    pub recompute_activations: Option<bool>,
    /// CPGD's multi-epoch correction (arXiv:2505.12504 §6.1): from the second pass over a batch on,
    /// the advantage is weighted by `clip(sg π_{m-1}/π_old, 1-ε, 1+ε)`; `None` = on for the CPG
    /// objectives (cpg, cpgd, cpgd-official) when `iterations > 1`.
    pub cpgd_epoch_correction: Option<bool>,
    /// Peak learning rate.
    pub lr: f64,
    /// Schedule after the linear warm-up.
    pub lr_schedule: ScheduleKind,
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
}

impl Default for OptimSettings {
    fn default() -> Self {
        Self {
            iterations: 1,
            mini_batches: 1,
            micro_batch_size: None,
            recompute_activations: None,
            cpgd_epoch_correction: None,
            lr: 3e-3,
            lr_schedule: ScheduleKind::Constant,
            warmup_steps: 0,
            min_lr_ratio: 0.0,
            weight_decay: 0.0,
            adam_beta1: 0.9,
            adam_beta2: 0.99,
            adam_eps: 1e-8,
            grad_clip: 1.0,
        }
    }
}

/// Objective (`objective` in `config.json`): the objective of the registry, a paper preset, and overrides of its hyper-parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ObjectiveSettings {
    /// Objective name from the registry (`rltrain objectives`).
    pub objective: String,
    /// Paper preset: that paper's settings for `objective` (`rltrain objectives` lists them).
    pub paper: Option<Paper>,
    /// Overrides of the objective's hyper-parameters (JSON key `overrides`).
    pub overrides: ObjectiveOverrides,
}

impl Default for ObjectiveSettings {
    fn default() -> Self {
        Self { objective: "grpo".into(), paper: None, overrides: ObjectiveOverrides::default() }
    }
}

/// Evaluation (`eval` in `config.json`): periodic evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EvalSettings {
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
}

impl Default for EvalSettings {
    fn default() -> Self {
        Self { eval_every: 0, eval_data: Vec::new(), eval_k: 4, eval_limit: 64, eval_temperature: 1.0 }
    }
}

/// A setting changed on resume, as recorded in `config.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResumeChange {
    /// The checkpoint step the run resumed from.
    pub step: u64,
    /// The setting, by flag name (`lr`, `clip_low`).
    pub field: String,
    /// Its value before.
    pub from: Value,
    /// Its value after.
    pub to: Value,
}

/// Settings a resumed run may change freely: how long it runs, where and how it logs, evaluates
/// and saves, and how the work is split in memory. Any other change alters the experiment.
pub const FREE_ON_RESUME: [&str; 19] = [
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
    "sources",
    "changes",
];

/// Where a resolved value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// The built-in default.
    Default,
    /// The `--paper` preset.
    Preset,
    /// The defaults of a pretrained model (learning rate and schedule).
    Model,
    /// The user: a `--config` file or a flag.
    User,
}

/// `--tokenizer` of the tiny model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum TokenizerChoice {
    /// The task's own alphabet for `task:` data, else bytes.
    Auto,
    /// The task's alphabet (needs `task:` data).
    Task,
    /// Byte-level.
    Byte,
}

/// `--prompt-template`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum PromptTemplate {
    /// Raw for `tiny`, chat otherwise.
    Auto,
    /// The problem text as is.
    Raw,
    /// The model's chat template with the instruction.
    Chat,
}

/// The names `--advantage` takes, in any case (a typo lists them, with the closest).
fn advantage_names() -> impl clap::builder::TypedValueParser<Value = String> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Estimator::NAMED.map(|(name, _)| name)).map(|name| name.to_lowercase())
}

/// `--reward`: the encoding of the verifier's verdict (`binary` and `signed` as in `rlverify
/// score`; `zero-one` and `plus-minus-one`, the names of older config files, are read too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RewardChoice {
    /// ±1 for dapo and dgpo (DAPO arXiv:2503.14476, DGPO arXiv:2603.14389), else {0,1}.
    Auto,
    /// Correct 1, wrong 0.
    #[serde(alias = "zero-one")]
    Binary,
    /// Correct +1, wrong −1.
    #[serde(alias = "plus-minus-one")]
    Signed,
}

impl From<RewardKind> for RewardChoice {
    fn from(kind: RewardKind) -> Self {
        match kind {
            RewardKind::Binary => Self::Binary,
            RewardKind::Signed => Self::Signed,
        }
    }
}

/// `--rollout-decode`: the decoder rollouts sample with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum RolloutDecode {
    /// Quantized for a pretrained model on the CPU, dense otherwise.
    Auto,
    /// The trainable network's own forward: the sampler's log-probs are `π_old`.
    Dense,
    /// rlengine's quantized CPU decoder (Q8_0 weights of the current policy, several times
    /// faster); `π_old` is then recomputed with one no-grad forward of the trainable model.
    Quantized,
}

/// `--aggregation`: how the per-token loss becomes a scalar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Aggregation {
    /// Mean over every valid token of the mini-batch.
    TokenMean,
    /// Token mean per response, then mean over responses.
    SeqMeanTokenMean,
    /// Token sum per response, then mean over responses.
    SeqMeanTokenSum,
    /// verl's token sum over a fixed length.
    SeqMeanTokenSumNorm,
    /// Dr.GRPO: token sum over `B·L_max`.
    DrGrpo,
    /// Token mean per prompt group, then mean over groups.
    GroupTokenMean,
}

/// `--kl-estimator` of the reference-KL term.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum KlName {
    /// `d = logπ - logπ_ref`.
    #[serde(rename = "k1")]
    #[value(name = "k1")]
    K1,
    /// `d²/2`.
    #[serde(rename = "k2")]
    #[value(name = "k2")]
    K2,
    /// `e^{-d} - 1 + d`.
    #[serde(rename = "k3")]
    #[value(name = "k3")]
    K3,
    /// verl's clamped k3.
    #[serde(rename = "low-var-kl", alias = "low_var_kl")]
    #[value(name = "low-var-kl", alias = "low_var_kl")]
    LowVarKl,
    /// Value of k3, gradient of k2.
    #[serde(rename = "k3+")]
    #[value(name = "k3+")]
    K3Plus,
}

/// Default cap `c_ω` of CPGD's clip-filter-like weight (CPGD official code, arXiv:2505.12504 §4.3).
pub use crate::advantage::CPGD_WEIGHT_CAP;

/// Overrides of the registry defaults (`None` keeps the objective's own value); also the
/// `Objective` flags of `rltrain train`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default, deny_unknown_fields)]
#[command(next_help_heading = "Objective")]
pub struct ObjectiveOverrides {
    /// Lower clip width ε_l (PPO family, DGPO, GPPO, ASPO, GSPO, CISPO, Clip-Cov).
    #[arg(long, value_parser = values::clip_width)]
    pub clip_low: Option<f64>,
    /// Upper clip width ε_h.
    #[arg(long, value_parser = values::clip_width)]
    pub clip_high: Option<f64>,
    /// Single width ε (CPG/CPGD, CFPO); for two-sided kernels sets both sides.
    #[arg(long, visible_alias = "cfpo-eps", value_parser = values::clip_width)]
    pub clip_eps: Option<f64>,
    /// Dual-clip constant c (PPO family, GPPO).
    #[arg(long, value_name = "C", value_parser = values::dual_clip)]
    pub dual_clip: Option<f64>,
    /// CPGD tight-to-loose factor λ (1 = constant width).
    #[arg(long, value_parser = values::positive)]
    pub cpg_lambda: Option<f64>,
    /// CPGD policy-drift coefficient α (0 = no drift term).
    #[arg(long, visible_alias = "drift-alpha", value_parser = values::non_negative)]
    pub drift_coef: Option<f64>,
    /// Cap c of the drift's gradient coefficient.
    #[arg(long, value_parser = values::positive)]
    pub drift_clip: Option<f64>,
    /// DGPO n (left-boundary power).
    #[arg(long, value_parser = values::positive)]
    pub dgpo_n: Option<f64>,
    /// DGPO m (right-boundary root).
    #[arg(long, value_parser = values::positive)]
    pub dgpo_m: Option<f64>,
    /// Reference-KL coefficient β (0 = no reference model).
    #[arg(long, value_parser = values::non_negative)]
    pub kl_coef: Option<f64>,
    /// Reference-KL estimator.
    #[arg(long, ignore_case = true)]
    pub kl_estimator: Option<KlName>,
    /// Entropy bonus coefficient.
    #[arg(long, value_parser = values::finite)]
    pub entropy_coef: Option<f64>,
    /// Loss aggregation.
    #[arg(long, ignore_case = true)]
    pub aggregation: Option<Aggregation>,
    /// Advantage estimator.
    #[arg(long, ignore_case = true, value_parser = advantage_names())]
    pub advantage: Option<String>,
    /// Cap c_ω of CPGD's clip-filter-like weight (with --advantage cpgd-clip-filter).
    #[arg(long, value_name = "C_OMEGA", value_parser = values::cap)]
    pub cpgd_weight_cap: Option<f64>,
}

impl KlName {
    fn estimator(self) -> KlEstimator {
        match self {
            Self::K1 => KlEstimator::K1,
            Self::K2 => KlEstimator::K2,
            Self::K3 => KlEstimator::K3,
            Self::LowVarKl => KlEstimator::LowVarK3,
            Self::K3Plus => KlEstimator::K3Plus,
        }
    }
}

impl Aggregation {
    fn mode(self, l_max: usize) -> AggMode {
        match self {
            Self::TokenMean => AggMode::TokenMean,
            Self::SeqMeanTokenMean => AggMode::SeqMeanTokenMean,
            Self::SeqMeanTokenSum => AggMode::SeqMeanTokenSum,
            Self::SeqMeanTokenSumNorm => AggMode::SeqMeanTokenSumNorm { l_norm: None },
            Self::DrGrpo => AggMode::DrGrpo { l_max },
            Self::GroupTokenMean => AggMode::GroupTokenMean,
        }
    }
}

impl ObjectiveOverrides {
    /// The objective's defaults with these overrides applied; Dr.GRPO's `L_max` is `l_max`. The
    /// kernel's own parameters go through [`ObjectiveConfig::set`], which knows which kernel has
    /// which; the additive terms (drift, reference KL, entropy), the aggregation and the advantage
    /// estimator apply to every objective.
    pub fn apply(&self, objective: &Objective, l_max: usize) -> Result<LossConfig> {
        let mut cfg = objective.defaults();
        let name = objective.name;
        let params = [
            (Param::ClipEps, self.clip_eps),
            (Param::ClipLow, self.clip_low),
            (Param::ClipHigh, self.clip_high),
            (Param::DualClip, self.dual_clip),
            (Param::CpgLambda, self.cpg_lambda),
            (Param::DgpoN, self.dgpo_n),
            (Param::DgpoM, self.dgpo_m),
        ];
        for (param, value) in params {
            if let Some(v) = value {
                cfg.objective.set(param, v).map_err(|e| match e {
                    rlobjectives::Error::InvalidConfig(m) => Error::invalid_config(format!("objective `{name}`: {m}")),
                    other => other.into(),
                })?;
            }
        }
        if self.drift_coef.is_some() || self.drift_clip.is_some() {
            let base = cfg.drift.unwrap_or_default();
            let d =
                DriftConfig { coef: self.drift_coef.unwrap_or(base.coef), clip: self.drift_clip.unwrap_or(base.clip) };
            cfg.drift = if d.coef == 0.0 { None } else { Some(d) };
        }
        if self.kl_coef.is_some() || self.kl_estimator.is_some() {
            let est = match self.kl_estimator {
                Some(n) => n.estimator(),
                None => cfg.ref_kl.map_or(KlEstimator::K3, |k| k.estimator),
            };
            let coef = self.kl_coef.or(cfg.ref_kl.map(|k| k.coef)).unwrap_or(0.0);
            cfg.ref_kl = if coef == 0.0 { None } else { Some(RefKl { estimator: est, coef }) };
        }
        if let Some(c) = self.entropy_coef {
            cfg.entropy_coef = c;
        }
        if let Some(a) = self.aggregation {
            cfg.agg = a.mode(l_max);
        }
        if let AggMode::DrGrpo { l_max: l } = &mut cfg.agg {
            *l = l_max;
        }
        if let Some(a) = &self.advantage {
            cfg.advantage = match Estimator::from_name(a)? {
                Estimator::Cpgd { weight: CpgdWeight::ClipFilterLike { .. } } => Estimator::Cpgd {
                    weight: CpgdWeight::ClipFilterLike { cap: self.cpgd_weight_cap.unwrap_or(CPGD_WEIGHT_CAP) },
                },
                named => named,
            };
        }
        if let Some(cap) = self.cpgd_weight_cap {
            if !matches!(cfg.advantage, Estimator::Cpgd { weight: CpgdWeight::ClipFilterLike { .. } }) {
                return Err(Error::invalid_config(format!(
                    "--cpgd-weight-cap {cap} needs --advantage cpgd-clip-filter (the advantage is {})",
                    cfg.advantage
                )));
            }
            if !(cap.is_finite() && cap >= 1.0) {
                return Err(Error::invalid_config(format!("--cpgd-weight-cap must be >= 1, got {cap}")));
            }
        }
        cfg.validate()?;
        Ok(cfg)
    }
}

impl TrainConfig {
    /// Every setting by its flag name (the flat view of `config.json`: `lr`, `clip_low`, ...),
    /// without `sources` and `changes`.
    pub fn settings(&self) -> BTreeMap<String, Value> {
        flat_entries(&serde_json::to_value(self).unwrap_or_default()).into_iter().collect()
    }

    /// Parses a JSON config file's text, nested as `config.json` or flat (an older `config.json`,
    /// or a file of flag names: [`nest`]); unknown keys are an error, naming the key.
    pub fn from_json(text: &str) -> Result<Self> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| Error::invalid_config(format!("config file: {e}")))?;
        serde_json::from_value(with_folded_names(nest(&value)))
            .map_err(|e| Error::invalid_config(format!("config file: {e}")))
    }

    /// Layers `overlay` (a JSON object of set fields, nested as `config.json` or flat as the
    /// flags: [`nest`]) over this config.
    pub fn merged(&self, overlay: &Value) -> Result<Self> {
        let overlay = with_folded_names(nest(overlay));
        let overlay = &overlay;
        let mut base = serde_json::to_value(self).map_err(|e| Error::invalid_config(e.to_string()))?;
        deep_merge(&mut base, overlay);
        serde_json::from_value(base).map_err(|e| Error::invalid_config(format!("{e}")))
    }

    /// Resolves a run's settings: `base` (a resumed run's config, else the defaults), then the
    /// paper preset and a pretrained model's defaults (fresh runs only), then the user's `layers`
    /// (a `--config` file, then the flags: JSON objects of the fields set; `null`s are ignored).
    /// A preset or model value never replaces one the user set; `sources` records who set what.
    pub fn resolve(base: Option<&TrainConfig>, layers: &[Value]) -> Result<TrainConfig> {
        let fresh = base.is_none();
        let mut cfg = base.cloned().unwrap_or_default();
        let mut sources = cfg.sources.clone();
        let mut user = BTreeSet::new();
        for layer in layers {
            let layer = nest(&without_nulls(layer));
            if !layer.is_object() {
                return Err(Error::invalid_config("a config layer must be a JSON object"));
            }
            user.extend(flat_keys(&layer));
            cfg = cfg.merged(&layer)?;
        }
        let mut layered = |cfg: &mut TrainConfig, overlay: Value, source: Source| -> Result<()> {
            let mut kept = Map::new();
            for (key, value) in flat_entries(&overlay) {
                if !user.contains(&key) {
                    sources.insert(key.clone(), source);
                    kept.insert(key, value);
                }
            }
            *cfg = cfg.merged(&Value::Object(kept))?;
            Ok(())
        };
        if fresh {
            if let Some(paper) = cfg.objective.paper {
                let overlay = crate::presets::overlay(paper, &cfg.objective.objective)?;
                layered(&mut cfg, overlay, Source::Preset)?;
            }
            if cfg.model.model != "tiny" {
                let overlay = pretrained_defaults(cfg.run.steps);
                layered(&mut cfg, overlay, Source::Model)?;
            }
        }
        for key in &user {
            sources.insert(key.clone(), Source::User);
        }
        for key in flat_keys(&serde_json::to_value(&cfg).map_err(|e| Error::invalid_config(e.to_string()))?) {
            sources.entry(key).or_insert(Source::Default);
        }
        cfg.sources = sources;
        cfg.validate()?;
        Ok(cfg)
    }

    /// The settings of `self` that differ from `before` (a resumed run's config), other than the
    /// [`FREE_ON_RESUME`] ones, as `(field, before, now)`.
    pub fn changes_from(&self, before: &TrainConfig) -> Result<Vec<(String, Value, Value)>> {
        let to_value = |c: &TrainConfig| serde_json::to_value(c).map_err(|e| Error::invalid_config(e.to_string()));
        let old: BTreeMap<String, Value> = flat_entries(&to_value(before)?).into_iter().collect();
        let mut out = Vec::new();
        for (key, now) in flat_entries(&to_value(self)?) {
            if FREE_ON_RESUME.contains(&key.as_str()) {
                continue;
            }
            let was = old.get(&key).cloned().unwrap_or(Value::Null);
            if was != now {
                out.push((key, was, now));
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// The registry entry of `objective`.
    pub fn objective(&self) -> Result<&'static Objective> {
        Ok(Objective::from_name(&self.objective.objective)?)
    }

    /// The loss recipe: registry defaults plus overrides.
    pub fn loss_config(&self) -> Result<LossConfig> {
        self.objective.overrides.apply(self.objective()?, self.rollout.max_new_tokens)
    }

    /// The encoding of the verdict (rlverify's reward kind).
    pub fn reward_kind(&self) -> Result<RewardKind> {
        Ok(match self.rollout.reward {
            RewardChoice::Auto if self.objective()?.shaping.signed_rewards => RewardKind::Signed,
            RewardChoice::Auto | RewardChoice::Binary => RewardKind::Binary,
            RewardChoice::Signed => RewardKind::Signed,
        })
    }

    /// The verifier's settings of this run: its reward encoding and answer reading.
    pub fn verify_config(&self) -> Result<rlverify::Config> {
        Ok(rlverify::Config {
            reward: self.reward_kind()?,
            extract: self.rollout.extract,
            last_number: self.rollout.last_number,
            truncated: self.rollout.truncated,
            ..rlverify::Config::default()
        })
    }

    /// Whether DAPO dynamic sampling is on.
    pub fn dynamic_sampling_on(&self) -> bool {
        self.rollout.dynamic_sampling.unwrap_or_else(|| self.objective().is_ok_and(|o| o.shaping.dynamic_sampling))
    }

    /// The overlong-punishment buffer `L_cache` (0 = off): a fifth of the length for dapo, as
    /// DAPO (arXiv:2503.14476 §3.4) pairs L_max = 20480 with L_cache = 4096.
    pub fn overlong_buffer_tokens(&self) -> usize {
        let by_objective = || match self.objective().ok().and_then(|o| o.shaping.overlong_buffer_divisor) {
            Some(n) => self.rollout.max_new_tokens / n,
            None => 0,
        };
        self.rollout.overlong_buffer.unwrap_or_else(by_objective)
    }

    /// Whether CPGD's multi-epoch advantage correction (arXiv:2505.12504 §6.1) is on, and its `ε`.
    pub fn cpgd_epoch_correction_eps(&self) -> Result<Option<f64>> {
        let eps = match self.loss_config()?.objective {
            ObjectiveConfig::Cpg(c) => Some(c.eps),
            _ => None,
        };
        match (self.optim.cpgd_epoch_correction, eps) {
            (Some(false), _) => Ok(None),
            (None, e) => Ok(e.filter(|_| self.optim.iterations > 1)),
            (Some(true), Some(e)) => Ok(Some(e)),
            (Some(true), None) => Err(Error::invalid_config(format!(
                "--cpgd-epoch-correction needs a CPG objective (cpg, cpgd, cpgd-official), not `{}`",
                self.objective.objective
            ))),
        }
    }

    /// Whether rollouts sample on the quantized CPU decoder.
    pub fn quantized_rollouts(&self) -> bool {
        match self.rollout.rollout_decode {
            RolloutDecode::Quantized => true,
            RolloutDecode::Dense => false,
            RolloutDecode::Auto => self.model.model != "tiny" && self.run.device == DeviceSpec::Cpu,
        }
    }

    /// Checks ranges that would otherwise fail deep inside the loop.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::invalid_config(m));
        self.loss_config()?;
        self.cpgd_epoch_correction_eps()?;
        if let Some(paper) = self.objective.paper {
            crate::presets::check(paper, &self.objective.objective)?;
        }
        if self.run.steps == 0 {
            return bad("--steps must be at least 1 (each step trains on one rollout batch)".into());
        }
        let generated = std::iter::once(&self.data.data).chain(&self.eval.eval_data).find(|d| d.starts_with("task:"));
        if let (Some(task), 0) = (generated, self.data.task_size) {
            return bad(format!("--task-size must be at least 1 (the problems generated for {task})"));
        }
        if self.model.model == "tiny" {
            self.model.check_tiny()?;
        }
        if self.rollout.prompts_per_step == 0 || self.rollout.group_size == 0 {
            return bad("--prompts-per-step and --group-size must be at least 1".into());
        }
        if self.optim.iterations == 0 || self.optim.mini_batches == 0 {
            return bad("--iterations and --mini-batches must be at least 1".into());
        }
        if self.optim.mini_batches > self.rollout.prompts_per_step * self.rollout.group_size {
            return bad(format!(
                "--mini-batches {} exceeds the {} responses of a step",
                self.optim.mini_batches,
                self.rollout.prompts_per_step * self.rollout.group_size
            ));
        }
        if self.rollout.max_new_tokens == 0 {
            return bad("--max-new-tokens must be at least 1".into());
        }
        if !(self.rollout.temperature.is_finite() && self.rollout.temperature > 0.0) {
            return bad(format!(
                "--temperature must be > 0 (log-probs are taken at it), got {}",
                self.rollout.temperature
            ));
        }
        if !(self.rollout.top_p > 0.0 && self.rollout.top_p <= 1.0) {
            return bad(format!("--top-p must be in (0, 1], got {}", self.rollout.top_p));
        }
        if !(self.optim.lr.is_finite() && self.optim.lr >= 0.0) {
            return bad(format!("--lr must be finite and >= 0, got {}", self.optim.lr));
        }
        if !(0.0..1.0).contains(&self.optim.adam_beta1) || !(0.0..1.0).contains(&self.optim.adam_beta2) {
            return bad("AdamW betas must be in [0, 1)".into());
        }
        if let Some(c) = self.rollout.tis_cap {
            if !(c.is_finite() && c >= 1.0) {
                return bad(format!("--tis-cap must be >= 1, got {c}"));
            }
        }
        if self.rollout.rollout_decode == RolloutDecode::Quantized && self.run.device != DeviceSpec::Cpu {
            return bad(format!("--rollout-decode quantized runs on the CPU only, not --device {}", self.run.device));
        }
        if self.run.max_bad_steps == 0 {
            return bad("--max-bad-steps must be at least 1".into());
        }
        if self.eval.eval_every > 0 && self.eval.eval_data.is_empty() {
            return bad("--eval-every needs --eval-data".into());
        }
        Ok(())
    }
}

/// The defaults of a pretrained model: the learning rate of the seed papers' 1.5B runs (CPGD
/// arXiv:2505.12504 §5.1, DGPO arXiv:2603.14389 §5.1: 1e-6) and CFPO's schedule (arXiv:2601.22801
/// §5: cosine after a warm-up of a tenth of the run); responses long enough to reason in
/// ([`PRETRAINED_MAX_NEW_TOKENS`], not the tiny model's one-token answers); and a checkpoint
/// every tenth of the run, the newest 3 kept, so a killed job loses at most a tenth of its work.
/// The tiny model keeps the built-in 3e-3, constant, one token, and a checkpoint at the end.
pub fn pretrained_defaults(steps: u64) -> Value {
    serde_json::json!({
        "lr": 1e-6,
        "lr_schedule": "cosine",
        "warmup_steps": steps / 10,
        "max_new_tokens": PRETRAINED_MAX_NEW_TOKENS,
        "save_every": (steps / 10).max(1),
        "keep_checkpoints": 3,
    })
}

/// `max_new_tokens` of a pretrained model unless set.
pub const PRETRAINED_MAX_NEW_TOKENS: usize = 512;

/// `v` without `null` members (an unset `Option` flag), recursively.
fn without_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            Value::Object(m.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), without_nulls(v))).collect())
        }
        other => other.clone(),
    }
}

/// The groups of [`TrainConfig`] and the objects inside them: the flat view of a config looks
/// for settings inside these, and sees every other value as one setting.
const CONTAINERS: [&str; 8] = ["run", "model", "data", "rollout", "optim", "objective", "overrides", "eval"];

/// Where each setting lives in `config.json`: its flag name (unique) to its path, e.g. `lr` to
/// `["optim", "lr"]`, `clip_low` to `["objective", "overrides", "clip_low"]`; read off
/// [`TrainConfig::default`].
fn setting_paths() -> &'static BTreeMap<String, Vec<String>> {
    fn walk(v: &Value, prefix: &mut Vec<String>, paths: &mut BTreeMap<String, Vec<String>>) {
        if let Value::Object(m) = v {
            for (k, v) in m {
                if prefix.is_empty() && (k == "sources" || k == "changes") {
                    continue;
                }
                prefix.push(k.clone());
                if v.is_object() && CONTAINERS.contains(&k.as_str()) {
                    walk(v, prefix, paths);
                } else {
                    paths.insert(k.clone(), prefix.clone());
                }
                prefix.pop();
            }
        }
    }
    static PATHS: OnceLock<BTreeMap<String, Vec<String>>> = OnceLock::new();
    PATHS.get_or_init(|| {
        let mut paths = BTreeMap::new();
        walk(&serde_json::to_value(TrainConfig::default()).unwrap_or_default(), &mut Vec::new(), &mut paths);
        paths
    })
}

/// A config layer in the nested shape of `config.json`, whether it was written nested, flat (as
/// the flags serialise, and as `config.json` was before the groups) or mixed: each setting moves
/// to its group (`{"lr": 1e-6}` becomes `{"optim": {"lr": 1e-6}}`). A key that names no setting
/// stays where it is, for the parser to name it.
pub fn nest(layer: &Value) -> Value {
    let Value::Object(m) = layer else { return layer.clone() };
    let mut out = Value::Object(Map::new());
    for (k, v) in m {
        if v.is_object() && CONTAINERS.contains(&k.as_str()) {
            deep_merge(&mut out, &nest(v));
            continue;
        }
        let path = match setting_paths().get(k) {
            Some(path) if k != "sources" && k != "changes" => path.clone(),
            _ => vec![k.clone()],
        };
        if let Value::Object(o) = &mut out {
            insert_at(o, &path, v.clone());
        }
    }
    out
}

/// The names a config may write in any case, as the flags take them (`"objective": "DGPO"`,
/// `"paper": "CFPO"`), by their place in the nested shape.
const NAMES: [&str; 5] = [
    "/objective/objective",
    "/objective/paper",
    "/objective/overrides/advantage",
    "/objective/overrides/kl_estimator",
    "/objective/overrides/aggregation",
];

/// `layer` (nested) with the [`NAMES`] in lower case, and the objective's `_` as `-` (`Dr_GRPO`
/// is `dr-grpo`, as `--objective` reads it).
fn with_folded_names(mut layer: Value) -> Value {
    for pointer in NAMES {
        if let Some(Value::String(name)) = layer.pointer_mut(pointer) {
            *name = name.trim().to_lowercase();
            if pointer == "/objective/objective" {
                *name = name.replace('_', "-");
            }
        }
    }
    layer
}

/// Puts `value` at `path` in `root`, making the objects on the way.
fn insert_at(root: &mut Map<String, Value>, path: &[String], value: Value) {
    match path {
        [last] => {
            root.insert(last.clone(), value);
        }
        [first, rest @ ..] => {
            let slot = root.entry(first.clone()).or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(m) = slot {
                insert_at(m, rest, value);
            }
        }
        [] => {}
    }
}

/// Merges `overlay` into `base`, object by object.
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

/// `(setting, value)` of a config object, nested or flat, every setting by its flag name
/// (`sources`, `changes` and the `memory` plan left out).
fn flat_entries(v: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    if let Value::Object(m) = v {
        for (k, v) in m {
            match v {
                Value::Object(_) if CONTAINERS.contains(&k.as_str()) => out.extend(flat_entries(v)),
                _ if k == "sources" || k == "changes" || k == "memory" => {}
                _ => out.push((k.clone(), v.clone())),
            }
        }
    }
    out
}

/// `key=value` of a config overlay (for tables).
pub(crate) fn flat_settings(v: &Value) -> Vec<String> {
    flat_entries(v)
        .into_iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().map_or(v.to_string(), String::from)))
        .collect()
}

fn flat_keys(v: &Value) -> Vec<String> {
    flat_entries(v).into_iter().map(|(k, _)| k).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
            (RewardChoice::Binary, Some(false), Some(0));
        assert_eq!(shaping(&user), (RewardKind::Binary, false, 0));
    }

    #[test]
    fn mismatched_overrides_are_errors() {
        let cases: [(&str, ObjectiveOverrides); 4] = [
            ("grpo", ObjectiveOverrides { dgpo_n: Some(2.0), ..Default::default() }),
            ("cpgd", ObjectiveOverrides { clip_low: Some(0.1), ..Default::default() }),
            ("grpo", ObjectiveOverrides { cpgd_weight_cap: Some(2.0), ..Default::default() }),
            ("gspo", ObjectiveOverrides { aggregation: Some(Aggregation::TokenMean), ..Default::default() }),
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

    /// Older config files name the reward encodings `zero-one` and `plus-minus-one`; the
    /// verifier's options are written by their flag names, and a wrong one lists the right ones.
    #[test]
    fn older_reward_names_are_read() {
        let c = TrainConfig::from_json(r#"{"reward": "plus-minus-one"}"#).unwrap();
        assert_eq!(c.rollout.reward, RewardChoice::Signed);
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
        assert_eq!((o.objective.as_str(), o.paper), ("dgpo", Some(Paper::Dgpo)));
        assert_eq!(
            (o.overrides.advantage.as_deref(), o.overrides.kl_estimator, o.overrides.aggregation),
            (Some("group-norm"), Some(KlName::K3), Some(Aggregation::TokenMean))
        );
        let c = TrainConfig::resolve(None, &[json!({"objective": "Dr_GRPO"})]).unwrap();
        assert_eq!(c.objective.objective, "dr-grpo");
    }

    /// `config.json` is nested by the help's groups; flat layers (the flags, an older
    /// `config.json`) and nested ones read the same; an unknown key is an error naming it.
    #[test]
    fn json_layers_and_unknown_keys() {
        let flat = r#"{"objective": "cpgd", "overrides": {"clip_eps": 0.3}, "steps": 5}"#;
        let nested = r#"{"objective": {"objective": "cpgd", "overrides": {"clip_eps": 0.3}}, "run": {"steps": 5}}"#;
        let c = TrainConfig::from_json(flat).unwrap();
        assert_eq!(c, TrainConfig::from_json(nested).unwrap());
        assert_eq!(
            (c.objective.objective.as_str(), c.objective.overrides.clip_eps, c.run.steps),
            ("cpgd", Some(0.3), 5)
        );
        let m = c.merged(&json!({"steps": 9, "overrides": {"dual_clip": null, "drift_coef": 0.1}})).unwrap();
        assert_eq!(
            (m.run.steps, m.objective.overrides.clip_eps, m.objective.overrides.drift_coef),
            (9, Some(0.3), Some(0.1))
        );
        let err = TrainConfig::from_json(r#"{"stpes": 5}"#).unwrap_err().to_string();
        assert!(err.contains("stpes"), "{err}");
        let text = serde_json::to_string(&m).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!((v["optim"]["lr"].as_f64(), v["run"]["steps"].as_u64()), (Some(3e-3), Some(9)));
        assert_eq!(v["objective"]["overrides"]["drift_coef"].as_f64(), Some(0.1));
        assert_eq!(TrainConfig::from_json(&text).unwrap(), m);
    }
}
