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

/// The last choice named in the last line of `text`: `(C)` (not part of a name like `P(A)`), or
/// "option C" / "choice C".
pub(crate) fn last_line_choice(text: &str) -> Option<char> {
    let (_, line) = last_line(text);
    let b = line.as_bytes();
    let mut found = None;
    for i in 0..b.len() {
        let letter = if b[i] == b'('
            && b.get(i + 2) == Some(&b')')
            && (i == 0 || !(is_word_byte(b[i - 1]) || matches!(b[i - 1], b'\\' | b'^')))
        {
            b.get(i + 1).copied()
        } else if (starts_with_ci(b, i, b"option ") || starts_with_ci(b, i, b"choice "))
            && (i == 0 || !is_word_byte(b[i - 1]))
        {
            let k = i + 7;
            b.get(k).copied().filter(|_| !b.get(k + 1).is_some_and(|c| is_word_byte(*c)))
        } else {
            None
        };
        if let Some(c @ b'A'..=b'E') = letter {
            found = Some(c as char);
        }
    }
    found
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
    }
}
