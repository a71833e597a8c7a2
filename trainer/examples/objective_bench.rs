//! Benchmark: one loss + backward for a batch of 256 responses × 4096 tokens on CPU (f32).
//!
//! ```text
//! cargo run --release -p rltrain --example objective_bench [-- NAME...] [--iters N] [--b B] [--t T]
//! ```
//! With no names it runs grpo, cpgd, cfpo, dgpo and gspo. Peak memory is the process's peak RSS
//! (`VmHWM`), so run one objective per process for a per-objective figure.

use std::time::Instant;

use candle_core::{DType, Device, Tensor, Var};
use rltrain::objectives::{LossInputs, Objective};

struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 40) as f32) / ((1u64 << 24) as f32)
    }
}

/// User + system CPU seconds of this process (robust to other load on a shared machine).
fn cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = s.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn peak_rss_mb() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn main() -> rltrain::Result<()> {
    let mut names = Vec::new();
    let (mut iters, mut b, mut t) = (5usize, 256usize, 4096usize);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut num = |what: &str| -> rltrain::Result<usize> {
            args.next()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| rltrain::Error::invalid_input(format!("{what} needs a number")))
        };
        match a.as_str() {
            "--iters" => iters = num("--iters")?,
            "--b" => b = num("--b")?,
            "--t" => t = num("--t")?,
            _ => names.push(a),
        }
    }
    if names.is_empty() {
        names = ["grpo", "cpgd", "cfpo", "dgpo", "gspo"].map(String::from).to_vec();
    }
    let dev = Device::Cpu;
    let n = b * t;
    let mut g = Lcg(42);
    let old: Vec<f32> = (0..n).map(|_| -3.0 * g.next() - 0.05).collect();
    let new: Vec<f32> = old.iter().map(|o| o + 0.6 * (g.next() - 0.5)).collect();
    let reference: Vec<f32> = old.iter().map(|o| o + 0.2 * (g.next() - 0.5)).collect();
    let mut adv = Vec::with_capacity(n);
    let mut mask = Vec::with_capacity(n);
    for i in 0..b {
        let a = 2.0 * g.next() - 1.0;
        let len = t / 2 + (i * 97) % (t / 2);
        for j in 0..t {
            adv.push(if j < len { a } else { 0.0 });
            mask.push(if j < len { 1.0f32 } else { 0.0 });
        }
    }
    let groups: Vec<usize> = (0..b).map(|i| i / 8).collect();
    let mk = |v: &Vec<f32>| Tensor::from_slice(v, (b, t), &dev);
    let var = Var::from_tensor(&mk(&new)?)?;
    let inp = LossInputs::new(var.as_tensor().clone(), mk(&old)?, mk(&adv)?, mk(&mask)?)?.with_ref(mk(&reference)?)?;
    println!("batch {b} x {t} f32, {} threads, {iters} timed iterations after 1 warm-up", rayon_threads());
    println!("| objective | wall ms per loss+backward | CPU ms per call | peak RSS MB (process) |");
    println!("|---|---|---|---|");
    for name in &names {
        let cfg = Objective::from_name(name)?.defaults();
        let run = || -> rltrain::Result<()> {
            let out = cfg.loss(&inp, Some(&groups))?;
            let grads = out.total.backward()?;
            let g = grads.get(&var).ok_or_else(|| rltrain::Error::invalid_input("no gradient"))?;
            std::hint::black_box(g.to_dtype(DType::F32)?);
            Ok(())
        };
        run()?;
        let cpu0 = cpu_seconds();
        let start = Instant::now();
        for _ in 0..iters {
            run()?;
        }
        let ms = start.elapsed().as_secs_f64() * 1000.0 / iters as f64;
        let cpu = match (cpu0, cpu_seconds()) {
            (Some(a), Some(b)) => format!("{:.0}", (b - a) * 1000.0 / iters as f64),
            _ => "?".to_string(),
        };
        let rss = peak_rss_mb().map_or("?".to_string(), |m| format!("{m:.0}"));
        println!("| {name} | {ms:.1} | {cpu} | {rss} |");
    }
    Ok(())
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
