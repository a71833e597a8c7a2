//! Forward + backward of per-token log-probs and entropy on SmolLM2-135M (f32, CPU), fused
//! ([`Model::token_logprobs`], the engine's op) or unfused (`log_softmax`, `gather`, `exp`, product,
//! sum on the `[B, T-1, V]` logits, the previous implementation). Run each mode in its own
//! process under `/usr/bin/time -v` to read its peak RSS:
//!
//! ```sh
//! cargo build --release -p rlengine --example logprob_bench
//! /usr/bin/time -v target/release/examples/logprob_bench fused 8 256
//! /usr/bin/time -v target/release/examples/logprob_bench unfused 8 256
//! ```

use candle_core::{DType, Tensor};
use rlengine::{logprob, Engine, ModelSpec, PadSide, PaddedBatch, Rng};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map(String::as_str).unwrap_or("fused");
    let rows: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(8);
    let tokens: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(256);
    let repeats: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(2);
    let engine = Engine::load(&ModelSpec { device: candle_core::Device::Cpu, ..ModelSpec::default_model() })?;
    let model = engine.model();
    let vocab = model.config().vocab_size;
    let mut rng = Rng::new(1);
    let seqs: Vec<Vec<u32>> =
        (0..rows).map(|_| (0..tokens).map(|_| (rng.next_u64() % vocab as u64) as u32).collect()).collect();
    let batch = PaddedBatch::new(&seqs, PadSide::Right, engine.tokenizer().pad_id(), &model.device())?;
    for i in 0..repeats {
        let start = Instant::now();
        let (logp, entropy, mask) = match mode {
            "fused" => {
                let out = model.token_logprobs(&batch, 1.0)?;
                (out.logprobs, out.entropy, out.mask)
            }
            "unfused" => {
                let logits = model.forward(&batch)?.narrow(1, 0, tokens - 1)?.to_dtype(DType::F32)?;
                let flat = logits.reshape((rows * (tokens - 1), vocab))?;
                let targets: Vec<u32> = seqs.iter().flat_map(|s| s[1..].iter().copied()).collect();
                let targets = Tensor::from_vec(targets, rows * (tokens - 1), &model.device())?;
                let (lp, h) = logprob::unfused(&flat, &targets, 1.0)?;
                let mask = Tensor::ones((rows, tokens - 1), DType::F32, &model.device())?;
                (lp.reshape((rows, tokens - 1))?, h.reshape((rows, tokens - 1))?, mask)
            }
            other => return Err(format!("mode must be `fused` or `unfused`, got `{other}`").into()),
        };
        let forward = start.elapsed().as_secs_f64();
        let loss = ((logp * &mask)?.sum_all()? + ((entropy * &mask)? * 0.01)?.sum_all()?)?;
        let grads = loss.backward()?;
        let total = start.elapsed().as_secs_f64();
        let n_grads = model.vars().iter().filter(|(_, v)| grads.get(v.as_tensor()).is_some()).count();
        println!(
            "{mode} {rows}x{tokens} run {i}: forward {forward:.2} s, forward+backward {total:.2} s, loss {:.4}, {n_grads}/{} parameters with gradients",
            loss.to_scalar::<f32>()?,
            model.vars().len()
        );
    }
    Ok(())
}
