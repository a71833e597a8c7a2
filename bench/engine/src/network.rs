//! The decoder network (Llama / Qwen2), written only with ops that have a backward pass: the
//! fused ops of [`crate::ops`] (attention, RMSNorm, rotary embedding, SwiGLU, log-probs from
//! hidden states), or with [`OpPath::Composite`] the plain candle ops they replace. The same
//! code runs training forwards (all positions, autograd) and inference with a KV cache (on
//! detached tensors).

use super::config::ModelConfig;
use super::error::{Error, Result};
use super::ops::attention::{attention, attention_reference, KeyMask};
use super::ops::linear::{linear as linear_fused, linear_reference};
use super::ops::{lm_head, rms_norm::rms_norm, rotary, swiglu::swiglu, OpPath};
use candle_core::{DType, Device, Tensor, D};

/// Weights of one decoder layer.
#[derive(Debug, Clone)]
pub struct Layer {
    pub(crate) attn_norm: Tensor,
    pub(crate) wq: Tensor,
    pub(crate) wk: Tensor,
    pub(crate) wv: Tensor,
    pub(crate) bq: Option<Tensor>,
    pub(crate) bk: Option<Tensor>,
    pub(crate) bv: Option<Tensor>,
    pub(crate) wo: Tensor,
    pub(crate) mlp_norm: Tensor,
    pub(crate) w_gate: Tensor,
    pub(crate) w_up: Tensor,
    pub(crate) w_down: Tensor,
}

/// All weights of the network, as tensors (tracked `Var` tensors for training, detached ones for
/// sampling).
#[derive(Debug, Clone)]
pub struct Network {
    pub(crate) config: ModelConfig,
    pub(crate) embed: Tensor,
    pub(crate) layers: Vec<Layer>,
    pub(crate) norm: Tensor,
    pub(crate) lm_head: Tensor,
    pub(crate) op_path: OpPath,
}

/// Hugging Face parameter names, in a fixed order (embedding, layers, final norm, head).
pub fn parameter_names(config: &ModelConfig) -> Vec<String> {
    let mut names = vec!["model.embed_tokens.weight".to_string()];
    for i in 0..config.num_layers {
        let p = format!("model.layers.{i}");
        names.push(format!("{p}.input_layernorm.weight"));
        for proj in ["q", "k", "v"] {
            names.push(format!("{p}.self_attn.{proj}_proj.weight"));
            if config.attention_bias() {
                names.push(format!("{p}.self_attn.{proj}_proj.bias"));
            }
        }
        names.push(format!("{p}.self_attn.o_proj.weight"));
        names.push(format!("{p}.post_attention_layernorm.weight"));
        for proj in ["gate", "up", "down"] {
            names.push(format!("{p}.mlp.{proj}_proj.weight"));
        }
    }
    names.push("model.norm.weight".to_string());
    if !config.tie_word_embeddings {
        names.push("lm_head.weight".to_string());
    }
    names
}

/// The expected shape of a parameter, by its Hugging Face name.
pub fn parameter_shape(config: &ModelConfig, name: &str) -> Option<Vec<usize>> {
    let c = config;
    let (d, q_out, kv_out) = (c.hidden_size, c.num_heads * c.head_dim, c.num_kv_heads * c.head_dim);
    let suffix = name.rsplit_once("layers.").map(|(_, rest)| rest.split_once('.').map(|(_, s)| s).unwrap_or(rest));
    Some(match (name, suffix) {
        ("model.embed_tokens.weight" | "lm_head.weight", _) => vec![c.vocab_size, d],
        ("model.norm.weight", _) => vec![d],
        (_, Some("input_layernorm.weight" | "post_attention_layernorm.weight")) => vec![d],
        (_, Some("self_attn.q_proj.weight")) => vec![q_out, d],
        (_, Some("self_attn.k_proj.weight" | "self_attn.v_proj.weight")) => vec![kv_out, d],
        (_, Some("self_attn.q_proj.bias")) => vec![q_out],
        (_, Some("self_attn.k_proj.bias" | "self_attn.v_proj.bias")) => vec![kv_out],
        (_, Some("self_attn.o_proj.weight")) => vec![d, q_out],
        (_, Some("mlp.gate_proj.weight" | "mlp.up_proj.weight")) => vec![c.intermediate_size, d],
        (_, Some("mlp.down_proj.weight")) => vec![d, c.intermediate_size],
        _ => return None,
    })
}

/// Per-layer key/value cache for incremental decoding (inference only: writes are in place and
/// not recorded by autograd).
///
/// Keys and values live in buffers `[B, KVH, capacity, head_dim]` written with `slice_set`, so a
/// decoding step copies only the new position instead of the whole cache; a full buffer doubles.
#[derive(Debug, Clone, Default)]
pub struct KvCache {
    layers: Vec<Option<(Tensor, Tensor)>>,
    len: usize,
    capacity: usize,
}

impl KvCache {
    /// An empty cache for `num_layers` layers.
    pub fn new(num_layers: usize) -> Self {
        Self::with_capacity(num_layers, 0)
    }

    /// An empty cache that holds `capacity` positions before it has to grow.
    pub fn with_capacity(num_layers: usize, capacity: usize) -> Self {
        KvCache { layers: vec![None; num_layers], len: 0, capacity }
    }

    /// Number of cached positions (0 when empty).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Keeps (and reorders or repeats) batch rows: row `i` of the result is row `rows[i]`.
    pub fn select_rows(&mut self, rows: &Tensor) -> Result<()> {
        for entry in self.layers.iter_mut().flatten() {
            entry.0 = entry.0.index_select(rows, 0)?;
            entry.1 = entry.1.index_select(rows, 0)?;
        }
        Ok(())
    }

    /// Appends `k`, `v` (`[B, KVH, T, hd]`) to layer `layer` and returns views of all cached
    /// keys and values. Call [`KvCache::advance`] once all layers have appended.
    fn append(&mut self, layer: usize, k: &Tensor, v: &Tensor) -> Result<(Tensor, Tensor)> {
        let t = k.dim(2)?;
        let needed = self.len + t;
        let slot = &mut self.layers[layer];
        let grow = |buf: &Tensor, cap: usize| -> Result<Tensor> {
            let (b, h, _, d) = buf.dims4()?;
            let new = Tensor::zeros((b, h, cap, d), buf.dtype(), buf.device())?;
            if self.len > 0 {
                new.slice_set(&buf.narrow(2, 0, self.len)?.contiguous()?, 2, 0)?;
            }
            Ok(new)
        };
        let (kb, vb) = match slot.take() {
            Some((kb, vb)) if kb.dim(2)? >= needed => (kb, vb),
            Some((kb, vb)) => {
                let cap = needed.max(2 * kb.dim(2)?);
                (grow(&kb, cap)?, grow(&vb, cap)?)
            }
            None => {
                let cap = needed.max(self.capacity);
                let (b, h, _, d) = k.dims4()?;
                (
                    Tensor::zeros((b, h, cap, d), k.dtype(), k.device())?,
                    Tensor::zeros((b, h, cap, d), v.dtype(), v.device())?,
                )
            }
        };
        kb.slice_set(&k.contiguous()?, 2, self.len)?;
        vb.slice_set(&v.contiguous()?, 2, self.len)?;
        let views = (kb.narrow(2, 0, needed)?, vb.narrow(2, 0, needed)?);
        *slot = Some((kb, vb));
        Ok(views)
    }

    /// Records that `t` positions were appended to every layer.
    fn advance(&mut self, t: usize) {
        self.len += t;
    }
}

/// The rotary tables and attention mask every decoder layer of one forward uses.
#[derive(Debug, Clone)]
pub struct LayerInputs {
    cos: Tensor,
    sin: Tensor,
    mask: KeyMask,
}

/// Inputs of one forward call: token ids `[B, T]`, their positions `[B, T]`, and which cached
/// plus new keys are real tokens (`key_valid[b][j]` over `cache.len() + T` keys).
pub struct StepInput<'a> {
    /// Token ids, `[B, T]` u32.
    pub ids: &'a Tensor,
    /// Rotary positions, `[B, T]` u32.
    pub positions: &'a Tensor,
    /// Per row, whether each key (cached then new) is a real token.
    pub key_valid: &'a [Vec<bool>],
}

/// The dtype the rotary tables are computed in.
fn compute_dtype(dtype: DType) -> DType {
    match dtype {
        DType::F16 | DType::BF16 => DType::F32,
        d => d,
    }
}

impl Network {
    /// The model's hyper-parameters.
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// The weights' dtype.
    pub fn dtype(&self) -> DType {
        self.embed.dtype()
    }

    /// The weights' device.
    pub fn device(&self) -> &Device {
        self.embed.device()
    }

    /// The same network running the ops of `path` (fused by default).
    pub fn with_op_path(mut self, path: OpPath) -> Self {
        self.op_path = path;
        self
    }

    /// Which ops the network runs.
    pub fn op_path(&self) -> OpPath {
        self.op_path
    }

    /// A copy whose tensors are detached from autograd (sharing storage): for sampling, so the
    /// KV cache does not keep a gradient graph alive.
    pub fn detached(&self) -> Self {
        let d = |t: &Tensor| t.detach();
        let od = |t: &Option<Tensor>| t.as_ref().map(Tensor::detach);
        Network {
            config: self.config.clone(),
            embed: d(&self.embed),
            layers: self
                .layers
                .iter()
                .map(|l| Layer {
                    attn_norm: d(&l.attn_norm),
                    wq: d(&l.wq),
                    wk: d(&l.wk),
                    wv: d(&l.wv),
                    bq: od(&l.bq),
                    bk: od(&l.bk),
                    bv: od(&l.bv),
                    wo: d(&l.wo),
                    mlp_norm: d(&l.mlp_norm),
                    w_gate: d(&l.w_gate),
                    w_up: d(&l.w_up),
                    w_down: d(&l.w_down),
                })
                .collect(),
            norm: d(&self.norm),
            lm_head: d(&self.lm_head),
            op_path: self.op_path,
        }
    }

    /// cos and sin tables for the given positions, `[B, T, head_dim]` each.
    fn rotary(&self, positions: &Tensor) -> Result<(Tensor, Tensor)> {
        let c = &self.config;
        let cdt = compute_dtype(self.dtype());
        let half = c.head_dim / 2;
        let inv_freq = Tensor::new(c.inv_freq().as_slice(), self.device())?.to_dtype(cdt)?.reshape((1, 1, half))?;
        let pos = positions.to_dtype(cdt)?.unsqueeze(2)?;
        let angles = pos.broadcast_mul(&inv_freq)?;
        let angles = Tensor::cat(&[&angles, &angles], D::Minus1)?;
        let dtype = self.dtype();
        Ok((angles.cos()?.to_dtype(dtype)?, angles.sin()?.to_dtype(dtype)?))
    }

    /// Which keys each query sees: query `i` (absolute index `offset + i`) sees key `j` when
    /// `j <= offset + i` and the key is a real token.
    fn mask(&self, batch: usize, t: usize, offset: usize, key_valid: &[Vec<bool>]) -> Result<KeyMask> {
        let s = offset + t;
        if key_valid.len() != batch || key_valid.iter().any(|row| row.len() != s) {
            return Err(Error::Request(format!("key mask must be {batch} rows of {s} entries")));
        }
        KeyMask::new(key_valid, offset)
    }

    /// Final hidden states `[B, T, D]` (after the last norm). With a cache, new keys and values
    /// are appended to it and attention covers cached plus new positions; the cache is for
    /// inference (use it with [`Network::detached`] weights: its writes are not differentiable).
    pub fn hidden_states(&self, input: &StepInput<'_>, mut cache: Option<&mut KvCache>) -> Result<Tensor> {
        let (b, t) = input.ids.dims2()?;
        let offset = cache.as_ref().map(|c| c.len()).unwrap_or(0);
        let mask = self.mask(b, t, offset, input.key_valid)?;
        let (cos, sin) = self.rotary(input.positions)?;
        let mut x = self.embed(input.ids)?;
        if let Some(cache) = cache.as_mut() {
            if cache.layers.len() != self.layers.len() {
                **cache = KvCache::with_capacity(self.layers.len(), cache.capacity);
            }
        }
        let shared = LayerInputs { cos, sin, mask };
        for i in 0..self.layers.len() {
            x = self.block(i, &x, &shared, cache.as_mut().map(|c| (&mut **c, i)))?;
        }
        if let Some(cache) = cache {
            cache.advance(t);
        }
        self.final_norm(&x)
    }

    /// What every decoder layer of a forward without cache shares (rotary tables, mask): for
    /// running the layers one at a time ([`Network::layer`]), e.g. to recompute activations.
    pub fn layer_inputs(&self, input: &StepInput<'_>) -> Result<LayerInputs> {
        let (b, t) = input.ids.dims2()?;
        let mask = self.mask(b, t, 0, input.key_valid)?;
        let (cos, sin) = self.rotary(input.positions)?;
        Ok(LayerInputs { cos, sin, mask })
    }

    /// Token embeddings `[B, T, D]` of ids `[B, T]` (the first layer's input).
    pub fn embed(&self, ids: &Tensor) -> Result<Tensor> {
        let (b, t) = ids.dims2()?;
        Ok(self.embed.embedding(&ids.flatten_all()?)?.reshape((b, t, self.config.hidden_size))?)
    }

    /// Decoder layer `index` on hidden states `[B, T, D]`, without cache.
    pub fn layer(&self, index: usize, x: &Tensor, shared: &LayerInputs) -> Result<Tensor> {
        self.block(index, x, shared, None)
    }

    /// The final norm (after the last layer): `hidden_states` = `final_norm` of the last layer's
    /// output.
    pub fn final_norm(&self, x: &Tensor) -> Result<Tensor> {
        self.rms_norm(x, &self.norm)
    }

    fn rms_norm(&self, x: &Tensor, w: &Tensor) -> Result<Tensor> {
        let eps = self.config.rms_norm_eps as f32;
        match self.op_path {
            OpPath::Fused => rms_norm(x, w, eps),
            OpPath::Composite => Ok(candle_nn::ops::rms_norm_slow(x, w, eps)?),
        }
    }

    /// Number of decoder layers.
    pub fn num_layers(&self) -> usize {
        self.layers.len()
    }

    fn block(
        &self,
        index: usize,
        x: &Tensor,
        shared: &LayerInputs,
        cache: Option<(&mut KvCache, usize)>,
    ) -> Result<Tensor> {
        let layer = &self.layers[index];
        let h = self.rms_norm(x, &layer.attn_norm)?;
        let h = self.attention(layer, &h, shared, cache)?;
        let x = (x + h)?;
        let h = self.rms_norm(&x, &layer.mlp_norm)?;
        let gate = self.linear(&h, &layer.w_gate, None)?;
        let up = self.linear(&h, &layer.w_up, None)?;
        let act = match self.op_path {
            OpPath::Fused => swiglu(&gate, &up)?,
            OpPath::Composite => (gate.silu()? * up)?,
        };
        Ok((x + self.linear(&act, &layer.w_down, None)?)?)
    }

    /// Logits `[.., vocab]` of hidden states `[.., D]`.
    pub fn logits(&self, hidden: &Tensor) -> Result<Tensor> {
        self.linear(hidden, &self.lm_head, None)
    }

    /// Log-prob of each target token and the entropy of the next-token distribution
    /// `softmax(logits / temperature)`, from hidden states `[.., D]` and targets `[..]` (u32):
    /// both shaped like `targets`, f32 (f64 for f64 models), with autograd. The fused path never
    /// holds more than a chunk of logits ([`lm_head`]); the composite one takes all logits first.
    pub fn target_logprobs(&self, hidden: &Tensor, targets: &Tensor, temperature: f64) -> Result<(Tensor, Tensor)> {
        if !(temperature.is_finite() && temperature > 0.0) {
            return Err(Error::Request(format!("temperature must be positive, got {temperature}")));
        }
        let d = self.config.hidden_size;
        let n = targets.elem_count();
        if hidden.elem_count() != n * d || hidden.dims().last() != Some(&d) {
            return Err(Error::Request(format!("hidden states {:?} for targets {:?}", hidden.dims(), targets.dims())));
        }
        let (hidden, flat) = (hidden.reshape((n, d))?, targets.flatten_all()?);
        let (lp, h) = match self.op_path {
            OpPath::Fused => lm_head::logprob_entropy(&hidden, &self.lm_head, &flat, temperature)?,
            OpPath::Composite => {
                let logits = self.logits(&hidden)?;
                let logits = if logits.dtype() == DType::F64 { logits } else { logits.to_dtype(DType::F32)? };
                super::logprob::token_logprob_entropy(&logits, &flat, temperature)?
            }
        };
        Ok((lp.reshape(targets.shape())?, h.reshape(targets.shape())?))
    }

    fn attention(
        &self,
        layer: &Layer,
        x: &Tensor,
        shared: &LayerInputs,
        cache: Option<(&mut KvCache, usize)>,
    ) -> Result<Tensor> {
        let c = &self.config;
        let (b, t, _) = x.dims3()?;
        let hd = c.head_dim;
        // Projections as `[B, T, heads, hd]`, rotated there, then viewed as `[B, heads, T, hd]`.
        let heads = |w: &Tensor, bias: Option<&Tensor>, n: usize| -> Result<Tensor> {
            Ok(self.linear(x, w, bias)?.reshape((b, t, n, hd))?)
        };
        let rope = |y: Tensor| -> Result<Tensor> {
            let y = match self.op_path {
                OpPath::Fused => rotary::rotary(&y, &shared.cos, &shared.sin)?,
                OpPath::Composite => rotary::rotary_reference(&y, &shared.cos, &shared.sin)?,
            };
            Ok(y.transpose(1, 2)?)
        };
        let q = rope(heads(&layer.wq, layer.bq.as_ref(), c.num_heads)?)?;
        let k = rope(heads(&layer.wk, layer.bk.as_ref(), c.num_kv_heads)?)?;
        let v = heads(&layer.wv, layer.bv.as_ref(), c.num_kv_heads)?.transpose(1, 2)?;
        let (k, v) = match cache {
            Some((cache, index)) => cache.append(index, &k, &v)?,
            None => (k, v),
        };
        let out = match self.op_path {
            OpPath::Fused => attention(&q, &k, &v, &shared.mask)?,
            OpPath::Composite => attention_reference(&q, &k, &v, &shared.mask)?,
        };
        self.linear(&out, &layer.wo, None)
    }

    /// `x · wᵀ (+ b)`: the fused op ([`crate::ops::linear`]) or the composite.
    fn linear(&self, x: &Tensor, w: &Tensor, b: Option<&Tensor>) -> Result<Tensor> {
        match self.op_path {
            OpPath::Fused => linear_fused(x, w, b),
            OpPath::Composite => linear_reference(x, w, b),
        }
    }
}
