//! Forward + backward of the training graph (hidden states, response log-probs and entropy, a
//! loss on both, backward into every weight) on random weights of a known shape, with the fused
//! ops or the composite ones (`--ops fused|composite`): wall and CPU seconds and the peak RSS of
//! each step (the high-water mark is reset before it, so it counts the weights plus what the
//! step allocates). No optimizer (that is `rltrain`'s `train_step_bench`).
//!
//! ```sh
//! cargo run --release -p rlengine --example train_ops_bench -- --model smollm2-135m --dtype f32 --shape 4x128
//! cargo run --release -p rlengine --example train_ops_bench -- --model qwen2-0.5b --dtype bf16 --shape 1x512 --ops composite
//! ```

use candle_core::{DType, Device, Tensor};
use rlengine::{Model, ModelConfig, OpPath, PadSide, PaddedBatch, Rng, StepInput};
use std::time::Instant;

fn status_mib(field: &str) -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: f64 = s.lines().find(|l| l.starts_with(field))?.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// User + system CPU seconds of the process (`/proc/self/stat`, 100 ticks a second).
fn cpu_s() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit_once(')').map(|(_, r)| r.split_whitespace().collect()).unwrap_or_default();
    let tick = |i: usize| fields.get(i).and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

fn flag(args: &[String], name: &str, default: &str) -> String {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned().unwrap_or_else(|| default.into())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("train_ops_bench [--model smollm2-135m] [--dtype f32|bf16|f16] [--shape ROWSxTOKENS] [--prompt 25] [--ops fused|composite] [--steps 2]");
        return Ok(());
    }
    let config = ModelConfig::preset(&flag(&args, "--model", "smollm2-135m"))?;
    let dtype = match flag(&args, "--dtype", "f32").as_str() {
        "bf16" => DType::BF16,
        "f16" => DType::F16,
        "f32" => DType::F32,
        other => return Err(format!("--dtype: f32, bf16 or f16, not {other}").into()),
    };
    let ops = match flag(&args, "--ops", "fused").as_str() {
        "fused" => OpPath::Fused,
        "composite" => OpPath::Composite,
        other => return Err(format!("--ops: fused or composite, not {other}").into()),
    };
    let shape = flag(&args, "--shape", "4x128");
    let (rows, tokens) = shape.split_once('x').ok_or("--shape is ROWSxTOKENS")?;
    let (rows, tokens): (usize, usize) = (rows.parse()?, tokens.parse()?);
    let prompt: usize = flag(&args, "--prompt", "25").parse()?;
    let steps: usize = flag(&args, "--steps", "2").parse()?;
    if rows == 0 || tokens == 0 || prompt == 0 {
        return Err("--shape and --prompt must be positive".into());
    }
    let model = Model::random(&config, dtype, &Device::Cpu, 1)?;
    let mut rng = Rng::new(7);
    let seqs: Vec<Vec<u32>> = (0..rows)
        .map(|_| (0..prompt + tokens).map(|_| (rng.next_u64() % config.vocab_size as u64) as u32).collect())
        .collect();
    let batch = PaddedBatch::new(&seqs, PadSide::Left, 0, &Device::Cpu)?;
    let targets: Vec<u32> = seqs.iter().flat_map(|s| s[prompt..].iter().copied()).collect();
    let targets = Tensor::from_vec(targets, (rows, tokens), &Device::Cpu)?;
    println!("{shape} + {prompt} prompt tokens, {dtype:?}, {ops:?} ops");
    println!("| step | wall s | CPU s | peak RSS MiB | RSS before MiB | loss |");
    println!("|---|---:|---:|---:|---:|---:|");
    for step in 1..=steps {
        let before = status_mib("VmRSS:").unwrap_or(0.0);
        let _ = std::fs::write("/proc/self/clear_refs", "5");
        let (t0, c0) = (Instant::now(), cpu_s());
        let net = model.network()?.with_op_path(ops);
        let input = StepInput { ids: &batch.ids, positions: &batch.positions, key_valid: &batch.valid };
        let hidden = net.hidden_states(&input, None)?;
        let (lp, entropy) = net.target_logprobs(&hidden.narrow(1, prompt - 1, tokens)?, &targets, 1.0)?;
        let loss = (lp.sum_all()? + (entropy.sum_all()? * 0.01)?)?;
        let grads = loss.backward()?;
        let loss = loss.to_scalar::<f32>()?;
        drop(grads);
        let (wall, cpu) = (t0.elapsed().as_secs_f64(), cpu_s() - c0);
        let peak = status_mib("VmHWM:").unwrap_or(0.0);
        println!("| {step} | {wall:.2} | {cpu:.2} | {peak:.0} | {before:.0} | {loss:.4} |");
    }
    Ok(())
}
