//! The stability studies: objectives under sample reuse on a synthetic task, with the same seeds,
//! model, data and learning rate. Writes one run directory per (objective, iterations, seed) under
//! OUT, overlay plots of reward, accuracy, entropy, clip fraction and KL between consecutive
//! policies per iteration setting (`OUT/plots-itN/`, seed 0 of each objective), and a Markdown
//! summary over the seeds, mean and min-max (`OUT/report.md`).
//!
//! `--study NAME` runs one paper's finding on that paper's own settings (`--paper NAME`):
//!
//! - `cfpo` (arXiv:2601.22801 §5): GRPO degrades as reuse grows (1, 4, 8, 16 iterations), CFPO
//!   does not;
//! - `cpgd` (arXiv:2505.12504 §5): RLOO, REINFORCE++ and GRPO without a reference KL degrade, CPGD
//!   does not;
//! - `dgpo` (arXiv:2603.14389 §5): CISPO and GPPO collapse entropy, DGPO keeps it.
//!
//! ```text
//! cargo run --release -p rltrain --example stability -- --study cfpo --out runs/study-cfpo
//! cargo run --release -p rltrain --example stability -- [--out runs/stability] [--steps 150]
//!     [--iterations 1,8,16] [--objectives grpo,cpgd,...] [--seeds 3] [--lr 1e-3] [--mini-batches 4]
//!     [--data task:add-small] [--max-new-tokens 1] [--paper cfpo|cpgd|dgpo]
//! ```
//! Flags given with `--study` replace the study's own choices.

use std::fmt::Write as _;
use std::path::PathBuf;

use rltrain::plot::plot_compare;
use rltrain::{train, Event, TrainConfig};
use serde_json::Value;

/// What one run leaves for the summary.
struct RunSummary {
    acc_first: f64,
    acc_last: f64,
    acc_best: f64,
    entropy_last: f64,
    clip_last: f64,
    kl_max: f64,
    skipped: f64,
    stopped: bool,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let list = |name: &str, default: &str| -> Result<Vec<usize>, std::num::ParseIntError> {
        flag(name).unwrap_or_else(|| default.into()).split(',').map(str::parse).collect()
    };
    let study = flag("--study");
    // (objectives, iterations, paper) of each study.
    let (study_objectives, study_iterations, study_paper) = match study.as_deref() {
        None => ("grpo,grpo-no-clip,cispo,gppo,cpgd,cfpo,dgpo", "1,8,16", None),
        Some("cfpo") => ("grpo,cfpo", "1,4,8,16", Some("cfpo")),
        Some("cpgd") => ("grpo,reinforce-pp,rloo-ppo,cpgd", "1,8", Some("cpgd")),
        Some("dgpo") => ("cispo,gppo,dgpo", "1,8", Some("dgpo")),
        Some(other) => return Err(format!("unknown --study `{other}`; valid: cfpo, cpgd, dgpo").into()),
    };
    let out = PathBuf::from(
        flag("--out").unwrap_or_else(|| study.as_ref().map_or("runs/stability".into(), |s| format!("runs/study-{s}"))),
    );
    let steps: u64 = flag("--steps").map_or(Ok(150), |s| s.parse())?;
    let iterations = list("--iterations", study_iterations)?;
    let seeds: u64 = flag("--seeds").map_or(Ok(3), |s| s.parse())?;
    let lr: f64 = flag("--lr").map_or(Ok(1e-3), |s| s.parse())?;
    let mini_batches: usize = flag("--mini-batches").map_or(Ok(4), |s| s.parse())?;
    let max_new_tokens: usize = flag("--max-new-tokens").map_or(Ok(1), |s| s.parse())?;
    let objectives = flag("--objectives").unwrap_or_else(|| study_objectives.into());
    let paper = flag("--paper").or(study_paper.map(String::from));
    let data = flag("--data").unwrap_or_else(|| "task:add-small".into());
    std::fs::create_dir_all(&out)?;
    let setting = match &paper {
        Some(p) => format!("the `--paper {p}` settings (reward range, aggregation, advantage, KL, clip widths)"),
        None => "registry defaults with GRPO's reference KL off, so that only the clipping differs".into(),
    };
    let mut report = format!(
        "# Stability under sample reuse{}\n\nTask `{data}` (at most {max_new_tokens} new tokens), tiny model, P=8, G=8, \
         {mini_batches} mini-batches, lr {lr}, {steps} steps, seeds 0..{seeds} (each cell is the mean over seeds, `min-max` \
         for accuracy and entropy); {setting}. Command: `cargo run --release -p rltrain --example stability -- {}--out {} \
         --steps {steps} --iterations {} --seeds {seeds} --lr {lr} --mini-batches {mini_batches} --data {data} \
         --max-new-tokens {max_new_tokens}`.\n",
        study.as_ref().map_or(String::new(), |s| format!(": the {} study", s.to_uppercase())),
        study.as_ref().map_or(String::new(), |s| format!("--study {s} ")),
        out.display(),
        iterations.iter().map(usize::to_string).collect::<Vec<_>>().join(","),
    );
    for &it in &iterations {
        report.push_str(
            "\n| objective | iterations | acc first 10 | acc last 10 (min-max) | best 10-step acc | entropy last 10 (min-max) | \
             clip frac (total) last 10 | kl/old_k3 max | skipped | stopped runs |\n|---|---|---|---|---|---|---|---|---|---|\n",
        );
        let mut seed0_runs = Vec::new();
        for objective in objectives.split(',') {
            let mut runs = Vec::new();
            for seed in 0..seeds {
                let run = out.join(format!("{objective}-it{it}-s{seed}"));
                let _ = std::fs::remove_dir_all(&run);
                let mut layer = serde_json::json!({
                    "objective": objective, "data": data, "out": run, "steps": steps, "iterations": it,
                    "mini_batches": mini_batches, "max_new_tokens": max_new_tokens, "lr": lr, "seed": seed,
                    "log_every": 0, "paper": paper,
                });
                if paper.is_none() {
                    layer["overrides"] = serde_json::json!({ "kl_coef": 0.0 });
                }
                let cfg = TrainConfig::resolve(None, &[layer])?;
                let result = train(&cfg, false, &mut |_: Event| {});
                if let Err(e) = &result {
                    eprintln!("{objective} it={it} seed={seed}: stopped: {e}");
                }
                runs.push(summarise(&run, result.is_err()));
                if seed == 0 {
                    seed0_runs.push((objective.to_string(), run));
                }
            }
            let mean = |f: &dyn Fn(&RunSummary) -> f64| runs.iter().map(f).sum::<f64>() / runs.len().max(1) as f64;
            let lo = runs.iter().map(|r| r.acc_last).fold(f64::INFINITY, f64::min);
            let hi = runs.iter().map(|r| r.acc_last).fold(f64::NEG_INFINITY, f64::max);
            let elo = runs.iter().map(|r| r.entropy_last).fold(f64::INFINITY, f64::min);
            let ehi = runs.iter().map(|r| r.entropy_last).fold(f64::NEG_INFINITY, f64::max);
            writeln!(
                report,
                "| {objective} | {it} | {:.2} | {:.2} ({lo:.2}-{hi:.2}) | {:.2} | {:.3} ({elo:.3}-{ehi:.3}) | {:.3} | {:.2} | {} | {} |",
                mean(&|r| r.acc_first),
                mean(&|r| r.acc_last),
                mean(&|r| r.acc_best),
                mean(&|r| r.entropy_last),
                mean(&|r| r.clip_last),
                mean(&|r| r.kl_max),
                runs.iter().map(|r| r.skipped).sum::<f64>(),
                runs.iter().filter(|r| r.stopped).count(),
            )?;
            eprintln!("{objective} it={it}: acc last 10 = {:.2} (mean of {seeds} seeds)", mean(&|r| r.acc_last));
        }
        let keys = ["reward/mean", "acc", "entropy", "clip_frac/total", "kl/old_k3"];
        let plots = plot_compare(&seed0_runs, &keys, &out.join(format!("plots-it{it}")))?.files;
        writeln!(report, "\nPlots, {it} iteration(s), seed 0: {}", plot_links(&plots, &out))?;
    }
    std::fs::write(out.join("report.md"), &report)?;
    print!("{report}");
    Ok(())
}

/// Reads a run's metrics.jsonl into the summary's numbers.
fn summarise(run: &std::path::Path, stopped: bool) -> RunSummary {
    let lines: Vec<Value> = std::fs::read_to_string(run.join("metrics.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let series = |k: &str| -> Vec<f64> { lines.iter().filter_map(|v| v.get(k).and_then(Value::as_f64)).collect() };
    let mean = |v: &[f64]| if v.is_empty() { f64::NAN } else { v.iter().sum::<f64>() / v.len() as f64 };
    let last = |v: &[f64]| mean(&v[v.len().saturating_sub(10)..]);
    let acc = series("acc");
    RunSummary {
        acc_first: mean(&acc[..acc.len().min(10)]),
        acc_last: last(&acc),
        acc_best: acc.windows(10).map(mean).fold(f64::NAN, f64::max),
        entropy_last: last(&series("entropy")),
        clip_last: last(&series("clip_frac/total")),
        kl_max: series("kl/old_k3").into_iter().fold(f64::NAN, f64::max),
        skipped: series("skipped").iter().sum(),
        stopped,
    }
}

/// Markdown links to the plot files, relative to the report's folder.
fn plot_links(plots: &[PathBuf], out: &std::path::Path) -> String {
    plots
        .iter()
        .map(|p| {
            let rel = p.strip_prefix(out).unwrap_or(p).display().to_string();
            format!("[{}]({rel})", p.file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned()))
        })
        .collect::<Vec<_>>()
        .join(", ")
}
