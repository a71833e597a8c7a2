//! Multiple-choice letters (A)-(E).
//!
//! Two jobs: recognise an extracted answer that is only a choice letter in one of its usual
//! wrappings (`B`, `(B)`, `\text{(B)}`, `\textbf{(E)}`, `\mathrm{C}`) so it is reported as the bare
//! letter; and, as a strategy of its own, find the choice named in the last line of a response
//! ("... so the correct option is (C).", "I choose option D").

use super::scan::{is_word_byte, last_line, starts_with_ci};

/// LaTeX wrappers that may surround a choice letter.
const WRAPPERS: &[&str] = &[r"\text{", r"\textbf{", r"\mathrm{", r"\mathbf{", r"\textrm{", r"\mbox{"];

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

/// The last choice named in the last line of `text`: `(C)` (not part of a name like `P(A)`), or
/// "option C" / "choice C". A line naming three or more different letters is the list of options
/// (`(A) 3.2 \qquad (B) 3.5 ...`), not a choice.
pub(crate) fn last_line_choice(text: &str) -> Option<char> {
    let (_, line) = last_line(text);
    let b = line.as_bytes();
    let mut found: Option<(usize, char)> = None;
    let mut seen = [false; 5];
    let mut note = |at: usize, letter: Option<u8>| {
        if let Some(c @ b'A'..=b'E') = letter {
            seen[usize::from(c - b'A')] = true;
            if found.is_none_or(|(p, _)| p < at) {
                found = Some((at, c as char));
            }
        }
    };
    for i in memchr::memchr_iter(b'(', b) {
        if b.get(i + 2) == Some(&b')') && (i == 0 || !(is_word_byte(b[i - 1]) || matches!(b[i - 1], b'\\' | b'^'))) {
            note(i, b.get(i + 1).copied());
        }
    }
    for word in [b"option ".as_slice(), b"choice "] {
        for i in memchr::memchr2_iter(word[0], word[0].to_ascii_uppercase(), b) {
            if starts_with_ci(b, i, word) && (i == 0 || !is_word_byte(b[i - 1])) {
                let k = i + word.len();
                if !b.get(k + 1).is_some_and(|c| is_word_byte(*c)) {
                    note(i, b.get(k).copied());
                }
            }
        }
    }
    if seen.iter().filter(|s| **s).count() >= 3 {
        return None;
    }
    found.map(|(_, c)| c)
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
        assert_eq!(last_line_choice("work\nSo the answer must be (C)."), Some('C'));
        assert_eq!(last_line_choice("(A) is wrong\nI pick option D"), Some('D'));
        assert_eq!(last_line_choice("P(A) = 1/2"), None);
        assert_eq!(last_line_choice("(B) earlier\nno letter here"), None);
        assert_eq!(last_line_choice(r"\textbf{(A) }3.2 \qquad \textbf{(B) } 3.5 \qquad \textbf{(C) } 3.8"), None);
        assert_eq!(last_line_choice("between (A) and (B), it is (B)"), Some('B'));
    }
}
