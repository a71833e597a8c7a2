//! What the user typed. Every training flag is optional here, so that it overrides the config
//! file, the paper preset and the defaults only when given (an unset flag serialises to `null`,
//! which `TrainConfig::resolve` ignores); `config.rs` of the library holds the resolved values.
//! The `[default: ...]` notes are checked against `TrainConfig::default()` by a test below.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use rltrain::config::{ObjectiveOverrides, Paper, PromptTemplate, RewardChoice, RolloutDecode, TokenizerChoice};
use rltrain::optim::ScheduleKind;
use rlverify::cli::DeviceSpec;
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
    /// With --resume: continue although settings differ from the run's (recorded in its config.json).
    #[arg(long, requires = "resume", help_heading = "Run")]
    #[serde(skip)]
    pub allow_changes: bool,
    /// Run directory: config.json, metrics.jsonl, rollouts.jsonl, checkpoints/.
    #[arg(long, value_name = "RUN_DIR", help_heading = "Run")]
    pub out: Option<PathBuf>,
    /// Training steps (one rollout batch each) [default: 100].
    #[arg(long, help_heading = "Run")]
    pub steps: Option<u64>,
    /// Seed of model init, prompt order, sampling and shuffles [default: 0].
    #[arg(long, help_heading = "Run")]
    pub seed: Option<u64>,
    /// cpu, cuda, cuda:N or auto (the first GPU of a `--features cuda` build, else the CPU) [default: cpu].
    #[arg(long, help_heading = "Run")]
    pub device: Option<DeviceSpec>,
    /// Checkpoint every N steps; one is always written at the end [default: 0].
    #[arg(long, value_name = "N", help_heading = "Run")]
    pub save_every: Option<u64>,
    /// Keep the newest N checkpoints, deleting older ones (0 = keep all) [default: 0].
    #[arg(long, value_name = "N", help_heading = "Run")]
    pub keep_checkpoints: Option<usize>,
    /// Rollout samples per step written to rollouts.jsonl [default: 4].
    #[arg(long, value_name = "N", help_heading = "Run")]
    pub save_rollouts: Option<usize>,
    /// A one-line summary on stderr every N steps (0 = off) [default: 10].
    #[arg(long, value_name = "N", help_heading = "Run")]
    pub log_every: Option<u64>,
    /// Stop after N consecutive updates with a non-finite loss or gradient [default: 5].
    #[arg(long, value_name = "N", help_heading = "Run")]
    pub max_bad_steps: Option<usize>,
    /// Testing hook: make the loss of step N non-finite (checks the NaN guard).
    #[arg(long, value_name = "N", hide = true)]
    pub inject_nan_at_step: Option<u64>,

    /// default (SmolLM2-135M-Instruct), FILE.gguf, a Hugging Face folder, or tiny [default: tiny].
    #[arg(long, help_heading = "Model")]
    pub model: Option<String>,
    /// Width of the tiny model [default: 64].
    #[arg(long, help_heading = "Model")]
    pub tiny_hidden: Option<usize>,
    /// Layers of the tiny model [default: 2].
    #[arg(long, help_heading = "Model")]
    pub tiny_layers: Option<usize>,
    /// Tokenizer of the tiny model: auto (the task's alphabet for task: data, else bytes) [default: auto].
    #[arg(long, help_heading = "Model")]
    pub tokenizer: Option<TokenizerChoice>,

    /// FILE.jsonl, a suite name (e.g. math500), or task:NAME (`rltrain tasks`) [default: task:succ].
    #[arg(long, help_heading = "Data")]
    pub data: Option<String>,
    /// Field holding the problem in JSONL files [default: problem].
    #[arg(long, help_heading = "Data")]
    pub problem_field: Option<String>,
    /// Field holding the gold answer in JSONL files [default: answer].
    #[arg(long, help_heading = "Data")]
    pub answer_field: Option<String>,
    /// Problems generated for task:NAME data [default: 1000].
    #[arg(long, help_heading = "Data")]
    pub task_size: Option<usize>,
    /// auto = raw for tiny, chat otherwise [default: auto].
    #[arg(long, help_heading = "Data")]
    pub prompt_template: Option<PromptTemplate>,
    /// Instruction appended to the problem in chat prompts.
    #[arg(long, help_heading = "Data")]
    pub instruction: Option<String>,

    /// Prompts per step (P) [default: 8].
    #[arg(long, value_name = "P", help_heading = "Rollout")]
    pub prompts_per_step: Option<usize>,
    /// Responses per prompt (G) [default: 8].
    #[arg(long, value_name = "G", help_heading = "Rollout")]
    pub group_size: Option<usize>,
    /// Sampling temperature (log-probs are taken at it too) [default: 1].
    #[arg(long, help_heading = "Rollout")]
    pub temperature: Option<f64>,
    /// Nucleus sampling mass [default: 1].
    #[arg(long, help_heading = "Rollout")]
    pub top_p: Option<f64>,
    /// Most tokens per response; also Dr.GRPO's L_max [default: 1, for task:succ; use e.g. 512 for real models].
    #[arg(long, help_heading = "Rollout")]
    pub max_new_tokens: Option<usize>,
    /// Rows decoded together [default: 64].
    #[arg(long, help_heading = "Rollout")]
    pub gen_batch: Option<usize>,
    /// Rollout decoder: auto = quantized for a pretrained model on the CPU, π_old then recomputed by the trainable model [default: auto].
    #[arg(long, help_heading = "Rollout")]
    pub rollout_decode: Option<RolloutDecode>,
    /// Truncated importance correction min(π_old/π_sampler, C) on the advantages of quantized rollouts (off when unset).
    #[arg(long, value_name = "C", help_heading = "Rollout")]
    pub tis_cap: Option<f64>,
    /// Reward encoding: auto = ±1 for dapo and dgpo, else {0,1} [default: auto].
    #[arg(long, help_heading = "Rollout")]
    pub reward: Option<RewardChoice>,
    /// Weight of the <think>/<answer> format reward (0 = off) [default: 0].
    #[arg(long, help_heading = "Rollout")]
    pub format_reward: Option<f64>,
    /// DAPO dynamic sampling: drop all-equal groups and refill [default: on for dapo].
    #[arg(long, help_heading = "Rollout")]
    pub dynamic_sampling: Option<bool>,
    /// DAPO overlong buffer L_cache in tokens (0 = off) [default: max-new-tokens/5 for dapo].
    #[arg(long, help_heading = "Rollout")]
    pub overlong_buffer: Option<usize>,

    /// Passes over each rollout batch (sample reuse) [default: 1].
    #[arg(long, help_heading = "Optimisation")]
    pub iterations: Option<usize>,
    /// Mini-batches per pass, one optimizer step each [default: 1].
    #[arg(long, help_heading = "Optimisation")]
    pub mini_batches: Option<usize>,
    /// CPGD's multi-epoch correction of the advantage (arXiv:2505.12504 §6.1) [default: on for cpg, cpgd and cpgd-official when --iterations > 1].
    #[arg(long, value_name = "BOOL", help_heading = "Optimisation")]
    pub cpgd_epoch_correction: Option<bool>,
    /// Rows per forward/backward (gradient accumulation; 0 = whole mini-batch) [default: 0].
    #[arg(long, help_heading = "Optimisation")]
    pub micro_batch_size: Option<usize>,
    /// Recompute each decoder layer's activations in the backward instead of keeping them (same gradients, less memory, one more forward of the layers) [default: false].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", help_heading = "Optimisation")]
    pub recompute_activations: Option<bool>,
    /// Peak learning rate [default: 3e-3 for tiny; 1e-6 for a pretrained model].
    #[arg(long, help_heading = "Optimisation")]
    pub lr: Option<f64>,
    /// Schedule after the linear warm-up [default: constant for tiny; cosine for a pretrained model].
    #[arg(long, help_heading = "Optimisation")]
    pub lr_schedule: Option<ScheduleKind>,
    /// Warm-up steps [default: 0 for tiny; steps/10 for a pretrained model].
    #[arg(long, help_heading = "Optimisation")]
    pub warmup_steps: Option<u64>,
    /// Final LR as a fraction of --lr (linear, cosine) [default: 0].
    #[arg(long, help_heading = "Optimisation")]
    pub min_lr_ratio: Option<f64>,
    /// Decoupled weight decay on matrices [default: 0].
    #[arg(long, help_heading = "Optimisation")]
    pub weight_decay: Option<f64>,
    /// AdamW beta1 [default: 0.9].
    #[arg(long, help_heading = "Optimisation")]
    pub adam_beta1: Option<f64>,
    /// AdamW beta2 [default: 0.99].
    #[arg(long, help_heading = "Optimisation")]
    pub adam_beta2: Option<f64>,
    /// AdamW epsilon [default: 1e-8].
    #[arg(long, help_heading = "Optimisation")]
    pub adam_eps: Option<f64>,
    /// Clip the gradient's global norm (0 = off) [default: 1].
    #[arg(long, help_heading = "Optimisation")]
    pub grad_clip: Option<f64>,

    /// Objective from the registry (`rltrain objectives`) [default: grpo].
    #[arg(long, help_heading = "Objective", value_parser = objective_name)]
    pub objective: Option<String>,
    /// A paper's own settings for the objective (`rltrain objectives` lists them).
    #[arg(long, help_heading = "Objective")]
    pub paper: Option<Paper>,
    #[command(flatten)]
    pub overrides: ObjectiveOverrides,

    /// Evaluate every N steps, before training and at the end (0 = off) [default: 0].
    #[arg(long, value_name = "N", help_heading = "Evaluation")]
    pub eval_every: Option<u64>,
    /// Evaluation sets: files, suites or task:NAME, comma-separated.
    #[arg(long, value_delimiter = ',', help_heading = "Evaluation")]
    pub eval_data: Option<Vec<String>>,
    /// Samples per problem (avg@k, pass@k) [default: 4].
    #[arg(long, value_name = "K", help_heading = "Evaluation")]
    pub eval_k: Option<usize>,
    /// Problems per evaluation set (0 = all) [default: 64].
    #[arg(long, value_name = "M", help_heading = "Evaluation")]
    pub eval_limit: Option<usize>,
    /// Sampling temperature of evaluations [default: 1].
    #[arg(long, help_heading = "Evaluation")]
    pub eval_temperature: Option<f64>,
}

/// A registry name, checked where it is typed (a typo gets "did you mean" and the valid names).
fn objective_name(name: &str) -> Result<String, String> {
    rltrain::objectives::Objective::from_name(name).map(|o| o.name.to_string()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;
    use rltrain::config::{pretrained_defaults, TrainConfig};
    use serde_json::Value;

    use super::{Cli, DeviceSpec};

    /// `X` of every `[default: X]` note in the help of `rltrain train`, by config key.
    fn help_defaults() -> Vec<(String, String)> {
        let mut cmd = Cli::command();
        cmd.build();
        let train = cmd.find_subcommand("train").expect("train subcommand");
        let mut out = Vec::new();
        for arg in train.get_arguments() {
            let help = arg.get_long_help().or(arg.get_help()).map(|h| h.to_string()).unwrap_or_default();
            if let Some(start) = help.find("[default: ") {
                let rest = &help[start + "[default: ".len()..];
                let note = rest.split(']').next().unwrap_or_default().to_string();
                out.push((arg.get_id().to_string(), note));
            }
        }
        out
    }

    fn same(note: &str, v: &Value) -> bool {
        match v {
            Value::Number(n) => note.parse::<f64>().ok() == n.as_f64(),
            Value::String(s) => note == s,
            Value::Bool(b) => note.parse::<bool>().ok() == Some(*b),
            _ => false,
        }
    }

    /// The device and the objective are checked where they are typed, with the flag named.
    #[test]
    fn device_and_objective_are_checked_at_parse_time() {
        use clap::Parser;
        let err = Cli::try_parse_from(["rltrain", "--device", "gpu0"]).unwrap_err().to_string();
        assert!(err.contains("--device") && err.contains("auto, cpu, cuda or cuda:N"), "{err}");
        let err = Cli::try_parse_from(["rltrain", "--objective", "dgop"]).unwrap_err().to_string();
        assert!(err.contains("--objective") && err.contains("did you mean `dgpo`"), "{err}");
        let ok = Cli::try_parse_from(["rltrain", "--objective", "dgpo", "--device", "cuda:1"]).expect("valid flags");
        assert_eq!((ok.train.objective.as_deref(), ok.train.device), (Some("dgpo"), Some(DeviceSpec::Cuda(1))));
    }

    #[test]
    fn help_shows_the_real_defaults() {
        let defaults = serde_json::to_value(TrainConfig::default()).expect("serialise");
        let pretrained = pretrained_defaults(100);
        let notes = help_defaults();
        assert!(notes.len() >= 30, "only {} notes found: {notes:?}", notes.len());
        for (key, note) in notes {
            // Conditional defaults ("on for dapo", "max-new-tokens/5 for dapo") name a rule, not a value.
            let unconditional = note.split([';', ',']).next().unwrap_or_default();
            let (value, condition) = match unconditional.split_once(" for ") {
                Some((v, c)) => (v.trim(), Some(c)),
                None => (unconditional.trim(), None),
            };
            // Objective overrides default to the registry; the one constant among them is c_ω.
            let cap = serde_json::json!(rltrain::config::CPGD_WEIGHT_CAP);
            let want = if key == "cpgd_weight_cap" { &cap } else { defaults.get(&key).unwrap_or(&Value::Null) };
            match (want, condition) {
                (Value::Null, Some(_)) => continue, // `None` = the rule in the note
                _ => assert!(same(value, want), "--{key}: help says {note:?}, the default is {want}"),
            }
            if let Some(alt) = note.split("; ").nth(1).and_then(|a| a.strip_suffix(" for a pretrained model")) {
                let model = pretrained.get(&key).unwrap_or(&Value::Null);
                let alt = if alt == "steps/10" { "10" } else { alt }; // of the 100 steps above
                assert!(
                    same(alt, model),
                    "--{key}: help says {alt:?} for pretrained models, the model default is {model}"
                );
            }
        }
    }
}
