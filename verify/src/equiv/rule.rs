//! The names of the equivalence rules ([`Rule`]): the rule that decided a comparison is reported
//! in `Decision::rule`, `Score.rule`, `--explain`, JSON rows and Python, so each name is stable.

/// Declares [`Rule`] with its names once: a variant, its stable name and what decided.
macro_rules! rules {
    ($($(#[$doc:meta])* $variant:ident = $name:literal,)*) => {
        /// A rule of `equivalent`: what decided a comparison (`verify/EQUIVALENCE.md` lists them).
        /// [`Rule::as_str`] (and `Display`) is the stable name reported in `Decision::rule`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Rule {
            $($(#[$doc])* $variant,)*
        }

        impl Rule {
            /// Every rule, in declaration order.
            pub const ALL: &'static [Rule] = &[$(Rule::$variant),*];

            /// The stable name (`"exact"`, `"decimal_tolerance"`, ...).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Rule::$variant => $name,)*
                }
            }
        }
    };
}

rules! {
    // Numbers (`scalar`).
    /// Two exact values (integers, rationals, Gaussian rationals) compared exactly.
    Exact = "exact",
    /// Two values compared by 256-bit evaluation with the relative `eval_rel_tol`.
    Numeric = "numeric",
    /// A difference that vanishes at 1024 bits: a true zero (`\sin\pi = 0`).
    NumericZero = "numeric_zero",
    /// Decimals compared at the precision they write.
    DecimalTolerance = "decimal_tolerance",
    /// A more precise prediction that rounds to a decimal gold.
    RoundedGold = "rounded_gold",
    /// A decimal prediction that is the gold correctly rounded at its last digit.
    RoundedPred = "rounded_pred",
    /// Expressions with free symbols compared at seeded points.
    RandomPoints = "random_points",
    /// A prediction undefined (or not real) where a gold defined on all reals is defined.
    Domain = "domain",
    /// A side that is undefined (`0^0`, division by zero).
    Undefined = "undefined",
    /// A side that is no number (a symbol the evaluation cannot read).
    NotNumeric = "not_numeric",
    /// `\infty` against `\infty`, `-\infty` or a number.
    Infinity = "infinity",
    /// `p\%` as `p/100` or `p`.
    Percent = "percent",
    /// `x^\circ` as `x\pi/180` or `x`.
    Degrees = "degrees",
    /// Units of measure converted (`quantity`), or two percents or degrees compared by number.
    Unit = "unit",
    // Structures (`structure`, `read`, `matrix`, `sets`).
    /// Unordered, duplicates ignored.
    Set = "set",
    /// Unordered, every element counted.
    Multiset = "multiset",
    /// Ordered, term by term.
    Tuple = "tuple",
    /// An interval: ends and end types.
    Interval = "interval",
    /// A union of intervals and points, after merging adjacent intervals.
    Union = "union",
    /// Matrices entry by entry, and matrix arithmetic written out.
    Matrix = "matrix",
    /// `a \pm b` as the set of its sign choices.
    PlusMinus = "plus_minus",
    /// A one-element collection against a plain value.
    Singleton = "singleton",
    /// Two structures of shapes that never match.
    Structure = "structure",
    /// Sets of reals written with an intersection (`sets`).
    Intersection = "intersection",
    // Relations (`relation`, `roots`, `families`).
    /// `x = 5` against `5`, and equations read as their values.
    EquationValue = "equation_value",
    /// Two relations whose sides are proportional at seeded points.
    RelationProportional = "relation_proportional",
    /// An inequality against an interval (or two inequalities as intervals).
    InequalityInterval = "inequality_interval",
    /// A polynomial equation against the list of its roots (`roots`).
    EquationRoots = "equation_roots",
    /// A prediction that states something false (`7 = 5`) answers nothing.
    FalseEquation = "false_equation",
    /// A gold solved for a variable against a prediction not solved for it.
    UnsolvedRelation = "unsolved_relation",
    /// Orderings compared term by term.
    Ordering = "ordering",
    /// A relation against what no relation rule reads.
    Relation = "relation",
    // Text and the second chance (`families`).
    /// Text after normalisation, or against a one-letter symbol.
    Text = "text",
    /// A number word against a number (reported by the scorer, `score.rs`).
    TextNumber = "text_number",
    /// A lone letter against a lone letter, any case (multiple choice).
    ChoiceLetter = "choice_letter",
    /// A renaming of a bound argument, a constant or an integer parameter.
    Renaming = "renaming",
    /// `\log` without a base read as `\ln` against a side that writes `\ln`.
    LogAsLn = "log_as_ln",
    /// The same parsed answer.
    Structural = "structural",
    /// A cost bound stopped the comparison.
    Limit = "limit",
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Rule;

    #[test]
    fn names_are_unique_and_documented() {
        let doc = include_str!("../../EQUIVALENCE.md");
        for (i, r) in Rule::ALL.iter().enumerate() {
            assert!(Rule::ALL[..i].iter().all(|q| q.as_str() != r.as_str()), "{r} twice");
            assert!(doc.contains(&format!("`{r}`")), "{r} is not in verify/EQUIVALENCE.md");
        }
        assert_eq!(Rule::DecimalTolerance.to_string(), "decimal_tolerance");
    }
}
