//! Engine tests on tiny random models (fast, no download): gradients, padding, KV cache,
//! sampler log-probs, seeding, stop strings, save/load.

use rlengine::{
    Arch, ChatTemplate, Completion, DType, Device, Engine, FinishReason, KvCache, LoadedModel, Model, ModelConfig,
    ModelSource, ModelSpec, PadSide, PaddedBatch, SamplingParams, StepInput, Tokenizer,
};

const VOCAB: usize = 259; // Tokenizer::byte_level()

fn tiny(arch: Arch, dtype: DType, seed: u64) -> Model {
    let config = ModelConfig { tie_word_embeddings: arch == Arch::Llama, ..ModelConfig::tiny(arch, VOCAB) };
    Model::random(&config, dtype, &Device::Cpu, seed).unwrap()
}

fn tiny_engine(arch: Arch, max_batch: usize) -> Engine {
    let loaded = LoadedModel {
        model: tiny(arch, DType::F32, 42),
        tokenizer: Tokenizer::byte_level().unwrap(),
        chat_template: ChatTemplate::ChatMl { default_system: None },
    };
    Engine::from_parts(loaded, max_batch)
}

fn sequences() -> Vec<Vec<u32>> {
    vec![vec![10, 20, 30, 40, 50, 60], vec![7, 8, 9], vec![100, 101, 102, 103, 104]]
}

/// Sum of masked log-probs: the loss used by the gradient tests.
fn loss(model: &Model, batch: &PaddedBatch) -> candle_core::Tensor {
    let lp = model.token_logprobs(batch, 1.0).unwrap();
    (lp.logprobs * lp.mask.to_dtype(model.dtype()).unwrap()).unwrap().sum_all().unwrap()
}

#[test]
fn every_parameter_receives_a_nonzero_gradient() {
    for arch in [Arch::Llama, Arch::Qwen2] {
        let model = tiny(arch, DType::F32, 1);
        let batch = PaddedBatch::new(&sequences(), PadSide::Right, 0, &Device::Cpu).unwrap();
        let grads = loss(&model, &batch).backward().unwrap();
        assert!(!model.vars().is_empty());
        for (name, var) in model.vars() {
            let g = grads.get(var.as_tensor()).unwrap_or_else(|| panic!("{arch:?}: no gradient for `{name}`"));
            let norm = g.sqr().unwrap().sum_all().unwrap().to_scalar::<f32>().unwrap();
            assert!(norm > 0.0 && norm.is_finite(), "{arch:?}: gradient of `{name}` has norm {norm}");
        }
    }
}

#[test]
fn gradients_agree_with_finite_differences() {
    for arch in [Arch::Llama, Arch::Qwen2] {
        let model = tiny(arch, DType::F64, 2);
        let batch = PaddedBatch::new(&sequences(), PadSide::Left, 0, &Device::Cpu).unwrap();
        let grads = loss(&model, &batch).backward().unwrap();
        let eps = 1e-5;
        for (name, var) in model.vars().iter().step_by(3) {
            let original = var.as_tensor().flatten_all().unwrap().to_vec1::<f64>().unwrap();
            let analytic = grads.get(var.as_tensor()).unwrap().flatten_all().unwrap().to_vec1::<f64>().unwrap();
            for &i in &[0, original.len() / 2, original.len() - 1] {
                let eval = |delta: f64| {
                    let mut w = original.clone();
                    w[i] += delta;
                    var.set(&candle_core::Tensor::from_vec(w, var.shape(), &Device::Cpu).unwrap()).unwrap();
                    loss(&model, &batch).to_scalar::<f64>().unwrap()
                };
                let numeric = (eval(eps) - eval(-eps)) / (2.0 * eps);
                eval(0.0);
                let err = (numeric - analytic[i]).abs() / (1e-6 + numeric.abs().max(analytic[i].abs()));
                assert!(err < 1e-4, "{arch:?} `{name}`[{i}]: numeric {numeric} vs analytic {}", analytic[i]);
            }
        }
    }
}

#[test]
fn padding_side_and_batch_mates_do_not_change_logprobs() {
    let model = tiny(Arch::Qwen2, DType::F32, 3);
    let seqs = sequences();
    let alone: Vec<Vec<f32>> = seqs
        .iter()
        .map(|s| {
            let b = PaddedBatch::new(std::slice::from_ref(s), PadSide::Right, 0, &Device::Cpu).unwrap();
            model.token_logprobs(&b, 1.0).unwrap().logprobs.to_vec2::<f32>().unwrap().remove(0)
        })
        .collect();
    for side in [PadSide::Left, PadSide::Right] {
        let batch = PaddedBatch::new(&seqs, side, 5, &Device::Cpu).unwrap();
        let lp = model.token_logprobs(&batch, 1.0).unwrap();
        let (values, mask) = (lp.logprobs.to_vec2::<f32>().unwrap(), lp.mask.to_vec2::<f32>().unwrap());
        for (b, seq) in seqs.iter().enumerate() {
            let real: Vec<f32> = values[b].iter().zip(&mask[b]).filter(|(_, &m)| m > 0.0).map(|(&v, _)| v).collect();
            assert_eq!(real.len(), seq.len() - 1, "{side:?} row {b}");
            for (x, y) in real.iter().zip(&alone[b]) {
                assert!((x - y).abs() < 1e-5, "{side:?} row {b}: {x} vs {y}");
            }
        }
    }
}

#[test]
fn kv_cache_decoding_matches_the_full_forward() {
    let model = tiny(Arch::Llama, DType::F32, 4);
    let net = model.inference_network().unwrap();
    let seqs = vec![vec![3, 4, 5, 6, 7, 8, 9], vec![11, 12, 13, 14, 15, 16, 17]];
    let full = PaddedBatch::new(&seqs, PadSide::Left, 0, &Device::Cpu).unwrap();
    let hidden = net
        .hidden_states(&StepInput { ids: &full.ids, positions: &full.positions, key_valid: &full.valid }, None)
        .unwrap();
    let expected = net.logits(&hidden).unwrap().to_vec3::<f32>().unwrap();
    // Prefill 4 tokens, then feed one token at a time.
    let mut cache = KvCache::new(model.config().num_layers);
    let prefix: Vec<Vec<u32>> = seqs.iter().map(|s| s[..4].to_vec()).collect();
    let pre = PaddedBatch::new(&prefix, PadSide::Left, 0, &Device::Cpu).unwrap();
    let mut valid = pre.valid.clone();
    net.hidden_states(&StepInput { ids: &pre.ids, positions: &pre.positions, key_valid: &valid }, Some(&mut cache))
        .unwrap();
    for t in 4..7 {
        let ids = candle_core::Tensor::new(&[[seqs[0][t]], [seqs[1][t]]], &Device::Cpu).unwrap();
        let pos = candle_core::Tensor::new(&[[t as u32], [t as u32]], &Device::Cpu).unwrap();
        valid.iter_mut().for_each(|v| v.push(true));
        let h =
            net.hidden_states(&StepInput { ids: &ids, positions: &pos, key_valid: &valid }, Some(&mut cache)).unwrap();
        let got = net.logits(&h).unwrap().to_vec3::<f32>().unwrap();
        for b in 0..2 {
            let max_diff = got[b][0].iter().zip(&expected[b][t]).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max);
            assert!(max_diff < 1e-4, "row {b} position {t}: max diff {max_diff}");
        }
    }
    assert_eq!(cache.len(), 7);
}

/// Recomputes each completion's log-probs with the trainable forward pass.
fn recomputed_logprobs(model: &Model, prompt: &[u32], c: &Completion, temperature: f64) -> Vec<f32> {
    let seq: Vec<u32> = prompt.iter().chain(&c.token_ids).copied().collect();
    let batch = PaddedBatch::new(&[seq], PadSide::Right, 0, &Device::Cpu).unwrap();
    let lp = model.token_logprobs(&batch, temperature).unwrap().logprobs.to_vec2::<f32>().unwrap().remove(0);
    lp[prompt.len() - 1..].to_vec()
}

#[test]
fn sampler_logprobs_equal_the_trainable_forward_logprobs() {
    let engine = tiny_engine(Arch::Qwen2, 4);
    let prompts = vec![vec![40, 41, 42, 43, 44], vec![50, 51], vec![60, 61, 62]];
    for (temperature, top_p, top_k) in [(0.0, 1.0, 0), (1.0, 1.0, 0), (0.7, 0.9, 20)] {
        let params =
            SamplingParams { n: 3, temperature, top_p, top_k, max_new_tokens: 12, seed: 9, ..Default::default() };
        let out = engine.generate_ids(&prompts, &params).unwrap();
        assert_eq!(out.len(), prompts.len());
        for (prompt, completions) in prompts.iter().zip(&out) {
            assert_eq!(completions.len(), 3);
            for c in completions {
                assert_eq!(c.token_ids.len(), c.logprobs.len());
                let t = if temperature == 0.0 { 1.0 } else { temperature };
                let expected = recomputed_logprobs(engine.model(), prompt, c, t);
                for (i, (a, b)) in c.logprobs.iter().zip(&expected).enumerate() {
                    assert!((a - b).abs() < 1e-4, "T={temperature} token {i}: sampler {a} vs forward {b}");
                }
            }
        }
    }
}

#[test]
fn seeds_make_samples_reproducible_per_prompt_and_sample_index() {
    let engine = tiny_engine(Arch::Llama, 2);
    let (a, b) = (vec![30u32, 31, 32], vec![70u32, 71, 72, 73]);
    let params = SamplingParams { n: 2, temperature: 1.0, max_new_tokens: 10, seed: 123, ..Default::default() };
    let both = engine.generate_ids(&[a.clone(), b.clone()], &params).unwrap();
    let again = engine.generate_ids(&[a.clone(), b.clone()], &params).unwrap();
    assert_eq!(both, again, "same seed, same output");
    // A resumed run that asks only for `b` draws the same samples for it.
    let only_b = engine.generate_ids(std::slice::from_ref(&b), &params).unwrap();
    assert_eq!(only_b[0], both[1]);
    // Samples of one prompt differ from each other, and another seed changes them.
    assert_ne!(both[0][0].token_ids, both[0][1].token_ids);
    let other = engine.generate_ids(&[a, b], &SamplingParams { seed: 124, ..params }).unwrap();
    assert_ne!(other, both);
}

#[test]
fn greedy_is_deterministic_and_independent_of_batching() {
    let prompts = vec![vec![5u32, 6, 7, 8, 9, 10], vec![20, 21], vec![90, 91, 92]];
    let params = SamplingParams::greedy(8);
    let batched = tiny_engine(Arch::Llama, 16).generate_ids(&prompts, &params).unwrap();
    let single = tiny_engine(Arch::Llama, 1).generate_ids(&prompts, &params).unwrap();
    for (x, y) in batched.iter().zip(&single) {
        assert_eq!(x[0].token_ids, y[0].token_ids);
        assert_eq!(x[0].finish_reason, FinishReason::Length);
        assert!(x[0].truncated());
        assert_eq!(x[0].token_ids.len(), 8);
    }
}

#[test]
fn stop_strings_cut_the_text_and_end_the_completion() {
    let engine = tiny_engine(Arch::Llama, 4);
    let prompt = vec![65u32, 66, 67];
    let free =
        engine.generate_ids(std::slice::from_ref(&prompt), &SamplingParams::greedy(24)).unwrap().remove(0).remove(0);
    let text = free.text.clone();
    let chars: Vec<char> = text.chars().collect();
    assert!(chars.len() >= 10, "tiny model text too short: {text:?}");
    // Stop on a string that first appears after a few tokens of the free-running text.
    let stop: String = chars[6..8].iter().collect();
    let first = text.find(&stop).unwrap();
    let params = SamplingParams { stop: vec![stop.clone(), "never-appears".into()], ..SamplingParams::greedy(24) };
    let cut = engine.generate_ids(&[prompt], &params).unwrap().remove(0).remove(0);
    assert_eq!(cut.finish_reason, FinishReason::Stop);
    assert_eq!(cut.text, text[..first]);
    assert!(cut.token_ids.len() < free.token_ids.len());
    assert_eq!(cut.token_ids[..], free.token_ids[..cut.token_ids.len()]);
}

#[test]
fn bad_requests_are_errors_not_panics() {
    let engine = tiny_engine(Arch::Llama, 4);
    assert!(engine.generate_ids(&[vec![]], &SamplingParams::greedy(4)).is_err());
    assert!(engine.generate_ids(&[vec![VOCAB as u32]], &SamplingParams::greedy(4)).is_err());
    assert!(engine.generate_ids(&[vec![1]], &SamplingParams { n: 0, ..Default::default() }).is_err());
    assert!(engine.generate_ids(&[], &SamplingParams::greedy(4)).unwrap().is_empty());
    assert!(ModelSpec::parse("/no/such/model.gguf").is_err());
}

#[test]
fn saved_models_load_back_with_identical_outputs() {
    let dir = std::env::temp_dir().join(format!("rlbench-engine-save-{}", std::process::id()));
    for arch in [Arch::Llama, Arch::Qwen2] {
        let engine = tiny_engine(arch, 4);
        engine.save_pretrained(&dir).unwrap();
        let loaded = Engine::load(&ModelSpec::new(ModelSource::HfDir(dir.clone()))).unwrap();
        assert_eq!(loaded.model().config(), engine.model().config());
        let names = |m: &Model| m.vars().iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        assert_eq!(names(loaded.model()), names(engine.model()));
        let batch = PaddedBatch::new(&sequences(), PadSide::Right, 0, &Device::Cpu).unwrap();
        let a = engine.model().token_logprobs(&batch, 1.0).unwrap().logprobs.to_vec2::<f32>().unwrap();
        let b = loaded.model().token_logprobs(&batch, 1.0).unwrap().logprobs.to_vec2::<f32>().unwrap();
        assert_eq!(a, b, "{arch:?}");
        assert_eq!(loaded.tokenizer().encode("x+1=2").unwrap(), engine.tokenizer().encode("x+1=2").unwrap());
        assert_eq!(loaded.tokenizer().eos_ids(), engine.tokenizer().eos_ids());
        assert_eq!(loaded.chat_template(), engine.chat_template());
        // Loading converts to the requested dtype; `None` keeps the checkpoint's.
        let spec = ModelSpec { dtype: Some(DType::BF16), ..ModelSpec::new(ModelSource::HfDir(dir.clone())) };
        let bf16 = Engine::load(&spec).unwrap();
        assert_eq!(bf16.model().dtype(), DType::BF16);
        let bf16_dir = dir.join("bf16");
        bf16.save_pretrained(&bf16_dir).unwrap();
        let keep = ModelSpec { dtype: None, ..ModelSpec::new(ModelSource::HfDir(bf16_dir)) };
        let kept = Engine::load(&keep).unwrap();
        assert_eq!(kept.model().dtype(), DType::BF16);
        // bf16 weights still generate (scores and softmax run in f32).
        let out = kept.generate_ids(&[vec![10, 11, 12]], &SamplingParams::greedy(4)).unwrap();
        assert_eq!(out[0][0].token_ids.len(), 4);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn byte_level_tokenizer_round_trips_text() {
    let tok = Tokenizer::byte_level().unwrap();
    for text in ["hello world", "x^2 + 3x = 10\n", "π ≈ 3.14159", "<|im_start|>user\nhi<|im_end|>"] {
        let ids = tok.encode(text).unwrap();
        assert!(ids.iter().all(|&i| (i as usize) < VOCAB));
        assert_eq!(tok.decode(&ids, false).unwrap(), text);
    }
    assert_eq!(tok.encode("<|im_start|>").unwrap(), vec![1]);
}

#[test]
fn sharded_checkpoints_load_and_missing_shards_are_reported() {
    let dir = std::env::temp_dir().join(format!("rlbench-engine-shards-{}", std::process::id()));
    let engine = tiny_engine(Arch::Qwen2, 4);
    engine.save_pretrained(&dir).unwrap();
    let whole = dir.join("model.safetensors");
    let tensors = candle_core::safetensors::load(&whole, &Device::Cpu).unwrap();
    std::fs::remove_file(&whole).unwrap();
    let (mut first, mut second) = (std::collections::HashMap::new(), std::collections::HashMap::new());
    for (i, (name, t)) in tensors.into_iter().enumerate() {
        if i % 2 == 0 {
            first.insert(name, t);
        } else {
            second.insert(name, t);
        }
    }
    candle_core::safetensors::save(&first, dir.join("model-00001-of-00002.safetensors")).unwrap();
    candle_core::safetensors::save(&second, dir.join("model-00002-of-00002.safetensors")).unwrap();
    let loaded = Engine::load(&ModelSpec::new(ModelSource::HfDir(dir.clone()))).unwrap();
    let batch = PaddedBatch::new(&sequences(), PadSide::Left, 0, &Device::Cpu).unwrap();
    let a = engine.model().token_logprobs(&batch, 1.0).unwrap().logprobs.to_vec2::<f32>().unwrap();
    let b = loaded.model().token_logprobs(&batch, 1.0).unwrap().logprobs.to_vec2::<f32>().unwrap();
    assert_eq!(a, b);
    std::fs::remove_file(dir.join("model-00002-of-00002.safetensors")).unwrap();
    let err = Engine::load(&ModelSpec::new(ModelSource::HfDir(dir.clone()))).unwrap_err().to_string();
    assert!(err.contains("missing parameter"), "{err}");
    // A file that is not GGUF is an error, not a panic.
    let fake = dir.join("fake.gguf");
    std::fs::write(&fake, b"not a gguf file").unwrap();
    assert!(Engine::load(&ModelSpec::new(ModelSource::Gguf(fake))).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn engine_can_be_shared_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Engine>();
    assert_send_sync::<Model>();
    let engine = tiny_engine(Arch::Llama, 4);
    let outputs: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|_| s.spawn(|| engine.generate_ids(&[vec![1, 2, 3]], &SamplingParams::greedy(3)).unwrap()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(outputs[0], outputs[1]);
}

#[test]
fn random_presets_have_the_named_shapes_and_generate() {
    assert!(ModelSpec::parse("random:qwen2-7b").unwrap_err().to_string().contains("qwen2-0.5b"));
    let spec = ModelSpec::parse("random:qwen2-0.5b").unwrap();
    assert_eq!(spec.source, ModelSource::Random("qwen2-0.5b".into()));
    let c = ModelConfig::preset("qwen2-0.5b").unwrap();
    // Qwen2.5-0.5B: 494M parameters with the embedding tied.
    let params = c.vocab_size * c.hidden_size
        + c.num_layers
            * (c.hidden_size * c.head_dim * (c.num_heads + 2 * c.num_kv_heads)
                + c.head_dim * (c.num_heads + 2 * c.num_kv_heads)
                + c.num_heads * c.head_dim * c.hidden_size
                + 3 * c.hidden_size * c.intermediate_size
                + 2 * c.hidden_size)
        + c.hidden_size;
    assert_eq!(params, 494_032_768);
    for name in ModelConfig::PRESETS {
        ModelConfig::preset(name).unwrap().validate().unwrap();
    }
    // Random weights pick ids the byte-level tokenizer lacks: text decoding must cope.
    let mut spec = ModelSpec::parse("random:smollm2-135m").unwrap();
    spec.device = Device::Cpu;
    let engine = Engine::load(&spec).unwrap();
    assert_eq!(engine.model().config().num_layers, 30);
    let out = engine
        .generate_ids(&[vec![5, 6, 7]], &SamplingParams { ignore_eos: true, ..SamplingParams::greedy(4) })
        .unwrap();
    assert_eq!(out[0][0].token_ids.len(), 4);
}
