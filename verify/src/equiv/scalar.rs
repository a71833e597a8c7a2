//! Comparison of two scalar expressions: infinities, percent and degree signs, the decimal
//! tolerance rules, exact or 256-bit evaluation of closed expressions, and seeded random points
//! for expressions with free symbols.

use super::eval::{fnv1a, rat_to_bf, splitmix64, Cf, EvalErr, Evaluator, Value, PREC};
use super::number::{effective_decimals, rounds_to, significant_digits, Q};
use super::{fast, Cmp, Cx, Res};
use crate::ast::{Constant, Expr, Func, Number};
use crate::limits::LimitKind;
use astro_float::{BigFloat, RoundingMode};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{Signed, ToPrimitive};

const RM: RoundingMode = RoundingMode::ToEven;
/// Agreeing random points required for `Equal`.
const POINTS: usize = 5;
/// Random points tried at most (points where a side is undefined are skipped).
const MAX_TRIES: usize = 16;
/// Point indices from this one on are positive integers (see [`point_value`]).
pub const INTEGER_POINTS: usize = 1 << 20;
/// Precision of the re-evaluation that tells a cancelled zero from a tiny number.
const HIGH_PREC: usize = 4 * PREC;

/// How a side was written, for the decimal rules.
struct Info {
    has_dec: bool,
    /// A lone decimal literal (possibly negated): its value and decimals.
    single_dec: Option<(BigRational, u32)>,
}

fn info(e: &Expr, s: Summary) -> Info {
    Info { has_dec: s.decimal, single_dec: if s.decimal { single_decimal(e) } else { None } }
}

/// Whether any literal in `e` was written with a decimal point.
pub fn has_decimal(e: &Expr) -> bool {
    let mut found = false;
    visit(e, &mut |x| {
        if let Expr::Num(Number { decimals: Some(_), .. }) = x {
            found = true;
        }
    });
    found
}

/// A lone decimal literal: its value and the decimal position of its last written digit.
fn single_decimal(e: &Expr) -> Option<(BigRational, u32)> {
    match e {
        Expr::Num(Number { value, decimals: Some(d) }) => effective_decimals(value, *d).map(|d| (value.clone(), d)),
        Expr::Neg(a) => single_decimal(a).map(|(v, d)| (-v, d)),
        _ => None,
    }
}

/// Pre-order visit of every node (iterative, no recursion limit issues).
pub fn visit(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    if let Expr::Num(_) | Expr::Sym(_) | Expr::Const(_) = e {
        f(e);
        return;
    }
    let mut stack = Vec::with_capacity(8);
    stack.push(e);
    while let Some(x) = stack.pop() {
        f(x);
        match x {
            Expr::Num(_) | Expr::Sym(_) | Expr::Const(_) | Expr::Text(_) | Expr::EmptySet => {}
            Expr::Neg(a) | Expr::Factorial(a) | Expr::Percent(a) | Expr::Degrees(a) => stack.push(a),
            Expr::Add(v)
            | Expr::Mul(v)
            | Expr::List(v)
            | Expr::Tuple(v)
            | Expr::Set(v)
            | Expr::Union(v)
            | Expr::Intersection(v)
            | Expr::Func(_, v) => stack.extend(v.iter()),
            Expr::Relation { terms, .. } => stack.extend(terms.iter()),
            Expr::Div(a, b) | Expr::Pow(a, b) | Expr::Binom(a, b) => {
                stack.push(a);
                stack.push(b);
            }
            Expr::Root { index, radicand } => {
                stack.push(index);
                stack.push(radicand);
            }
            Expr::Log { base, arg } => {
                stack.push(base);
                stack.push(arg);
            }
            Expr::PlusMinus(a, b) => {
                if let Some(a) = a {
                    stack.push(a);
                }
                stack.push(b);
            }
            Expr::Interval { lo, hi, .. } => {
                stack.push(lo);
                stack.push(hi);
            }
            Expr::Matrix(rows) => {
                for r in rows {
                    stack.extend(r.iter());
                }
            }
        }
    }
}

/// Free symbol names of `e`, added to `out` (sorted, unique).
pub fn free_symbols(e: &Expr, out: &mut Vec<String>) {
    visit(e, &mut |x| {
        if let Expr::Sym(s) = x {
            if let Err(pos) = out.binary_search(s) {
                out.insert(pos, s.clone());
            }
        }
    });
}

/// `+1` for `\infty`, `-1` for `-\infty`.
fn infinity_sign(e: &Expr) -> Option<i8> {
    match e {
        Expr::Const(Constant::Infinity) => Some(1),
        Expr::Neg(a) => infinity_sign(a).map(|s| -s),
        Expr::Add(v) if v.len() == 1 => infinity_sign(&v[0]),
        _ => None,
    }
}

/// `p%` as a number. A literal stays a literal (`33.3%` is `0.333` with 3 decimals), so the
/// rounding rules still apply to it.
fn div100(a: &Expr) -> Expr {
    if let Expr::Num(Number { value, decimals }) = a {
        let value = value / BigRational::from_integer(BigInt::from(100));
        return Expr::Num(Number { value, decimals: decimals.map(|d| d + 2) });
    }
    Expr::Div(Box::new(a.clone()), Box::new(Expr::Num(Number::int(100))))
}

fn to_radians(a: &Expr) -> Expr {
    Expr::Div(Box::new(Expr::Mul(vec![a.clone(), Expr::Const(Constant::Pi)])), Box::new(Expr::Num(Number::int(180))))
}

/// Compare two scalars (`gold` first).
pub fn compare(g: &Expr, p: &Expr, cx: &mut Cx) -> Res {
    // The traversals below (summaries, symbols, decimal information, the point set-up) cost
    // about two microseconds.
    cx.budget.charge(40)?;
    let (gi, pi) = (infinity_sign(g), infinity_sign(p));
    if gi.is_some() || pi.is_some() {
        return Ok(Cmp::new(gi == pi, "infinity"));
    }
    match (g, p) {
        (Expr::Percent(a), Expr::Percent(b)) | (Expr::Degrees(a), Expr::Degrees(b)) => {
            return compare(a, b, cx).map(|c| c.with_rule_if_eq("unit"))
        }
        (Expr::Percent(a), other) => return unit_alternatives(&div100(a), a, other, true, cx, "percent"),
        (other, Expr::Percent(b)) => return unit_alternatives(&div100(b), b, other, false, cx, "percent"),
        (Expr::Degrees(a), other) => return unit_alternatives(&to_radians(a), a, other, true, cx, "degrees"),
        (other, Expr::Degrees(b)) => return unit_alternatives(&to_radians(b), b, other, false, cx, "degrees"),
        _ => {}
    }
    if let (Expr::Num(a), Expr::Num(b)) = (g, p) {
        if a.decimals.is_none() && b.decimals.is_none() {
            return Ok(Cmp::new(a.value == b.value, "exact"));
        }
    }
    let (gs, ps) = (Summary::of(g), Summary::of(p));
    if !gs.symbols && !ps.symbols && !gs.user_function && !ps.user_function {
        return closed(g, p, (gs, ps), cx);
    }
    let mut syms = Vec::new();
    free_symbols(g, &mut syms);
    free_symbols(p, &mut syms);
    random_points(g, p, &syms, (gs, ps), cx)
}

/// What one traversal learns about an expression.
#[derive(Clone, Copy, Debug, Default)]
pub struct Summary {
    /// A literal written with a decimal point.
    pub decimal: bool,
    /// A free symbol.
    pub symbols: bool,
    /// A user function `f(..)`.
    pub user_function: bool,
    /// A `\pm`.
    pub plus_minus: bool,
    /// A factorial or binomial coefficient (symbols then take integer values).
    pub integer_function: bool,
}

impl Summary {
    /// One pass over `e`.
    pub fn of(e: &Expr) -> Summary {
        let mut s = Summary::default();
        visit(e, &mut |x| match x {
            Expr::Num(Number { decimals: Some(_), .. }) => s.decimal = true,
            Expr::Sym(_) => s.symbols = true,
            Expr::Func(Func::Other(_), _) => s.user_function = true,
            Expr::PlusMinus(..) => s.plus_minus = true,
            Expr::Factorial(_) | Expr::Binom(..) => s.integer_function = true,
            _ => {}
        });
        s
    }
}

/// `unit` is the side with the sign read as a number (`28%` as `0.28`), `bare` the same without
/// the sign (`28`, allowed when the policy reads the sign as a unit).
fn unit_alternatives(
    unit: &Expr,
    bare: &Expr,
    other: &Expr,
    unit_is_gold: bool,
    cx: &mut Cx,
    rule: &'static str,
) -> Res {
    let allow_bare = rule == "degrees" || cx.opts.percent_as_unit;
    let mut limit = None;
    let candidates: &[&Expr] = if allow_bare { &[unit, bare] } else { &[unit] };
    for c in candidates {
        let r = if unit_is_gold { compare(c, other, cx) } else { compare(other, c, cx) };
        match r {
            Ok(c) if c.eq => return Ok(Cmp::new(true, rule)),
            Ok(_) => {}
            Err(LimitKind::StepBudget) => return Err(LimitKind::StepBudget),
            Err(k) => limit = Some(k),
        }
    }
    match limit {
        Some(k) => Err(k),
        None => Ok(Cmp::new(false, rule)),
    }
}

/// Evaluate both sides of a closed comparison at `prec` bits.
fn eval_pair(
    g: &Expr,
    p: &Expr,
    cx: &mut Cx,
    env: &[(String, BigRational)],
    prec: usize,
) -> Result<(Value, Value, Option<LimitKind>), EvalErr> {
    let mut ev = Evaluator::new(prec, cx.budget, &mut cx.cc, env);
    let gv = ev.eval(g)?;
    let pv = ev.eval(p)?;
    Ok((gv, pv, ev.capped))
}

fn closed(g: &Expr, p: &Expr, (gs, ps): (Summary, Summary), cx: &mut Cx) -> Res {
    let (gv, pv, capped) = match eval_pair(g, p, cx, &[], PREC) {
        Ok(v) => v,
        Err(EvalErr::Limit(k)) => return Err(k),
        Err(EvalErr::Undefined) => return Ok(Cmp::new(false, "undefined")),
        Err(EvalErr::NotNumeric) => return Ok(Cmp::new(false, "not_numeric")),
    };
    let (gi, pi) = (info(g, gs), info(p, ps));
    let mut c = decide(&gi, &pi, &gv, &pv, cx)?;
    if !c.eq && !gi.has_dec && !pi.has_dec && near_zero_difference(&gv, &pv) {
        if let Ok((gh, ph, _)) = eval_pair(g, p, cx, &[], HIGH_PREC) {
            if cancelled(&gv, &pv, &gh, &ph) {
                c = Cmp::new(true, "numeric_zero");
            }
        }
    }
    if c.eq {
        if let Some(k) = capped {
            return Err(k);
        }
    }
    Ok(c)
}

/// The decimal rules (see EQUIVALENCE.md) applied to two values.
fn decide(gi: &Info, pi: &Info, gv: &Value, pv: &Value, cx: &mut Cx) -> Res {
    cx.budget.charge(1)?;
    if !gi.has_dec && !pi.has_dec {
        let exact = gv.exact().is_some() && pv.exact().is_some();
        let eq = values_close(gv, pv, cx.opts.eval_rel_tol);
        return Ok(Cmp::new(eq, if exact { "exact" } else { "numeric" }));
    }
    if values_close(gv, pv, cx.opts.decimal_rel_tol) {
        return Ok(Cmp::new(true, "decimal_tolerance"));
    }
    // (3) rounded gold: the gold is a lone decimal with d >= 1 and the prediction is more precise.
    if let Some((gval, d)) = &gi.single_dec {
        let more_precise = match &pi.single_dec {
            Some((_, pd)) => pd > d,
            None => !pi.has_dec,
        };
        if *d >= 1 && more_precise && rounds_value_to(pv, *d, gval, cx)? {
            return Ok(Cmp::new(true, "rounded_gold"));
        }
    }
    // (4) rounded prediction: exact gold, prediction a lone decimal with >= 3 significant digits.
    if !gi.has_dec {
        if let Some((pval, d)) = &pi.single_dec {
            if significant_digits(pval, *d, cx.budget)? >= 3 && rounds_value_to(gv, *d, pval, cx)? {
                return Ok(Cmp::new(true, "rounded_pred"));
            }
        }
    }
    Ok(Cmp::new(false, "decimal_tolerance"))
}

/// Whether a real value rounds (half away from zero) to `target` at `d` decimals.
fn rounds_value_to(v: &Value, d: u32, target: &BigRational, cx: &mut Cx) -> Result<bool, LimitKind> {
    match v {
        Value::Exact(q) => {
            if !q.is_real() {
                return Ok(false);
            }
            rounds_to(&q.re, d, target, cx.budget)
        }
        Value::Approx(c) => {
            if !c.is_real() || d > 400 {
                return Ok(false);
            }
            // Compare x*10^d with m +- 1/2 where m = target*10^d.
            let scale = super::number::pow10(d, cx.budget)?;
            let m = target * &scale;
            let half = BigRational::new(BigInt::from(1), BigInt::from(2));
            let y = c.re.mul(&rat_to_bf(&scale, PREC), PREC, RM);
            let lo = rat_to_bf(&(&m - &half), PREC);
            let hi = rat_to_bf(&(&m + &half), PREC);
            let ge_lo = y.cmp(&lo).is_some_and(|o| o >= 0);
            let gt_lo = y.cmp(&lo).is_some_and(|o| o > 0);
            let lt_hi = y.cmp(&hi).is_some_and(|o| o < 0);
            let le_hi = y.cmp(&hi).is_some_and(|o| o <= 0);
            Ok(if m.is_positive() {
                ge_lo && lt_hi
            } else if m.is_negative() {
                gt_lo && le_hi
            } else {
                gt_lo && lt_hi
            })
        }
    }
}

/// Relative closeness `|a-b| <= tol * max(|a|,|b|)`; exact values compare exactly when the
/// tolerance is below the float precision.
pub fn values_close(a: &Value, b: &Value, tol: f64) -> bool {
    if let (Value::Exact(x), Value::Exact(y)) = (a, b) {
        if x == y {
            return true;
        }
        if tol < 1e-25 {
            return false;
        }
        if let Some(close) = f64_close(x, y, tol) {
            return close;
        }
        let Some(t) = BigRational::from_float(tol) else { return false };
        let d2 = sq_mod(&(&x.re - &y.re), &(&x.im - &y.im));
        let m2 = std::cmp::max(sq_mod(&x.re, &x.im), sq_mod(&y.re, &y.im));
        return d2 <= &t * &t * m2;
    }
    let (x, y) = (a.to_cf(PREC), b.to_cf(PREC));
    cf_close(&x, &y, tol)
}

/// The relative test on `f64` approximations when they decide it with a wide margin (exact
/// rationals with hundreds of bits make the exact test slow: every operation reduces by a gcd).
fn f64_close(x: &Q, y: &Q, tol: f64) -> Option<bool> {
    let part =
        |q: &BigRational| q.to_f64().filter(|v| v.is_finite() && (*v == 0.0 || (1e-250..1e250).contains(&v.abs())));
    let (xr, xi, yr, yi) = (part(&x.re)?, part(&x.im)?, part(&y.re)?, part(&y.im)?);
    let m = xr.hypot(xi).max(yr.hypot(yi));
    if m == 0.0 {
        return None;
    }
    // Each conversion is within 2^-52 relative; the computed relative difference is then within
    // about 1e-15 of the true one.
    let rel = (xr - yr).hypot(xi - yi) / m;
    let slack = 1e-13;
    if rel > tol * 1.01 + slack {
        Some(false)
    } else if rel < tol * 0.99 - slack {
        Some(true)
    } else {
        None
    }
}

fn sq_mod(re: &BigRational, im: &BigRational) -> BigRational {
    re * re + im * im
}

/// Relative closeness of complex floats, `|x - y| <= tol * max(|x|, |y|)`, compared squared (no
/// square roots: astro-float's are slow).
pub fn cf_close(x: &Cf, y: &Cf, tol: f64) -> bool {
    let d2 = x.sub(y, PREC).norm_sqr(PREC);
    if d2.is_zero() {
        return true;
    }
    let mx = x.norm_sqr(PREC);
    let my = y.norm_sqr(PREC);
    let m2 = if mx.cmp(&my).is_some_and(|o| o >= 0) { mx } else { my };
    let t = BigFloat::from_f64(tol, PREC);
    let bound = t.mul(&t, PREC, RM).mul(&m2, PREC, RM);
    d2.cmp(&bound).is_some_and(|o| o <= 0)
}

/// The difference is tiny in absolute terms (below 2^-100 relative to max(1, |a|, |b|)), so it
/// may be a cancellation residue of a true zero.
fn near_zero_difference(a: &Value, b: &Value) -> bool {
    if a.exact().is_some() && b.exact().is_some() {
        return false;
    }
    let (x, y) = (a.to_cf(PREC), b.to_cf(PREC));
    let d2 = x.sub(&y, PREC).norm_sqr(PREC);
    let one = BigFloat::from_word(1, PREC);
    let mx = x.norm_sqr(PREC);
    let my = y.norm_sqr(PREC);
    let mut m2 = if mx.cmp(&my).is_some_and(|o| o >= 0) { mx } else { my };
    if m2.cmp(&one).is_some_and(|o| o < 0) {
        m2 = one;
    }
    let eps2 = BigFloat::from_f64(2f64.powi(-200), PREC).mul(&m2, PREC, RM);
    d2.cmp(&eps2).is_some_and(|o| o <= 0)
}

/// A true zero difference shrinks with the precision (from about 2^-256 to 2^-1024); a tiny
/// nonzero difference (like `e^{-300}`) does not.
fn cancelled(gl: &Value, pl: &Value, gh: &Value, ph: &Value) -> bool {
    let dl = gl.to_cf(PREC).sub(&pl.to_cf(PREC), PREC).modulus(PREC);
    let dh = gh.to_cf(HIGH_PREC).sub(&ph.to_cf(HIGH_PREC), HIGH_PREC).modulus(HIGH_PREC);
    if dh.is_zero() {
        return true;
    }
    let shrink = BigFloat::from_f64(2f64.powi(-300), PREC).mul(&dl, PREC, RM);
    dh.cmp(&shrink).is_some_and(|o| o <= 0)
}

/// A deterministic pseudo-random positive rational for symbol `name` at point `k` (an integer
/// from 2 to 61 when `k >= INTEGER_POINTS`).
pub fn point_value(name: &str, k: usize) -> BigRational {
    let h = splitmix64(fnv1a(name.as_bytes()) ^ splitmix64(k as u64 + 1));
    if k >= INTEGER_POINTS {
        // Integer points for factorials and binomials: 2..=61.
        return BigRational::from_integer(BigInt::from(2 + (h % 60) as i64));
    }
    let num = 1 + (h % 2999) as i64;
    let den = 1000 + ((h >> 32) % 997) as i64;
    BigRational::new(BigInt::from(num), BigInt::from(den))
}

/// Equal when both sides agree at several seeded random points (undefined points skipped).
fn random_points(g: &Expr, p: &Expr, syms: &[String], (gs, ps): (Summary, Summary), cx: &mut Cx) -> Res {
    let (gi, pi) = (info(g, gs), info(p, ps));
    let tol = if gi.has_dec || pi.has_dec { cx.opts.decimal_rel_tol } else { cx.opts.eval_rel_tol };
    let integer = gs.integer_function || ps.integer_function;
    let mut agree = 0;
    let mut all_exact = true;
    let mut capped = None;
    for k in 0..MAX_TRIES {
        // Exact agreement at 3 random rationals already makes a coincidence negligible (a nonzero
        // rational function of small degree vanishes at few points); approximate agreement and
        // the small integer range need more points.
        let needed = if integer {
            POINTS + 1
        } else if all_exact {
            3
        } else {
            POINTS
        };
        if agree >= needed {
            break;
        }
        // Setting up a point (its rationals, the symbol table) costs about a microsecond a symbol.
        cx.budget.charge(4 + 20 * syms.len() as u64)?;
        let index = if integer { INTEGER_POINTS + k } else { k };
        let env: Vec<(String, BigRational)> = syms.iter().map(|s| (s.clone(), point_value(s, index))).collect();
        // A clear disagreement in double precision is a disagreement at 256 bits too (the screen
        // says "don't know" wherever the high-precision evaluation could branch differently).
        let (differ, nodes) = fast::differ_at(g, p, &env, tol);
        cx.budget.charge(nodes)?;
        if differ {
            return Ok(Cmp::new(false, "random_points"));
        }
        let (gv, pv, cap) = match eval_pair(g, p, cx, &env, PREC) {
            Ok(v) => v,
            Err(EvalErr::Limit(k)) => return Err(k),
            Err(EvalErr::Undefined) => continue,
            Err(EvalErr::NotNumeric) => return Ok(Cmp::new(false, "not_numeric")),
        };
        capped = capped.or(cap);
        all_exact &= gv.exact().is_some() && pv.exact().is_some();
        if values_close(&gv, &pv, tol) {
            agree += 1;
            continue;
        }
        if tol < 1e-20 && near_zero_difference(&gv, &pv) {
            if let Ok((gh, ph, _)) = eval_pair(g, p, cx, &env, HIGH_PREC) {
                if cancelled(&gv, &pv, &gh, &ph) {
                    agree += 1;
                    continue;
                }
            }
        }
        return Ok(Cmp::new(false, "random_points"));
    }
    if agree < 3 {
        return Ok(Cmp::new(false, "undefined"));
    }
    if let Some(k) = capped {
        return Err(k);
    }
    Ok(Cmp::new(true, "random_points"))
}
