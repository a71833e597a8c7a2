//! Equivalence of two parsed answers: does `pred` denote the same mathematical answer as `gold`?
//!
//! The comparison dispatches on the shape of the answers:
//! - text (`Text`) after normalisation, also against a one-letter symbol (multiple choice);
//! - relations (`relation`, `roots`): `x = 5` against `5`, equations with the same solution set,
//!   inequalities against intervals, a polynomial equation against the list of its roots; a
//!   predicted chain with a false link between numbers (`7 = 5`) answers nothing, a gold solved
//!   for a variable (`x > 3`) needs a prediction solved for it, orderings compare term by term;
//! - structures (`structure`): sets, lists, tuples, intervals, unions, matrices, `\pm`;
//!   intersections of sets of reals (`sets`: inequalities joined by "and", a set minus points);
//!   arithmetic on matrices written out entry by entry (`matrix`);
//! - scalars (`scalar`): exact rational arithmetic (Gaussian rationals, big integers) where every
//!   step is rational, otherwise 256-bit complex evaluation ([`eval`]) with a relative test;
//!   expressions with free symbols are compared at seeded pseudo-random points.
//!
//! The policies (decimal tolerance, percent, degrees, ...) are documented for users in
//! `verify/EQUIVALENCE.md`. Every path charges the [`Budget`] and respects its caps; when a cap
//! stops a comparison that could otherwise have been `Equal`, the verdict is
//! [`Verdict::Limit`], never a guess.
//!
//! **Layering.** Every module reads only the layers below its own, so no two files import each
//! other (`layering_tests` checks it; `grep -n 'super::' verify/src/equiv/*.rs` shows it):
//!
//! | layer | modules | what |
//! |-------|---------|------|
//! | 7 | `relation`, `structure` | relations and structures (`relation` tries `sets`, `roots`; `structure` tries `sets`, `families`) |
//! | 6 | `matrix`, `roots`, `sets`, `families` | matrix arithmetic, roots of a polynomial equation, intersections, answer shapes |
//! | 5 | `read` | the readers several policies share (`value_side`, `as_interval`, `closed_scalar`, `expand_pm`, `states_falsehood`, `ordered`, `set`, ...) |
//! | 4 | `scalar` | numbers and expressions, percent, degrees, random points |
//! | 3 | `quantity` | units of measure (compares values with the `scalar::compare` it is given) |
//! | 2 | `context` | [`EquivOptions`], the per-call context `Cx`, the partial verdict `Cmp` |
//! | 1 | `eval` | 256-bit evaluation |
//! | 0 | `number`, `elementary`, `fast`, `rule` | exact numbers, fast `exp`/`ln`/`cos`/`sin`, the `f64` screen, the rule names ([`Rule`]) |
//!
//! This module is the top: it dispatches on the shapes. The comparison is recursive (a set
//! compares its elements), and the recursion goes through `Cx::compare`, which calls this
//! module's dispatcher through a function pointer: a policy module never imports the top.

mod context;
mod elementary;
pub mod eval;
mod families;
#[cfg(test)]
mod families_tests;
mod fast;
#[cfg(test)]
mod layering_tests;
mod matrix;
pub mod number;
#[cfg(test)]
mod policies_tests;
mod quantity;
mod read;
mod relation;
mod roots;
mod rule;
mod scalar;
mod sets;
#[cfg(test)]
mod soundness_tests;
mod structure;

#[cfg(test)]
mod tests;

pub use context::EquivOptions;
pub use rule::Rule;

use crate::ast::Expr;
use crate::limits::{Budget, LimitKind};
use astro_float::Consts;
use context::{Cmp, Cx, Res};

/// The outcome of a comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The two sides are equivalent.
    Equal,
    /// They are not (or could not be shown to be).
    NotEqual,
    /// A cost bound stopped the comparison before it could decide.
    Limit(LimitKind),
}

/// A verdict and the name of the rule that decided it (for `--explain`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    /// What was decided.
    pub verdict: Verdict,
    /// The stable name of the rule that decided ([`Rule::as_str`]), e.g. "exact",
    /// "decimal_tolerance", "set", "random_points".
    pub rule: &'static str,
}

/// Nesting of structural comparisons (sets of tuples of ...).
const MAX_COMPARE_DEPTH: usize = 64;

/// Decide whether `pred` denotes the same answer as `gold`.
pub fn equivalent(gold: &Expr, pred: &Expr, opts: &EquivOptions, budget: &mut Budget) -> Decision {
    // Fast path: two plain integers or exact literals.
    if let (Expr::Num(a), Expr::Num(b)) = (gold, pred) {
        if a.decimals.is_none() && b.decimals.is_none() {
            let verdict = if a.value == b.value { Verdict::Equal } else { Verdict::NotEqual };
            return Decision { verdict, rule: Rule::Exact.as_str() };
        }
    }
    // A lone letter against a lone letter is a multiple-choice label: case does not matter.
    if let (Expr::Sym(a), Expr::Sym(b)) = (gold, pred) {
        if a.chars().count() == 1 && a.to_lowercase() == b.to_lowercase() {
            return Decision { verdict: Verdict::Equal, rule: Rule::ChoiceLetter.as_str() };
        }
    }
    // The astro-float constants cache (pi, e, ln 2, ln 10 digits) is reused across calls on the
    // same thread; it only memoises constants, so verdicts do not depend on it.
    let cc = CONSTS.with(|c| c.borrow_mut().take());
    let mut cx = Cx::new(opts, budget, cc, compare);
    let mut r = compare(gold, pred, &mut cx);
    if matches!(r, Ok(Cmp { eq: false, .. })) {
        // A renaming or `\log` read as `\ln` (module `families`); a cap hit there keeps `NotEqual`.
        if let Ok(Some(c)) = families::second_chance(gold, pred, &mut cx) {
            r = Ok(c);
        }
    }
    if let Some(cc) = cx.cc.take() {
        CONSTS.with(|c| *c.borrow_mut() = Some(cc));
    }
    match r {
        Ok(c) => Decision { verdict: if c.eq { Verdict::Equal } else { Verdict::NotEqual }, rule: c.rule.as_str() },
        Err(k) => Decision { verdict: Verdict::Limit(k), rule: Rule::Limit.as_str() },
    }
}

thread_local! {
    static CONSTS: std::cell::RefCell<Option<Consts>> = const { std::cell::RefCell::new(None) };
}

/// Compare any two answers (gold first).
fn compare(g: &Expr, p: &Expr, cx: &mut Cx) -> Res {
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

fn dispatch(g: &Expr, p: &Expr, cx: &mut Cx) -> Res {
    match (g, p) {
        (Expr::Text(a), Expr::Text(b)) => return Ok(Cmp::new(normalise_text(a) == normalise_text(b), Rule::Text)),
        (Expr::Text(t), Expr::Sym(s)) | (Expr::Sym(s), Expr::Text(t)) => {
            let t = normalise_text(t);
            let eq = t.chars().count() == 1 && t == s.to_lowercase();
            return Ok(Cmp::new(eq, Rule::Text));
        }
        (Expr::Text(_), _) | (_, Expr::Text(_)) => return Ok(Cmp::new(false, Rule::Text)),
        (Expr::Relation { .. }, _) | (_, Expr::Relation { .. }) => return relation::compare(g, p, cx),
        _ => {}
    }
    // Sums, scalar multiples and products of matrices, written out entry by entry.
    if matrix::is_matrix_arithmetic(g) || matrix::is_matrix_arithmetic(p) {
        let side = |e: &Expr, cx: &mut Cx| -> Result<Option<Expr>, LimitKind> {
            if matrix::is_matrix_arithmetic(e) {
                matrix::evaluate(e, cx)
            } else {
                Ok(Some(e.clone()))
            }
        };
        return match (side(g, cx)?, side(p, cx)?) {
            (Some(a), Some(b)) => cx.compare(&a, &b).map(|c| c.with_rule_if_eq(Rule::Matrix)),
            _ => Ok(Cmp::new(false, Rule::Matrix)),
        };
    }
    if read::is_structure(g)
        || read::is_structure(p)
        || scalar::Summary::of(g).plus_minus
        || scalar::Summary::of(p).plus_minus
    {
        return structure::compare_structures(g, p, cx);
    }
    scalar::compare(g, p, cx)
}

/// Lower case, single spaces, no surrounding punctuation.
fn normalise_text(s: &str) -> String {
    let words: Vec<&str> = s.split_whitespace().collect();
    let joined = words.join(" ").to_lowercase();
    joined.trim_matches(|c: char| c.is_ascii_punctuation() && c != '-').to_string()
}
