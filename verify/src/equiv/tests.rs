//! Tables of (gold, pred, expected verdict) built with a compact tree builder.

use super::{equivalent, EquivOptions, Verdict};
use crate::ast::{Constant, Expr, Func, Number, RelOp};
use crate::limits::{Budget, LimitKind, Limits};
use num_bigint::BigInt;
use num_rational::BigRational;

// ---- builder -------------------------------------------------------------------------------

fn n(v: i64) -> Expr {
    Expr::Num(Number::int(v))
}
fn dec(s: &str) -> Expr {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let digits: BigInt = format!("{int}{frac}").parse().unwrap_or_default();
    let scale = num_traits::Pow::pow(BigInt::from(10), frac.len() as u32);
    let mut value = BigRational::new(digits, scale);
    if neg {
        value = -value;
    }
    Expr::Num(Number { value, decimals: Some(frac.len() as u32) })
}
/// `mantissa e exp` as the parser writes it: exact value, decimals of the mantissa.
fn sci(mantissa: &str, exp: i32) -> Expr {
    let Expr::Num(m) = dec(mantissa) else { return n(0) };
    let scale = BigRational::from_integer(num_traits::Pow::pow(BigInt::from(10), exp.unsigned_abs()));
    let value = if exp >= 0 { m.value * scale } else { m.value / scale };
    Expr::Num(Number { value, decimals: m.decimals })
}
fn q(a: i64, b: i64) -> Expr {
    frac(n(a), n(b))
}
fn sym(s: &str) -> Expr {
    Expr::Sym(s.to_string())
}
fn x() -> Expr {
    sym("x")
}
fn y() -> Expr {
    sym("y")
}
fn pi() -> Expr {
    Expr::Const(Constant::Pi)
}
fn e() -> Expr {
    Expr::Const(Constant::E)
}
fn i() -> Expr {
    Expr::Const(Constant::I)
}
fn inf() -> Expr {
    Expr::Const(Constant::Infinity)
}
fn neg(a: Expr) -> Expr {
    Expr::Neg(Box::new(a))
}
fn add(v: Vec<Expr>) -> Expr {
    Expr::Add(v)
}
fn sub(a: Expr, b: Expr) -> Expr {
    Expr::Add(vec![a, neg(b)])
}
fn mul(v: Vec<Expr>) -> Expr {
    Expr::Mul(v)
}
fn frac(a: Expr, b: Expr) -> Expr {
    Expr::Div(Box::new(a), Box::new(b))
}
fn pow(a: Expr, b: Expr) -> Expr {
    Expr::Pow(Box::new(a), Box::new(b))
}
fn root(k: i64, a: Expr) -> Expr {
    Expr::Root { index: Box::new(n(k)), radicand: Box::new(a) }
}
fn sqrt(a: Expr) -> Expr {
    root(2, a)
}
fn f1(f: Func, a: Expr) -> Expr {
    Expr::Func(f, vec![a])
}
fn fnn(f: Func, v: Vec<Expr>) -> Expr {
    Expr::Func(f, v)
}
fn sin(a: Expr) -> Expr {
    f1(Func::Sin, a)
}
fn cos(a: Expr) -> Expr {
    f1(Func::Cos, a)
}
fn ln(a: Expr) -> Expr {
    f1(Func::Ln, a)
}
fn user(name: &str, a: Expr) -> Expr {
    f1(Func::Other(name.to_string()), a)
}
fn log(b: Expr, a: Expr) -> Expr {
    Expr::Log { base: Box::new(b), arg: Box::new(a) }
}
fn fact(a: Expr) -> Expr {
    Expr::Factorial(Box::new(a))
}
fn binom(a: Expr, b: Expr) -> Expr {
    Expr::Binom(Box::new(a), Box::new(b))
}
fn pct(a: Expr) -> Expr {
    Expr::Percent(Box::new(a))
}
fn deg(a: Expr) -> Expr {
    Expr::Degrees(Box::new(a))
}
fn pm(a: Option<Expr>, b: Expr) -> Expr {
    Expr::PlusMinus(a.map(Box::new), Box::new(b))
}
fn list(v: Vec<Expr>) -> Expr {
    Expr::List(v)
}
fn tuple(v: Vec<Expr>) -> Expr {
    Expr::Tuple(v)
}
fn set(v: Vec<Expr>) -> Expr {
    Expr::Set(v)
}
fn iv(lo: Expr, hi: Expr, lc: bool, hc: bool) -> Expr {
    Expr::Interval { lo: Box::new(lo), hi: Box::new(hi), lo_closed: lc, hi_closed: hc }
}
fn union(v: Vec<Expr>) -> Expr {
    Expr::Union(v)
}
fn matrix(rows: Vec<Vec<Expr>>) -> Expr {
    Expr::Matrix(rows)
}
fn rel(a: Expr, op: RelOp, b: Expr) -> Expr {
    Expr::Relation { terms: vec![a, b], ops: vec![op] }
}
fn eq(a: Expr, b: Expr) -> Expr {
    rel(a, RelOp::Eq, b)
}
fn chain(terms: Vec<Expr>, ops: Vec<RelOp>) -> Expr {
    Expr::Relation { terms, ops }
}
fn text(s: &str) -> Expr {
    Expr::Text(s.to_string())
}
fn ints(v: &[i64]) -> Vec<Expr> {
    v.iter().map(|&k| n(k)).collect()
}

// ---- harness -------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
enum Want {
    Eq,
    Ne,
    Lim(LimitKind),
}
use Want::{Eq as E, Lim, Ne as N};

fn verdict(g: &Expr, p: &Expr) -> super::Decision {
    let mut b = Budget::new(&Limits::default());
    equivalent(g, p, &EquivOptions::default(), &mut b)
}

fn matches(want: Want, got: Verdict) -> bool {
    match want {
        Want::Eq => got == Verdict::Equal,
        Want::Ne => got == Verdict::NotEqual,
        Want::Lim(k) => got == Verdict::Limit(k),
    }
}

fn run_table(name: &str, rows: Vec<(Expr, Expr, Want)>) {
    let mut failures = Vec::new();
    for (k, (g, p, want)) in rows.iter().enumerate() {
        let d = verdict(g, p);
        if !matches(*want, d.verdict) {
            failures.push(format!("{name}[{k}]: gold {g}  pred {p}: want {want:?}, got {:?} ({})", d.verdict, d.rule));
        }
        // Determinism: the same call gives the same decision.
        let again = verdict(g, p);
        if again != d {
            failures.push(format!("{name}[{k}]: not deterministic: {d:?} then {again:?}"));
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

/// Symmetry for exact comparisons: swapping gold and pred gives the same verdict.
fn run_symmetric(name: &str, rows: Vec<(Expr, Expr, Want)>) {
    let mut swapped: Vec<(Expr, Expr, Want)> = Vec::new();
    for (g, p, w) in &rows {
        swapped.push((p.clone(), g.clone(), *w));
    }
    run_table(name, rows);
    run_table(&format!("{name}/swapped"), swapped);
}

// ---- tables --------------------------------------------------------------------------------

#[test]
fn exact_numbers_and_radicals() {
    run_symmetric(
        "exact",
        vec![
            (n(12), n(12), E),
            (n(12), n(13), N),
            (q(1, 2), q(2, 4), E),
            (frac(n(6), n(4)), q(3, 2), E),
            (add(vec![n(2), q(1, 2)]), q(5, 2), E),
            (neg(n(3)), n(-3), E),
            (sub(n(1), n(4)), n(-3), E),
            (mul(vec![n(2), n(3), q(1, 6)]), n(1), E),
            (q(1, 3), q(1, 4), N),
            (sqrt(n(8)), mul(vec![n(2), sqrt(n(2))]), E),
            (frac(n(1), sqrt(n(2))), frac(sqrt(n(2)), n(2)), E),
            (frac(sqrt(n(12)), n(2)), sqrt(n(3)), E),
            (pow(n(2), q(1, 2)), sqrt(n(2)), E),
            (root(3, n(16)), mul(vec![n(2), root(3, n(2))]), E),
            (sqrt(n(2)), sqrt(n(3)), N),
            (sqrt(n(4)), n(2), E),
            (sqrt(n(8)), mul(vec![n(3), sqrt(n(2))]), N),
            (pow(n(8), q(2, 3)), n(4), E),
            (root(3, n(-8)), n(-2), E),
            (sqrt(q(9, 4)), q(3, 2), E),
            (sqrt(add(vec![n(2), sqrt(n(3))])), frac(add(vec![sqrt(n(6)), sqrt(n(2))]), n(2)), E),
            (sqrt(add(vec![n(2), sqrt(n(3))])), sqrt(add(vec![n(3), sqrt(n(2))])), N),
            (pow(n(2), n(10)), n(1024), E),
            (pow(n(2), n(-2)), q(1, 4), E),
            (pow(q(2, 3), n(3)), q(8, 27), E),
            (mul(vec![sqrt(n(2)), sqrt(n(3))]), sqrt(n(6)), E),
            (add(vec![sqrt(n(2)), sqrt(n(8))]), sqrt(n(18)), E),
            (add(vec![sqrt(n(2)), sqrt(n(3))]), sqrt(n(5)), N),
            (frac(n(1), add(vec![n(1), sqrt(n(2))])), sub(sqrt(n(2)), n(1)), E),
            (pow(n(0), n(0)), n(1), N),
            (frac(n(1), n(0)), n(1), N),
        ],
    );
}

#[test]
fn complex_numbers() {
    run_symmetric(
        "complex",
        vec![
            (pow(i(), n(2)), n(-1), E),
            (pow(add(vec![n(1), i()]), n(2)), mul(vec![n(2), i()]), E),
            (frac(n(1), i()), neg(i()), E),
            (pow(e(), mul(vec![i(), pi()])), n(-1), E),
            (pow(i(), n(3)), neg(i()), E),
            (i(), n(1), N),
            (sqrt(n(-4)), mul(vec![n(2), i()]), E),
            (mul(vec![add(vec![n(1), i()]), sub(n(1), i())]), n(2), E),
            (add(vec![n(1), i()]), sub(n(1), i()), N),
        ],
    );
}

#[test]
fn closed_functions() {
    run_symmetric(
        "functions",
        vec![
            (sin(frac(pi(), n(6))), q(1, 2), E),
            (ln(pow(e(), n(2))), n(2), E),
            (log(n(2), n(8)), n(3), E),
            (f1(Func::Tan, frac(pi(), n(4))), n(1), E),
            (binom(n(5), n(2)), n(10), E),
            (fact(n(5)), n(120), E),
            (cos(pi()), n(-1), E),
            (sin(pi()), n(0), E),
            (f1(Func::Log10, n(1000)), n(3), E),
            (f1(Func::Abs, n(-3)), n(3), E),
            (f1(Func::Floor, q(7, 2)), n(3), E),
            (f1(Func::Ceil, sqrt(n(2))), n(2), E),
            (fnn(Func::Gcd, ints(&[12, 18])), n(6), E),
            (fnn(Func::Lcm, ints(&[4, 6])), n(12), E),
            (fnn(Func::Max, vec![n(1), sqrt(n(2))]), sqrt(n(2)), E),
            (f1(Func::Arctan, n(1)), frac(pi(), n(4)), E),
            (f1(Func::Arcsin, n(2)), n(0), N),
            (f1(Func::Exp, n(0)), n(1), E),
            (f1(Func::Exp, n(1)), e(), E),
            (cos(frac(pi(), n(3))), q(1, 2), E),
            (sin(frac(pi(), n(3))), frac(sqrt(n(3)), n(2)), E),
            (ln(n(8)), mul(vec![n(3), ln(n(2))]), E),
            (ln(n(8)), mul(vec![n(2), ln(n(2))]), N),
            (binom(n(10), n(3)), n(120), E),
            (binom(n(3), n(5)), n(0), E),
            (fact(n(0)), n(1), E),
            (frac(fact(n(10)), fact(n(8))), n(90), E),
            (sub(pow(sin(n(1)), n(2)), sub(n(1), pow(cos(n(1)), n(2)))), n(0), E),
            (f1(Func::Cosh, n(0)), n(1), E),
            (pi(), q(22, 7), N),
        ],
    );
}

#[test]
fn must_not_prove() {
    run_symmetric(
        "must_not_prove",
        vec![
            (frac(n(1), fact(n(2004))), frac(n(1), fact(n(2006))), N),
            (sub(n(1), frac(n(1), e())), add(vec![n(1), frac(n(1), e())]), N),
            (n(4), mul(vec![n(4), sqrt(n(2))]), N),
            (pow(n(10), n(-20)), mul(vec![n(2), pow(n(10), n(-20))]), N),
            (sin(frac(pi(), n(7))), add(vec![sin(frac(pi(), n(7))), pow(n(10), n(-15))]), N),
            (pow(e(), n(-200)), n(0), N),
            (pow(e(), n(-300)), n(0), N),
            (add(vec![pow(n(2), n(100)), n(1)]), pow(n(2), n(100)), N),
            (sqrt(n(2)), q(99, 70), N),
            (pi(), frac(n(355), n(113)), N),
            (add(vec![pi(), pow(n(10), n(-20))]), pi(), N),
            (pow(n(10), n(-100)), n(0), N),
            (frac(n(1), fact(n(100))), n(0), N),
            (e(), frac(n(2721), n(1001)), N),
            (add(vec![x(), pow(n(10), n(-15))]), x(), N),
            (mul(vec![x(), add(vec![n(1), pow(n(10), n(-12))])]), x(), N),
            (pow(x(), n(2)), pow(x(), n(3)), N),
            (sin(x()), x(), N),
        ],
    );
}

#[test]
fn free_variables() {
    run_symmetric(
        "free",
        vec![
            (add(vec![x(), x()]), mul(vec![n(2), x()]), E),
            (pow(add(vec![x(), n(1)]), n(2)), add(vec![pow(x(), n(2)), mul(vec![n(2), x()]), n(1)]), E),
            (pow(add(vec![x(), n(1)]), n(2)), add(vec![pow(x(), n(2)), n(1)]), N),
            (x(), y(), N),
            (add(vec![x(), n(1)]), add(vec![n(1), x()]), E),
            (frac(sym("a"), sym("b")), mul(vec![sym("a"), pow(sym("b"), n(-1))]), E),
            (frac(mul(vec![n(2), x()]), n(4)), frac(x(), n(2)), E),
            (add(vec![pow(cos(x()), n(2)), pow(sin(x()), n(2))]), n(1), E),
            (sin(mul(vec![n(2), x()])), mul(vec![n(2), sin(x()), cos(x())]), E),
            (f1(Func::Exp, add(vec![x(), y()])), mul(vec![f1(Func::Exp, x()), f1(Func::Exp, y())]), E),
            (ln(mul(vec![x(), y()])), add(vec![ln(x()), ln(y())]), E),
            (user("f", add(vec![x(), n(1)])), user("f", add(vec![n(1), x()])), E),
            (user("f", x()), user("g", x()), N),
            (user("f", n(2)), user("f", add(vec![n(1), n(1)])), E),
            (pow(add(vec![x(), n(1)]), n(1000)), pow(add(vec![n(1), x()]), n(1000)), E),
            (pow(add(vec![x(), n(1)]), n(3)), pow(add(vec![x(), n(1)]), n(4)), N),
            (sym("alpha"), sym("beta"), N),
            (frac(sub(pow(x(), n(2)), n(1)), sub(x(), n(1))), add(vec![x(), n(1)]), E),
            (mul(vec![n(2), pi(), sym("r")]), mul(vec![sym("r"), pi(), n(2)]), E),
            (sub(pow(x(), n(2)), pow(y(), n(2))), mul(vec![add(vec![x(), y()]), sub(x(), y())]), E),
            // `\sqrt{x^2}` is `|x|`, not `x` (points of both signs).
            (pow(pow(x(), n(2)), q(1, 2)), x(), N),
            (pow(x(), q(1, 2)), sqrt(x()), E),
            (sub(add(vec![pow(cos(x()), n(2)), pow(sin(x()), n(2))]), n(1)), n(0), E),
            (fact(add(vec![sym("n"), n(1)])), mul(vec![add(vec![sym("n"), n(1)]), fact(sym("n"))]), E),
            (binom(sym("n"), n(2)), frac(mul(vec![sym("n"), sub(sym("n"), n(1))]), n(2)), E),
            (binom(sym("n"), n(2)), frac(mul(vec![sym("n"), add(vec![sym("n"), n(1)])]), n(2)), N),
            (fact(sym("n")), fact(add(vec![sym("n"), n(1)])), N),
        ],
    );
}

#[test]
fn decimal_rules() {
    run_table(
        "decimal",
        vec![
            (q(1, 2), dec("0.5"), E),
            (dec("0.5"), q(1, 2), E),
            (n(12), dec("12.0"), E),
            (n(12), dec("11.99"), N),
            (dec("3.14"), pi(), E),
            (dec("0.33"), q(1, 3), E),
            // A one- or two-digit decimal gold is not the rounding of a more precise decimal.
            (dec("2.5"), dec("2.46"), N),
            (dec("2.5"), dec("2.4"), N),
            (dec("2.5"), dec("2.54"), N),
            (dec("0.7"), dec("0.74"), N),
            (dec("0.7"), q(37, 50), N),
            (dec("4.5"), dec("4.54"), N),
            (dec("3.142"), dec("3.1416"), E),
            (dec("3.142"), dec("3.1426"), N),
            (dec("3.142"), q(3927, 1250), E),
            (dec("12.5"), dec("12.54"), E),
            (dec("2.5"), dec("2.55"), N),
            // An exact gold that no shorter decimal equals needs six significant digits.
            (q(1, 3), dec("0.333"), N),
            (q(1, 3), dec("0.333333"), E),
            (q(1, 3), dec("0.33333"), N),
            (sqrt(n(2)), dec("1.414"), N),
            (sqrt(n(2)), dec("1.41421"), E),
            (sqrt(n(2)), dec("1.41422"), N),
            (sqrt(n(3)), dec("1.73"), N),
            (sqrt(n(3)), dec("1.73205"), E),
            (sqrt(n(3)), dec("1.73206"), N),
            (mul(vec![n(3), pi()]), dec("9.42"), N),
            (mul(vec![n(3), pi()]), dec("9.42478"), E),
            (e(), dec("2.72"), N),
            (e(), dec("2.71828"), E),
            (q(1, 3), dec("0.3"), N),
            (q(2, 3), dec("0.667"), N),
            (q(2, 3), dec("0.666667"), E),
            (q(2, 3), dec("0.666666"), N),
            (dec("1.5"), dec("1.50"), E),
            // The prediction's last digits contradict the exact gold (no blanket tolerance).
            (n(1000), dec("999.9995"), N),
            (dec("3.14"), dec("3.15"), N),
            (dec("3.14159"), pi(), E),
            (dec("3.1416"), pi(), E),
            (dec("3.1415"), pi(), N),
            (neg(dec("0.5")), q(-1, 2), E),
            (dec("-2.5"), neg(dec("2.46")), N),
            (dec("-2.55"), neg(dec("2.546")), E),
            (pi(), dec("3.14"), N),
            (pi(), dec("3.1"), N),
            (pi(), dec("3.15"), N),
            (pi(), dec("3.142"), N),
            (pi(), dec("3.14159"), E),
            (pi(), dec("3.14160"), N),
            (q(1, 3), dec("0.333333333"), E),
            (dec("0.1"), q(1, 10), E),
            (dec("0.28"), q(7, 25), E),
            (mul(vec![dec("0.5"), x()]), frac(x(), n(2)), E),
            (mul(vec![dec("0.5"), x()]), frac(x(), n(3)), N),
            (dec("1.0"), n(1), E),
            (n(5), dec("5.001"), N),
            (dec("0.0"), n(0), E),
            (dec("2.72"), e(), E),
            (dec("0.3"), q(1, 3), E),
            // Scientific notation: `1.325e-27` has its last digit at 30 decimals.
            (sci("1.325", -27), mul(vec![n(5), pow(n(10), n(-27))]), N),
            (sci("1.325", -27), mul(vec![q(13254, 10000), pow(n(10), n(-27))]), E),
            (sci("1.325", -27), sci("1.3254", -27), E),
            (sci("1.325", -27), sci("1.326", -27), N),
            // A four-digit prediction of an exact gold is too short; six digits are enough.
            (mul(vec![q(13254, 10000), pow(n(10), n(-27))]), sci("1.325", -27), N),
            (mul(vec![q(1325437, 1000000), pow(n(10), n(-27))]), sci("1.32544", -27), E),
            (sci("8.7", 8), n(870_000_000), E),
            (sci("8.7", 8), n(880_000_000), N),
            (dec("0.0000672"), q(672, 10_000_000), E),
            (dec("0.0000672"), q(673, 10_000_000), N),
        ],
    );
}

#[test]
fn percent_degrees_text_infinity() {
    run_table(
        "units",
        vec![
            (pct(n(28)), dec("0.28"), E),
            (pct(n(28)), n(28), E),
            (dec("0.28"), pct(n(28)), E),
            (pct(n(28)), pct(dec("0.28")), N),
            (pct(n(28)), q(7, 25), E),
            (pct(n(50)), q(1, 3), N),
            (n(28), pct(n(28)), E),
            (pct(dec("33.3")), q(1, 3), E),
            (pct(dec("33.3333")), q(1, 3), E),
            (pct(dec("33.3")), q(1, 4), N),
            (pct(dec("12.5")), q(1, 8), E),
            // `33.3\%` is the literal `0.333`: three significant digits, too few for an exact gold.
            (q(1, 3), pct(dec("33.3")), N),
            (q(1, 3), pct(dec("33.3333")), E),
            (q(1, 3), pct(dec("33")), N),
            (deg(n(30)), frac(pi(), n(6)), E),
            (deg(n(30)), n(30), E),
            (deg(n(30)), n(60), N),
            (sin(deg(n(30))), q(1, 2), E),
            (frac(pi(), n(6)), deg(n(30)), E),
            (inf(), inf(), E),
            (neg(inf()), inf(), N),
            (inf(), n(1_000_000), N),
            (neg(inf()), neg(inf()), E),
            (inf(), neg(neg(inf())), E),
            (text("yes"), text("Yes"), E),
            (text("b"), sym("B"), E),
            (text("b"), sym("b"), E),
            (sym("B"), text("b"), E),
            (text("b"), sym("c"), N),
            (text("monday"), text("tuesday"), N),
            (text("no solution"), n(0), N),
            (text("no  solution."), text("no solution"), E),
            (sym("b"), sym("B"), E),
            (sym("U"), sym("u"), E),
            (sym("x"), sym("X_1"), N),
            (tuple(vec![sym("x"), n(1)]), tuple(vec![sym("X"), n(1)]), N),
        ],
    );
}

#[test]
fn structures() {
    let o = false;
    let c = true;
    run_table(
        "structures",
        vec![
            (set(ints(&[1, 2])), set(ints(&[2, 1])), E),
            (set(ints(&[1, 2])), set(ints(&[1, 2, 2])), E),
            (list(ints(&[1, 2])), list(ints(&[1, 2, 3])), N),
            (list(ints(&[1, 2, 3])), list(ints(&[1, 2])), N),
            (list(ints(&[1, 2])), list(ints(&[2, 1])), E),
            (list(ints(&[1, 1, 2])), list(ints(&[1, 2, 2])), N),
            (list(ints(&[1, 2])), set(ints(&[2, 1])), E),
            (set(ints(&[1, 2])), list(ints(&[2, 1])), E),
            (tuple(ints(&[1, 2])), tuple(ints(&[2, 1])), N),
            (tuple(vec![q(1, 2), sqrt(n(8))]), tuple(vec![dec("0.5"), mul(vec![n(2), sqrt(n(2))])]), E),
            (tuple(ints(&[1, 2])), tuple(ints(&[1, 2, 3])), N),
            (iv(n(1), n(2), c, o), iv(n(1), n(2), c, c), N),
            (iv(neg(inf()), n(3), o, c), iv(neg(inf()), n(3), o, c), E),
            (iv(neg(inf()), n(3), o, c), iv(n(3), inf(), c, o), N),
            (iv(n(0), inf(), c, o), iv(n(0), neg(inf()), c, o), N),
            (tuple(ints(&[1, 2])), iv(n(1), n(2), o, o), E),
            (iv(n(1), n(2), o, o), tuple(ints(&[1, 2])), E),
            (iv(n(1), n(2), c, o), tuple(ints(&[1, 2])), N),
            (iv(q(1, 2), sqrt(n(2)), c, c), iv(dec("0.5"), pow(n(2), q(1, 2)), c, c), E),
            (
                union(vec![iv(neg(inf()), n(1), o, o), iv(n(2), inf(), o, o)]),
                union(vec![iv(n(2), inf(), o, o), iv(neg(inf()), n(1), o, o)]),
                E,
            ),
            (
                union(vec![iv(neg(inf()), n(1), o, o), iv(n(2), inf(), o, o)]),
                union(vec![iv(neg(inf()), n(1), o, c), iv(n(2), inf(), o, o)]),
                N,
            ),
            (union(vec![iv(n(1), n(2), c, c), iv(n(2), n(3), o, c)]), iv(n(1), n(3), c, c), E),
            (union(vec![iv(n(1), n(2), c, o), iv(n(2), n(3), o, c)]), iv(n(1), n(3), c, c), N),
            (matrix(vec![ints(&[1, 2]), ints(&[3, 4])]), matrix(vec![vec![q(2, 2), n(2)], ints(&[3, 4])]), E),
            (matrix(vec![ints(&[1, 2]), ints(&[3, 4])]), matrix(vec![ints(&[1, 2]), ints(&[4, 3])]), N),
            (matrix(vec![ints(&[1, 2]), ints(&[3, 4])]), matrix(vec![ints(&[1, 2, 3, 4])]), N),
            (matrix(vec![ints(&[1]), ints(&[2])]), tuple(ints(&[1, 2])), E),
            (matrix(vec![ints(&[1, 2])]), tuple(ints(&[1, 2])), E),
            (tuple(ints(&[1, 2])), matrix(vec![ints(&[1]), ints(&[2])]), E),
            (matrix(vec![ints(&[1, 2]), ints(&[3, 4])]), tuple(ints(&[1, 2, 3, 4])), N),
            (Expr::EmptySet, set(vec![]), E),
            (set(vec![]), Expr::EmptySet, E),
            (Expr::EmptySet, set(ints(&[1])), N),
            (pm(None, n(2)), list(ints(&[2, -2])), E),
            (list(ints(&[-2, 2])), pm(None, n(2)), E),
            (pm(Some(n(1)), n(2)), set(ints(&[3, -1])), E),
            (pm(Some(n(1)), sqrt(n(2))), pm(Some(n(1)), neg(sqrt(n(2)))), E),
            (pm(Some(n(1)), sqrt(n(2))), pm(Some(n(1)), sqrt(n(3))), N),
            (
                frac(pm(Some(n(1)), sqrt(n(5))), n(2)),
                list(vec![frac(add(vec![n(1), sqrt(n(5))]), n(2)), frac(sub(n(1), sqrt(n(5))), n(2))]),
                E,
            ),
            (pm(None, n(2)), n(2), N),
            (list(ints(&[1])), n(1), E),
            (n(1), set(ints(&[1])), E),
            (set(ints(&[1, 2])), n(1), N),
            (list(vec![sqrt(n(2)), neg(sqrt(n(2)))]), list(vec![neg(sqrt(n(2))), sqrt(n(2))]), E),
            (
                set(vec![tuple(ints(&[1, 2])), tuple(ints(&[3, 4]))]),
                set(vec![tuple(ints(&[3, 4])), tuple(ints(&[1, 2]))]),
                E,
            ),
            (
                set(vec![tuple(ints(&[1, 2])), tuple(ints(&[3, 4]))]),
                set(vec![tuple(ints(&[4, 3])), tuple(ints(&[1, 2]))]),
                N,
            ),
            (list(ints(&[1, 2])), tuple(ints(&[2, 1])), E),
            (tuple(ints(&[1, 2])), list(ints(&[2, 1])), N),
        ],
    );
}

#[test]
fn relations() {
    use RelOp::*;
    let o = false;
    let c = true;
    let two_x_plus_1 = add(vec![mul(vec![n(2), x()]), n(1)]);
    run_table(
        "relations",
        vec![
            (eq(x(), n(5)), n(5), E),
            (n(5), eq(x(), n(5)), E),
            (n(5), eq(user("f", x()), n(5)), E),
            (n(6), eq(x(), n(5)), N),
            (eq(y(), two_x_plus_1.clone()), eq(add(vec![mul(vec![n(2), x()]), neg(y()), n(1)]), n(0)), E),
            (eq(y(), two_x_plus_1.clone()), eq(y(), add(vec![mul(vec![n(2), x()]), n(2)])), N),
            (eq(y(), two_x_plus_1.clone()), eq(mul(vec![n(2), y()]), mul(vec![n(2), two_x_plus_1.clone()])), E),
            (eq(x(), n(5)), eq(n(5), x()), E),
            (eq(x(), n(5)), eq(y(), n(5)), N),
            (list(vec![eq(x(), n(1)), eq(y(), n(2))]), tuple(ints(&[1, 2])), E),
            (list(vec![eq(x(), n(1)), eq(y(), n(2))]), tuple(ints(&[2, 1])), N),
            (tuple(ints(&[1, 2])), list(vec![eq(x(), n(1)), eq(y(), n(2))]), E),
            (list(vec![eq(x(), n(1)), eq(y(), n(2))]), list(vec![eq(y(), n(2)), eq(x(), n(1))]), E),
            (list(vec![eq(x(), n(1)), eq(y(), n(2))]), list(vec![eq(x(), n(2)), eq(y(), n(1))]), N),
            (rel(x(), Gt, n(3)), iv(n(3), inf(), o, o), E),
            (rel(x(), Gt, n(3)), iv(n(3), inf(), c, o), N),
            (iv(n(3), inf(), o, o), rel(x(), Gt, n(3)), E),
            (chain(vec![n(1), x(), n(3)], vec![Lt, Le]), iv(n(1), n(3), o, c), E),
            (chain(vec![n(1), x(), n(3)], vec![Lt, Le]), iv(n(1), n(3), c, c), N),
            (rel(x(), Le, n(5)), rel(n(5), Ge, x()), E),
            (rel(x(), Le, n(5)), rel(x(), Lt, n(5)), N),
            (rel(mul(vec![n(2), x()]), Gt, n(6)), rel(x(), Gt, n(3)), E),
            (rel(mul(vec![n(2), x()]), Gt, n(6)), rel(x(), Lt, n(3)), N),
            (rel(x(), Ge, n(2)), rel(n(2), Le, x()), E),
            (rel(x(), Approx, dec("3.14")), pi(), E),
            (eq(x(), pm(None, n(2))), list(ints(&[2, -2])), E),
            (rel(x(), Ne, n(2)), rel(n(2), Ne, x()), E),
            (rel(x(), Ne, n(2)), rel(x(), Ne, n(3)), N),
            (eq(x(), n(5)), rel(x(), Gt, n(5)), N),
            (chain(vec![x(), q(4, 2), n(2)], vec![Eq, Eq]), n(2), E),
            (rel(x(), Gt, n(3)), rel(y(), Gt, n(3)), N),
            (eq(x(), n(5)), eq(x(), dec("5.0")), E),
            // Polynomial equations against their roots.
            (eq(pow(x(), n(2)), n(4)), eq(x(), pm(None, n(2))), E),
            (eq(pow(x(), n(2)), n(4)), list(vec![eq(x(), n(2)), eq(x(), n(-2))]), E),
            (eq(pow(x(), n(2)), n(4)), list(ints(&[-2, 2])), E),
            (eq(pow(x(), n(2)), n(4)), eq(x(), n(2)), N),
            (eq(pow(x(), n(2)), n(4)), list(ints(&[2, 2])), N),
            (eq(pow(x(), n(2)), n(4)), list(ints(&[2, 3])), N),
            (eq(pow(x(), n(2)), n(2)), eq(x(), pm(None, sqrt(n(2)))), E),
            (eq(add(vec![pow(x(), n(2)), mul(vec![n(-5), x()]), n(6)]), n(0)), list(ints(&[3, 2])), E),
            (eq(pow(x(), n(3)), n(1)), eq(x(), n(1)), N),
            (eq(pow(x(), n(2)), n(-1)), eq(x(), pm(None, i())), E),
            (eq(sin(x()), n(0)), eq(x(), n(0)), N),
            (eq(pow(x(), n(2)), n(4)), eq(y(), pm(None, n(2))), N),
            // A predicted equation: its last term is the answer; a gold one is not. A false link
            // between numbers (`\frac12 = \frac{10}{9}`) answers nothing.
            (q(10, 9), eq(q(1, 2), q(10, 9)), N),
            (q(10, 9), eq(q(20, 18), q(10, 9)), E),
            (n(9), eq(mul(vec![q(3, 4), n(12)]), n(9)), E),
            (n(9), eq(mul(vec![q(3, 4), n(12)]), n(8)), N),
            // An equation on an expression of the unknown is a condition (`x + 2 = 18`: x = 16).
            (n(18), eq(add(vec![x(), n(2)]), n(18)), N),
            (eq(add(vec![x(), n(2)]), n(18)), n(18), N),
            (chain(vec![n(1), sym("z"), x(), n(0)], vec![Eq, Eq, Eq]), n(0), E),
            (eq(add(vec![pow(sym("a"), n(2)), sym("b")]), n(0)), n(0), N),
            (
                eq(n(7), add(vec![mul(vec![n(11), sym("a")]), sym("c")])),
                add(vec![mul(vec![n(11), sym("a")]), sym("c")]),
                N,
            ),
            (eq(tuple(vec![sym("p"), sym("q")]), tuple(ints(&[3, 2]))), tuple(ints(&[3, 2])), E),
            (
                list(vec![eq(mul(vec![sym("A"), sym("B")]), n(4)), eq(mul(vec![sym("C"), sym("D")]), n(5))]),
                list(ints(&[4, 5])),
                E,
            ),
            (eq(f1(Func::Abs, mul(vec![sym("A"), sym("B")])), n(1)), n(1), E),
            (chain(vec![x(), add(vec![n(5), n(5), n(1)]), n(7), n(11)], vec![Eq, Eq, Eq]), eq(x(), n(11)), E),
            (
                eq(add(vec![frac(pow(x(), n(2)), n(4)), frac(pow(y(), n(2)), n(3))]), n(1)),
                eq(add(vec![frac(pow(x(), n(2)), n(16)), frac(pow(y(), n(2)), n(12))]), q(1, 4)),
                E,
            ),
            (
                eq(add(vec![mul(vec![n(2), x()]), mul(vec![n(4), y()]), n(-3)]), n(0)),
                eq(y(), add(vec![mul(vec![q(-1, 2), x()]), q(3, 4)])),
                E,
            ),
            (eq(add(vec![mul(vec![n(2), x()]), sym("z")]), n(1)), n(1), N),
            (eq(add(vec![x(), y()]), n(1)), eq(add(vec![x(), y()]), n(2)), N),
        ],
    );
}

#[test]
fn limits_are_reported() {
    let huge = pow(n(2), pow(n(10), n(10)));
    run_table(
        "limits",
        vec![
            (huge.clone(), huge.clone(), E),
            (huge.clone(), n(3), Lim(LimitKind::ExponentTooLarge)),
            (fact(n(100_000)), n(5), Lim(LimitKind::FactorialTooLarge)),
            (binom(n(100_000), n(50_000)), n(5), Lim(LimitKind::FactorialTooLarge)),
            (pow(n(2), n(70_000)), mul(vec![n(2), pow(n(2), n(69_999))]), Lim(LimitKind::ExponentTooLarge)),
            (pow(n(1000), n(10_000)), pow(n(100), n(15_000)), Lim(LimitKind::IntegerTooLarge)),
            (
                pow(add(vec![x(), n(1)]), n(100_000)),
                pow(add(vec![n(1), x()]), n(100_000)),
                Lim(LimitKind::ExponentTooLarge),
            ),
            // A cap that does not matter for a clear difference still decides.
            (pow(n(2), n(70_000)), n(3), N),
            // A clear difference elsewhere in a tuple decides despite a capped element.
            (tuple(vec![fact(n(100_000)), n(1)]), tuple(vec![n(5), n(2)]), N),
            (tuple(vec![fact(n(100_000)), n(1)]), tuple(vec![n(5), n(1)]), Lim(LimitKind::FactorialTooLarge)),
            // Factorials within the cap are exact.
            (frac(fact(n(3000)), fact(n(2999))), n(3000), E),
            // sin of a huge argument: reducing it modulo π costs the square of its size (this
            // took 12 s), so it is charged and refused beyond 2^16384; moderate ones still decide.
            (sin(pow(n(10), n(100_000))), n(1), Lim(LimitKind::ExponentTooLarge)),
            (sin(pow(n(10), n(100_000))), sin(pow(n(10), n(100_000))), E),
            (sin(pow(n(10), n(1000))), n(1), N),
        ],
    );
}

#[test]
fn step_budget_and_depth() {
    let limits = Limits { max_steps: 20, ..Limits::default() };
    let mut b = Budget::new(&limits);
    let long = add((0..100).map(|k| sin(n(k))).collect());
    let long2 = add((0..100).rev().map(|k| sin(n(k))).collect());
    let d = equivalent(&long, &long2, &EquivOptions::default(), &mut b);
    assert_eq!(d.verdict, Verdict::Limit(LimitKind::StepBudget));

    let limits = Limits { deadline: Some(std::time::Duration::ZERO), ..Limits::default() };
    let mut b = Budget::new(&limits);
    std::thread::sleep(std::time::Duration::from_millis(1));
    let d = equivalent(&long, &long2, &EquivOptions::default(), &mut b);
    assert_eq!(d.verdict, Verdict::Limit(LimitKind::Deadline));

    // Deeply nested structures and relations stay within the stack (the parser bounds real
    // inputs to 48 levels of brackets).
    for wrap in [set as fn(Vec<Expr>) -> Expr, tuple, list] {
        let (mut a, mut b) = (n(1), n(2));
        for _ in 0..80 {
            a = wrap(vec![a, x()]);
            b = wrap(vec![b, x()]);
        }
        let d = verdict(&a, &b);
        assert!(matches!(d.verdict, Verdict::NotEqual | Verdict::Limit(LimitKind::TooDeep)), "{d:?}");
    }
    let (mut a, mut b) = (n(1), n(2));
    for _ in 0..80 {
        a = eq(x(), a);
        b = eq(x(), b);
    }
    let d = verdict(&a, &b);
    assert!(matches!(d.verdict, Verdict::NotEqual | Verdict::Limit(LimitKind::TooDeep)), "{d:?}");

    let mut deep = n(1);
    for _ in 0..400 {
        deep = neg(deep);
    }
    let d = verdict(&deep, &n(1));
    assert_eq!(d.verdict, Verdict::Limit(LimitKind::TooDeep));
}

#[test]
fn options_change_policies() {
    let opts = EquivOptions { percent_as_unit: false, ..EquivOptions::default() };
    let mut b = Budget::new(&Limits::default());
    assert_eq!(equivalent(&pct(n(28)), &n(28), &opts, &mut b).verdict, Verdict::NotEqual);
    assert_eq!(equivalent(&pct(n(28)), &dec("0.28"), &opts, &mut b).verdict, Verdict::Equal);

    // Fewer significant digits for a decimal prediction of an exact gold: three accepts `1.73`
    // for `\sqrt3`, never a wrong rounding.
    let loose = EquivOptions { min_decimal_digits_for_exact: 3, ..EquivOptions::default() };
    let mut b = Budget::new(&Limits::default());
    assert_eq!(equivalent(&sqrt(n(3)), &dec("1.73"), &loose, &mut b).verdict, Verdict::Equal);
    assert_eq!(equivalent(&sqrt(n(3)), &dec("1.74"), &loose, &mut b).verdict, Verdict::NotEqual);
    assert_eq!(equivalent(&sqrt(n(3)), &dec("1.7"), &loose, &mut b).verdict, Verdict::NotEqual);
    assert_eq!(equivalent(&sqrt(n(3)), &dec("1.73"), &EquivOptions::default(), &mut b).verdict, Verdict::NotEqual);
}

#[test]
fn rules_are_named() {
    assert_eq!(verdict(&n(3), &n(3)).rule, "exact");
    assert_eq!(verdict(&dec("3.14"), &pi()).rule, "rounded_gold");
    assert_eq!(verdict(&q(1, 3), &dec("0.333333")).rule, "rounded_pred");
    assert_eq!(verdict(&set(ints(&[1, 2])), &set(ints(&[2, 1]))).rule, "set");
    assert_eq!(verdict(&add(vec![x(), x()]), &mul(vec![n(2), x()])).rule, "random_points");
}

// ---- robustness ----------------------------------------------------------------------------

/// A small deterministic generator of arbitrary trees (including hostile ones).
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = super::eval::splitmix64(self.0);
        self.0
    }
    fn pick(&mut self, k: u64) -> u64 {
        self.next() % k
    }
    fn expr(&mut self, depth: u32) -> Expr {
        if depth == 0 {
            return match self.pick(9) {
                0 => n(self.pick(20) as i64 - 5),
                1 => x(),
                2 => y(),
                3 => pi(),
                4 => e(),
                5 => i(),
                6 => dec(["0.5", "3.14", "-2.25", "0.001"][self.pick(4) as usize]),
                7 => n(i64::MAX),
                _ => inf(),
            };
        }
        let d = depth - 1;
        match self.pick(22) {
            0 => add(vec![self.expr(d), self.expr(d), self.expr(d)]),
            1 => mul(vec![self.expr(d), self.expr(d)]),
            2 => frac(self.expr(d), self.expr(d)),
            3 => pow(self.expr(d), self.expr(d)),
            4 => pow(self.expr(d), n([2, 1000, 100_000, -3][self.pick(4) as usize])),
            5 => sqrt(self.expr(d)),
            6 => root(self.pick(5) as i64 + 1, self.expr(d)),
            7 => f1(
                [Func::Sin, Func::Ln, Func::Arcsin, Func::Tan, Func::Floor, Func::Exp][self.pick(6) as usize].clone(),
                self.expr(d),
            ),
            8 => fact(self.expr(d)),
            9 => binom(self.expr(d), self.expr(d)),
            10 => pct(self.expr(d)),
            11 => deg(self.expr(d)),
            12 => pm(Some(self.expr(d)), self.expr(d)),
            13 => list(vec![self.expr(d), self.expr(d)]),
            14 => set(vec![self.expr(d), self.expr(d)]),
            15 => tuple(vec![self.expr(d), self.expr(d)]),
            16 => iv(self.expr(d), self.expr(d), self.pick(2) == 0, self.pick(2) == 0),
            17 => eq(self.expr(d), self.expr(d)),
            18 => rel(self.expr(d), RelOp::Lt, self.expr(d)),
            19 => log(self.expr(d), self.expr(d)),
            20 => union(vec![self.expr(d), self.expr(d)]),
            _ => neg(self.expr(d)),
        }
    }
}

#[test]
fn arbitrary_trees_never_panic_and_stay_bounded() {
    let mut g = Gen(7);
    let limits = Limits::default();
    let mut slowest = (std::time::Duration::ZERO, String::new());
    for k in 0..4000 {
        let a = g.expr(1 + (k % 5));
        let b = if k % 3 == 0 { a.clone() } else { g.expr(1 + (k % 5)) };
        let t = std::time::Instant::now();
        let mut budget = Budget::new(&limits);
        let d1 = equivalent(&a, &b, &EquivOptions::default(), &mut budget);
        let mut budget = Budget::new(&limits);
        let d2 = equivalent(&a, &b, &EquivOptions::default(), &mut budget);
        assert_eq!(d1, d2, "not deterministic for {a} vs {b}");
        if std::env::var("EQUIV_SLOWEST").is_ok() && t.elapsed() > slowest.0 {
            slowest = (t.elapsed(), format!("{a}  vs  {b}: {d1:?}"));
        }
        if a == b {
            assert_eq!(d1.verdict, Verdict::Equal);
        }
    }
    if std::env::var("EQUIV_SLOWEST").is_ok() {
        eprintln!("slowest pair (two calls): {:?} {}", slowest.0, slowest.1);
    }
}

/// The double-precision screen and the fast `exp`/`cos`/`sin` must not change verdicts: equal
/// expressions stay equal, and differences far below double precision are still seen.
#[test]
fn screen_and_fast_functions() {
    let t = || sym("t");
    let c = || sym("c");
    let tiny = |k: i64| pow(n(10), n(-k));
    let exp = |a: Expr| pow(e(), a);
    run_symmetric(
        "screen_and_fast_functions",
        vec![
            // e^t/3 + c e^{-2t} = 1/3 e^t + c e^{-2t}
            (
                add(vec![frac(exp(t()), n(3)), mul(vec![c(), exp(mul(vec![n(-2), t()]))])]),
                add(vec![mul(vec![q(1, 3), exp(t())]), mul(vec![c(), exp(neg(mul(vec![n(2), t()])))])]),
                E,
            ),
            (sin(mul(vec![n(2), x()])), mul(vec![n(2), sin(x()), cos(x())]), E),
            (cos(mul(vec![n(2), x()])), sub(pow(cos(x()), n(2)), pow(sin(x()), n(2))), E),
            (exp(mul(vec![i(), x()])), add(vec![cos(x()), mul(vec![i(), sin(x())])]), E),
            (f1(Func::Tan, x()), frac(sin(x()), cos(x())), E),
            (exp(add(vec![x(), y()])), mul(vec![exp(x()), exp(y())]), E),
            (f1(Func::Exp, x()), exp(x()), E),
            // Large arguments are reduced modulo 2 pi.
            (sin(add(vec![x(), mul(vec![n(1000), pi()])])), sin(x()), E),
            (cos(n(1000)), cos(n(-1000)), E),
            (exp(frac(n(1), n(3))), root(3, e()), E),
            // Differences the double-precision screen cannot see.
            (exp(x()), add(vec![exp(x()), tiny(25)]), N),
            (sin(x()), mul(vec![sin(x()), add(vec![n(1), tiny(28)])]), N),
            (cos(x()), cos(add(vec![x(), tiny(20)])), N),
            (exp(x()), exp(add(vec![x(), tiny(18)])), N),
            (sin(mul(vec![n(50), x()])), sin(add(vec![mul(vec![n(50), x()]), tiny(22)])), N),
            (exp(n(-700)), n(0), N),
            // Clear differences (decided by the screen).
            (exp(t()), exp(neg(t())), N),
            (sin(x()), cos(x()), N),
            (add(vec![n(2), pi()]), mul(vec![n(2), pi()]), N),
        ],
    );
    // A set of 39 sine terms against its reverse is decided within the default budget.
    let sines: Vec<Expr> = (1..=39).map(|k| sin(mul(vec![n(k), x()]))).collect();
    let mut reversed = sines.clone();
    reversed.reverse();
    run_table("sine_set", vec![(set(sines), set(reversed), E)]);
}
