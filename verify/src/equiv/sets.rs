//! Sets of reals written with an intersection: inequalities joined by "and"
//! (`x > -2 \text{ and } x < 5` is `(-2, 5)`, `x < -2 \text{ and } x > 5` is empty), and a set
//! minus points (`\{x \mid x < \frac32\} \setminus \{-6\}` is `(-\infty, -6) \cup (-6, \frac32)`,
//! which the parser writes as an intersection with the complement of each point).
//!
//! Both sides are brought to one canonical form, the sorted list of disjoint intervals and points
//! they denote, and compared piece by piece. This needs the order of every end, so every end
//! must be a variable-free number (or an infinity) whose order against the others is certain at
//! 256 bits; otherwise the rule does not apply, and an intersection only equals one with the same
//! parts (in any order).

use super::context::{Cmp, Cx, Res};
use super::eval::{EvalErr, Evaluator, Value, PREC};
use super::read::{as_interval, closed_scalar, set};
use super::rule::Rule;
use super::scalar::values_close;
use crate::ast::{Constant, Expr, RelOp};
use crate::limits::LimitKind;
use std::cmp::Ordering;

/// Most pieces a set may have (each operation is quadratic in them at worst).
const MAX_PIECES: usize = 64;

/// An end of an interval: an infinity or a number (its expression, for comparisons under the
/// decimal rules, and its value, for the order).
#[derive(Clone)]
enum End {
    NegInf,
    PosInf,
    At(Expr, Value),
}

/// An interval, or a point when both ends are the same closed end.
#[derive(Clone)]
struct Piece {
    lo: End,
    hi: End,
    lo_closed: bool,
    hi_closed: bool,
}

type Found<T> = Result<Option<T>, LimitKind>;

/// Whether `e` is written with an intersection (or is an "or" list with one among its items):
/// the expressions this module reads.
pub(crate) fn involves_intersection(e: &Expr) -> bool {
    match e {
        Expr::Intersection(_) => true,
        Expr::List(items) | Expr::Union(items) => items.iter().any(|x| matches!(x, Expr::Intersection(_))),
        _ => false,
    }
}

/// Compare two answers of which one involves an intersection.
pub(crate) fn compare_intersections(g: &Expr, p: &Expr, cx: &mut Cx) -> Res {
    let rule = Rule::Intersection;
    let (mut gv, mut pv) = (None, None);
    if let (Some(gs), Some(ps)) = (pieces(g, &mut gv, cx)?, pieces(p, &mut pv, cx)?) {
        if let (Some(a), Some(b)) = (&gv, &pv) {
            if a != b {
                return Ok(Cmp::new(false, rule));
            }
        }
        if gs.len() != ps.len() {
            return Ok(Cmp::new(false, rule));
        }
        for (x, y) in gs.iter().zip(&ps) {
            cx.budget.charge(1)?;
            if x.lo_closed != y.lo_closed
                || x.hi_closed != y.hi_closed
                || !same_end(&x.lo, &y.lo, cx)?
                || !same_end(&x.hi, &y.hi, cx)?
            {
                return Ok(Cmp::new(false, rule));
            }
        }
        return Ok(Cmp::new(true, rule));
    }
    // Not a set of reals in one variable (`x > 0 \text{ and } y > 0`): another intersection of the
    // same conditions, in any order. (A list of conditions may be an "or": never the same.)
    match (g, p) {
        (Expr::Intersection(a), Expr::Intersection(b)) => {
            let (ra, rb): (Vec<&Expr>, Vec<&Expr>) = (a.iter().collect(), b.iter().collect());
            set(&ra, &rb, cx).map(|c| Cmp::new(c.eq, rule))
        }
        _ => Ok(Cmp::new(false, rule)),
    }
}

/// Whether two ends are the same (the gold's first): both infinite with one sign, or numbers the
/// comparison rules call equal.
fn same_end(a: &End, b: &End, cx: &mut Cx) -> Result<bool, LimitKind> {
    Ok(match (a, b) {
        (End::NegInf, End::NegInf) | (End::PosInf, End::PosInf) => true,
        (End::At(x, _), End::At(y, _)) => cx.compare(x, y)?.eq,
        _ => false,
    })
}

/// The canonical pieces of `e` as a set of reals; `var` collects the variable its relations
/// bound (all must bound the same one). `None` when `e` is no such set or an order is unknown.
fn pieces(e: &Expr, var: &mut Option<String>, cx: &mut Cx) -> Found<Vec<Piece>> {
    cx.budget.charge(1)?;
    match e {
        Expr::Interval { lo, hi, lo_closed, hi_closed } => interval(lo, hi, *lo_closed, *hi_closed, cx),
        Expr::Tuple(v) if v.len() == 2 => interval(&v[0], &v[1], false, false, cx),
        Expr::EmptySet => Ok(Some(Vec::new())),
        Expr::Set(points) => {
            let mut out = Vec::with_capacity(points.len());
            for pt in points {
                let Some(end) = end(pt, cx)? else { return Ok(None) };
                if !matches!(end, End::At(..)) {
                    return Ok(None);
                }
                out.push(Piece { lo: end.clone(), hi: end, lo_closed: true, hi_closed: true });
            }
            union(out, cx)
        }
        Expr::Union(parts) | Expr::List(parts) => {
            // A list is an "or" of relations (a list of values is no set of reals).
            if matches!(e, Expr::List(_))
                && !parts.iter().all(|x| matches!(x, Expr::Relation { .. } | Expr::Intersection(_)))
            {
                return Ok(None);
            }
            let mut all = Vec::new();
            for part in parts {
                let Some(ps) = pieces(part, var, cx)? else { return Ok(None) };
                all.extend(ps);
                if all.len() > MAX_PIECES {
                    return Ok(None);
                }
            }
            union(all, cx)
        }
        Expr::Intersection(parts) => {
            let mut acc: Option<Vec<Piece>> = None;
            for part in parts {
                let Some(ps) = pieces(part, var, cx)? else { return Ok(None) };
                acc = Some(match acc {
                    None => ps,
                    Some(a) => match intersect(&a, &ps, cx)? {
                        Some(x) => x,
                        None => return Ok(None),
                    },
                });
            }
            Ok(acc)
        }
        Expr::Relation { terms, ops } => {
            let (v, set) = if let Some((v, iv)) = as_interval(e) {
                (v, iv)
            } else if let ([Expr::Sym(v), c], [op @ (RelOp::Eq | RelOp::Ne)])
            | ([c, Expr::Sym(v)], [op @ (RelOp::Eq | RelOp::Ne)]) = (terms.as_slice(), ops.as_slice())
            {
                if !closed_scalar(c) {
                    return Ok(None);
                }
                let set = if *op == RelOp::Eq { Expr::Set(vec![c.clone()]) } else { complement_of_point(c) };
                (v.clone(), set)
            } else {
                return Ok(None);
            };
            match var {
                Some(w) if *w != v => return Ok(None),
                _ => *var = Some(v),
            }
            pieces(&set, var, cx)
        }
        _ => Ok(None),
    }
}

/// `(-\infty, c) \cup (c, \infty)`: the reals without `c` (what `x \ne c` and `\setminus \{c\}`
/// leave).
pub(crate) fn complement_of_point(c: &Expr) -> Expr {
    let inf = Expr::Const(Constant::Infinity);
    let open =
        |lo: Expr, hi: Expr| Expr::Interval { lo: Box::new(lo), hi: Box::new(hi), lo_closed: false, hi_closed: false };
    Expr::Union(vec![open(Expr::Neg(Box::new(inf.clone())), c.clone()), open(c.clone(), inf)])
}

fn infinity_sign(e: &Expr) -> Option<bool> {
    match e {
        Expr::Const(Constant::Infinity) => Some(true),
        Expr::Neg(a) => infinity_sign(a).map(|s| !s),
        _ => None,
    }
}

/// An end: an infinity, or a variable-free real number.
fn end(e: &Expr, cx: &mut Cx) -> Found<End> {
    if let Some(positive) = infinity_sign(e) {
        return Ok(Some(if positive { End::PosInf } else { End::NegInf }));
    }
    if !closed_scalar(e) {
        return Ok(None);
    }
    let mut ev = Evaluator::new(PREC, cx.budget, &mut cx.cc, &[]);
    let v = match ev.eval(e) {
        Ok(v) => v,
        Err(EvalErr::Limit(k)) => return Err(k),
        Err(_) => return Ok(None),
    };
    if ev.capped.is_some() {
        return Ok(None);
    }
    let real = match &v {
        Value::Exact(q) => q.is_real(),
        Value::Approx(c) => c.is_real(),
    };
    Ok(real.then(|| End::At(e.clone(), v)))
}

/// The order of two ends; `None` when two different numbers agree within the evaluation's
/// rounding (their order is not certain).
fn order(a: &End, b: &End, cx: &mut Cx) -> Found<Ordering> {
    cx.budget.charge(2)?;
    Ok(Some(match (a, b) {
        (End::NegInf, End::NegInf) | (End::PosInf, End::PosInf) => Ordering::Equal,
        (End::NegInf, _) | (_, End::PosInf) => Ordering::Less,
        (End::PosInf, _) | (_, End::NegInf) => Ordering::Greater,
        (End::At(_, x), End::At(_, y)) => {
            if let (Value::Exact(p), Value::Exact(q)) = (x, y) {
                p.re.cmp(&q.re)
            } else if values_close(x, y, cx.opts.eval_rel_tol) {
                Ordering::Equal
            } else {
                let (fx, fy) = (x.to_cf(PREC), y.to_cf(PREC));
                match fx.re.cmp(&fy.re) {
                    Some(o) if o < 0 => Ordering::Less,
                    Some(o) if o > 0 => Ordering::Greater,
                    _ => return Ok(None),
                }
            }
        }
    }))
}

/// The pieces of one interval: empty when its ends are reversed, a point when they meet closed.
/// Infinite ends are open whatever is written.
fn interval(lo: &Expr, hi: &Expr, lo_closed: bool, hi_closed: bool, cx: &mut Cx) -> Found<Vec<Piece>> {
    let (Some(lo), Some(hi)) = (end(lo, cx)?, end(hi, cx)?) else { return Ok(None) };
    let lo_closed = lo_closed && matches!(lo, End::At(..));
    let hi_closed = hi_closed && matches!(hi, End::At(..));
    let Some(o) = order(&lo, &hi, cx)? else { return Ok(None) };
    Ok(Some(match o {
        Ordering::Greater => Vec::new(),
        Ordering::Equal if !(lo_closed && hi_closed) => Vec::new(),
        _ => vec![Piece { lo, hi, lo_closed, hi_closed }],
    }))
}

/// The union of pieces, sorted and merged where they overlap or touch.
fn union(mut v: Vec<Piece>, cx: &mut Cx) -> Found<Vec<Piece>> {
    if v.len() > MAX_PIECES {
        return Ok(None);
    }
    // Insertion sort by the lower end (a closed end first), with a comparison that may fail.
    for i in 1..v.len() {
        let mut j = i;
        while j > 0 {
            let Some(o) = order(&v[j - 1].lo, &v[j].lo, cx)? else { return Ok(None) };
            let swap = o == Ordering::Greater || (o == Ordering::Equal && !v[j - 1].lo_closed && v[j].lo_closed);
            if !swap {
                break;
            }
            v.swap(j - 1, j);
            j -= 1;
        }
    }
    let mut out: Vec<Piece> = Vec::with_capacity(v.len());
    for p in v {
        if let Some(last) = out.last_mut() {
            let Some(o) = order(&p.lo, &last.hi, cx)? else { return Ok(None) };
            let touches = o == Ordering::Less || (o == Ordering::Equal && (p.lo_closed || last.hi_closed));
            if touches {
                let Some(o2) = order(&p.hi, &last.hi, cx)? else { return Ok(None) };
                if o2 == Ordering::Greater || (o2 == Ordering::Equal && p.hi_closed) {
                    last.hi = p.hi;
                    last.hi_closed = p.hi_closed || (o2 == Ordering::Equal && last.hi_closed);
                }
                continue;
            }
        }
        out.push(p);
    }
    Ok(Some(out))
}

/// The intersection of two canonical lists.
fn intersect(a: &[Piece], b: &[Piece], cx: &mut Cx) -> Found<Vec<Piece>> {
    let mut out = Vec::new();
    for x in a {
        for y in b {
            // The larger lower end, the smaller upper end.
            let Some(lo_o) = order(&x.lo, &y.lo, cx)? else { return Ok(None) };
            let (lo, lo_closed) = match lo_o {
                Ordering::Greater => (x.lo.clone(), x.lo_closed),
                Ordering::Less => (y.lo.clone(), y.lo_closed),
                Ordering::Equal => (x.lo.clone(), x.lo_closed && y.lo_closed),
            };
            let Some(hi_o) = order(&x.hi, &y.hi, cx)? else { return Ok(None) };
            let (hi, hi_closed) = match hi_o {
                Ordering::Less => (x.hi.clone(), x.hi_closed),
                Ordering::Greater => (y.hi.clone(), y.hi_closed),
                Ordering::Equal => (x.hi.clone(), x.hi_closed && y.hi_closed),
            };
            let Some(o) = order(&lo, &hi, cx)? else { return Ok(None) };
            let keep = o == Ordering::Less || (o == Ordering::Equal && lo_closed && hi_closed);
            if keep {
                out.push(Piece { lo, hi, lo_closed, hi_closed });
                if out.len() > MAX_PIECES {
                    return Ok(None);
                }
            }
        }
    }
    union(out, cx)
}
