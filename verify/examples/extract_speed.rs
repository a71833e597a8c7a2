//! Extraction throughput over real responses.
//!
//! ```text
//! cargo run --release -p rlverify --example extract_speed [-- PATH.jsonl [ROUNDS]]
//! ```
//!
//! Reads the `response` field of every line (default: `../shared/corpora/real_generations_dev.jsonl`
//! from the repository root), runs [`rlverify::extract`] on all of them `ROUNDS` times (default
//! 50) on one thread, and prints items/s, MB/s and how many responses gave an answer, per source.

use std::collections::BTreeMap;
use std::time::Instant;

use rlverify::{extract, ExtractOptions};

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpora/real_generations_dev.jsonl").to_string()
    });
    let rounds: usize = match args.next() {
        Some(r) => r.parse()?,
        None => 50,
    };
    let data = std::fs::read_to_string(&path).map_err(|e| anyhow::anyhow!("{path}: {e}"))?;
    let responses: Vec<String> = data
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["response"].as_str().map(str::to_string))
        .collect();
    anyhow::ensure!(!responses.is_empty(), "{path}: no `response` fields");
    let bytes: usize = responses.iter().map(String::len).sum();

    let configs = [
        ("default", ExtractOptions::default()),
        ("last_number", ExtractOptions { last_number_fallback: true, ..ExtractOptions::default() }),
    ];
    for (name, opts) in &configs {
        // Warm-up and per-source counts.
        let mut by_source: BTreeMap<&str, usize> = BTreeMap::new();
        for r in &responses {
            let key = extract(r, opts).map_or("none", |a| a.source.as_str());
            *by_source.entry(key).or_default() += 1;
        }
        let start = Instant::now();
        let mut found = 0usize;
        for _ in 0..rounds {
            for r in &responses {
                found += usize::from(std::hint::black_box(extract(std::hint::black_box(r), opts)).is_some());
            }
        }
        let secs = start.elapsed().as_secs_f64();
        let items = (responses.len() * rounds) as f64;
        println!(
            "{name:>12}: {} responses ({:.1} KB avg) x {rounds} rounds in {secs:.3} s: {:.0} items/s, {:.0} MB/s, {:.1}% with an answer",
            responses.len(),
            bytes as f64 / responses.len() as f64 / 1e3,
            items / secs,
            (bytes * rounds) as f64 / secs / 1e6,
            100.0 * found as f64 / items,
        );
        println!("{:>12}  sources: {by_source:?}", "");
    }
    Ok(())
}
