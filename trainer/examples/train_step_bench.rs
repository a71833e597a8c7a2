//! Benchmark: one full RL step (SmolLM2-135M on CPU in f32 by default): a rollout of `rows`
//! responses of exactly `tokens` tokens (EOS ignored), then log-probs with grad, the objective's
//! loss, backward and the AdamW step. Reports the step time and its parts, tokens/s, peak RSS,
//! and the objective's own share (its loss and backward on a leaf of the same shape).
//!
//! With `--no-rollout` the responses are seeded random tokens and the sampler's log-probs are the
//! policy's plus a small fixed offset (what `torch_step.py` does), so only the train part runs.
//! The train part's own figures: wall and process CPU seconds (user + sys, all threads) and its
//! peak RSS (the high-water mark is reset just before it, so the rollout's buffers do not count;
//! the resident weights and optimizer state do), beside the RSS just before it.
//!
//! Beside the measured peak, the memory model's prediction (`rltrain::memory::train_step`, with
//! the ops of this build) and their ratio: measured is the train part's peak RSS less the RSS the
//! process had before the model was loaded (code and libraries). A later shape of one process
//! can find memory the allocator kept from an earlier one: compare one shape per process.
//! `--prompt-tokens N` replaces the chat prompt by N seeded random tokens. `--terms` prints the prediction term by term; `--predict PROMPT_TOKENS` prints only the
//! predictions (fused and composite ops) for a preset's shape, without weights:
//! `train_step_bench --predict 128 --model random:qwen2-0.5b --dtype bf16 --shapes 8x896`.
//!
//! ```text
//! cargo run --release -p rltrain --example train_step_bench [-- --shapes 4x128,8x256 --objective grpo]
//! train_step_bench --no-rollout --shapes 4x128,4x128,4x128   # the train part alone, as torch_step.py
//! train_step_bench --no-rollout --recompute-activations         # per-layer activation recomputation
//! # On a GPU (built with scripts/build_cuda.sh), beside `torch_reference.py train`:
//! train_step_bench --model random:qwen2-0.5b --device cuda --dtype bf16 --shapes 8x1024
//! ```

use std::time::Instant;

use candle_core::Var;
use rlengine::{Engine, ModelSpec, SamplingParams};
use rltrain::memory::{self, Options, StepShape};
use rltrain::objectives::{LossInputs, Objective};
use rltrain::optim::{clip_scale, global_norm, AdamW, AdamWConfig};
use rltrain::policy::{response_logprobs, response_logprobs_recomputed, SequenceBatch};

fn status_mib(field: &str) -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn peak_rss_mib() -> Option<f64> {
    status_mib("VmHWM:")
}

fn rss_mib() -> Option<f64> {
    status_mib("VmRSS:")
}

/// Resets the process's peak RSS (VmHWM) to its current RSS (Linux >= 4.0).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// User + system CPU seconds of the whole process (all threads).
fn cpu_s() -> f64 {
    // SAFETY: `rusage` is plain integers, for which all-zero bytes are a valid value.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the struct we own and pass by a valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// A seeded xorshift stream (random response tokens for `--no-rollout`).
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// `--predict PROMPT_TOKENS`: the memory model's terms for each shape, with the fused ops and
/// with this build's composite ops, without running anything.
fn print_predictions(
    config: &rlengine::ModelConfig,
    dtype: candle_core::DType,
    cpu: bool,
    prompt: usize,
    shapes: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    for shape in shapes.split(',') {
        let (rows, tokens) = shape.split_once('x').ok_or("shapes look like 8x1024")?;
        let s = StepShape { rows: rows.parse()?, prompt, response: tokens.parse()? };
        let fused = memory::train_step(config, s, &Options::fused(dtype, cpu));
        let composite = memory::train_step(config, s, &Options::composite(dtype, cpu));
        println!("\n{shape} ({prompt} prompt tokens, {dtype:?}), GiB:\n");
        println!("| term | fused ops | composite ops |\n|---|---|---|");
        for (f, c) in fused.terms.iter().zip(&composite.terms) {
            println!("| {} | {:.2} | {:.2} |", f.name, memory::gib(f.bytes), memory::gib(c.bytes));
        }
        println!("| **total** | **{:.2}** | **{:.2}** |", memory::gib(fused.total()), memory::gib(composite.total()));
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    rlengine::element_wise_on_caller();
    let start_rss = rss_mib().unwrap_or(0.0);
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let shapes = flag("--shapes").unwrap_or_else(|| "4x128,8x256".into());
    let objective = Objective::from_name(&flag("--objective").unwrap_or_else(|| "grpo".into()))?;
    let name = flag("--model").unwrap_or_else(|| "default".into());
    if let Some(prompt) = flag("--predict") {
        // No weights, no device opened: the shape of a preset (`random:NAME`; `default` is
        // SmolLM2-135M); `--device` only says whether the CPU's kernels apply.
        let config = rlengine::ModelConfig::preset(name.strip_prefix("random:").unwrap_or("smollm2-135m"))?;
        let dtype = rlengine::parse_dtype(&flag("--dtype").unwrap_or_else(|| "f32".into()))?;
        let cpu = flag("--device").is_none_or(|d| d == "cpu");
        print_predictions(&config, dtype, cpu, prompt.parse()?, &shapes)?;
        return Ok(());
    }
    let mut spec = ModelSpec::parse(&name)?;
    spec.device = rlengine::parse_device(&flag("--device").unwrap_or_else(|| "cpu".into()))?;
    spec.dtype = Some(rlengine::parse_dtype(&flag("--dtype").unwrap_or_else(|| "f32".into()))?);
    spec.max_batch = 16;
    let no_rollout = args.iter().any(|a| a == "--no-rollout");
    let recompute = args.iter().any(|a| a == "--recompute-activations");
    let terms = args.iter().any(|a| a == "--terms");
    if no_rollout {
        // No sampling: no quantized copy of the weights either.
        spec.cpu_decode = rlengine::CpuDecode::Dense;
    }
    let t = Instant::now();
    let engine = Engine::load(&spec)?;
    println!(
        "model: {name} ({:?} on {:?}), loaded in {:.1} s; objective {}",
        engine.model().dtype(),
        engine.model().device(),
        t.elapsed().as_secs_f64(),
        objective.name
    );
    let model = engine.model();
    let vars = model.vars().to_vec();
    let mut opt = AdamW::new(&vars, AdamWConfig::default())?;
    let vocab = model.config().vocab_size as u64;
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let prompt = match flag("--prompt-tokens") {
        // Seeded random prompt tokens: the same positions as `torch_reference.py train --prompt N`.
        Some(n) => (0..n.parse::<usize>()?).map(|_| (rng.next() % vocab) as u32).collect(),
        None => engine
            .tokenizer()
            .encode("<|im_start|>user\nWhat is 12 * 7? Think step by step.<|im_end|>\n<|im_start|>assistant\n")?,
    };
    println!("prompt: {} tokens", prompt.len());
    println!(
        "| rows x tokens | rollout s | train s (fwd+bwd+AdamW) | train CPU s | of which AdamW s | step s | tokens/s | \
         objective s (share) | RSS before train MiB | train peak RSS MiB | process peak RSS MiB | \
         predicted MiB | measured MiB | predicted/measured |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let opts = Options { recompute, ..Options::current(model.dtype(), model.device().is_cpu()) };
    let mut breakdowns = Vec::new();
    for shape in shapes.split(',') {
        let (rows, tokens) = shape.split_once('x').ok_or("shapes look like 4x128")?;
        let (rows, tokens): (usize, usize) = (rows.parse()?, tokens.parse()?);
        let g = rows.min(4);
        let p = rows.div_ceil(g);
        let step = Instant::now();
        let params = SamplingParams {
            n: g,
            temperature: 1.0,
            max_new_tokens: tokens,
            seed: 1,
            ignore_eos: true,
            ..SamplingParams::default()
        };
        let (responses, sampler_logp): (Vec<Vec<u32>>, Vec<Vec<f32>>) = if no_rollout {
            let ids = (0..rows).map(|_| (0..tokens).map(|_| (rng.next() % vocab) as u32).collect()).collect();
            (ids, Vec::new())
        } else {
            let out = engine.generate_ids(&vec![prompt.clone(); p], &params)?;
            out.into_iter().flatten().take(rows).map(|c| (c.token_ids, c.logprobs)).unzip()
        };
        let rollout_s = step.elapsed().as_secs_f64();
        let process_peak = peak_rss_mib().unwrap_or(f64::NAN);
        let rss_before = rss_mib().unwrap_or(f64::NAN);
        reset_peak_rss();
        let cpu0 = cpu_s();
        let train = Instant::now();
        let pairs: Vec<(&[u32], &[u32])> = responses.iter().map(|r| (prompt.as_slice(), r.as_slice())).collect();
        let seqs = SequenceBatch::new(&pairs, engine.tokenizer().pad_id(), &model.device())?;
        let (lp, rec) = if recompute {
            let (lp, rec) = response_logprobs_recomputed(model, &seqs, 1.0)?;
            (lp, Some(rec))
        } else {
            (response_logprobs(model, &seqs, 1.0)?, None)
        };
        let trace = std::env::var_os("STEP_TRACE").is_some();
        let mark = |what: &str| {
            if trace {
                eprintln!(
                    "  {what}: RSS {:.0} MiB, peak {:.0} MiB, {:.2} s",
                    rss_mib().unwrap_or(f64::NAN),
                    peak_rss_mib().unwrap_or(f64::NAN),
                    train.elapsed().as_secs_f64()
                );
            }
        };
        mark("forward");
        let width = seqs.response_width;
        // The objective runs in the log-probs' dtype, as in rltrain's loop.
        let dtype = lp.logp.dtype();
        let mask = seqs.mask(dtype, &model.device())?;
        let old = if no_rollout {
            // The policy's own log-probs plus a small fixed offset, as torch_step.py does.
            let shift: Vec<f64> = (0..rows * width).map(|_| (rng.next() % 2001) as f64 * 1e-5 - 0.01).collect();
            (lp.logp.detach()
                + candle_core::Tensor::from_vec(shift, (rows, width), &model.device())?.to_dtype(dtype)?)?
        } else {
            let old_rows: Vec<Vec<f64>> =
                sampler_logp.iter().map(|r| r.iter().map(|&x| f64::from(x)).collect()).collect();
            rltrain::advantage::to_tensor(&old_rows, width, dtype, &model.device())?
        };
        let adv_rows: Vec<Vec<f64>> = (0..rows).map(|i| vec![if i % 2 == 0 { 1.0 } else { -1.0 }; width]).collect();
        let adv = rltrain::advantage::to_tensor(&adv_rows, width, dtype, &model.device())?;
        let groups: Vec<usize> = (0..rows).map(|i| i / g).collect();
        let mut cfg = objective.defaults();
        cfg.ref_kl = None;
        let logp = lp.logp.clone();
        let inp = LossInputs::new(logp.clone(), old.clone(), adv.clone(), mask.clone())?;
        let loss = cfg.loss(&inp, Some(&groups))?;
        let mut grads = loss.total.backward()?;
        drop(loss);
        mark("backward (head)");
        if trace {
            let all: usize = grads.get_ids().filter_map(|id| grads.get_id(*id)).map(|t| t.elem_count()).sum();
            let n = grads.get_ids().count();
            eprintln!("  grad store: {n} tensors, {:.0} MiB", all as f64 * 4.0 / 1048576.0);
        }
        if let Some(rec) = rec {
            rec.backward(&mut grads)?;
            mark("backward (layers)");
        }
        let grads: Vec<_> = vars.iter().map(|(_, v)| grads.get(v).cloned()).collect();
        let norm = global_norm(&grads)?;
        mark("norm");
        let adam = Instant::now();
        opt.step(&vars, &grads, clip_scale(norm.norm, 1.0), 1e-6)?;
        let adam_s = adam.elapsed().as_secs_f64();
        mark("AdamW");
        let train_s = train.elapsed().as_secs_f64();
        let train_cpu = cpu_s() - cpu0;
        let train_peak = peak_rss_mib().unwrap_or(f64::NAN);
        let step_s = step.elapsed().as_secs_f64();
        // The objective alone: loss and backward on a leaf of the same shape.
        let leaf = Var::from_tensor(&logp.detach())?;
        let obj = Instant::now();
        let inp = LossInputs::new(leaf.as_tensor().clone(), old, adv, mask)?;
        let _ = cfg.loss(&inp, Some(&groups))?.total.backward()?;
        let obj_s = obj.elapsed().as_secs_f64();
        let shape_of = StepShape { rows, prompt: prompt.len(), response: tokens };
        let predicted = memory::train_step(model.config(), shape_of, &opts);
        let predicted_mib = predicted.total() as f64 / 1048576.0;
        let measured_mib = train_peak - start_rss;
        println!(
            "| {rows}x{tokens} | {rollout_s:.2} | {train_s:.2} | {train_cpu:.2} | {adam_s:.2} | {step_s:.2} | {:.0} | \
             {obj_s:.4} ({:.3}%) | {rss_before:.0} | {train_peak:.0} | {:.0} | {predicted_mib:.0} | {measured_mib:.0} | \
             {:.2} |",
            (rows * tokens) as f64 / step_s,
            100.0 * obj_s / step_s,
            process_peak.max(train_peak),
            predicted_mib / measured_mib,
        );
        breakdowns.push((shape.to_string(), predicted));
    }
    for (shape, est) in breakdowns.iter().filter(|_| terms) {
        println!(
            "\nPredicted train peak of {shape} (prompt {} tokens):\n\n| term | GiB |\n|---|---|\n{est}",
            prompt.len()
        );
    }
    Ok(())
}
