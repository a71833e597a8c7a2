//! The trainable model: parameters as candle `Var`s under Hugging Face names, a forward pass over
//! padded batches with per-token log-probs and entropy, and loading/saving.

use super::batch::PaddedBatch;
use super::config::ModelConfig;
use super::error::{Error, Result};
use super::network::{parameter_names, parameter_shape, Layer, Network, StepInput};
use super::ops::OpPath;
use super::rng::Rng;
use candle_core::{DType, Device, Tensor, Var};
use std::collections::HashMap;
use std::path::Path;

/// A decoder-only language model whose parameters are `Var`s (trainable).
#[derive(Debug, Clone)]
pub struct Model {
    config: ModelConfig,
    vars: Vec<(String, Var)>,
}

/// Per-token log-probs of a batch's own next tokens.
///
/// Entry `[b, t]` is about token `t + 1` given tokens `..= t`, so all tensors are `[B, T - 1]`.
#[derive(Debug, Clone)]
pub struct TokenLogProbs {
    /// `log p(token_{t+1} | prefix)` under `softmax(logits / temperature)`.
    pub logprobs: Tensor,
    /// Entropy of that distribution.
    pub entropy: Tensor,
    /// 1.0 where both the context token and the target token are real, else 0.0 (f32).
    pub mask: Tensor,
}

impl Model {
    /// A randomly initialised model (weights N(0, 0.02), norms 1, biases 0), seeded.
    pub fn random(config: &ModelConfig, dtype: DType, device: &Device, seed: u64) -> Result<Self> {
        config.validate()?;
        let mut rng = Rng::new(seed);
        let mut tensors = HashMap::new();
        for name in parameter_names(config) {
            let shape =
                parameter_shape(config, &name).ok_or_else(|| Error::Format(format!("unknown parameter `{name}`")))?;
            let n: usize = shape.iter().product();
            let data: Vec<f32> = if name.ends_with("norm.weight") {
                vec![1.0; n]
            } else if name.ends_with(".bias") {
                vec![0.0; n]
            } else {
                (0..n).map(|_| (rng.normal() * 0.02) as f32).collect()
            };
            tensors.insert(name, Tensor::from_vec(data, shape, device)?);
        }
        Self::from_tensors(config.clone(), tensors, dtype)
    }

    /// Builds the model from tensors under Hugging Face names, converting them to `dtype`.
    /// Fails on a missing parameter or a wrong shape; ignores extra tensors (e.g. a tied
    /// `lm_head.weight` copy).
    pub fn from_tensors(config: ModelConfig, mut tensors: HashMap<String, Tensor>, dtype: DType) -> Result<Self> {
        config.validate()?;
        let mut vars = Vec::new();
        for name in parameter_names(&config) {
            let tensor = tensors.remove(&name).ok_or_else(|| Error::Format(format!("missing parameter `{name}`")))?;
            let expected = parameter_shape(&config, &name).unwrap_or_default();
            if tensor.dims() != expected.as_slice() {
                return Err(Error::Format(format!(
                    "parameter `{name}` has shape {:?}, expected {expected:?}",
                    tensor.dims()
                )));
            }
            vars.push((name, Var::from_tensor(&tensor.to_dtype(dtype)?)?));
        }
        Ok(Model { config, vars })
    }

    /// The model's hyper-parameters.
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// Parameters with their Hugging Face names, in a fixed order.
    pub fn vars(&self) -> &[(String, Var)] {
        &self.vars
    }

    /// The parameter with this name.
    pub fn var(&self, name: &str) -> Option<&Var> {
        self.vars.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// The parameters' dtype.
    pub fn dtype(&self) -> DType {
        self.vars.first().map(|(_, v)| v.dtype()).unwrap_or(DType::F32)
    }

    /// The parameters' device.
    pub fn device(&self) -> Device {
        self.vars.first().map(|(_, v)| v.device().clone()).unwrap_or(Device::Cpu)
    }

    /// The network on the parameters themselves (gradients flow into the `Var`s).
    pub fn network(&self) -> Result<Network> {
        // Each weight enters the graph through a reshape to its own shape (a view, no copy). candle's
        // backward detaches the gradient of every node it processes but not of a `Var`, whose
        // gradient is then e.g. `upstream @ activation` with the upstream gradient still attached:
        // the parameters' gradients would keep every intermediate gradient alive (~1.3 GB of a
        // SmolLM2-135M step at 4x153 tokens). Through the reshape node the `Var` receives the
        // detached gradient, so intermediate gradients are freed as soon as they are consumed.
        let map: HashMap<&str, Tensor> = self
            .vars
            .iter()
            .map(|(n, v)| Ok((n.as_str(), v.as_tensor().reshape(v.shape())?)))
            .collect::<Result<_>>()?;
        let get = |name: &str| -> Result<Tensor> {
            map.get(name).cloned().ok_or_else(|| Error::Format(format!("missing parameter `{name}`")))
        };
        let c = &self.config;
        let mut layers = Vec::with_capacity(c.num_layers);
        for i in 0..c.num_layers {
            let p = format!("model.layers.{i}");
            let bias = |proj: &str| -> Result<Option<Tensor>> {
                if c.attention_bias() {
                    get(&format!("{p}.self_attn.{proj}_proj.bias")).map(Some)
                } else {
                    Ok(None)
                }
            };
            layers.push(Layer {
                attn_norm: get(&format!("{p}.input_layernorm.weight"))?,
                wq: get(&format!("{p}.self_attn.q_proj.weight"))?,
                wk: get(&format!("{p}.self_attn.k_proj.weight"))?,
                wv: get(&format!("{p}.self_attn.v_proj.weight"))?,
                bq: bias("q")?,
                bk: bias("k")?,
                bv: bias("v")?,
                wo: get(&format!("{p}.self_attn.o_proj.weight"))?,
                mlp_norm: get(&format!("{p}.post_attention_layernorm.weight"))?,
                w_gate: get(&format!("{p}.mlp.gate_proj.weight"))?,
                w_up: get(&format!("{p}.mlp.up_proj.weight"))?,
                w_down: get(&format!("{p}.mlp.down_proj.weight"))?,
            });
        }
        let embed = get("model.embed_tokens.weight")?;
        let lm_head = if c.tie_word_embeddings { embed.clone() } else { get("lm_head.weight")? };
        Ok(Network {
            config: c.clone(),
            embed,
            layers,
            norm: get("model.norm.weight")?,
            lm_head,
            op_path: OpPath::default(),
        })
    }

    /// The network on detached copies of the parameters (same storage, no autograd): for sampling.
    pub fn inference_network(&self) -> Result<Network> {
        Ok(self.network()?.detached())
    }

    /// Logits at every position, `[B, T, vocab]`, with autograd.
    pub fn forward(&self, batch: &PaddedBatch) -> Result<Tensor> {
        let net = self.network()?;
        let input = StepInput { ids: &batch.ids, positions: &batch.positions, key_valid: &batch.valid };
        let hidden = net.hidden_states(&input, None)?;
        net.logits(&hidden)
    }

    /// Log-probs and entropies of each sequence's own tokens under `softmax(logits / temperature)`
    /// (temperature 1 for the model itself), computed in f32 with autograd.
    pub fn token_logprobs(&self, batch: &PaddedBatch, temperature: f64) -> Result<TokenLogProbs> {
        if !(temperature.is_finite() && temperature > 0.0) {
            return Err(Error::Request(format!("temperature must be positive, got {temperature}")));
        }
        let (b, t) = batch.ids.dims2()?;
        if t < 2 {
            return Err(Error::Request("log-probs need sequences of at least 2 tokens".into()));
        }
        // Every position's target (the next token; a placeholder at the last position, whose
        // outputs are dropped), straight from the hidden states: no `[B, T, V]` logits.
        let net = self.network()?;
        let input = StepInput { ids: &batch.ids, positions: &batch.positions, key_valid: &batch.valid };
        let hidden = net.hidden_states(&input, None)?;
        let targets: Vec<u32> = batch.host_ids.iter().flat_map(|row| row[1..].iter().copied().chain([0])).collect();
        let targets = Tensor::from_vec(targets, (b, t), hidden.device())?;
        let (logprobs, entropy) = net.target_logprobs(&hidden, &targets, temperature)?;
        let logprobs = logprobs.narrow(1, 0, t - 1)?.contiguous()?;
        let entropy = entropy.narrow(1, 0, t - 1)?.contiguous()?;
        let mask: Vec<f32> =
            batch.valid.iter().flat_map(|row| row.windows(2).map(|w| if w[0] && w[1] { 1.0 } else { 0.0 })).collect();
        let mask = Tensor::from_vec(mask, (b, t - 1), hidden.device())?;
        Ok(TokenLogProbs { logprobs, entropy, mask })
    }

    /// Writes `model.safetensors` and `config.json` into `dir` (Hugging Face layout and names),
    /// readable by [`super::weights::load_hf_dir`].
    pub fn save_pretrained(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let tensors: HashMap<String, Tensor> =
            self.vars.iter().map(|(n, v)| (n.clone(), v.as_tensor().detach())).collect();
        let path = dir.join("model.safetensors");
        candle_core::safetensors::save(&tensors, &path)?;
        let dtype = match self.dtype() {
            DType::BF16 => "bfloat16",
            DType::F16 => "float16",
            DType::F64 => "float64",
            _ => "float32",
        };
        let config = serde_json::to_string_pretty(&self.config.to_hf_json(dtype)?)
            .map_err(|e| Error::Format(format!("config.json: {e}")))?;
        let path = dir.join("config.json");
        std::fs::write(&path, config).map_err(|e| Error::io(&path, e))
    }
}
