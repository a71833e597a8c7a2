//! Model hyper-parameters, read from GGUF metadata or a Hugging Face `config.json`.

use super::error::{Error, Result};
use candle_core::quantized::gguf_file;
use serde_json::{json, Value};

/// The decoder architectures the engine implements (they differ only in q/k/v biases).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    /// Llama (SmolLM2, Llama 2, Llama 3.x with its `llama3` rope scaling): no attention biases.
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
    /// How the rotary frequencies are rescaled for long contexts (`None`: plain RoPE).
    pub rope_scaling: Option<RopeScaling>,
}

/// Rescaled rotary frequencies (Hugging Face `rope_scaling`, GGUF `rope_freqs.weight`).
#[derive(Debug, Clone, PartialEq)]
pub enum RopeScaling {
    /// `linear`: every frequency divided by `factor` (positions interpolated).
    Linear {
        /// Divisor of every frequency.
        factor: f64,
    },
    /// `llama3` (Llama 3.1 and later): wavelengths longer than `original / low_freq_factor`
    /// are divided by `factor`, shorter than `original / high_freq_factor` kept, a linear ramp
    /// in between.
    Llama3 {
        /// Divisor of the low frequencies.
        factor: f64,
        /// Start of the ramp, as a fraction of the original context.
        low_freq_factor: f64,
        /// End of the ramp.
        high_freq_factor: f64,
        /// Context length of pre-training.
        original_max_position_embeddings: usize,
    },
    /// One divisor per frequency, as llama.cpp stores `llama3` scaling in a GGUF
    /// (`rope_freqs.weight`, `head_dim / 2` values).
    FreqFactors(Vec<f64>),
}

impl RopeScaling {
    /// The Llama 3.1 parameters (factor 8) and Llama 3.2 (factor 32) share these three.
    const LLAMA3_LOW: f64 = 1.0;
    const LLAMA3_HIGH: f64 = 4.0;
    const LLAMA3_ORIGINAL: usize = 8192;

    /// Reads a Hugging Face `rope_scaling` object (`null` and `default` mean none).
    pub fn from_hf_json(v: &Value) -> Result<Option<Self>> {
        if v.is_null() {
            return Ok(None);
        }
        let kind = v.get("rope_type").or_else(|| v.get("type")).and_then(Value::as_str).unwrap_or("");
        let num = |k: &str| -> Result<f64> {
            v.get(k)
                .and_then(Value::as_f64)
                .ok_or_else(|| Error::Format(format!("config.json: `rope_scaling` ({kind}) lacks a numeric `{k}`")))
        };
        match kind {
            "default" => Ok(None),
            "linear" => Ok(Some(RopeScaling::Linear { factor: num("factor")? })),
            "llama3" => Ok(Some(RopeScaling::Llama3 {
                factor: num("factor")?,
                low_freq_factor: num("low_freq_factor")?,
                high_freq_factor: num("high_freq_factor")?,
                original_max_position_embeddings: num("original_max_position_embeddings")? as usize,
            })),
            other => Err(Error::Format(format!(
                "config.json: `rope_scaling` type `{other}` is not supported (supported: linear, llama3)"
            ))),
        }
    }

    /// The Hugging Face `rope_scaling` object. Per-frequency factors are written as `llama3`
    /// when they are the Llama 3.1/3.2 ramp for the given `head_dim` and `theta`; other factor
    /// lists cannot be expressed in `config.json`.
    pub fn to_hf_json(&self, head_dim: usize, theta: f64) -> Result<Value> {
        Ok(match self {
            RopeScaling::Linear { factor } => json!({ "rope_type": "linear", "factor": factor }),
            RopeScaling::Llama3 { factor, low_freq_factor, high_freq_factor, original_max_position_embeddings } => {
                json!({
                    "rope_type": "llama3",
                    "factor": factor,
                    "low_freq_factor": low_freq_factor,
                    "high_freq_factor": high_freq_factor,
                    "original_max_position_embeddings": original_max_position_embeddings,
                })
            }
            RopeScaling::FreqFactors(factors) => {
                let llama3 = RopeScaling::Llama3 {
                    factor: factors.iter().copied().fold(1.0, f64::max),
                    low_freq_factor: Self::LLAMA3_LOW,
                    high_freq_factor: Self::LLAMA3_HIGH,
                    original_max_position_embeddings: Self::LLAMA3_ORIGINAL,
                };
                let same = llama3
                    .freq_factors(head_dim, theta)
                    .iter()
                    .zip(factors)
                    .all(|(a, b)| (a - b).abs() <= 1e-3 * a.abs().max(1.0));
                if factors.len() != head_dim / 2 || !same {
                    return Err(Error::Format(
                        "the model's per-frequency rope factors (GGUF `rope_freqs.weight`) are not Llama 3's \
                         and cannot be written to config.json"
                            .into(),
                    ));
                }
                return llama3.to_hf_json(head_dim, theta);
            }
        })
    }

    /// The divisor of each of the `head_dim / 2` frequencies of base `theta`.
    pub fn freq_factors(&self, head_dim: usize, theta: f64) -> Vec<f64> {
        let half = head_dim / 2;
        match self {
            RopeScaling::Linear { factor } => vec![*factor; half],
            RopeScaling::FreqFactors(factors) => factors.clone(),
            RopeScaling::Llama3 { factor, low_freq_factor, high_freq_factor, original_max_position_embeddings } => {
                let original = *original_max_position_embeddings as f64;
                let (low_wavelen, high_wavelen) = (original / low_freq_factor, original / high_freq_factor);
                (0..half)
                    .map(|i| {
                        let freq = plain_inv_freq(i, head_dim, theta);
                        let wavelen = 2.0 * std::f64::consts::PI / freq;
                        let scaled = if wavelen < high_wavelen {
                            freq
                        } else if wavelen > low_wavelen {
                            freq / factor
                        } else {
                            let smooth = (original / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
                            (1.0 - smooth) * freq / factor + smooth * freq
                        };
                        freq / scaled
                    })
                    .collect()
            }
        }
    }
}

/// Frequency `i` of plain RoPE: `theta^(-2i / head_dim)`.
fn plain_inv_freq(i: usize, head_dim: usize, theta: f64) -> f64 {
    1.0 / theta.powf(2.0 * i as f64 / head_dim as f64)
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
            rope_scaling: None,
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
            rope_scaling: None,
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
                rope_scaling: None,
            }),
            other => {
                Err(Error::Request(format!("unknown model preset `{other}` (known: {})", Self::PRESETS.join(", "))))
            }
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
        if let Some(scaling) = &self.rope_scaling {
            let factors = scaling.freq_factors(self.head_dim, self.rope_theta);
            if factors.len() != self.head_dim / 2 {
                return bad(format!("{} rope frequency factors for head_dim {}", factors.len(), self.head_dim));
            }
            if factors.iter().any(|f| !f.is_finite() || *f <= 0.0) {
                return bad(format!("rope scaling {scaling:?} gives a non-positive frequency factor"));
            }
        }
        Ok(())
    }

    /// The `head_dim / 2` rotary frequencies (radians per position), rope scaling applied.
    pub fn inv_freq(&self) -> Vec<f64> {
        let plain = (0..self.head_dim / 2).map(|i| plain_inv_freq(i, self.head_dim, self.rope_theta));
        match &self.rope_scaling {
            Some(scaling) => {
                plain.zip(scaling.freq_factors(self.head_dim, self.rope_theta)).map(|(f, d)| f / d).collect()
            }
            None => plain.collect(),
        }
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
            other => {
                return Err(Error::Format(format!("unsupported GGUF architecture `{other}` (supported: llama, qwen2)")))
            }
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
            rope_scaling: None,
        };
        // llama.cpp keeps `linear` scaling in metadata; `llama3` scaling comes as the
        // `rope_freqs.weight` tensor, which the weight loader adds.
        let scaling_type = md.get(&key("rope.scaling.type")).and_then(|v| v.to_string().ok()).map(String::as_str);
        let config = match scaling_type {
            None | Some("none") => config,
            Some("linear") => ModelConfig {
                rope_scaling: Some(RopeScaling::Linear { factor: get_f("rope.scaling.factor", 1.0) }),
                ..config
            },
            Some(other) => {
                return Err(Error::Format(format!(
                    "GGUF rope scaling `{other}` is not supported (supported: linear, llama3)"
                )))
            }
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
            other => {
                return Err(Error::Format(format!(
                    "config.json: unsupported model_type `{other}` (supported: llama, qwen2)"
                )))
            }
        };
        let rope_scaling = RopeScaling::from_hf_json(v.get("rope_scaling").unwrap_or(&Value::Null))?;
        if let Some(act) = v.get("hidden_act").and_then(Value::as_str).filter(|a| *a != "silu") {
            return Err(Error::Format(format!("config.json: `hidden_act` `{act}` is not supported (supported: silu)")));
        }
        if arch == Arch::Llama {
            for key in ["attention_bias", "mlp_bias"] {
                if v.get(key).and_then(Value::as_bool) == Some(true) {
                    return Err(Error::Format(format!("config.json: llama with `{key}: true` is not supported")));
                }
            }
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
            rope_scaling,
        };
        config.validate()?;
        Ok(config)
    }

    /// The Hugging Face `config.json` for this model (read back by [`ModelConfig::from_hf_json`],
    /// and by `transformers`). Fails only for rope factors `config.json` cannot express.
    pub fn to_hf_json(&self, torch_dtype: &str) -> Result<Value> {
        let architecture = match self.arch {
            Arch::Llama => "LlamaForCausalLM",
            Arch::Qwen2 => "Qwen2ForCausalLM",
        };
        let rope_scaling = match &self.rope_scaling {
            Some(scaling) => scaling.to_hf_json(self.head_dim, self.rope_theta)?,
            None => Value::Null,
        };
        let mut config = json!({
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
            "rope_scaling": rope_scaling,
            "torch_dtype": torch_dtype,
        });
        if self.arch == Arch::Qwen2 {
            // What Qwen2 configs carry (the engine uses full attention, as Qwen2.5 ships).
            config["use_sliding_window"] = json!(false);
            config["sliding_window"] = json!(self.max_position_embeddings);
            config["max_window_layers"] = json!(self.num_layers);
        }
        Ok(config)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Llama-3.2-1B's rope: head_dim 64, theta 500000, `llama3` scaling with factor 32.
    fn llama32() -> RopeScaling {
        RopeScaling::Llama3 {
            factor: 32.0,
            low_freq_factor: 1.0,
            high_freq_factor: 4.0,
            original_max_position_embeddings: 8192,
        }
    }

    #[test]
    fn llama3_scaling_keeps_high_frequencies_and_divides_low_ones() {
        let factors = llama32().freq_factors(64, 500_000.0);
        assert_eq!(factors.len(), 32);
        // Wavelengths below 8192 / 4 = 2048 positions are kept, above 8192 divided by 32.
        for (i, f) in factors.iter().enumerate() {
            let wavelen = 2.0 * std::f64::consts::PI / plain_inv_freq(i, 64, 500_000.0);
            if wavelen < 2048.0 {
                assert_eq!(*f, 1.0, "frequency {i}");
            } else if wavelen > 8192.0 {
                assert!((f - 32.0).abs() < 1e-12, "frequency {i}: {f}");
            } else {
                assert!(*f > 1.0 && *f < 32.0, "frequency {i}: {f}");
            }
        }
        // The ramp is monotone: longer waves are never divided less.
        assert!(factors.windows(2).all(|w| w[0] <= w[1] + 1e-12));
        // Llama 3.2's first frequencies are untouched, its last divided by the full factor.
        assert_eq!(factors[0], 1.0);
        assert!((factors[31] - 32.0).abs() < 1e-12);
    }

    #[test]
    fn rope_scaling_reads_and_writes_hugging_face_configs() {
        let read = |v: Value| RopeScaling::from_hf_json(&v);
        assert_eq!(read(Value::Null).unwrap(), None);
        assert_eq!(read(json!({"rope_type": "default"})).unwrap(), None);
        assert_eq!(read(json!({"type": "linear", "factor": 2.0})).unwrap(), Some(RopeScaling::Linear { factor: 2.0 }));
        let llama = json!({"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192});
        assert_eq!(read(llama.clone()).unwrap(), Some(llama32()));
        assert_eq!(llama32().to_hf_json(64, 500_000.0).unwrap(), llama);
        let err = read(json!({"rope_type": "yarn", "factor": 4.0})).unwrap_err().to_string();
        assert!(err.contains("yarn") && err.contains("llama3"), "{err}");
        let err = read(json!({"rope_type": "llama3", "factor": 8.0})).unwrap_err().to_string();
        assert!(err.contains("low_freq_factor"), "{err}");
    }

    #[test]
    fn gguf_frequency_factors_are_written_as_llama3_when_they_are() {
        let factors = llama32().freq_factors(64, 500_000.0);
        // GGUF stores them as f32.
        let stored = RopeScaling::FreqFactors(factors.iter().map(|f| f64::from(*f as f32)).collect());
        assert_eq!(stored.to_hf_json(64, 500_000.0).unwrap()["rope_type"], "llama3");
        assert_eq!(stored.to_hf_json(64, 500_000.0).unwrap()["factor"], 32.0);
        let odd = RopeScaling::FreqFactors(vec![3.0; 32]);
        assert!(odd.to_hf_json(64, 500_000.0).is_err());
    }

    #[test]
    fn config_json_round_trips_rope_scaling_and_refuses_what_the_engine_lacks() {
        let config =
            ModelConfig { rope_theta: 500_000.0, rope_scaling: Some(llama32()), ..ModelConfig::tiny(Arch::Llama, 300) };
        let text = config.to_hf_json("bfloat16").unwrap().to_string();
        assert_eq!(ModelConfig::from_hf_json(&text).unwrap(), config);
        let plain = ModelConfig::tiny(Arch::Llama, 300);
        let scaled_freqs = config.inv_freq();
        for (i, (a, b)) in plain.inv_freq().iter().zip(&scaled_freqs).enumerate() {
            assert!(b <= a, "frequency {i}");
        }
        let mut v = config.to_hf_json("float32").unwrap();
        v["hidden_act"] = json!("gelu");
        assert!(ModelConfig::from_hf_json(&v.to_string()).unwrap_err().to_string().contains("gelu"));
        let mut v = config.to_hf_json("float32").unwrap();
        v["mlp_bias"] = json!(true);
        assert!(ModelConfig::from_hf_json(&v.to_string()).unwrap_err().to_string().contains("mlp_bias"));
        let bad = ModelConfig { rope_scaling: Some(RopeScaling::FreqFactors(vec![1.0; 3])), ..plain };
        assert!(bad.validate().is_err());
    }
}
