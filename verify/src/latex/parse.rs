//! The pest grammar and the one place where its `Pairs` become an [`Expr`].
//!
//! Precedence, lowest first (Pratt table in [`pratt`]):
//! `\cup` < `\cap`, `\setminus` < `+ - \pm \mp` < prefix `- + \pm \mp` < `* / \cdot \times \div`
//! and implicit products (all left-associative, same level: `1/2x` is `(1/2)x`) < postfix `! % ^
//! \degree`. So `-x^2` is `-(x^2)`, `-2x` is `-(2x)`, `2x^2` is `2(x^2)`.

use super::normalize::normalize_text;
use super::number::{is_one, parse_int, parse_number};
use super::ParseError;
use crate::ast::{Constant, Expr, Func, Number, RelOp};
use crate::limits::Limits;
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};
use pest::iterators::{Pair, Pairs};
use pest::pratt_parser::{Assoc, Op, PrattParser};
use pest::Parser;
use std::sync::OnceLock;

#[derive(pest_derive::Parser)]
#[grammar = "latex/latex.pest"]
struct AnswerParser;

/// The precedence table, built once (immutable, shared by all threads).
fn pratt() -> &'static PrattParser<Rule> {
    static PRATT: OnceLock<PrattParser<Rule>> = OnceLock::new();
    PRATT.get_or_init(|| {
        PrattParser::new()
            .op(Op::infix(Rule::cup, Assoc::Left))
            .op(Op::infix(Rule::cap, Assoc::Left) | Op::infix(Rule::setminus, Assoc::Left))
            .op(Op::infix(Rule::ratio, Assoc::Left))
            .op(Op::infix(Rule::add, Assoc::Left)
                | Op::infix(Rule::sub, Assoc::Left)
                | Op::infix(Rule::pm, Assoc::Left)
                | Op::infix(Rule::mp, Assoc::Left))
            .op(Op::prefix(Rule::neg) | Op::prefix(Rule::pos) | Op::prefix(Rule::pm_pre) | Op::prefix(Rule::mp_pre))
            .op(Op::infix(Rule::mul, Assoc::Left)
                | Op::infix(Rule::div, Assoc::Left)
                | Op::infix(Rule::implicit, Assoc::Left))
            .op(Op::postfix(Rule::factorial)
                | Op::postfix(Rule::percent)
                | Op::postfix(Rule::degree)
                | Op::postfix(Rule::unit)
                | Op::postfix(Rule::power))
    })
}

/// Most grammar rule calls one parse may make. The grammar is linear (latex.pest's design rules), so
/// an answer of `max_answer_bytes` needs far fewer (see `tests.rs`); the limit is a backstop that
/// keeps a parse bounded should a rule ever backtrack exponentially.
pub(crate) const MAX_RULE_CALLS: usize = 2_000_000;

/// pest's call limit is one process-wide setting; it is set once, before the first parse.
fn set_call_limit() {
    static SET: std::sync::Once = std::sync::Once::new();
    SET.call_once(|| pest::set_call_limit(std::num::NonZeroUsize::new(MAX_RULE_CALLS)));
}

/// Run the grammar on a normalised answer and build the tree (a lone number, possibly with a
/// unit, and a lone letter are read directly: the same trees).
pub(crate) fn parse_normalized(s: &str, limits: &Limits) -> Result<Expr, ParseError> {
    if let Some(e) = super::fast::normalized_number(s, limits) {
        return Ok(e);
    }
    let t = s.trim_matches([' ', '\t', '\n', '\r']);
    if t.len() == 1 && t.as_bytes()[0].is_ascii_alphabetic() {
        return Ok(letter(t));
    }
    parse_grammar(s, limits)
}

/// The grammar and the builder, without the shortcuts of [`parse_normalized`].
pub(crate) fn parse_grammar(s: &str, limits: &Limits) -> Result<Expr, ParseError> {
    set_call_limit();
    let mut pairs = AnswerParser::parse(Rule::answer, s).map_err(|e| parse_error(e, s))?;
    let answer = pairs.next().ok_or_else(|| syntax("empty input", 0))?;
    let b = Builder { limits };
    let body = answer.into_inner().next().ok_or_else(|| syntax("empty input", 0))?;
    match body.as_rule() {
        Rule::boxed_seq => {
            let mut items = Vec::new();
            for p in body.into_inner() {
                match b.boxed(p)? {
                    Expr::List(v) => items.extend(v),
                    e => items.push(e),
                }
            }
            Ok(Expr::List(items))
        }
        _ => b.item_list_expr(body),
    }
}

/// A pest error on the normalised answer `s` as a [`ParseError`]: pest's call and stack limits are
/// cost limits, anything else a syntax error at its position.
fn parse_error(e: pest::error::Error<Rule>, s: &str) -> ParseError {
    if let pest::error::ErrorVariant::CustomError { message } = &e.variant {
        // pest's call limit: the answer costs too much to parse (a step budget, not syntax).
        if message.contains("call limit") {
            return ParseError::Limit(crate::limits::LimitKind::StepBudget);
        }
        // pest's own guard (less than 64 KiB of stack left): a depth limit, not bad syntax.
        if message.contains("limit reached") {
            return ParseError::Limit(crate::limits::LimitKind::TooDeep);
        }
    }
    let position = match e.location {
        pest::error::InputLocation::Pos(p) => p,
        pest::error::InputLocation::Span((p, _)) => p,
    };
    // A failure just after a backslash is reported at the backslash.
    let position = if position > 0 && s.as_bytes().get(position - 1) == Some(&b'\\') { position - 1 } else { position };
    let message = match s.get(position..).and_then(|r| r.strip_prefix('\\')) {
        Some(r) if r.starts_with(|c: char| c.is_ascii_alphabetic()) => {
            let name: String = r.chars().take_while(char::is_ascii_alphabetic).collect();
            match r.strip_prefix("word{") {
                Some(w) => format!("unexpected word `{}`", w.split('}').next().unwrap_or(w)),
                None => format!("unexpected command `\\{name}` here"),
            }
        }
        _ => e.variant.message().into_owned(),
    };
    ParseError::Syntax { message, position }
}

fn syntax(message: impl Into<String>, position: usize) -> ParseError {
    ParseError::Syntax { message: message.into(), position }
}

/// What the builder knows about a term besides its value.
#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Plain,
    /// A number token as written (for `8.7 \times 10^8`).
    Literal,
    /// A parenthesised group `( ... )` with its items (for `f(x)`).
    Paren(Vec<Expr>),
    /// A user function name waiting for its `( ... )`, possibly as the last factor of a product.
    CallHead(String),
    /// A `\text{}` factor: a unit next to a value, a text answer alone.
    Unit,
    /// A ratio `a : b` (a third part is rejected: `3:4:5` is not a quotient).
    Ratio,
}

struct Built {
    expr: Expr,
    kind: Kind,
}

impl Built {
    fn plain(expr: Expr) -> Self {
        Built { expr, kind: Kind::Plain }
    }
}

struct Builder<'l> {
    limits: &'l Limits,
}

type R<T> = Result<T, ParseError>;

impl Builder<'_> {
    fn err<T>(&self, pair: &Pair<Rule>, msg: impl Into<String>) -> R<T> {
        Err(syntax(msg, pair.as_span().start()))
    }

    /// An `item_list`: one item is itself, several are a `List`.
    fn item_list_expr(&self, pair: Pair<Rule>) -> R<Expr> {
        let mut items = self.item_list(pair)?;
        if items.len() == 1 {
            Ok(items.remove(0))
        } else {
            Ok(Expr::List(items))
        }
    }

    /// The items of a list. Inequalities joined by "and" (`x > -2 \text{ and } x < 5`,
    /// `x \ne 2 \land x \ne 3`) are one item, their intersection; "and" between anything else
    /// (values, equations: `2 \text{ and } 3`, `x = 2 \text{ and } x = 3`) separates items like
    /// a comma.
    fn item_list(&self, pair: Pair<Rule>) -> R<Vec<Expr>> {
        let mut items: Vec<Expr> = Vec::new();
        // The indices of the items joined to the one before them by "and" (usually none: no
        // allocation).
        let mut joined: Vec<usize> = Vec::new();
        let mut and_pending = false;
        for p in pair.into_inner() {
            if p.as_rule() == Rule::and_sep {
                and_pending = true;
                continue;
            }
            if and_pending && !items.is_empty() {
                joined.push(items.len());
            }
            items.push(self.item(p)?);
            and_pending = false;
        }
        if joined.is_empty() {
            return Ok(items);
        }
        let mut out: Vec<Expr> = Vec::with_capacity(items.len());
        let mut run: Vec<Expr> = Vec::new();
        let flush = |run: &mut Vec<Expr>, out: &mut Vec<Expr>| {
            if run.len() >= 2 && run.iter().all(is_inequality) {
                out.push(Expr::Intersection(std::mem::take(run)));
            } else {
                out.append(run);
            }
        };
        for (k, item) in items.into_iter().enumerate() {
            if joined.binary_search(&k).is_err() {
                flush(&mut run, &mut out);
            }
            run.push(item);
        }
        flush(&mut run, &mut out);
        Ok(out)
    }

    /// `expr (relop expr)*`.
    fn item(&self, pair: Pair<Rule>) -> R<Expr> {
        let mut terms = Vec::new();
        let mut ops = Vec::new();
        let mut has_in = false;
        let span = pair.clone();
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::expr => terms.push(self.expr(p)?),
                Rule::eq => ops.push(RelOp::Eq),
                Rule::ne => ops.push(RelOp::Ne),
                Rule::le => ops.push(RelOp::Le),
                Rule::ge => ops.push(RelOp::Ge),
                Rule::lt => ops.push(RelOp::Lt),
                Rule::gt => ops.push(RelOp::Gt),
                Rule::approx => ops.push(RelOp::Approx),
                Rule::in_op => {
                    has_in = true;
                    ops.push(RelOp::Eq);
                }
                _ => return self.err(&p, "unexpected token in relation"),
            }
        }
        if has_in {
            // `x \in [1, 2]` means the set on the right.
            if ops.len() == 1 && terms.len() == 2 {
                return terms.pop().ok_or_else(|| syntax("empty relation", 0));
            }
            return self.err(&span, "`\\in` inside a relation chain is not supported");
        }
        if ops.is_empty() {
            return terms.pop().ok_or_else(|| syntax("empty expression", span.as_span().start()));
        }
        Ok(Expr::Relation { terms, ops })
    }

    /// A whole expression: a text factor alone becomes a text answer.
    fn expr(&self, pair: Pair<Rule>) -> R<Expr> {
        Ok(self.expr_built(pair)?.expr)
    }

    fn expr_built(&self, pair: Pair<Rule>) -> R<Built> {
        pratt()
            .map_primary(|p| self.primary(p))
            .map_prefix(|op, rhs| {
                let rhs = rhs?.expr;
                Ok(Built::plain(match op.as_rule() {
                    Rule::neg => Expr::Neg(Box::new(rhs)),
                    Rule::pos => rhs,
                    _ => Expr::PlusMinus(None, Box::new(rhs)),
                }))
            })
            .map_postfix(|lhs, op| self.postfix(lhs?, op))
            .map_infix(|lhs, op, rhs| self.infix(lhs?, op, rhs?))
            .parse(pair.into_inner())
    }

    fn postfix(&self, lhs: Built, op: Pair<Rule>) -> R<Built> {
        let kind = if lhs.kind == Kind::Unit { Kind::Unit } else { Kind::Plain };
        let base = Box::new(lhs.expr);
        let expr = match op.as_rule() {
            Rule::factorial => Expr::Factorial(base),
            Rule::percent => Expr::Percent(base),
            Rule::degree => Expr::Degrees(base),
            Rule::unit => {
                let digits = op.as_str().trim_start_matches("\\unit{").trim_end_matches('}');
                let id = digits.parse().ok().and_then(crate::units::UnitId::from_index);
                Expr::Quantity(base, id.ok_or_else(|| syntax("unknown unit", 0))?)
            }
            _ => {
                let exp = self.script(op.into_inner().next().ok_or_else(|| syntax("missing exponent", 0))?)?;
                match trivial_power(&base, &exp) {
                    Some(v) => v,
                    None => Expr::Pow(base, Box::new(exp)),
                }
            }
        };
        Ok(Built { expr, kind })
    }

    fn infix(&self, lhs: Built, op: Pair<Rule>, rhs: Built) -> R<Built> {
        // Units are dropped next to a value.
        if matches!(op.as_rule(), Rule::implicit | Rule::mul | Rule::div) {
            if rhs.kind == Kind::Unit {
                return Ok(lhs);
            }
            if lhs.kind == Kind::Unit {
                return Ok(rhs);
            }
        }
        let expr = match op.as_rule() {
            Rule::add => add(lhs, rhs.expr),
            // `\{x \mid x < 2\} - \{1\}`, `(0, 5) - \{3\}`: a set minus points.
            Rule::sub if matches!(rhs.expr, Expr::Set(_) | Expr::EmptySet) && is_set_of_reals(&lhs) => {
                return self.set_difference(lhs, rhs, &op)
            }
            Rule::sub => add(lhs, Expr::Neg(Box::new(rhs.expr))),
            Rule::pm | Rule::mp => Expr::PlusMinus(Some(Box::new(lhs.expr)), Box::new(rhs.expr)),
            Rule::div => Expr::Div(Box::new(lhs.expr), Box::new(rhs.expr)),
            Rule::ratio => {
                if lhs.kind == Kind::Ratio || rhs.kind == Kind::Ratio {
                    return self.err(&op, "a ratio of three or more parts is not a number");
                }
                if let Some(t) = time_of_day(&lhs.expr, &rhs.expr, &op) {
                    return Ok(Built { expr: t, kind: Kind::Ratio });
                }
                let expr = Expr::Div(Box::new(lhs.expr), Box::new(rhs.expr));
                return Ok(Built { expr, kind: Kind::Ratio });
            }
            Rule::cup => flatten(lhs, rhs.expr, |e| matches!(e, Expr::Union(_)), Expr::Union),
            Rule::cap => flatten(lhs, rhs.expr, |e| matches!(e, Expr::Intersection(_)), Expr::Intersection),
            Rule::setminus => return self.set_difference(lhs, rhs, &op),
            Rule::mul => {
                if let Some(n) = scientific(&lhs, &rhs.expr, self.limits)? {
                    return Ok(Built::plain(Expr::Num(n)));
                }
                product(lhs, rhs.expr)
            }
            _ => return self.implicit(lhs, rhs),
        };
        Ok(Built::plain(expr))
    }

    /// `A \setminus B` (also `A - B` with a set `B`) for a set of reals `A` and a finite set `B`:
    /// `A` intersected with the complement of each point of `B` (the checker computes the
    /// intervals: `\{x \mid x < \frac32\} \setminus \{-6\}` is `(-\infty, -6) \cup (-6, \frac32)`).
    /// `\mathbb{R}` is all reals there. Other differences are not supported.
    fn set_difference(&self, lhs: Built, rhs: Built, op: &Pair<Rule>) -> R<Built> {
        let points = match rhs.expr {
            Expr::Set(v) => v,
            Expr::EmptySet => Vec::new(),
            _ => return self.err(op, "set difference `\\setminus` is only supported with a finite set of points"),
        };
        let inf = || Expr::Const(Constant::Infinity);
        let base = match lhs.expr {
            Expr::Sym(ref r) if r == "R" => Expr::Interval {
                lo: Box::new(Expr::Neg(Box::new(inf()))),
                hi: Box::new(inf()),
                lo_closed: false,
                hi_closed: false,
            },
            _ if is_set_of_reals(&lhs) => lhs.expr,
            _ => return self.err(op, "set difference `\\setminus` needs a set of reals on its left"),
        };
        let mut parts = vec![base];
        for p in points {
            parts.push(Expr::Union(vec![
                Expr::Interval {
                    lo: Box::new(Expr::Neg(Box::new(inf()))),
                    hi: Box::new(p.clone()),
                    lo_closed: false,
                    hi_closed: false,
                },
                Expr::Interval { lo: Box::new(p), hi: Box::new(inf()), lo_closed: false, hi_closed: false },
            ]));
        }
        Ok(Built::plain(Expr::Intersection(parts)))
    }

    /// Juxtaposition: `2x`, `(a)(b)`, `f(x)`.
    fn implicit(&self, lhs: Built, rhs: Built) -> R<Built> {
        if let (Kind::CallHead(name), Kind::Paren(args)) = (&lhs.kind, &rhs.kind) {
            let call = Expr::Func(Func::Other(name.clone()), args.clone());
            let expr = match lhs.expr {
                Expr::Mul(mut v) => {
                    v.pop();
                    v.push(call);
                    Expr::Mul(v)
                }
                _ => call,
            };
            return Ok(Built::plain(expr));
        }
        if lhs.kind == Kind::Literal && rhs.kind == Kind::Literal {
            return Err(syntax("two numbers side by side (write an operator, or a proper mixed number)", 0));
        }
        let next_kind = if let Kind::CallHead(n) = &rhs.kind { Kind::CallHead(n.clone()) } else { Kind::Plain };
        Ok(Built { expr: product(lhs, rhs.expr), kind: next_kind })
    }

    /// An exponent or subscript argument.
    fn script(&self, pair: Pair<Rule>) -> R<Expr> {
        match pair.as_rule() {
            Rule::signed_token => {
                let mut inner = pair.into_inner();
                let first = inner.next().ok_or_else(|| syntax("empty exponent", 0))?;
                if first.as_rule() == Rule::neg {
                    let tok = inner.next().ok_or_else(|| syntax("empty exponent", 0))?;
                    Ok(Expr::Neg(Box::new(self.primary(tok)?.expr)))
                } else {
                    Ok(self.primary(first)?.expr)
                }
            }
            Rule::paren_script => {
                let inner = pair.into_inner().next().ok_or_else(|| syntax("empty exponent", 0))?;
                self.item(inner)
            }
            _ => Ok(self.primary(pair)?.expr),
        }
    }

    fn first_inner<'i>(&self, pair: &Pair<'i, Rule>) -> R<Pair<'i, Rule>> {
        pair.clone().into_inner().next().ok_or_else(|| syntax("empty construct", pair.as_span().start()))
    }

    fn boxed(&self, pair: Pair<Rule>) -> R<Expr> {
        let inner = self.first_inner(&pair)?;
        self.item_list_expr(inner)
    }

    fn primary(&self, pair: Pair<Rule>) -> R<Built> {
        let start = pair.as_span().start();
        let e = match pair.as_rule() {
            Rule::number => {
                let n = parse_number(pair.as_str(), self.limits).map_err(|e| at(e, start))?;
                return Ok(Built { expr: Expr::Num(n), kind: Kind::Literal });
            }
            Rule::digit | Rule::int => {
                Expr::Num(Number::int(parse_int(pair.as_str(), self.limits).map_err(|e| at(e, start))?))
            }
            Rule::boxed => self.boxed(pair)?,
            Rule::matrix => self.matrix(pair)?,
            Rule::mixed_latex => self.mixed(pair, false)?,
            Rule::mixed_plain => self.mixed(pair, true)?,
            Rule::based_number => Expr::Sym(pair.as_str().chars().filter(|c| !matches!(c, '{' | '}')).collect()),
            Rule::frac => {
                let mut it = pair.into_inner();
                let (a, b) = (self.next_arg(&mut it, start)?, self.next_arg(&mut it, start)?);
                Expr::Div(Box::new(a), Box::new(b))
            }
            Rule::binom => {
                let mut it = pair.into_inner();
                let (a, b) = (self.next_arg(&mut it, start)?, self.next_arg(&mut it, start)?);
                Expr::Binom(Box::new(a), Box::new(b))
            }
            Rule::sqrt => self.sqrt(pair)?,
            Rule::func => self.func(pair)?,
            Rule::text => {
                let raw = pair.into_inner().next().map(|p| p.as_str()).unwrap_or("");
                return Ok(Built { expr: Expr::Text(normalize_text(raw)), kind: Kind::Unit });
            }
            Rule::bracket => return self.bracket(pair),
            Rule::set => match pair.into_inner().next() {
                None => Expr::EmptySet,
                Some(list) => Expr::Set(self.item_list(list)?),
            },
            Rule::abs => Expr::Func(Func::Abs, vec![self.item(self.first_inner(&pair)?)?]),
            Rule::floor => Expr::Func(Func::Floor, vec![self.item(self.first_inner(&pair)?)?]),
            Rule::ceil => Expr::Func(Func::Ceil, vec![self.item(self.first_inner(&pair)?)?]),
            Rule::angle => {
                let items = self.item_list(self.first_inner(&pair)?)?;
                Expr::Tuple(items)
            }
            Rule::group => self.group(pair)?,
            Rule::paren_arg => self.item(self.first_inner(&pair)?)?,
            Rule::emptyset => Expr::EmptySet,
            Rule::ellipsis => Expr::Sym(ELLIPSIS.to_string()),
            Rule::infinity => Expr::Const(Constant::Infinity),
            Rule::pi => Expr::Const(Constant::Pi),
            Rule::accent => self.accent(pair)?,
            Rule::user_fn => {
                let name = pair.as_str().to_string();
                return Ok(Built { expr: Expr::Sym(name.clone()), kind: Kind::CallHead(name) });
            }
            Rule::symbol => self.symbol(pair)?,
            Rule::letter_symbol => letter(pair.as_str()),
            Rule::greek_symbol => Expr::Sym(pair.as_str().trim_start_matches('\\').to_string()),
            _ => return self.err(&pair, format!("unexpected {:?}", pair.as_rule())),
        };
        Ok(Built::plain(e))
    }

    fn next_arg(&self, it: &mut Pairs<Rule>, start: usize) -> R<Expr> {
        let p = it.next().ok_or_else(|| syntax("missing argument", start))?;
        Ok(self.primary(p)?.expr)
    }

    /// `{...}`: grouping, a bare `{1, 2}` list, or `{n \choose k}`.
    fn group(&self, pair: Pair<Rule>) -> R<Expr> {
        let mut it = pair.into_inner();
        let first = it.next().ok_or_else(|| syntax("empty group", 0))?;
        let a = self.item_list_expr(first)?;
        match (it.next(), it.next()) {
            (Some(_choose), Some(second)) => Ok(Expr::Binom(Box::new(a), Box::new(self.item_list_expr(second)?))),
            _ => Ok(a),
        }
    }

    /// `( )`, `[ ]`, `( ]`, `[ )`: grouping, tuple, interval.
    fn bracket(&self, pair: Pair<Rule>) -> R<Built> {
        let start = pair.as_span().start();
        let mut open = "(";
        let mut close = ")";
        let mut items = Vec::new();
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::open_br => open = p.as_str(),
                Rule::close_br => close = p.as_str(),
                _ => items = self.item_list(p)?,
            }
        }
        let closed = |s: &str| s == "[" || s == "]";
        let (lo_closed, hi_closed) = (closed(open), closed(close));
        match items.len() {
            0 => Err(syntax("empty brackets", start)),
            1 if open == "(" && close == ")" => {
                let e = items[0].clone();
                Ok(Built { expr: e, kind: Kind::Paren(items) })
            }
            1 if open == "[" && close == "]" => Ok(Built::plain(items.remove(0))),
            1 => Err(syntax("an interval needs two ends", start)),
            2 if lo_closed || hi_closed => {
                let hi = items.pop().ok_or_else(|| syntax("empty", start))?;
                let lo = items.pop().ok_or_else(|| syntax("empty", start))?;
                Ok(Built::plain(Expr::Interval { lo: Box::new(lo), hi: Box::new(hi), lo_closed, hi_closed }))
            }
            _ if lo_closed != hi_closed => Err(syntax("an interval needs two ends", start)),
            _ => {
                let e = Expr::Tuple(items.clone());
                let kind = if open == "(" { Kind::Paren(items) } else { Kind::Plain };
                Ok(Built { expr: e, kind })
            }
        }
    }

    fn matrix(&self, pair: Pair<Rule>) -> R<Expr> {
        let mut rows = Vec::new();
        let mut env = "";
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::env => env = p.as_str(),
                Rule::matrix_row => {
                    let row: R<Vec<Expr>> = p.into_inner().map(|i| self.item(i)).collect();
                    rows.push(row?);
                }
                _ => {}
            }
        }
        let m = Expr::Matrix(rows);
        Ok(if env == "vmatrix" || env == "Vmatrix" { Expr::Func(Func::Other("det".into()), vec![m]) } else { m })
    }

    /// `2\frac{1}{2}` and `2 1/2`: a proper fraction makes a mixed number.
    fn mixed(&self, pair: Pair<Rule>, plain: bool) -> R<Expr> {
        let start = pair.as_span().start();
        let mut ints = Vec::with_capacity(3);
        for p in pair.into_inner() {
            ints.push(parse_int(p.as_str(), self.limits).map_err(|e| at(e, start))?);
        }
        let [whole, num, den]: [BigInt; 3] = ints.try_into().map_err(|_| syntax("malformed mixed number", start))?;
        // A zero numerator is a mixed number too (`4 0/9` is 4).
        let proper = !num.is_negative() && den.is_positive() && num < den;
        let int = |n: BigInt| Expr::Num(Number::int(n));
        let frac = Expr::Div(Box::new(int(num)), Box::new(int(den)));
        if proper {
            Ok(Expr::Add(vec![int(whole), frac]))
        } else if plain {
            Err(syntax("invalid mixed number: the fraction must be proper", start))
        } else {
            Ok(Expr::Mul(vec![int(whole), frac]))
        }
    }

    fn sqrt(&self, pair: Pair<Rule>) -> R<Expr> {
        let start = pair.as_span().start();
        let mut index = Expr::Num(Number::int(2));
        let mut radicand = None;
        for p in pair.into_inner() {
            if p.as_rule() == Rule::sqrt_index {
                index = self.item(self.first_inner(&p)?)?;
            } else {
                radicand = Some(self.primary(p)?.expr);
            }
        }
        let radicand = radicand.ok_or_else(|| syntax("`\\sqrt` needs an argument", start))?;
        Ok(Expr::Root { index: Box::new(index), radicand: Box::new(radicand) })
    }

    fn func(&self, pair: Pair<Rule>) -> R<Expr> {
        let start = pair.as_span().start();
        let mut name = "";
        let mut sup = None;
        let mut sub = None;
        let mut args = Vec::new();
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::fname => name = p.as_str(),
                Rule::fsup => sup = Some(self.script(self.first_inner(&p)?)?),
                Rule::fsub => sub = Some(self.script(self.first_inner(&p)?)?),
                Rule::fparen | Rule::fbrace => args = self.item_list(self.first_inner(&p)?)?,
                Rule::fplain => {
                    let mut factors = Vec::new();
                    for f in p.into_inner() {
                        let mut it = f.into_inner();
                        let prim = it.next().ok_or_else(|| syntax("empty argument", start))?;
                        let mut b = self.primary(prim)?;
                        for op in it {
                            b = self.postfix(b, op)?;
                        }
                        if b.kind != Kind::Unit {
                            factors.push(b.expr);
                        }
                    }
                    args = vec![if factors.len() == 1 { factors.remove(0) } else { Expr::Mul(factors) }];
                }
                _ => {}
            }
        }
        let name = name.trim_start_matches('\\');
        let name = name.strip_prefix("operatorname{").map(|n| n.trim_end_matches('}')).unwrap_or(name);
        let inverse =
            sup.as_ref().is_some_and(|s| matches!(s, Expr::Neg(b) if matches!(&**b, Expr::Num(n) if is_one(n))));
        let (func, used_sup) = match (name, inverse) {
            ("sin", true) => (Func::Arcsin, true),
            ("cos", true) => (Func::Arccos, true),
            ("tan", true) => (Func::Arctan, true),
            ("cot", true) => (Func::Arccot, true),
            ("sec", true) => (Func::Arcsec, true),
            ("csc", true) => (Func::Arccsc, true),
            _ => (func_of(name), false),
        };
        let one_arg = |args: Vec<Expr>| -> R<Expr> {
            let mut args = args;
            if args.len() == 1 {
                Ok(args.remove(0))
            } else {
                Err(syntax(format!("`\\{name}` takes one argument"), start))
            }
        };
        let applied = match (&func, sub) {
            (Func::Log10, Some(base)) if name == "log" => {
                Expr::Log { base: Box::new(base), arg: Box::new(one_arg(args)?) }
            }
            (_, _) => Expr::Func(func, args),
        };
        Ok(match sup {
            Some(s) if !used_sup => Expr::Pow(Box::new(applied), Box::new(s)),
            _ => applied,
        })
    }

    fn symbol(&self, pair: Pair<Rule>) -> R<Expr> {
        let mut base = String::new();
        let mut decorated = false;
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::letter_symbol | Rule::greek_symbol => base.push_str(p.as_str().trim_start_matches('\\')),
                Rule::subscript => {
                    decorated = true;
                    base.push('_');
                    base.push_str(&sub_name(p.as_str()));
                }
                Rule::primes => {
                    decorated = true;
                    base.push_str(p.as_str());
                }
                _ => {}
            }
        }
        Ok(if decorated { Expr::Sym(base) } else { letter(&base) })
    }

    fn accent(&self, pair: Pair<Rule>) -> R<Expr> {
        let mut name = String::new();
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::accent_name => {
                    name.push_str(p.as_str());
                    name.push('(');
                }
                Rule::sub_raw | Rule::letter_symbol | Rule::greek_symbol => {
                    name.push_str(&sub_name(p.as_str()));
                    name.push(')');
                }
                Rule::subscript => {
                    name.push('_');
                    name.push_str(&sub_name(p.as_str()));
                }
                Rule::primes => name.push_str(p.as_str()),
                _ => {}
            }
        }
        Ok(Expr::Sym(name))
    }
}

/// A set of reals on the left of a set difference: an interval, a union or intersection, a
/// finite set, a parenthesised relation (a set-builder condition, `(x < 2)`), an open interval
/// written `(a, b)`.
fn is_set_of_reals(b: &Built) -> bool {
    match &b.expr {
        Expr::Interval { .. } | Expr::Union(_) | Expr::Intersection(_) | Expr::Set(_) | Expr::EmptySet => true,
        Expr::Relation { .. } => matches!(b.kind, Kind::Paren(_)),
        Expr::Tuple(v) => v.len() == 2 && matches!(b.kind, Kind::Paren(_)),
        _ => false,
    }
}

/// A relation made only of `<`, `\le`, `>`, `\ge` and `\ne`: a condition on a variable, which
/// "and" intersects with the next.
fn is_inequality(e: &Expr) -> bool {
    matches!(e, Expr::Relation { ops, .. }
        if ops.iter().all(|o| matches!(o, RelOp::Lt | RelOp::Le | RelOp::Gt | RelOp::Ge | RelOp::Ne)))
}

/// The symbol an ellipsis (`\ldots`, `\cdots`, `...`, `…`) becomes: equal only to another ellipsis.
pub(crate) const ELLIPSIS: &str = "…";

/// A single letter: `e` and `i` are the constants, others are symbols.
fn letter(s: &str) -> Expr {
    match s {
        "e" => Expr::Const(Constant::E),
        "i" => Expr::Const(Constant::I),
        _ => Expr::Sym(s.to_string()),
    }
}

/// The name part of a subscript: `_{\max }` is `max`, `_{n}` is `n`, `_{\text{red}}` is `red`.
fn sub_name(raw: &str) -> String {
    let raw = raw.strip_prefix('_').unwrap_or(raw);
    let mut s = raw.replace("\\text", "").replace("\\mathrm", "").replace("\\operatorname", "");
    s.retain(|c| !matches!(c, '{' | '}' | '\\' | ' '));
    s
}

fn func_of(name: &str) -> Func {
    match name {
        "sin" => Func::Sin,
        "cos" => Func::Cos,
        "tan" => Func::Tan,
        "cot" => Func::Cot,
        "sec" => Func::Sec,
        "csc" => Func::Csc,
        "arcsin" => Func::Arcsin,
        "arccos" => Func::Arccos,
        "arctan" => Func::Arctan,
        "arccot" => Func::Arccot,
        "arcsec" => Func::Arcsec,
        "arccsc" => Func::Arccsc,
        "sinh" => Func::Sinh,
        "cosh" => Func::Cosh,
        "tanh" => Func::Tanh,
        "coth" => Func::Coth,
        "ln" => Func::Ln,
        "log" | "lg" => Func::Log10,
        "exp" => Func::Exp,
        "gcd" => Func::Gcd,
        "lcm" => Func::Lcm,
        "max" => Func::Max,
        "min" => Func::Min,
        other => Func::Other(other.to_string()),
    }
}

/// `lhs + rhs`, flattening a left `Add` that was not parenthesised.
fn add(lhs: Built, rhs: Expr) -> Expr {
    flatten(lhs, rhs, |e| matches!(e, Expr::Add(_)), Expr::Add)
}

/// `lhs * rhs`, flattening a left `Mul` that was not parenthesised.
fn product(lhs: Built, rhs: Expr) -> Expr {
    flatten(lhs, rhs, |e| matches!(e, Expr::Mul(_)), Expr::Mul)
}

fn flatten(lhs: Built, rhs: Expr, same: impl Fn(&Expr) -> bool, make: fn(Vec<Expr>) -> Expr) -> Expr {
    let paren = matches!(lhs.kind, Kind::Paren(_));
    if !paren && same(&lhs.expr) {
        if let Expr::Add(mut v) | Expr::Mul(mut v) | Expr::Union(mut v) | Expr::Intersection(mut v) = lhs.expr {
            v.push(rhs);
            return make(v);
        }
    }
    make(vec![lhs.expr, rhs])
}

/// `8.7 \times 10^{8}` (a literal times a power of ten with an integer exponent) is one number,
/// with the decimals of the mantissa.
fn scientific(lhs: &Built, rhs: &Expr, limits: &Limits) -> R<Option<Number>> {
    let (Kind::Literal, Expr::Num(m)) = (&lhs.kind, &lhs.expr) else { return Ok(None) };
    let Expr::Pow(base, exp) = rhs else { return Ok(None) };
    let ten = matches!(&**base, Expr::Num(b) if b.decimals.is_none() && b.value == num_rational::BigRational::from_integer(BigInt::from(10)));
    if !ten {
        return Ok(None);
    }
    let (neg, e) = match &**exp {
        Expr::Neg(inner) => (true, &**inner),
        other => (false, other),
    };
    let Expr::Num(e) = e else { return Ok(None) };
    if e.decimals.is_some() || !e.value.is_integer() {
        return Ok(None);
    }
    let Ok(mag) = i64::try_from(e.value.to_integer()) else {
        return Err(ParseError::Limit(crate::limits::LimitKind::ExponentTooLarge));
    };
    let shift = if neg { -mag } else { mag };
    let numer = m.value.numer().clone();
    let denom = m.value.denom().clone();
    let scaled = super::number::scaled(numer, shift, limits)?;
    Ok(Some(Number { value: scaled / num_rational::BigRational::from_integer(denom), decimals: m.decimals }))
}

/// Give a position to an error that has none.
fn at(e: ParseError, position: usize) -> ParseError {
    match e {
        ParseError::Syntax { message, .. } => ParseError::Syntax { message, position },
        other => other,
    }
}

/// `0^n`, `1^n` and `(-1)^n` for a positive integer `n` written with literals, `+`, products and
/// powers (`1^{(3^{98765432})}`): the value, with the parity of `n` found without computing `n`.
/// Such a power needs no big number, so it never hits an exponent cap.
fn trivial_power(base: &Expr, exp: &Expr) -> Option<Expr> {
    /// `Some(odd)` for a positive integer tower.
    fn parity(e: &Expr, depth: usize) -> Option<bool> {
        if depth > 64 {
            return None;
        }
        match e {
            Expr::Num(Number { value, decimals: None }) if value.is_integer() && value.is_positive() => {
                Some(value.numer().bit(0))
            }
            Expr::Pow(a, b) => {
                parity(b, depth + 1)?;
                parity(a, depth + 1)
            }
            Expr::Mul(v) if !v.is_empty() => v.iter().try_fold(true, |odd, x| parity(x, depth + 1).map(|p| odd && p)),
            Expr::Add(v) if !v.is_empty() => v.iter().try_fold(false, |odd, x| parity(x, depth + 1).map(|p| odd != p)),
            _ => None,
        }
    }
    let int_value = |e: &Expr| -> Option<i8> {
        match e {
            Expr::Num(Number { value, decimals: None }) if value.is_integer() => {
                if value.is_zero() {
                    Some(0)
                } else if value.is_one() {
                    Some(1)
                } else {
                    None
                }
            }
            Expr::Neg(a) => match a.as_ref() {
                Expr::Num(Number { value, decimals: None }) if value.is_one() => Some(-1),
                _ => None,
            },
            _ => None,
        }
    };
    let b = int_value(base)?;
    let odd = parity(exp, 0)?;
    Some(match (b, odd) {
        (0, _) => Expr::Num(Number::int(0)),
        (1, _) | (-1, false) => Expr::Num(Number::int(1)),
        _ => Expr::Neg(Box::new(Expr::Num(Number::int(1)))),
    })
}

/// `h:mm` (an hour of at most 24 and exactly two minute digits below 60: `1:58`, `12:00`) is a
/// time of day, not the ratio `h/mm`: `time(h, mm)`, an opaque value equal only to the same time
/// (`2:30` is not `1:15`).
fn time_of_day(h: &Expr, m: &Expr, op: &Pair<Rule>) -> Option<Expr> {
    let small = |e: &Expr, max: u32| match e {
        Expr::Num(Number { value, decimals: None }) if value.is_integer() && !value.is_negative() => {
            value.to_integer() <= BigInt::from(max)
        }
        _ => false,
    };
    let after = op.get_input().get(op.as_span().end()..)?;
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    (digits == 2 && small(h, 24) && small(m, 59))
        .then(|| Expr::Func(Func::Other("time".into()), vec![h.clone(), m.clone()]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::LimitKind;
    use pest::error::{Error, ErrorVariant};
    use pest::Position;

    /// pest reports its limits as custom errors; they are cost limits, not syntax. (Tripping the
    /// stack guard for real needs a tiny thread stack, whose bounds glibc's stack cache can make
    /// unreliable, so the mapping is tested directly.)
    #[test]
    fn pest_limits_are_cost_limits() {
        let s = "1+";
        let custom = |message: &str| {
            Error::new_from_pos(ErrorVariant::CustomError { message: message.into() }, Position::from_start(s))
        };
        assert_eq!(parse_error(custom("call limit reached"), s), ParseError::Limit(LimitKind::StepBudget));
        assert_eq!(parse_error(custom("stack limit reached"), s), ParseError::Limit(LimitKind::TooDeep));
        let syntax = AnswerParser::parse(Rule::answer, s).map(|_| ()).unwrap_err();
        assert!(matches!(parse_error(syntax, s), ParseError::Syntax { position: 2, .. }));
    }
}
