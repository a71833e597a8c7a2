//! Model hyper-parameters, read from GGUF metadata or a Hugging Face `config.json`.

use super::error::{Error, Result};
use candle_core::quantized::gguf_file;
use serde_json::{json, Value};

/// The decoder architectures the engine implements (they differ only in q/k/v biases).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    /// Llama (SmolLM2, Llama 2/3 without rope scaling): no attention biases.
    Llama,
    /// Qwen2 / Qwen2.5: biases on the q, k and v projections.
    Qwen2,
}

impl Arch {
    /// The architecture name used in GGUF metadata and `config.json` `model_type`.
    pub fn name(self) -> &'static str {
        match self {
            Arch::Llama => "llama",
            Arch::Qwen2 => "qwen2",
        }
    }
}

/// Shapes and constants of a decoder-only transformer.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelConfig {
    /// Architecture.
    pub arch: Arch,
    /// Vocabulary size (rows of the embedding).
    pub vocab_size: usize,
    /// Model width.
    pub hidden_size: usize,
    /// Width of the MLP.
    pub intermediate_size: usize,
    /// Number of decoder layers.
    pub num_layers: usize,
    /// Number of query heads.
    pub num_heads: usize,
    /// Number of key/value heads (grouped-query attention when smaller than `num_heads`).
    pub num_kv_heads: usize,
    /// Width of one head.
    pub head_dim: usize,
    /// Rotary embedding base.
    pub rope_theta: f64,
    /// Epsilon of the RMS norms.
    pub rms_norm_eps: f64,
    /// Whether the output projection shares the embedding matrix.
    pub tie_word_embeddings: bool,
    /// Context length the model was trained for (informational).
    pub max_position_embeddings: usize,
}

impl ModelConfig {
    /// A tiny model for fast tests: 2 layers, width 64, 4 query and 2 key/value heads.
    pub fn tiny(arch: Arch, vocab_size: usize) -> Self {
        ModelConfig {
            arch,
            vocab_size,
            hidden_size: 64,
            intermediate_size: 128,
            num_layers: 2,
            num_heads: 4,
            num_kv_heads: 2,
            head_dim: 16,
            rope_theta: 10_000.0,
            rms_norm_eps: 1e-5,
            tie_word_embeddings: true,
            max_position_embeddings: 2048,
        }
    }

    /// Names of the architectures [`ModelConfig::preset`] knows.
    pub const PRESETS: [&'static str; 3] = ["qwen2-0.5b", "qwen2-1.5b", "smollm2-135m"];

    /// The shape of a known model (Qwen2.5-0.5B, Qwen2.5-1.5B, SmolLM2-135M), for speed tests
    /// with random weights (`--model random:NAME`; the same presets as the PyTorch reference in
    /// `shared/bench/torch_reference.py`).
    pub fn preset(name: &str) -> Result<Self> {
        let qwen2 = |hidden_size, intermediate_size, num_layers, num_heads| ModelConfig {
            arch: Arch::Qwen2,
            vocab_size: 151_936,
            hidden_size,
            intermediate_size,
            num_layers,
            num_heads,
            num_kv_heads: 2,
            head_dim: hidden_size / num_heads,
            rope_theta: 1e6,
            rms_norm_eps: 1e-6,
            tie_word_embeddings: true,
            max_position_embeddings: 32_768,
        };
        match name {
            "qwen2-0.5b" => Ok(qwen2(896, 4864, 24, 14)),
            "qwen2-1.5b" => Ok(qwen2(1536, 8960, 28, 12)),
            "smollm2-135m" => Ok(ModelConfig {
                arch: Arch::Llama,
                vocab_size: 49_152,
                hidden_size: 576,
                intermediate_size: 1536,
                num_layers: 30,
                num_heads: 9,
                num_kv_heads: 3,
                head_dim: 64,
                rope_theta: 1e5,
                rms_norm_eps: 1e-5,
                tie_word_embeddings: true,
                max_position_embeddings: 8192,
            }),
            other => Err(Error::Request(format!("unknown model preset `{other}` (known: {})", Self::PRESETS.join(", ")))),
        }
    }

    /// Whether q, k and v projections carry biases.
    pub fn attention_bias(&self) -> bool {
        self.arch == Arch::Qwen2
    }

    /// Checks the shapes are consistent.
    pub fn validate(&self) -> Result<()> {
        let bad = |msg: String| Err(Error::Format(msg));
        if self.vocab_size == 0 || self.hidden_size == 0 || self.num_layers == 0 || self.num_heads == 0 {
            return bad(format!("config has a zero size: {self:?}"));
        }
        if self.num_kv_heads == 0 || !self.num_heads.is_multiple_of(self.num_kv_heads) {
            return bad(format!(
                "num_heads ({}) must be a multiple of num_kv_heads ({})",
                self.num_heads, self.num_kv_heads
            ));
        }
        if self.head_dim == 0 || !self.head_dim.is_multiple_of(2) {
            return bad(format!("head_dim ({}) must be even and positive", self.head_dim));
        }
        Ok(())
    }

    /// Reads the config from GGUF metadata (`{arch}.block_count`, `{arch}.embedding_length`, ...).
    pub fn from_gguf(content: &gguf_file::Content, vocab_size_hint: Option<usize>) -> Result<Self> {
        let md = &content.metadata;
        let arch_name = md
            .get("general.architecture")
            .and_then(|v| v.to_string().ok())
            .ok_or_else(|| Error::Format("GGUF lacks `general.architecture`".into()))?;
        let arch = match arch_name.as_str() {
            "llama" => Arch::Llama,
            "qwen2" => Arch::Qwen2,
            other => return Err(Error::Format(format!("unsupported GGUF architecture `{other}` (supported: llama, qwen2)"))),
        };
        let key = |k: &str| format!("{arch_name}.{k}");
        let get_u = |k: &str| -> Result<usize> {
            let v = md.get(&key(k)).ok_or_else(|| Error::Format(format!("GGUF lacks `{}`", key(k))))?;
            gguf_usize(v).ok_or_else(|| Error::Format(format!("GGUF `{}` is not an integer: {v:?}", key(k))))
        };
        let get_f = |k: &str, default: f64| -> f64 {
            md.get(&key(k)).and_then(|v| v.to_f32().ok().map(f64::from).or_else(|| v.to_f64().ok())).unwrap_or(default)
        };
        let hidden_size = get_u("embedding_length")?;
        let num_heads = get_u("attention.head_count")?;
        let num_kv_heads = get_u("attention.head_count_kv").unwrap_or(num_heads);
        let head_dim = get_u("rope.dimension_count").unwrap_or(hidden_size / num_heads.max(1));
        let vocab_size = match get_u("vocab_size") {
            Ok(v) => v,
            Err(e) => vocab_size_hint.ok_or(e)?,
        };
        let config = ModelConfig {
            arch,
            vocab_size,
            hidden_size,
            intermediate_size: get_u("feed_forward_length")?,
            num_layers: get_u("block_count")?,
            num_heads,
            num_kv_heads,
            head_dim,
            rope_theta: get_f("rope.freq_base", 10_000.0),
            rms_norm_eps: get_f("attention.layer_norm_rms_epsilon", 1e-5),
            tie_word_embeddings: !content.tensor_infos.contains_key("output.weight"),
            max_position_embeddings: get_u("context_length").unwrap_or(2048),
        };
        config.validate()?;
        Ok(config)
    }

    /// Reads a Hugging Face `config.json` (`LlamaForCausalLM` or `Qwen2ForCausalLM`).
    pub fn from_hf_json(text: &str) -> Result<Self> {
        let v: Value = serde_json::from_str(text).map_err(|e| Error::Format(format!("config.json: {e}")))?;
        let model_type = v.get("model_type").and_then(Value::as_str).unwrap_or("");
        let arch = match model_type {
            "llama" => Arch::Llama,
            "qwen2" => Arch::Qwen2,
            other => return Err(Error::Format(format!("config.json: unsupported model_type `{other}` (supported: llama, qwen2)"))),
        };
        if v.get("rope_scaling").is_some_and(|s| !s.is_null()) {
            return Err(Error::Format("config.json: `rope_scaling` is not supported".into()));
        }
        let get_u = |k: &str| -> Result<usize> {
            v.get(k)
                .and_then(Value::as_u64)
                .map(|x| x as usize)
                .ok_or_else(|| Error::Format(format!("config.json: missing or non-integer `{k}`")))
        };
        let hidden_size = get_u("hidden_size")?;
        let num_heads = get_u("num_attention_heads")?;
        let config = ModelConfig {
            arch,
            vocab_size: get_u("vocab_size")?,
            hidden_size,
            intermediate_size: get_u("intermediate_size")?,
            num_layers: get_u("num_hidden_layers")?,
            num_heads,
            num_kv_heads: get_u("num_key_value_heads").unwrap_or(num_heads),
            head_dim: get_u("head_dim").unwrap_or(hidden_size / num_heads.max(1)),
            rope_theta: v.get("rope_theta").and_then(Value::as_f64).unwrap_or(10_000.0),
            rms_norm_eps: v.get("rms_norm_eps").and_then(Value::as_f64).unwrap_or(1e-6),
            tie_word_embeddings: v.get("tie_word_embeddings").and_then(Value::as_bool).unwrap_or(false),
            max_position_embeddings: get_u("max_position_embeddings").unwrap_or(2048),
        };
        config.validate()?;
        Ok(config)
    }

    /// The Hugging Face `config.json` for this model (read back by [`ModelConfig::from_hf_json`]).
    pub fn to_hf_json(&self, torch_dtype: &str) -> Value {
        let architecture = match self.arch {
            Arch::Llama => "LlamaForCausalLM",
            Arch::Qwen2 => "Qwen2ForCausalLM",
        };
        json!({
            "architectures": [architecture],
            "model_type": self.arch.name(),
            "vocab_size": self.vocab_size,
            "hidden_size": self.hidden_size,
            "intermediate_size": self.intermediate_size,
            "num_hidden_layers": self.num_layers,
            "num_attention_heads": self.num_heads,
            "num_key_value_heads": self.num_kv_heads,
            "head_dim": self.head_dim,
            "rope_theta": self.rope_theta,
            "rms_norm_eps": self.rms_norm_eps,
            "tie_word_embeddings": self.tie_word_embeddings,
            "max_position_embeddings": self.max_position_embeddings,
            "hidden_act": "silu",
            "attention_bias": self.attention_bias(),
            "torch_dtype": torch_dtype,
        })
    }
}

/// Reads any GGUF integer value as `usize`.
pub(crate) fn gguf_usize(v: &gguf_file::Value) -> Option<usize> {
    use gguf_file::Value::*;
    match v {
        U8(x) => Some(*x as usize),
        I8(x) => usize::try_from(*x).ok(),
        U16(x) => Some(*x as usize),
        I16(x) => usize::try_from(*x).ok(),
        U32(x) => Some(*x as usize),
        I32(x) => usize::try_from(*x).ok(),
        U64(x) => usize::try_from(*x).ok(),
        I64(x) => usize::try_from(*x).ok(),
        _ => None,
    }
}
