//! Backslashes that a JSON layer read as escapes: `"\frac"` written into JSON without doubling
//! its backslash decodes to a form feed and `rac`, `"\theta"` to a tab and `heta`.
//!
//! JSON's one-letter escapes are `\b`, `\f`, `\n`, `\r`, `\t`. A backspace or form feed has no
//! place in a math answer, so any one of them is evidence. The other three are also whitespace a
//! text may hold, so each counts only where a real line break or tab cannot be:
//! - a carriage return not followed by a line feed (`\rho`, `\right`, `\rangle`; Windows line
//!   ends are `\r\n`);
//! - a tab followed by a letter, unless the tab indents a line after a line break (`\theta`, `\times`, `\text`,
//!   `\tfrac`, `\tan`, `\to`);
//! - a line feed followed by a word that, after an `n`, is a LaTeX command (`\neq`, `\ne`, `\nu`,
//!   `\nabla`, `\neg`, `\not`, `\notin`, ...): a real line break is followed by a
//!   sentence or a formula, not by `eq` or `abla`.
//!
//! One linear pass over the text.

/// LaTeX command names that begin with `n`, as a JSON layer leaves them: their tail after the `n`.
const N_COMMAND_TAILS: &[&str] = &[
    "e",
    "eq",
    "eg",
    "u",
    "abla",
    "ot",
    "otin",
    "mid",
    "leq",
    "geq",
    "less",
    "gtr",
    "exists",
    "cong",
    "sim",
    "subseteq",
    "supseteq",
    "subset",
    "supset",
    "parallel",
    "rightarrow",
    "leftarrow",
    "ewline",
    "atural",
    "leqslant",
    "geqslant",
    "ormalsize",
    "ewcommand",
];

/// Whether `text` holds a control character where a JSON layer ate the backslash of a LaTeX
/// command (module doc).
pub(crate) fn has_eaten_backslash(text: &str) -> bool {
    let b = text.as_bytes();
    b.iter().enumerate().any(|(i, &c)| {
        let next = b.get(i + 1).copied();
        match c {
            b'\r' => next != Some(b'\n'),
            b'\t' => {
                let indents = i > 0 && matches!(b[i - 1], b'\n' | b'\t');
                !indents && next.is_some_and(|n| n.is_ascii_alphabetic())
            }
            b'\n' => {
                let word = &b[i + 1..];
                let len = word.iter().take_while(|c| c.is_ascii_alphabetic()).count();
                len > 0 && N_COMMAND_TAILS.iter().any(|t| t.as_bytes() == &word[..len])
            }
            _ => c.is_ascii_control() && c != b'\x7f',
        }
    })
}

#[cfg(test)]
mod tests {
    use super::has_eaten_backslash;

    #[test]
    fn json_escapes_read_inside_commands_are_found() {
        for eaten in [
            "\tfrac{3}{4}",
            "$2\times 5$",
            "4 \text{ cm}",
            "\\cos\theta",
            "x \neq 2",
            "\nu_0 = 3",
            "x\ne y",
            "\rho = 1",
            "\\left( 1, 2 \right)",
            "\u{8}inom{5}{2}",
            "\u{c}rac12",
            "a \to b",
            "x \notin A",
        ] {
            assert!(has_eaten_backslash(eaten), "{eaten:?}");
        }
    }

    #[test]
    fn real_line_breaks_and_tabs_are_not_evidence() {
        for clean in [
            "",
            "\\frac{1}{2}",
            "Natalia sold 48 clips.\nThen she sold 24.\n#### 72",
            "line one\r\nline two",
            "two lines\n\tindented answer",
            "a\n\tb",
            "5\t6",
            "first\nnext step\nequals 4",
            "x = 3\n",
        ] {
            assert!(!has_eaten_backslash(clean), "{clean:?}");
        }
    }
}
