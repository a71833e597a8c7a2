//! Per-item cost of `rlverify::score` on a JSONL corpus, with little noise: every item is timed
//! `R` times and its fastest run is kept, so a loaded machine disturbs the numbers much less than
//! the wall-clock `rlverify bench`. Prints the total, the share of gold preparation (extraction
//! and parsing of the gold), of the response's extraction and parsing, and of the comparison,
//! and the slowest items.
//!
//! Run: `cargo run --release -p rlverify --example score_speed -- FILE [R] [N]`
//! (R runs per item, default 5; N slowest items listed, default 30). With a fourth argument
//! `DUMP`, the status and rule of every item are written there, one line each (to check that a
//! speed change left every verdict as it was).

use rlverify::input::{parse_line, FieldSpec};
use rlverify::{equivalent, extract, parse, score, Budget, Config, ExtractOptions, Gold};
use std::time::{Duration, Instant};

fn fastest<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    let mut best = Duration::MAX;
    for _ in 0..runs {
        let t = Instant::now();
        std::hint::black_box(f());
        best = best.min(t.elapsed());
    }
    best
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).ok_or("usage: score_speed FILE [RUNS] [SLOWEST]")?;
    let runs: usize = args.get(2).map_or(Ok(5), |s| s.parse())?;
    let show: usize = args.get(3).map_or(Ok(30), |s| s.parse())?;
    let text = std::fs::read_to_string(path)?;
    let mut items = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if let Ok(rec) = parse_line(line.as_bytes(), &FieldSpec::default()) {
            for r in rec.responses.as_slice() {
                items.push((rec.gold.clone(), r.clone()));
            }
        }
    }
    let cfg = Config::default();
    if let Some(dump) = args.get(4) {
        let mut out = String::new();
        for (gold, resp) in &items {
            let s = score(resp, gold, &cfg);
            out.push_str(&format!("{} {}\n", s.status.as_str(), s.rule));
        }
        std::fs::write(dump, out)?;
    }
    let mut rows = Vec::with_capacity(items.len());
    // Most budget steps one comparison used, and which item.
    let mut max_steps = (0u64, 0usize);
    let (mut total, mut gold_t, mut resp_t, mut eq_t) =
        (Duration::ZERO, Duration::ZERO, Duration::ZERO, Duration::ZERO);
    for (k, (gold, resp)) in items.iter().enumerate() {
        let t = fastest(runs, || score(resp, gold, &cfg));
        let g = fastest(runs, || Gold::new(gold, &cfg));
        let prepared = Gold::new(gold, &cfg);
        let answer = extract(resp, &ExtractOptions::default());
        let r = fastest(runs, || extract(resp, &ExtractOptions::default()).map(|a| parse(&a.text, &cfg.limits)));
        let e = match (&prepared.parsed, answer.map(|a| parse(&a.text, &cfg.limits))) {
            (Ok(ge), Some(Ok(pe))) => {
                let mut b = Budget::new(&cfg.limits);
                equivalent(ge, &pe, &cfg.equiv, &mut b);
                let used = cfg.limits.max_steps - b.steps_left();
                if used > max_steps.0 {
                    max_steps = (used, k);
                }
                fastest(runs, || {
                    let mut b = Budget::new(&cfg.limits);
                    equivalent(ge, &pe, &cfg.equiv, &mut b)
                })
            }
            _ => Duration::ZERO,
        };
        total += t;
        gold_t += g;
        resp_t += r;
        eq_t += e;
        rows.push((t, e, k));
    }
    let n = items.len() as f64;
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "{} items, fastest of {runs} runs each: total {:.1} ms = {:.0} items per CPU-second; mean {:.2} us",
        items.len(),
        total.as_secs_f64() * 1e3,
        n / total.as_secs_f64(),
        us(total) / n
    );
    println!(
        "  gold prep {:.1} ms, response extract+parse {:.1} ms, equivalent {:.1} ms",
        gold_t.as_secs_f64() * 1e3,
        resp_t.as_secs_f64() * 1e3,
        eq_t.as_secs_f64() * 1e3
    );
    println!(
        "  most steps used by one comparison: {} of {} (gold `{}`)",
        max_steps.0,
        cfg.limits.max_steps,
        items[max_steps.1].0.chars().take(60).collect::<String>()
    );
    let mut lat: Vec<Duration> = rows.iter().map(|r| r.0).collect();
    lat.sort_unstable();
    let q = |p: f64| lat[((p * n).ceil() as usize).clamp(1, lat.len()) - 1];
    println!("  median {:.1} us, p99 {:.1} us, max {:.1} us", us(q(0.5)), us(q(0.99)), us(q(1.0)));
    rows.sort_unstable_by_key(|r| std::cmp::Reverse(r.0));
    for (t, e, k) in rows.iter().take(show) {
        let (gold, resp) = &items[*k];
        let ext = extract(resp, &ExtractOptions::default()).map(|a| a.text).unwrap_or_default();
        let cell = |s: &str| s.chars().take(60).collect::<String>().replace('\n', " ");
        println!("{:>9.1} us (equiv {:>9.1})  {}  ||  {}", us(*t), us(*e), cell(gold), cell(&ext));
    }
    Ok(())
}
