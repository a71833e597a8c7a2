//! What the user typed. Every training flag is optional here, so that it overrides the config
//! file and the defaults only when given; `config.rs` of the library holds the resolved values.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use serde::Serialize;

/// RL with verifiable rewards on math: sample, grade with rlverify, optimise any objective.
#[derive(Debug, Parser)]
#[command(
    name = "rltrain",
    version,
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  rltrain --objective dgpo --model tiny --data task:add-small --steps 100 --out runs/dgpo\n  rltrain --resume runs/dgpo --steps 200\n  rltrain objectives\n\nUse `rltrain help train` for every training flag."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub train: TrainArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Train a policy (the default command).
    Train(Box<TrainArgs>),
    /// List every objective of the registry with its defaults (Markdown table).
    Objectives,
    /// List the synthetic tasks, or print one as JSONL.
    Tasks {
        /// Task to print (omit to list them).
        name: Option<String>,
        /// Problems to generate.
        #[arg(long, default_value_t = 200)]
        size: usize,
        /// Seed of the generator.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// Plot a run's metrics.jsonl as SVG charts (RUN_DIR/plots/), or overlay several runs.
    Plot {
        /// One run directory, or several to overlay (one line per run, labelled by folder name).
        #[arg(required = true, value_name = "RUN_DIR")]
        run_dirs: Vec<PathBuf>,
        /// Keys to overlay when several runs are given.
        #[arg(long, value_delimiter = ',', default_values_t = DEFAULT_COMPARE_KEYS.map(String::from))]
        keys: Vec<String>,
        /// Folder for the overlay charts (several runs only).
        #[arg(long, value_name = "DIR", default_value = "plots-compare")]
        out: PathBuf,
    },
}

/// Keys `rltrain plot A B ...` overlays by default.
pub const DEFAULT_COMPARE_KEYS: [&str; 7] =
    ["reward/mean", "acc", "entropy", "clip_frac/total", "kl/old_k3", "grad_norm", "response_length/mean"];

/// Flags of `rltrain train`.
#[derive(Debug, Clone, Default, Args, Serialize)]
pub struct TrainArgs {
    /// JSON config file; flags given on the command line override it.
    #[arg(long, value_name = "FILE.json", help_heading = "Run")]
    #[serde(skip)]
    pub config: Option<PathBuf>,
    /// Continue the run in RUN_DIR from its latest checkpoint (its config.json is the base).
    #[arg(long, value_name = "RUN_DIR", help_heading = "Run")]
    #[serde(skip)]
    pub resume: Option<PathBuf>,
    /// Run directory: config.json, metrics.jsonl, rollouts.jsonl, checkpoints/.
    #[arg(long, value_name = "RUN_DIR", help_heading = "Run")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub out: Option<PathBuf>,
    /// Training steps (one rollout batch each) [default: 100].
    #[arg(long, help_heading = "Run")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<u64>,
    /// Seed of model init, prompt order, sampling and shuffles [default: 0].
    #[arg(long, help_heading = "Run")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// cpu, cuda, cuda:N or auto (the first GPU of a `--features cuda` build, else the CPU) [default: cpu].
    #[arg(long, help_heading = "Run")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Checkpoint every N steps; one is always written at the end [default: 0].
    #[arg(long, value_name = "N", help_heading = "Run")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub save_every: Option<u64>,
    /// Rollout samples per step written to rollouts.jsonl [default: 4].
    #[arg(long, value_name = "N", help_heading = "Run")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub save_rollouts: Option<usize>,
    /// A one-line summary on stderr every N steps (0 = off) [default: 10].
    #[arg(long, value_name = "N", help_heading = "Run")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_every: Option<u64>,
    /// Stop after N consecutive updates with a non-finite loss or gradient [default: 5].
    #[arg(long, value_name = "N", help_heading = "Run")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_bad_steps: Option<usize>,
    /// Testing hook: make the loss of step N non-finite (checks the NaN guard).
    #[arg(long, value_name = "N", hide = true)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inject_nan_at_step: Option<u64>,

    /// default (SmolLM2-135M-Instruct), FILE.gguf, a Hugging Face folder, or tiny [default: tiny].
    #[arg(long, help_heading = "Model")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Width of the tiny model [default: 64].
    #[arg(long, help_heading = "Model")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tiny_hidden: Option<usize>,
    /// Layers of the tiny model [default: 2].
    #[arg(long, help_heading = "Model")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tiny_layers: Option<usize>,
    /// Tokenizer of the tiny model: auto, task (the task's alphabet) or byte [default: auto].
    #[arg(long, help_heading = "Model")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokenizer: Option<String>,

    /// FILE.jsonl, a suite name (e.g. math500), or task:NAME (`rltrain tasks`) [default: task:succ].
    #[arg(long, help_heading = "Data")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    /// Field holding the problem in JSONL files [default: problem].
    #[arg(long, help_heading = "Data")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem_field: Option<String>,
    /// Field holding the gold answer in JSONL files [default: answer].
    #[arg(long, help_heading = "Data")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_field: Option<String>,
    /// Problems generated for task:NAME data [default: 1000].
    #[arg(long, help_heading = "Data")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_size: Option<usize>,
    /// auto (raw for tiny, chat otherwise), raw or chat [default: auto].
    #[arg(long, help_heading = "Data")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_template: Option<String>,
    /// Instruction appended to the problem in chat prompts.
    #[arg(long, help_heading = "Data")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instruction: Option<String>,

    /// Prompts per step (P) [default: 8].
    #[arg(long, value_name = "P", help_heading = "Rollout")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompts_per_step: Option<usize>,
    /// Responses per prompt (G) [default: 8].
    #[arg(long, value_name = "G", help_heading = "Rollout")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_size: Option<usize>,
    /// Sampling temperature (log-probs are taken at it too) [default: 1].
    #[arg(long, help_heading = "Rollout")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling mass [default: 1].
    #[arg(long, help_heading = "Rollout")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Most tokens per response; also Dr.GRPO's L_max [default: 1, for task:succ; use e.g. 512 for real models].
    #[arg(long, help_heading = "Rollout")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_new_tokens: Option<usize>,
    /// Rows decoded together [default: 64].
    #[arg(long, help_heading = "Rollout")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gen_batch: Option<usize>,
    /// Reward encoding: auto (±1 for dapo/dgpo), zero-one, plus-minus-one [default: auto].
    #[arg(long, help_heading = "Rollout")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reward: Option<String>,
    /// Weight of the <think>/<answer> format reward (0 = off) [default: 0].
    #[arg(long, help_heading = "Rollout")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format_reward: Option<f64>,
    /// DAPO dynamic sampling: drop all-equal groups and refill [default: on for dapo].
    #[arg(long, help_heading = "Rollout")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dynamic_sampling: Option<bool>,
    /// DAPO overlong buffer L_cache in tokens (0 = off) [default: max/4 for dapo].
    #[arg(long, help_heading = "Rollout")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overlong_buffer: Option<usize>,

    /// Passes over each rollout batch (sample reuse) [default: 1].
    #[arg(long, help_heading = "Optimisation")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<usize>,
    /// Mini-batches per pass, one optimizer step each [default: 1].
    #[arg(long, help_heading = "Optimisation")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mini_batches: Option<usize>,
    /// Rows per forward/backward (gradient accumulation; 0 = whole mini-batch) [default: 0].
    #[arg(long, help_heading = "Optimisation")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub micro_batch_size: Option<usize>,
    /// Peak learning rate [default: 3e-3].
    #[arg(long, help_heading = "Optimisation")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lr: Option<f64>,
    /// constant, linear or cosine, after linear warm-up [default: constant].
    #[arg(long, help_heading = "Optimisation")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lr_schedule: Option<String>,
    /// Warm-up steps [default: 0].
    #[arg(long, help_heading = "Optimisation")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup_steps: Option<u64>,
    /// Final LR as a fraction of --lr (linear, cosine) [default: 0].
    #[arg(long, help_heading = "Optimisation")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_lr_ratio: Option<f64>,
    /// Decoupled weight decay on matrices [default: 0].
    #[arg(long, help_heading = "Optimisation")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weight_decay: Option<f64>,
    /// AdamW beta1 [default: 0.9].
    #[arg(long, help_heading = "Optimisation")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adam_beta1: Option<f64>,
    /// AdamW beta2 [default: 0.99].
    #[arg(long, help_heading = "Optimisation")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adam_beta2: Option<f64>,
    /// AdamW epsilon [default: 1e-8].
    #[arg(long, help_heading = "Optimisation")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adam_eps: Option<f64>,
    /// Clip the gradient's global norm (0 = off) [default: 1].
    #[arg(long, help_heading = "Optimisation")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grad_clip: Option<f64>,

    /// Objective from the registry (`rltrain objectives`) [default: grpo].
    #[arg(long, help_heading = "Objective")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub objective: Option<String>,
    #[command(flatten)]
    pub overrides: ObjectiveArgs,

    /// Evaluate every N steps, before training and at the end (0 = off) [default: 0].
    #[arg(long, value_name = "N", help_heading = "Evaluation")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eval_every: Option<u64>,
    /// Evaluation sets: files, suites or task:NAME, comma-separated.
    #[arg(long, value_delimiter = ',', help_heading = "Evaluation")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eval_data: Option<Vec<String>>,
    /// Samples per problem (avg@k, pass@k) [default: 4].
    #[arg(long, value_name = "K", help_heading = "Evaluation")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eval_k: Option<usize>,
    /// Problems per evaluation set (0 = all) [default: 64].
    #[arg(long, value_name = "M", help_heading = "Evaluation")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eval_limit: Option<usize>,
    /// Sampling temperature of evaluations [default: 1].
    #[arg(long, help_heading = "Evaluation")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eval_temperature: Option<f64>,
}

/// Overrides of the objective's registry defaults.
#[derive(Debug, Clone, Default, Args, Serialize)]
pub struct ObjectiveArgs {
    /// Lower clip width ε_l (PPO family, DGPO, GPPO, ASPO, GSPO, CISPO, Clip-Cov).
    #[arg(long, help_heading = "Objective")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clip_low: Option<f64>,
    /// Upper clip width ε_h.
    #[arg(long, help_heading = "Objective")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clip_high: Option<f64>,
    /// Single width ε (CPG/CPGD, CFPO); sets both sides of two-sided kernels.
    #[arg(long, visible_alias = "cfpo-eps", help_heading = "Objective")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clip_eps: Option<f64>,
    /// Dual-clip constant c (PPO family, GPPO).
    #[arg(long, value_name = "C", help_heading = "Objective")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dual_clip: Option<f64>,
    /// CPGD tight-to-loose factor λ (1 = constant width).
    #[arg(long, help_heading = "Objective")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpg_lambda: Option<f64>,
    /// CPGD policy-drift coefficient α (0 = off).
    #[arg(long, visible_alias = "drift-alpha", help_heading = "Objective")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drift_coef: Option<f64>,
    /// Cap c of the drift's gradient coefficient.
    #[arg(long, help_heading = "Objective")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drift_clip: Option<f64>,
    /// DGPO n (left-boundary power).
    #[arg(long, help_heading = "Objective")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dgpo_n: Option<f64>,
    /// DGPO m (right-boundary root).
    #[arg(long, help_heading = "Objective")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dgpo_m: Option<f64>,
    /// KL-to-reference coefficient β (0 = no reference model).
    #[arg(long, help_heading = "Objective")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kl_coef: Option<f64>,
    /// KL estimator: k1, k2, k3, low-var-kl, k3+.
    #[arg(long, help_heading = "Objective")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kl_estimator: Option<String>,
    /// Entropy bonus coefficient.
    #[arg(long, help_heading = "Objective")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entropy_coef: Option<f64>,
    /// token-mean, seq-mean-token-mean, seq-mean-token-sum, seq-mean-token-sum-norm, dr-grpo,
    /// group-token-mean.
    #[arg(long, help_heading = "Objective")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aggregation: Option<String>,
    /// group-norm, mean-centred, loo, reinforce++, reinforce++-baseline, gpg, cpgd, opo, raw.
    #[arg(long, help_heading = "Objective")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub advantage: Option<String>,
}
