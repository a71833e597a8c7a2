//! LaTeX / plain-text answer parser: an answer string becomes a typed [`Expr`].
//!
//! Pipeline, every step linear in the input and bounded:
//! 1. reject inputs over `limits.max_answer_bytes` ([`LimitKind::AnswerTooLong`]);
//! 2. fast path for plain numbers (`42`, `-3.5`) that skips everything else;
//! 3. `normalize`: one string pass that maps the many spellings of an
//!    answer to a small LaTeX subset (Unicode, `\left`, `\dfrac`, spacing, units, thousands
//!    separators, `|x|` pairing, ...);
//! 4. whole-text answers (`\text{Monday}`, `no solution`) become [`Expr::Text`];
//! 5. `check_depth`: a linear scan that bounds every source of recursion (brackets, groups,
//!    environments, prefix signs, divisions, `\pm`) by `limits.max_depth`
//!    ([`LimitKind::TooDeep`]), so neither pest nor the tree builder nor later tree walks can
//!    overflow the stack;
//! 6. the pest grammar (`latex.pest`) and the Pratt builder (module `parse`).
//!
//! Policies worth knowing (see the tests for the full table):
//! - thousands: `1,234` and `1,234,567` are numbers; `1,2`, `-2,1`, `1,22`, `27,54,108,135`,
//!   `(3,331)` are lists/tuples (rule in `normalize::join_thousands`); `1{,}234`, `10,\!080`,
//!   `12\,000` are always numbers;
//! - mixed numbers: a digit run followed by `\frac` of digit runs (or ` 1/2`) is `2 + 1/2` when the
//!   fraction is proper, a zero numerator included (`2\frac{1}{3}` is 7/3, `4 0/9` is 4); an
//!   improper `2\frac{3}{2}` is a product; `2 3` (two juxtaposed numbers) and `11 6/6` are syntax
//!   errors;
//! - repeating decimals `0.\overline{3}`, `0.1\overline{6}` (also `\bar`, `\dot` over one digit) are
//!   exact fractions; circled numbers `②③` are the list `2, 3`;
//! - "and" between inequalities is their intersection (`x > -2 \text{ and } x < 5`,
//!   `Intersection`); between other items, a separator like `,`; "or" is always `,`;
//! - a trailing domain statement (`\text{ for all } x \in \mathbb{Q}`, `, k \in \mathbb{Z}`,
//!   `\text{ for some integer } t`) is dropped (module `domain`);
//! - `\text{(C)}`, `\text{C}`, `(C)` are `Sym("C")`; other whole-text answers are `Text`;
//! - a number with a base subscript (`204_5`) is `Sym("204_5")`;
//! - `2^10` is `2^{10}` (plain-text reading), `\sqrt12` is `\sqrt{12}`;
//! - `\lg` is `log10`; `\sin^{-1}` is `arcsin`; `vmatrix` is `det(matrix)`;
//! - `f(x)`, `g(x)`, `h(x)` and an upper-case letter directly followed by `(` (`I(0)`, `N(n)`) are
//!   calls; `x \in S` is `S`; `A \setminus \{p, q\}` (and `A - \{p\}` for a set of reals `A`) is
//!   `A` intersected with the complement of each point (other differences are rejected);
//! - `-5` is `Neg(Num(5))` (never a negative literal), `(a)` is `a`, `\boxed{..}` is unwrapped and
//!   several boxes are a `List`.

pub(crate) mod domain;
mod eaten;
pub(crate) use eaten::has_eaten_backslash;
mod fast;
mod normalize;
pub(crate) use normalize::{emphasis_holds_value, EMPHASIS_COMMANDS};
mod number;
mod parse;
#[cfg(test)]
mod tests;

use crate::ast::Expr;
use crate::limits::{LimitKind, Limits};

pub use normalize_api::normalized;

/// Why an answer string could not be parsed.
#[derive(Clone, Debug, PartialEq)]
pub enum ParseError {
    /// The grammar rejected the input; `position` is a byte offset into the *normalised* input
    /// (see [`normalized`]).
    Syntax {
        /// What the grammar expected.
        message: String,
        /// Byte offset in the normalised input.
        position: usize,
    },
    /// A cost cap was hit before or during parsing.
    Limit(LimitKind),
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParseError::Syntax { message, position } => write!(f, "at byte {position}: {message}"),
            ParseError::Limit(k) => write!(f, "limit hit: {k}"),
        }
    }
}

impl std::error::Error for ParseError {}

/// Parse one answer string (the content of a `\boxed{}`, of `$...$`, a number, a gold answer).
///
/// Never panics and never recurses deeper than `limits.max_depth` allows, on any input.
pub fn parse(input: &str, limits: &Limits) -> Result<Expr, ParseError> {
    if input.len() > limits.max_answer_bytes {
        return Err(ParseError::Limit(LimitKind::AnswerTooLong));
    }
    let trimmed = input.trim();
    if let Some(r) = fast::plain_number(trimmed, limits) {
        return r;
    }
    if let Some(r) = fast::simple(trimmed, limits) {
        return r;
    }
    parse_full(trimmed, limits)
}

/// The full pipeline, without the fast paths.
pub(crate) fn parse_full(trimmed: &str, limits: &Limits) -> Result<Expr, ParseError> {
    // A trailing domain statement (`\text{ for all } x \in \mathbb{Q}`, `, k \in \mathbb{Z}`)
    // says where the variables live, not what the answer is.
    let trimmed = domain::strip(trimmed);
    if let Some(text) = words_only(trimmed) {
        return Ok(text);
    }
    let norm = normalize::normalize(trimmed);
    if norm.is_empty() {
        return Err(ParseError::Syntax { message: "empty answer".into(), position: 0 });
    }
    if let Some(text) = whole_text(&norm) {
        return Ok(text);
    }
    check_depth(&norm, limits.max_depth)?;
    parse::parse_normalized(&norm, limits)
}

mod normalize_api {
    /// The normalised form of an answer, as the grammar sees it (for `--explain` and for
    /// reading [`ParseError::Syntax`](super::ParseError) positions).
    pub fn normalized(input: &str) -> String {
        super::normalize::normalize(input)
    }
}

/// A whole-text answer after normalisation: a single `\text{...}`.
fn whole_text(norm: &str) -> Option<Expr> {
    let body = norm.strip_prefix("\\text{")?.strip_suffix('}')?;
    if body.contains(['{', '}']) {
        return None;
    }
    Some(Expr::Text(normalize::normalize_text(body)))
}

/// A plain-words answer (`no solution`, `Monday`, `odd.`): only letters, spaces, apostrophes
/// and final punctuation, with a word of three or more letters that is not a function or
/// constant name (`sin x`, `pi` stay math).
fn words_only(s: &str) -> Option<Expr> {
    let body = s.trim_end_matches(['.', '!', '?']);
    if !body.chars().all(|c| c.is_ascii_alphabetic() || c == ' ' || c == '\'') {
        return None;
    }
    let mut words = body.split([' ', '\'']).filter(|w| !w.is_empty());
    let mathy = |w: &str| {
        let l = w.to_ascii_lowercase();
        normalize::FUNC_WORDS.contains(&l.as_str())
            || matches!(l.as_str(), "pi" | "inf" | "infty" | "infinity" | "eulergamma")
    };
    if words.clone().any(mathy) || !words.any(|w| w.len() >= 3) {
        return None;
    }
    Some(Expr::Text(normalize::normalize_text(s)))
}

/// The Greek letters: each Unicode character and its LaTeX command name (one table for the
/// normaliser, which rewrites the characters, and for the parser, which reads the names).
pub(crate) const GREEK: &[(char, &str)] = &[
    ('α', "alpha"),
    ('β', "beta"),
    ('γ', "gamma"),
    ('δ', "delta"),
    ('ϵ', "epsilon"),
    ('ε', "varepsilon"),
    ('ζ', "zeta"),
    ('η', "eta"),
    ('θ', "theta"),
    ('ϑ', "vartheta"),
    ('ι', "iota"),
    ('κ', "kappa"),
    ('λ', "lambda"),
    ('μ', "mu"),
    ('ν', "nu"),
    ('ξ', "xi"),
    ('ο', "omicron"),
    ('ρ', "rho"),
    ('ϱ', "varrho"),
    ('σ', "sigma"),
    ('ς', "varsigma"),
    ('τ', "tau"),
    ('υ', "upsilon"),
    ('ϕ', "phi"),
    ('φ', "varphi"),
    ('χ', "chi"),
    ('ψ', "psi"),
    ('ω', "omega"),
    ('Γ', "Gamma"),
    ('Δ', "Delta"),
    ('Θ', "Theta"),
    ('Λ', "Lambda"),
    ('Ξ', "Xi"),
    ('Π', "Pi"),
    ('Σ', "Sigma"),
    ('Υ', "Upsilon"),
    ('Φ', "Phi"),
    ('Ψ', "Psi"),
    ('Ω', "Omega"),
];

/// Whether `name` is a Greek letter's command name (`alpha`, `varphi`, `Omega`).
pub(crate) fn is_greek_name(name: &str) -> bool {
    GREEK.iter().any(|(_, n)| *n == name)
}

/// Commands other than Greek letters that end a value or an operand (a sign after them is
/// infix, a `|` after them closes a bar, a unit may follow them).
pub(crate) const VALUE_SYMBOLS: &[&str] =
    &["pi", "infty", "rvert", "rangle", "rfloor", "rceil", "degree", "emptyset", "ell", "hbar", "angle", "ldots"];

/// Whether command `name` (without its backslash) ends a value: a sign after it is infix.
fn ends_value(name: &str) -> bool {
    is_greek_name(name) || VALUE_SYMBOLS.contains(&name) || ["odot", "mho", "nabla", "aleph"].contains(&name)
}

/// The bracket levels of [`check_depth`]: how deep the brackets are and how many nesting
/// operators each enclosing level had counted when the next level opened.
#[derive(Default)]
struct Levels {
    depth: usize,
    saved: Vec<usize>,
    saved_sum: usize,
    /// The current level's count after the last [`Levels::step`].
    cur: usize,
}

impl Levels {
    /// Open or close a level given the current level's count `cur`; returns the effective depth.
    fn step(&mut self, open: bool, close: bool, cur: usize) -> usize {
        self.cur = cur;
        if open {
            self.depth += 1;
            self.saved.push(cur);
            self.saved_sum += cur;
            self.cur = 0;
        } else if close && self.depth > 0 {
            self.depth -= 1;
            self.cur = self.saved.pop().unwrap_or(0);
            self.saved_sum -= self.cur;
        }
        self.depth + self.saved_sum + self.cur
    }
}

/// Bound every source of recursion with one linear scan of the normalised input.
///
/// The effective depth at a position is the bracket depth (`( [ {`, `\lvert`, `\langle`,
/// `\lfloor`, `\lceil`, `\begin`) plus, for each open level, the number of constructs since the
/// last separator (`,` `;` `&` `\\` or a relation) that nest in the Pratt parser or the tree: a
/// prefix sign or `\pm`/`\mp`, `/` and `\div`. Postfix operators are capped by the grammar (4 per
/// term) and `\frac`/`\sqrt`/functions only nest through groups, which are counted.
pub(crate) fn check_depth(s: &str, max_depth: usize) -> Result<(), ParseError> {
    let b = s.as_bytes();
    let too_deep = Err(ParseError::Limit(LimitKind::TooDeep));
    let mut levels = Levels::default();
    // Nesting operators counted on the current level since its last separator.
    let mut cur = 0usize;
    // Whether the previous token ends a value (so a following sign is infix).
    let mut after_value = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let mut open = false;
        let mut close = false;
        let mut value = false;
        match c {
            b'(' | b'[' | b'{' => open = true,
            b')' | b']' | b'}' => {
                close = true;
                value = true;
            }
            b',' | b';' | b'&' | b'=' | b'<' | b'>' => cur = 0,
            b'+' | b'-' if !after_value => cur += 1,
            b'/' => cur += 1,
            b'\\' => {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && b[j].is_ascii_alphabetic() {
                    j += 1;
                }
                let name = &s[start..j];
                match name {
                    "lvert" | "langle" | "lfloor" | "lceil" | "begin" => open = true,
                    "rvert" | "rangle" | "rfloor" | "rceil" | "end" => {
                        close = true;
                        value = true;
                    }
                    "pm" | "mp" | "div" => cur += 1,
                    "le" | "ge" | "ne" | "approx" | "in" => cur = 0,
                    "" => {
                        // `\{`, `\}`, `\\`: the brace itself is seen next round.
                        if b.get(j) == Some(&b'\\') {
                            cur = 0;
                            j += 1;
                        }
                    }
                    n => value = ends_value(n),
                }
                i = j.max(i + 1);
                if levels.step(open, close, cur) > max_depth {
                    return too_deep;
                }
                cur = levels.cur;
                after_value = value;
                continue;
            }
            c if c.is_ascii_alphanumeric() || matches!(c, b'!' | b'%' | b'\'' | b'.') => value = true,
            b' ' => {
                i += 1;
                continue;
            }
            _ => {}
        }
        if levels.step(open, close, cur) > max_depth {
            return too_deep;
        }
        cur = levels.cur;
        after_value = value;
        i += 1;
    }
    Ok(())
}
