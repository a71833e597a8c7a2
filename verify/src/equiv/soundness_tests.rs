//! Sound free-variable equivalence and decimals at their written precision (issue 14, point 1;
//! policies in `verify/EQUIVALENCE.md`, "Decimals" and "Free symbols"). Each row runs through
//! the whole pipeline (`check`) in both directions unless marked one-way.

use super::scalar::sample_point;
use crate::check;

fn run(table: &str, rows: &[(&str, &str, bool)]) {
    let mut failures = Vec::new();
    for &(gold, pred, want) in rows {
        for (g, p) in [(gold, pred), (pred, gold)] {
            if check(g, p) != want {
                failures.push(format!("{g:?} vs {p:?}: want {want}"));
            }
        }
    }
    assert!(failures.is_empty(), "{table}: {} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn steps_and_kinks_against_their_smooth_neighbours() {
    run(
        "steps",
        &[
            (r"0", r"\lfloor x\rfloor", false),
            (r"x", r"\lfloor x\rfloor", false),
            (r"1", r"\lceil x\rceil - \lfloor x \rfloor", false),
            (r"\lfloor x\rfloor", r"\lfloor x+\frac{1}{1000}\rfloor", false),
            (r"\lfloor x^2\rfloor", r"\lfloor x^2+10^{-5}\rfloor", false),
            (r"\lfloor \frac{n^2}{4}\rfloor", r"\lfloor \frac{n^2+1}{4}\rfloor", false),
            (r"0", r"\lfloor \frac{x^2}{10^{6}}\rfloor", false),
            (r"0", r"\lfloor \frac{1}{x^2+1}\rfloor", false),
            (r"t", r"|t|", false),
            (r"1", r"\frac{t}{|t|}", false),
            (r"0", r"t-|t|", false),
            (r"t", r"\max(t,0)", false),
            (r"0", r"\min(t,0)", false),
            (r"x", r"\sqrt{x^2}", false),
            // Identities with steps and kinks stay equal.
            (r"|x|", r"\sqrt{x^2}", true),
            (r"\max(a,b)", r"\frac{a+b+|a-b|}{2}", true),
            (r"\lfloor x \rfloor", r"-\lceil -x\rceil", true),
            (r"|x y|", r"|x| |y|", true),
            // The sign function is evaluated, and is a step.
            (r"|x|", r"x\operatorname{sgn}(x)", true),
            (r"1", r"\operatorname{sgn}(x)", false),
            (r"\operatorname{sgn}(x)", r"\frac{x}{|x|}", true),
            (r"\operatorname{sgn}(x)", r"\operatorname{sgn}(x+10^{-4})", false),
        ],
    );
}

#[test]
fn domains_extra_symbols_and_near_equal_values() {
    run(
        "domains",
        &[
            (r"\sqrt{4x}", r"2\sqrt{x}", true),
            (r"\ln(xy)", r"\ln x + \ln y", true),
            // Points inside the real domain of both sides (not `a, b < 0`, where the product of
            // two imaginary roots is real).
            (r"\sqrt{ab}", r"\sqrt{a}\sqrt{b}", true),
            (r"\sqrt{\frac{2gh}{m}}", r"\frac{\sqrt{2gh}}{\sqrt{m}}", true),
            (r"\ln(x^2)", r"2\ln x", true),
            (r"2", r"2+\lfloor y\rfloor", false),
            (r"3", r"3+\frac{y}{10^{9}}", false),
            (r"x", r"x+y-y", true),
            (r"x^2", r"x^2+10^{-40}x", false),
            (r"\pi", r"\pi+10^{-35}", false),
            (r"\frac{\sqrt{2}}{2}", r"\frac{1}{\sqrt{2}}", true),
            (r"e^{x+y}", r"e^x e^y", true),
        ],
    );
}

#[test]
fn a_prediction_may_not_narrow_the_real_domain_of_the_gold() {
    // One-way: a prediction undefined (in the reals) where a gold without roots or logarithms is
    // defined is wrong; the mirror compares on the gold's own (narrower) domain, where they agree.
    for (gold, pred) in [
        (r"|x|", r"x+\sqrt{x}-\sqrt{x}"),
        (r"x", r"\frac{|x|\sqrt{x}}{\sqrt{x}}"),
        (r"x", r"\sqrt{x}\sqrt{x}"),
        (r"|x|", r"x+\ln x-\ln x"),
    ] {
        assert!(!check(gold, pred), "{gold} vs {pred}");
        assert!(check(pred, gold), "(mirror) {pred} vs {gold}");
    }
}

#[test]
fn decimals_at_their_written_precision() {
    run(
        "decimals",
        &[
            (r"1000000", r"1000000.5", false),
            (r"3", r"3.000002", false),
            (r"2", r"2.0000001", false),
            (r"3x", r"3.000002x", false),
            (r"12", r"12.0", true),
            (r"\frac{x}{2}", r"0.5x", true),
            (r"1.5", r"1.50", true),
        ],
    );
    // One-way rules: the rounded gold and the rounded prediction.
    assert!(check(r"0.33", r"\frac{1}{3}"));
    assert!(!check(r"\frac{1}{3}", r"0.333"));
    assert!(check(r"\frac{1}{3}", r"0.333333"));
    assert!(!check(r"0.7", r"0.74"));
    assert!(check(r"3.142", r"3.1416"));
    assert!(check(r"1.414213562", r"1.41421356"));
    assert!(!check(r"0.33333", r"0.3333"));
    assert!(check(r"\pi", r"3.14159265"));
    assert!(!check(r"\pi", r"3.14159266"));
}

#[test]
fn sample_points_cover_signs_magnitudes_and_never_integers() {
    let (mut neg, mut small, mut large, mut huge) = (0, 0, 0, 0);
    for k in 1..400 {
        let v = sample_point("x", k, true);
        let f = num_traits::ToPrimitive::to_f64(&v).unwrap();
        if k % 4 == 1 {
            assert!(v.is_integer() && f.abs() <= 8.0, "point {k} = {v}");
            continue;
        }
        assert!(!v.is_integer() || f.abs() >= 1000.0, "point {k} = {v} is a small integer");
        neg += usize::from(f < 0.0);
        small += usize::from(f.abs() < 1.0);
        large += usize::from(f.abs() > 8.0);
        huge += usize::from(f.abs() > 1e3);
    }
    assert!(neg > 100 && small > 40 && large > 40 && huge > 20, "{neg} {small} {large} {huge}");
}
