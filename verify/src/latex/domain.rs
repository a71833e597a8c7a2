//! Trailing domain statements: the part of an answer that says where its variables live, not
//! what the answer is. `f(x) = 1 \text{ for all } x \in \mathbb{Q}`, `(-32 + 3t, 64 - 5t)
//! \text{ for some integer } t`, `x = k\pi \text{ where } k \in \mathbb{Z}`, `x = k\pi, k \in
//! \mathbb{Z}`, `x = 2k\pi \; (k \in \mathbb{Z})`: the value is what comes before. A domain
//! statement is never an alternative value (it must not turn an answer into a hedge), so it is
//! dropped before the answer is parsed.
//!
//! What counts as one, at the end of the answer and outside any bracket or brace:
//! - a marker (`for`, `where`, `with`, `\forall`, also inside `\text{}`), optional quantifier and
//!   type words (`all`, `some`, `any`, `every`, `each`, `integer`, `real`, `natural`, ...), then
//!   one or more variables, each group optionally followed by `\in` and a number set
//!   (`\mathbb{Z}`, `\mathbb{N}^{+}`, `ℝ`, `\text{integers}`) or by `is an integer`/`are integers`;
//!   without a quantifier or type word the group must name its set (`for k \in \mathbb{Z}`);
//! - or, after `,`, `;`, `\quad` or inside `( )`, variables followed by `\in` and a number set
//!   (`, k \in \mathbb{Z}`, `(n \in \mathbb{N})`).
//!
//! A set that is not a number set (`x \in [1, 2]`) is part of the answer and stays. The scan looks
//! at most [`MAX_CLAUSE_BYTES`] from the end, so it is linear in the input.

/// Longest domain statement recognised (bytes, from the end of the answer).
const MAX_CLAUSE_BYTES: usize = 200;

/// Text-like commands whose argument is words.
const TEXT_COMMANDS: &[&str] =
    &["text", "textrm", "textnormal", "textit", "textbf", "mbox", "hbox", "mathrm", "emph", "textup", "textsf"];

/// Blackboard and bold set commands: `\mathbb{Z}`.
const SET_COMMANDS: &[&str] = &["mathbb", "Bbb", "mathbf", "mathbbm", "mathds", "bm", "boldsymbol"];

/// Quantifiers and the other words of a domain statement between its marker and its
/// variables, besides the type words ([`TYPE_WORDS`]).
const QUANTIFIER_WORDS: &[&str] = &["all", "some", "every", "each", "parameter", "parameters", "value", "values", "of"];

/// Type words after `is`/`are` (`k is an integer`, `m, n are integers`), also the words that say
/// where a parameter lives in a domain statement (`for some integer t`).
pub(crate) const TYPE_WORDS: &[&str] = &[
    "integer",
    "integers",
    "real",
    "reals",
    "natural",
    "whole",
    "rational",
    "complex",
    "positive",
    "negative",
    "nonnegative",
    "non-negative",
    "nonzero",
    "non-zero",
    "odd",
    "even",
    "number",
    "numbers",
    "constant",
    "constants",
    "arbitrary",
    "any",
];

/// Number sets by their letter (`\mathbb{Z}`, `\Z`, `ℤ`) or name.
fn is_set_name(w: &str) -> bool {
    matches!(w, "Z" | "N" | "Q" | "R" | "C" | "integers" | "reals" | "naturals" | "rationals" | "complexes")
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    /// A lower-cased word of two or more letters (or `a`, `an` after `is`).
    Word(String),
    /// A variable: one letter (its subscript dropped), or a Greek letter's name.
    Var(String),
    In,
    ForAll,
    Set,
    Comma,
    Open,
    Close,
    /// `\quad`, `\qquad`: a separator that may open a bare `k \in \mathbb{Z}`.
    Space,
}

/// The answer without a trailing domain statement (the whole input when there is none).
pub(crate) fn strip(input: &str) -> &str {
    let s = input.trim_end();
    if !has_marker(s) {
        return input;
    }
    let window_start = floor_char_boundary(s, s.len().saturating_sub(MAX_CLAUSE_BYTES));
    for start in candidates(s, window_start) {
        let head = s[..start].trim_end();
        if head.is_empty() {
            continue;
        }
        if let Some(toks) = tokens(&s[start..]) {
            // The statement is about the answer's own variables (`a, b \in \mathbb{Z}` is not
            // the answer `a` with a statement about `b`).
            let about_head = toks.iter().any(|t| matches!(t, Tok::Var(v) if mentions(head, v)));
            if about_head && is_domain_clause(&toks) {
                return head.trim_end_matches([',', ';', ' ']).trim_end_matches("\\quad").trim_end();
            }
        }
    }
    input
}

/// Whether `head` uses the variable `var`: a Greek command by name, a letter anywhere in a run of
/// letters that is not a command name (`2k\pi`, `\frac{k\pi}{2}`, `kn`).
fn mentions(head: &str, var: &str) -> bool {
    if var.starts_with('\\') {
        return head.contains(var);
    }
    let Some(letter) = var.bytes().next() else { return false };
    let b = head.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_alphabetic() {
            let run = b[i..].iter().take_while(|x| x.is_ascii_alphabetic()).count();
            let command = i > 0 && b[i - 1] == b'\\';
            if !command && b[i..i + run].contains(&letter) {
                return true;
            }
            i += run;
        } else {
            i += 1;
        }
    }
    false
}

/// A cheap test that a domain statement may be present.
fn has_marker(s: &str) -> bool {
    let tail = &s.as_bytes()[s.len().saturating_sub(MAX_CLAUSE_BYTES)..];
    // One pass: `\in`, `for`, `where`, `with`, or the first byte of `∈` and `∀` (0xE2).
    tail.windows(3).any(|w| matches!(w, b"\\in" | b"for" | b"whe" | b"wit" | b"For" | b"Whe" | b"Wit"))
        || tail.contains(&0xE2)
}

fn floor_char_boundary(s: &str, mut k: usize) -> usize {
    while k > 0 && !s.is_char_boundary(k) {
        k -= 1;
    }
    k
}

/// Positions (at depth 0, from `from` on) where a domain statement may start: a text-like
/// command, `\forall`, `∀`, `,`, `;`, `(`, `\quad`, `\qquad`, or a bare word `for`, `where`,
/// `with`.
fn candidates(s: &str, from: usize) -> Vec<usize> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut depth: i32 = 0;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let at_top = depth == 0 && i >= from;
        match c {
            b'\\' => {
                let name_len = b[i + 1..].iter().take_while(|x| x.is_ascii_alphabetic()).count();
                let name = &s[i + 1..i + 1 + name_len];
                if name_len == 0 {
                    // `\{`, `\}`, `\,`: one escaped character.
                    match b.get(i + 1) {
                        Some(b'{') => depth += 1,
                        Some(b'}') => depth -= 1,
                        _ => {}
                    }
                    i += 1 + s[i + 1..].chars().next().map_or(0, char::len_utf8);
                    continue;
                }
                if at_top && (TEXT_COMMANDS.contains(&name) || matches!(name, "forall" | "quad" | "qquad" | "left")) {
                    out.push(i);
                }
                i += 1 + name_len;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth -= 1,
            b'(' => {
                if at_top {
                    out.push(i);
                }
                depth += 1;
            }
            b')' => depth -= 1,
            b',' | b';' if at_top => out.push(i),
            c if c.is_ascii_alphabetic() && at_top && (i == 0 || !b[i - 1].is_ascii_alphabetic()) => {
                let w_len = b[i..].iter().take_while(|x| x.is_ascii_alphabetic()).count();
                if matches!(&s[i..i + w_len], "for" | "where" | "with" | "For" | "Where" | "With") {
                    out.push(i);
                }
                i += w_len;
                continue;
            }
            _ => {}
        }
        if at_top && s[i..].starts_with('∀') {
            out.push(i);
        }
        i += s[i..].chars().next().map_or(1, char::len_utf8);
    }
    out
}

/// The tokens of a candidate statement, or `None` when it holds anything a domain statement
/// cannot (digits, operators, other commands, nested groups).
fn tokens(s: &str) -> Option<Vec<Tok>> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        match c {
            ' ' | '\t' | '\n' | '$' | '~' => rest = &rest[1..],
            ',' | ';' => {
                out.push(Tok::Comma);
                rest = &rest[1..];
            }
            '(' => {
                out.push(Tok::Open);
                rest = &rest[1..];
            }
            ')' => {
                out.push(Tok::Close);
                rest = &rest[1..];
            }
            '∈' => {
                out.push(Tok::In);
                rest = &rest[c.len_utf8()..];
            }
            '∀' => {
                out.push(Tok::ForAll);
                rest = &rest[c.len_utf8()..];
            }
            'ℤ' | 'ℕ' | 'ℚ' | 'ℝ' | 'ℂ' => {
                out.push(Tok::Set);
                rest = set_suffix(&rest[c.len_utf8()..]);
            }
            '\\' => rest = command(&rest[1..], &mut out)?,
            c if c.is_ascii_alphabetic() => {
                let len = rest.find(|x: char| !(x.is_ascii_alphabetic() || x == '-')).unwrap_or(rest.len());
                let w = &rest[..len];
                rest = &rest[len..];
                if w.len() == 1 {
                    out.push(Tok::Var(w.to_string()));
                    rest = subscript(rest)?;
                } else {
                    out.push(Tok::Word(w.to_ascii_lowercase()));
                }
            }
            _ => return None,
        }
    }
    Some(out)
}

/// After `\`: the command's tokens; the rest of the input.
fn command<'a>(s: &'a str, out: &mut Vec<Tok>) -> Option<&'a str> {
    let len = s.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(s.len());
    let (name, rest) = s.split_at(len);
    if len == 0 {
        // `\,`, `\;`, `\ `, `\!`: spacing.
        let c = rest.chars().next()?;
        return matches!(c, ',' | ';' | ' ' | '!' | ':').then(|| &rest[1..]);
    }
    match name {
        "in" => out.push(Tok::In),
        "forall" => out.push(Tok::ForAll),
        "quad" | "qquad" => out.push(Tok::Space),
        "left" | "right" | "big" | "Big" | "bigl" | "bigr" | "Bigl" | "Bigr" => {}
        "Z" | "N" | "Q" | "R" | "C" => {
            out.push(Tok::Set);
            return Some(set_suffix(rest));
        }
        n if SET_COMMANDS.contains(&n) => {
            let (arg, after) = argument(rest)?;
            if !matches!(arg.trim(), "Z" | "N" | "Q" | "R" | "C") {
                return None;
            }
            out.push(Tok::Set);
            return Some(set_suffix(after));
        }
        n if TEXT_COMMANDS.contains(&n) => {
            let (arg, after) = argument(rest)?;
            for w in arg.split(|c: char| c.is_whitespace() || c == '~') {
                let w = w.trim_matches(|c: char| c == '.' || c == ':');
                let (w, comma) = match w.strip_suffix(',') {
                    Some(x) => (x, true),
                    None => (w, false),
                };
                if w.is_empty() {
                } else if !w.chars().all(|c| c.is_ascii_alphabetic() || c == '-') {
                    return None;
                } else if w.len() == 1 && w != "a" {
                    out.push(Tok::Var(w.to_string()));
                } else if is_set_name(&w.to_ascii_lowercase()) && w.len() > 1 {
                    out.push(Tok::Set);
                } else {
                    out.push(Tok::Word(w.to_ascii_lowercase()));
                }
                if comma {
                    out.push(Tok::Comma);
                }
            }
            return Some(after);
        }
        n if super::is_greek_name(n) => {
            out.push(Tok::Var(format!("\\{n}")));
            return subscript(rest);
        }
        _ => return None,
    }
    Some(rest)
}

/// A `{...}` argument without nested braces, or one character.
fn argument(s: &str) -> Option<(&str, &str)> {
    let t = s.trim_start();
    if let Some(inner) = t.strip_prefix('{') {
        let close = inner.find('}')?;
        let arg = &inner[..close];
        return (!arg.contains('{')).then(|| (arg, &inner[close + 1..]));
    }
    let c = t.chars().next()?;
    Some((&t[..c.len_utf8()], &t[c.len_utf8()..]))
}

/// Skip `^+`, `^*`, `^{+}`, `_+`, `_{>0}`, `_0` after a number set (`\mathbb{N}^{+}`).
fn set_suffix(s: &str) -> &str {
    let mut rest = s;
    while let Some(r) = rest.strip_prefix('^').or_else(|| rest.strip_prefix('_')) {
        if let Some(inner) = r.strip_prefix('{') {
            match inner.find('}') {
                Some(k) if !inner[..k].contains('{') => rest = &inner[k + 1..],
                _ => return rest,
            }
        } else if r.starts_with(['+', '*', '0', '-']) {
            rest = &r[1..];
        } else {
            return rest;
        }
    }
    rest
}

/// Skip a subscript of a variable (`k_1`, `k_{1}`, `n_0`).
fn subscript(s: &str) -> Option<&str> {
    let Some(r) = s.strip_prefix('_') else { return Some(s) };
    if let Some(inner) = r.strip_prefix('{') {
        let k = inner.find('}')?;
        return inner[..k].chars().all(|c| c.is_ascii_alphanumeric()).then(|| &inner[k + 1..]);
    }
    let c = r.chars().next()?;
    c.is_ascii_alphanumeric().then(|| &r[c.len_utf8()..])
}

/// Whether the tokens are one domain statement (see the module documentation).
fn is_domain_clause(toks: &[Tok]) -> bool {
    let mut t = toks;
    // A leading separator.
    let mut separated = false;
    while let [Tok::Comma | Tok::Space, rest @ ..] = t {
        separated = true;
        t = rest;
    }
    // `( ... )` around the whole statement.
    if let [Tok::Open, inner @ .., Tok::Close] = t {
        separated = true;
        t = inner;
    }
    let mut marker = false;
    loop {
        match t {
            [Tok::ForAll, rest @ ..] => t = rest,
            [Tok::Word(w), rest @ ..] if matches!(w.as_str(), "for" | "where" | "with") => t = rest,
            _ => break,
        }
        marker = true;
    }
    if !marker && !separated {
        return false;
    }
    let mut quantified = false;
    while let [Tok::Word(w), rest @ ..] = t {
        if !(QUANTIFIER_WORDS.contains(&w.as_str()) || TYPE_WORDS.contains(&w.as_str())) {
            break;
        }
        quantified = true;
        t = rest;
    }
    // Groups: variables, then `\in SET` or `is/are (a|an) TYPE...`.
    let mut groups = 0;
    loop {
        let mut vars = 0;
        while let [Tok::Var(_), rest @ ..] = t {
            vars += 1;
            t = rest;
            if let [Tok::Comma, Tok::Var(_), ..] = t {
                t = &t[1..];
            }
        }
        if vars == 0 {
            return false;
        }
        let mut typed = false;
        match t {
            [Tok::In, Tok::Set, rest @ ..] => {
                typed = true;
                t = rest;
            }
            [Tok::Word(w), rest @ ..] if w == "is" || w == "are" => {
                t = rest;
                if let [Tok::Word(a), rest @ ..] = t {
                    if a == "a" || a == "an" {
                        t = rest;
                    }
                }
                while let [Tok::Word(w), rest @ ..] = t {
                    if !TYPE_WORDS.contains(&w.as_str()) {
                        return false;
                    }
                    typed = true;
                    t = rest;
                }
            }
            _ => {}
        }
        // A bare variable list names nothing: `for t` alone is not a domain statement, and a
        // statement without a marker must name its set.
        if !(typed || (marker && quantified)) {
            return false;
        }
        groups += 1;
        match t {
            [] => return groups > 0,
            [Tok::Comma | Tok::Space, rest @ ..] => t = rest,
            [Tok::Word(w), rest @ ..] if w == "and" => t = rest,
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::strip;

    #[test]
    fn domain_statements_are_dropped() {
        for (input, value) in [
            (r"f(x) = 1 \text{ for all } x \in \mathbb{Q}", r"f(x) = 1"),
            (r"(-32 + 3t, 64 - 5t) \text{ for some integer } t", r"(-32 + 3t, 64 - 5t)"),
            (r"x = k\pi \text{where } k \in \mathbb{Z}", r"x = k\pi"),
            (r"x = k\pi \text{ where } k \text{ is an integer}", r"x = k\pi"),
            (r"x = k\pi, k \in \mathbb{Z}", r"x = k\pi"),
            (r"x = k\pi,\ k\in\mathbb{Z}", r"x = k\pi"),
            (r"x = 2k\pi \quad (k \in \mathbb{Z})", r"x = 2k\pi"),
            (r"x = 2k\pi (k \in \mathbb Z)", r"x = 2k\pi"),
            (r"\frac{\pi}{6} + 2k\pi, k \in \mathbb{Z}", r"\frac{\pi}{6} + 2k\pi"),
            (r"x = k\pi \text{ for any integer } k", r"x = k\pi"),
            (r"a_n = 2n + 1 \text{ for } n \in \mathbb{N}^{+}", r"a_n = 2n + 1"),
            (r"x = k\pi + n, \text{ where } k, n \in \mathbb{Z}", r"x = k\pi + n"),
            (r"x = m\pi, m \in \mathbb{Z}, n \in \mathbb{Z}", r"x = m\pi"),
            (r"f(x) = x \forall x \in \mathbb{R}", r"f(x) = x"),
            (r"f(x) = 2x \text{ for all real } x", r"f(x) = 2x"),
            (r"x = k\pi, k ∈ ℤ", r"x = k\pi"),
        ] {
            assert_eq!(strip(input), value, "{input}");
        }
    }

    #[test]
    fn values_stay() {
        for input in [
            r"x \in [1, 2]",
            r"x = 2, y \in [1, 2]",
            r"1, 2, 3",
            r"x \in \mathbb{R}",
            r"(-\infty, 1) \cup (1, \infty)",
            r"x = 5 \text{ for } x > 0",
            r"x = k\pi \text{ for } k",
            r"5 \text{ or } 6",
            r"x = 1, y = 2",
            r"\text{for all } x",
            r"f(x) = 1 \text{ for all } x \in \mathbb{Q} \text{ or } 2",
            r"3, k \in \mathbb{Z} + 1",
            r"a, b \in \mathbb{Z}",
        ] {
            assert_eq!(strip(input), input, "{input}");
        }
    }
}
