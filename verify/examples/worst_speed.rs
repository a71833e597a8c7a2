//! Time of `rlverify::score` on inputs built to be expensive (many transcendental terms, large
//! sets of near-equal elements, big exact numbers), with the verdict and the steps of the budget
//! each comparison used. The step charges are calibrated so that a comparison stopped by the
//! budget (`limit`) stops within about 10 ms on a 2-core development machine.
//!
//! Run: `cargo run --release -p rlverify --example worst_speed`

use rlverify::{equivalent, parse, score, Budget, Config};
use std::time::{Duration, Instant};

fn join(n: usize, f: impl Fn(usize) -> String, sep: &str) -> String {
    (1..=n).map(f).collect::<Vec<_>>().join(sep)
}

fn cases() -> Vec<(String, String, String)> {
    let sin_set = |n: usize, rev: bool| {
        let mut v: Vec<String> = (1..=n).map(|k| format!("\\sin({k}x)")).collect();
        if rev {
            v.reverse();
        }
        format!("\\{{{}\\}}", v.join(", "))
    };
    vec![
        ("39 sin(kx) set, reversed".into(), sin_set(39, false), sin_set(39, true)),
        ("39 sin(kx) set vs cos".into(), sin_set(39, false), sin_set(39, true).replace("sin", "cos")),
        ("80 sin(kx) set, reversed".into(), sin_set(80, false), sin_set(80, true)),
        (
            "sum of 60 sin(kx), reordered".into(),
            join(60, |k| format!("\\sin({k}x)"), "+"),
            join(60, |k| format!("\\sin({}x)", 61 - k), "+"),
        ),
        (
            "sum of 60 e^{kx}, reordered".into(),
            join(60, |k| format!("e^{{{k}x}}"), "+"),
            join(60, |k| format!("e^{{{}x}}", 61 - k), "+"),
        ),
        (
            "sum of 40 x^{k/7}, reordered".into(),
            join(40, |k| format!("x^{{{k}/7}}"), "+"),
            join(40, |k| format!("x^{{{}/7}}", 41 - k), "+"),
        ),
        (
            "sum of 40 atan(kx) + ln(kx)".into(),
            join(40, |k| format!("\\arctan({k}x)+\\ln({k}x)"), "+"),
            join(40, |k| format!("\\ln({k}x)+\\arctan({k}x)"), "+"),
        ),
        (
            "nested sin x40".into(),
            format!("{}x{}", "\\sin(".repeat(40), ")".repeat(40)),
            format!("{}x{}", "\\sin(".repeat(40), ")".repeat(40)) + "+0",
        ),
        (
            "tuple of 60 e^{x/k} vs close".into(),
            format!("({})", join(60, |k| format!("e^{{x/{k}}}"), ", ")),
            format!("({})", join(60, |k| format!("\\exp(x/{k})"), ", ")),
        ),
        (
            "set of 30 sqrt(k)+pi".into(),
            format!("\\{{{}\\}}", join(30, |k| format!("\\sqrt{{{k}}}+\\pi"), ", ")),
            format!("\\{{{}\\}}", join(30, |k| format!("\\pi+\\sqrt{{{}}}", 31 - k), ", ")),
        ),
        ("2000! vs 2000!+1".into(), "2000!".into(), "2000!+1".into()),
        ("x^{1000} expansion".into(), "(x+1)^{60}".into(), "(1+x)^{60}".into()),
    ]
}

fn main() {
    let cfg = Config::default();
    let mut worst = Duration::ZERO;
    for (name, gold, pred) in cases() {
        let mut best = Duration::MAX;
        let mut s = None;
        for _ in 0..3 {
            let t = Instant::now();
            s = Some(score(&format!("The answer is \\boxed{{{pred}}}."), &gold, &cfg));
            best = best.min(t.elapsed());
        }
        worst = worst.max(best);
        let steps = match (parse(&gold, &cfg.limits), parse(&pred, &cfg.limits)) {
            (Ok(g), Ok(p)) => {
                let mut b = Budget::new(&cfg.limits);
                let _ = equivalent(&g, &p, &cfg.equiv, &mut b);
                cfg.limits.max_steps - b.steps_left()
            }
            _ => 0,
        };
        let status = s.map(|s| format!("{} ({})", s.status.as_str(), s.rule)).unwrap_or_default();
        println!("{:>10.2} ms  {:>8} steps  {:<24}  {}", best.as_secs_f64() * 1e3, steps, status, name);
    }
    println!("worst: {:.2} ms", worst.as_secs_f64() * 1e3);
}
