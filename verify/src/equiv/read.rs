//! The readers the policy modules share: what a relation names and states (`value_side`,
//! `as_interval`, `closed_scalar`, `states_falsehood`), what a structure holds (`is_structure`,
//! `expand_pm`) and the element-wise comparisons of collections (`ordered`, `set`,
//! `compare_sets_of_reals`).
//!
//! This is the bottom of the policy modules (see the layering in the module doc of `equiv`): it
//! reads only the layers below it (`scalar`, `context`, `rule`), and recurses through
//! [`Cx::compare`], never through a policy module.

use super::context::{Cmp, Cx, Res};
use super::rule::Rule;
use super::scalar::{free_symbols, near_literal, visit, Summary};
use crate::ast::{Constant, Expr, Func, RelOp};
use crate::limits::LimitKind;

pub(super) fn is_eq(op: RelOp) -> bool {
    matches!(op, RelOp::Eq | RelOp::Approx)
}

/// What may stand on the named side of `name = value`: a symbol, a user function application
/// `f(x)`, a text label (`\text{Revenue} = 5`), a product of symbols (`AB`), `|AB|`, or a tuple
/// of names (`(p, q)`).
pub(super) fn is_name(e: &Expr) -> bool {
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
pub(super) fn value_side(e: &Expr) -> Option<(&Expr, &Expr)> {
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
pub(super) fn closed_scalar(e: &Expr) -> bool {
    if matches!(e, Expr::Text(_)) || is_structure(e) || matches!(e, Expr::Relation { .. }) {
        return false;
    }
    let s = Summary::of(e);
    !s.symbols && !s.user_function && !s.plus_minus
}

/// In a chain of equalities whose last terms are decimal literals that follow a variable-free
/// term that is not one (`\frac{1 + \sqrt{97}}{8} \approx 1.36`, `x = \sqrt2 = 1.414`), the
/// index of that term: the decimals are its roundings (the chain's links are checked by
/// [`false_link`]), and the value stated is the exact one.
pub(super) fn exact_index(terms: &[Expr], ops: &[RelOp]) -> Option<usize> {
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
    if cx.compare(a, b)?.eq || cx.compare(b, a)?.eq {
        return Ok(true);
    }
    Ok(near_literal(a, b, cx)? || near_literal(b, a, cx)?)
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
pub(super) fn states_falsehood(e: &Expr, cx: &mut Cx) -> Result<bool, LimitKind> {
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
pub(super) fn bounded_var(e: &Expr) -> Option<String> {
    match e {
        Expr::Sym(v) => Some(v.clone()),
        Expr::Func(Func::Other(_), args) if !args.is_empty() => Some(e.to_string()),
        _ => None,
    }
}

/// Whether `e` depends on the bounded variable `var` (any of its symbols, or the same call).
pub(super) fn mentions_var(e: &Expr, var: &Expr) -> bool {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    free_symbols(var, &mut a);
    free_symbols(e, &mut b);
    let mut same_call = false;
    if let Expr::Func(Func::Other(name), _) = var {
        visit(e, &mut |x| {
            if let Expr::Func(Func::Other(n), _) = x {
                same_call |= n == name;
            }
        });
    }
    same_call || a.iter().any(|s| b.contains(s))
}

/// `x > 3` as `("x", (3, \infty))`, `1 < x \le 3` as `("x", (1, 3])`.
pub(super) fn as_interval(e: &Expr) -> Option<(String, Expr)> {
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

/// Most variants produced by expanding `\pm` signs in one expression.
pub(super) const MAX_PM_VARIANTS: usize = 16;

/// Whether `e` is a structured answer handled here.
pub(super) fn is_structure(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Set(_)
            | Expr::List(_)
            | Expr::Tuple(_)
            | Expr::Interval { .. }
            | Expr::Union(_)
            | Expr::Intersection(_)
            | Expr::EmptySet
            | Expr::Matrix(_)
    )
}

/// Whether a `\pm` occurs anywhere in a scalar expression.
pub(super) fn contains_pm(e: &Expr) -> bool {
    let mut found = false;
    visit(e, &mut |x| {
        if let Expr::PlusMinus(..) = x {
            found = true;
        }
    });
    found
}

/// All sign choices of the `\pm` in `e` (`None` when there are too many).
pub(super) fn expand_pm(e: &Expr) -> Option<Vec<Expr>> {
    fn go(e: &Expr, depth: usize) -> Option<Vec<Expr>> {
        if depth > 256 {
            return None;
        }
        let bx = |x: Expr| Box::new(x);
        let out: Vec<Expr> = match e {
            Expr::PlusMinus(a, b) => {
                let bs = go(b, depth + 1)?;
                let mut out = Vec::new();
                match a {
                    Some(a) => {
                        for av in go(a, depth + 1)? {
                            for bv in &bs {
                                out.push(Expr::Add(vec![av.clone(), bv.clone()]));
                                out.push(Expr::Add(vec![av.clone(), Expr::Neg(bx(bv.clone()))]));
                            }
                        }
                    }
                    None => {
                        for bv in bs {
                            out.push(bv.clone());
                            out.push(Expr::Neg(bx(bv)));
                        }
                    }
                }
                out
            }
            Expr::Neg(a) => go(a, depth + 1)?.into_iter().map(|x| Expr::Neg(bx(x))).collect(),
            Expr::Add(v) | Expr::Mul(v) => {
                let mut acc: Vec<Vec<Expr>> = vec![Vec::new()];
                for t in v {
                    let ts = go(t, depth + 1)?;
                    let mut next = Vec::new();
                    for prefix in &acc {
                        for tv in &ts {
                            let mut p = prefix.clone();
                            p.push(tv.clone());
                            next.push(p);
                        }
                    }
                    if next.len() > MAX_PM_VARIANTS {
                        return None;
                    }
                    acc = next;
                }
                let is_add = matches!(e, Expr::Add(_));
                acc.into_iter().map(|v| if is_add { Expr::Add(v) } else { Expr::Mul(v) }).collect()
            }
            Expr::Div(a, b) | Expr::Pow(a, b) => {
                let (av, bv) = (go(a, depth + 1)?, go(b, depth + 1)?);
                let mut out = Vec::new();
                for x in &av {
                    for y in &bv {
                        out.push(match e {
                            Expr::Div(..) => Expr::Div(bx(x.clone()), bx(y.clone())),
                            _ => Expr::Pow(bx(x.clone()), bx(y.clone())),
                        });
                    }
                }
                out
            }
            Expr::Root { index, radicand } => go(radicand, depth + 1)?
                .into_iter()
                .map(|r| Expr::Root { index: index.clone(), radicand: bx(r) })
                .collect(),
            other => {
                if contains_pm(other) {
                    return None;
                }
                vec![other.clone()]
            }
        };
        if out.len() > MAX_PM_VARIANTS {
            None
        } else {
            Some(out)
        }
    }
    go(e, 0)
}

pub(super) fn ordered(a: &[&Expr], b: &[&Expr], cx: &mut Cx, rule: Rule) -> Res {
    if a.len() != b.len() {
        return Ok(Cmp::new(false, rule));
    }
    // A clear difference in any position decides, even if another position hit a cap.
    let mut limit = None;
    for (x, y) in a.iter().zip(b) {
        cx.budget.charge(1)?;
        match cx.compare(x, y) {
            Ok(c) if !c.eq => return Ok(Cmp::new(false, rule)),
            Ok(_) => {}
            Err(k @ (LimitKind::StepBudget | LimitKind::Deadline)) => return Err(k),
            Err(k) => limit = limit.or(Some(k)),
        }
    }
    match limit {
        Some(k) => Err(k),
        None => Ok(Cmp::new(true, rule)),
    }
}

/// Does `x` match some element of `ys`? A limit on one pair is reported only if no pair matched.
pub(super) fn find(x: &Expr, ys: &[&Expr], used: Option<&[bool]>, cx: &mut Cx) -> Result<Option<usize>, LimitKind> {
    let mut limit = None;
    for (j, y) in ys.iter().enumerate() {
        if used.is_some_and(|u| u[j]) {
            continue;
        }
        cx.budget.charge(1)?;
        match cx.compare(x, y) {
            Ok(c) if c.eq => return Ok(Some(j)),
            Ok(_) => {}
            Err(LimitKind::StepBudget) => return Err(LimitKind::StepBudget),
            Err(LimitKind::Deadline) => return Err(LimitKind::Deadline),
            Err(k) => limit = Some(k),
        }
    }
    match limit {
        Some(k) => Err(k),
        None => Ok(None),
    }
}

pub(super) fn set(a: &[&Expr], b: &[&Expr], cx: &mut Cx) -> Res {
    for x in a {
        if find(x, b, None, cx)?.is_none() {
            return Ok(Cmp::new(false, Rule::Set));
        }
    }
    for y in b {
        let mut limit = None;
        let mut hit = false;
        for x in a {
            cx.budget.charge(1)?;
            match cx.compare(x, y) {
                Ok(c) if c.eq => {
                    hit = true;
                    break;
                }
                Ok(_) => {}
                Err(k @ (LimitKind::StepBudget | LimitKind::Deadline)) => return Err(k),
                Err(k) => limit = Some(k),
            }
        }
        if !hit {
            return match limit {
                Some(k) => Err(k),
                None => Ok(Cmp::new(false, Rule::Set)),
            };
        }
    }
    Ok(Cmp::new(true, Rule::Set))
}

/// One interval of a set of reals.
#[derive(Clone)]
struct Iv {
    lo: Expr,
    hi: Expr,
    lo_closed: bool,
    hi_closed: bool,
}

/// Parts of a set of reals: intervals (a 2-tuple is open) and finite sets of points.
fn parts(e: &Expr, out: &mut Vec<Result<Iv, Expr>>) -> bool {
    match e {
        Expr::Interval { lo, hi, lo_closed, hi_closed } => {
            out.push(Ok(Iv { lo: (**lo).clone(), hi: (**hi).clone(), lo_closed: *lo_closed, hi_closed: *hi_closed }));
            true
        }
        Expr::Tuple(v) if v.len() == 2 => {
            out.push(Ok(Iv { lo: v[0].clone(), hi: v[1].clone(), lo_closed: false, hi_closed: false }));
            true
        }
        Expr::Union(v) => v.iter().all(|x| parts(x, out)),
        Expr::Set(_) | Expr::EmptySet => {
            out.push(Err(e.clone()));
            true
        }
        _ => false,
    }
}

/// Merge adjacent intervals: `[a, b]` and `(b, c]` become `[a, c]`.
fn merge(mut v: Vec<Result<Iv, Expr>>, cx: &mut Cx) -> Result<Vec<Result<Iv, Expr>>, LimitKind> {
    'outer: loop {
        for i in 0..v.len() {
            for j in 0..v.len() {
                if i == j {
                    continue;
                }
                let (Ok(a), Ok(b)) = (&v[i], &v[j]) else { continue };
                if !(a.hi_closed || b.lo_closed) {
                    continue;
                }
                cx.budget.charge(1)?;
                if cx.compare(&a.hi, &b.lo).map(|c| c.eq).unwrap_or(false) {
                    let m = Iv { lo: a.lo.clone(), hi: b.hi.clone(), lo_closed: a.lo_closed, hi_closed: b.hi_closed };
                    let (hi_idx, lo_idx) = if i > j { (i, j) } else { (j, i) };
                    let _ = v.remove(hi_idx);
                    let _ = v.remove(lo_idx);
                    v.push(Ok(m));
                    continue 'outer;
                }
            }
        }
        return Ok(v);
    }
}

fn compare_part(a: &Result<Iv, Expr>, b: &Result<Iv, Expr>, cx: &mut Cx) -> Res {
    match (a, b) {
        (Ok(x), Ok(y)) => {
            if x.lo_closed != y.lo_closed || x.hi_closed != y.hi_closed {
                return Ok(Cmp::new(false, Rule::Interval));
            }
            if !cx.compare(&x.lo, &y.lo)?.eq {
                return Ok(Cmp::new(false, Rule::Interval));
            }
            Ok(Cmp::new(cx.compare(&x.hi, &y.hi)?.eq, Rule::Interval))
        }
        (Err(x), Err(y)) => cx.compare(x, y),
        _ => Ok(Cmp::new(false, Rule::Interval)),
    }
}

pub(super) fn compare_sets_of_reals(g: &Expr, p: &Expr, cx: &mut Cx) -> Res {
    let (mut gp, mut pp) = (Vec::new(), Vec::new());
    if !parts(g, &mut gp) || !parts(p, &mut pp) {
        return Ok(Cmp::new(false, Rule::Interval));
    }
    // A bare open 2-tuple on both sides is a tuple, handled elsewhere; here one side is an
    // interval or a union.
    let gp = merge(gp, cx)?;
    let pp = merge(pp, cx)?;
    if gp.len() != pp.len() {
        return Ok(Cmp::new(false, Rule::Union));
    }
    let rule = if gp.len() == 1 { Rule::Interval } else { Rule::Union };
    let mut used = vec![false; pp.len()];
    for x in &gp {
        let mut hit = false;
        for (j, y) in pp.iter().enumerate() {
            if used[j] {
                continue;
            }
            if compare_part(x, y, cx)?.eq {
                used[j] = true;
                hit = true;
                break;
            }
        }
        if !hit {
            return Ok(Cmp::new(false, rule));
        }
    }
    Ok(Cmp::new(true, rule))
}
