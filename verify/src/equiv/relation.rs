//! Equations and inequalities: an equation `x = 5` against a value, equations with the same
//! solution set (`y = 2x+1` vs `2x - y + 1 = 0`), inequalities as intervals (`1 < x \le 3` vs
//! `(1, 3]`) and inequalities with proportional sides (`2x > 6` vs `x > 3`).

use super::context::{Cmp, Cx, Res};
use super::eval::{EvalErr, Evaluator, Value, PREC};
use super::fast;
use super::read::{as_interval, bounded_var, closed_scalar, exact_index, is_eq, is_name, mentions_var, value_side};
use super::rule::Rule;
use super::scalar::{free_symbols, has_decimal, sample_point, values_close, Summary};
use crate::ast::{Expr, RelOp};
use num_rational::BigRational;
use num_traits::Signed;

/// Points tried at most (points outside a side's domain are skipped).
const MAX_TRIES: usize = 48;
/// Agreeing points required for proportional sides.
const POINTS: usize = 8;
/// Agreeing points required when either side has a step or a kink (floor, |.|, max, ...), over the
/// wider range of magnitudes the scalar test samples (`scalar::sample_point`): both signs, values
/// below 1 and up to 10^16, integers, so that `x + |y| = 1` is not `x + y = 1`.
const POINTS_STEP: usize = 16;

/// A predicted equation or chain of equalities (`\frac{3}{4} \cdot 12 = 9`, `x = 5 + 1 = 6`): its
/// last term is the answer, or the exact value its trailing decimals approximate. (Only for
/// predictions: a gold `7 = 11a + c` does not mean `11a + c`.)
fn computed_value(e: &Expr) -> Option<&Expr> {
    let Expr::Relation { terms, ops } = e else { return None };
    if ops.is_empty() || !ops.iter().all(|o| is_eq(*o)) || terms.len() != ops.len() + 1 {
        return None;
    }
    Some(exact_index(terms, ops).map_or(terms.last()?, |j| &terms[j]))
}

/// The value a relation states when it is read as a value: the named value (`x = 5`), for a
/// gold also a variable-free value followed by its decimal approximation
/// (`\frac{1 + \sqrt{97}}{8} \approx 1.36` is the exact value), for a prediction any chain of
/// equalities (its last term, or the exact value its trailing decimals approximate).
pub(super) fn stated_value(e: &Expr, is_gold: bool) -> Option<&Expr> {
    if let Some((_, v)) = value_side(e) {
        return (is_gold || !states_a_condition(e, v)).then_some(v);
    }
    if is_gold {
        let Expr::Relation { terms, ops } = e else { return None };
        if ops.iter().all(|o| is_eq(*o)) && terms.len() == ops.len() + 1 {
            return exact_index(terms, ops).map(|j| &terms[j]);
        }
        return None;
    }
    computed_value(e).filter(|v| !states_a_condition(e, v))
}

/// Whether a predicted chain of equalities holds, besides its value `v`, a term with an unknown
/// that is not a plain name (`|k| = 5`, `k^2 = 9`, `x + 2 = 18`, `2n = 12`): an equation on an
/// expression of the unknown is a condition it satisfies, not its value. A name (`x = 5`,
/// `f(3) = 5`, `AB = 5`) and a computation without unknowns (`\frac34 \cdot 12 = 9`) state it.
fn states_a_condition(e: &Expr, v: &Expr) -> bool {
    let Expr::Relation { terms, .. } = e else { return false };
    terms.iter().any(|t| !std::ptr::eq(t, v) && !is_name(t) && Summary::of(t).symbols)
}

fn diff(a: &Expr, b: &Expr) -> Expr {
    Expr::Add(vec![a.clone(), Expr::Neg(Box::new(b.clone()))])
}

/// Two relations: as intervals of the same variable, as values of the same name, a gold solved for
/// a variable against a prediction solved for it, orderings term by term, else proportional sides.
pub(super) fn compare_relations(g: &Expr, p: &Expr, cx: &mut Cx) -> Res {
    if let (Some((gv, giv)), Some((pv, piv))) = (as_interval(g), as_interval(p)) {
        if gv != pv {
            return Ok(Cmp::new(false, Rule::InequalityInterval));
        }
        return cx.compare(&giv, &piv).map(|c| c.with_rule_if_eq(Rule::InequalityInterval));
    }
    if let (Some((gn, gval)), Some((pn, pval))) = (value_side(g), value_side(p)) {
        if gn == pn {
            return cx.compare(gval, pval).map(|c| c.with_rule_if_eq(Rule::EquationValue));
        }
    }
    // A gold solved for one variable (`x > 3`, `x = 3`) is answered by a prediction solved for it
    // (`3 < x`, `x = \frac{6}{2}`), not by a restatement of the condition (`3x + 1 > 10`).
    if let Some(v) = solved_for(g) {
        if !isolates(p, &v) {
            return Ok(Cmp::new(false, Rule::UnsolvedRelation));
        }
    }
    // Orderings (`b < a < d < c`, `\tan\frac{7\pi}{5} > \sin\frac{2\pi}{5}`): term by term, a
    // chain read backwards (`c > d > a > b`) being the same ordering.
    if let (Some((gt, go)), Some((pt, po))) = (ordering(g), ordering(p)) {
        let long = gt.len() > 2 || gt.iter().chain(pt.iter()).all(|t| closed_scalar(t));
        if gt.len() == pt.len() && go == po {
            let mut all = true;
            for (a, b) in gt.iter().zip(&pt) {
                if !cx.compare(a, b)?.eq {
                    all = false;
                    break;
                }
            }
            if all {
                return Ok(Cmp::new(true, Rule::Ordering));
            }
        }
        if long {
            return Ok(Cmp::new(false, Rule::Ordering));
        }
    }
    let (Expr::Relation { terms: gt, ops: go }, Expr::Relation { terms: pt, ops: po }) = (g, p) else {
        return Ok(Cmp::new(false, Rule::Relation));
    };
    if go.len() != 1 || po.len() != 1 || gt.len() != 2 || pt.len() != 2 {
        return Ok(Cmp::new(false, Rule::Relation));
    }
    let (gop, pop) = (go[0], po[0]);
    // Normal form: `d op 0` with op one of =, !=, >, >=.
    let normal = |op: RelOp, l: &Expr, r: &Expr| -> (RelOp, Expr) {
        match op {
            RelOp::Approx => (RelOp::Eq, diff(l, r)),
            RelOp::Lt => (RelOp::Gt, diff(r, l)),
            RelOp::Le => (RelOp::Ge, diff(r, l)),
            other => (other, diff(l, r)),
        }
    };
    let (gop, gd) = normal(gop, &gt[0], &gt[1]);
    let (pop, pd) = normal(pop, &pt[0], &pt[1]);
    if gop != pop {
        return Ok(Cmp::new(false, Rule::Relation));
    }
    let positive_only = matches!(gop, RelOp::Gt | RelOp::Ge);
    proportional(&gd, &pd, positive_only, cx)
}

/// An ordering chain as its terms and operators in increasing order: `a < b \le c` as written,
/// `c \ge b > a` read backwards. `None` for equations and mixed directions.
fn ordering(e: &Expr) -> Option<(Vec<&Expr>, Vec<RelOp>)> {
    let Expr::Relation { terms, ops } = e else { return None };
    if terms.len() != ops.len() + 1 || ops.is_empty() {
        return None;
    }
    if ops.iter().all(|o| matches!(o, RelOp::Lt | RelOp::Le)) {
        return Some((terms.iter().collect(), ops.clone()));
    }
    if ops.iter().all(|o| matches!(o, RelOp::Gt | RelOp::Ge)) {
        let flipped = ops.iter().rev().map(|o| if *o == RelOp::Gt { RelOp::Lt } else { RelOp::Le }).collect();
        return Some((terms.iter().rev().collect(), flipped));
    }
    None
}

/// The variable a gold relation is solved for: one variable (or function value) alone on one
/// side and a variable-free value or bound on the other (`x = 3`, `x > 3`, `3 < x`, `x \ne 2`,
/// `-1 \le x < 2`). A relation between variables (`y = 2x + 1`, `x > a`) is not a solution.
fn solved_for(e: &Expr) -> Option<String> {
    let Expr::Relation { terms, ops } = e else { return None };
    match (terms.as_slice(), ops.as_slice()) {
        ([a, b], [_]) => match (bounded_var(a), bounded_var(b)) {
            (Some(v), _) if closed_scalar(b) => Some(v),
            (_, Some(v)) if closed_scalar(a) => Some(v),
            _ => None,
        },
        ([a, m, b], [_, _]) if closed_scalar(a) && closed_scalar(b) && as_interval(e).is_some() => bounded_var(m),
        _ => None,
    }
}

/// Whether a relation has the variable `var` alone on one side and no `var` elsewhere: an
/// inequality that reads as an interval of it, `var = value` (also a chain `var = a = b`),
/// `value = var`, `var \ne value`.
fn isolates(e: &Expr, var: &str) -> bool {
    if let Some((v, _)) = as_interval(e) {
        return v == var;
    }
    let Expr::Relation { terms, ops } = e else { return false };
    let is_var = |t: &Expr| bounded_var(t).is_some_and(|v| v == var);
    let free_of = |t: &Expr, named: &Expr| !mentions_var(t, named);
    match (terms.as_slice(), ops.as_slice()) {
        ([a, b], [_]) => (is_var(a) && free_of(b, a)) || (is_var(b) && free_of(a, b)),
        ([first, rest @ ..], _) if ops.iter().all(|o| is_eq(*o)) => {
            is_var(first) && rest.iter().all(|t| free_of(t, first))
        }
        _ => false,
    }
}

/// Whether `a = c * b` for one nonzero constant `c` (positive when `positive_only`), checked at
/// seeded random points.
fn proportional(a: &Expr, b: &Expr, positive_only: bool, cx: &mut Cx) -> Res {
    let rule = Rule::RelationProportional;
    let mut syms = Vec::new();
    free_symbols(a, &mut syms);
    free_symbols(b, &mut syms);
    if syms.is_empty() {
        return Ok(Cmp::new(false, rule));
    }
    let tol = if has_decimal(a) || has_decimal(b) { cx.opts.decimal_rel_tol } else { cx.opts.eval_rel_tol };
    let wide = Summary::of(a).step || Summary::of(b).step;
    let needed = if wide { POINTS_STEP } else { POINTS };
    // Double-precision screen: when the ratios at the first two points are defined there and
    // certainly differ, the high-precision loop below would stop at the second point anyway.
    let env_at = |k: usize| -> Vec<(String, BigRational)> {
        syms.iter().map(|s| (s.clone(), sample_point(s, k, wide))).collect()
    };
    let (r0, n0) = fast::ratio_at(a, b, &env_at(0));
    cx.budget.charge(n0)?;
    if let Some(r0) = r0 {
        let (r1, n1) = fast::ratio_at(a, b, &env_at(1));
        cx.budget.charge(n1)?;
        if r1.is_some_and(|r1| fast::clearly_different(&r0, &r1, tol)) {
            return Ok(Cmp::new(false, rule));
        }
    }
    let mut ratio: Option<Value> = None;
    // The screened ratio at the point where `ratio` was taken.
    let mut ratio_f64 = None;
    let mut agree = 0;
    let mut capped = None;
    for k in 0..MAX_TRIES {
        if agree >= needed {
            break;
        }
        cx.budget.charge(1)?;
        let env = env_at(k);
        let (rk, nk) = fast::ratio_at(a, b, &env);
        cx.budget.charge(nk)?;
        if let (Some(r0), Some(rk)) = (&ratio_f64, &rk) {
            if fast::clearly_different(r0, rk, tol) {
                return Ok(Cmp::new(false, rule));
            }
        }
        let mut ev = Evaluator::new(PREC, cx.budget, &mut cx.cc, &env);
        let r = ev.eval(a).and_then(|va| ev.eval(b).map(|vb| (va, vb)));
        let (va, vb) = match r {
            Ok(v) => v,
            Err(EvalErr::Limit(k)) => return Err(k),
            Err(EvalErr::Undefined) => continue,
            Err(EvalErr::NotNumeric) => return Ok(Cmp::new(false, rule)),
        };
        let q = match ev.divide(va, vb) {
            Ok(q) => q,
            Err(EvalErr::Limit(k)) => return Err(k),
            Err(_) => return Ok(Cmp::new(false, rule)),
        };
        capped = capped.or(ev.capped);
        match &ratio {
            None => {
                let ok = match &q {
                    Value::Exact(x) => !x.is_zero() && (!positive_only || (x.is_real() && x.re.is_positive())),
                    Value::Approx(c) => {
                        !(c.re.is_zero() && c.im.is_zero()) && (!positive_only || (c.is_real() && c.re.is_positive()))
                    }
                };
                if !ok {
                    return Ok(Cmp::new(false, rule));
                }
                ratio = Some(q);
                ratio_f64 = rk;
            }
            Some(r0) => {
                if !values_close(r0, &q, tol) {
                    return Ok(Cmp::new(false, rule));
                }
            }
        }
        agree += 1;
    }
    // Too few points inside both sides' domains: in doubt, not equal.
    if agree < needed {
        return Ok(Cmp::new(false, rule));
    }
    if let Some(k) = capped {
        return Err(k);
    }
    Ok(Cmp::new(true, rule))
}
