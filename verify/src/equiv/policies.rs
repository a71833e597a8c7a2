//! The dispatcher of `equiv`: the policies, tried in order on two answers (gold first).
//!
//! [`POLICIES`] is the ordered list: each row is a function that decides (`Some`) or passes
//! (`None`), and the first that decides wins. The rows read the shapes of the two sides: text,
//! then relations (`relation`, `roots`, `sets`), then matrix arithmetic (`matrix`), then
//! structures and `\pm` (`structure`, `sets`, `families`), then scalars (`scalar`); the last row
//! of each shape decides whatever remains of it, and the scalar row decides everything left.
//! [`SECOND_CHANCES`] are tried, in order, when the whole comparison said `NotEqual`.
//!
//! A new policy is a function and a row at the place it must be tried; a row's function reads
//! the modules below this one (layering in the module doc of `equiv`).

use super::context::{Cmp, Cx, Res};
use super::read::{as_interval, contains_pm, is_structure, states_falsehood, value_side};
use super::rule::Rule;
use super::{families, matrix, relation, roots, scalar, sets, structure};
use crate::ast::Expr;
use crate::limits::LimitKind;

/// A row's answer: `Some` decides, `None` passes to the next row.
pub(super) type Found = Result<Option<Cmp>, LimitKind>;

/// One policy: a function and why it is tried where it is.
pub(super) struct Policy {
    /// The function's name.
    #[cfg_attr(not(test), allow(dead_code))] // for the reader and the tests
    pub name: &'static str,
    /// Decides or passes.
    pub apply: fn(&Expr, &Expr, &mut Cx) -> Found,
    /// Why this policy, and why here (one line).
    #[cfg_attr(not(test), allow(dead_code))] // for the reader and the tests
    pub why: &'static str,
}

/// The policies in the order they are tried (module doc).
pub(super) const POLICIES: &[Policy] = &[
    Policy { name: "text", apply: text, why: "a word compares as normalised text, never as a number" },
    Policy {
        name: "false_statement",
        apply: false_statement,
        why: "a relation stating something false (`7 = 5`) answers nothing, whatever its last term",
    },
    Policy {
        name: "relation_intersection",
        apply: relation_intersection,
        why: "a relation against inequalities joined by \"and\": both as sets of reals",
    },
    Policy {
        name: "equation_roots",
        apply: equation_roots,
        why: "a gold polynomial equation is answered by the list of its roots (`x^2 = 4`, `x = \\pm 2`)",
    },
    Policy {
        name: "relations",
        apply: relations,
        why: "two relations: as intervals, as named values, as orderings or with proportional sides",
    },
    Policy {
        name: "equation_value",
        apply: equation_value,
        why: "a relation that states a value (`x = 5`) against a value compares its value",
    },
    Policy {
        name: "inequality_interval",
        apply: inequality_interval,
        why: "an inequality in one variable against an interval or a union compares as one",
    },
    Policy {
        name: "relation_against_other",
        apply: relation_against_other,
        why: "any other relation against a non-relation differs",
    },
    Policy {
        name: "matrix_arithmetic",
        apply: matrix_arithmetic,
        why: "sums and products of matrices are written out entry by entry before any structure rule",
    },
    Policy {
        name: "plus_minus",
        apply: plus_minus,
        why: "`a \\pm b` is the set of its sign choices, also inside a tuple or a set",
    },
    Policy {
        name: "intersection",
        apply: intersection,
        why: "inequalities joined by \"and\", a set minus points: sets of reals in canonical form",
    },
    Policy {
        name: "relation_list_as_set",
        apply: relation_list_as_set,
        why: "relations in one variable joined by \"or\" against a set of reals are its parts",
    },
    Policy {
        name: "grouped_equations",
        apply: grouped_equations,
        why: "solutions written as equations grouped by `;` against a list of tuples",
    },
    Policy {
        name: "false_listed_equation",
        apply: false_listed_equation,
        why: "a predicted list of equations with a false one (`x = 1, y = 2 = 3`) answers nothing",
    },
    Policy {
        name: "listed_equation_values",
        apply: listed_equation_values,
        why: "equations `x = 1, y = 2` against values `(1, 2)` compare their values",
    },
    Policy {
        name: "structures",
        apply: structures,
        why: "sets, lists, tuples, intervals, unions and matrices compare by their kinds",
    },
    Policy {
        name: "scalars",
        apply: scalars,
        why: "numbers and expressions: exact, 256-bit, decimal rules, random points",
    },
];

/// The second chances after `NotEqual`, in order: an exact rewriting of one side that changes
/// nothing about its meaning, then the plain comparison again (`families`). A cap hit in one
/// keeps `NotEqual`.
pub(super) const SECOND_CHANCES: &[Policy] = &[
    Policy {
        name: "log_as_ln_chance",
        apply: families::log_as_ln_chance,
        why: "`\\log` without a base means `\\ln` when the other side writes `\\ln` and no `\\log`",
    },
    Policy {
        name: "renaming_chance",
        apply: families::renaming_chance,
        why: "a bound argument, an arbitrary constant or an integer parameter may have any name",
    },
];

/// Nesting of structural comparisons (sets of tuples of ...).
const MAX_COMPARE_DEPTH: usize = 64;

/// Compare any two answers (gold first): what [`Cx::compare`] calls.
pub(super) fn compare(g: &Expr, p: &Expr, cx: &mut Cx) -> Res {
    cx.budget.charge(1)?;
    if g == p {
        return Ok(Cmp::new(true, Rule::Structural));
    }
    if cx.depth >= MAX_COMPARE_DEPTH {
        return Err(LimitKind::TooDeep);
    }
    cx.depth += 1;
    let r = dispatch(g, p, cx);
    cx.depth -= 1;
    r
}

/// The first policy that decides.
fn dispatch(g: &Expr, p: &Expr, cx: &mut Cx) -> Res {
    for policy in POLICIES {
        if let Some(c) = (policy.apply)(g, p, cx)? {
            return Ok(c);
        }
    }
    unreachable!("the scalar policy decides every pair")
}

/// After `NotEqual`: the first second chance that makes the sides equal (`None` when none does,
/// or a cap stopped one).
pub(super) fn second_chance(g: &Expr, p: &Expr, cx: &mut Cx) -> Option<Cmp> {
    for policy in SECOND_CHANCES {
        match (policy.apply)(g, p, cx) {
            Ok(Some(c)) => return Some(c),
            Ok(None) => {}
            Err(_) => return None,
        }
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Text.

fn text(g: &Expr, p: &Expr, _: &mut Cx) -> Found {
    Ok(match (g, p) {
        (Expr::Text(a), Expr::Text(b)) => Some(Cmp::new(normalise_text(a) == normalise_text(b), Rule::Text)),
        (Expr::Text(t), Expr::Sym(s)) | (Expr::Sym(s), Expr::Text(t)) => {
            let t = normalise_text(t);
            let eq = t.chars().count() == 1 && t == s.to_lowercase();
            Some(Cmp::new(eq, Rule::Text))
        }
        (Expr::Text(_), _) | (_, Expr::Text(_)) => Some(Cmp::new(false, Rule::Text)),
        _ => None,
    })
}

/// Lower case, single spaces, no surrounding punctuation.
fn normalise_text(s: &str) -> String {
    let words: Vec<&str> = s.split_whitespace().collect();
    let joined = words.join(" ").to_lowercase();
    joined.trim_matches(|c: char| c.is_ascii_punctuation() && c != '-').to_string()
}

// ---------------------------------------------------------------------------------------------
// Relations: the rows up to `relation_against_other` apply when a side is a relation; that row
// decides every such pair left.

fn is_relation(e: &Expr) -> bool {
    matches!(e, Expr::Relation { .. })
}

fn either_relation(g: &Expr, p: &Expr) -> bool {
    is_relation(g) || is_relation(p)
}

fn false_statement(g: &Expr, p: &Expr, cx: &mut Cx) -> Found {
    if either_relation(g, p) && states_falsehood(p, cx)? {
        return Ok(Some(Cmp::new(false, Rule::FalseEquation)));
    }
    Ok(None)
}

fn relation_intersection(g: &Expr, p: &Expr, cx: &mut Cx) -> Found {
    if either_relation(g, p) && (sets::involves_intersection(g) || sets::involves_intersection(p)) {
        return sets::compare_intersections(g, p, cx).map(Some);
    }
    Ok(None)
}

fn equation_roots(g: &Expr, p: &Expr, cx: &mut Cx) -> Found {
    if is_relation(g) && value_side(g).is_none() {
        return roots::compare_roots(g, p, cx);
    }
    Ok(None)
}

fn relations(g: &Expr, p: &Expr, cx: &mut Cx) -> Found {
    if is_relation(g) && is_relation(p) {
        return relation::compare_relations(g, p, cx).map(Some);
    }
    Ok(None)
}

/// The relation side, the other side, and whether the relation is the gold.
fn relation_and_other<'e>(g: &'e Expr, p: &'e Expr) -> Option<(&'e Expr, &'e Expr, bool)> {
    if is_relation(g) {
        Some((g, p, true))
    } else if is_relation(p) {
        Some((p, g, false))
    } else {
        None
    }
}

/// Compare `a` (from the relation) and `b` (the other side) in the gold-first order.
fn in_order(a: &Expr, b: &Expr, rel_is_gold: bool, cx: &mut Cx) -> Res {
    if rel_is_gold {
        cx.compare(a, b)
    } else {
        cx.compare(b, a)
    }
}

fn equation_value(g: &Expr, p: &Expr, cx: &mut Cx) -> Found {
    let Some((rel, other, rel_is_gold)) = relation_and_other(g, p) else { return Ok(None) };
    match relation::stated_value(rel, rel_is_gold) {
        Some(value) => in_order(value, other, rel_is_gold, cx).map(|c| Some(c.with_rule_if_eq(Rule::EquationValue))),
        None => Ok(None),
    }
}

fn inequality_interval(g: &Expr, p: &Expr, cx: &mut Cx) -> Found {
    let Some((rel, other, rel_is_gold)) = relation_and_other(g, p) else { return Ok(None) };
    if let Some((_, iv)) = as_interval(rel) {
        if matches!(other, Expr::Interval { .. } | Expr::Union(_) | Expr::Tuple(_)) {
            return in_order(&iv, other, rel_is_gold, cx).map(|c| Some(c.with_rule_if_eq(Rule::InequalityInterval)));
        }
    }
    Ok(None)
}

fn relation_against_other(g: &Expr, p: &Expr, _: &mut Cx) -> Found {
    Ok(either_relation(g, p).then_some(Cmp::new(false, Rule::Relation)))
}

// ---------------------------------------------------------------------------------------------
// Matrix arithmetic.

fn matrix_arithmetic(g: &Expr, p: &Expr, cx: &mut Cx) -> Found {
    if !matrix::is_matrix_arithmetic(g) && !matrix::is_matrix_arithmetic(p) {
        return Ok(None);
    }
    let side = |e: &Expr, cx: &mut Cx| -> Result<Option<Expr>, LimitKind> {
        if matrix::is_matrix_arithmetic(e) {
            matrix::evaluate(e, cx)
        } else {
            Ok(Some(e.clone()))
        }
    };
    match (side(g, cx)?, side(p, cx)?) {
        (Some(a), Some(b)) => cx.compare(&a, &b).map(|c| Some(c.with_rule_if_eq(Rule::Matrix))),
        _ => Ok(Some(Cmp::new(false, Rule::Matrix))),
    }
}

// ---------------------------------------------------------------------------------------------
// Structures and `\pm`: every row below reads a structure on one side (or a `\pm`, which the
// first row takes), so none applies to two scalars.

fn plus_minus(g: &Expr, p: &Expr, cx: &mut Cx) -> Found {
    if !contains_pm(g) && !contains_pm(p) {
        return Ok(None);
    }
    match (structure::pm_variants(g), structure::pm_variants(p)) {
        // No `\pm` is left, and the rows above this one do not apply to the expanded sides
        // (no text, no relation, no matrix arithmetic): the policies again.
        (Some(gs), Some(ps)) if !contains_pm(&gs) && !contains_pm(&ps) => {
            dispatch(&gs, &ps, cx).map(|c| Some(c.with_rule_if_eq(Rule::PlusMinus)))
        }
        _ => Ok(Some(Cmp::new(false, Rule::PlusMinus))),
    }
}

fn intersection(g: &Expr, p: &Expr, cx: &mut Cx) -> Found {
    if sets::involves_intersection(g) || sets::involves_intersection(p) {
        return sets::compare_intersections(g, p, cx).map(Some);
    }
    Ok(None)
}

fn relation_list_as_set(g: &Expr, p: &Expr, cx: &mut Cx) -> Found {
    families::relation_list_as_set(g, p, cx)
}

fn grouped_equations(g: &Expr, p: &Expr, cx: &mut Cx) -> Found {
    families::grouped_equations(g, p, cx)
}

fn false_listed_equation(g: &Expr, p: &Expr, cx: &mut Cx) -> Found {
    if let (Expr::List(_) | Expr::Tuple(_), Expr::List(pi) | Expr::Tuple(pi)) = (g, p) {
        if structure::has_relation(pi) && states_falsehood(p, cx)? {
            return Ok(Some(Cmp::new(false, Rule::FalseEquation)));
        }
    }
    Ok(None)
}

fn listed_equation_values(g: &Expr, p: &Expr, cx: &mut Cx) -> Found {
    let (Expr::List(gi) | Expr::Tuple(gi), Expr::List(pi) | Expr::Tuple(pi)) = (g, p) else { return Ok(None) };
    let gold_has = structure::has_relation(gi);
    if gold_has == structure::has_relation(pi) {
        return Ok(None);
    }
    let Some(vals) = structure::equation_values(if gold_has { gi } else { pi }) else { return Ok(None) };
    let rebuilt = |orig: &Expr| match orig {
        Expr::Tuple(_) => Expr::Tuple(vals.clone()),
        _ => Expr::List(vals.clone()),
    };
    let (g2, p2) = if gold_has { (rebuilt(p), p.clone()) } else { (g.clone(), rebuilt(g)) };
    cx.compare(&g2, &p2).map(|c| Some(c.with_rule_if_eq(Rule::EquationValue)))
}

fn structures(g: &Expr, p: &Expr, cx: &mut Cx) -> Found {
    if is_structure(g) || is_structure(p) {
        return structure::compare(g, p, cx).map(Some);
    }
    Ok(None)
}

// ---------------------------------------------------------------------------------------------
// Scalars.

fn scalars(g: &Expr, p: &Expr, cx: &mut Cx) -> Found {
    scalar::compare(g, p, cx).map(Some)
}

#[cfg(test)]
mod tests {
    use super::{POLICIES, SECOND_CHANCES};

    #[test]
    fn every_row_is_named_once_and_says_why() {
        let rows: Vec<_> = POLICIES.iter().chain(SECOND_CHANCES).collect();
        for (i, row) in rows.iter().enumerate() {
            assert!(rows[..i].iter().all(|r| r.name != row.name), "{} twice", row.name);
            assert!(!row.why.is_empty() && !row.why.contains('\n'), "{}: one line why", row.name);
        }
        assert_eq!(POLICIES.last().map(|r| r.name), Some("scalars"), "the scalar row decides what is left");
    }
}
