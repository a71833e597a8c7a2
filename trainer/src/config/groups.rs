//! The seven groups of a run's settings, as `rltrain help train` groups its flags and
//! `config.json` nests its keys. Each setting is declared here once (`settings!` of
//! [`super::declare`]): its doc line (the flag's help), its flag, its default; `[free]` marks
//! those a resumed run may change.
//!
//! Checks of the values a flag takes are the flag's value parsers ([`crate::config_values`]);
//! the checks across settings are [`TrainConfig::validate`](crate::TrainConfig::validate).

use std::path::PathBuf;

use rlbase::DeviceSpec;
use rlverify::options::{AnswerArgs, AnswerOptions, FormatRewardArgs, FormatRewardOptions};

use super::choices::{PromptTemplate, RewardChoice, RolloutDecode, TokenizerChoice};
use super::declare::settings;
use super::paper::Paper;
use crate::aggregate::AggMode;
use crate::kl::KlEstimator;
use crate::objectives::Objective;
use crate::optim::ScheduleKind;

settings! {
    /// Run (`run` in `config.json`): how the run is kept: where it writes, how long it runs, its
    /// seed and device, what it logs and saves.
    RunSettings / RunLayer, heading "Run" {
        /// Run directory: config.json, metrics.jsonl, rollouts.jsonl, checkpoints/.
        #[arg(long, value_name = "RUN_DIR")]
        [free] out: PathBuf = PathBuf::from("runs/rltrain"),
        /// Training steps (one rollout batch each).
        #[arg(long)]
        [free] steps: u64 = 100,
        /// Seed of model init, prompt order, sampling and shuffles.
        #[arg(long)]
        seed: u64 = 0,
        /// cpu, cuda, cuda:N or auto (the first GPU of a `--features cuda` build, else the CPU).
        #[arg(long)]
        [free] device: DeviceSpec = DeviceSpec::Cpu,
        /// Checkpoint every N steps; one is always written at the end.
        #[arg(long, value_name = "N")]
        [free] save_every: u64 = 0,
        /// Keep the newest N checkpoints, deleting older ones (0 = keep all).
        #[arg(long, value_name = "N")]
        [free] keep_checkpoints: usize = 0,
        /// Rollout samples per step written to rollouts.jsonl.
        #[arg(long, value_name = "N")]
        [free] save_rollouts: usize = 4,
        /// A one-line summary on stderr every N steps (0 = off).
        #[arg(long, value_name = "N")]
        [free] log_every: u64 = 10,
        /// Stop after N consecutive updates with a non-finite loss or gradient.
        #[arg(long, value_name = "N")]
        [free] max_bad_steps: usize = 5,
        /// Testing hook: make the loss of step N non-finite (checks the NaN guard).
        #[arg(long, value_name = "N", hide = true)]
        [free] inject_nan_at_step: u64,
    }
}

settings! {
    /// Model (`model` in `config.json`): the policy: a pretrained model or the seeded `tiny` one.
    ModelSettings / ModelLayer, heading "Model" {
        /// default (SmolLM2-135M-Instruct), FILE.gguf, a Hugging Face folder, or tiny.
        #[arg(long)]
        model: String = "tiny".into(),
        /// Width of the tiny model.
        #[arg(long)]
        tiny_hidden: usize = 64,
        /// Layers of the tiny model.
        #[arg(long)]
        tiny_layers: usize = 2,
        /// Tokenizer of the tiny model: auto (the task's alphabet for task: data, else bytes).
        #[arg(long)]
        tokenizer: TokenizerChoice = TokenizerChoice::Auto,
    }
}

settings! {
    /// Data (`data` in `config.json`): the training problems and how they become prompts.
    DataSettings / DataLayer, heading "Data" {
        /// FILE.jsonl, a suite name (e.g. math500), or task:NAME (`rltrain tasks`).
        #[arg(long)]
        data: String = "task:succ".into(),
        /// Field holding the problem in JSONL files.
        #[arg(long)]
        problem_field: String = "problem".into(),
        /// Field holding the gold answer in JSONL files.
        #[arg(long)]
        answer_field: String = "answer".into(),
        /// Problems generated for task:NAME data.
        #[arg(long)]
        task_size: usize = 1000,
        /// auto = raw for tiny, chat otherwise.
        #[arg(long)]
        prompt_template: PromptTemplate = PromptTemplate::Auto,
        /// Instruction appended to the problem in chat prompts.
        #[arg(long)]
        instruction: String = "Please reason step by step, and put your final answer within \\boxed{}.".into(),
    }
}

settings! {
    /// Rollout (`rollout` in `config.json`): sampling the rollout batch and rewarding it (the
    /// verifier's options are the verifier's own groups, their keys beside the others).
    RolloutSettings / RolloutLayer, heading "Rollout" {
        /// Prompts per step (P).
        #[arg(long, value_name = "P")]
        prompts_per_step: usize = 8,
        /// Responses per prompt (G).
        #[arg(long, value_name = "G")]
        group_size: usize = 8,
        /// Sampling temperature (log-probs are taken at it too).
        #[arg(long, value_parser = crate::config_values::temperature)]
        temperature: f64 = 1.0,
        /// Nucleus sampling mass.
        #[arg(long, value_parser = crate::config_values::top_p)]
        top_p: f64 = 1.0,
        /// Most tokens per response; also Dr.GRPO's L_max (1 suits task:succ; use e.g. 512 for real models).
        #[arg(long)]
        max_new_tokens: usize = 1,
        /// Rows decoded together.
        #[arg(long)]
        [free] gen_batch: usize = 64,
        /// Rollout decoder: auto = quantized for a pretrained model on the CPU, π_old then recomputed by the trainable model.
        #[arg(long)]
        rollout_decode: RolloutDecode = RolloutDecode::Auto,
        /// Truncated importance correction min(π_old/π_sampler, C) on the advantages of quantized rollouts (off when unset).
        #[arg(long, value_name = "C", value_parser = crate::config_values::cap)]
        tis_cap: f64,
        /// Reward encoding.
        #[arg(long, value_enum, value_name = "KIND", help_heading = "Scoring")]
        reward: RewardChoice = RewardChoice::Auto,
    }
    flatten {
        /// The verifier's options that decide a verdict (`--extract`, `--last-number`,
        /// `--truncated`, ...): the verifier's own, flags and keys.
        answer: AnswerOptions / AnswerArgs,
        /// The CPGD format reward (`--format-reward`), the verifier's flag.
        format: FormatRewardOptions / FormatRewardArgs,
    }
    after {
        /// DAPO dynamic sampling: drop all-equal groups and refill [default: true for dapo].
        #[arg(long)]
        dynamic_sampling: bool,
        /// Extra generation rounds dynamic sampling may use to refill the batch (a config file's
        /// setting: no flag).
        #[arg(skip)]
        dynamic_sampling_rounds: usize = 2,
        /// DAPO overlong buffer L_cache in tokens (0 = off) [default: max-new-tokens/5 for dapo].
        #[arg(long)]
        overlong_buffer: usize,
    }
}

settings! {
    /// Optimisation (`optim` in `config.json`): passes over the batch, the optimizer and its schedule.
    OptimSettings / OptimLayer, heading "Optimisation" {
        /// Passes over each rollout batch (sample reuse).
        #[arg(long)]
        iterations: usize = 1,
        /// Mini-batches per pass, one optimizer step each.
        #[arg(long)]
        mini_batches: usize = 1,
        /// Rows per forward/backward (gradient accumulation; 0 = whole mini-batch) [default: the largest that fits for the memory available; recorded in config.json as its memory field].
        #[arg(long)]
        [free] micro_batch_size: usize,
        /// Recompute each decoder layer's activations in the backward instead of keeping them (same gradients, less memory, one more forward of the layers) [default: on only for runs whose single row does not fit without it].
        #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
        [free] recompute_activations: bool,
        /// CPGD's multi-epoch correction of the advantage (arXiv:2505.12504 §6.1) [default: true for cpg, cpgd and cpgd-official when --iterations > 1].
        #[arg(long, value_name = "BOOL")]
        cpgd_epoch_correction: bool,
        /// Peak learning rate.
        #[arg(long, value_parser = crate::config_values::non_negative)]
        lr: f64 = 3e-3,
        /// Schedule after the linear warm-up.
        #[arg(long, value_parser = crate::config_values::schedule_kind())]
        lr_schedule: ScheduleKind = ScheduleKind::Constant,
        /// Warm-up steps.
        #[arg(long)]
        warmup_steps: u64 = 0,
        /// Final LR as a fraction of --lr (linear, cosine).
        #[arg(long, value_parser = crate::config_values::fraction)]
        min_lr_ratio: f64 = 0.0,
        /// Decoupled weight decay on matrices.
        #[arg(long, value_parser = crate::config_values::non_negative)]
        weight_decay: f64 = 0.0,
        /// AdamW beta1.
        #[arg(long, value_parser = crate::config_values::beta)]
        adam_beta1: f64 = 0.9,
        /// AdamW beta2.
        #[arg(long, value_parser = crate::config_values::beta)]
        adam_beta2: f64 = 0.99,
        /// AdamW epsilon.
        #[arg(long, value_parser = crate::config_values::positive)]
        adam_eps: f64 = 1e-8,
        /// Clip the gradient's global norm (0 = off).
        #[arg(long, value_parser = crate::config_values::grad_clip)]
        grad_clip: f64 = 1.0,
    }
}

settings! {
    /// Objective (`objective` in `config.json`): the objective of the registry, a paper preset,
    /// and overrides of its hyper-parameters.
    ObjectiveSettings / ObjectiveLayer, heading "Objective" {
        /// Objective from the registry (`rltrain objectives`).
        #[arg(long, value_parser = crate::config_values::objective)]
        objective: &'static Objective = super::choices::default_objective(),
        /// A paper's own settings for the objective (`rltrain objectives` lists them).
        #[arg(long, ignore_case = true)]
        paper: Paper,
    }
    groups {
        /// Overrides of the objective's hyper-parameters (`overrides` in `config.json`).
        overrides: ObjectiveOverrides / OverridesLayer,
    }
}

settings! {
    /// Overrides of the registry defaults (`None` keeps the objective's own value); also the
    /// `Objective` flags of `rltrain train`.
    ObjectiveOverrides / OverridesLayer, heading "Objective" {
        /// Lower clip width ε_l (PPO family, DGPO, GPPO, ASPO, GSPO, CISPO, Clip-Cov).
        #[arg(long, value_parser = crate::config_values::clip_width)]
        clip_low: f64,
        /// Upper clip width ε_h.
        #[arg(long, value_parser = crate::config_values::clip_width)]
        clip_high: f64,
        /// Single width ε (CPG/CPGD, CFPO); for two-sided kernels sets both sides.
        #[arg(long, visible_alias = "cfpo-eps", value_parser = crate::config_values::clip_width)]
        clip_eps: f64,
        /// Dual-clip constant c (PPO family, GPPO).
        #[arg(long, value_name = "C", value_parser = crate::config_values::dual_clip)]
        dual_clip: f64,
        /// CPGD tight-to-loose factor λ (1 = constant width).
        #[arg(long, value_parser = crate::config_values::positive)]
        cpg_lambda: f64,
        /// CPGD policy-drift coefficient α (0 = no drift term).
        #[arg(long, visible_alias = "drift-alpha", value_parser = crate::config_values::non_negative)]
        drift_coef: f64,
        /// Cap c of the drift's gradient coefficient.
        #[arg(long, value_parser = crate::config_values::positive)]
        drift_clip: f64,
        /// DGPO n (left-boundary power).
        #[arg(long, value_parser = crate::config_values::positive)]
        dgpo_n: f64,
        /// DGPO m (right-boundary root).
        #[arg(long, value_parser = crate::config_values::positive)]
        dgpo_m: f64,
        /// Reference-KL coefficient β (0 = no reference model).
        #[arg(long, value_parser = crate::config_values::non_negative)]
        kl_coef: f64,
        /// Reference-KL estimator.
        #[arg(long, value_enum, ignore_case = true)]
        kl_estimator: KlEstimator,
        /// Entropy bonus coefficient.
        #[arg(long, value_parser = crate::config_values::finite)]
        entropy_coef: f64,
        /// Loss aggregation.
        #[arg(long, value_enum, ignore_case = true)]
        aggregation: AggMode,
        /// Advantage estimator.
        #[arg(long, ignore_case = true, value_parser = crate::config_values::advantage())]
        advantage: String,
        /// Cap c_ω of CPGD's clip-filter-like weight (with --advantage cpgd-clip-filter).
        #[arg(long, value_name = "C_OMEGA", value_parser = crate::config_values::cap)]
        cpgd_weight_cap: f64,
    }
}

settings! {
    /// Evaluation (`eval` in `config.json`): periodic evaluation.
    EvalSettings / EvalLayer, heading "Evaluation" {
        /// Evaluate every N steps, before training and at the end (0 = off).
        #[arg(long, value_name = "N")]
        [free] eval_every: u64 = 0,
        /// Evaluation sets: files, suites or task:NAME, comma-separated.
        #[arg(long, value_delimiter = ',')]
        [free] eval_data: Vec<String> = Vec::new(),
        /// Samples per problem (avg@k, pass@k).
        #[arg(long, value_name = "K")]
        [free] eval_k: usize = 4,
        /// Problems per evaluation set (0 = all).
        #[arg(long, value_name = "M")]
        [free] eval_limit: usize = 64,
        /// Sampling temperature of evaluations.
        #[arg(long, value_parser = crate::config_values::temperature)]
        [free] eval_temperature: f64 = 1.0,
    }
}
