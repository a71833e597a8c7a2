//! Equations and inequalities: an equation `x = 5` against a value, equations with the same
//! solution set (`y = 2x+1` vs `2x - y + 1 = 0`), inequalities as intervals (`1 < x \le 3` vs
//! `(1, 3]`) and inequalities with proportional sides (`2x > 6` vs `x > 3`).

use super::eval::{EvalErr, Evaluator, Value, PREC};
use super::fast;
use super::scalar::{free_symbols, has_decimal, sample_point, values_close, Summary};
use super::{compare as compare_any, Cmp, Cx, Res};
use crate::ast::{Constant, Expr, Func, RelOp};
use crate::limits::LimitKind;
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

fn is_eq(op: RelOp) -> bool {
    matches!(op, RelOp::Eq | RelOp::Approx)
}

/// What may stand on the named side of `name = value`: a symbol, a user function application
/// `f(x)`, a text label (`\text{Revenue} = 5`), a product of symbols (`AB`), `|AB|`, or a tuple
/// of names (`(p, q)`).
pub(crate) fn is_name(e: &Expr) -> bool {
    match e {
        Expr::Sym(_) | Expr::Text(_) | Expr::Func(Func::Other(_), _) => true,
        Expr::Mul(v) => !v.is_empty() && v.iter().all(|x| matches!(x, Expr::Sym(_))),
        // A ratio of names: `P_1 : P_2 = 3 : 8`, `\frac{AM}{MB} = \frac{2}{\sqrt5}`, `x:y = 2`.
        Expr::Div(a, b) => is_plain_name(a) && is_plain_name(b),
        // `|AB|`, a length; `|k|` of one unknown is a condition on it (`|k| = 5` is `k = \pm 5`).
        Expr::Func(Func::Abs, v) => v.len() == 1 && is_name(&v[0]) && !matches!(v[0], Expr::Sym(_)),
        Expr::Tuple(v) => !v.is_empty() && v.iter().all(is_name),
        _ => false,
    }
}

/// A symbol or a product of symbols (`x`, `P_1`, `AM`): what may stand in a ratio of names.
fn is_plain_name(e: &Expr) -> bool {
    match e {
        Expr::Sym(_) => true,
        Expr::Mul(v) => !v.is_empty() && v.iter().all(|x| matches!(x, Expr::Sym(_))),
        _ => false,
    }
}

/// For `x = v`, `f(x) = v`, `v = x` and chains of equalities `x = a = v` (also `1 = y = 0`,
/// whose last term is taken as the final value): the named side and the value side. A chain that
/// ends in decimal approximations of a variable-free value (`x = \sqrt2 \approx 1.414`) has that
/// value as its value (see [`exact_index`]).
pub fn value_side(e: &Expr) -> Option<(&Expr, &Expr)> {
    let Expr::Relation { terms, ops } = e else { return None };
    if ops.is_empty() || !ops.iter().all(|o| is_eq(*o)) || terms.len() != ops.len() + 1 {
        return None;
    }
    let first = &terms[0];
    let last = &terms[terms.len() - 1];
    if is_name(first) || terms.len() > 2 {
        let value = exact_index(terms, ops).map_or(last, |j| &terms[j]);
        return Some((first, value));
    }
    if terms.len() == 2 && matches!(last, Expr::Sym(_)) {
        return Some((last, first));
    }
    None
}

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
fn stated_value(e: &Expr, is_gold: bool) -> Option<&Expr> {
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

/// A lone decimal literal, possibly negated (`1.36`, `-0.5`).
fn is_decimal_literal(e: &Expr) -> bool {
    match e {
        Expr::Num(n) => n.decimals.is_some(),
        Expr::Neg(a) => matches!(&**a, Expr::Num(n) if n.decimals.is_some()),
        _ => false,
    }
}

/// A variable-free scalar term (no symbol, user function, `\pm`, text or structure): a link
/// between two of them is a statement about numbers, true or false.
pub(crate) fn closed_scalar(e: &Expr) -> bool {
    if matches!(e, Expr::Text(_)) || super::structure::is_structure(e) || matches!(e, Expr::Relation { .. }) {
        return false;
    }
    let s = Summary::of(e);
    !s.symbols && !s.user_function && !s.plus_minus
}

/// In a chain of equalities whose last terms are decimal literals that follow a variable-free
/// term that is not one (`\frac{1 + \sqrt{97}}{8} \approx 1.36`, `x = \sqrt2 = 1.414`), the
/// index of that term: the decimals are its roundings (the chain's links are checked by
/// [`false_link`]), and the value stated is the exact one.
fn exact_index(terms: &[Expr], ops: &[RelOp]) -> Option<usize> {
    let mut k = terms.len().checked_sub(1)?;
    if k == 0 || !is_decimal_literal(&terms[k]) {
        return None;
    }
    while k > 0 && is_eq(ops[k - 1]) && is_decimal_literal(&terms[k - 1]) {
        k -= 1;
    }
    let j = k.checked_sub(1)?;
    (is_eq(ops[j]) && closed_scalar(&terms[j])).then_some(j)
}

/// Whether `a = b`, two variable-free terms, holds: they are equal (either one read as the gold,
/// so a decimal side may be the rounding the decimal rules accept), or one is a lone decimal
/// literal that the other rounds to (`\sqrt2 = 1.414`, `\frac13 \approx 0.3`; with six or more
/// digits within one unit of the last, a tool's `\sqrt2 = 1.4142135623730951`). `7 = 5`,
/// `4.6 = 5`, `5.1 = 5` and `\pi = 3` are false.
fn link_holds(a: &Expr, b: &Expr, cx: &mut Cx) -> Result<bool, LimitKind> {
    if compare_any(a, b, cx)?.eq || compare_any(b, a, cx)?.eq {
        return Ok(true);
    }
    Ok(super::scalar::near_literal(a, b, cx)? || super::scalar::near_literal(b, a, cx)?)
}

/// A relation with a false link between variable-free terms: `4 = 3`, `2 + 2 = 5`,
/// `x = 7 = 5`. It states something false, so it answers nothing, whatever its last term is
/// (`7 = 5` is not the answer 5). Links with a variable (`x = 5 + 1`) are not judged here.
pub(crate) fn false_link(e: &Expr, cx: &mut Cx) -> Result<bool, LimitKind> {
    let Expr::Relation { terms, ops } = e else { return Ok(false) };
    for (k, op) in ops.iter().enumerate() {
        let (Some(a), Some(b)) = (terms.get(k), terms.get(k + 1)) else { break };
        if is_eq(*op) && closed_scalar(a) && closed_scalar(b) && !link_holds(a, b, cx)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// [`false_link`] for a relation or any relation item of a list, set or tuple.
pub(crate) fn states_falsehood(e: &Expr, cx: &mut Cx) -> Result<bool, LimitKind> {
    match e {
        Expr::Relation { .. } => false_link(e, cx),
        Expr::List(v) | Expr::Set(v) | Expr::Tuple(v) => {
            for it in v {
                if matches!(it, Expr::Relation { .. }) && false_link(it, cx)? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        _ => Ok(false),
    }
}

fn neg_inf() -> Expr {
    Expr::Neg(Box::new(Expr::Const(Constant::Infinity)))
}

fn inf() -> Expr {
    Expr::Const(Constant::Infinity)
}

fn interval(lo: Expr, hi: Expr, lo_closed: bool, hi_closed: bool) -> Expr {
    Expr::Interval { lo: Box::new(lo), hi: Box::new(hi), lo_closed, hi_closed }
}

/// The variable an inequality bounds: a symbol `x`, or a function value `g(t)`, `f(x)` (the
/// range of a function), named by its rendering. `None` for anything else.
fn bounded_var(e: &Expr) -> Option<String> {
    match e {
        Expr::Sym(v) => Some(v.clone()),
        Expr::Func(Func::Other(_), args) if !args.is_empty() => Some(e.to_string()),
        _ => None,
    }
}

/// Whether `e` depends on the bounded variable `var` (any of its symbols, or the same call).
fn mentions_var(e: &Expr, var: &Expr) -> bool {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    free_symbols(var, &mut a);
    free_symbols(e, &mut b);
    let mut same_call = false;
    if let Expr::Func(Func::Other(name), _) = var {
        super::scalar::visit(e, &mut |x| {
            if let Expr::Func(Func::Other(n), _) = x {
                same_call |= n == name;
            }
        });
    }
    same_call || a.iter().any(|s| b.contains(s))
}

/// `x > 3` as `("x", (3, \infty))`, `1 < x \le 3` as `("x", (1, 3])`.
pub fn as_interval(e: &Expr) -> Option<(String, Expr)> {
    if let Some(r) = abs_as_set(e) {
        return Some(r);
    }
    let Expr::Relation { terms, ops } = e else { return None };
    let less = |o: RelOp| matches!(o, RelOp::Lt | RelOp::Le);
    let greater = |o: RelOp| matches!(o, RelOp::Gt | RelOp::Ge);
    let closed = |o: RelOp| matches!(o, RelOp::Le | RelOp::Ge);
    match (terms.as_slice(), ops.as_slice()) {
        ([a, b], [op]) if less(*op) || greater(*op) => {
            if let Some(v) = bounded_var(a) {
                if !mentions_var(b, a) {
                    let iv = if less(*op) {
                        interval(neg_inf(), b.clone(), false, closed(*op))
                    } else {
                        interval(b.clone(), inf(), closed(*op), false)
                    };
                    return Some((v, iv));
                }
            }
            if let Some(v) = bounded_var(b) {
                if !mentions_var(a, b) {
                    let iv = if less(*op) {
                        interval(a.clone(), inf(), closed(*op), false)
                    } else {
                        interval(neg_inf(), a.clone(), false, closed(*op))
                    };
                    return Some((v, iv));
                }
            }
            None
        }
        ([a, m, b], [o1, o2]) if bounded_var(m).is_some() && !mentions_var(a, m) && !mentions_var(b, m) => {
            let v = bounded_var(m)?;
            if less(*o1) && less(*o2) {
                Some((v, interval(a.clone(), b.clone(), closed(*o1), closed(*o2))))
            } else if greater(*o1) && greater(*o2) {
                Some((v, interval(b.clone(), a.clone(), closed(*o2), closed(*o1))))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// A constant written without a sign or a symbol (`1`, `\frac32`, `\sqrt2`, `2\pi`): certainly
/// nonnegative, so it may bound an absolute value.
fn nonnegative_constant(e: &Expr) -> bool {
    match e {
        Expr::Num(_) | Expr::Const(Constant::Pi | Constant::E) => true,
        Expr::Div(a, b) => nonnegative_constant(a) && nonnegative_constant(b),
        Expr::Mul(v) | Expr::Add(v) => !v.is_empty() && v.iter().all(nonnegative_constant),
        Expr::Root { index, radicand } => matches!(**index, Expr::Num(_)) && nonnegative_constant(radicand),
        Expr::Pow(a, b) => nonnegative_constant(a) && nonnegative_constant(b),
        _ => false,
    }
}

/// An inequality on `|v|` with nonnegative constant bounds as a set of reals:
/// `a \le |v| \le b` is `[-b, -a] \cup [a, b]`, `|v| < b` is `(-b, b)`, `|v| > a` is
/// `(-\infty, -a) \cup (a, \infty)`.
fn abs_as_set(e: &Expr) -> Option<(String, Expr)> {
    let Expr::Relation { terms, ops } = e else { return None };
    let abs_var = |x: &Expr| match x {
        Expr::Func(Func::Abs, v) if v.len() == 1 => bounded_var(&v[0]),
        _ => None,
    };
    let neg = |x: &Expr| Expr::Neg(Box::new(x.clone()));
    let closed = |o: RelOp| matches!(o, RelOp::Le | RelOp::Ge);
    // (lower bound, its closedness), (upper bound, its closedness)
    let (var, lo, hi) = match (terms.as_slice(), ops.as_slice()) {
        ([a, m, b], [o1, o2]) if matches!(o1, RelOp::Lt | RelOp::Le) && matches!(o2, RelOp::Lt | RelOp::Le) => {
            (abs_var(m)?, Some((a, closed(*o1))), Some((b, closed(*o2))))
        }
        ([a, m, b], [o1, o2]) if matches!(o1, RelOp::Gt | RelOp::Ge) && matches!(o2, RelOp::Gt | RelOp::Ge) => {
            (abs_var(m)?, Some((b, closed(*o2))), Some((a, closed(*o1))))
        }
        ([m, b], [o]) if abs_var(m).is_some() && matches!(o, RelOp::Lt | RelOp::Le) => {
            (abs_var(m)?, None, Some((b, closed(*o))))
        }
        ([m, a], [o]) if abs_var(m).is_some() && matches!(o, RelOp::Gt | RelOp::Ge) => {
            (abs_var(m)?, Some((a, closed(*o))), None)
        }
        _ => return None,
    };
    if lo.is_some_and(|(x, _)| !nonnegative_constant(x)) || hi.is_some_and(|(x, _)| !nonnegative_constant(x)) {
        return None;
    }
    let set = match (lo, hi) {
        (None, Some((b, c))) => interval(neg(b), b.clone(), c, c),
        (Some((a, c)), None) => {
            Expr::Union(vec![interval(neg_inf(), neg(a), false, c), interval(a.clone(), inf(), c, false)])
        }
        (Some((a, ca)), Some((b, cb))) => {
            Expr::Union(vec![interval(neg(b), neg(a), cb, ca), interval(a.clone(), b.clone(), ca, cb)])
        }
        (None, None) => return None,
    };
    Some((var, set))
}

/// Compare when at least one side is a relation.
pub fn compare(g: &Expr, p: &Expr, cx: &mut Cx) -> Res {
    let g_rel = matches!(g, Expr::Relation { .. });
    let p_rel = matches!(p, Expr::Relation { .. });
    // A prediction that states something false (`7 = 5`, `2 + 2 = 5`) answers nothing.
    if states_falsehood(p, cx)? {
        return Ok(Cmp::new(false, "false_equation"));
    }
    // A relation against inequalities joined by "and" (an intersection): both as sets of reals
    // in the same variable.
    if super::sets::involves_intersection(g) || super::sets::involves_intersection(p) {
        return super::sets::compare_intersections(g, p, cx);
    }
    // A gold polynomial equation against the list of its roots (`x^2 = 4` vs `x = \pm 2`).
    if g_rel && value_side(g).is_none() {
        if let Some(c) = super::roots::compare_roots(g, p, cx)? {
            return Ok(c);
        }
    }
    if g_rel && p_rel {
        return compare_relations(g, p, cx);
    }
    let (rel, other, rel_is_gold) = if g_rel { (g, p, true) } else { (p, g, false) };
    let ordered =
        |a: &Expr, b: &Expr, cx: &mut Cx| if rel_is_gold { compare_any(a, b, cx) } else { compare_any(b, a, cx) };
    if let Some(value) = stated_value(rel, rel_is_gold) {
        return ordered(value, other, cx).map(|c| c.with_rule_if_eq("equation_value"));
    }
    if let Some((_, iv)) = as_interval(rel) {
        if matches!(other, Expr::Interval { .. } | Expr::Union(_) | Expr::Tuple(_)) {
            return ordered(&iv, other, cx).map(|c| c.with_rule_if_eq("inequality_interval"));
        }
    }
    Ok(Cmp::new(false, "relation"))
}

fn diff(a: &Expr, b: &Expr) -> Expr {
    Expr::Add(vec![a.clone(), Expr::Neg(Box::new(b.clone()))])
}

fn compare_relations(g: &Expr, p: &Expr, cx: &mut Cx) -> Res {
    if let (Some((gv, giv)), Some((pv, piv))) = (as_interval(g), as_interval(p)) {
        if gv != pv {
            return Ok(Cmp::new(false, "inequality_interval"));
        }
        return compare_any(&giv, &piv, cx).map(|c| c.with_rule_if_eq("inequality_interval"));
    }
    if let (Some((gn, gval)), Some((pn, pval))) = (value_side(g), value_side(p)) {
        if gn == pn {
            return compare_any(gval, pval, cx).map(|c| c.with_rule_if_eq("equation_value"));
        }
    }
    // A gold solved for one variable (`x > 3`, `x = 3`) is answered by a prediction solved for it
    // (`3 < x`, `x = \frac{6}{2}`), not by a restatement of the condition (`3x + 1 > 10`).
    if let Some(v) = solved_for(g) {
        if !isolates(p, &v) {
            return Ok(Cmp::new(false, "unsolved_relation"));
        }
    }
    // Orderings (`b < a < d < c`, `\tan\frac{7\pi}{5} > \sin\frac{2\pi}{5}`): term by term, a
    // chain read backwards (`c > d > a > b`) being the same ordering.
    if let (Some((gt, go)), Some((pt, po))) = (ordering(g), ordering(p)) {
        let long = gt.len() > 2 || gt.iter().chain(pt.iter()).all(|t| closed_scalar(t));
        if gt.len() == pt.len() && go == po {
            let mut all = true;
            for (a, b) in gt.iter().zip(&pt) {
                if !compare_any(a, b, cx)?.eq {
                    all = false;
                    break;
                }
            }
            if all {
                return Ok(Cmp::new(true, "ordering"));
            }
        }
        if long {
            return Ok(Cmp::new(false, "ordering"));
        }
    }
    let (Expr::Relation { terms: gt, ops: go }, Expr::Relation { terms: pt, ops: po }) = (g, p) else {
        return Ok(Cmp::new(false, "relation"));
    };
    if go.len() != 1 || po.len() != 1 || gt.len() != 2 || pt.len() != 2 {
        return Ok(Cmp::new(false, "relation"));
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
        return Ok(Cmp::new(false, "relation"));
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
    let rule = "relation_proportional";
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
