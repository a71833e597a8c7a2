//! Throughput of `rlverify::equivalent` on typical answer pairs (single thread).
//!
//! Run: `cargo run --release -p rlverify --example equiv_speed`

use num_bigint::BigInt;
use num_rational::BigRational;
use rlverify::ast::{Constant, Expr, Func, Number};
use rlverify::{equivalent, Budget, EquivOptions, Limits};
use std::time::Instant;

fn n(v: i64) -> Expr {
    Expr::Num(Number::int(v))
}
fn dec(num: i64, d: u32) -> Expr {
    let den = num_traits::Pow::pow(BigInt::from(10), d);
    Expr::Num(Number { value: BigRational::new(BigInt::from(num), den), decimals: Some(d) })
}
fn frac(a: Expr, b: Expr) -> Expr {
    Expr::Div(Box::new(a), Box::new(b))
}
fn sqrt(a: Expr) -> Expr {
    Expr::Root { index: Box::new(n(2)), radicand: Box::new(a) }
}
fn pow(a: Expr, b: Expr) -> Expr {
    Expr::Pow(Box::new(a), Box::new(b))
}
fn x() -> Expr {
    Expr::Sym("x".into())
}

fn bench(name: &str, pairs: &[(Expr, Expr)], iters: usize) -> f64 {
    let opts = EquivOptions::default();
    let limits = Limits::default();
    let start = Instant::now();
    let mut equal = 0usize;
    for _ in 0..iters {
        for (g, p) in pairs {
            let mut b = Budget::new(&limits);
            if equivalent(g, p, &opts, &mut b).verdict == rlverify::Verdict::Equal {
                equal += 1;
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let rate = (iters * pairs.len()) as f64 / secs;
    println!("{name:<28} {rate:>12.0} items/s   ({} equal of {})", equal, iters * pairs.len());
    rate
}

fn main() {
    let ints: Vec<(Expr, Expr)> = (0..100).map(|k| (n(k * 7), n(if k % 3 == 0 { k * 7 } else { k * 7 + 1 }))).collect();
    let fracs: Vec<(Expr, Expr)> = (1..100).map(|k| (frac(n(k), n(k + 1)), frac(n(2 * k), n(2 * k + 2)))).collect();
    let decimals: Vec<(Expr, Expr)> = (1..100).map(|k| (frac(n(k), n(4)), dec(k * 25, 2))).collect();
    let radicals: Vec<(Expr, Expr)> =
        (2..50).map(|k| (sqrt(n(k * k * 2)), Expr::Mul(vec![n(k), sqrt(n(2))]))).collect();
    let with_pi: Vec<(Expr, Expr)> = (1..50)
        .map(|k| (frac(Expr::Const(Constant::Pi), n(k)), Expr::Mul(vec![frac(n(1), n(k)), Expr::Const(Constant::Pi)])))
        .collect();
    let poly: Vec<(Expr, Expr)> = (1..30)
        .map(|k| {
            let g = pow(Expr::Add(vec![x(), n(k)]), n(2));
            let p = Expr::Add(vec![pow(x(), n(2)), Expr::Mul(vec![n(2 * k), x()]), n(k * k)]);
            (g, p)
        })
        .collect();
    let trig: Vec<(Expr, Expr)> = (1..10)
        .map(|k| {
            let kx = Expr::Mul(vec![n(k), x()]);
            let g = Expr::Add(vec![
                pow(Expr::Func(Func::Sin, vec![kx.clone()]), n(2)),
                pow(Expr::Func(Func::Cos, vec![kx]), n(2)),
            ]);
            (g, n(1))
        })
        .collect();
    let sets: Vec<(Expr, Expr)> = (1..50)
        .map(|k| (Expr::Set(vec![n(k), n(k + 1), n(k + 2)]), Expr::Set(vec![n(k + 2), n(k), n(k + 1)])))
        .collect();

    println!("equivalent() throughput, one thread, release build");
    let r_int = bench("integer vs integer", &ints, 20_000);
    let r_frac = bench("fraction vs fraction", &fracs, 2_000);
    let r_dec = bench("fraction vs decimal", &decimals, 2_000);
    let r_set = bench("set of 3 integers", &sets, 2_000);
    let r_rad = bench("radicals (256-bit eval)", &radicals, 200);
    let r_pi = bench("pi expressions", &with_pi, 200);
    let r_poly = bench("polynomial, 1 variable", &poly, 100);
    let r_trig = bench("trig identity, 1 variable", &trig, 20);
    // A mix close to benchmark gold answers: mostly integers, some fractions and decimals.
    let mix = [
        (0.80, r_int),
        (0.07, r_frac),
        (0.05, r_dec),
        (0.02, r_set),
        (0.03, r_rad),
        (0.01, r_pi),
        (0.015, r_poly),
        (0.005, r_trig),
    ];
    let secs_per_item: f64 = mix.iter().map(|(w, r)| w / r).sum();
    worst_cases();
    println!(
        "weighted mix (80% int, 12% fraction/decimal, 2% set, 4% radical/pi, 2% symbolic): {:.0} items/s",
        1.0 / secs_per_item
    );
}

/// Time single hostile comparisons (each must stay bounded by the step budget and the caps).
fn worst_cases() {
    let sin = |e: Expr| Expr::Func(Func::Sin, vec![e]);
    let kx = |k: i64| Expr::Mul(vec![n(k), x()]);
    let trig_set: Vec<Expr> = (1..40).map(|k| sin(kx(k))).collect();
    let mut rev = trig_set.clone();
    rev.reverse();
    let zero_identity =
        Expr::Add(vec![pow(sin(x()), n(2)), pow(Expr::Func(Func::Cos, vec![x()]), n(2)), Expr::Neg(Box::new(n(1)))]);
    let long_sum = Expr::Add((1..300).map(|k| sin(kx(k))).collect());
    let long_sum_rev = Expr::Add((1..300).rev().map(|k| sin(kx(k))).collect());
    let cases: Vec<(&str, Expr, Expr)> = vec![
        ("set of 39 sin(kx), reversed", Expr::Set(trig_set.clone()), Expr::Set(rev)),
        ("sin^2+cos^2-1 vs 0 (1024-bit recheck)", zero_identity, n(0)),
        ("sum of 299 sin(kx), reversed", long_sum, long_sum_rev),
        (
            "5000! vs 5000*4999!",
            Expr::Factorial(Box::new(n(5000))),
            Expr::Mul(vec![n(5000), Expr::Factorial(Box::new(n(4999)))]),
        ),
        ("2^(10^10) vs 3", pow(n(2), pow(n(10), n(10))), n(3)),
        (
            "(x+1)^16384 vs (1+x)^16384",
            pow(Expr::Add(vec![x(), n(1)]), n(16384)),
            pow(Expr::Add(vec![n(1), x()]), n(16384)),
        ),
    ];
    for (name, g, p) in cases {
        let mut b = Budget::new(&Limits::default());
        let t = Instant::now();
        let d = equivalent(&g, &p, &EquivOptions::default(), &mut b);
        println!(
            "worst case {name:<40} {:>9.2?}  {:?} ({}), steps used {}",
            t.elapsed(),
            d.verdict,
            d.rule,
            Limits::default().max_steps - b.steps_left()
        );
    }
}
