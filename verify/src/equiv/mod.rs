//! Equivalence of two parsed answers: does `pred` denote the same mathematical answer as `gold`?
//!
//! The comparison tries an ordered list of policies (`policies::POLICIES`, a function and a
//! one-line why per row; the first that decides wins) on the shapes of the answers:
//! - text (`Text`) after normalisation, also against a one-letter symbol (multiple choice);
//! - relations (`relation`, `roots`): `x = 5` against `5`, equations with the same solution set,
//!   inequalities against intervals, a polynomial equation against the list of its roots; a
//!   predicted chain with a false link between numbers (`7 = 5`) answers nothing, a gold solved
//!   for a variable (`x > 3`) needs a prediction solved for it, orderings compare term by term;
//! - arithmetic on matrices written out entry by entry (`matrix`);
//! - structures (`structure`): sets, lists, tuples, intervals, unions, matrices, `\pm`;
//!   intersections of sets of reals (`sets`: inequalities joined by "and", a set minus points);
//!   answers written in another shape (`families`: relations joined by "or", grouped equations);
//! - scalars (`scalar`): exact rational arithmetic (Gaussian rationals, big integers) where every
//!   step is rational, otherwise 256-bit complex evaluation ([`eval`]) with a relative test;
//!   expressions with free symbols are compared at seeded pseudo-random points; units of measure
//!   (`quantity`).
//!
//! After `NotEqual`, `policies::SECOND_CHANCES` rewrite one side exactly (a renaming, `\log` read
//! as `\ln`) and compare again. The rule that decided is a [`Rule`]; its stable name is
//! [`Decision::rule`].
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
//! | 7 | `policies` | the dispatcher: the ordered policies, the second chances |
//! | 6 | `relation`, `structure`, `matrix`, `roots`, `sets`, `families` | one shape each (none reads another) |
//! | 5 | `read` | the readers several policies share (`value_side`, `as_interval`, `closed_scalar`, `expand_pm`, `states_falsehood`, `ordered`, `set`, ...) |
//! | 4 | `scalar` | numbers and expressions, percent, degrees, random points |
//! | 3 | `quantity` | units of measure (compares values with the `scalar::compare` it is given) |
//! | 2 | `context` | [`EquivOptions`], the per-call context `Cx`, the partial verdict `Cmp` |
//! | 1 | `eval` | 256-bit evaluation |
//! | 0 | `number`, `elementary`, `fast`, `rule` | exact numbers, fast `exp`/`ln`/`cos`/`sin`, the `f64` screen, the rule names ([`Rule`]) |
//!
//! This module (above them all) holds the entry point and its types. The comparison is recursive
//! (a set compares its elements), and the recursion goes through `Cx::compare`, which calls
//! `policies::compare` through a function pointer set by [`equivalent`]: no module imports one
//! above it.

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
mod policies;
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
use context::{Cmp, Cx};

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
    // The astro-float constants cache (pi, e, ln 2, ln 10 digits) is taken from those of earlier
    // calls when first needed (`eval::give_back_consts`).
    let mut cx = Cx::new(opts, budget, policies::compare);
    let mut r = policies::compare(gold, pred, &mut cx);
    if matches!(r, Ok(Cmp { eq: false, .. })) {
        // A renaming or `\log` read as `\ln` (`policies::SECOND_CHANCES`); a cap hit there keeps
        // `NotEqual`.
        if let Some(c) = policies::second_chance(gold, pred, &mut cx) {
            r = Ok(c);
        }
    }
    if let Some(cc) = cx.cc.take() {
        eval::give_back_consts(cc);
    }
    match r {
        Ok(c) => Decision { verdict: if c.eq { Verdict::Equal } else { Verdict::NotEqual }, rule: c.rule.as_str() },
        Err(k) => Decision { verdict: Verdict::Limit(k), rule: Rule::Limit.as_str() },
    }
}
