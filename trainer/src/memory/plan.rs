//! The memory plan of a run: how many rows each forward/backward takes (`--micro-batch-size`)
//! and whether activations are recomputed, chosen from the memory model and what the machine
//! has when the user sets neither; a run whose single row cannot fit is refused before anything
//! is sampled. The plan is recorded in `config.json` under `memory`.

use candle_core::DType;
use rlengine::{Arch, ModelConfig};
use serde::{Deserialize, Serialize};

use super::available::Available;
use super::{gib, parameter_count, quantized_copy, rollout, train_step, Options, StepShape};
use crate::config::groups::ModelSettings;
use crate::error::{Error, Result};

/// Bytes of the process itself: code, tokenizer, data, allocator slack.
pub const RUNTIME_BYTES: u64 = 256 << 20;

/// What a run asks of memory, for [`plan`].
#[derive(Debug, Clone)]
pub struct Demand<'a> {
    /// The policy's shape.
    pub model: &'a ModelConfig,
    /// Its weights' dtype.
    pub dtype: DType,
    /// Whether it trains on the CPU.
    pub cpu: bool,
    /// Rows of the largest mini-batch (one optimizer step).
    pub rows: usize,
    /// The longest prompt of the data, in tokens.
    pub prompt_tokens: usize,
    /// `--max-new-tokens`.
    pub response_tokens: usize,
    /// Rows sampled at once (`--gen-batch`, at most the rows of a step).
    pub rollout_rows: usize,
    /// Rollouts on the quantized CPU decoder (a Q8_0 copy of the weights, an f32 KV cache).
    pub quantized: bool,
    /// A frozen reference copy of the weights is kept.
    pub reference: bool,
    /// `--micro-batch-size` when the user set it (0: the whole mini-batch).
    pub user_micro_batch: Option<usize>,
    /// `--recompute-activations` when the user set it.
    pub user_recompute: Option<bool>,
}

/// Who chose the micro-batch size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChosenBy {
    /// The largest size whose predicted peak fits the budget.
    Auto,
    /// `--micro-batch-size`.
    User,
}

/// The plan, as `config.json` records it (`memory`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryPlan {
    /// Rows per forward/backward.
    pub micro_batch_size: usize,
    /// Whether activations are recomputed layer by layer.
    pub recompute_activations: bool,
    /// Who chose the size.
    pub chosen_by: ChosenBy,
    /// Rows of a mini-batch.
    pub rows_per_mini_batch: usize,
    /// Positions per row planned for: the longest prompt of the data plus `--max-new-tokens`.
    pub positions: usize,
    /// Predicted peak of the run with this plan (the larger of the train part and the rollout).
    pub predicted_peak_bytes: u64,
    /// Predicted peak with one row per micro-batch.
    pub one_row_bytes: u64,
    /// Memory the machine had when the run started.
    pub available_bytes: u64,
    /// Where that figure came from.
    pub available_from: String,
    /// The share of it the plan may use.
    pub budget_bytes: u64,
    /// The kinds of ops the prediction assumed (the engine's today: composite).
    pub ops: String,
}

impl Demand<'_> {
    fn shape(&self, rows: usize) -> StepShape {
        StepShape { rows, prompt: self.prompt_tokens, response: self.response_tokens }
    }

    /// Bytes besides the train step's own: the process, the reference weights, the sampling copy.
    fn extras(&self) -> u64 {
        let e = self.dtype.size_in_bytes() as u64;
        let reference = if self.reference { parameter_count(self.model) * e } else { 0 };
        let quantized = if self.quantized { quantized_copy(self.model) } else { 0 };
        RUNTIME_BYTES + reference + quantized
    }

    /// Predicted peak of the run with micro-batches of `rows` rows.
    pub fn peak(&self, rows: usize, recompute: bool) -> u64 {
        let opts = Options { recompute, accumulate: rows < self.rows, ..Options::current(self.dtype, self.cpu) };
        let train = train_step(self.model, self.shape(rows), &opts);
        let kv_bytes = if self.quantized { 4 } else { self.dtype.size_in_bytes() };
        let sampling = rollout(self.model, self.rollout_rows, self.prompt_tokens + self.response_tokens, kv_bytes);
        let resident = train.term("weights") + train.term("AdamW moments");
        self.extras() + train.total().max(resident + sampling.total())
    }
}

/// Weights, gradients and AdamW moments alone (what must fit before anything else is planned).
pub fn state_bytes(model: &ModelConfig, dtype: DType) -> u64 {
    4 * parameter_count(model) * dtype.size_in_bytes() as u64
}

/// Refuses a model whose weights, gradients and AdamW moments alone exceed the budget; checked
/// before the weights are allocated.
pub fn check_state(model: &ModelConfig, dtype: DType, available: &Available, what: &str) -> Result<()> {
    let need = state_bytes(model, dtype) + RUNTIME_BYTES;
    if need <= available.budget() {
        return Ok(());
    }
    Err(Error::Run(format!(
        "{what} has {} parameters: its weights, gradients and AdamW moments alone need {:.1} GiB, and {} leaves \
         {:.1} GiB to plan with; choose a smaller model",
        parameter_count(model),
        gib(need),
        describe(available),
        gib(available.budget())
    )))
}

/// The plan for `demand` with `available` memory: the user's micro-batch size and recomputation
/// where given; otherwise recomputation only when one row does not fit without it, and the
/// largest micro-batch whose predicted peak fits the budget. Refuses (an error naming the
/// figures and what to change) when one row cannot fit.
pub fn plan(demand: &Demand, available: &Available) -> Result<MemoryPlan> {
    let budget = available.budget();
    let fits = |rows: usize, recompute: bool| demand.peak(rows, recompute) <= budget;
    let recompute = demand.user_recompute.unwrap_or_else(|| !fits(1, false));
    let one_row = demand.peak(1, recompute);
    if one_row > budget {
        let change = if recompute { "" } else { ", add --recompute-activations" };
        return Err(Error::Run(format!(
            "one row of {} prompt + {} response tokens does not fit: predicted {:.1} GiB (weights, gradients, AdamW \
             moments, one row's activations{}), and {} leaves {:.1} GiB to plan with; lower --max-new-tokens{change}, \
             or train a smaller model",
            demand.prompt_tokens,
            demand.response_tokens,
            gib(one_row),
            if recompute { " recomputed layer by layer" } else { "" },
            describe(available),
            gib(budget),
        )));
    }
    let (size, chosen_by) = match demand.user_micro_batch {
        Some(0) => (demand.rows, ChosenBy::User),
        Some(n) => (n.min(demand.rows), ChosenBy::User),
        None => ((1..=demand.rows).rev().find(|&m| fits(m, recompute)).unwrap_or(1), ChosenBy::Auto),
    };
    Ok(MemoryPlan {
        micro_batch_size: size,
        recompute_activations: recompute,
        chosen_by,
        rows_per_mini_batch: demand.rows,
        positions: demand.prompt_tokens + demand.response_tokens,
        predicted_peak_bytes: demand.peak(size, recompute),
        one_row_bytes: one_row,
        available_bytes: available.bytes,
        available_from: available.from.clone(),
        budget_bytes: budget,
        ops: "composite (scores kept, full logits)".into(),
    })
}

impl MemoryPlan {
    /// Rows per no-grad forward (π_old, the reference): the micro-batch when it splits a
    /// mini-batch, else 64.
    pub fn detached_rows(&self) -> usize {
        if self.micro_batch_size < self.rows_per_mini_batch {
            self.micro_batch_size.max(1)
        } else {
            64
        }
    }
}

fn describe(a: &Available) -> String {
    format!("{:.1} GiB available ({}, {}% planned)", gib(a.bytes), a.from, a.share_percent)
}

/// The shape of the `tiny` model with `vocab` tokens, as `--tiny-hidden` and `--tiny-layers` set
/// it (the policy builds its weights from this).
pub fn tiny_config(settings: &ModelSettings, vocab: usize) -> ModelConfig {
    let mut config = ModelConfig::tiny(Arch::Llama, vocab);
    config.hidden_size = settings.tiny_hidden;
    config.intermediate_size = settings.tiny_hidden * 2;
    config.num_layers = settings.tiny_layers;
    config.head_dim = (settings.tiny_hidden / config.num_heads).max(2);
    config
}

#[cfg(test)]
mod tests {
    use super::*;

    fn available(gib: u64) -> Available {
        Available { bytes: gib << 30, from: "test".into(), share_percent: 50 }
    }

    fn demand(model: &ModelConfig, rows: usize, response: usize) -> Demand<'_> {
        Demand {
            model,
            dtype: DType::F32,
            cpu: true,
            rows,
            prompt_tokens: 100,
            response_tokens: response,
            rollout_rows: rows,
            quantized: true,
            reference: false,
            user_micro_batch: None,
            user_recompute: None,
        }
    }

    #[test]
    fn the_tiny_model_with_small_batches_takes_the_whole_mini_batch() {
        // What keeps the resume tests bit-exact and the studies deterministic: one micro-batch.
        let tiny = tiny_config(&ModelSettings::default(), 15);
        let mut d = demand(&tiny, 64, 2);
        d.quantized = false;
        let p = plan(&d, &available(4)).unwrap();
        assert_eq!((p.micro_batch_size, p.recompute_activations, p.chosen_by), (64, false, ChosenBy::Auto));
    }

    #[test]
    fn the_chosen_size_is_the_largest_that_fits() {
        let smol = ModelConfig::preset("smollm2-135m").unwrap();
        let d = demand(&smol, 64, 512);
        let a = available(24);
        let p = plan(&d, &a).unwrap();
        assert!(p.micro_batch_size >= 1 && p.micro_batch_size < 64, "{p:?}");
        assert!(p.predicted_peak_bytes <= a.budget());
        assert!(d.peak(p.micro_batch_size + 1, p.recompute_activations) > a.budget());
        assert_eq!(p.predicted_peak_bytes, d.peak(p.micro_batch_size, p.recompute_activations));
    }

    #[test]
    fn recomputation_is_turned_on_only_when_one_row_needs_it() {
        let smol = ModelConfig::preset("smollm2-135m").unwrap();
        let a = available(24);
        // The shortest doubling of the response length at which one row no longer fits whole.
        let long = (12..24).map(|p| demand(&smol, 8, 1 << p)).find(|d| d.peak(1, false) > a.budget()).unwrap();
        assert!(long.peak(1, true) <= a.budget(), "recomputation makes that row fit");
        assert!(plan(&long, &a).unwrap().recompute_activations);
        assert!(!plan(&demand(&smol, 8, 128), &a).unwrap().recompute_activations);
    }

    #[test]
    fn a_row_that_cannot_fit_is_refused_with_the_figures_and_what_to_change() {
        let smol = ModelConfig::preset("smollm2-135m").unwrap();
        let mut d = demand(&smol, 8, 512);
        d.user_recompute = Some(false);
        let err = plan(&d, &available(4)).unwrap_err().to_string();
        for part in ["does not fit", "GiB", "--max-new-tokens", "--recompute-activations", "smaller model"] {
            assert!(err.contains(part), "{part}: {err}");
        }
    }

    #[test]
    fn the_users_size_is_kept_and_zero_is_the_whole_mini_batch() {
        let tiny = tiny_config(&ModelSettings::default(), 15);
        let mut d = demand(&tiny, 64, 2);
        d.user_micro_batch = Some(5);
        assert_eq!(plan(&d, &available(4)).unwrap().micro_batch_size, 5);
        d.user_micro_batch = Some(0);
        let p = plan(&d, &available(4)).unwrap();
        assert_eq!((p.micro_batch_size, p.chosen_by), (64, ChosenBy::User));
    }

    #[test]
    fn absurd_widths_are_refused_before_their_weights_exist() {
        let settings = ModelSettings { tiny_hidden: 100_000, ..ModelSettings::default() };
        let err = check_state(&tiny_config(&settings, 260), DType::F32, &available(24), "the tiny model")
            .unwrap_err()
            .to_string();
        assert!(err.contains("weights, gradients and AdamW moments") && err.contains("smaller model"), "{err}");
        assert!(check_state(&tiny_config(&ModelSettings::default(), 260), DType::F32, &available(1), "tiny").is_ok());
    }
}
