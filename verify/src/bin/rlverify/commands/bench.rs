//! `rlverify bench FILE`: throughput on one thread and on all threads, and per-item latency.
//!
//! Each item is one `rlverify::score(response, gold, &cfg)` call, gold extraction and parsing
//! included (what a trainer pays per rollout), timed with `Instant`.

use super::{open_input, thread_pool, LineChunks};
use crate::args::BenchArgs;
use anyhow::{bail, Context};
use rayon::prelude::*;
use rlcli::Exit;
use rlverify::input::parse_line;
use rlverify::{score, Config, Status};
use std::io::{self, Write};
use std::time::{Duration, Instant};

/// One measured configuration.
struct Run {
    threads: usize,
    /// Items per second of the median pass.
    items_per_sec: f64,
    /// Latencies of every call of every pass, sorted.
    latencies: Vec<Duration>,
}

pub fn run(args: BenchArgs) -> anyhow::Result<Exit> {
    if args.repeat == 0 {
        bail!("`--repeat` must be at least 1");
    }
    let cfg = args.scoring.config();
    let fields = args.fields.spec();
    let input = open_input(&args.input)?;
    let mut lines = LineChunks::new(input.reader);
    let mut items: Vec<(String, String)> = Vec::new();
    let mut skipped = 0u64;
    loop {
        let chunk = lines.next_chunk(4096, 64 << 20).with_context(|| format!("failed to read `{}`", input.name))?;
        if chunk.is_empty() {
            break;
        }
        for line in chunk {
            match parse_line(&line.bytes, &fields) {
                Ok(rec) => items.extend(rec.responses.as_slice().iter().map(|r| (rec.gold.clone(), r.clone()))),
                Err(e) => {
                    skipped += 1;
                    if skipped <= 5 {
                        rlcli::print_line_error(&input.name, line.number, &e.to_string());
                    }
                }
            }
        }
    }
    if items.is_empty() {
        bail!("`{}` holds no scorable responses", input.name);
    }
    let all = thread_pool(args.threads)?;
    let mut configs = vec![thread_pool(rlcli::ThreadsArg::new(1))?];
    if all.current_num_threads() > 1 {
        configs.push(all);
    }
    let statuses = status_counts(&items, &cfg);
    let runs: Vec<Run> = configs.iter().map(|pool| measure(pool, &items, &cfg, args.repeat)).collect();

    let mut out = io::stdout().lock();
    let build = if cfg!(debug_assertions) { "debug build: numbers are not representative" } else { "release build" };
    writeln!(
        out,
        "rlverify {} bench on `{}`: {} responses ({} malformed lines skipped), {} passes per row, {build}\n",
        rlverify::VERSION,
        input.name,
        items.len(),
        skipped,
        args.repeat
    )?;
    writeln!(out, "| threads | items/s | median latency | p99 latency | max latency |")?;
    writeln!(out, "|---:|---:|---:|---:|---:|")?;
    for run in &runs {
        writeln!(
            out,
            "| {} | {:.0} | {} | {} | {} |",
            run.threads,
            run.items_per_sec,
            human(quantile(&run.latencies, 0.5)),
            human(quantile(&run.latencies, 0.99)),
            human(run.latencies.last().copied().unwrap_or_default()),
        )?;
    }
    writeln!(out, "\nverdicts: {statuses}")?;
    if args.slowest > 0 {
        writeln!(out, "\n| latency | status | gold | extracted |")?;
        writeln!(out, "|---:|---|---|---|")?;
        for (elapsed, k) in slowest(&items, &cfg, args.slowest) {
            let (gold, response) = &items[k];
            let s = score(response, gold, &cfg);
            let cell = |t: &str| t.chars().take(60).collect::<String>().replace(['|', '\n'], " ");
            writeln!(
                out,
                "| {} | {} | {} | {} |",
                human(elapsed),
                s.status.as_str(),
                cell(gold),
                cell(s.extracted.as_deref().unwrap_or("")),
            )?;
        }
    }
    Ok(Exit::Success)
}

/// The `n` slowest items of one single-threaded pass, slowest first, as (latency, index).
fn slowest(items: &[(String, String)], cfg: &Config, n: usize) -> Vec<(Duration, usize)> {
    let mut times: Vec<(Duration, usize)> = items
        .iter()
        .enumerate()
        .map(|(k, (gold, response))| {
            let t = Instant::now();
            std::hint::black_box(score(response, gold, cfg));
            (t.elapsed(), k)
        })
        .collect();
    times.sort_unstable_by_key(|t| std::cmp::Reverse(t.0));
    times.truncate(n);
    times
}

/// Score every item `repeat` times on `pool`, timing each call and each pass.
fn measure(pool: &rayon::ThreadPool, items: &[(String, String)], cfg: &Config, repeat: usize) -> Run {
    let mut pass_rates = Vec::with_capacity(repeat);
    let mut latencies = Vec::with_capacity(items.len() * repeat);
    for _ in 0..repeat {
        let start = Instant::now();
        let times: Vec<Duration> = pool.install(|| {
            items
                .par_iter()
                .map(|(gold, response)| {
                    let t = Instant::now();
                    let s = score(response, gold, cfg);
                    let elapsed = t.elapsed();
                    std::hint::black_box(s);
                    elapsed
                })
                .collect()
        });
        let wall = start.elapsed().as_secs_f64();
        pass_rates.push(if wall > 0.0 { items.len() as f64 / wall } else { f64::INFINITY });
        latencies.extend(times);
    }
    pass_rates.sort_by(f64::total_cmp);
    latencies.sort_unstable();
    Run { threads: pool.current_num_threads(), items_per_sec: pass_rates[pass_rates.len() / 2], latencies }
}

/// Counts of each status, as one line (so a speed change that comes with a verdict change shows).
fn status_counts(items: &[(String, String)], cfg: &Config) -> String {
    let statuses = Status::ALL;
    let mut counts = [0usize; 5];
    for (gold, response) in items {
        let s = score(response, gold, cfg).status;
        if let Some(k) = statuses.iter().position(|st| *st == s) {
            counts[k] += 1;
        }
    }
    statuses.iter().zip(counts).map(|(s, n)| format!("{} {n}", s.as_str())).collect::<Vec<_>>().join(", ")
}

/// The `q` quantile of sorted durations (nearest rank).
fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// A duration in the unit that keeps 3 significant digits readable.
fn human(d: Duration) -> String {
    let ns = d.as_nanos() as f64;
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.1} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles() {
        let d: Vec<Duration> = (1..=100).map(Duration::from_micros).collect();
        assert_eq!(quantile(&d, 0.5), Duration::from_micros(50));
        assert_eq!(quantile(&d, 0.99), Duration::from_micros(99));
        assert_eq!(quantile(&d, 1.0), Duration::from_micros(100));
        assert_eq!(quantile(&d[..1], 0.99), Duration::from_micros(1));
        assert_eq!(quantile(&[], 0.5), Duration::ZERO);
    }

    #[test]
    fn human_units() {
        assert_eq!(human(Duration::from_nanos(950)), "950 ns");
        assert_eq!(human(Duration::from_nanos(41_200)), "41.2 µs");
        assert_eq!(human(Duration::from_micros(1_500)), "1.50 ms");
        assert_eq!(human(Duration::from_millis(2_500)), "2.50 s");
    }
}
