//! Answer shapes that are one answer written in another form (policies in `verify/EQUIVALENCE.md`,
//! section "Answer shapes"):
//! - relations in one variable joined by "or" against a set of reals
//!   (`b \le -1 \text{ or } b = 3` is `(-\infty, -1] \cup \{3\}`);
//! - solutions written as equations grouped by `;` against a list of tuples
//!   (`a=2,b=1;a=4,b=1` is `(2,1),(4,1)`);
//! - a renaming that changes nothing: the argument of a function definition (`g(t) = 3t` is
//!   `g(s) = 3s`) and arbitrary constants (`k e^{-x}` is `C e^{-x}`);
//! - `\log` without a base read as the natural logarithm when the other side writes `\ln`.
//!
//! Each rule is tried only when the plain comparison said `NotEqual`, and only turns it into
//! `Equal` through an exact rewriting of one side; partial lists, other intervals and other
//! functions stay different.

use super::context::{Cmp, Cx};
use super::read::{as_interval, compare_sets_of_reals, value_side};
use super::rule::Rule;
use super::scalar::{free_symbols, visit};
use crate::ast::{Expr, Func, RelOp};
use crate::limits::LimitKind;

type Found = Result<Option<Cmp>, LimitKind>;

/// One item of an "or" list as a part of a set of reals: an inequality in `var` is an interval,
/// `var = c` is the point set `{c}`.
fn relation_part(e: &Expr) -> Option<(String, Expr)> {
    if let Some((v, iv)) = as_interval(e) {
        return Some((v, iv));
    }
    let Expr::Relation { terms, ops } = e else { return None };
    if terms.len() != 2 || ops.len() != 1 || !matches!(ops[0], RelOp::Eq) {
        return None;
    }
    let Expr::Sym(v) = &terms[0] else { return None };
    let mut syms = Vec::new();
    free_symbols(&terms[1], &mut syms);
    if syms.iter().any(|s| s == v) {
        return None;
    }
    Some((v.clone(), Expr::Set(vec![terms[1].clone()])))
}

/// `1 < k \le 4, 6 \le k < 9` (a list made of "or") as the union of its parts, when every item
/// bounds the same variable.
fn relation_union(items: &[Expr]) -> Option<Expr> {
    if items.len() < 2 {
        return None;
    }
    let mut var: Option<String> = None;
    let mut parts = Vec::with_capacity(items.len());
    for it in items {
        let (v, part) = relation_part(it)?;
        match &var {
            None => var = Some(v),
            Some(w) if *w == v => {}
            Some(_) => return None,
        }
        parts.push(part);
    }
    Some(Expr::Union(parts))
}

fn is_set_of_reals(e: &Expr) -> bool {
    matches!(e, Expr::Interval { .. } | Expr::Union(_))
}

/// Relations in one variable joined by "or" (a list of relations) against an interval or a union:
/// compared as the union of their parts. The parts must match exactly (adjacent intervals are
/// merged as for any union), so `b \le -1 \text{ or } b = 3` is not `(-\infty, -1]`.
pub(crate) fn relation_list_as_set(g: &Expr, p: &Expr, cx: &mut Cx) -> Found {
    let as_union = |e: &Expr| match e {
        Expr::List(items) | Expr::Set(items) => relation_union(items),
        _ => None,
    };
    if is_set_of_reals(p) {
        if let Some(gu) = as_union(g) {
            return compare_sets_of_reals(&gu, p, cx).map(|c| Some(c.with_rule_if_eq(Rule::InequalityInterval)));
        }
    }
    if is_set_of_reals(g) {
        if let Some(pu) = as_union(p) {
            return compare_sets_of_reals(g, &pu, cx).map(|c| Some(c.with_rule_if_eq(Rule::InequalityInterval)));
        }
    }
    Ok(None)
}

/// The name of `name = value` as written (for grouping).
fn eq_name(e: &Expr) -> Option<(String, &Expr)> {
    let (n, v) = value_side(e)?;
    let Expr::Relation { terms, .. } = e else { return None };
    (terms.len() == 2).then(|| (n.to_string(), v))
}

/// `a=2, b=1, a=4, b=1` as the tuples `(2, 1), (4, 1)`: the names repeat with a period `k >= 2`
/// (distinct within a group, the same order in every group), and there are at least two groups.
fn group_equations(items: &[Expr], k: usize) -> Option<Vec<Expr>> {
    if k < 2 || items.len() < 2 * k || !items.len().is_multiple_of(k) {
        return None;
    }
    let named: Vec<(String, &Expr)> = items.iter().map(eq_name).collect::<Option<_>>()?;
    for i in 0..k {
        if named[..i].iter().any(|(n, _)| *n == named[i].0) {
            return None;
        }
    }
    if named.iter().enumerate().any(|(i, (n, _))| *n != named[i % k].0) {
        return None;
    }
    Some(named.chunks(k).map(|c| Expr::Tuple(c.iter().map(|(_, v)| (*v).clone()).collect())).collect())
}

/// The tuple arity of a list or set of tuples that all have the same length.
fn tuple_arity(e: &Expr) -> Option<usize> {
    let (Expr::List(items) | Expr::Set(items)) = e else { return None };
    let k = match items.first() {
        Some(Expr::Tuple(t)) => t.len(),
        _ => return None,
    };
    items.iter().all(|x| matches!(x, Expr::Tuple(t) if t.len() == k)).then_some(k)
}

/// Solutions written as grouped equations against a list of tuples, both directions.
pub(crate) fn grouped_equations(g: &Expr, p: &Expr, cx: &mut Cx) -> Found {
    let grouped = |eqs: &Expr, k: usize| match eqs {
        Expr::List(items) => group_equations(items, k),
        _ => None,
    };
    if let Some(k) = tuple_arity(p) {
        if let Some(tuples) = grouped(g, k) {
            return cx.compare(&Expr::List(tuples), p).map(|c| Some(c.with_rule_if_eq(Rule::EquationValue)));
        }
    }
    if let Some(k) = tuple_arity(g) {
        if let Some(tuples) = grouped(p, k) {
            return cx.compare(g, &Expr::List(tuples)).map(|c| Some(c.with_rule_if_eq(Rule::EquationValue)));
        }
    }
    Ok(None)
}

// ---------------------------------------------------------------------------------------------
// Renamings.

/// Names conventionally used for arbitrary constants of a general solution (`C`, `C_1`, `c_2`,
/// `k`, `K_0`).
fn is_constant_name(s: &str) -> bool {
    let base = s.split('_').next().unwrap_or(s);
    matches!(base, "C" | "c" | "k" | "K")
}

/// Letters conventionally used for the integer parameter of a general solution
/// (`x = k\pi`, `\frac{\pi}{6} + 2n\pi`, `x = m \cdot 180^\circ`).
const INTEGER_PARAMETERS: [&str; 3] = ["k", "n", "m"];

/// Largest answer (in tree nodes) searched for an integer parameter.
const MAX_PARAMETER_NODES: usize = 256;

/// Whether `name` is the integer parameter of the general solution `e` (whose free symbols are
/// `syms`): one of `k`, `n`, `m`, the only one of them in `e`, and a multiple of a period: it
/// multiplies `\pi` or an angle in degrees (`k\pi`, `\frac{k\pi}{2}`, `(2k+1)\frac{\pi}{2}`,
/// `360^\circ n`). Then `x = k\pi` and `x = n\pi` are the same set of solutions, while a
/// parameter the answer is a function of (`2n + 1`, `n^2`) keeps its name.
fn is_integer_parameter_of(e: &Expr, syms: &[String], name: &str) -> bool {
    if !INTEGER_PARAMETERS.contains(&name)
        || syms.iter().filter(|s| INTEGER_PARAMETERS.contains(&s.as_str())).count() != 1
    {
        return false;
    }
    // The test below is quadratic in the size; general solutions are short.
    let mut nodes = 0usize;
    visit(e, &mut |_| nodes += 1);
    if nodes > MAX_PARAMETER_NODES {
        return false;
    }
    let has = |x: &Expr, f: &dyn Fn(&Expr) -> bool| {
        let mut found = false;
        visit(x, &mut |y| found |= f(y));
        found
    };
    let is_period = |y: &Expr| matches!(y, Expr::Const(crate::ast::Constant::Pi) | Expr::Degrees(_));
    let is_param = |y: &Expr| matches!(y, Expr::Sym(s) if s == name);
    let mut multiple = false;
    visit(e, &mut |x| {
        if let Expr::Mul(factors) = x {
            let period = factors.iter().any(|f| has(f, &is_period));
            let param = factors.iter().any(|f| !has(f, &is_period) && has(f, &is_param));
            multiple |= period && param;
        }
    });
    multiple
}

/// Most symbols renamed at once (the bijections tried grow as a factorial).
const MAX_RENAMED: usize = 3;

/// Symbols that are the argument of a function definition on the left of a top-level equation:
/// `t` in `g(t) = 3t`.
fn defined_arguments(e: &Expr) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut add = |rel: &Expr| {
        if let Expr::Relation { terms, ops } = rel {
            if ops.len() == 1 && matches!(ops[0], RelOp::Eq) {
                if let Expr::Func(Func::Other(f), args) = &terms[0] {
                    if let [Expr::Sym(v)] = args.as_slice() {
                        out.push((f.clone(), v.clone()));
                    }
                }
            }
        }
    };
    match e {
        Expr::List(v) => v.iter().for_each(&mut add),
        other => add(other),
    }
    out
}

/// Replace symbols by name (`map` pairs `from -> to`).
fn rename(e: &Expr, map: &[(String, String)]) -> Expr {
    fn go(e: &Expr, map: &[(String, String)], depth: usize) -> Expr {
        if depth > 512 {
            return e.clone();
        }
        let r = |x: &Expr| go(x, map, depth + 1);
        let rb = |x: &Expr| Box::new(go(x, map, depth + 1));
        let rv = |v: &[Expr]| v.iter().map(|x| go(x, map, depth + 1)).collect::<Vec<_>>();
        match e {
            Expr::Sym(s) => match map.iter().find(|(f, _)| f == s) {
                Some((_, t)) => Expr::Sym(t.clone()),
                None => e.clone(),
            },
            Expr::Num(_) | Expr::Const(_) | Expr::Text(_) | Expr::EmptySet => e.clone(),
            Expr::Neg(a) => Expr::Neg(rb(a)),
            Expr::Factorial(a) => Expr::Factorial(rb(a)),
            Expr::Percent(a) => Expr::Percent(rb(a)),
            Expr::Degrees(a) => Expr::Degrees(rb(a)),
            Expr::Quantity(a, u) => Expr::Quantity(rb(a), *u),
            Expr::Add(v) => Expr::Add(rv(v)),
            Expr::Mul(v) => Expr::Mul(rv(v)),
            Expr::List(v) => Expr::List(rv(v)),
            Expr::Tuple(v) => Expr::Tuple(rv(v)),
            Expr::Set(v) => Expr::Set(rv(v)),
            Expr::Union(v) => Expr::Union(rv(v)),
            Expr::Intersection(v) => Expr::Intersection(rv(v)),
            Expr::Func(f, v) => Expr::Func(f.clone(), rv(v)),
            Expr::Relation { terms, ops } => Expr::Relation { terms: rv(terms), ops: ops.clone() },
            Expr::Div(a, b) => Expr::Div(rb(a), rb(b)),
            Expr::Pow(a, b) => Expr::Pow(rb(a), rb(b)),
            Expr::Binom(a, b) => Expr::Binom(rb(a), rb(b)),
            Expr::Root { index, radicand } => Expr::Root { index: rb(index), radicand: rb(radicand) },
            Expr::Log { base, arg } => Expr::Log { base: rb(base), arg: rb(arg) },
            Expr::PlusMinus(a, b) => Expr::PlusMinus(a.as_ref().map(|a| rb(a)), rb(b)),
            Expr::Interval { lo, hi, lo_closed, hi_closed } => {
                Expr::Interval { lo: rb(lo), hi: rb(hi), lo_closed: *lo_closed, hi_closed: *hi_closed }
            }
            Expr::Matrix(rows) => Expr::Matrix(rows.iter().map(|row| row.iter().map(r).collect()).collect()),
        }
    }
    go(e, map, 0)
}

/// The renamings of `pred`'s own symbols to `gold`'s own symbols that change nothing about the
/// answer: the argument of the same function's definition (`g(s) = 3s` against `g(t) = 3t`), and
/// arbitrary constants (`C` against `k`) when the answer also has a variable they multiply or add
/// to. Every symbol only on one side must be covered, so a renaming never hides a stray symbol.
fn renamings(gold: &Expr, pred: &Expr) -> Vec<Vec<(String, String)>> {
    let (mut gs, mut ps) = (Vec::new(), Vec::new());
    free_symbols(gold, &mut gs);
    free_symbols(pred, &mut ps);
    let g_only: Vec<&String> = gs.iter().filter(|s| !ps.contains(s)).collect();
    let p_only: Vec<&String> = ps.iter().filter(|s| !gs.contains(s)).collect();
    if g_only.is_empty() || g_only.len() != p_only.len() || g_only.len() > MAX_RENAMED {
        return Vec::new();
    }
    // Bound arguments first: they are paired by function name.
    let (gd, pd) = (defined_arguments(gold), defined_arguments(pred));
    let mut fixed: Vec<(String, String)> = Vec::new();
    for (f, pv) in &pd {
        if let Some((_, gv)) = gd.iter().find(|(gf, _)| gf == f) {
            if p_only.contains(&pv) && g_only.contains(&gv) && !fixed.iter().any(|(a, _)| a == pv) {
                fixed.push((pv.clone(), gv.clone()));
            }
        }
    }
    let g_rest: Vec<&String> = g_only.iter().copied().filter(|s| !fixed.iter().any(|(_, b)| b == *s)).collect();
    let p_rest: Vec<&String> = p_only.iter().copied().filter(|s| !fixed.iter().any(|(a, _)| a == *s)).collect();
    if g_rest.len() != p_rest.len() {
        return Vec::new();
    }
    if g_rest.is_empty() {
        return vec![fixed];
    }
    // The integer parameter of a general solution, named differently.
    if let ([a], [b]) = (g_rest.as_slice(), p_rest.as_slice()) {
        if is_integer_parameter_of(gold, &gs, a) && is_integer_parameter_of(pred, &ps, b) {
            let mut m = fixed.clone();
            m.push(((*b).clone(), (*a).clone()));
            return vec![m];
        }
    }
    // Arbitrary constants: every remaining symbol must be constant-like, and a symbol shared by
    // both sides must remain (the variable of the general solution).
    let shared = gs.iter().any(|s| ps.contains(s)) || !fixed.is_empty();
    if !shared || !g_rest.iter().all(|s| is_constant_name(s)) || !p_rest.iter().all(|s| is_constant_name(s)) {
        return Vec::new();
    }
    let mut out = Vec::new();
    permutations(p_rest.len(), &mut |perm| {
        let mut m = fixed.clone();
        m.extend(perm.iter().enumerate().map(|(i, &j)| (p_rest[i].clone(), g_rest[j].clone())));
        out.push(m);
    });
    out
}

/// Every permutation of `0..n` (n <= 3).
fn permutations(n: usize, f: &mut dyn FnMut(&[usize])) {
    fn go(k: usize, cur: &mut Vec<usize>, n: usize, f: &mut dyn FnMut(&[usize])) {
        if k == n {
            f(cur);
            return;
        }
        for j in 0..n {
            if !cur.contains(&j) {
                cur.push(j);
                go(k + 1, cur, n, f);
                cur.pop();
            }
        }
    }
    go(0, &mut Vec::with_capacity(n), n, f);
}

/// `\log x` (no base) as `\ln x`.
fn log_as_ln(e: &Expr) -> Expr {
    fn go(e: &Expr, depth: usize) -> Expr {
        if depth > 512 {
            return e.clone();
        }
        match e {
            Expr::Func(Func::Log10, v) => Expr::Func(Func::Ln, v.iter().map(|x| go(x, depth + 1)).collect()),
            Expr::Func(f, v) => Expr::Func(f.clone(), v.iter().map(|x| go(x, depth + 1)).collect()),
            Expr::Add(v) => Expr::Add(v.iter().map(|x| go(x, depth + 1)).collect()),
            Expr::Mul(v) => Expr::Mul(v.iter().map(|x| go(x, depth + 1)).collect()),
            Expr::List(v) => Expr::List(v.iter().map(|x| go(x, depth + 1)).collect()),
            Expr::Tuple(v) => Expr::Tuple(v.iter().map(|x| go(x, depth + 1)).collect()),
            Expr::Set(v) => Expr::Set(v.iter().map(|x| go(x, depth + 1)).collect()),
            Expr::Neg(a) => Expr::Neg(Box::new(go(a, depth + 1))),
            Expr::Div(a, b) => Expr::Div(Box::new(go(a, depth + 1)), Box::new(go(b, depth + 1))),
            Expr::Pow(a, b) => Expr::Pow(Box::new(go(a, depth + 1)), Box::new(go(b, depth + 1))),
            Expr::Relation { terms, ops } => {
                Expr::Relation { terms: terms.iter().map(|x| go(x, depth + 1)).collect(), ops: ops.clone() }
            }
            other => other.clone(),
        }
    }
    go(e, 0)
}

fn has_func(e: &Expr, want: &Func) -> bool {
    let mut found = false;
    visit(e, &mut |x| {
        if let Expr::Func(f, _) = x {
            found |= f == want;
        }
    });
    found
}

/// Second chance after `NotEqual`: `\log` (no base) read as `\ln` when the other side writes `\ln`
/// and no `\log` of its own, then the plain comparison again. `None` when it does not apply or the
/// sides stay different.
pub(crate) fn log_as_ln_chance(g: &Expr, p: &Expr, cx: &mut Cx) -> Found {
    let (g_ln, g_log) = (has_func(g, &Func::Ln), has_func(g, &Func::Log10));
    let (p_ln, p_log) = (has_func(p, &Func::Ln), has_func(p, &Func::Log10));
    if g_ln && !g_log && p_log {
        let p2 = log_as_ln(p);
        if cx.compare(g, &p2)?.eq {
            return Ok(Some(Cmp::new(true, Rule::LogAsLn)));
        }
    } else if p_ln && !p_log && g_log {
        let g2 = log_as_ln(g);
        if cx.compare(&g2, p)?.eq {
            return Ok(Some(Cmp::new(true, Rule::LogAsLn)));
        }
    }
    Ok(None)
}

/// Second chance after `NotEqual`: a renaming of the prediction's own symbols that changes
/// nothing about its meaning ([`renamings`]), then the plain comparison again. `None` when none
/// applies or none makes the sides equal.
pub(crate) fn renaming_chance(g: &Expr, p: &Expr, cx: &mut Cx) -> Found {
    for map in renamings(g, p) {
        cx.budget.charge(1)?;
        let p2 = rename(p, &map);
        if cx.compare(g, &p2)?.eq {
            return Ok(Some(Cmp::new(true, Rule::Renaming)));
        }
    }
    Ok(None)
}
