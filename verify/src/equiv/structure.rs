//! Structured answers: sets, lists, tuples, intervals, unions, matrices and `\pm`.
//!
//! - `Set`: unordered, duplicates ignored. `List`: unordered multiset (the whole list must be
//!   right). A `List` against a `Set` compares as sets. `EmptySet` equals `Set([])`.
//! - `Tuple`: ordered. A gold `List` against a predicted `Tuple` is unordered (the gold says order
//!   does not matter); a gold `Tuple` against a predicted `List` is ordered.
//! - `Interval`: ends and end types; a 2-`Tuple` is the open interval when compared with one.
//! - `Union`: unordered parts after merging adjacent intervals (`[1,2] \cup (2,3]` is `[1,3]`).
//! - `Matrix`: element by element; a 1-row or 1-column matrix equals the tuple of its entries.
//! - `a \pm b` is the set `{a+b, a-b}`, also inside an expression (`\frac{1 \pm \sqrt5}{2}`).

use super::context::{Cmp, Cx, Res};
use super::read::{
    compare_sets_of_reals, contains_pm, expand_pm, find, is_structure, ordered, set, value_side, MAX_PM_VARIANTS,
};
use super::rule::Rule;
use crate::ast::Expr;

/// The elements of an unordered collection (`Set`, `List`, `EmptySet`, expanded `\pm`).
enum Kind<'e> {
    Set(Vec<&'e Expr>),
    List(Vec<&'e Expr>),
    Tuple(Vec<&'e Expr>),
    Other,
}

fn kind(e: &Expr) -> Kind<'_> {
    match e {
        Expr::Set(v) => Kind::Set(v.iter().collect()),
        Expr::EmptySet => Kind::Set(Vec::new()),
        Expr::List(v) => Kind::List(v.iter().collect()),
        Expr::Tuple(v) => Kind::Tuple(v.iter().collect()),
        _ => Kind::Other,
    }
}

/// Replace a list of equations `x = 1, y = 2` by their values when the other side has no
/// relations (so it compares with `(1, 2)`).
pub(super) fn equation_values(items: &[Expr]) -> Option<Vec<Expr>> {
    items.iter().map(|e| value_side(e).map(|(_, v)| v.clone())).collect()
}

/// Whether a relation is among `items`.
pub(super) fn has_relation(items: &[Expr]) -> bool {
    items.iter().any(|e| matches!(e, Expr::Relation { .. }))
}

/// Compare when at least one side is a structure (the policies before this one took `\pm`,
/// intersections and lists of equations): sets of reals, matrices, then collections by kind.
pub(super) fn compare(g: &Expr, p: &Expr, cx: &mut Cx) -> Res {
    match (g, p) {
        (Expr::Interval { .. } | Expr::Union(_), _) | (_, Expr::Interval { .. } | Expr::Union(_)) => {
            return compare_sets_of_reals(g, p, cx)
        }
        (Expr::Matrix(a), Expr::Matrix(b)) => {
            if a.len() != b.len() || a.iter().zip(b).any(|(x, y)| x.len() != y.len()) {
                return Ok(Cmp::new(false, Rule::Matrix));
            }
            let ga: Vec<&Expr> = a.iter().flatten().collect();
            let pa: Vec<&Expr> = b.iter().flatten().collect();
            return ordered(&ga, &pa, cx, Rule::Matrix);
        }
        (Expr::Matrix(m), Expr::Tuple(t)) | (Expr::Tuple(t), Expr::Matrix(m)) => {
            let flat: Vec<&Expr> = m.iter().flatten().collect();
            let is_vector = m.len() == 1 || m.iter().all(|r| r.len() == 1);
            if !is_vector {
                return Ok(Cmp::new(false, Rule::Matrix));
            }
            let tv: Vec<&Expr> = t.iter().collect();
            return if matches!(g, Expr::Matrix(_)) {
                ordered(&flat, &tv, cx, Rule::Matrix)
            } else {
                ordered(&tv, &flat, cx, Rule::Matrix)
            };
        }
        _ => {}
    }
    match (kind(g), kind(p)) {
        // A list of tuples is a solution set: order and repeats do not matter.
        (Kind::List(a), Kind::List(b)) if all_tuples(&a) && all_tuples(&b) => set(&a, &b, cx),
        (Kind::List(a), Kind::List(b)) => multiset(&a, &b, cx),
        (Kind::Set(a) | Kind::List(a), Kind::Set(b) | Kind::List(b)) => set(&a, &b, cx),
        (Kind::Tuple(a), Kind::Tuple(b)) | (Kind::Tuple(a), Kind::List(b)) => ordered(&a, &b, cx, Rule::Tuple),
        (Kind::List(a), Kind::Tuple(b)) => multiset(&a, &b, cx),
        // A one-element list or set against a plain value.
        (Kind::Set(a) | Kind::List(a) | Kind::Tuple(a), Kind::Other) if a.len() == 1 && !is_structure(p) => {
            cx.compare(a[0], p).map(|c| c.with_rule_if_eq(Rule::Singleton))
        }
        (Kind::Other, Kind::Set(b) | Kind::List(b) | Kind::Tuple(b)) if b.len() == 1 && !is_structure(g) => {
            cx.compare(g, b[0]).map(|c| c.with_rule_if_eq(Rule::Singleton))
        }
        _ => Ok(Cmp::new(false, Rule::Structure)),
    }
}

/// Every element is a tuple of at least two entries (a point, a solution `(x, y)`).
fn all_tuples(v: &[&Expr]) -> bool {
    !v.is_empty() && v.iter().all(|e| matches!(e, Expr::Tuple(t) if t.len() >= 2))
}

/// `e` with its `\pm` expanded: a scalar becomes the set of its sign choices, a tuple the list of
/// the tuples of every choice (`(\pm 1, 0)` is `(1, 0), (-1, 0)`: each `\pm` chooses on its
/// own), a set or list the collection of its expanded elements (`\{2 \pm \sqrt3, 1\}` has three
/// elements). `None` when there are too many choices or the `\pm` sits elsewhere (an interval
/// end, a matrix entry).
pub(super) fn pm_variants(e: &Expr) -> Option<Expr> {
    if !contains_pm(e) {
        return Some(e.clone());
    }
    match e {
        Expr::Tuple(items) => tuple_variants(items).map(Expr::List),
        Expr::Set(items) | Expr::List(items) => {
            let mut out = Vec::with_capacity(items.len() + 1);
            for it in items {
                match it {
                    Expr::Tuple(t) => out.extend(tuple_variants(t)?),
                    x if is_structure(x) => {
                        if contains_pm(x) {
                            return None;
                        }
                        out.push(x.clone());
                    }
                    x => out.extend(expand_pm(x)?),
                }
                if out.len() > MAX_PM_VARIANTS * 4 {
                    return None;
                }
            }
            Some(if matches!(e, Expr::Set(_)) { Expr::Set(out) } else { Expr::List(out) })
        }
        x if !is_structure(x) => expand_pm(x).map(Expr::Set),
        _ => None,
    }
}

/// The tuples of every sign choice of the `\pm` in the entries of a tuple.
fn tuple_variants(items: &[Expr]) -> Option<Vec<Expr>> {
    let mut acc: Vec<Vec<Expr>> = vec![Vec::with_capacity(items.len())];
    for it in items {
        let choices = if is_structure(it) {
            if contains_pm(it) {
                return None;
            }
            vec![it.clone()]
        } else {
            expand_pm(it)?
        };
        let mut next = Vec::with_capacity(acc.len() * choices.len());
        for prefix in &acc {
            for c in &choices {
                let mut t = prefix.clone();
                t.push(c.clone());
                next.push(t);
            }
        }
        if next.len() > MAX_PM_VARIANTS {
            return None;
        }
        acc = next;
    }
    Some(acc.into_iter().map(Expr::Tuple).collect())
}

fn multiset(a: &[&Expr], b: &[&Expr], cx: &mut Cx) -> Res {
    if a.len() != b.len() {
        return Ok(Cmp::new(false, Rule::Multiset));
    }
    let mut used = vec![false; b.len()];
    for x in a {
        match find(x, b, Some(&used), cx)? {
            Some(j) => used[j] = true,
            None => return Ok(Cmp::new(false, Rule::Multiset)),
        }
    }
    Ok(Cmp::new(true, Rule::Multiset))
}
