//! The typed syntax tree every parsed answer becomes.
//!
//! This is the contract between the LaTeX parser (`latex`), which builds it, and the equivalence
//! checker (`equiv`), which decides whether two trees denote the same mathematical answer.
//! Nothing downstream of the parser sees pest's `Pair<Rule>`.
//!
//! Conventions the parser guarantees:
//! - Literals are exact: `0.25` is `Num { value: 1/4, decimals: Some(2) }`, `1,234` and `12\,000` are
//!   integers, `8.7e8` is `Num { value: 870000000, decimals: Some(1) }` (the decimals of the
//!   mantissa; what matters is that it was written as a decimal).
//! - `\frac{a}{b}`, `a/b`, `a \div b` are `Div`; `a - b` is `Add([a, Neg(b)])`; n-ary `Add`/`Mul`
//!   are flattened one level (`a+b+c` is one `Add` with three terms).
//! - Mixed numbers `2\frac{1}{2}` are `Add([2, Div(1, 2)])`; a repeating decimal `0.1\overline{6}`
//!   is the exact `Div(Add([16, Neg(1)]), 90)`.
//! - `\sqrt{x}` is `Root { index: 2, .. }`, `\sqrt[3]{x}` has index 3.
//! - `\pi`, `π` are `Const(Pi)`; a lone `e` (and `\mathrm{e}`) is `Const(E)`; a lone `i` (and
//!   `\mathrm{i}`) is `Const(I)`; `\infty`, `∞` are `Const(Infinity)`. Other letters are `Sym`.
//! - Greek letters are `Sym("alpha")` etc.; subscripted names are one symbol: `x_1`, `a_{n}` become
//!   `Sym("x_1")`, `Sym("a_n")`.
//! - Units (`\text{cm}`, `\mbox{ inches}`, `dollars`, ...) are dropped by the parser; a whole-text
//!   answer (`\text{Monday}`, `no solution`) is `Text` with normalised content (lower case, single
//!   spaces, no surrounding punctuation).
//! - A bare comma list `1, 2, 3` (no brackets) is `List`; `(1, 2)` is `Tuple`; `[1, 2]`, `(1, 2]`,
//!   `[1, 2)` are `Interval`s (an open `(a, b)` stays a `Tuple`: the checker treats a 2-tuple as an
//!   open interval when compared with an interval); `\{1, 2\}` is `Set`.

use num_bigint::BigInt;
use num_rational::BigRational;
use std::fmt;

/// A parsed answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// An exact numeric literal as written.
    Num(Number),
    /// A free symbol: `x`, `alpha`, `x_1`, a multiple-choice letter `B`.
    Sym(String),
    /// A named constant.
    Const(Constant),
    /// Unary minus.
    Neg(Box<Expr>),
    /// Sum of terms (subtraction is `Neg` inside).
    Add(Vec<Expr>),
    /// Product of factors, explicit (`\cdot`, `\times`, `*`) or implicit (`2x`, `2\pi`).
    Mul(Vec<Expr>),
    /// Quotient: `\frac`, `/`, `\div`.
    Div(Box<Expr>, Box<Expr>),
    /// Power `base^exp` (also `\exp(x)` is `Func(Exp, ..)`, not a power).
    Pow(Box<Expr>, Box<Expr>),
    /// `\sqrt[index]{radicand}`; plain `\sqrt` has index 2.
    Root {
        /// The index (2 for a square root).
        index: Box<Expr>,
        /// The expression under the root.
        radicand: Box<Expr>,
    },
    /// A named function applied to arguments (`\sin x`, `\max(a,b)`, `f(x)`).
    Func(Func, Vec<Expr>),
    /// Logarithm with an explicit base (`\log_2 8`); `\ln` is `Func(Ln)`, `\log` without base is
    /// `Func(Log10)`.
    Log {
        /// The base.
        base: Box<Expr>,
        /// The argument.
        arg: Box<Expr>,
    },
    /// `n!`
    Factorial(Box<Expr>),
    /// `\binom{n}{k}`, `\dbinom`, `\tbinom`, `C(n,k)` is not recognised.
    Binom(Box<Expr>, Box<Expr>),
    /// `28\%`: the number followed by a percent sign (the checker decides what it equals).
    Percent(Box<Expr>),
    /// `30^\circ`, `30°`, `30 degrees`: an angle in degrees.
    Degrees(Box<Expr>),
    /// `5 \text{ cm}`, `12 \text{ dozen}`: a value with a unit of the registry (`crate::units`).
    Quantity(Box<Expr>, crate::units::UnitId),
    /// `a \pm b` (`None` for a leading `\pm b`): stands for the two values a+b and a-b.
    PlusMinus(Option<Box<Expr>>, Box<Expr>),
    /// Bare comma/semicolon-separated answers, or several boxed answers: unordered unless the
    /// checker is told otherwise.
    List(Vec<Expr>),
    /// Parenthesised ordered tuple `(a, b, ...)`, also a point or a vector.
    Tuple(Vec<Expr>),
    /// `\{a, b\}`: unordered, duplicates irrelevant.
    Set(Vec<Expr>),
    /// An interval with its end types; ends may be `Const(Infinity)` or `Neg(Const(Infinity))`.
    Interval {
        /// The lower end.
        lo: Box<Expr>,
        /// The upper end.
        hi: Box<Expr>,
        /// Whether the lower end belongs to the interval.
        lo_closed: bool,
        /// Whether the upper end belongs to the interval.
        hi_closed: bool,
    },
    /// `A \cup B \cup ...`
    Union(Vec<Expr>),
    /// `A \cap B \cap ...`; also inequalities joined by "and" (`x > -2 \text{ and } x < 5`) and a
    /// set minus points (`A \setminus \{p\}` is `A` intersected with `(-\infty, p) \cup (p, \infty)`).
    Intersection(Vec<Expr>),
    /// `\emptyset`, `\varnothing`, `\{\}`, `∅`.
    EmptySet,
    /// `pmatrix`, `bmatrix`, `matrix`, ...: rows of entries. A column vector is n rows of 1.
    Matrix(Vec<Vec<Expr>>),
    /// An equation, inequality or chain: `terms[0] ops[0] terms[1] ops[1] terms[2] ...`
    /// (`ops.len() + 1 == terms.len()`, at least one op).
    Relation {
        /// The terms, in order.
        terms: Vec<Expr>,
        /// The operator between each two neighbouring terms.
        ops: Vec<RelOp>,
    },
    /// A text answer, normalised (lower case, collapsed spaces).
    Text(String),
}

/// An exact literal and how it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct Number {
    /// The exact value (`0.1` is exactly 1/10).
    pub value: BigRational,
    /// `Some(d)` when written as a decimal with `d` digits after the point (`3.14` -> 2, `5.` -> 0),
    /// `None` for integers. Used by the decimal tolerance rule.
    pub decimals: Option<u32>,
}

impl Number {
    /// An integer literal.
    pub fn int(n: impl Into<BigInt>) -> Self {
        Number { value: BigRational::from_integer(n.into()), decimals: None }
    }
}

/// Named mathematical constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Constant {
    /// π.
    Pi,
    /// Euler's number e.
    E,
    /// The imaginary unit.
    I,
    /// ∞.
    Infinity,
}

/// Known functions. `Other` holds a user function name (`f(x)`, `g(2)`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Func {
    /// sin
    Sin,
    /// cos
    Cos,
    /// tan
    Tan,
    /// cot
    Cot,
    /// sec
    Sec,
    /// csc
    Csc,
    /// arcsin
    Arcsin,
    /// arccos
    Arccos,
    /// arctan
    Arctan,
    /// arccot
    Arccot,
    /// arcsec
    Arcsec,
    /// arccsc
    Arccsc,
    /// sinh
    Sinh,
    /// cosh
    Cosh,
    /// tanh
    Tanh,
    /// coth
    Coth,
    /// Natural logarithm `\ln`.
    Ln,
    /// `\log` without a base (base 10 by convention here).
    Log10,
    /// exp
    Exp,
    /// |x|
    Abs,
    /// ⌊x⌋
    Floor,
    /// ⌈x⌉
    Ceil,
    /// gcd
    Gcd,
    /// lcm
    Lcm,
    /// max
    Max,
    /// min
    Min,
    /// Real/imaginary part, argument, conjugate and other rarely seen named operators.
    Other(String),
}

/// Relation operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RelOp {
    /// `=`
    Eq,
    /// `≠`
    Ne,
    /// `<`
    Lt,
    /// `≤`
    Le,
    /// `>`
    Gt,
    /// `≥`
    Ge,
    /// `\approx`: treated as `=` by the checker.
    Approx,
}

impl fmt::Display for Expr {
    /// A compact, unambiguous, fully parenthesised rendering used by `--explain` and test failures.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn list(f: &mut fmt::Formatter<'_>, items: &[Expr], sep: &str) -> fmt::Result {
            for (k, it) in items.iter().enumerate() {
                if k > 0 {
                    f.write_str(sep)?;
                }
                write!(f, "{it}")?;
            }
            Ok(())
        }
        match self {
            Expr::Num(n) => match n.decimals {
                Some(d) => write!(f, "{}~{}dp", n.value, d),
                None => write!(f, "{}", n.value),
            },
            Expr::Sym(s) => f.write_str(s),
            Expr::Const(c) => f.write_str(match c {
                Constant::Pi => "pi",
                Constant::E => "e",
                Constant::I => "i",
                Constant::Infinity => "inf",
            }),
            Expr::Neg(a) => write!(f, "-({a})"),
            Expr::Add(t) => {
                f.write_str("(")?;
                list(f, t, " + ")?;
                f.write_str(")")
            }
            Expr::Mul(t) => {
                f.write_str("(")?;
                list(f, t, " * ")?;
                f.write_str(")")
            }
            Expr::Div(a, b) => write!(f, "({a} / {b})"),
            Expr::Pow(a, b) => write!(f, "({a} ^ {b})"),
            Expr::Root { index, radicand } => write!(f, "root[{index}]({radicand})"),
            Expr::Func(func, args) => {
                match func {
                    Func::Other(name) => write!(f, "{name}(")?,
                    other => write!(f, "{}(", format!("{other:?}").to_lowercase())?,
                }
                list(f, args, ", ")?;
                f.write_str(")")
            }
            Expr::Log { base, arg } => write!(f, "log[{base}]({arg})"),
            Expr::Factorial(a) => write!(f, "({a})!"),
            Expr::Binom(n, k) => write!(f, "binom({n}, {k})"),
            Expr::Percent(a) => write!(f, "({a})%"),
            Expr::Degrees(a) => write!(f, "({a})deg"),
            Expr::Quantity(a, u) => write!(f, "({a}) {}", u.unit().name),
            Expr::PlusMinus(a, b) => match a {
                Some(a) => write!(f, "({a} ± {b})"),
                None => write!(f, "(± {b})"),
            },
            Expr::List(t) => {
                f.write_str("list[")?;
                list(f, t, ", ")?;
                f.write_str("]")
            }
            Expr::Tuple(t) => {
                f.write_str("tuple(")?;
                list(f, t, ", ")?;
                f.write_str(")")
            }
            Expr::Set(t) => {
                f.write_str("{")?;
                list(f, t, ", ")?;
                f.write_str("}")
            }
            Expr::Interval { lo, hi, lo_closed, hi_closed } => {
                write!(f, "{}{lo}, {hi}{}", if *lo_closed { "[" } else { "(" }, if *hi_closed { "]" } else { ")" })
            }
            Expr::Union(t) => {
                f.write_str("(")?;
                list(f, t, " ∪ ")?;
                f.write_str(")")
            }
            Expr::Intersection(t) => {
                f.write_str("(")?;
                list(f, t, " ∩ ")?;
                f.write_str(")")
            }
            Expr::EmptySet => f.write_str("∅"),
            Expr::Matrix(rows) => {
                f.write_str("matrix[")?;
                for (k, r) in rows.iter().enumerate() {
                    if k > 0 {
                        f.write_str("; ")?;
                    }
                    list(f, r, ", ")?;
                }
                f.write_str("]")
            }
            Expr::Relation { terms, ops } => {
                for (k, t) in terms.iter().enumerate() {
                    if k > 0 {
                        let op = match ops[k - 1] {
                            RelOp::Eq => "=",
                            RelOp::Ne => "≠",
                            RelOp::Lt => "<",
                            RelOp::Le => "≤",
                            RelOp::Gt => ">",
                            RelOp::Ge => "≥",
                            RelOp::Approx => "≈",
                        };
                        write!(f, " {op} ")?;
                    }
                    write!(f, "{t}")?;
                }
                Ok(())
            }
            Expr::Text(s) => write!(f, "text({s:?})"),
        }
    }
}
