//! An approximation offered right after the answer joins it (the contract's point 5).
//!
//! `\boxed{\frac{\sqrt{21}}{5}} ($\approx 0.92$ to 2 decimal places)`, `$\boxed{\frac56}$
//! (approximately $0.83$)`, `\boxed{\frac13}, which is about $0.33$`, `\boxed{\pi} ≈ 3.14`: the
//! decimal is the answer's rounding, read as if written inside the box (`\frac56 \approx 0.83`), so
//! the one rule of EQUIVALENCE.md ("A value and its approximation") judges it: a right rounding
//! keeps the answer, a wrong one (`\frac56` then `(approximately 0.9)`) makes it wrong. It is
//! never a second candidate.
//!
//! The shape, on the token stream: an optional opening bracket, comma or semicolon; at most
//! [`MAX_LINK_WORDS`] linking words (`which is`, `or`); a sign of approximation (`\approx`,
//! `\simeq`, `≈`, `≃`) or a word of the lexicon's `Approximating` class (`approximately`, `about`,
//! `roughly`, `environ`, `etwa`, `约`), with `equal to` or `=` after it; a decimal number; then only
//! words saying how it was rounded (the lexicon's `Rounding`: `to 2 decimal places`, `rounded`),
//! up to the bracket's close. Math delimiters are transparent (`($\approx 0.92$)`). Anything else
//! is no approximation, and the statement reads it as before. An approximation word inside the
//! answer (`\boxed{\approx 0.33}`, `about 27`) is the answer's own wording: a qualified value.
//!
//! Cost: at most [`MAX_TOKENS`] tokens of the text after the answer.

use super::tokens::{Kind, Lexer, TEXT_COMMANDS};
use crate::lexicon::Class;

/// Most tokens read after the answer.
const MAX_TOKENS: usize = 32;
/// Most linking words before the sign of approximation (`, which is about`).
const MAX_LINK_WORDS: usize = 3;

/// The approximation right after an answer (`rest` starts right after it): its decimal (`0.92`,
/// `-1.5`) and the byte where the text after it starts.
pub(crate) fn approximation_after(rest: &str) -> Option<(String, usize)> {
    let b = rest.as_bytes();
    let mut toks = Lexer::new(rest).take(MAX_TOKENS).filter(|t| !delimiter(t.text(rest))).peekable();
    // An opening bracket, comma or semicolon.
    let bracket = match toks.peek().map(|t| t.kind) {
        Some(Kind::Char('(' | '[' | '（')) => toks.next().map(|t| t.text(rest)),
        Some(Kind::Char(',' | ';')) => {
            toks.next();
            None
        }
        _ => None,
    };
    // Linking words, then the sign or word of approximation.
    let mut links = 0;
    let mut approximated = false;
    while let Some(t) = toks.next() {
        match t.kind {
            Kind::Command if matches!(t.text(rest), "\\approx" | "\\simeq" | "\\thickapprox") => {
                approximated = !rest[..t.range.start].contains('\n');
                break;
            }
            Kind::Char('≈' | '≃') => {
                approximated = !rest[..t.range.start].contains('\n');
                break;
            }
            Kind::Word(c) if approximating(c, t.text(rest)) => {
                if rest[..t.range.start].contains('\n') {
                    // A later line is a sentence of its own (`The value is about 0.9.`).
                    return None;
                }
                approximated = true;
                // `approximately equal to`, `approximately =`.
                while toks.peek().is_some_and(|n| {
                    matches!(n.kind, Kind::Char('='))
                        || matches!(n.kind, Kind::Word(c) if c.has(Class::ToAfter) || c.has(Class::HedgeFiller))
                }) {
                    toks.next();
                }
                break;
            }
            Kind::Word(c)
                if links < MAX_LINK_WORDS
                    && (c.has(Class::ClauseWord)
                        || c.has(Class::Stating)
                        || c.has(Class::HedgeFiller)
                        || c.has(Class::ListConnector)) =>
            {
                links += 1
            }
            _ => return None,
        }
    }
    if !approximated {
        return None;
    }
    // The decimal, with its sign.
    let mut t = toks.next()?;
    let start = t.range.start;
    if matches!(t.kind, Kind::Char('-' | '−')) {
        t = toks.next().filter(|n| n.range.start == t.range.end)?;
    }
    if t.kind != Kind::Number || b.get(t.range.end).is_some_and(|c| c.is_ascii_alphabetic() || *c == b'\\') {
        return None;
    }
    let value = rest[start..t.range.end].replace('−', "-");
    let mut end = t.range.end;
    // How it was rounded, up to the bracket's close.
    let closer = match bracket {
        Some("(") => Some(')'),
        Some("[") => Some(']'),
        Some(_) => Some('）'),
        None => None,
    };
    while let Some(n) = toks.next() {
        match n.kind {
            Kind::Char(c) if Some(c) == closer => return Some((value, n.range.end)),
            Kind::Word(c) if c.has(Class::Rounding) || c.has(Class::HedgeFiller) || c.has(Class::ShortWord) => {
                end = n.range.end
            }
            // `2 decimal places`, `two significant figures`.
            Kind::Number | Kind::Word(_)
                if crate::number_words::value(n.text(rest)).is_some() || n.kind == Kind::Number =>
            {
                let rounding = toks.peek().is_some_and(|r| matches!(r.kind, Kind::Word(c) if c.has(Class::Rounding)));
                if !rounding {
                    break;
                }
                end = n.range.end;
            }
            // `3 d.p.`, `2 s.f.`: an abbreviation's dots; `(≈ 0.92, rounded)`; `\text{ rounded}`.
            Kind::Char('.' | ',' | '{' | '}') if closer.is_some() => {}
            Kind::Command if closer.is_some() && TEXT_COMMANDS.contains(&&n.text(rest)[1..]) => {}
            _ => break,
        }
    }
    // Without a bracket the approximation ends where its words end, with the delimiter that
    // closes its math; a bracket must close.
    loop {
        let after = rest[end..].trim_start();
        match ["$", "\\)", "\\]"].iter().find(|d| after.starts_with(**d)) {
            Some(d) => end = rest.len() - after.len() + d.len(),
            None => break,
        }
    }
    closer.is_none().then_some((value, end))
}

/// Whether a word gives the value after it as an approximation (`approximately`, `约`: the first
/// word of a run of a script written without spaces, `约为`).
fn approximating(classes: crate::lexicon::Classes, word: &str) -> bool {
    classes.has(Class::Approximating)
        || crate::lexicon::leading_word(word).is_some_and(|(_, c)| c.has(Class::Approximating))
}

/// Whether a token is a math delimiter, transparent here (`($\approx 0.92$)`).
fn delimiter(t: &str) -> bool {
    matches!(t, "$" | "\\(" | "\\)" | "\\[" | "\\]" | "\\," | "\\;" | "\\ " | "~")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approx(rest: &str) -> Option<String> {
        approximation_after(rest).map(|(d, _)| d)
    }

    #[test]
    fn approximations_right_after_the_answer() {
        for (rest, d) in [
            (" ($\\approx 0.92$ to 2 decimal places)", "0.92"),
            (" ($\\approx 19.3333$ to 4 decimal places).", "19.3333"),
            (" $\\approx 0.243$", "0.243"),
            (" \\approx 0.243$.", "0.243"),
            (" (approximately 0.9)", "0.9"),
            (" (approximately $0.83$)", "0.83"),
            (", which is about $0.33$.", "0.33"),
            (" ≈ 3.14", "3.14"),
            (" (≈ -1.25)", "-1.25"),
            (" (roughly 0.92, rounded to two decimal places)", "0.92"),
            (" (environ $0.92$)", "0.92"),
            (" (约 0.92)", "0.92"),
            (" (approximately equal to 0.92)", "0.92"),
            (" (约为 0.92)", "0.92"),
            (" ($\\approx 0.92$ \\text{to 2 decimal places})", "0.92"),
        ] {
            assert_eq!(approx(rest).as_deref(), Some(d), "{rest}");
        }
        // The text after it is read on: `, or perhaps $5$` is still a hedge.
        let rest = " (approximately 0.9), or perhaps $5$.";
        let (_, end) = approximation_after(rest).unwrap();
        assert_eq!(&rest[end..], ", or perhaps $5$.");
    }

    #[test]
    fn no_approximation() {
        for rest in [
            " (or perhaps $0.9$)",
            " (about 12 minutes)",
            " (approximately)",
            " (rounded)",
            ", about the $x$-axis",
            " apples, about 3 each",
            " \\approx x + 1",
            "\n\nThe value is about 0.9.",
        ] {
            assert_eq!(approx(rest), None, "{rest}");
        }
    }
}
