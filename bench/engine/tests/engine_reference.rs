//! The engine's own Llama/Qwen2 network against independent references, on tiny random models
//! (no download): candle-transformers' `qwen2` and `llama` on the folders `save_pretrained`
//! writes (so `config.json` is what other tools read), Llama 3 rope scaling, GGUF files written
//! the way llama.cpp converts (permuted q/k, `rope_freqs.weight`, Q8_0 blocks), and f16/bf16
//! checkpoints.

use candle_core::quantized::{gguf_file, GgmlDType, QTensor};
use candle_core::{DType, Device, Tensor};
use candle_transformers::models::{llama, qwen2};
use rlengine::{
    Arch, ChatTemplate, Engine, LoadedModel, Model, ModelConfig, ModelSource, ModelSpec, PadSide, PaddedBatch,
    RopeScaling, SamplingParams, Tokenizer,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

const VOCAB: usize = 259; // Tokenizer::byte_level()

/// Llama 3.1's rope scaling (Llama 3.2 uses factor 32).
const LLAMA31: RopeScaling = RopeScaling::Llama3 {
    factor: 8.0,
    low_freq_factor: 1.0,
    high_freq_factor: 4.0,
    original_max_position_embeddings: 8192,
};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rlbench-reference-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn engine_of(model: Model) -> Engine {
    let loaded = LoadedModel {
        model,
        tokenizer: Tokenizer::byte_level().unwrap(),
        chat_template: ChatTemplate::ChatMl { default_system: None },
    };
    Engine::from_parts(loaded, 4)
}

/// A sequence of `len` byte tokens.
fn tokens(len: usize) -> Vec<u32> {
    (0..len).map(|i| 3 + (i * 37 % 250) as u32).collect()
}

/// 40 tokens: enough for every test but the rope-scaling ones.
fn sequence() -> Vec<u32> {
    tokens(40)
}

/// Our logits at every position of `ids`, `[T][V]`.
fn our_logits(model: &Model, ids: &[u32]) -> Vec<Vec<f32>> {
    let batch = PaddedBatch::new(&[ids.to_vec()], PadSide::Right, 0, &Device::Cpu).unwrap();
    model.forward(&batch).unwrap().squeeze(0).unwrap().to_dtype(DType::F32).unwrap().to_vec2::<f32>().unwrap()
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

fn safetensors_var_builder(dir: &Path) -> candle_nn::VarBuilder<'static> {
    // SAFETY: the file was just written by this test and is not modified while mapped.
    unsafe {
        candle_nn::VarBuilder::from_mmaped_safetensors(&[dir.join("model.safetensors")], DType::F32, &Device::Cpu)
            .unwrap()
    }
}

fn read_config(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("config.json")).unwrap()
}

#[test]
fn qwen2_forward_matches_candle_transformers_qwen2() {
    for tie in [false, true] {
        let config = ModelConfig { tie_word_embeddings: tie, rope_theta: 1e6, ..ModelConfig::tiny(Arch::Qwen2, VOCAB) };
        let engine = engine_of(Model::random(&config, DType::F32, &Device::Cpu, 11).unwrap());
        let dir = temp_dir(&format!("qwen2-{tie}"));
        engine.save_pretrained(&dir).unwrap();
        let loaded =
            Engine::load(&ModelSpec { device: Device::Cpu, ..ModelSpec::new(ModelSource::HfDir(dir.clone())) })
                .unwrap();
        let ids = sequence();
        let ours = our_logits(loaded.model(), &ids);
        // candle-transformers reads our config.json and safetensors as it would a Qwen2.5 folder.
        let cfg: qwen2::Config = serde_json::from_str(&read_config(&dir)).unwrap();
        let mut reference = qwen2::ModelForCausalLM::new(&cfg, safetensors_var_builder(&dir)).unwrap();
        for end in [1, 17, ids.len()] {
            reference.clear_kv_cache();
            let input = Tensor::new(&ids[..end], &Device::Cpu).unwrap().unsqueeze(0).unwrap();
            let theirs = reference.forward(&input, 0).unwrap().flatten_all().unwrap().to_vec1::<f32>().unwrap();
            let diff = max_abs_diff(&ours[end - 1], &theirs);
            assert!(diff < 1e-4, "tie={tie}, position {}: max |logit difference| {diff}", end - 1);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn llama3_rope_scaling_matches_candle_transformers_llama() {
    // Llama 3's ramp over a 16-position "original" context, so that 40 positions reach the
    // rescaled frequencies.
    let scaling = RopeScaling::Llama3 {
        factor: 8.0,
        low_freq_factor: 1.0,
        high_freq_factor: 4.0,
        original_max_position_embeddings: 16,
    };
    let config = ModelConfig {
        rope_scaling: Some(scaling.clone()),
        tie_word_embeddings: false,
        ..ModelConfig::tiny(Arch::Llama, VOCAB)
    };
    let engine = engine_of(Model::random(&config, DType::F32, &Device::Cpu, 12).unwrap());
    let dir = temp_dir("llama3");
    engine.save_pretrained(&dir).unwrap();
    let loaded =
        Engine::load(&ModelSpec { device: Device::Cpu, ..ModelSpec::new(ModelSource::HfDir(dir.clone())) }).unwrap();
    assert_eq!(loaded.model().config().rope_scaling, Some(scaling));
    let ids = sequence();
    let ours = our_logits(loaded.model(), &ids);
    let reference_logits = |config_json: &str| -> Vec<f32> {
        let cfg: llama::LlamaConfig = serde_json::from_str(config_json).unwrap();
        let cfg = cfg.into_config(false);
        let reference = llama::Llama::load(safetensors_var_builder(&dir), &cfg).unwrap();
        let mut cache = llama::Cache::new(false, DType::F32, &cfg, &Device::Cpu).unwrap();
        let input = Tensor::new(ids.as_slice(), &Device::Cpu).unwrap().unsqueeze(0).unwrap();
        reference.forward(&input, 0, &mut cache).unwrap().flatten_all().unwrap().to_vec1::<f32>().unwrap()
    };
    let theirs = reference_logits(&read_config(&dir));
    let last = ours.last().unwrap();
    let diff = max_abs_diff(last, &theirs);
    assert!(diff < 1e-4, "max |logit difference| {diff}");
    // The scaling matters: without it the reference is measurably elsewhere.
    let mut unscaled: serde_json::Value = serde_json::from_str(&read_config(&dir)).unwrap();
    unscaled["rope_scaling"] = serde_json::Value::Null;
    let plain = reference_logits(&unscaled.to_string());
    assert!(max_abs_diff(last, &plain) > 100.0 * diff.max(1e-6), "rope scaling changed nothing");
    let _ = std::fs::remove_dir_all(&dir);
}

/// llama.cpp's conversion of a q/k projection (what [`rlengine::unpermute_qk`] undoes).
fn permute_qk(w: &Tensor, heads: usize) -> Tensor {
    let (out, inp) = w.dims2().unwrap();
    w.reshape((heads, 2, out / heads / 2, inp)).unwrap().transpose(1, 2).unwrap().reshape((out, inp)).unwrap()
}

/// The GGUF name of a Hugging Face parameter name.
fn gguf_name(hf: &str) -> String {
    match hf {
        "model.embed_tokens.weight" => return "token_embd.weight".into(),
        "model.norm.weight" => return "output_norm.weight".into(),
        "lm_head.weight" => return "output.weight".into(),
        _ => {}
    }
    let rest = hf.strip_prefix("model.layers.").unwrap();
    let (layer, part) = rest.split_once('.').unwrap();
    let part = match part {
        "input_layernorm.weight" => "attn_norm.weight",
        "self_attn.q_proj.weight" => "attn_q.weight",
        "self_attn.k_proj.weight" => "attn_k.weight",
        "self_attn.v_proj.weight" => "attn_v.weight",
        "self_attn.q_proj.bias" => "attn_q.bias",
        "self_attn.k_proj.bias" => "attn_k.bias",
        "self_attn.v_proj.bias" => "attn_v.bias",
        "self_attn.o_proj.weight" => "attn_output.weight",
        "post_attention_layernorm.weight" => "ffn_norm.weight",
        "mlp.gate_proj.weight" => "ffn_gate.weight",
        "mlp.up_proj.weight" => "ffn_up.weight",
        "mlp.down_proj.weight" => "ffn_down.weight",
        other => panic!("no GGUF name for `{other}`"),
    };
    format!("blk.{layer}.{part}")
}

/// Writes `model` as llama.cpp would: matrices in Q8_0 (q/k permuted for llama), vectors in
/// f32, the byte-level vocabulary as a `gpt2` tokenizer, and `rope_freqs.weight` when the model
/// has per-frequency factors. Returns the model the file holds (weights after Q8_0 rounding).
fn write_gguf(model: &Model, path: &Path) -> Model {
    let c = model.config().clone();
    let arch = c.arch.name();
    let mut tensors: Vec<(String, QTensor)> = Vec::new();
    let mut stored: HashMap<String, Tensor> = HashMap::new();
    for (name, var) in model.vars() {
        let t = var.as_tensor().detach();
        let q = if t.rank() == 2 {
            let heads = match name {
                n if n.ends_with("q_proj.weight") => Some(c.num_heads),
                n if n.ends_with("k_proj.weight") => Some(c.num_kv_heads),
                _ => None,
            };
            let rounded = QTensor::quantize(&t, GgmlDType::Q8_0).unwrap().dequantize(&Device::Cpu).unwrap();
            stored.insert(name.clone(), rounded);
            let on_disk = match heads {
                Some(h) if c.arch == Arch::Llama => permute_qk(&t, h),
                _ => t,
            };
            QTensor::quantize(&on_disk, GgmlDType::Q8_0).unwrap()
        } else {
            stored.insert(name.clone(), t.clone());
            QTensor::quantize(&t, GgmlDType::F32).unwrap()
        };
        tensors.push((gguf_name(name), q));
    }
    if let Some(scaling) = &c.rope_scaling {
        let factors: Vec<f32> = scaling.freq_factors(c.head_dim, c.rope_theta).iter().map(|f| *f as f32).collect();
        let t = Tensor::new(factors.as_slice(), &Device::Cpu).unwrap();
        tensors.push(("rope_freqs.weight".into(), QTensor::quantize(&t, GgmlDType::F32).unwrap()));
    }
    let tokenizer = Tokenizer::byte_level().unwrap();
    let tokens: Vec<gguf_file::Value> =
        (0..VOCAB as u32).map(|i| gguf_file::Value::String(tokenizer.inner().id_to_token(i).unwrap())).collect();
    let types: Vec<gguf_file::Value> = (0..VOCAB).map(|i| gguf_file::Value::I32(if i < 3 { 3 } else { 1 })).collect();
    use gguf_file::Value as V;
    let key = |k: &str| format!("{arch}.{k}");
    let metadata: Vec<(String, V)> = vec![
        ("general.architecture".into(), V::String(arch.into())),
        (key("block_count"), V::U32(c.num_layers as u32)),
        (key("embedding_length"), V::U32(c.hidden_size as u32)),
        (key("feed_forward_length"), V::U32(c.intermediate_size as u32)),
        (key("attention.head_count"), V::U32(c.num_heads as u32)),
        (key("attention.head_count_kv"), V::U32(c.num_kv_heads as u32)),
        (key("rope.dimension_count"), V::U32(c.head_dim as u32)),
        (key("rope.freq_base"), V::F32(c.rope_theta as f32)),
        (key("attention.layer_norm_rms_epsilon"), V::F32(c.rms_norm_eps as f32)),
        (key("context_length"), V::U32(c.max_position_embeddings as u32)),
        ("tokenizer.ggml.model".into(), V::String("gpt2".into())),
        ("tokenizer.ggml.pre".into(), V::String(if c.arch == Arch::Qwen2 { "qwen2" } else { "smollm" }.into())),
        ("tokenizer.ggml.tokens".into(), V::Array(tokens)),
        ("tokenizer.ggml.merges".into(), V::Array(Vec::new())),
        ("tokenizer.ggml.token_type".into(), V::Array(types)),
        ("tokenizer.ggml.eos_token_id".into(), V::U32(0)),
    ];
    let metadata_refs: Vec<(&str, &V)> = metadata.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let tensor_refs: Vec<(&str, &QTensor)> = tensors.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let mut file = std::fs::File::create(path).unwrap();
    gguf_file::write(&mut file, &metadata_refs, &tensor_refs).unwrap();
    // GGUF keeps f32 frequency factors and f32 constants.
    let config = ModelConfig {
        rope_theta: f64::from(c.rope_theta as f32),
        rms_norm_eps: f64::from(c.rms_norm_eps as f32),
        rope_scaling: c.rope_scaling.as_ref().map(|s| {
            RopeScaling::FreqFactors(
                s.freq_factors(c.head_dim, c.rope_theta).iter().map(|f| f64::from(*f as f32)).collect(),
            )
        }),
        ..c
    };
    Model::from_tensors(config, stored, DType::F32).unwrap()
}

/// The model with q and k projections scaled up: random weights attend almost uniformly, so
/// positions (and rope) barely move the logits; sharper attention makes them matter.
fn sharpened(model: Model) -> Model {
    let tensors = model
        .vars()
        .iter()
        .map(|(n, v)| {
            let t = v.as_tensor().detach();
            let sharp = n.ends_with("q_proj.weight") || n.ends_with("k_proj.weight");
            (n.clone(), if sharp { (t * 16.0).unwrap() } else { t })
        })
        .collect();
    Model::from_tensors(model.config().clone(), tensors, DType::F32).unwrap()
}

#[test]
fn gguf_files_load_like_the_weights_they_hold() {
    let llama3 = ModelConfig {
        rope_theta: 500_000.0,
        rope_scaling: Some(LLAMA31),
        tie_word_embeddings: false,
        ..ModelConfig::tiny(Arch::Llama, VOCAB)
    };
    let qwen2 = ModelConfig { tie_word_embeddings: true, ..ModelConfig::tiny(Arch::Qwen2, VOCAB) };
    let dir = temp_dir("gguf");
    std::fs::create_dir_all(&dir).unwrap();
    for (i, config) in [llama3, qwen2].into_iter().enumerate() {
        let arch = config.arch;
        let model = sharpened(Model::random(&config, DType::F32, &Device::Cpu, 20 + i as u64).unwrap());
        let path = dir.join(format!("{}.gguf", arch.name()));
        let expected = write_gguf(&model, &path);
        let spec = ModelSpec { device: Device::Cpu, ..ModelSpec::new(ModelSource::Gguf(path.clone())) };
        let loaded = Engine::load(&spec).unwrap();
        assert_eq!(loaded.model().config(), expected.config(), "{arch:?}");
        // Llama 3.1's ramp starts at wavelengths of 2048 positions: 1024 positions see it.
        let ids = tokens(1024);
        let ours = our_logits(loaded.model(), &ids);
        let want = our_logits(&expected, &ids);
        for (t, (a, b)) in ours.iter().zip(&want).enumerate() {
            let diff = max_abs_diff(a, b);
            assert!(diff < 1e-4, "{arch:?} position {t}: max |logit difference| {diff}");
        }
        // The quantized CPU decoder reads the same file (Q8_0 blocks as stored, rope factors
        // from the dense loader's config): its logits follow the dense ones up to 8-bit
        // activation rounding, and the wrong rope would put them far off.
        let quantized = Engine::load(&spec.clone().quantized()).unwrap();
        let q = quantized.quantized_model().expect("quantized decoding");
        let mut state = q.new_state(ids.len());
        let q_last = q.prefill(&mut state, &[ids.as_slice()]).unwrap();
        let quant_diff = max_abs_diff(&q_last, ours.last().unwrap());
        assert!(quant_diff < 0.05, "{arch:?}: quantized vs dense max |logit difference| {quant_diff}");
        if arch == Arch::Llama {
            let unscaled = Model::from_tensors(
                ModelConfig { rope_scaling: None, ..expected.config().clone() },
                expected.vars().iter().map(|(n, v)| (n.clone(), v.as_tensor().detach())).collect(),
                DType::F32,
            )
            .unwrap();
            let off = max_abs_diff(&q_last, our_logits(&unscaled, &ids).last().unwrap());
            assert!(off > 10.0 * quant_diff, "quantized decoder ignores rope scaling ({off} vs {quant_diff})");
        }
        // Saved back as a folder, the per-frequency factors become Llama 3's `rope_scaling`.
        let saved = dir.join(format!("{}-hf", arch.name()));
        loaded.save_pretrained(&saved).unwrap();
        let config: serde_json::Value = serde_json::from_str(&read_config(&saved)).unwrap();
        if arch == Arch::Llama {
            assert_eq!(config["rope_scaling"]["rope_type"], "llama3");
            assert_eq!(config["rope_scaling"]["factor"], 8.0);
        } else {
            assert!(config["rope_scaling"].is_null());
        }
        let reloaded =
            Engine::load(&ModelSpec { device: Device::Cpu, ..ModelSpec::new(ModelSource::HfDir(saved)) }).unwrap();
        let again = our_logits(reloaded.model(), &ids);
        let diff = max_abs_diff(again.last().unwrap(), ours.last().unwrap());
        assert!(diff < 1e-3, "{arch:?}: folder saved from the GGUF differs by {diff}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn half_precision_checkpoints_load_in_their_dtype_and_track_f32() {
    let config = ModelConfig { tie_word_embeddings: false, ..ModelConfig::tiny(Arch::Qwen2, VOCAB) };
    let engine = engine_of(Model::random(&config, DType::F32, &Device::Cpu, 30).unwrap());
    let ids = sequence();
    let batch = PaddedBatch::new(std::slice::from_ref(&ids), PadSide::Right, 0, &Device::Cpu).unwrap();
    let reference = engine.model().token_logprobs(&batch, 1.0).unwrap().logprobs.to_vec2::<f32>().unwrap();
    for (dtype, tolerance) in [(DType::F16, 0.02), (DType::BF16, 0.1)] {
        let dir = temp_dir(&format!("{dtype:?}"));
        let f32_dir = dir.join("f32");
        engine.save_pretrained(&f32_dir).unwrap();
        let convert =
            ModelSpec { dtype: Some(dtype), device: Device::Cpu, ..ModelSpec::new(ModelSource::HfDir(f32_dir)) };
        Engine::load(&convert).unwrap().save_pretrained(&dir).unwrap();
        let spec = ModelSpec { dtype: None, device: Device::Cpu, ..ModelSpec::new(ModelSource::HfDir(dir.clone())) };
        let loaded = Engine::load(&spec).unwrap();
        assert_eq!(loaded.model().dtype(), dtype);
        let lp = loaded
            .model()
            .token_logprobs(&batch, 1.0)
            .unwrap()
            .logprobs
            .to_dtype(DType::F32)
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        let diff = max_abs_diff(&lp[0], &reference[0]);
        assert!(diff < tolerance, "{dtype:?}: max |log-prob difference| {diff}");
        let out = loaded
            .generate_ids(&[ids[..5].to_vec()], &SamplingParams { ignore_eos: true, ..SamplingParams::greedy(6) })
            .unwrap();
        assert_eq!(out[0][0].token_ids.len(), 6);
        assert!(out[0][0].logprobs.iter().all(|l| l.is_finite() && *l <= 0.0));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
