//! The policy: loading the engine (`default`, a GGUF file, a Hugging Face folder, or a seeded
//! `tiny` model), turning problems into prompt tokens, a frozen reference copy, and the
//! differentiable log-probs of responses.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use candle_core::backprop::GradStore;
use candle_core::{DType, Device, Tensor, Var};
use rlengine::{
    Arch, ChatMessage, ChatTemplate, Engine, LayerInputs, LoadedModel, Model, ModelConfig, ModelSource, ModelSpec,
    Network, PadSide, PaddedBatch, StepInput, Tokenizer,
};

use crate::config::{PromptTemplate, TokenizerChoice, TrainConfig};
use crate::data::Dataset;
use crate::error::{Error, Result};
use rlbase::DeviceSpec;

/// Opens the device named by `--device`: `auto` (the first GPU of a `cuda` build, else the CPU),
/// `cpu`, `cuda` or `cuda:N` (the spelling was checked where it was typed: [`DeviceSpec`]).
pub fn device(spec: DeviceSpec) -> Result<Device> {
    rlengine::open_device(spec).map_err(|e| Error::Run(format!("--device {spec}: {e}")))
}

/// Loads the policy named by `cfg.model.model` (for `tiny`, a from-scratch model seeded with
/// `cfg.run.seed`, whose tokenizer is the task's alphabet for `task:` data under `--tokenizer auto`).
pub fn load(cfg: &TrainConfig, data: &Dataset, device: &Device) -> Result<Engine> {
    let max_batch = cfg.rollout.gen_batch.max(1);
    if cfg.model.model != "tiny" {
        let mut spec = ModelSpec::parse(&cfg.model.model)?;
        spec.device = device.clone();
        spec.max_batch = max_batch;
        return Ok(Engine::load(&spec)?);
    }
    let tokenizer = match (cfg.model.tokenizer, data.task) {
        (TokenizerChoice::Auto | TokenizerChoice::Task, Some(task)) => task_tokenizer(task.alphabet)?,
        (TokenizerChoice::Task, None) => {
            return Err(Error::invalid_config("--tokenizer task needs `task:NAME` data"));
        }
        _ => Tokenizer::byte_level()?,
    };
    let mut config = ModelConfig::tiny(Arch::Llama, tokenizer.vocab_size());
    config.hidden_size = cfg.model.tiny_hidden;
    config.intermediate_size = cfg.model.tiny_hidden * 2;
    config.num_layers = cfg.model.tiny_layers;
    config.head_dim = (cfg.model.tiny_hidden / config.num_heads).max(2);
    let model = Model::random(&config, DType::F32, device, cfg.run.seed)?;
    let loaded = LoadedModel { model, tokenizer, chat_template: ChatTemplate::from_jinja(None) };
    Ok(Engine::from_parts(loaded, max_batch))
}

/// A detached copy of `model`'s current weights (the reference policy, taken before training).
pub fn frozen_copy(model: &Model) -> Result<Model> {
    let tensors: HashMap<String, Tensor> =
        model.vars().iter().map(|(n, v)| Ok((n.clone(), v.as_tensor().detach().copy()?))).collect::<Result<_>>()?;
    Ok(Model::from_tensors(model.config().clone(), tensors, model.dtype())?)
}

fn task_tokenizer(alphabet: &str) -> Result<Tokenizer> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "rltrain-task-tokenizer-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    crate::tasks::write_task_tokenizer(&dir, alphabet)?;
    let tok = Tokenizer::from_hf_dir(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(tok?)
}

/// Whether prompts go through the chat template (`auto`: all but the `tiny` model).
pub fn uses_chat(cfg: &TrainConfig) -> bool {
    match cfg.data.prompt_template {
        PromptTemplate::Chat => true,
        PromptTemplate::Raw => false,
        PromptTemplate::Auto => cfg.model.model != "tiny",
    }
}

/// The prompt token ids of a problem.
pub fn prompt_ids(engine: &Engine, cfg: &TrainConfig, problem: &str) -> Result<Vec<u32>> {
    let text = if uses_chat(cfg) {
        let content = if cfg.data.instruction.is_empty() {
            problem.to_string()
        } else {
            format!("{problem}\n{}", cfg.data.instruction)
        };
        engine.apply_chat_template(&[ChatMessage::user(content)], true)?
    } else {
        problem.to_string()
    };
    let ids = engine.tokenizer().encode(&text)?;
    if ids.is_empty() {
        return Err(Error::Data(format!("problem `{problem}` encodes to no tokens")));
    }
    Ok(ids)
}

/// A batch of prompt + response rows laid out so every response starts at the same column:
/// prompts left-padded to `prompt_width`, responses right-padded to `response_width`.
#[derive(Debug, Clone)]
pub struct SequenceBatch {
    /// The padded rows (positions count real tokens only).
    pub batch: PaddedBatch,
    /// Width of the prompt part.
    pub prompt_width: usize,
    /// Width of the response part.
    pub response_width: usize,
    /// Valid response tokens per row.
    pub response_lengths: Vec<usize>,
}

impl SequenceBatch {
    /// Lays out `(prompt, response)` rows; `pad_id` fills the gaps (never attended to).
    pub fn new(rows: &[(&[u32], &[u32])], pad_id: u32, device: &Device) -> Result<Self> {
        if rows.is_empty() || rows.iter().any(|(p, r)| p.is_empty() || r.is_empty()) {
            return Err(Error::invalid_input("a training row needs a prompt and a response"));
        }
        let pw = rows.iter().map(|(p, _)| p.len()).max().unwrap_or(0);
        let rw = rows.iter().map(|(_, r)| r.len()).max().unwrap_or(0);
        let width = pw + rw;
        let mut host_ids = Vec::with_capacity(rows.len());
        let mut valid = Vec::with_capacity(rows.len());
        let mut positions = Vec::with_capacity(rows.len() * width);
        for (p, r) in rows {
            let lead = pw - p.len();
            let mut ids = vec![pad_id; width];
            ids[lead..pw].copy_from_slice(p);
            ids[pw..pw + r.len()].copy_from_slice(r);
            let ok: Vec<bool> = (0..width).map(|t| (t >= lead && t < pw) || (t >= pw && t < pw + r.len())).collect();
            let mut seen = 0u32;
            for &v in &ok {
                positions.push(if v { seen } else { 0 });
                seen += u32::from(v);
            }
            host_ids.push(ids);
            valid.push(ok);
        }
        let b = rows.len();
        let flat: Vec<u32> = host_ids.iter().flatten().copied().collect();
        let batch = PaddedBatch {
            ids: Tensor::from_vec(flat, (b, width), device)?,
            positions: Tensor::from_vec(positions, (b, width), device)?,
            valid,
            lengths: rows.iter().map(|(p, r)| p.len() + r.len()).collect(),
            side: PadSide::Left,
            host_ids,
        };
        Ok(Self {
            batch,
            prompt_width: pw,
            response_width: rw,
            response_lengths: rows.iter().map(|(_, r)| r.len()).collect(),
        })
    }

    /// Response mask `[B, response_width]` (1 on real response tokens) in `dtype`.
    pub fn mask(&self, dtype: DType, device: &Device) -> Result<Tensor> {
        let rows: Vec<Vec<f64>> = self.response_lengths.iter().map(|&l| vec![1.0; l]).collect();
        Ok(crate::advantage::to_tensor(&rows, self.response_width, dtype, device)?)
    }

    fn targets(&self, device: &Device) -> Result<Tensor> {
        let pw = self.prompt_width;
        let t: Vec<u32> = self.batch.host_ids.iter().flat_map(|row| row[pw..].iter().copied()).collect();
        Ok(Tensor::from_vec(t, (self.batch.batch_size(), self.response_width), device)?)
    }

    /// Log-probs and entropies of the response tokens from the hidden states `[B, T, D]` at the
    /// positions that predict them (`Network::target_logprobs`: the LM head a chunk of tokens
    /// at a time, so the `[B, response_width, V]` logits are never in memory at once).
    fn logprobs(&self, hidden: &Tensor, net: &Network, temperature: f64) -> Result<ResponseLogProbs> {
        let h = hidden.narrow(1, self.prompt_width - 1, self.response_width)?;
        let (logp, entropy) = net.target_logprobs(&h, &self.targets(h.device())?, temperature)?;
        Ok(ResponseLogProbs { logp, entropy })
    }
}

/// Log-probs and entropies of response tokens, `[B, response_width]` each (f32, or f64 models).
#[derive(Debug, Clone)]
pub struct ResponseLogProbs {
    /// `log π(y_t | prefix)` at the sampling temperature.
    pub logp: Tensor,
    /// Entropy of the tempered next-token distribution.
    pub entropy: Tensor,
}

/// Response log-probs with autograd into `model`'s parameters.
pub fn response_logprobs(model: &Model, seqs: &SequenceBatch, temperature: f64) -> Result<ResponseLogProbs> {
    let net = model.network()?;
    forward(&net, seqs, temperature)
}

/// Response log-probs without autograd (reference policy, evaluation).
pub fn response_logprobs_detached(model: &Model, seqs: &SequenceBatch, temperature: f64) -> Result<ResponseLogProbs> {
    let net = model.inference_network()?;
    forward(&net, seqs, temperature)
}

fn forward(net: &Network, seqs: &SequenceBatch, temperature: f64) -> Result<ResponseLogProbs> {
    let b = &seqs.batch;
    let input = StepInput { ids: &b.ids, positions: &b.positions, key_valid: &b.valid };
    let hidden = net.hidden_states(&input, None)?;
    seqs.logprobs(&hidden, net, temperature)
}

/// Activation recomputation (gradient checkpointing per decoder layer): what
/// [`response_logprobs_recomputed`] keeps for the backward pass of the layers.
///
/// The forward runs the layers on detached weights, so no layer keeps its activations; only each
/// layer's input hidden state `[B, T, D]` is kept. The log-probs hang off a leaf holding the last
/// layer's output (through the final norm and the head, with autograd). After `loss.backward()`,
/// [`Recompute::backward`] walks the layers in reverse: it reruns each one with autograd from its
/// kept input, back-propagates the upstream gradient through it, and adds the weights' gradients
/// to the store. Gradients equal those of [`response_logprobs`]; the price is one more forward
/// of the layers, the gain that at most one layer's activations are alive at a time.
pub struct Recompute {
    net: Network,
    /// Each layer's parameters (the `Var` tensors gradients are keyed by), and the embedding's.
    layer_vars: Vec<Vec<Tensor>>,
    embed_var: Option<Tensor>,
    shared: LayerInputs,
    ids: Tensor,
    inputs: Vec<Tensor>,
    top: Var,
}

/// [`response_logprobs`] with activation recomputation: call [`Recompute::backward`] on the
/// gradients of the loss to complete them.
pub fn response_logprobs_recomputed(
    model: &Model,
    seqs: &SequenceBatch,
    temperature: f64,
) -> Result<(ResponseLogProbs, Recompute)> {
    let net = model.network()?;
    let frozen = net.detached();
    let b = &seqs.batch;
    let input = StepInput { ids: &b.ids, positions: &b.positions, key_valid: &b.valid };
    let shared = frozen.layer_inputs(&input)?;
    let mut x = frozen.embed(&b.ids)?;
    let mut inputs = Vec::with_capacity(frozen.num_layers());
    for i in 0..frozen.num_layers() {
        let y = frozen.layer(i, &x, &shared)?;
        inputs.push(x);
        x = y;
    }
    let top = Var::from_tensor(&x)?;
    let hidden = net.final_norm(top.as_tensor())?;
    let lp = seqs.logprobs(&hidden, &net, temperature)?;
    let layer_vars = (0..net.num_layers())
        .map(|i| {
            let prefix = format!("model.layers.{i}.");
            model.vars().iter().filter(|(n, _)| n.starts_with(&prefix)).map(|(_, v)| v.as_tensor().clone()).collect()
        })
        .collect();
    let embed_var = model.var("model.embed_tokens.weight").map(|v| v.as_tensor().clone());
    Ok((lp, Recompute { net, layer_vars, embed_var, shared, ids: b.ids.clone(), inputs, top }))
}

/// Adds `g` to `weight`'s gradient. Detached: candle leaves a `Var`'s gradient attached to the
/// forward graph it came from (it is the result of e.g. `grad @ activation^T`), which would keep
/// every recomputed layer's activations alive.
fn accumulate(grads: &mut GradStore, weight: &Tensor, g: &Tensor) -> Result<()> {
    let sum = match grads.remove(weight) {
        Some(a) => (a.detach() + g.detach())?,
        None => g.detach(),
    };
    grads.insert(weight, sum);
    Ok(())
}

impl Recompute {
    /// Completes `grads` (of a loss on the log-probs) with the gradients of the decoder layers
    /// and the embedding, one layer at a time.
    pub fn backward(self, grads: &mut GradStore) -> Result<()> {
        let Some(mut upstream) = grads.remove(self.top.as_tensor()) else {
            return Ok(()); // The loss does not depend on the layers.
        };
        let Recompute { net, layer_vars, embed_var, shared, ids, inputs, top } = self;
        drop(top);
        for (i, x) in inputs.into_iter().enumerate().rev() {
            let x = Var::from_tensor(&x)?;
            let y = net.layer(i, x.as_tensor(), &shared)?;
            let g = (y * &upstream)?.sum_all()?.backward()?;
            for w in &layer_vars[i] {
                if let Some(gw) = g.get(w) {
                    accumulate(grads, w, gw)?;
                }
            }
            upstream = g
                .get(x.as_tensor())
                .cloned()
                .ok_or_else(|| Error::invalid_input(format!("layer {i}: no gradient reached its input")))?;
        }
        if let Some(w) = embed_var {
            let e = net.embed(&ids)?;
            let g = (e * &upstream)?.sum_all()?.backward()?;
            if let Some(gw) = g.get(&w) {
                accumulate(grads, &w, gw)?;
            }
        }
        Ok(())
    }
}

/// Whether `cfg.model.model` is a file/folder/`default` rather than `tiny` (used in messages).
pub fn describe_model(cfg: &TrainConfig) -> String {
    match ModelSpec::parse(&cfg.model.model).map(|s| s.source) {
        _ if cfg.model.model == "tiny" => {
            format!("tiny (seed {}, width {}, {} layers)", cfg.run.seed, cfg.model.tiny_hidden, cfg.model.tiny_layers)
        }
        Ok(ModelSource::Default) => "SmolLM2-135M-Instruct (default)".into(),
        _ => cfg.model.model.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_parse_like_rlbench_and_unknown_ones_say_what_is_valid() {
        assert!(device(DeviceSpec::Cpu).unwrap().is_cpu());
        assert!(device(DeviceSpec::Auto).is_ok());
        for bad in ["tpu", "cuda:x", "gpu0"] {
            let err = bad.parse::<DeviceSpec>().unwrap_err();
            assert!(err.contains("cuda:N"), "{bad}: {err}");
        }
        if !cfg!(feature = "cuda") {
            let err = device(DeviceSpec::Cuda(1)).unwrap_err().to_string();
            assert!(err.contains("--device cuda:1") && err.contains("--features cuda"), "{err}");
        }
    }

    #[test]
    fn recomputed_activations_give_the_same_gradients() {
        let mut config = ModelConfig::tiny(Arch::Llama, 40);
        config.num_layers = 3;
        let model = Model::random(&config, DType::F32, &Device::Cpu, 7).unwrap();
        let prompts: [&[u32]; 3] = [&[1, 2, 3], &[4, 5], &[6, 7, 8, 9]];
        let responses: [&[u32]; 3] = [&[10, 11, 12, 13], &[14, 15], &[16, 17, 18]];
        let pairs: Vec<(&[u32], &[u32])> = prompts.into_iter().zip(responses).collect();
        let seqs = SequenceBatch::new(&pairs, 0, &Device::Cpu).unwrap();
        let mask = seqs.mask(DType::F32, &Device::Cpu).unwrap();
        let weights =
            Tensor::new(&[[1.0f32, -0.5, 2.0, 0.3], [0.7, 1.1, -1.3, 0.2], [-0.4, 0.9, 1.5, -2.0]], &Device::Cpu)
                .unwrap();
        // A loss on log-probs and entropies, as the objectives use both.
        let loss = |lp: &ResponseLogProbs| -> Tensor {
            let l = ((&lp.logp * &weights).unwrap() + (&lp.entropy * 0.1).unwrap()).unwrap();
            (l * &mask).unwrap().sum_all().unwrap()
        };
        let lp = response_logprobs(&model, &seqs, 0.9).unwrap();
        let plain = loss(&lp).backward().unwrap();
        let (lp2, rec) = response_logprobs_recomputed(&model, &seqs, 0.9).unwrap();
        let diff = (&lp.logp - &lp2.logp).unwrap().abs().unwrap().max_all().unwrap().to_scalar::<f32>().unwrap();
        assert!(diff < 1e-6, "log-probs differ by {diff}");
        let mut grads = loss(&lp2).backward().unwrap();
        rec.backward(&mut grads).unwrap();
        for (name, var) in model.vars() {
            let a = plain.get(var).unwrap_or_else(|| panic!("{name}: no gradient"));
            let b = grads.get(var).unwrap_or_else(|| panic!("{name}: no recomputed gradient"));
            let scale = a.abs().unwrap().max_all().unwrap().to_scalar::<f32>().unwrap().max(1e-3);
            let d = (a - b).unwrap().abs().unwrap().max_all().unwrap().to_scalar::<f32>().unwrap();
            assert!(scale > 0.0 && d <= 1e-5 * scale.max(1.0), "{name}: max diff {d} (scale {scale})");
        }
    }
}
