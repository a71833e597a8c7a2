//! Numerals of any script, read through Unicode's numeric properties, and number words (of the
//! languages of `crate::number_words`).
//!
//! A value written in another script or form (`٣`, `३`, `３`, `Ⅻ`, `½`, `eleven`) is a value like
//! `3`: offered beside an answer it is a second candidate, and as the answer it is compared by its
//! value. Which characters are numerals is Unicode's `Numeric` general categories (`Nd`, `Nl`,
//! `No`: [`char::is_numeric`]); the value of a decimal digit comes from its `Decimal_Number`
//! category (`unicode-properties`) and the standard's stability policy that every script's
//! decimal digits are assigned in contiguous runs of ten, ascending from zero. No list of
//! scripts is kept here.

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// The longest run of decimal digits of one block walked back over to find its zero (the
/// mathematical digits are five runs of ten in a row).
const MAX_DIGIT_RUN: u32 = 60;
/// Most words of a number written in words (`one hundred and twenty-three`).
const MAX_NUMBER_WORDS: usize = 8;

/// Whether `c` is a numeral other than an ASCII digit: a digit of another script, a letter
/// number (`Ⅻ`) or another number character (`½`, `²`, `①`).
pub(crate) fn is_other_numeral(c: char) -> bool {
    !c.is_ascii_digit() && c.is_numeric()
}

fn is_decimal_digit(c: char) -> bool {
    c.general_category() == GeneralCategory::DecimalNumber
}

/// The value of a decimal digit of any script (`٣` -> 3, `３` -> 3); `None` for anything else.
pub(crate) fn digit_value(c: char) -> Option<u32> {
    if c.is_ascii_digit() {
        return c.to_digit(10);
    }
    if !is_decimal_digit(c) {
        return None;
    }
    let mut offset = 0;
    let mut cp = c as u32;
    while offset < MAX_DIGIT_RUN {
        match cp.checked_sub(1).and_then(char::from_u32) {
            Some(prev) if is_decimal_digit(prev) => {
                offset += 1;
                cp -= 1;
            }
            _ => break,
        }
    }
    Some(offset % 10)
}

/// `s` as an ASCII number when it is a number written another way: digits of another script
/// (`٤٢`, `４２`, `-３.５`) or number words (`five`, `Twenty-one`, `one hundred and five`,
/// `cinco`, `fünf`, `二十七`). `None` when `s` is anything else, or already plain ASCII.
pub(crate) fn ascii_number(s: &str) -> Option<String> {
    let t = s.trim().trim_end_matches('.');
    if t.is_empty() || (t.is_ascii() && !t.bytes().any(|c| c.is_ascii_alphabetic())) {
        // Empty, or ASCII without a letter: already digits if a number at all.
        return None;
    }
    if t.chars().any(|c| !c.is_ascii() && is_decimal_digit(c)) {
        let mut out = String::with_capacity(t.len());
        for c in t.chars() {
            match digit_value(c) {
                Some(d) => out.push(char::from_digit(d, 10)?),
                None if matches!(c, '.' | ',' | '-' | '−' | '٫' | '٬' | '．' | '，') => out.push(match c {
                    '−' => '-',
                    '٫' | '．' => '.',
                    '٬' | '，' => ',',
                    _ => c,
                }),
                None => return None,
            }
        }
        return Some(out);
    }
    words_value(t).map(|v| v.to_string()).or_else(|| leading_words_value(t))
}

/// `five apples` -> `5 apples`: a number in words that opens a text, in digits (the scorer then
/// reads the rest with its allow-lists).
fn leading_words_value(t: &str) -> Option<String> {
    let mut end = 0;
    let mut value = None;
    for (k, _) in t.match_indices(' ').chain(std::iter::once((t.len(), ""))).take(MAX_NUMBER_WORDS) {
        match words_value(&t[..k]) {
            Some(v) => {
                value = Some(v);
                end = k;
            }
            None if value.is_some() => break,
            None => {}
        }
    }
    if end == t.len() {
        return None;
    }
    value.map(|v| format!("{v}{}", &t[end..]))
}

/// The value of a number written in words of one language the lexicon reads (`seven`,
/// `twenty-one`, `three hundred and five`, `veintinueve`, `siebenundzwanzig`, `二十七`): see
/// `crate::number_words`.
fn words_value(t: &str) -> Option<u64> {
    crate::number_words::value(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_of_every_script_read_by_their_value() {
        assert_eq!(ascii_number("٤٢").as_deref(), Some("42"));
        assert_eq!(ascii_number("४२").as_deref(), Some("42"));
        assert_eq!(ascii_number("４２").as_deref(), Some("42"));
        assert_eq!(ascii_number("๓.๕").as_deref(), Some("3.5"));
        assert_eq!(ascii_number("𝟗").as_deref(), Some("9"));
        assert_eq!(ascii_number("42"), None);
        assert_eq!(ascii_number("x٤"), None);
        assert!(is_other_numeral('Ⅻ') && is_other_numeral('½') && is_other_numeral('٣'));
        assert!(!is_other_numeral('7') && !is_other_numeral('x'));
    }

    #[test]
    fn number_words() {
        assert_eq!(ascii_number("five").as_deref(), Some("5"));
        assert_eq!(ascii_number("Twenty-one.").as_deref(), Some("21"));
        assert_eq!(ascii_number("three hundred and five").as_deref(), Some("305"));
        assert_eq!(ascii_number("two thousand twelve").as_deref(), Some("2012"));
        assert_eq!(ascii_number("five apples").as_deref(), Some("5 apples"));
        assert_eq!(ascii_number("twenty one red apples").as_deref(), Some("21 red apples"));
        assert_eq!(ascii_number("apples five"), None);
        assert_eq!(ascii_number("and"), None);
    }
}
