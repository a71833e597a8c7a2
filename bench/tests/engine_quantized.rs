//! The quantized CPU decoding path on the real default model (SmolLM2-135M-Instruct Q4_1):
//! its logits track the dense (dequantized f32) network and candle's own Q4_1 model, and greedy
//! decoding gives the same text as the dense path.

use candle_core::{Device, Tensor};
use candle_transformers::models::quantized_llama;
use rlbench::engine::{default_model_path, ChatMessage, CpuDecode, Engine, ModelSpec, PadSide, PaddedBatch, SamplingParams};
use std::sync::OnceLock;

fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| Engine::load(&ModelSpec::default_model().quantized()).expect("load SmolLM2"))
}

fn prompt_ids(question: &str) -> Vec<u32> {
    let e = engine();
    let text = e.apply_chat_template(&[ChatMessage::user(question)], true).unwrap();
    e.tokenizer().encode(&text).unwrap()
}

fn argmax(v: &[f32]) -> usize {
    (0..v.len()).fold(0, |best, i| if v[i] > v[best] { i } else { best })
}

fn mean_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum::<f32>() / a.len() as f32
}

#[test]
fn quantized_logits_track_the_dense_network_and_candles_q4_1_model() {
    let e = engine();
    assert_eq!(e.cpu_decode(), CpuDecode::Quantized);
    let q = e.quantized_model().expect("quantized weights");
    let path = default_model_path().unwrap();
    let mut file = std::fs::File::open(&path).unwrap();
    let content = candle_core::quantized::gguf_file::Content::read(&mut file).unwrap();
    let mut candle_q = quantized_llama::ModelWeights::from_gguf(content, &mut file, &Device::Cpu).unwrap();
    for question in ["What is 2 + 3?", "Name a prime number.", "Explain gravity in one sentence."] {
        let ids = prompt_ids(question);
        let mut state = q.new_state(ids.len());
        let ours = q.prefill(&mut state, &[&ids]).unwrap();
        let batch = PaddedBatch::new(&[ids.clone()], PadSide::Right, 0, &Device::Cpu).unwrap();
        let dense = e.model().forward(&batch).unwrap();
        let dense = dense.narrow(1, ids.len() - 1, 1).unwrap().flatten_all().unwrap().to_vec1::<f32>().unwrap();
        let input = Tensor::new(ids.as_slice(), &Device::Cpu).unwrap().unsqueeze(0).unwrap();
        let theirs = candle_q.forward(&input, 0).unwrap().flatten_all().unwrap().to_vec1::<f32>().unwrap();
        assert_eq!(argmax(&ours), argmax(&dense), "{question}: next token vs dense");
        assert_eq!(argmax(&ours), argmax(&theirs), "{question}: next token vs candle");
        let (vs_dense, vs_candle) = (mean_abs_diff(&ours, &dense), mean_abs_diff(&ours, &theirs));
        // Both references differ from us by activation quantization error only (candle's Q4_1
        // model quantizes activations too, with its own rounding and rotary layout).
        eprintln!("{question}: mean |logit difference| to dense {vs_dense}, to candle Q4_1 {vs_candle}");
        assert!(vs_dense < 0.3, "{question}: mean |logit difference| to dense {vs_dense}");
        assert!(vs_candle < 0.3, "{question}: mean |logit difference| to candle Q4_1 {vs_candle}");
    }
}

#[test]
fn greedy_text_agrees_with_the_dense_path() {
    let quantized = engine();
    let mut dense = quantized.clone();
    dense.set_cpu_decode(CpuDecode::Dense).unwrap();
    assert_eq!(dense.cpu_decode(), CpuDecode::Dense);
    let prompts: Vec<Vec<u32>> =
        ["What is the capital of France?", "List three colors.", "What is 12 times 3?"].iter().map(|q| prompt_ids(q)).collect();
    let params = SamplingParams::greedy(32);
    let ours = quantized.generate_ids(&prompts, &params).unwrap();
    let theirs = dense.generate_ids(&prompts, &params).unwrap();
    let mut agreeing = 0;
    for (a, b) in ours.iter().zip(&theirs) {
        let (a, b) = (&a[0].token_ids, &b[0].token_ids);
        agreeing += a.iter().zip(b.iter()).take_while(|(x, y)| x == y).count();
        assert!(a.len() >= 8 && a[..8] == b[..8], "first tokens differ: {a:?} vs {b:?}");
    }
    // Quantization may flip a near-tie late in a completion, but most tokens agree.
    let total: usize = theirs.iter().map(|c| c[0].token_ids.len()).sum();
    assert!(agreeing * 10 >= total * 8, "{agreeing} of {total} greedy tokens agree");
}

#[test]
fn batched_quantized_decoding_equals_one_prompt_at_a_time() {
    let e = engine();
    let prompts: Vec<Vec<u32>> = ["Say hi.", "What is 7 * 6?"].iter().map(|q| prompt_ids(q)).collect();
    let params = SamplingParams { n: 2, temperature: 0.7, max_new_tokens: 8, seed: 5, ..Default::default() };
    let together = e.generate_ids(&prompts, &params).unwrap();
    for (p, want) in prompts.iter().zip(&together) {
        assert_eq!(&e.generate_ids(std::slice::from_ref(p), &params).unwrap()[0], want);
    }
}

#[test]
fn updating_the_weights_switches_back_to_dense_decoding() {
    let mut e = engine().clone();
    let _ = e.model_mut();
    assert_eq!(e.cpu_decode(), CpuDecode::Dense);
    assert!(e.quantized_model().is_none());
}
