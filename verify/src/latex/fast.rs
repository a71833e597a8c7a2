//! Hand-written parsers for the most common answer shapes, which skip normalisation and pest.
//!
//! Accepted (no inner whitespace, optional leading `-`): numbers (`42`, `-3.5`, `.25`,
//! `1,234,567`), `a/b`,
//! `\frac{A}{B}` (also `\dfrac`, `\tfrac`), `\sqrt{n}`, `c\sqrt{n}`, `\pi`, `c\pi`, `n^\circ`,
//! `n^{\circ}`, `n\%`, `n%`, where `A`, `B` are a number, `\sqrt{n}`, `c\sqrt{n}`, `\pi` or `c\pi`.
//! Also lists of those (`-2, 1`), tuples (`(1, 2)`, `(1,2), (3,4)`) and `x = <shape>`.
//! Each gives exactly the tree the full parser gives (`fast_paths_agree_with_the_full_parser`).
//! Anything else returns `None` and goes through the full pipeline.

use super::number::parse_number;
use super::ParseError;
use crate::ast::{Constant, Expr, Number};
use crate::limits::Limits;

type Out = Option<Result<Expr, ParseError>>;

/// Plain numbers: `42`, `-3.5`, `+7`, `.25`, `1,234.5`.
pub(crate) fn plain_number(s: &str, limits: &Limits) -> Out {
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let mut c = Cursor { s: body, pos: 0 };
    let e = match c.number() {
        Some(lit) if c.pos == body.len() => num(lit, limits),
        _ => num(&thousands(body)?, limits),
    };
    Some(e.map(|e| if neg { Expr::Neg(Box::new(e)) } else { e }))
}

/// `1,234` or `12,345,678.5` (the whole input; the rule of `normalize::join_thousands`), with
/// the separators removed.
fn thousands(s: &str) -> Option<String> {
    let (int, frac) = match s.find('.') {
        Some(k) => (&s[..k], Some(&s[k + 1..])),
        None => (s, None),
    };
    let mut groups = int.split(',');
    let first = groups.next()?;
    if first.is_empty() || first.len() > 3 || first.starts_with('0') || !first.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut out = String::with_capacity(s.len());
    out.push_str(first);
    let mut n = 0;
    for g in groups {
        if g.len() != 3 || !g.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        out.push_str(g);
        n += 1;
    }
    if n == 0 {
        return None;
    }
    if let Some(f) = frac {
        if f.is_empty() || !f.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        out.push('.');
        out.push_str(f);
    }
    Some(out)
}

/// The simple shapes listed in the module doc, alone or in a list `a, b`, a tuple `(a, b)`, a list
/// of tuples, or as the right side of `x = ...`.
pub(crate) fn simple(s: &str, limits: &Limits) -> Out {
    // A comma directly followed by exactly three digits may be a thousands separator: leave
    // those to the full parser.
    let b = s.as_bytes();
    let mut depth = 0i32;
    for (k, &c) in b.iter().enumerate() {
        match c {
            b'(' => depth += 1,
            b')' => depth -= 1,
            b',' if depth == 0 => {
                let digits = b[k + 1..].iter().take_while(|d| d.is_ascii_digit()).count();
                if digits == 3 {
                    return None;
                }
            }
            _ => {}
        }
    }
    let mut c = Cursor { s, pos: 0 };
    let mut items = Vec::new();
    loop {
        let item = if c.eat("(") {
            let mut inner = Vec::new();
            loop {
                c.spaces();
                match c.signed_term(limits)? {
                    Ok(e) => inner.push(e),
                    Err(err) => return Some(Err(err)),
                }
                c.spaces();
                if !c.eat(",") {
                    break;
                }
            }
            if !c.eat(")") {
                return None;
            }
            if inner.len() == 1 {
                inner.pop()?
            } else {
                Expr::Tuple(inner)
            }
        } else {
            match c.item(limits)? {
                Ok(e) => e,
                Err(err) => return Some(Err(err)),
            }
        };
        items.push(item);
        if !c.eat(",") {
            break;
        }
        c.spaces();
    }
    if c.pos != s.len() {
        return None;
    }
    Some(Ok(if items.len() == 1 { items.pop()? } else { Expr::List(items) }))
}

/// A normalised answer (as the grammar sees it) that is one unsigned number literal, possibly
/// followed by one unit: `2  \unit{871}` is half the answers that reach the grammar. The tree
/// the grammar and its builder give (`Quantity(Num, unit)`, `Num`); `None` for anything else and
/// where the builder would report an error, which the grammar path then reports.
pub(crate) fn normalized_number(s: &str, limits: &Limits) -> Option<Expr> {
    // The grammar's WHITESPACE.
    const WS: [char; 4] = [' ', '\t', '\n', '\r'];
    let s = s.trim_matches(WS);
    let b = s.as_bytes();
    let digits = |from: usize| b.get(from..).map_or(0, |r| r.iter().take_while(|c| c.is_ascii_digit()).count());
    // The grammar's `number`: `mantissa ~ (^"e" ~ ("+" | "-")? ~ ASCII_DIGIT+)?`.
    let int = digits(0);
    let mut end = int;
    if b.get(end) == Some(&b'.') {
        let frac = digits(end + 1);
        if int == 0 && frac == 0 {
            return None;
        }
        end += 1 + frac;
    } else if int == 0 {
        return None;
    }
    if matches!(b.get(end), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(b.get(end + 1), Some(b'+' | b'-')));
        let exp = digits(end + 1 + sign);
        if exp > 0 {
            end += 1 + sign + exp;
        }
    }
    let n = parse_number(&s[..end], limits).ok()?;
    let rest = s[end..].trim_start_matches(WS);
    if rest.is_empty() {
        return Some(Expr::Num(n));
    }
    // The grammar's `unit`: `"\\unit{" ~ ASCII_DIGIT{1,5} ~ "}"`.
    let id = rest.strip_prefix("\\unit{")?.strip_suffix('}')?;
    if !(1..=5).contains(&id.len()) || !id.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let unit = id.parse().ok().and_then(crate::units::UnitId::from_index)?;
    Some(Expr::Quantity(Box::new(Expr::Num(n)), unit))
}

fn num(lit: &str, limits: &Limits) -> Result<Expr, ParseError> {
    parse_number(lit, limits).map(Expr::Num)
}

struct Cursor<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn rest(&self) -> &'a str {
        &self.s[self.pos..]
    }

    fn eat(&mut self, lit: &str) -> bool {
        if self.rest().starts_with(lit) {
            self.pos += lit.len();
            true
        } else {
            false
        }
    }

    /// A command name followed by a non-letter.
    fn eat_cmd(&mut self, lit: &str) -> bool {
        let r = self.rest();
        if r.starts_with(lit) && !r[lit.len()..].starts_with(|c: char| c.is_ascii_alphabetic()) {
            self.pos += lit.len();
            true
        } else {
            false
        }
    }

    fn spaces(&mut self) {
        let r = self.rest();
        self.pos += r.len() - r.trim_start_matches(' ').len();
    }

    /// `-term` or `term`.
    fn signed_term(&mut self, limits: &Limits) -> Option<Result<Expr, ParseError>> {
        let neg = self.eat("-");
        let e = self.term(limits)?;
        Some(e.map(|e| if neg { Expr::Neg(Box::new(e)) } else { e }))
    }

    /// A signed term, or `x = <signed term>` for a letter `x` (not `e` or `i`).
    fn item(&mut self, limits: &Limits) -> Option<Result<Expr, ParseError>> {
        let b = self.rest().as_bytes();
        let letter = b.first().filter(|c| c.is_ascii_alphabetic() && !matches!(c, b'e' | b'i')).copied();
        if let Some(l) = letter {
            let after = &self.rest()[1..];
            let eq = after.trim_start_matches(' ');
            if let Some(rhs) = eq.strip_prefix('=') {
                self.pos = self.s.len() - rhs.len();
                self.spaces();
                let rhs = self.signed_term(limits)?;
                let lhs = Expr::Sym((l as char).to_string());
                return Some(rhs.map(|r| Expr::Relation { terms: vec![lhs, r], ops: vec![crate::ast::RelOp::Eq] }));
            }
            return None;
        }
        self.signed_term(limits)
    }

    /// `12`, `1.5`, `.5` (no trailing dot, no exponent, no separators).
    fn number(&mut self) -> Option<&'a str> {
        let b = self.rest().as_bytes();
        let int = b.iter().take_while(|c| c.is_ascii_digit()).count();
        let mut end = int;
        if b.get(int) == Some(&b'.') {
            let frac = b[int + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if frac == 0 {
                return None;
            }
            end = int + 1 + frac;
        } else if int == 0 {
            return None;
        }
        if b.get(end).is_some_and(|c| matches!(c, b'e' | b'E' | b'_' | b'.')) {
            return None;
        }
        let lit = &self.rest()[..end];
        self.pos += end;
        Some(lit)
    }

    /// `\sqrt{n}` and `\pi`, each optionally after a number; or a bare number.
    fn factor_product(&mut self, limits: &Limits) -> Option<Result<Expr, ParseError>> {
        let coef = self.number();
        let tail = if self.eat_cmd("\\sqrt") {
            if !self.eat("{") {
                return None;
            }
            let rad = self.number()?;
            if !self.eat("}") {
                return None;
            }
            Some(
                num(rad, limits)
                    .map(|r| Expr::Root { index: Box::new(Expr::Num(Number::int(2))), radicand: Box::new(r) }),
            )
        } else if self.eat_cmd("\\pi") {
            Some(Ok(Expr::Const(Constant::Pi)))
        } else {
            None
        };
        match (coef, tail) {
            (None, None) => None,
            (Some(c), None) => Some(num(c, limits)),
            (None, Some(t)) => Some(t),
            (Some(c), Some(t)) => Some(num(c, limits).and_then(|c| t.map(|t| Expr::Mul(vec![c, t])))),
        }
    }

    fn term(&mut self, limits: &Limits) -> Option<Result<Expr, ParseError>> {
        if self.eat_cmd("\\frac") || self.eat_cmd("\\dfrac") || self.eat_cmd("\\tfrac") {
            let a = self.braced(limits)?;
            let b = self.braced(limits)?;
            return Some(a.and_then(|a| b.map(|b| Expr::Div(Box::new(a), Box::new(b)))));
        }
        let first = self.factor_product(limits)?;
        let plain_number = matches!(&first, Ok(Expr::Num(_)));
        if plain_number && self.eat("/") {
            let lit = self.number()?;
            return Some(first.and_then(|a| num(lit, limits).map(|b| Expr::Div(Box::new(a), Box::new(b)))));
        }
        if plain_number && (self.eat("^\\circ") || self.eat("^{\\circ}")) {
            return Some(first.map(|e| Expr::Degrees(Box::new(e))));
        }
        if plain_number && (self.eat("\\%") || self.eat("%")) {
            return Some(first.map(|e| Expr::Percent(Box::new(e))));
        }
        Some(first)
    }

    fn braced(&mut self, limits: &Limits) -> Option<Result<Expr, ParseError>> {
        if !self.eat("{") {
            return None;
        }
        let e = self.factor_product(limits)?;
        if !self.eat("}") {
            return None;
        }
        Some(e)
    }
}
