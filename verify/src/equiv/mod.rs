//! Equivalence of two parsed answers (STUB: replaced by the equivalence module).

use crate::ast::Expr;
use crate::limits::{Budget, LimitKind};

/// The outcome of a comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Equal,
    NotEqual,
    /// A cost bound stopped the comparison before it could decide.
    Limit(LimitKind),
}

/// A verdict and the name of the rule that decided it (for `--explain`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    pub verdict: Verdict,
    /// A short stable rule name, e.g. "exact", "decimal_tolerance", "set_unordered".
    pub rule: &'static str,
}

/// Comparison policy switches.
#[derive(Clone, Debug)]
pub struct EquivOptions {
    /// Relative tolerance for comparing numeric values that involve a decimal literal.
    pub decimal_rel_tol: f64,
    /// Relative tolerance for random-point evaluation of expressions with free variables.
    pub eval_rel_tol: f64,
    /// Whether `28\%` may also match `28` (percent read as a unit) besides `0.28`.
    pub percent_as_unit: bool,
}

impl Default for EquivOptions {
    fn default() -> Self {
        EquivOptions { decimal_rel_tol: 1e-6, eval_rel_tol: 1e-9, percent_as_unit: true }
    }
}

/// Decide whether `pred` denotes the same answer as `gold`. STUB: structural equality.
pub fn equivalent(gold: &Expr, pred: &Expr, _opts: &EquivOptions, _budget: &mut Budget) -> Decision {
    if gold == pred {
        Decision { verdict: Verdict::Equal, rule: "structural" }
    } else {
        Decision { verdict: Verdict::NotEqual, rule: "structural" }
    }
}
