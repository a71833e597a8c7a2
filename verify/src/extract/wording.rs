//! The words around a value in an answer: which leave the value as stated, and which change it.
//!
//! An answer that states a number with words around it (`12 \text{ apples}`, `\text{Bo earns
//! \$12.}`) answers that number only when every word is of a kind that cannot change it. The
//! kinds are **allow-lists**, never a list of forbidden words: a deny-list of qualifiers misses
//! the next one a policy tries (`\text{beyond } 7`, `\text{roughly } 7`, `7 \text{ or so}`,
//! `7 \text{ at most}`, `\text{7 cannot happen}`).
//!
//! What may stand **after** the value:
//! - units and unit-like words (`cm`, `dollars`, `square units`, `hours`; the parser's list), with
//!   `per` between two of them (`5 \text{ meters per second}`);
//! - ordinal suffixes (`5\text{th}`, `2nd`);
//! - counted nouns: a plural (`apples`, `ways`, `students`) of a word that is not one of the few
//!   English function words ending in `s` (`less`, `thus`, `is`, ...), or a word from a short list
//!   of singular nouns (`way`, `apple`, `box`, ...), one adjective allowed before it (`red apples`)
//!   only when it is itself plain letters;
//! - a closing word that restates the count (`in total`, `total`, `altogether`, `in all`,
//!   `overall`, `left`, `remaining`);
//! - a domain statement that only says where a parameter lives (`for all x \in \mathbb{Q}`,
//!   `for some integer t`, `where k \in \mathbb{Z}`).
//!
//! What may stand **before** it: nothing but a currency sign, or a plain statement whose last word
//! states a value (`is`, `are`, `equals`, `has`, `costs`, `earns`, `of` in `a total of`, `to` after
//! `equal`/`amounts`/`comes`...), with no negation or modal word anywhere before the value (`not`,
//! `cannot`, `never`, `might`, `probably`, ... are closed classes of English, listed in full).
//!
//! Anywhere, a word that asserts equality (`exactly`, `precisely`, `genau`: the lexicon's
//! `Exact`) leaves the value as stated (`\text{precisely } 9`, `24 \text{ exactly}`).
//!
//! Anything else (an adverb such as `roughly`, a preposition such as `beyond`, a comparison such
//! as `less than`, a hedge such as `or so`) makes the answer [`Wording::Qualified`]: it states
//! something other than the value, and a qualified answer is never rewarded. An answer without
//! digits (a text, a symbol, a number in words) has no allow-lists: it is qualified only by a
//! bound or an approximation beside it (the lexicon's `Bound`: `\text{Evelyn} \text{ at
//! minimum}`, `\text{at most } \cot x`).

use std::ops::Range;

use super::scan::matching_brace;
use super::tokens::{Kind, Lexer, TEXT_COMMANDS};
use crate::lexicon::{self, Class};

/// What the words of an answer do to its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wording {
    /// No words, or only words that leave the value as stated.
    Plain,
    /// A word that changes or hedges the value.
    Qualified,
}

/// One token of an answer for [`wording`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token<'a> {
    /// A word (text or a bare word of three or more letters), lower-cased on comparison.
    Word(&'a str),
    /// A number, a formula or a symbol: the value's material.
    Math,
    /// `\in` or `∈`: the membership of a domain statement.
    In,
    /// `=` or `:` after words: the words name the value (`\text{Total} = 42`, `Area: 12`).
    Names,
}

/// Split an answer into words and math, each with its byte range, from the token stream. Words
/// are letter runs inside text commands (`\text`, `\mbox`, `\textbf`, ...) and bare letter runs of
/// three or more letters that are not math names (or two, capitalised: `Bo earns`); everything
/// else (digits, operators, single letters, LaTeX commands) is math.
fn tokens(answer: &str) -> Vec<(Token<'_>, Range<usize>)> {
    let b = answer.as_bytes();
    let mut out: Vec<(Token<'_>, Range<usize>)> = Vec::new();
    let push_math = |out: &mut Vec<(Token<'_>, Range<usize>)>, range: Range<usize>| match out.last_mut() {
        Some((Token::Math, r)) => r.end = range.end,
        _ => out.push((Token::Math, range)),
    };
    // Depth of the text groups we are in: brace depth at which each `\text{` opened.
    let mut text_depth: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    let mut lexer = Lexer::new(answer);
    while let Some(t) = lexer.next() {
        let Range { start: i, end: j } = t.range.clone();
        match t.kind {
            Kind::Command => {
                let name = &answer[i + 1..j];
                if TEXT_COMMANDS.contains(&name) && b.get(j) == Some(&b'{') {
                    text_depth.push(depth);
                    depth += 1;
                    lexer.seek(j + 1);
                } else if matches!(name, "begin" | "end" | "operatorname" | "mathbb" | "mathcal" | "mathfrak") {
                    // An environment or font name is no word: `\begin{pmatrix}`, `\mathbb{Z}`.
                    let end = match b.get(j) {
                        Some(b'{') => matching_brace(b, j).map_or(b.len(), |c| c + 1),
                        _ => j,
                    };
                    push_math(&mut out, i..end);
                    lexer.seek(end);
                } else if name == "in" || name == "notin" {
                    out.push((if name == "in" { Token::In } else { Token::Word("not") }, i..j));
                } else if !matches!(name, "quad" | "qquad" | "left" | "right" | "displaystyle" | "dfrac" | "tfrac") {
                    push_math(&mut out, i..j);
                }
            }
            // `\$`, `\,`: a currency sign or spacing is not a word; `\{`, `\}`, `\%` are math.
            Kind::Escape if matches!(b.get(i + 1), Some(b'{' | b'}' | b'%')) => push_math(&mut out, i..j),
            Kind::Escape => {}
            Kind::Char('{') => depth += 1,
            Kind::Char('}') => {
                depth = depth.saturating_sub(1);
                if text_depth.last() == Some(&depth) {
                    text_depth.pop();
                }
            }
            Kind::Word(classes) if t.is_ascii_word(answer) => {
                let w = &answer[i..j];
                let in_text = !text_depth.is_empty();
                let capitalised =
                    w.len() == 2 && w.as_bytes()[0].is_ascii_uppercase() && w.as_bytes()[1].is_ascii_lowercase();
                // A name called like a function is math: `gamma(3/2)`, `sqrt(2)`.
                let called = b.get(j) == Some(&b'(');
                // A single letter is a symbol even in a text command (`\mathrm{e}`, `\text{(C)}`).
                let short_word = classes.has(Class::ShortWord);
                let math = w.len() == 1
                    || (called && !in_text)
                    || (!in_text && !capitalised && !short_word && (w.len() < 3 || classes.has(Class::MathWord)));
                if math && !classes.has(Class::OrdinalSuffix) {
                    push_math(&mut out, i..j);
                } else {
                    out.push((Token::Word(w), i..j));
                }
            }
            Kind::Number => push_math(&mut out, i..j),
            // A prime after a command (`\alpha'`) is math.
            Kind::Char('\'') if i > 0 && b[i - 1].is_ascii_alphabetic() => push_math(&mut out, i..j),
            Kind::Word(_) | Kind::Numeral | Kind::Char(_) if b[i] >= 0x80 => {
                // `∈` is a membership; other characters of other scripts (`π`, `°`, `€`) are math,
                // signs or a word each.
                for (k, ch) in answer[i..j].char_indices() {
                    let r = i + k..i + k + ch.len_utf8();
                    if ch == '∈' {
                        out.push((Token::In, r));
                    } else if ch.is_alphabetic() && !matches!(ch, 'π' | 'θ' | 'α' | 'β' | 'γ') {
                        out.push((Token::Word(""), r));
                    } else if !matches!(ch, '€' | '£' | '¥' | '\u{a0}') {
                        push_math(&mut out, r);
                    }
                }
            }
            Kind::Char('=' | ':') if matches!(out.last(), Some((Token::Word(_), _))) => out.push((Token::Names, i..j)),
            Kind::Char(
                '=' | '+' | '-' | '*' | '/' | '^' | '<' | '>' | '(' | ')' | '[' | ']' | '%' | '|' | '!' | '&',
            ) => push_math(&mut out, i..j),
            _ => {}
        }
    }
    out
}

/// The words and math of an answer with the name before `=`/`:` and a trailing domain
/// statement set apart: `(prefix ok, value tokens)`, or `None` when the name itself hedges.
fn value_tokens(answer: &str) -> Option<Vec<(Token<'_>, Range<usize>)>> {
    let mut toks = tokens(answer);
    // `\text{exactly } 9`, `24 \text{ precisely}`: a word that asserts equality changes nothing.
    toks.retain(|t| !matches!(t.0, Token::Word(w) if lexicon::is(w, Class::Exact)));
    // `\text{Difference in Revenue} = \$64,800`, `Special matrix: ...`: a name, then the value.
    if let Some(k) = toks.iter().position(|t| t.0 == Token::Names) {
        if toks[..k].iter().all(|t| matches!(t.0, Token::Word(_))) {
            if toks[..k].iter().filter_map(|t| word_of(&t.0)).any(|w| is_negation_or_modal(&w)) {
                return None;
            }
            toks.drain(..=k);
        }
    }
    // `f(x) = 1 \text{ for all } x \in \mathbb{Q}`: a domain statement closes the value.
    if let Some(first_math) = toks.iter().position(|t| t.0 == Token::Math) {
        let kinds: Vec<Token<'_>> = toks.iter().map(|t| t.0).collect();
        let opener = (first_math + 1..kinds.len()).find(|&k| {
            word_of(&kinds[k]).is_some_and(|w| lexicon::is(&w, Class::DomainOpener)) && is_domain_statement(&kinds[k..])
        });
        if let Some(k) = opener {
            toks.truncate(k);
        }
    }
    Some(toks)
}

/// Whether prose before a value hedges or negates it (`the answer is less than`, `it cannot
/// be`, `roughly`): a closed-class word (negation, modal, comparison, approximation) among its
/// words. For a sentence around a value, where the allow-lists of an answer are too strict.
pub(crate) fn qualifies_prose(before: &str) -> bool {
    tokens(before).iter().filter_map(|t| word_of(&t.0)).any(|w| is_negation_or_modal(&w))
}

/// Does the value in `answer` stand as stated? See the module doc. An answer without digits is
/// compared as text or symbols (`\text{Monday}`), unless a bound stands beside it
/// (`\text{Evelyn} \text{ at minimum}`).
pub(crate) fn wording(answer: &str) -> Wording {
    // No letter: no word.
    if !answer.bytes().any(|c| c.is_ascii_alphabetic() || c >= 0x80) {
        return Wording::Plain;
    }
    if !answer.bytes().any(|c| c.is_ascii_digit()) {
        // No digit: a text or a symbol (`\text{Monday}`, `\cot x`, `forty-nine`), qualified only
        // by a bound or an approximation beside it (`\text{at most } \cot x`, `B \text{ at
        // minimum}`: the lexicon's `Bound`).
        let bound = tokens(answer).iter().filter_map(|t| word_of(&t.0)).any(|w| lexicon::is(&w, Class::Bound));
        return if bound { Wording::Qualified } else { Wording::Plain };
    }
    match value_tokens(answer) {
        Some(toks) if plain(&toks.iter().map(|t| t.0).collect::<Vec<_>>()) => Wording::Plain,
        _ => Wording::Qualified,
    }
}

/// The value of a plainly worded answer without its words (`12 apples` -> `12`, `Bo earns \$12`
/// -> `\$12`, `the 100th day` -> `100`), when words surround it; `None` otherwise.
pub(crate) fn bare_value(answer: &str) -> Option<&str> {
    if wording(answer) != Wording::Plain {
        return None;
    }
    if !tokens(answer).iter().any(|t| matches!(t.0, Token::Word(_))) {
        return None;
    }
    let toks = value_tokens(answer)?;
    let first = toks.iter().position(|t| t.0 == Token::Math)?;
    let last = toks.iter().rposition(|t| t.0 == Token::Math)?;
    if toks[first..=last].iter().any(|t| t.0 != Token::Math) {
        return None;
    }
    let v = answer[toks[first].1.start..toks[last].1.end].trim();
    (v != answer.trim()).then_some(v)
}

/// The allow-lists on a token sequence (see the module doc).
fn plain(toks: &[Token<'_>]) -> bool {
    let Some(first_math) = toks.iter().position(|t| *t == Token::Math) else {
        return true;
    };
    let last_math = toks.iter().rposition(|t| *t == Token::Math).unwrap_or(first_math);
    let ordinal_follows =
        matches!(toks.get(first_math + 1), Some(Token::Word(w)) if lexicon::is(w, Class::OrdinalSuffix));
    if !before_is_plain(&toks[..first_math], ordinal_follows) {
        return false;
    }
    // Words between two pieces of math: only units (`3 \text{ m} \times 4 \text{ m}`), `per`,
    // ordinals, or a connector of a list the parser reads (`and`).
    for (k, t) in toks.iter().enumerate().take(last_math).skip(first_math) {
        if let Token::Word(w) = t {
            if toks.get(k + 1) == Some(&Token::Names) && !is_negation_or_modal(&w.to_ascii_lowercase()) {
                // A list of named values: `Maximum: 2, Minimum: 1`.
                continue;
            }
            let lw = w.to_ascii_lowercase();
            if !(is_unit(&lw)
                || lw == "per"
                || lw == "and"
                || lw == "or"
                || lexicon::is(&lw, Class::OrdinalSuffix)
                || lexicon::is(&lw, Class::PercentWord)
                || is_noun(&lw))
            {
                return false;
            }
        }
    }
    after_is_plain(&toks[last_math + 1..])
}

/// The lower-cased word of a token.
fn word_of(t: &Token<'_>) -> Option<String> {
    match t {
        Token::Word(w) => Some(w.to_ascii_lowercase()),
        _ => None,
    }
}

fn is_negation_or_modal(w: &str) -> bool {
    lexicon::is(w, Class::NegationOrModal) || w.ends_with("n't")
}

/// Words before the value: none, or a plain statement ending in a stating word (or a determiner
/// before an ordinal: `the 100th day`).
fn before_is_plain(toks: &[Token<'_>], ordinal_follows: bool) -> bool {
    if toks.contains(&Token::Names) || toks.contains(&Token::In) {
        return false;
    }
    let mut words: Vec<String> = toks.iter().filter_map(word_of).collect();
    // A currency written before its amount (`USD 42`, `CHF 42`) is the amount's unit.
    if words.last().is_some_and(|w| crate::units::lookup(w).is_some_and(crate::units::is_currency)) {
        words.pop();
    }
    let Some(last) = words.last() else { return true };
    if words.iter().any(|w| is_negation_or_modal(w)) {
        return false;
    }
    if last == "to" {
        return words.len() >= 2 && lexicon::is(&words[words.len() - 2], Class::ToAfter);
    }
    if last == "by" {
        // A change by an amount (`grows by 100%`), not a property (`divisible by 60`).
        return words.len() >= 2 && lexicon::is(&words[words.len() - 2], Class::ByAfter);
    }
    if ordinal_follows && matches!(last.as_str(), "the" | "a" | "an" | "on" | "in") {
        return true;
    }
    lexicon::is(last, Class::Stating)
}

/// Whether the words after a value in a sentence leave it as stated (the allow-list after a
/// value: `86 animals`, `12 apples in total`, `5 cm`).
pub(crate) fn plain_after_words(words: &[&str]) -> bool {
    let toks: Vec<Token<'_>> = words.iter().map(|w| Token::Word(w)).collect();
    after_is_plain(&toks)
}

/// Words after the value: units, ordinals, a counted noun (one plain adjective may precede it),
/// closing words, or a domain statement.
fn after_is_plain(toks: &[Token<'_>]) -> bool {
    let mut k = 0;
    let word = |k: usize| match toks.get(k) {
        Some(Token::Word(w)) => Some(w.to_ascii_lowercase()),
        _ => None,
    };
    let mut nouns = 0;
    while k < toks.len() {
        let Some(w) = word(k) else {
            // Math after the value's last piece cannot happen (it would be part of it); an `\in`
            // outside a domain statement is not plain.
            return false;
        };
        if lexicon::is(&w, Class::DomainOpener) || (nouns == 0 && w == "all" && k == 0) {
            return is_domain_statement(&toks[k..]);
        }
        if is_unit(&w) || lexicon::is(&w, Class::OrdinalSuffix) || lexicon::is(&w, Class::PercentWord) || w == "per" {
            if lexicon::is(&w, Class::OrdinalSuffix)
                && word(k + 1).is_some_and(|n| n.len() >= 3 && !is_function_word(&n))
            {
                // An ordinal names one thing: `2nd row`, `3rd place`.
                k += 1;
            }
            k += 1;
            continue;
        }
        if is_noun(&w) {
            nouns += 1;
            k += 1;
            continue;
        }
        if lexicon::is(&w, Class::Closing) && (w != "in" || matches!(word(k + 1).as_deref(), Some("total" | "all"))) {
            k += 1;
            continue;
        }
        // One plain adjective before a noun (`12 red apples`).
        if nouns == 0 && w.len() >= 3 && !is_function_word(&w) && word(k + 1).is_some_and(|n| is_noun(&n)) {
            k += 1;
            continue;
        }
        return false;
    }
    true
}

/// `for all x \in \mathbb{Q}`, `for some integer t`, `where k \in \mathbb{Z}`: an opener, then a
/// membership or a domain word, and nothing that hedges.
fn is_domain_statement(toks: &[Token<'_>]) -> bool {
    let mut membership = false;
    for t in toks {
        match t {
            Token::In => membership = true,
            Token::Word(w) => {
                let lw = w.to_ascii_lowercase();
                if crate::latex::domain::TYPE_WORDS.contains(&lw.as_str())
                    || matches!(lw.as_str(), "all" | "some" | "every" | "each")
                {
                    membership = true;
                } else if !(lexicon::is(&lw, Class::DomainOpener) || lw == "in" || lw.len() <= 2) {
                    return false;
                }
            }
            Token::Math | Token::Names => {}
        }
    }
    membership
}

fn is_unit(w: &str) -> bool {
    crate::units::is_unit_word(w, true)
}

/// A counted noun: a plural that is not a function word, or a listed singular noun.
fn is_noun(w: &str) -> bool {
    lexicon::is(w, Class::SingularNoun)
        || (w.len() >= 4
            && w.ends_with('s')
            && !w.ends_with("ss")
            && !w.ends_with("ous")
            && !lexicon::is(w, Class::NotPlural)
            && !is_function_word(w))
}

/// Negations, modals, prepositions and other closed-class words that are never an adjective.
fn is_function_word(w: &str) -> bool {
    lexicon::is(w, Class::NegationOrModal)
        || lexicon::is(w, Class::Stating)
        || lexicon::is(w, Class::NotPlural)
        || matches!(w, "the" | "and" | "for" | "with" | "more" | "less" | "fewer" | "only" | "exactly" | "just" | "so")
}

#[cfg(test)]
mod tests {
    use super::{wording, Wording};

    #[test]
    fn plain_values() {
        for s in [
            "7",
            "12 \\text{ apples}",
            "5 \\text{ cm}^2",
            "\\$12.50",
            "5\\text{th}",
            "12 red apples",
            "18 eggs in total",
            "\\text{Bo earns \\$12.}",
            "\\text{The total is } 42",
            "x = 5",
            "2k\\pi",
            "f(x) = 1 \\text{ for all } x \\in \\mathbb{Q}",
            "(-32 + 3t, 64 - 5t) \\text{ for some integer } t",
            "\\frac{\\pi}{6} + 2k\\pi, \\text{ where } k \\in \\mathbb{Z}",
            "3 \\text{ m} \\times 4 \\text{ m}",
            "5 \\text{ meters per second}",
            "\\text{Monday}",
            "1 way",
            "28 percent",
            "4 4/9pct",
            "1 - \\frac{1}{\\mathrm{e}}",
            "\\text{Difference in Revenue} = \\$64,800",
            "Special matrix:  \\left[\\begin{array}{cc}1 & 2 \\\\3 & 4\\end{array}\\right]",
            "30^\\circ",
            "equal to 7",
            "Maximum: 2, Minimum: 1",
            "gamma(3/2)",
            "the 100th day",
            "2nd row",
            "Bo earns \\$12",
            // Words that assert equality change nothing.
            "\\text{exactly } 9",
            "24 \\text{ exactly}",
            "\\text{precisely } -\\frac{40}{153}",
            "\\text{genau } 7",
            "\\text{The total is exactly } 42",
            "12 \\text{ apples in all}",
            // No digit: text, symbols, numbers in words.
            "\\text{Evelyn}",
            "\\text{Plan A}",
            "\\cot x",
            "cuarenta y cinco",
            "\\text{no solution}",
        ] {
            assert_eq!(wording(s), Wording::Plain, "{s}");
        }
    }

    #[test]
    fn bare_values() {
        use super::bare_value;
        assert_eq!(bare_value("12 apples"), Some("12"));
        assert_eq!(bare_value("Bo earns \\$12"), Some("12"));
        assert_eq!(bare_value("the 100th day"), Some("100"));
        assert_eq!(bare_value("x = k\\pi \\text{ for } k \\in \\mathbb{Z}"), Some("x = k\\pi"));
        assert_eq!(bare_value("12"), None);
        assert_eq!(bare_value("|t|"), None);
        assert_eq!(bare_value("|t| \\text{ cm}"), Some("|t|"));
        assert_eq!(bare_value("\\text{less than } 7"), None);
        assert_eq!(bare_value("\\text{precisely } 9"), Some("9"));
        assert_eq!(bare_value("24 \\text{ exactly}"), Some("24"));
    }

    #[test]
    fn qualified_values() {
        for s in [
            "\\text{less than } 7",
            "\\text{beyond 7}",
            "\\text{roughly 7}",
            "7 \\text{ or so}",
            "7 \\text{ at most}",
            "\\text{7 cannot happen}",
            "\\text{at least } 7",
            "\\text{about } 7",
            "\\text{not } 7",
            "\\text{it cannot be } 7",
            "\\text{up to } 7",
            "7 \\text{ more}",
            "7 \\text{ is less}",
            "\\text{probably } 7",
            "7 \\text{ or fewer}",
            "7 \\text{ exactly or less}",
            "\\text{over } 7",
            "7 \\text{ if } n \\text{ is odd}",
            "\\text{Not the answer} = 7",
            "\\text{exactly } 7 \\text{ or more}",
            "\\text{at least exactly } 7",
            // Bounds beside a value without digits.
            "\\text{Evelyn} \\text{ at minimum}",
            "B \\text{ at minimum}",
            "\\text{at most } \\cot x",
            "\\text{no more than } f(n) = n",
            "\\frac{\\pi r}{h + r} \\text{ at minimum}",
            "\\text{about } \\pi",
        ] {
            assert_eq!(wording(s), Wording::Qualified, "{s}");
        }
    }
}
