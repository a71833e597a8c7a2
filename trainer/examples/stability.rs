//! The stability experiment of issue 6: GRPO against CPGD, CFPO and DGPO (and GRPO w/o clip,
//! CISPO, GPPO) under strong sample reuse on a synthetic task, with the same seed, model, data and
//! learning rate. Writes one run directory per (objective, iterations) under OUT and a Markdown
//! summary (`OUT/report.md`) of reward, entropy, clip fraction and KL between consecutive
//! policies; plot the runs' metrics with `rltrain plot OUT/<run>`.
//!
//! ```text
//! cargo run --release -p rltrain --example stability -- [--out runs/stability] [--steps 150] [--iterations 8,16] [--objectives grpo,cpgd,...]
//! ```

use std::fmt::Write as _;
use std::path::PathBuf;

use rltrain::{train, Event, TrainConfig};
use serde_json::Value;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let out = PathBuf::from(flag("--out").unwrap_or_else(|| "runs/stability".into()));
    let steps: u64 = flag("--steps").map_or(Ok(150), |s| s.parse())?;
    let iterations: Vec<usize> = flag("--iterations").unwrap_or_else(|| "8,16".into()).split(',').map(str::parse).collect::<Result<_, _>>()?;
    let objectives = flag("--objectives").unwrap_or_else(|| "grpo,grpo-no-clip,cispo,gppo,cpgd,cfpo,dgpo".into());
    let data = flag("--data").unwrap_or_else(|| "task:add-small".into());
    let mut report = format!(
        "# Stability under sample reuse\n\nTask `{data}`, tiny model (seed 0), P=8, G=8, 4 mini-batches, lr 3e-3, {steps} steps; \
         GRPO's reference KL off so that only the clipping differs.\n\n\
         | objective | iterations | acc first 10 | acc last 10 | best 10-step acc | entropy last 10 | clip frac (total) last 10 | kl/old_k3 max | skipped |\n|---|---|---|---|---|---|---|---|---|\n"
    );
    for it in &iterations {
        for objective in objectives.split(',') {
            let run = out.join(format!("{objective}-it{it}"));
            let _ = std::fs::remove_dir_all(&run);
            let mut cfg = TrainConfig {
                objective: objective.into(),
                data: data.clone(),
                out: run.clone(),
                steps,
                iterations: *it,
                mini_batches: 4,
                max_new_tokens: 1,
                lr: 3e-3,
                log_every: 0,
                ..TrainConfig::default()
            };
            cfg.overrides.kl_coef = Some(0.0);
            let result = train(&cfg, false, &mut |_: Event| {});
            let lines: Vec<Value> = std::fs::read_to_string(run.join("metrics.jsonl"))
                .unwrap_or_default()
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect();
            let series = |k: &str| -> Vec<f64> { lines.iter().filter_map(|v| v.get(k).and_then(Value::as_f64)).collect() };
            let mean = |v: &[f64]| if v.is_empty() { f64::NAN } else { v.iter().sum::<f64>() / v.len() as f64 };
            let acc = series("acc");
            let last = |v: &[f64]| mean(&v[v.len().saturating_sub(10)..]);
            let best = acc.windows(10).map(mean).fold(f64::NAN, f64::max);
            let kl_max = series("kl/old_k3").into_iter().fold(f64::NAN, f64::max);
            let skipped: f64 = series("skipped").iter().sum();
            let status = match &result {
                Ok(_) => String::new(),
                Err(e) => format!(" (stopped: {e})"),
            };
            writeln!(
                report,
                "| {objective}{status} | {it} | {:.2} | {:.2} | {best:.2} | {:.3} | {:.3} | {kl_max:.4} | {skipped} |",
                mean(&acc[..acc.len().min(10)]),
                last(&acc),
                last(&series("entropy")),
                last(&series("clip_frac/total")),
            )?;
            eprintln!("{objective} it={it}: acc last 10 = {:.2}{status}", last(&acc));
        }
    }
    std::fs::create_dir_all(&out)?;
    std::fs::write(out.join("report.md"), &report)?;
    print!("{report}");
    Ok(())
}
