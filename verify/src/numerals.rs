//! Numerals of any script, read through Unicode's numeric properties, and number words (of the
//! languages of `crate::number_words`).
//!
//! A value written in another script or form (`٣`, `३`, `３`, `Ⅻ`, `½`, `eleven`) is a value like
//! `3`: offered beside an answer it is a second candidate, and as the answer it is compared by its
//! value. Which characters are numerals is Unicode's `Numeric` general categories (`Nd`, `Nl`,
//! `No`: [`char::is_numeric`]); the value of a decimal digit comes from its `Decimal_Number`
//! category (`unicode-properties`) and the standard's stability policy that every script's
//! decimal digits are assigned in contiguous runs of ten, ascending from zero. No list of
//! scripts is kept here. Roman numerals are a numeral system of their own ([`roman_value`]):
//! Unicode's Roman numeral signs (`Ⅻ`, `ⅩⅣ`) are read as the letters they stand for.

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

/// Whether `c` is a symbol of Unicode's `So` category (`🙂`, `✓`, `©`): no letter, digit or sign
/// of math.
pub(crate) fn is_symbol(c: char) -> bool {
    c.general_category() == GeneralCategory::OtherSymbol
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
    if !t.is_ascii() {
        // `Ⅻ`, `ⅩⅩⅤⅠⅠⅠ`: Roman numeral signs (capital letters written with ASCII are no numeral
        // here: `CD` may name a segment, `C` a choice).
        if let Some(v) = roman_value(t) {
            return Some(v.to_string());
        }
    }
    words_value(t).map(|v| v.to_string()).or_else(|| leading_words_value(t))
}

/// Longest Roman numeral read (characters): `MMMDCCCLXXXVIII`.
const MAX_ROMAN_CHARS: usize = 15;

/// The letters a Roman numeral sign of Unicode's Number Forms stands for (`Ⅻ` -> `XII`, `ⅽ` ->
/// `C`): the block lays out the capital signs from one to twelve, then fifty, a hundred, five
/// hundred and a thousand, and the small signs in the same order.
fn roman_sign_letters(c: char) -> Option<&'static str> {
    const SIGNS: [&str; 16] =
        ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII", "L", "C", "D", "M"];
    let offset = (c as u32).checked_sub(0x2160)?;
    SIGNS.get((offset % 16) as usize).filter(|_| offset < 32).copied()
}

/// The value of a Roman numeral in its standard form: ASCII capitals (`XIV`, `MMXXIV`) or Roman
/// numeral signs (`Ⅻ`, `ⅩⅣ`, `ⅩⅩⅤⅠⅠⅠ`), from 1 to 3999. `None` for anything else, and for a
/// run of letters that is no standard numeral (`IIII`, `VX`, `MIXED`).
pub(crate) fn roman_value(s: &str) -> Option<u64> {
    let ascii = s.is_ascii();
    let mut letters = [0u8; MAX_ROMAN_CHARS];
    let mut n = 0;
    for c in s.chars() {
        let one = [c as u8];
        // All ASCII capitals, or all signs.
        let part: &[u8] = if ascii { &one } else { roman_sign_letters(c)?.as_bytes() };
        for &l in part {
            *letters.get_mut(n)? = l;
            n += 1;
        }
    }
    let letters = &letters[..n];
    let digit = |l: u8| ROMAN.iter().find(|(_, r)| r.as_bytes() == [l]).map(|(v, _)| *v as i64);
    let mut total = 0i64;
    for (k, &l) in letters.iter().enumerate() {
        let v = digit(l)?;
        let next = letters.get(k + 1).and_then(|&m| digit(m)).unwrap_or(0);
        total += if next > v { -v } else { v };
    }
    // Read back: only the standard form of its value counts (`XIV`, not `XIIII` or `IVX`).
    let (mut rest, mut at) = (u64::try_from(total).ok().filter(|t| (1..=3999).contains(t))?, 0);
    let value = rest;
    for (v, r) in ROMAN {
        while rest >= v {
            if !letters[at..].starts_with(r.as_bytes()) {
                return None;
            }
            at += r.len();
            rest -= v;
        }
    }
    (at == letters.len()).then_some(value)
}

/// The values of Roman numerals, largest first, with the subtractive pairs.
const ROMAN: [(u64, &str); 13] = [
    (1000, "M"),
    (900, "CM"),
    (500, "D"),
    (400, "CD"),
    (100, "C"),
    (90, "XC"),
    (50, "L"),
    (40, "XL"),
    (10, "X"),
    (9, "IX"),
    (5, "V"),
    (4, "IV"),
    (1, "I"),
];

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
    fn roman_numerals_in_their_standard_form() {
        assert_eq!(roman_value("XIV"), Some(14));
        assert_eq!(roman_value("MMXXIV"), Some(2024));
        assert_eq!(roman_value("CDXLIV"), Some(444));
        assert_eq!(roman_value("Ⅻ"), Some(12));
        assert_eq!(roman_value("ⅩⅩⅤⅠⅠⅠ"), Some(28));
        assert_eq!(roman_value("ⅹⅳ"), Some(14));
        for no in ["IIII", "VX", "IC", "MIXED", "xiv", "", "XⅡ", "MMMM", "IL"] {
            assert_eq!(roman_value(no), None, "{no}");
        }
        // Signs are numerals by value; ASCII capitals are not read as an answer (`CD`, `C`).
        assert_eq!(ascii_number("Ⅻ").as_deref(), Some("12"));
        assert_eq!(ascii_number("CD"), None);
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
