//! What every comparison carries: the options ([`EquivOptions`]), the budget, the partial verdict
//! ([`Cmp`]) and the recursion ([`Cx::compare`]).
//!
//! The comparison is recursive (a set compares its elements, a relation its value), but the
//! policy modules do not import the function that dispatches: [`Cx`] holds it, set once by
//! `equiv::equivalent`, so every module reads downwards only (the layering in the module doc of
//! `equiv`).

use super::rule::Rule;
use crate::ast::Expr;
use crate::limits::{Budget, LimitKind};
use astro_float::Consts;

/// Comparison policy switches.
#[derive(Clone, Debug)]
pub struct EquivOptions {
    /// Relative tolerance for comparing numeric values when a decimal literal is involved.
    pub decimal_rel_tol: f64,
    /// Relative tolerance for values without decimal literals that could not be computed exactly
    /// (256-bit evaluation of `\pi`, radicals, logs, ...; also at random points). Keep it far
    /// below any tolerance a user would accept: it only absorbs rounding of the evaluation.
    pub eval_rel_tol: f64,
    /// Whether `28\%` may also match `28` (percent read as a unit) besides `0.28`.
    pub percent_as_unit: bool,
    /// Significant digits a lone decimal prediction needs to answer a gold written without
    /// decimals that it does not equal exactly (`\sqrt3`, `3\pi`, `e`, `\frac13`): the gold
    /// rounded at the prediction's last digit must give the prediction, and the prediction must
    /// write at least this many significant digits (`1.73205` answers `\sqrt3`, `1.73` does not).
    /// Default 6; 3 accepts three-digit roundings such as `1.73`, `9.42` for `3\pi`.
    pub min_decimal_digits_for_exact: u32,
}

impl Default for EquivOptions {
    fn default() -> Self {
        EquivOptions {
            decimal_rel_tol: 1e-6,
            eval_rel_tol: 1e-30,
            percent_as_unit: true,
            min_decimal_digits_for_exact: 6,
        }
    }
}

/// A partial verdict: equal or not, and the rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cmp {
    pub eq: bool,
    pub rule: Rule,
}

impl Cmp {
    pub fn new(eq: bool, rule: Rule) -> Cmp {
        Cmp { eq, rule }
    }
    /// Replace the rule name by a more specific one when the comparison succeeded through it.
    pub fn with_rule_if_eq(self, rule: Rule) -> Cmp {
        if self.eq {
            Cmp { eq: true, rule }
        } else {
            self
        }
    }
}

pub(crate) type Res = Result<Cmp, LimitKind>;

/// Per-call context.
pub(crate) struct Cx<'a> {
    pub opts: &'a EquivOptions,
    pub budget: &'a mut Budget,
    /// astro-float constant cache, taken on first use (`eval::give_back_consts` returns it).
    pub cc: Option<Consts>,
    /// Nesting of [`Cx::compare`] (checked by the dispatcher).
    pub depth: usize,
    /// The comparison of any two answers: `equiv`'s dispatcher.
    recurse: fn(&Expr, &Expr, &mut Cx<'_>) -> Res,
}

impl<'a> Cx<'a> {
    /// A context whose [`Cx::compare`] is `recurse`.
    pub fn new(
        opts: &'a EquivOptions,
        budget: &'a mut Budget,
        recurse: fn(&Expr, &Expr, &mut Cx<'_>) -> Res,
    ) -> Cx<'a> {
        Cx { opts, budget, cc: None, depth: 0, recurse }
    }

    /// Compare any two answers (gold first), whatever their shapes: the recursion of every policy.
    #[inline]
    pub fn compare(&mut self, g: &Expr, p: &Expr) -> Res {
        (self.recurse)(g, p, self)
    }
}
