//! Load generator for reward servers speaking OpenRLHF's remote reward protocol (`POST
//! /get_reward` with `{"query", "prompts", "labels"}`, answered with `{"rewards": [...]}`).
//!
//! ```text
//! cargo run --release -p rlverify --example serve_load -- \
//!     --url http://127.0.0.1:5000/get_reward --file rows.jsonl --clients 16 --batch 8 --passes 2
//! ```
//!
//! Rows are any JSONL with `response` and `gold` (and optionally `problem_id`, used to make a
//! prompt). They are cut into requests of `--batch` items; `--clients` threads, each with its own
//! keep-alive connection, take requests from a shared queue until `--passes` passes over the rows
//! are sent. Prints one Markdown table row: clients, batch, requests, items/s, p50 and p99 request
//! latency, and the rewards' sum (the same rows must give the same sum on every run).

use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

struct Opts {
    url: String,
    file: String,
    clients: usize,
    batch: usize,
    passes: usize,
    label: String,
}

fn opts() -> Result<Opts, String> {
    let mut o =
        Opts { url: String::new(), file: String::new(), clients: 1, batch: 8, passes: 1, label: "server".to_string() };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        let number = |v: String| v.parse::<usize>().map_err(|e| format!("{flag}: `{v}`: {e}")).map(|n| n.max(1));
        match flag.as_str() {
            "--url" => o.url = value()?,
            "--file" => o.file = value()?,
            "--clients" => o.clients = number(value()?)?,
            "--batch" => o.batch = number(value()?)?,
            "--passes" => o.passes = number(value()?)?,
            "--label" => o.label = value()?,
            other => {
                return Err(format!("unknown flag `{other}` (--url, --file, --clients, --batch, --passes, --label)"))
            }
        }
    }
    if o.url.is_empty() || o.file.is_empty() {
        return Err("--url and --file are required".to_string());
    }
    Ok(o)
}

/// The request bodies: OpenRLHF's shape, the query being the prompt followed by the response.
fn requests(o: &Opts) -> Result<Vec<(String, usize)>, String> {
    let text = std::fs::read_to_string(&o.file).map_err(|e| format!("{}: {e}", o.file))?;
    let mut items = Vec::new();
    for (k, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let row: Value = serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", o.file, k + 1))?;
        let (Some(response), Some(gold)) = (row["response"].as_str(), row.get("gold")) else {
            return Err(format!("{}:{}: needs `response` and `gold`", o.file, k + 1));
        };
        let gold = match gold {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let prompt = format!("Solve problem {}. Put the final answer in \\boxed{{}}.\n", row["problem_id"]);
        items.push((prompt, response.to_string(), gold));
    }
    Ok(items
        .chunks(o.batch)
        .map(|chunk| {
            let query: Vec<String> = chunk.iter().map(|(p, r, _)| format!("{p}{r}")).collect();
            let prompts: Vec<&str> = chunk.iter().map(|(p, _, _)| p.as_str()).collect();
            let labels: Vec<&str> = chunk.iter().map(|(_, _, g)| g.as_str()).collect();
            (json!({ "query": query, "prompts": prompts, "labels": labels }).to_string(), chunk.len())
        })
        .collect())
}

fn main() {
    let o = match opts() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("serve_load: {e}");
            std::process::exit(2);
        }
    };
    let bodies = match requests(&o) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("serve_load: {e}");
            std::process::exit(2);
        }
    };
    let total = bodies.len() * o.passes;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(f64, f64, usize)>> = Mutex::new(Vec::with_capacity(total));
    let failures = AtomicUsize::new(0);
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..o.clients {
            s.spawn(|| {
                let agent: ureq::Agent = ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .timeout_global(Some(Duration::from_secs(600)))
                    .build()
                    .into();
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    if k >= total {
                        break;
                    }
                    let (body, n) = &bodies[k % bodies.len()];
                    let t = Instant::now();
                    let reply = agent
                        .post(&o.url)
                        .header("Content-Type", "application/json")
                        .send(body.as_str())
                        .and_then(|mut r| Ok((r.status().as_u16(), r.body_mut().read_to_string()?)));
                    let secs = t.elapsed().as_secs_f64();
                    let rewards = match &reply {
                        Ok((200, text)) => serde_json::from_str::<Value>(text).ok().and_then(|v| {
                            v["rewards"].as_array().map(|a| a.iter().filter_map(Value::as_f64).collect::<Vec<_>>())
                        }),
                        _ => None,
                    };
                    match rewards {
                        Some(r) if r.len() == *n => {
                            results.lock().expect("results").push((secs, r.iter().sum(), *n));
                        }
                        _ => {
                            if failures.fetch_add(1, Ordering::Relaxed) < 5 {
                                eprintln!("serve_load: request {k} failed: {reply:?}");
                            }
                        }
                    }
                }
            });
        }
    });
    let wall = start.elapsed().as_secs_f64();
    let results = results.into_inner().expect("results");
    let items: usize = results.iter().map(|r| r.2).sum();
    let reward_sum: f64 = results.iter().map(|r| r.1).sum();
    let mut latency: Vec<f64> = results.iter().map(|r| r.0).collect();
    latency.sort_by(f64::total_cmp);
    let pct = |q: f64| {
        if latency.is_empty() {
            f64::NAN
        } else {
            latency[((q * latency.len() as f64).ceil() as usize).clamp(1, latency.len()) - 1] * 1e3
        }
    };
    println!(
        "| {} | {} | {} | {} | {:.0} | {:.1} | {:.1} | {} | {} |",
        o.label,
        o.clients,
        o.batch,
        results.len(),
        items as f64 / wall,
        pct(0.5),
        pct(0.99),
        reward_sum,
        failures.load(Ordering::Relaxed)
    );
}
