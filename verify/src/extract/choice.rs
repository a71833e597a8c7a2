//! Multiple-choice letters (A)-(E).
//!
//! Two jobs: recognise an extracted answer that is only a choice letter in one of its usual
//! wrappings (`B`, `(B)`, `\text{(B)}`, `\textbf{(E)}`, `\mathrm{C}`) so it is reported as the bare
//! letter; and, as a strategy of its own, find the choice named in the last line of a response
//! ("... so the correct option is (C).", "I choose option D").

use super::scan::{is_word_byte, last_line};
use super::tokens::{all_tokens, Kind, Lexer, Token};
use crate::lexicon::{self, Class};

/// LaTeX wrappers that may surround a choice letter.
const WRAPPERS: &[&str] = &[
    r"\text{",
    r"\textbf{",
    r"\mathrm{",
    r"\mathbf{",
    r"\textrm{",
    r"\mbox{",
    // Emphasis around a choice (`\underline{(B)}`) is markup.
    r"\underline{",
    r"\emph{",
    r"\textit{",
    r"\boldsymbol{",
    r"\bm{",
];

/// The choice letter when `s` is nothing but a letter A-E in one of its usual wrappings.
pub(crate) fn choice_letter(s: &str) -> Option<char> {
    let mut t = s.trim();
    for _ in 0..4 {
        let before = t;
        for w in WRAPPERS {
            if let Some(inner) = t.strip_prefix(w).and_then(|r| r.strip_suffix('}')) {
                t = inner.trim();
            }
        }
        if let Some(inner) = t.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
            t = inner.trim();
        }
        if t == before {
            break;
        }
    }
    let mut chars = t.chars();
    match (chars.next(), chars.next()) {
        (Some(c @ 'A'..='E'), None) => Some(c),
        _ => None,
    }
}

/// The choice letter that labels an answer followed by its content: `(C) y = 2x + 1`,
/// `\textbf{(C)}\ 250`, `C) 250`, `(D) $4(x+1)=4x$`. Only a label in parentheses (or closed by
/// `)`) counts, so `C = 5` or `D + 1` name no choice.
/// Returns the letter and the option text after the label (`(C) y = 2x + 1` -> `C`, `y = 2x + 1`).
pub(crate) fn split_choice_label(s: &str) -> Option<(char, &str)> {
    let mut t = s.trim_start();
    for w in WRAPPERS {
        if let Some(r) = t.strip_prefix(w) {
            // `\textbf{(C)}` or `\textbf{(C) 250}`
            t = r.trim_start();
            break;
        }
    }
    let t = t.strip_prefix('(').unwrap_or(t);
    let mut chars = t.chars();
    let letter = chars.next().filter(|c| ('A'..='E').contains(c))?;
    let rest = chars.as_str().trim_start();
    let rest = rest.strip_prefix(')')?;
    let rest = rest.strip_prefix('}').unwrap_or(rest);
    // Something must follow the label, and it is not itself another label.
    let rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '\\' || c == '~' || c == ':');
    (!rest.is_empty() && choice_letter(rest).is_none()).then_some((letter, rest))
}

/// The choices named at the end of the last line of `text`: the last one named, `(C)` (not part of
/// a name like `P(A)`) or "option C" / "choice C", together with the choices joined to it by
/// connectors only (`(A) or (E)`, `A/B`, `(B) and (D)`: several candidates, a hedge unless the
/// gold lists them). `between (A) and (B), it is (B)` names `B`: a clause stands between. A line
/// naming three or more different letters is the list of options (`(A) 3.2 \qquad (B) 3.5 ...`),
/// not a choice. Empty when the line names none.
pub(crate) fn last_line_choices(text: &str) -> Vec<char> {
    let (_, line) = last_line(text);
    let b = line.as_bytes();
    let letter = |t: Option<&Token>, at: usize| {
        t.filter(|t| t.range == (at..at + 1) && matches!(t.kind, Kind::Word(_)) && (b'A'..=b'E').contains(&b[at]))
            .map(|_| b[at] as char)
    };
    let mut mentions: Vec<(usize, usize, char)> = Vec::new();
    let tokens: Vec<Token> = Lexer::new(line).collect();
    for (k, t) in tokens.iter().enumerate() {
        let i = t.range.start;
        match t.kind {
            // `(C)`, not part of a name (`P(A)`, `\(A)`, `x^(A)`).
            Kind::Char('(') if i == 0 || !(is_word_byte(b[i - 1]) || matches!(b[i - 1], b'\\' | b'^')) => {
                let closed = tokens.get(k + 2).is_some_and(|c| c.kind == Kind::Char(')') && c.range.start == i + 2);
                if let Some(c) = letter(tokens.get(k + 1), i + 1).filter(|_| closed) {
                    mentions.push((i, i + 3, c));
                }
            }
            // `option C`, `choice C`.
            Kind::Word(_) if i == 0 || !is_word_byte(b[i - 1]) => {
                let w = t.text(line);
                let named = w.eq_ignore_ascii_case("option") || w.eq_ignore_ascii_case("choice");
                let at = t.range.end + 1;
                if named && b.get(t.range.end) == Some(&b' ') {
                    let free = !b.get(at + 1).is_some_and(|c| is_word_byte(*c));
                    if let Some(c) = letter(tokens.get(k + 1), at).filter(|_| free) {
                        mentions.push((i, at + 1, c));
                    }
                }
            }
            _ => {}
        }
    }
    mentions.sort_unstable();
    let mut seen = [false; 5];
    for m in &mentions {
        seen[usize::from(m.2 as u8 - b'A')] = true;
    }
    if seen.iter().filter(|s| **s).count() >= 3 {
        return Vec::new();
    }
    let Some(&(mut start, _, last)) = mentions.last() else { return Vec::new() };
    let mut out = vec![last];
    for &(s, e, c) in mentions.iter().rev().skip(1) {
        if e > start || !is_choice_connector(&line[e..start]) {
            break;
        }
        out.push(c);
        start = s;
    }
    out.reverse();
    out
}

/// Several choice letters joined by connectors and nothing else: `(C)/(D)`, `A, B`, `A or E`,
/// `(B) and (D)`, `\text{(B) or (D)}` (two or more letters; `None` otherwise).
pub(crate) fn choice_list(s: &str) -> Option<Vec<char>> {
    let t = s.trim();
    if t.len() > 80 {
        return None;
    }
    let mut letters = Vec::new();
    for piece in t.split(|c: char| c.is_whitespace() || matches!(c, ',' | '/' | '&' | ';')) {
        if piece.is_empty() || ["or", "and", "either"].iter().any(|w| w.eq_ignore_ascii_case(piece)) {
            continue;
        }
        letters.push(choice_letter(piece)?);
    }
    (letters.len() >= 2).then_some(letters)
}

/// The choice a response opens with: `A. Because ...`, `(B) since ...`, `C) ...`, `D: ...`,
/// `B is the only valid option`, or a response that is only the letter. `A farmer ...` (an
/// article) names none.
pub(crate) fn opening_choice(text: &str) -> Option<char> {
    let t = text.trim_start().trim_start_matches(['*', '#', ' ']);
    let t = t.strip_prefix('(').unwrap_or(t);
    let mut chars = t.chars();
    let letter = chars.next().filter(|c| ('A'..='E').contains(c))?;
    let rest = chars.as_str();
    let rest = rest.trim_start_matches('*');
    let opens = rest.is_empty()
        || rest.starts_with(['.', ')', ':', '\n'])
        || rest.starts_with(" is ")
        || rest.starts_with(" - ");
    (opens && !rest.starts_with("..")).then_some(letter)
}

/// Whether `s` opens with the article `a`/`A` followed by a word that is no verb (`a tricky one`,
/// `A careful reader ...`): prose, whose first letter names no choice. `A is correct`, `A
/// because ...` still label one.
pub(crate) fn article_led(s: &str) -> bool {
    let t = s.trim_start();
    let mut tokens = Lexer::new(t);
    let article = tokens.next().is_some_and(|a| matches!(a.text(t), "a" | "A")) && t.as_bytes().get(1) == Some(&b' ');
    let Some(next) = tokens.next().filter(|n| article && n.range.start == 2 && n.is_ascii_word(t)) else {
        return false;
    };
    // The word up to an apostrophe (`a don't` reads `don`).
    let word = next.text(t).split('\'').next().unwrap_or("");
    if word.len() < 2 || !word.starts_with(|c: char| c.is_ascii_lowercase()) {
        return false;
    }
    let c = lexicon::classes(word);
    !(c.has(Class::Stating) || c.has(Class::Offering) || c.has(Class::Reason) || c.has(Class::ClauseWord))
}

/// Text that only joins two choice mentions: spaces, `,`, `/`, `&`, "or", "and", "either".
fn is_choice_connector(sep: &str) -> bool {
    all_tokens(sep, |t| match t.kind {
        Kind::Char(',' | '/' | '&' | '{' | '}') => true,
        Kind::Command => t.text(sep) == "\\text",
        Kind::Word(_) => ["or", "and", "either"].iter().any(|c| c.eq_ignore_ascii_case(t.text(sep))),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters() {
        for s in ["B", "(B)", r"\text{(B)}", r"\textbf{(B)}", r"\text{ B }", r"\mathrm{(B)}"] {
            assert_eq!(choice_letter(s), Some('B'), "{s}");
        }
        for s in ["F", "(B) 5", "AB", "b", r"\frac{B}{2}", ""] {
            assert_eq!(choice_letter(s), None, "{s}");
        }
    }

    #[test]
    fn last_line() {
        let last_line_choice = |s: &str| -> Option<char> {
            let c = last_line_choices(s);
            (c.len() == 1).then(|| c[0])
        };
        assert_eq!(last_line_choices("so it is (A) or (E)."), vec!['A', 'E']);
        assert_eq!(last_line_choices("(B) and (D)"), vec!['B', 'D']);
        assert_eq!(opening_choice("A. Because the function is odd."), Some('A'));
        assert_eq!(opening_choice("B is the only valid option"), Some('B'));
        assert_eq!(opening_choice("(C) since it works"), Some('C'));
        assert_eq!(opening_choice("A farmer has 5 cows."), None);
        assert_eq!(opening_choice("F. no"), None);
        assert_eq!(last_line_choice("work\nSo the answer must be (C)."), Some('C'));
        assert_eq!(last_line_choice("(A) is wrong\nI pick option D"), Some('D'));
        assert_eq!(last_line_choice("P(A) = 1/2"), None);
        assert_eq!(last_line_choice("(B) earlier\nno letter here"), None);
        assert_eq!(last_line_choice(r"\textbf{(A) }3.2 \qquad \textbf{(B) } 3.5 \qquad \textbf{(C) } 3.8"), None);
        assert_eq!(last_line_choice("between (A) and (B), it is (B)"), Some('B'));
    }

    #[test]
    fn articles_are_not_choices() {
        for s in ["a tricky one", "A careful reader will see it", "a matter of taste"] {
            assert!(article_led(s), "{s}");
        }
        for s in ["A", "A is correct", "A because it is odd", "(A) 5", "Abc", "a = 5"] {
            assert!(!article_led(s), "{s}");
        }
    }
}
