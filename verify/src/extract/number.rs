//! Last-number fallback: the last number written in the text.
//!
//! With its sign (`-`, or the Unicode minus `−`, when not a hyphen after a word or a number),
//! decimals and thousands separators (`1,234`: a comma counts only between a digit and exactly
//! three digits). A trailing period is not part of it. Fractions are not assembled (`3/4` gives
//! `4`): this is the GSM8K convention, used only when the gold is a plain number. A last number
//! written with a leading zero (`007`, `0800`, `0000...`) is a code or a degenerate output, not an
//! answer: there is none.

/// The last number of `text`, as written (`-1,234.5`), or `None` when there is no digit.
pub(crate) fn last_number(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let end = b.iter().rposition(u8::is_ascii_digit)? + 1;
    let mut start = end;
    // Digits, and separators that sit between digits.
    loop {
        while start > 0 && b[start - 1].is_ascii_digit() {
            start -= 1;
        }
        if start >= 2 && b[start - 2].is_ascii_digit() {
            match b[start - 1] {
                b'.' if !b[start..end].contains(&b'.') && !b[start..end].contains(&b',') => {
                    start -= 1;
                    continue;
                }
                b',' if b[start..].iter().take_while(|c| c.is_ascii_digit()).count() == 3 => {
                    start -= 1;
                    continue;
                }
                _ => {}
            }
        }
        break;
    }
    // A leading decimal point: `.5`.
    if start >= 1
        && b[start - 1] == b'.'
        && !b[start..end].contains(&b'.')
        && (start < 2 || !b[start - 2].is_ascii_alphanumeric())
    {
        start -= 1;
    }
    let digits = &text[start..end];
    // `007`, `0800`, a run of zeros: a code, a padded time or a degenerate output, not a value.
    let int_part = digits.split('.').next().unwrap_or(digits);
    if int_part.len() >= 2 && int_part.starts_with('0') {
        return None;
    }
    let sign_ok = |k: usize| k == 0 || !(b[k - 1].is_ascii_alphanumeric() || matches!(b[k - 1], b')' | b'}' | b']'));
    let negative = if start >= 1 && b[start - 1] == b'-' {
        sign_ok(start - 1)
    } else if start >= 3 && &b[start - 3..start] == "−".as_bytes() {
        sign_ok(start - 3)
    } else {
        false
    };
    let mut out = String::with_capacity(digits.len() + 1);
    if negative {
        out.push('-');
    }
    if digits.starts_with('.') {
        out.push('0');
    }
    out.push_str(digits);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        let cases = [
            ("so 12 apples and 7.", Some("7")),
            ("total $1,234.", Some("1,234")),
            ("it is -3.5 degrees", Some("-3.5")),
            ("range 3-4", Some("4")),
            ("value −2", Some("-2")),
            ("x_2", Some("2")),
            ("1,23", Some("23")),
            ("list 1,2,3", Some("3")),
            ("a .5 chance", Some("0.5")),
            ("pi is 3.14.15", Some("14.15")),
            ("none here", None),
            ("0000000000000000", None),
            ("agent 007", None),
            ("at 0800 hours", None),
            ("so 0.5 of it", Some("0.5")),
            ("it is 0", Some("0")),
            ("it is -0.25", Some("-0.25")),
            ("", None),
        ];
        for (s, want) in cases {
            assert_eq!(last_number(s).as_deref(), want, "{s}");
        }
    }
}
