//! Tokens/s of the embedded engine (greedy decoding), quantized CPU path by default (`--dense`
//! for the trainable network's path), and of candle's quantized GGUF model for reference.
//! Threads: rayon's (`RAYON_NUM_THREADS`, default one per core).
//!
//! ```sh
//! cargo run --release -p rlengine --example engine_bench -- --batch 1 --batch 8 --new-tokens 256
//! # On a GPU (built with scripts/build_cuda.sh), beside `torch_reference.py generate`:
//! engine_bench --model random:qwen2-0.5b --device cuda --dtype bf16 --batch 8 --prompt-tokens 128
//! ```

use anyhow::Result;
use candle_core::{Device, Tensor};
use clap::Parser;
use rlengine::{ChatMessage, CpuDecode, Engine, ModelSpec, SamplingParams};
use std::time::Instant;

/// Measures generation throughput on CPU.
#[derive(Parser, Debug)]
struct Args {
    /// Model: `default` (SmolLM2-135M-Instruct Q4_1), a `.gguf` file or a Hugging Face folder.
    #[arg(long, default_value = "default")]
    model: String,
    /// Batch sizes to measure (distinct prompts per batch).
    #[arg(long, default_values_t = [1usize, 8])]
    batch: Vec<usize>,
    /// New tokens per completion (EOS is ignored, so every row decodes this many).
    #[arg(long, default_value_t = 256)]
    new_tokens: usize,
    /// Also time candle-transformers' quantized_llama (batch 1) on the same GGUF.
    #[arg(long)]
    quantized: bool,
    /// Decode with the dense f32 network (the trainer's path) instead of quantized kernels.
    #[arg(long)]
    dense: bool,
    /// Timed repetitions per batch size (the best is reported too).
    #[arg(long, default_value_t = 1)]
    repeat: usize,
    /// Device: `cpu`, or `cuda` (GPU 0; needs a build with `--features cuda`).
    #[arg(long, default_value = "cpu")]
    device: String,
    /// Weights' dtype for the dense path: f32, bf16 or f16.
    #[arg(long, default_value = "f32")]
    dtype: String,
    /// Prompts of this many fixed token ids instead of the chat questions (as the PyTorch
    /// reference's `--prompt`).
    #[arg(long)]
    prompt_tokens: Option<usize>,
}

const QUESTIONS: [&str; 8] = [
    "Write a short story about a robot learning to paint.",
    "Explain how photosynthesis works.",
    "Describe the water cycle in detail.",
    "What are the main causes of the French Revolution?",
    "Tell me about the history of the printing press.",
    "How does a computer processor execute instructions?",
    "Write a poem about the ocean at night.",
    "Explain the rules of chess to a beginner.",
];

fn main() -> Result<()> {
    let args = Args::parse();
    let t0 = Instant::now();
    let (device, dtype) = (rlengine::parse_device(&args.device)?, rlengine::parse_dtype(&args.dtype)?);
    let cpu_decode = if args.dense { CpuDecode::Dense } else { CpuDecode::Quantized };
    let engine = Engine::load(&ModelSpec {
        max_batch: 64,
        cpu_decode,
        device,
        dtype: Some(dtype),
        ..ModelSpec::parse(&args.model)?
    })?;
    let decoding =
        if engine.model().device().is_cpu() { format!("{:?}", engine.cpu_decode()) } else { "GPU dense".into() };
    println!(
        "loaded `{}` in {:.2}s ({decoding} decoding, {:?} weights, {} threads, {:?} kernels)",
        args.model,
        t0.elapsed().as_secs_f64(),
        engine.model().dtype(),
        rayon::current_num_threads(),
        rlengine::cpu::Simd::detect(),
    );
    for &batch in &args.batch {
        let prompts: Vec<Vec<u32>> = (0..batch)
            .map(|i| match args.prompt_tokens {
                // Distinct fixed ids per row, inside every preset's vocabulary.
                Some(n) => Ok((0..n).map(|j| (1000 + 7 * i + 13 * j) as u32 % 40_000).collect()),
                None => {
                    let text =
                        engine.apply_chat_template(&[ChatMessage::user(QUESTIONS[i % QUESTIONS.len()])], true)?;
                    Ok(engine.tokenizer().encode(&text)?)
                }
            })
            .collect::<Result<_>>()?;
        // Fixed-length runs: every row decodes exactly `new_tokens` tokens. A 1-token run times
        // the prefill, so decode speed is reported apart (as candle's examples do).
        let one = SamplingParams { ignore_eos: true, ..SamplingParams::greedy(1) };
        let params = SamplingParams { ignore_eos: true, ..SamplingParams::greedy(args.new_tokens) };
        for _ in 0..args.repeat.max(1) {
            let t = Instant::now();
            engine.generate_ids(&prompts, &one)?;
            let prefill = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let out = engine.generate_ids(&prompts, &params)?;
            let secs = t.elapsed().as_secs_f64();
            let tokens: usize = out.iter().map(|c| c[0].token_ids.len()).sum();
            let decode_tokens = tokens.saturating_sub(batch);
            println!(
                "engine batch {batch:>2}: {tokens:>5} tokens in {secs:>6.2}s = {:>6.1} tok/s overall; \
                 prefill {prefill:.2}s ({} prompt tokens/row), decode {:>6.1} tok/s",
                tokens as f64 / secs,
                prompts[0].len(),
                decode_tokens as f64 / (secs - prefill).max(1e-9),
            );
        }
    }
    if args.quantized {
        let path = match ModelSpec::parse(&args.model)?.source {
            rlengine::ModelSource::Gguf(p) => p,
            _ => rlengine::default_model_path()?,
        };
        let mut file = std::fs::File::open(&path)?;
        let content = candle_core::quantized::gguf_file::Content::read(&mut file)?;
        let mut model =
            candle_transformers::models::quantized_llama::ModelWeights::from_gguf(content, &mut file, &Device::Cpu)?;
        let text = engine.apply_chat_template(&[ChatMessage::user(QUESTIONS[0])], true)?;
        let mut ids = engine.tokenizer().encode(&text)?;
        let t = Instant::now();
        let mut pos = 0;
        let mut prefill = 0.0;
        for step in 0..args.new_tokens {
            let input = Tensor::new(&ids[pos..], &Device::Cpu)?.unsqueeze(0)?;
            let logits = model.forward(&input, pos)?.flatten_all()?.to_vec1::<f32>()?;
            pos = ids.len();
            let next = (0..logits.len()).fold(0, |b, i| if logits[i] > logits[b] { i } else { b });
            ids.push(next as u32);
            if step == 0 {
                prefill = t.elapsed().as_secs_f64();
            }
        }
        let secs = t.elapsed().as_secs_f64();
        println!(
            "quantized_llama batch 1: {} tokens in {secs:.2}s = {:.1} tok/s overall; prefill {prefill:.2}s, decode {:.1} tok/s",
            args.new_tokens,
            args.new_tokens as f64 / secs,
            (args.new_tokens - 1) as f64 / (secs - prefill).max(1e-9),
        );
    }
    Ok(())
}
