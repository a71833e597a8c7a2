//! Comparison of two scalar expressions: infinities, percent and degree signs, the decimal
//! tolerance rules, exact or 256-bit evaluation of closed expressions, and seeded random points
//! for expressions with free symbols.

use super::context::{Cmp, Cx, Res};
use super::eval::{fnv1a, rat_to_bf, splitmix64, Cf, EvalErr, Evaluator, Value, PREC};
use super::fast;
use super::number::{effective_decimals, rounds_to, significant_digits, Q};
use super::rule::Rule;
use crate::ast::{Constant, Expr, Func, Number};
use crate::limits::LimitKind;
use astro_float::{BigFloat, RoundingMode};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{Signed, ToPrimitive};

const RM: RoundingMode = RoundingMode::ToEven;
/// Agreeing random points required for `Equal` when every value at them was exact.
const POINTS_EXACT: usize = 6;
/// Agreeing random points required for `Equal` (approximate values).
const POINTS: usize = 8;
/// Agreeing points required with a step function, a kink, or a symbol only the prediction has.
const POINTS_STEP: usize = 16;
/// Extra points evaluated in double precision only, with a step, a kink or an extra symbol.
const SCREEN_POINTS: usize = 512;
/// Step arguments whose jumps are searched (see [`step_crossings_differ`]).
const MAX_STEP_ARGS: usize = 8;
/// Newton iterations per jump.
const NEWTON_STEPS: usize = 24;
/// Random points tried at most (points outside the domain of a side are skipped).
const MAX_TRIES: usize = 48;
/// Point indices from this one on are positive integers (see [`point_value`]).
pub const INTEGER_POINTS: usize = 1 << 20;
/// Precision of the re-evaluation that tells a cancelled zero from a tiny number.
const HIGH_PREC: usize = 4 * PREC;

/// How a side was written, for the decimal rules.
struct Info {
    has_dec: bool,
    /// The relative precision of the most precise decimal literal (see [`written_rel_tol`]).
    written_tol: f64,
    /// A lone decimal literal (possibly negated): its value and decimals.
    single_dec: Option<(BigRational, u32)>,
}

fn info(e: &Expr, s: Summary) -> Info {
    Info {
        has_dec: s.decimal,
        written_tol: if s.decimal { written_rel_tol(e).unwrap_or(f64::INFINITY) } else { f64::INFINITY },
        single_dec: if s.decimal { single_decimal(e) } else { None },
    }
}

fn decimal_written_tol(gi: &Info, pi: &Info) -> f64 {
    gi.written_tol.min(pi.written_tol)
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
            Expr::Neg(a) | Expr::Factorial(a) | Expr::Percent(a) | Expr::Degrees(a) | Expr::Quantity(a, _) => {
                stack.push(a)
            }
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
        return Ok(Cmp::new(gi == pi, Rule::Infinity));
    }
    if let Some(r) = super::quantity::compare(g, p, cx, compare) {
        return r;
    }
    match (g, p) {
        (Expr::Percent(a), Expr::Percent(b)) | (Expr::Degrees(a), Expr::Degrees(b)) => {
            return compare(a, b, cx).map(|c| c.with_rule_if_eq(Rule::Unit))
        }
        (Expr::Percent(a), other) => return unit_alternatives(&div100(a), a, other, true, cx, Rule::Percent),
        (other, Expr::Percent(b)) => return unit_alternatives(&div100(b), b, other, false, cx, Rule::Percent),
        (Expr::Degrees(a), other) => return unit_alternatives(&to_radians(a), a, other, true, cx, Rule::Degrees),
        (other, Expr::Degrees(b)) => return unit_alternatives(&to_radians(b), b, other, false, cx, Rule::Degrees),
        _ => {}
    }
    if let (Expr::Num(a), Expr::Num(b)) = (g, p) {
        if a.decimals.is_none() && b.decimals.is_none() {
            return Ok(Cmp::new(a.value == b.value, Rule::Exact));
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
    /// A step or kink: floor, ceiling, absolute value, max, min, gcd, lcm (more points are
    /// sampled, over a wider range of magnitudes).
    pub step: bool,
    /// A function whose real domain is restricted: roots, logarithms, powers with a non-integer
    /// exponent, inverse sine/cosine/secant/cosecant.
    pub restricted: bool,
    /// The imaginary unit `i`.
    pub imaginary: bool,
}

impl Summary {
    /// One pass over `e`.
    pub fn of(e: &Expr) -> Summary {
        let mut s = Summary::default();
        visit(e, &mut |x| match x {
            Expr::Num(Number { decimals: Some(_), .. }) => s.decimal = true,
            Expr::Sym(_) => s.symbols = true,
            Expr::Func(Func::Other(name), _) => {
                s.user_function = true;
                s.step |= super::eval::is_sign_name(name);
            }
            Expr::PlusMinus(..) => s.plus_minus = true,
            Expr::Factorial(_) | Expr::Binom(..) => s.integer_function = true,
            Expr::Func(Func::Floor | Func::Ceil | Func::Abs | Func::Max | Func::Min | Func::Gcd | Func::Lcm, _) => {
                s.step = true
            }
            Expr::Func(Func::Ln | Func::Log10 | Func::Arcsin | Func::Arccos | Func::Arcsec | Func::Arccsc, _)
            | Expr::Root { .. }
            | Expr::Log { .. } => s.restricted = true,
            Expr::Pow(_, x) if !matches!(&**x, Expr::Num(Number { value, .. }) if value.is_integer()) => {
                s.restricted = true
            }
            Expr::Const(Constant::I) => s.imaginary = true,
            _ => {}
        });
        s
    }
}

/// Whether `e` is a number strictly between -1 and 1 (a fraction of a whole).
fn is_proportion(e: &Expr) -> bool {
    let value = super::fast::Screen::new(&[]).eval(e).and_then(|v| v.real_value());
    value.is_some_and(|v| v.abs() < 1.0)
}

/// `unit` is the side with the sign read as a number (`28%` as `0.28`), `bare` the same without
/// the sign (`28`, allowed when the policy reads the sign as a unit).
fn unit_alternatives(unit: &Expr, bare: &Expr, other: &Expr, unit_is_gold: bool, cx: &mut Cx, rule: Rule) -> Res {
    // A predicted percent answers a proportion (a gold strictly between -1 and 1) only as
    // `p/100`: `25\%` for `\frac14`, never `0.25\%`.
    let allow_bare = rule == Rule::Degrees || (cx.opts.percent_as_unit && (unit_is_gold || !is_proportion(other)));
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
    real_domain: bool,
) -> Result<(Value, Value, Option<LimitKind>), EvalErr> {
    let mut ev = Evaluator::new(prec, cx.budget, &mut cx.cc, env);
    ev.real_domain = real_domain;
    let gv = ev.eval(g)?;
    let pv = ev.eval(p)?;
    Ok((gv, pv, ev.capped))
}

fn closed(g: &Expr, p: &Expr, (gs, ps): (Summary, Summary), cx: &mut Cx) -> Res {
    let (gv, pv, capped) = match eval_pair(g, p, cx, &[], PREC, false) {
        Ok(v) => v,
        Err(EvalErr::Limit(k)) => return Err(k),
        Err(EvalErr::Undefined) => return Ok(Cmp::new(false, Rule::Undefined)),
        Err(EvalErr::NotNumeric) => return Ok(Cmp::new(false, Rule::NotNumeric)),
    };
    let (gi, pi) = (info(g, gs), info(p, ps));
    let mut c = decide(&gi, &pi, &gv, &pv, cx)?;
    if c.eq && c.rule == Rule::Numeric && !same_value(&gv, &pv) {
        // Equal within the rounding of a 256-bit evaluation: a true zero difference shrinks at a
        // higher precision, a tiny real one (`\pi + 10^{-35}`) does not.
        match eval_pair(g, p, cx, &[], HIGH_PREC, false) {
            Ok((gh, ph, _)) if cancelled(&gv, &pv, &gh, &ph) => {}
            Ok(_) => return Ok(Cmp::new(false, Rule::Numeric)),
            Err(EvalErr::Limit(k)) => return Err(k),
            Err(_) => return Ok(Cmp::new(false, Rule::Undefined)),
        }
    }
    if !c.eq && !gi.has_dec && !pi.has_dec && near_zero_difference(&gv, &pv) {
        if let Ok((gh, ph, _)) = eval_pair(g, p, cx, &[], HIGH_PREC, false) {
            if cancelled(&gv, &pv, &gh, &ph) {
                c = Cmp::new(true, Rule::NumericZero);
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
        return Ok(Cmp::new(eq, if exact { Rule::Exact } else { Rule::Numeric }));
    }
    if values_close(gv, pv, cx.opts.eval_rel_tol) {
        return Ok(Cmp::new(true, Rule::DecimalTolerance));
    }
    // (3) rounded gold: the gold is a lone decimal with d >= 1 and the prediction is more precise.
    if let Some((gval, d)) = &gi.single_dec {
        if *d >= 1 && rounded_gold(gval, *d, pi, pv, cx)? {
            return Ok(Cmp::new(true, Rule::RoundedGold));
        }
    }
    if let Some((pval, d)) = &pi.single_dec {
        // A lone decimal prediction is compared at the precision it writes: the gold, rounded at
        // its last digit, must give exactly that literal (no tolerance may contradict a digit).
        // (4) rounded prediction: a gold without decimals that the prediction does not equal
        // (`\sqrt3`, `\frac13`) needs `min_decimal_digits_for_exact` significant digits.
        if !gi.has_dec {
            let digits = cx.opts.min_decimal_digits_for_exact.max(1);
            if significant_digits(pval, *d, cx.budget)? >= digits && rounds_value_to(gv, *d, pval, cx)? {
                return Ok(Cmp::new(true, Rule::RoundedPred));
            }
            return Ok(Cmp::new(false, Rule::DecimalTolerance));
        }
        // A decimal gold: within the decimal tolerance and consistent with every written digit.
        let ok = values_close(gv, pv, cx.opts.decimal_rel_tol) && rounds_value_to(gv, *d, pval, cx)?;
        return Ok(Cmp::new(ok, Rule::DecimalTolerance));
    }
    if gi.single_dec.is_some() && !pi.has_dec {
        // An exact prediction against a lone decimal gold: only the rounded-gold rule above.
        return Ok(Cmp::new(false, Rule::DecimalTolerance));
    }
    // Decimals inside expressions: the tolerance, but no looser than a written literal states.
    let tol = cx.opts.decimal_rel_tol.min(decimal_written_tol(gi, pi)).max(cx.opts.eval_rel_tol);
    if values_close(gv, pv, tol) {
        return Ok(Cmp::new(true, Rule::DecimalTolerance));
    }
    Ok(Cmp::new(false, Rule::DecimalTolerance))
}

/// Significant digits a decimal gold needs before a more precise decimal prediction may answer
/// it by rounding: `3.142` accepts `3.1416`, but a one- or two-digit decimal gold is more likely
/// exact than rounded (MATH-500's `4.5` is not answered by `4.54`, `0.7` not by `0.74`).
pub(crate) const MIN_ROUNDED_GOLD_DIGITS: u32 = 3;

/// The rounded-gold rule: the prediction `pv` (described by `pi`) is more precise than the lone
/// decimal gold `gval` with `d >= 1` decimals and rounds to it.
/// - A decimal prediction needs a gold of [`MIN_ROUNDED_GOLD_DIGITS`] significant digits. An exact
///   value with a terminating decimal expansion is a decimal too (`\frac{37}{50}` is `0.74`: the
///   same number gets the same verdict), with the decimals of that expansion.
/// - An exact value no decimal can write (`\pi`, `\frac13`, `\sqrt2`) only has to round to the
///   gold: any decimal gold of it is a rounding (`3.14` accepts `\pi`, `0.33` accepts `\frac13`).
fn rounded_gold(gval: &BigRational, d: u32, pi: &Info, pv: &Value, cx: &mut Cx) -> Result<bool, LimitKind> {
    let decimal_pred = match &pi.single_dec {
        Some((_, pd)) if *pd > d => true,
        Some(_) => return Ok(false),
        None if pi.has_dec => return Ok(false),
        None => match pv {
            // Huge exact values are no roundings of a short decimal gold: in doubt, not equal.
            Value::Exact(q) if super::number::bits(&q.re) > 4096 => return Ok(false),
            Value::Exact(q) if q.is_real() => match effective_decimals(&q.re, 0) {
                Some(pd) if pd > d => true,
                // A terminating value with no more decimals than the gold is not more precise.
                Some(_) => return Ok(false),
                None => false,
            },
            _ => false,
        },
    };
    if decimal_pred && significant_digits(gval, d, cx.budget)? < MIN_ROUNDED_GOLD_DIGITS {
        return Ok(false);
    }
    rounds_value_to(pv, d, gval, cx)
}

/// Whether the variable-free value `e` rounds to the lone decimal literal `lit` at its last
/// written digit, ends included (`\sqrt2` and `1.414`, `\frac13` and `0.3`), or, for a literal of
/// six or more significant digits, is within one unit of that digit (a tool's float
/// `1.4142135623730951`, off by one in its last digit): the link of a computation that ends in an
/// approximation holds. (`4.6 = 5` and `5.1 = 5` do not.) False when
/// `lit` is no such literal, `e` has no real value, or its value rests on an approximation of a
/// capped exact number.
pub(crate) fn near_literal(e: &Expr, lit: &Expr, cx: &mut Cx) -> Result<bool, LimitKind> {
    let Some((val, d)) = single_decimal(lit) else { return Ok(false) };
    if d > 400 {
        return Ok(false);
    }
    let v = {
        let mut ev = Evaluator::new(PREC, cx.budget, &mut cx.cc, &[]);
        let v = match ev.eval(e) {
            Ok(v) => v,
            Err(EvalErr::Limit(k)) => return Err(k),
            Err(_) => return Ok(false),
        };
        if ev.capped.is_some() {
            return Ok(false);
        }
        v
    };
    // |v - val| * 10^d <= half a unit (a rounding), or a whole unit for a literal of six or more
    // significant digits (a float printed by a tool may be off by one in its last digit).
    let scale = super::number::pow10(d, cx.budget)?;
    let m = &val * &scale;
    let one = if significant_digits(&val, d, cx.budget)? >= 6 {
        BigRational::from_integer(BigInt::from(1))
    } else {
        BigRational::new(BigInt::from(1), BigInt::from(2))
    };
    match &v {
        Value::Exact(q) if q.is_real() => {
            if super::number::bits(&q.re) > 4096 {
                return Ok(false);
            }
            let y = &q.re * &scale;
            Ok(y >= &m - &one && y <= &m + &one)
        }
        Value::Approx(c) if c.is_real() => {
            let y = c.re.mul(&rat_to_bf(&scale, PREC), PREC, RM);
            let lo = rat_to_bf(&(&m - &one), PREC);
            let hi = rat_to_bf(&(&m + &one), PREC);
            Ok(y.cmp(&lo).is_some_and(|o| o >= 0) && y.cmp(&hi).is_some_and(|o| o <= 0))
        }
        _ => Ok(false),
    }
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
        // Exact squares of big rationals cost a gcd each, quadratic in their size (a 65k-bit
        // integer took 100 ms, found by the fuzzer); at 256 bits the float test decides any
        // tolerance this function is given (>= 1e-25) the same way.
        if [&x.re, &x.im, &y.re, &y.im].into_iter().any(|q| super::number::bits(q) > 512) {
            return cf_close(&a.to_cf(PREC), &b.to_cf(PREC), tol);
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

/// A point of the sound free-variable test (see "Free symbols" in EQUIVALENCE.md): a seeded
/// pseudo-random non-integer rational for symbol `name` at point `k`. Point 0 is a small positive
/// value (most wrong answers differ there, where the double-precision screen is cheapest); the
/// others take either sign and magnitudes below 1, between 1 and 8, and between 8 and 100, and,
/// when `wide` (a step function or kink is present), also between 10^3 and 10^16: a step term
/// whose threshold lies beyond the usual range, `\lfloor x^2/10^6 \rfloor`, is then crossed too.
/// The denominator 997 is prime and never divides the numerator: no point is an integer.
pub fn sample_point(name: &str, k: usize, wide: bool) -> BigRational {
    let h = splitmix64(fnv1a(name.as_bytes()) ^ splitmix64(k as u64 ^ 0x9e37_79b9_7f4a_7c15));
    if k == 0 {
        return point_value(name, 0);
    }
    const D: u64 = 997;
    if wide && k % 4 == 1 {
        // At a step or kink the value may change at integers only: integers from -8 to 8, zero
        // among them at the first such point.
        let v = if k == 1 { 0 } else { (h % 17) as i64 - 8 };
        return BigRational::from_integer(BigInt::from(v));
    }
    let classes = if wide { 5 } else { 3 };
    let (lo, span) = match (h >> 40) % classes {
        0 => (1, D - 2),
        1 => (D + 1, 7 * D - 2),
        2 => (8 * D + 1, 92 * D - 2),
        _ => (D + 1, 9 * D - 2),
    };
    let mut num = lo + (h % span);
    if num.is_multiple_of(D) {
        num += 1;
    }
    let mut q = BigRational::new(BigInt::from(num), BigInt::from(D));
    if (h >> 40) % classes >= 3 {
        let e = 3 + ((h >> 48) % 14) as u32;
        q *= BigRational::from_integer(BigInt::from(10).pow(e));
    }
    if (h >> 63) & 1 == 1 {
        q = -q;
    }
    q
}

/// An integer point for factorials and binomials: 2 to 61, or 2 to 200 with a step function.
fn integer_point(name: &str, k: usize, wide: bool) -> BigRational {
    let h = splitmix64(fnv1a(name.as_bytes()) ^ splitmix64(k as u64 + 1));
    let range = if wide { 199 } else { 60 };
    BigRational::from_integer(BigInt::from(2 + (h % range) as i64))
}

/// The same number, bit for bit.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Exact(x), Value::Exact(y)) => x == y,
        _ => {
            let (x, y) = (a.to_cf(PREC), b.to_cf(PREC));
            x.sub(&y, PREC).norm_sqr(PREC).is_zero()
        }
    }
}

/// Whether a value has an imaginary part.
fn non_real(v: &Value) -> bool {
    match v {
        Value::Exact(q) => !q.is_real(),
        Value::Approx(c) => !c.is_real(),
    }
}

/// The written precision of the decimal literals of `e` as a relative tolerance: half a unit of
/// the last written digit over the literal's magnitude, for the most precise literal (`3.000002`
/// gives about 1.7e-7). `None` without decimal literals.
fn written_rel_tol(e: &Expr) -> Option<f64> {
    let mut tol: Option<f64> = None;
    visit(e, &mut |x| {
        if let Expr::Num(Number { value, decimals: Some(d) }) = x {
            let v = value.to_f64().unwrap_or(0.0).abs();
            let t = if v > 0.0 { 0.5 * 10f64.powi(-(*d as i32)) / v } else { f64::INFINITY };
            tol = Some(tol.map_or(t, |o| o.min(t)));
        }
    });
    tol
}

/// Equal when both sides agree at enough seeded points of both signs and many magnitudes (see
/// [`sample_point`]); points outside the real domain of a side are skipped, but a prediction that
/// is undefined or non-real where an everywhere-defined gold is real is not equal.
fn random_points(g: &Expr, p: &Expr, syms: &[String], (gs, ps): (Summary, Summary), cx: &mut Cx) -> Res {
    let (gi, pi) = (info(g, gs), info(p, ps));
    let mut gold_syms = Vec::new();
    free_symbols(g, &mut gold_syms);
    // A symbol of the prediction that the gold does not have must cancel exactly: no decimal
    // tolerance, and the step-function point count.
    let extra = syms.iter().any(|s| gold_syms.binary_search(s).is_err());
    let tol = if extra {
        cx.opts.eval_rel_tol
    } else if gi.has_dec || pi.has_dec {
        cx.opts.decimal_rel_tol.min(decimal_written_tol(&gi, &pi)).max(cx.opts.eval_rel_tol)
    } else {
        cx.opts.eval_rel_tol
    };
    let integer = gs.integer_function || ps.integer_function;
    let wide = gs.step || ps.step;
    // Values are real unless `i` is written: a non-real value then means a point outside the real
    // domain of that side.
    let real_mode = !gs.imaginary && !ps.imaginary;
    let needed = if wide || extra {
        POINTS_STEP
    } else if integer {
        POINTS + 1
    } else {
        POINTS
    };
    let mut agree = 0;
    let mut all_exact = true;
    let mut capped = None;
    // After a point outside a side's real domain, the next points are positive (where roots and
    // logarithms of the symbols are defined), so that a domain of one sign still gets its points.
    let mut positive_only = false;
    let mut confirmed = false;
    for k in 0..MAX_TRIES {
        // Exact agreement needs fewer points: a nonzero rational function of small degree vanishes
        // at few points.
        let target = if all_exact && !wide && !extra { POINTS_EXACT } else { needed };
        if agree >= target {
            break;
        }
        // Setting up a point (its rationals, the symbol table) costs about a microsecond a symbol.
        cx.budget.charge(4 + 20 * syms.len() as u64)?;
        let env: Vec<(String, BigRational)> = syms
            .iter()
            .map(|s| {
                let v = if integer { integer_point(s, k, wide) } else { sample_point(s, k, wide) };
                (s.clone(), if positive_only { v.abs() } else { v })
            })
            .collect();
        // A clear disagreement in double precision is a disagreement at 256 bits too (the screen
        // says "don't know" wherever the high-precision evaluation could branch differently).
        // Outside the real domain the high-precision path may skip the point instead, so the
        // screen is only trusted there at the first point (all positive).
        let (differ, nodes) = fast::differ_at(g, p, &env, tol, real_mode && k > 0);
        cx.budget.charge(nodes)?;
        if differ {
            return Ok(Cmp::new(false, Rule::RandomPoints));
        }
        let (gv, pv, cap) = {
            let mut ev = Evaluator::new(PREC, cx.budget, &mut cx.cc, &env);
            ev.real_domain = real_mode;
            let gv = ev.eval(g);
            let pv = ev.eval(p);
            let cap = ev.capped;
            match (gv, pv) {
                (Err(EvalErr::Limit(LimitKind::StepBudget)), _) | (_, Err(EvalErr::Limit(LimitKind::StepBudget))) => {
                    return Err(LimitKind::StepBudget)
                }
                // A huge point may leave the evaluator's range: skip it.
                (Err(EvalErr::Limit(_)), _) | (_, Err(EvalErr::Limit(_))) if k > 0 => continue,
                (Err(EvalErr::Limit(l)), _) | (_, Err(EvalErr::Limit(l))) => return Err(l),
                (Err(EvalErr::NotNumeric), _) | (_, Err(EvalErr::NotNumeric)) => {
                    return Ok(Cmp::new(false, Rule::NotNumeric))
                }
                (Ok(gv), Err(EvalErr::Undefined)) => {
                    // The prediction is undefined where a gold defined on all reals is defined
                    // (not at an integer point: a removable singularity such as `x/|x|` at 0
                    // does not decide).
                    let integer_point = integer || (wide && k % 4 == 1);
                    if real_mode && !gs.restricted && !non_real(&gv) && !integer_point {
                        return Ok(Cmp::new(false, Rule::Domain));
                    }
                    positive_only |= (gs.restricted || ps.restricted) && !integer_point;
                    continue;
                }
                (Err(EvalErr::Undefined), _) => {
                    positive_only |= (gs.restricted || ps.restricted) && !(integer || (wide && k % 4 == 1));
                    continue;
                }
                (Ok(gv), Ok(pv)) => (gv, pv, cap),
            }
        };
        if real_mode && (non_real(&gv) || non_real(&pv)) {
            // A prediction outside its real domain where a gold defined on all reals is real:
            // the prediction restricts the domain (`x + \sqrt{x} - \sqrt{x}` against `|x|`).
            if non_real(&pv) && !non_real(&gv) && !gs.restricted {
                return Ok(Cmp::new(false, Rule::Domain));
            }
            positive_only = true;
            continue;
        }
        capped = capped.or(cap);
        all_exact &= gv.exact().is_some() && pv.exact().is_some();
        if values_close(&gv, &pv, tol) {
            // Agreement within the rounding of the evaluation, once per comparison, must be a true
            // zero difference: `x^2 + 10^{-40} x` is not `x^2`.
            if !confirmed && tol < 1e-20 && !same_value(&gv, &pv) {
                confirmed = true;
                match eval_pair(g, p, cx, &env, HIGH_PREC, real_mode) {
                    Ok((gh, ph, _)) if cancelled(&gv, &pv, &gh, &ph) => {}
                    Ok(_) => return Ok(Cmp::new(false, Rule::RandomPoints)),
                    Err(EvalErr::Limit(k)) => return Err(k),
                    Err(_) => return Ok(Cmp::new(false, Rule::Undefined)),
                }
            }
            agree += 1;
            continue;
        }
        if tol < 1e-20 && near_zero_difference(&gv, &pv) {
            if let Ok((gh, ph, _)) = eval_pair(g, p, cx, &env, HIGH_PREC, real_mode) {
                if cancelled(&gv, &pv, &gh, &ph) {
                    agree += 1;
                    continue;
                }
            }
        }
        return Ok(Cmp::new(false, Rule::RandomPoints));
    }
    let target = if all_exact && !wide && !extra { POINTS_EXACT } else { needed };
    if agree < target {
        // Too few points inside both domains: in doubt, not equal.
        return Ok(Cmp::new(false, Rule::Undefined));
    }
    if wide || extra {
        // Steps, kinks and extra symbols: many more points in double precision, where the screen
        // is cheap (a few microseconds for all), so that a difference on a narrow band of values
        // (`\lfloor \frac{n^2}{4} \rfloor` against `\lfloor \frac{n^2+1}{4} \rfloor`) is found.
        for k in MAX_TRIES..MAX_TRIES + SCREEN_POINTS {
            let env: Vec<(String, BigRational)> = syms
                .iter()
                .map(|s| {
                    let v = if integer { integer_point(s, k, true) } else { sample_point(s, k, true) };
                    (s.clone(), if positive_only { v.abs() } else { v })
                })
                .collect();
            let (differ, nodes) = fast::differ_at(g, p, &env, tol, real_mode);
            cx.budget.charge(2 + nodes)?;
            if differ {
                return Ok(Cmp::new(false, Rule::RandomPoints));
            }
        }
    }
    if wide && !integer && step_crossings_differ(g, p, syms, tol, real_mode, cx)? {
        return Ok(Cmp::new(false, Rule::RandomPoints));
    }
    if let Some(k) = capped {
        return Err(k);
    }
    Ok(Cmp::new(true, Rule::RandomPoints))
}

/// The arguments at which a step or kink of `e` jumps, with the values they jump at: a floor or
/// ceiling at integers (`None`: the integers next to the argument's value), an absolute value,
/// max or min where its argument (or the difference of its two arguments) is zero.
fn step_arguments(e: &Expr, out: &mut Vec<(Expr, bool)>) {
    visit(e, &mut |x| match x {
        Expr::Func(Func::Floor | Func::Ceil, args) if args.len() == 1 => out.push((args[0].clone(), true)),
        Expr::Func(Func::Abs, args) if args.len() == 1 => out.push((args[0].clone(), false)),
        Expr::Func(Func::Other(name), args) if args.len() == 1 && super::eval::is_sign_name(name) => {
            out.push((args[0].clone(), false))
        }
        Expr::Func(Func::Max | Func::Min, args) => {
            for i in 0..args.len() {
                for j in i + 1..args.len() {
                    out.push((Expr::Add(vec![args[i].clone(), Expr::Neg(Box::new(args[j].clone()))]), false));
                }
            }
        }
        _ => {}
    });
}

/// Points on both sides of every jump: for each step argument `u` and each symbol, Newton's
/// method in double precision finds where `u` reaches the value it jumps at (the integers next to
/// its value at a seeded point, or zero), and both sides are screened just below and just above.
/// A difference confined to a narrow band (`\lfloor x + \frac{1}{1000} \rfloor` against
/// `\lfloor x \rfloor`) is found there. Only "certainly different" decides.
fn step_crossings_differ(
    g: &Expr,
    p: &Expr,
    syms: &[String],
    tol: f64,
    real_mode: bool,
    cx: &mut Cx,
) -> Result<bool, LimitKind> {
    let mut args = Vec::new();
    step_arguments(g, &mut args);
    step_arguments(p, &mut args);
    args.truncate(MAX_STEP_ARGS);
    for (u, integer_jumps) in &args {
        for si in 0..syms.len().min(3) {
            for base in 1..=2usize {
                let mut env: Vec<(String, BigRational)> =
                    syms.iter().map(|n| (n.clone(), sample_point(n, base, false))).collect();
                let eval_u = |env: &[(String, BigRational)], cx: &mut Cx| -> Result<Option<f64>, LimitKind> {
                    let mut sc = fast::Screen::new(env);
                    let v = sc.eval(u).and_then(|b| b.real_value());
                    cx.budget.charge(1 + sc.nodes)?;
                    Ok(v)
                };
                let Some(u0) = eval_u(&env, cx)? else { continue };
                let targets: Vec<f64> = if *integer_jumps { vec![u0.floor(), u0.floor() + 1.0] } else { vec![0.0] };
                for t in targets {
                    let Some(mut x) = env[si].1.to_f64() else { continue };
                    let mut found = false;
                    let mut slope = 0.0f64;
                    for _ in 0..NEWTON_STEPS {
                        let h = 1e-7 * x.abs().max(1.0);
                        let Some(q0) = BigRational::from_float(x) else { break };
                        let Some(q1) = BigRational::from_float(x + h) else { break };
                        env[si].1 = q0;
                        let Some(f0) = eval_u(&env, cx)? else { break };
                        env[si].1 = q1;
                        let Some(f1) = eval_u(&env, cx)? else { break };
                        let r = f0 - t;
                        if r.abs() <= 1e-11 * t.abs().max(1.0) {
                            found = true;
                            break;
                        }
                        let d = (f1 - f0) / h;
                        if d == 0.0 || !d.is_finite() {
                            break;
                        }
                        slope = d;
                        x -= r / d;
                        if !x.is_finite() || x.abs() > 1e15 {
                            break;
                        }
                    }
                    if !found || slope == 0.0 {
                        continue;
                    }
                    // Step so that the argument moves by about 1e-9 (relative): far beyond the
                    // screen's error bound, well inside any band a gamed answer could use.
                    let eps = (1e-9 * t.abs().max(1.0) / slope.abs()).max(1e-13 * x.abs().max(1e-3));
                    for side in [-1.0, 1.0] {
                        let Some(q) = BigRational::from_float(x + side * eps) else { continue };
                        env[si].1 = q;
                        let (differ, nodes) = fast::differ_at(g, p, &env, tol, real_mode);
                        cx.budget.charge(2 + nodes)?;
                        if differ {
                            return Ok(true);
                        }
                    }
                }
            }
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact values too large for `f64` are compared at 256 bits instead of by exact squares (each a
    /// gcd quadratic in the size); the verdicts are the exact ones.
    #[test]
    fn huge_exact_values_are_compared_in_floats() {
        let big = BigInt::from(3).pow(40_000u32);
        let v = |num: BigInt, den: i64| Value::Exact(Q::real(BigRational::new(num, BigInt::from(den))));
        let x = v(big.clone() * 3, 2);
        assert!(values_close(&x, &v(big.clone() * 3 + 1, 2), 1e-6));
        assert!(values_close(&x, &v(big.clone() * 3000001, 2_000_000), 1e-6), "relative 3.3e-7");
        assert!(!values_close(&x, &v(big.clone() * 3000007, 2_000_000), 1e-6), "relative 2.3e-6");
        assert!(!values_close(&x, &v(-big * 3, 2), 1e-6));
    }
}
