//! A gold polynomial equation in one symbol against a predicted list of its roots:
//! `x^2 = 4` against `x = \pm 2`, `x = 2, x = -2` or `-2, 2`.
//!
//! Sound, not complete: the prediction is accepted only when the equation is a polynomial of
//! degree `d` in the symbol (found from exact finite differences and confirmed at two rational
//! points), the prediction lists `d` distinct values, and each value makes the polynomial vanish.
//! Then the values are all the (complex) roots. A polynomial with complex or repeated roots is
//! therefore never matched by its real roots alone (`x^3 = 1` against `x = 1` is `NotEqual`).

use super::context::{Cmp, Cx};
use super::eval::{EvalErr, Evaluator, Value, PREC};
use super::read::{expand_pm, value_side};
use super::rule::Rule;
use super::scalar::{free_symbols, point_value, visit};
use crate::ast::{Expr, Number, RelOp};
use crate::limits::LimitKind;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};

/// Highest degree handled.
const MAX_DEGREE: usize = 8;
/// Most candidate roots considered.
const MAX_ROOTS: usize = 16;

/// `Some(verdict)` when `gold` is a one-symbol polynomial equation and `pred` lists values for
/// that symbol; `None` when the rule does not apply.
pub fn compare_roots(gold: &Expr, pred: &Expr, cx: &mut Cx) -> Result<Option<Cmp>, LimitKind> {
    let Expr::Relation { terms, ops } = gold else { return Ok(None) };
    if ops.len() != 1 || !matches!(ops[0], RelOp::Eq | RelOp::Approx) || terms.len() != 2 {
        return Ok(None);
    }
    let f = Expr::Add(vec![terms[0].clone(), Expr::Neg(Box::new(terms[1].clone()))]);
    let mut syms = Vec::new();
    free_symbols(&f, &mut syms);
    let [var] = syms.as_slice() else { return Ok(None) };
    let Some(roots) = candidates(pred, var) else { return Ok(None) };
    let Some(degree) = polynomial_degree(&f, var, cx)? else { return Ok(None) };
    let rule = Rule::EquationRoots;
    if roots.is_empty() || degree == 0 {
        return Ok(Some(Cmp::new(false, rule)));
    }
    // Distinct values only.
    let mut distinct: Vec<Expr> = Vec::new();
    for r in roots {
        let mut seen = false;
        for d in &distinct {
            if cx.compare(d, &r)?.eq {
                seen = true;
                break;
            }
        }
        if !seen {
            distinct.push(r);
        }
    }
    if distinct.len() != degree {
        return Ok(Some(Cmp::new(false, rule)));
    }
    let zero = Expr::Num(Number::int(0));
    for r in &distinct {
        let Some(fr) = substitute(&f, var, r, 0) else { return Ok(None) };
        if !cx.compare(&zero, &fr)?.eq {
            return Ok(Some(Cmp::new(false, rule)));
        }
    }
    Ok(Some(Cmp::new(true, rule)))
}

/// The values a prediction gives for `var`: `var = v` (with `\pm` expanded), a list or set of
/// such equations, or bare values.
fn candidates(pred: &Expr, var: &str) -> Option<Vec<Expr>> {
    let items: Vec<&Expr> = match pred {
        Expr::List(v) | Expr::Set(v) => v.iter().collect(),
        other => vec![other],
    };
    let mut out = Vec::new();
    for it in items {
        let value = match it {
            Expr::Relation { .. } => {
                let (name, value) = value_side(it)?;
                if !matches!(name, Expr::Sym(s) if s == var) {
                    return None;
                }
                value
            }
            other => other,
        };
        let mut has_symbol = false;
        visit(value, &mut |x| {
            if matches!(x, Expr::Sym(_) | Expr::Relation { .. } | Expr::List(_) | Expr::Set(_) | Expr::Tuple(_)) {
                has_symbol = true;
            }
        });
        if has_symbol {
            return None;
        }
        out.extend(expand_pm(value)?);
        if out.len() > MAX_ROOTS {
            return None;
        }
    }
    Some(out)
}

/// `e` with every `Sym(var)` replaced by `value`.
fn substitute(e: &Expr, var: &str, value: &Expr, depth: usize) -> Option<Expr> {
    if depth > 256 {
        return None;
    }
    let s = |x: &Expr| substitute(x, var, value, depth + 1);
    let b = |x: &Expr| s(x).map(Box::new);
    let v = |xs: &[Expr]| xs.iter().map(s).collect::<Option<Vec<_>>>();
    Some(match e {
        Expr::Sym(name) if name == var => value.clone(),
        Expr::Neg(a) => Expr::Neg(b(a)?),
        Expr::Add(xs) => Expr::Add(v(xs)?),
        Expr::Mul(xs) => Expr::Mul(v(xs)?),
        Expr::Div(x, y) => Expr::Div(b(x)?, b(y)?),
        Expr::Pow(x, y) => Expr::Pow(b(x)?, b(y)?),
        Expr::Root { index, radicand } => Expr::Root { index: b(index)?, radicand: b(radicand)? },
        Expr::Func(f, xs) => Expr::Func(f.clone(), v(xs)?),
        Expr::Log { base, arg } => Expr::Log { base: b(base)?, arg: b(arg)? },
        Expr::Factorial(a) => Expr::Factorial(b(a)?),
        Expr::Binom(x, y) => Expr::Binom(b(x)?, b(y)?),
        Expr::Percent(a) => Expr::Percent(b(a)?),
        Expr::Degrees(a) => Expr::Degrees(b(a)?),
        Expr::Quantity(a, u) => Expr::Quantity(b(a)?, *u),
        Expr::Num(_) | Expr::Sym(_) | Expr::Const(_) => e.clone(),
        _ => return None,
    })
}

/// Exact value of `f` at `var = x`, when rational.
fn value_at(f: &Expr, var: &str, x: BigRational, cx: &mut Cx) -> Result<Option<BigRational>, LimitKind> {
    let env = [(var.to_string(), x)];
    let mut ev = Evaluator::new(PREC, cx.budget, &mut cx.cc, &env);
    match ev.eval(f) {
        Ok(Value::Exact(q)) if q.is_real() && ev.capped.is_none() => Ok(Some(q.re)),
        Ok(_) | Err(EvalErr::Undefined) | Err(EvalErr::NotNumeric) => Ok(None),
        Err(EvalErr::Limit(k)) => Err(k),
    }
}

/// The degree of `f` as a polynomial in `var` with rational coefficients, or `None` when it is
/// not one (of degree at most [`MAX_DEGREE`]).
fn polynomial_degree(f: &Expr, var: &str, cx: &mut Cx) -> Result<Option<usize>, LimitKind> {
    let n = MAX_DEGREE + 2;
    let mut values = Vec::with_capacity(n);
    for k in 0..n {
        match value_at(f, var, BigRational::from_integer(BigInt::from(k)), cx)? {
            Some(v) => values.push(v),
            None => return Ok(None),
        }
    }
    // Leading forward differences: diffs[k] = Δ^k f(0).
    let mut diffs = Vec::with_capacity(n);
    let mut row = values;
    while !row.is_empty() {
        cx.budget.charge(row.len() as u64)?;
        diffs.push(row[0].clone());
        row = row.windows(2).map(|w| &w[1] - &w[0]).collect();
    }
    let Some(degree) = diffs.iter().rposition(|d| !d.is_zero()) else { return Ok(Some(0)) };
    if degree > MAX_DEGREE {
        return Ok(None);
    }
    // Newton's forward formula must reproduce f at two non-integer points.
    for k in 0..2 {
        let t = point_value(var, k);
        let Some(actual) = value_at(f, var, t.clone(), cx)? else { return Ok(None) };
        let mut predicted = BigRational::zero();
        let mut binom = BigRational::one();
        for (j, d) in diffs.iter().enumerate().take(degree + 1) {
            if j > 0 {
                let jj = BigRational::from_integer(BigInt::from(j));
                binom = binom * (&t - &jj + BigRational::one()) / jj;
            }
            predicted += &binom * d;
        }
        if predicted != actual {
            return Ok(None);
        }
    }
    Ok(Some(degree))
}
