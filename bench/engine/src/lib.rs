//! The embedded inference engine: Llama/Qwen2 models in candle, batched sampling with per-token
//! log-probs, and a trainable forward pass.
//!
//! ```no_run
//! use rlengine::{ChatMessage, Engine, ModelSpec, SamplingParams};
//! # fn main() -> rlengine::Result<()> {
//! let engine = Engine::load(&ModelSpec::default_model())?; // SmolLM2-135M-Instruct, fetched once
//! let prompt = engine.apply_chat_template(&[ChatMessage::user("What is 7 * 6?")], true)?;
//! let params = SamplingParams { n: 4, temperature: 0.7, max_new_tokens: 64, seed: 1, ..Default::default() };
//! for completion in &engine.generate(&[prompt.into()], &params)?[0] {
//!     println!("{:?}: {}", completion.finish_reason, completion.text);
//! }
//! # Ok(()) }
//! ```
//!
//! The model is our own ([`Model`]): every op has a backward pass, so a trainer can take
//! gradients of [`Model::token_logprobs`]; sampling runs on detached copies of the same weights.
//!
//! rlbench's embedded backend (behind its default `embedded` feature) and rltrain both use this
//! crate; it owns the `cuda` feature, which they forward. The request queue that merges
//! concurrent requests into one engine call stays in rlbench (`backend/embedded.rs`): it is built
//! around rlbench's `Backend` trait and request type, and the trainer, which batches its own
//! rollouts, has no use for it.
//!
//! The training graph runs the fused ops of [`ops`] (attention, RMSNorm, rotary embedding,
//! SwiGLU, log-probs straight from hidden states), each a candle custom op with its own backward
//! pass: CPU kernels for f32/bf16/f16, and elsewhere composites that bound memory the same way
//! (the attention and the LM head recompute chunk by chunk). A CUDA kernel plugs into each op's
//! `cuda_fwd`; none is written yet, as none could be run or tested here (no GPU is lent to the
//! project's CI), and untested numeric kernels are the ones that silently corrupt gradients.

// A library returns values; its binaries print.
#![cfg_attr(not(test), warn(clippy::print_stdout, clippy::print_stderr))]

mod batch;
mod chat;
mod config;
pub mod cpu;
mod error;
mod fetch;
mod generate;
pub mod logprob;
mod model;
mod network;
pub mod ops;
mod rng;
mod sampler;
mod tokenizer;
mod weights;

pub use batch::{PadSide, PaddedBatch};
pub use chat::{ChatMessage, ChatTemplate, JinjaTemplate, SpecialTokens, FIXED_DATE};
pub use config::{Arch, ModelConfig, RopeScaling};
pub use cpu::QuantModel;
pub use error::{Error, Result};
pub use fetch::{default_model_cached, default_model_path, model_cache_dir, DEFAULT_MODEL_FILE, DEFAULT_MODEL_PACKAGE};
pub use generate::{sample_seed, Completion, FinishReason};
pub use model::{Model, TokenLogProbs};
pub use network::{parameter_names, KvCache, LayerInputs, Network, StepInput};
pub use ops::OpPath;
pub use rlbase::DeviceSpec;
pub use rng::Rng;
pub use sampler::{sample_token, SamplingParams};
pub use tokenizer::Tokenizer;
pub use weights::{hf_chat_template, hf_name_of_gguf, load_gguf, load_hf_dir, unpermute_qk, LoadedModel};

pub use candle_core::{DType, Device};

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Runs candle's CPU element-wise ops on the calling thread, unless `CANDLE_NUM_THREADS` is set.
///
/// candle 0.11 spreads element-wise ops over a pool of `threads - 1` workers that spin while
/// they wait, beside rayon's threads for the matrix products; the caller spins too until the
/// workers are done. On a 2-core machine this oversubscription cost a training step about twice
/// the CPU time (a profile: 27% in candle's `BarrierGuard::drop`, 12% in the workers' spin loop;
/// SmolLM2-135M, 4x153 tokens: 15.5 -> 8.1 CPU s). Call it first thing in `main`: the pool is
/// built on the first op and reads the variable then.
pub fn element_wise_on_caller() {
    if std::env::var_os("CANDLE_NUM_THREADS").is_none() {
        std::env::set_var("CANDLE_NUM_THREADS", "1");
    }
}

/// The first CUDA GPU when built with the `cuda` feature and one can be opened, else the CPU.
pub fn default_device() -> Device {
    Device::cuda_if_available(0).unwrap_or(Device::Cpu)
}

/// Opens the device a command line named: `auto` ([`default_device`]), the CPU, or GPU `N`.
pub fn open_device(spec: DeviceSpec) -> Result<Device> {
    let gpu = match spec {
        DeviceSpec::Auto => return Ok(default_device()),
        DeviceSpec::Cpu => return Ok(Device::Cpu),
        DeviceSpec::Cuda(n) => n,
    };
    Device::new_cuda(gpu).map_err(|e| {
        Error::Request(format!("cannot open GPU {gpu}: {e} (build with `--features cuda`, see scripts/build_cuda.sh)"))
    })
}

/// Parses and opens a device argument: `auto`, `cpu`, `cuda` (GPU 0) or `cuda:N` ([`DeviceSpec`]).
pub fn parse_device(arg: &str) -> Result<Device> {
    open_device(arg.parse().map_err(Error::Request)?)
}

/// Parses a dtype argument: `f32`, `bf16` or `f16`.
pub fn parse_dtype(arg: &str) -> Result<DType> {
    match arg {
        "f32" => Ok(DType::F32),
        "bf16" => Ok(DType::BF16),
        "f16" => Ok(DType::F16),
        other => Err(Error::Request(format!("unknown dtype `{other}` (f32, bf16 or f16)"))),
    }
}

/// Where a model comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSource {
    /// SmolLM2-135M-Instruct Q4_1, fetched into the cache on first use.
    Default,
    /// A GGUF file (llama or qwen2 architecture).
    Gguf(PathBuf),
    /// A Hugging Face folder: `config.json`, `tokenizer.json`, `*.safetensors`.
    HfDir(PathBuf),
    /// Random weights in the shape of a known model ([`ModelConfig::preset`]), with a byte-level
    /// tokenizer and ChatML: for speed tests (`random:qwen2-0.5b`).
    Random(String),
}

/// What to load and how.
#[derive(Debug, Clone)]
pub struct ModelSpec {
    /// The weights.
    pub source: ModelSource,
    /// Dtype of the weights in memory: f32 by default (GGUF is dequantized to f32); `None` keeps
    /// a safetensors checkpoint's own dtype (bf16 is slow on CPU).
    pub dtype: Option<DType>,
    /// Device to run on.
    pub device: Device,
    /// Most rows (prompt x sample) decoded together.
    pub max_batch: usize,
    /// How generation runs on the CPU ([`CpuDecode::Dense`] unless asked otherwise).
    pub cpu_decode: CpuDecode,
}

/// How [`Engine::generate`] runs on the CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CpuDecode {
    /// The trainable network's own ops on its weights: the sampler's log-probs equal those of
    /// [`Model::token_logprobs`] (to 1e-4 in f32). What a trainer's rollouts need.
    #[default]
    Dense,
    /// Quantized weights and 8-bit activations with SIMD kernels ([`cpu`]), as llama.cpp runs a
    /// GGUF: GGUF Q4_0/Q4_1/Q8_0 blocks are used as stored, other weights re-quantized to Q8_0.
    /// Several times faster on CPU; logits differ from the dense forward by quantization error
    /// (greedy tokens usually agree), so the log-probs are not the trainer's. For evaluation.
    /// Ignored on other devices.
    Quantized,
}

impl ModelSpec {
    /// The default model on CPU in f32.
    pub fn default_model() -> Self {
        Self::new(ModelSource::Default)
    }

    /// A source on [`default_device`] in f32, 16 rows per batch.
    pub fn new(source: ModelSource) -> Self {
        ModelSpec {
            source,
            dtype: Some(DType::F32),
            device: default_device(),
            max_batch: 16,
            cpu_decode: CpuDecode::Dense,
        }
    }

    /// Parses a model argument: `default` or `smollm2` for the default model, a `.gguf` file,
    /// a Hugging Face folder, or `random:PRESET` (random weights, for speed tests).
    pub fn parse(arg: &str) -> Result<Self> {
        let source = match arg {
            "default" | "smollm2" | "smollm2-135m" => ModelSource::Default,
            _ if arg.starts_with("random:") => {
                let preset = &arg["random:".len()..];
                ModelConfig::preset(preset)?;
                ModelSource::Random(preset.to_string())
            }
            path => {
                let p = Path::new(path);
                if p.is_dir() {
                    ModelSource::HfDir(p.to_path_buf())
                } else if p.is_file() {
                    ModelSource::Gguf(p.to_path_buf())
                } else {
                    return Err(Error::Request(format!(
                        "model `{arg}` is neither `default`, a `.gguf` file, a model folder nor `random:PRESET`"
                    )));
                }
            }
        };
        Ok(Self::new(source))
    }

    /// The same spec with quantized CPU decoding (for evaluation; see [`CpuDecode::Quantized`]).
    pub fn quantized(self) -> Self {
        ModelSpec { cpu_decode: CpuDecode::Quantized, ..self }
    }
}

/// A prompt: text (tokenized by the engine) or token ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prompt {
    /// Text, special tokens such as `<|im_start|>` included.
    Text(String),
    /// Token ids, used as given.
    Tokens(Vec<u32>),
}

impl From<&str> for Prompt {
    fn from(s: &str) -> Self {
        Prompt::Text(s.to_string())
    }
}

impl From<String> for Prompt {
    fn from(s: String) -> Self {
        Prompt::Text(s)
    }
}

impl From<Vec<u32>> for Prompt {
    fn from(ids: Vec<u32>) -> Self {
        Prompt::Tokens(ids)
    }
}

/// A loaded model ready to generate.
#[derive(Debug, Clone)]
pub struct Engine {
    model: Model,
    tokenizer: Tokenizer,
    chat_template: ChatTemplate,
    max_batch: usize,
    /// Quantized weights for [`CpuDecode::Quantized`] generation, when in use.
    quantized: Option<Arc<QuantModel>>,
}

impl Engine {
    /// Loads a model (fetching the default one if needed).
    pub fn load(spec: &ModelSpec) -> Result<Self> {
        let loaded = match &spec.source {
            ModelSource::Default => load_gguf(&default_model_path()?, spec.dtype, &spec.device)?,
            ModelSource::Gguf(path) => load_gguf(path, spec.dtype, &spec.device)?,
            ModelSource::HfDir(dir) => load_hf_dir(dir, spec.dtype, &spec.device)?,
            ModelSource::Random(preset) => LoadedModel {
                model: Model::random(&ModelConfig::preset(preset)?, spec.dtype.unwrap_or(DType::F32), &spec.device, 0)?,
                tokenizer: Tokenizer::byte_level()?,
                chat_template: ChatTemplate::ChatMl { default_system: None },
            },
        };
        let mut engine = Self::from_parts(loaded, spec.max_batch);
        if spec.cpu_decode == CpuDecode::Quantized && spec.device.is_cpu() {
            let quantized = match &spec.source {
                ModelSource::Default => QuantModel::from_gguf(&default_model_path()?, engine.model.config())?,
                ModelSource::Gguf(path) => QuantModel::from_gguf(path, engine.model.config())?,
                ModelSource::HfDir(_) | ModelSource::Random(_) => QuantModel::from_model(&engine.model)?,
            };
            engine.quantized = Some(Arc::new(quantized));
        }
        Ok(engine)
    }

    /// An engine over an already built model (e.g. a tiny random one in tests, or a trainer's),
    /// decoding with [`CpuDecode::Dense`].
    pub fn from_parts(loaded: LoadedModel, max_batch: usize) -> Self {
        Engine {
            model: loaded.model,
            tokenizer: loaded.tokenizer,
            chat_template: loaded.chat_template,
            max_batch: max_batch.max(1),
            quantized: None,
        }
    }

    /// How generation currently runs.
    pub fn cpu_decode(&self) -> CpuDecode {
        if self.quantized.is_some() {
            CpuDecode::Quantized
        } else {
            CpuDecode::Dense
        }
    }

    /// Switches how generation runs. [`CpuDecode::Quantized`] quantizes the model's current
    /// weights to Q8_0 (a GGUF's own blocks are only used when loaded that way); it is an error
    /// when the model is not on the CPU.
    pub fn set_cpu_decode(&mut self, mode: CpuDecode) -> Result<()> {
        self.quantized = match mode {
            CpuDecode::Dense => None,
            CpuDecode::Quantized if !self.model.device().is_cpu() => {
                return Err(Error::Request("quantized decoding runs on the CPU only".into()))
            }
            CpuDecode::Quantized => Some(Arc::new(QuantModel::from_model(&self.model)?)),
        };
        Ok(())
    }

    /// The quantized weights generation uses, if any.
    pub fn quantized_model(&self) -> Option<&QuantModel> {
        self.quantized.as_deref()
    }

    /// The trainable model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Mutable access to the model (e.g. to swap in updated weights). The weights may change,
    /// so quantized decoding is switched off (back to [`CpuDecode::Dense`]); call
    /// [`Engine::set_cpu_decode`] to quantize the new weights.
    pub fn model_mut(&mut self) -> &mut Model {
        self.quantized = None;
        &mut self.model
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// The chat template.
    pub fn chat_template(&self) -> &ChatTemplate {
        &self.chat_template
    }

    /// Renders a conversation with the model's chat template, as `transformers`'
    /// `apply_chat_template(messages, tokenize=False, add_generation_prompt=...)` does.
    pub fn apply_chat_template(&self, messages: &[ChatMessage], add_generation_prompt: bool) -> Result<String> {
        let special =
            SpecialTokens { bos: self.tokenizer.bos_token().map(String::from), eos: self.tokenizer.eos_token() };
        self.chat_template.apply(messages, add_generation_prompt, &special)
    }

    /// Token ids of a prompt.
    pub fn encode_prompt(&self, prompt: &Prompt) -> Result<Vec<u32>> {
        match prompt {
            Prompt::Text(text) => self.tokenizer.encode(text),
            Prompt::Tokens(ids) => Ok(ids.clone()),
        }
    }

    /// Samples `params.n` completions per prompt; the result has one `Vec` per prompt, in order.
    pub fn generate(&self, prompts: &[Prompt], params: &SamplingParams) -> Result<Vec<Vec<Completion>>> {
        let ids = prompts.iter().map(|p| self.encode_prompt(p)).collect::<Result<Vec<_>>>()?;
        self.generate_ids(&ids, params)
    }

    /// [`Engine::generate`] on token ids.
    pub fn generate_ids(&self, prompts: &[Vec<u32>], params: &SamplingParams) -> Result<Vec<Vec<Completion>>> {
        if prompts.is_empty() {
            return Ok(Vec::new());
        }
        if let Some(quantized) = &self.quantized {
            let mut decoder = generate::QuantDecoder::new(quantized);
            return generate::generate(&mut decoder, &self.tokenizer, prompts, params, self.max_batch);
        }
        let net = self.model.inference_network()?;
        let mut decoder = generate::DenseDecoder::new(&net, self.tokenizer.pad_id());
        generate::generate(&mut decoder, &self.tokenizer, prompts, params, self.max_batch)
    }

    /// Writes a Hugging Face folder (`model.safetensors`, `config.json`, `tokenizer.json`,
    /// `tokenizer_config.json`) that [`Engine::load`] reads back.
    pub fn save_pretrained(&self, dir: &Path) -> Result<()> {
        self.model.save_pretrained(dir)?;
        self.tokenizer.save(&dir.join("tokenizer.json"))?;
        let name = |id: Option<u32>| id.and_then(|i| self.tokenizer.inner().id_to_token(i));
        let (bos, add_bos) = self.tokenizer.bos();
        let config = serde_json::json!({
            "bos_token": name(bos),
            "add_bos_token": add_bos,
            "eos_token": name(self.tokenizer.eos_id()),
            "pad_token": name(Some(self.tokenizer.pad_id())),
            "chat_template": self.chat_template.jinja_source(),
        });
        let path = dir.join("tokenizer_config.json");
        let text = serde_json::to_string_pretty(&config).map_err(|e| Error::Format(e.to_string()))?;
        std::fs::write(&path, text).map_err(|e| Error::io(&path, e))?;
        let gen = serde_json::json!({ "eos_token_id": self.tokenizer.eos_ids() });
        let path = dir.join("generation_config.json");
        std::fs::write(&path, gen.to_string()).map_err(|e| Error::io(&path, e))
    }
}
