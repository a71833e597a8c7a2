//! Benchmark: one full RL step (SmolLM2-135M on CPU in f32 by default): a rollout of `rows`
//! responses of exactly `tokens` tokens (EOS ignored), then log-probs with grad, the objective's
//! loss, backward and the AdamW step. Reports the step time and its parts, tokens/s, peak RSS,
//! and the objective's own share (its loss and backward on a leaf of the same shape).
//!
//! ```text
//! cargo run --release -p rltrain --example train_step_bench [-- --shapes 4x128,8x256 --objective grpo]
//! # On a GPU (built with scripts/build_cuda.sh), beside `torch_reference.py train`:
//! train_step_bench --model random:qwen2-0.5b --device cuda --dtype bf16 --shapes 8x1024
//! ```

use std::time::Instant;

use candle_core::Var;
use rlengine::{Engine, ModelSpec, SamplingParams};
use rltrain::objectives::{LossInputs, Objective};
use rltrain::optim::{clip_scale, global_norm, AdamW, AdamWConfig};
use rltrain::policy::{response_logprobs, SequenceBatch};

fn peak_rss_mib() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let shapes = flag("--shapes").unwrap_or_else(|| "4x128,8x256".into());
    let objective = Objective::from_name(&flag("--objective").unwrap_or_else(|| "grpo".into()))?;
    let name = flag("--model").unwrap_or_else(|| "default".into());
    let mut spec = ModelSpec::parse(&name)?;
    spec.device = rlengine::parse_device(&flag("--device").unwrap_or_else(|| "cpu".into()))?;
    spec.dtype = Some(rlengine::parse_dtype(&flag("--dtype").unwrap_or_else(|| "f32".into()))?);
    spec.max_batch = 16;
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
    let prompt = engine
        .tokenizer()
        .encode("<|im_start|>user\nWhat is 12 * 7? Think step by step.<|im_end|>\n<|im_start|>assistant\n")?;
    println!("| rows x tokens | rollout s | train s (fwd+bwd+AdamW) | of which AdamW s | step s | tokens/s | objective s (share) | peak RSS MiB |");
    println!("|---|---|---|---|---|---|---|---|");
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
        let out = engine.generate_ids(&vec![prompt.clone(); p], &params)?;
        let completions: Vec<_> = out.into_iter().flatten().take(rows).collect();
        let rollout_s = step.elapsed().as_secs_f64();
        let train = Instant::now();
        let pairs: Vec<(&[u32], &[u32])> =
            completions.iter().map(|c| (prompt.as_slice(), c.token_ids.as_slice())).collect();
        let seqs = SequenceBatch::new(&pairs, engine.tokenizer().pad_id(), &model.device())?;
        let lp = response_logprobs(model, &seqs, 1.0)?;
        let width = seqs.response_width;
        // The objective runs in the log-probs' dtype, as in rltrain's loop.
        let dtype = lp.logp.dtype();
        let mask = seqs.mask(dtype, &model.device())?;
        let old_rows: Vec<Vec<f64>> =
            completions.iter().map(|c| c.logprobs.iter().map(|&x| f64::from(x)).collect()).collect();
        let old = rltrain::advantage::to_tensor(&old_rows, width, dtype, &model.device())?;
        let adv_rows: Vec<Vec<f64>> = (0..rows).map(|i| vec![if i % 2 == 0 { 1.0 } else { -1.0 }; width]).collect();
        let adv = rltrain::advantage::to_tensor(&adv_rows, width, dtype, &model.device())?;
        let groups: Vec<usize> = (0..rows).map(|i| i / g).collect();
        let mut cfg = objective.defaults();
        cfg.ref_kl = None;
        let logp = lp.logp.clone();
        let inp = LossInputs::new(logp.clone(), old.clone(), adv.clone(), mask.clone())?;
        let loss = cfg.loss(&inp, Some(&groups))?;
        let grads = loss.total.backward()?;
        let grads: Vec<_> = vars.iter().map(|(_, v)| grads.get(v).cloned()).collect();
        let norm = global_norm(&grads)?;
        let adam = Instant::now();
        opt.step(&vars, &grads, clip_scale(norm.norm, 1.0), 1e-6)?;
        let adam_s = adam.elapsed().as_secs_f64();
        let train_s = train.elapsed().as_secs_f64();
        let step_s = step.elapsed().as_secs_f64();
        // The objective alone: loss and backward on a leaf of the same shape.
        let leaf = Var::from_tensor(&logp.detach())?;
        let obj = Instant::now();
        let inp = LossInputs::new(leaf.as_tensor().clone(), old, adv, mask)?;
        let _ = cfg.loss(&inp, Some(&groups))?.total.backward()?;
        let obj_s = obj.elapsed().as_secs_f64();
        println!(
            "| {rows}x{tokens} | {rollout_s:.2} | {train_s:.2} | {adam_s:.2} | {step_s:.2} | {:.0} | {obj_s:.4} ({:.3}%) | {:.0} |",
            (rows * tokens) as f64 / step_s,
            100.0 * obj_s / step_s,
            peak_rss_mib().unwrap_or(f64::NAN)
        );
    }
    Ok(())
}
