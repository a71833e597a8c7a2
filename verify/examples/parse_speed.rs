//! Parser throughput on typical answers, on every benchmark gold answer, and on 4 KB adversarial
//! inputs (the worst case must stay bounded). Times are on-CPU time per parse on one thread.
//!
//! `cargo run --release -p rlverify --example parse_speed [-- ../shared/data/benchmarks/*.jsonl]`

use rlverify::{latex, Limits};
use std::hint::black_box;
use std::time::Instant;

/// On-CPU time of this thread in ns (Linux `/proc/thread-self/schedstat`), so that numbers taken
/// on a loaded machine are not inflated by time spent waiting for a core.
fn cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Time `f` over `inputs`, repeated until about `budget_ms` have passed; returns ns per input
/// (on-CPU time where available, wall time otherwise).
fn time_per_input(inputs: &[String], budget_ms: u128, f: impl Fn(&str)) -> (f64, usize) {
    let start = Instant::now();
    let cpu_start = cpu_ns();
    let mut calls = 0usize;
    while start.elapsed().as_millis() < budget_ms {
        for s in inputs {
            f(black_box(s));
        }
        calls += inputs.len();
    }
    let elapsed = match (cpu_start, cpu_ns()) {
        (Some(a), Some(b)) if b > a => (b - a) as f64,
        _ => start.elapsed().as_nanos() as f64,
    };
    (elapsed / calls as f64, calls)
}

fn report(name: &str, inputs: &[String], limits: &Limits) {
    let (ns, calls) = time_per_input(inputs, 1500, |s| {
        let _ = black_box(latex::parse(s, limits));
    });
    println!("{name:<34} {:>9.2} us/parse  {:>12.0} parses/s  ({calls} calls)", ns / 1000.0, 1e9 / ns);
}

fn main() -> anyhow::Result<()> {
    let limits = Limits::default();
    if let Ok(one) = std::env::var("PARSE_SPEED_INPUT") {
        // Profile one input: `PARSE_SPEED_INPUT='x = 5' perf record ...`.
        report(&format!("`{one}`"), std::slice::from_ref(&one), &limits);
        return Ok(());
    }
    let typical: Vec<String> =
        ["42", "\\frac{3}{4}", "2\\sqrt{3}", "-1,234.5", "\\frac{\\pi}{2}", "(1, 2)", "x = 5", "30^\\circ"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    for s in &typical {
        report(&format!("`{s}`"), std::slice::from_ref(s), &limits);
    }
    report("typical mix (8 answers)", &typical, &limits);

    let files: Vec<String> = std::env::args().skip(1).collect();
    if !files.is_empty() {
        let mut answers = Vec::new();
        for path in &files {
            for line in std::fs::read_to_string(path)?.lines() {
                let v: serde_json::Value = serde_json::from_str(line)?;
                if let Some(a) = v.get("answer").and_then(|a| a.as_str()) {
                    answers.push(a.to_string());
                }
            }
        }
        report(&format!("benchmark golds ({} answers)", answers.len()), &answers, &limits);
        let non_integer: Vec<String> =
            answers.iter().filter(|a| !a.bytes().all(|b| b.is_ascii_digit())).cloned().collect();
        report(&format!("non-integer golds ({})", non_integer.len()), &non_integer, &limits);
    }

    // Adversarial inputs of about 4 KB (the default answer cap): all must finish fast.
    let adversarial = rl_tests::adversarial_answers();
    let mut worst = 0.0f64;
    for (name, s) in &adversarial {
        let input = vec![s.clone()];
        let (ns, _) = time_per_input(&input, 200, |s| {
            let _ = black_box(latex::parse(s, &limits));
        });
        worst = worst.max(ns);
        let outcome = match latex::parse(s, &limits) {
            Ok(_) => "ok".to_string(),
            Err(latex::ParseError::Limit(k)) => format!("limit {k}"),
            Err(latex::ParseError::Syntax { .. }) => "syntax error".to_string(),
        };
        println!("adversarial {name:<26} {:>5} B {:>9.1} us  {outcome}", s.len(), ns / 1000.0);
    }
    println!("worst adversarial: {:.1} us", worst / 1000.0);
    Ok(())
}
