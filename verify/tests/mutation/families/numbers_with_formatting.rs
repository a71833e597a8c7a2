//! An integer answer written with the number formatting of other conventions: a currency symbol
//! or code (`€27`, `27 €`, `USD 27`, `£27`), an explicit sign (`+27`, and `−27` with Unicode's
//! minus sign for a negative answer), scientific notation (`1.2345 \times 10^{4}`), thousands
//! grouped by a space, an apostrophe or a no-break space (`12 345`, `12'345`), which must stay
//! right; and the same formatting around a different value, which must be wrong: another amount,
//! Unicode's minus sign in front of a positive answer, a power of ten off by one, and `12.345`
//! for 12345 (a dot between groups of three reads as a decimal point in most conventions: at best
//! ambiguous).

use crate::mutation::{fill, phrase, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "numbers_with_formatting",
    split: Split::HeldOut,
    why: "named by no class of issue 30 nor written by the 35 families before it (value_form writes LaTeX thin \
          spaces, unit_scale dollars and cents; currencies other than the dollar, signs, scientific notation and \
          the other thousands separators are new): added on 2026-11-27 (third set) and scored first-seen on \
          a3fc502, before any fix for it: held out",
    operators: &[
        Operator { name: "currency_symbol", expect: Expect::Right, apply: currency_symbol },
        Operator { name: "explicit_sign", expect: Expect::Right, apply: explicit_sign },
        Operator { name: "scientific_notation", expect: Expect::Right, apply: scientific_notation },
        Operator { name: "grouped_thousands", expect: Expect::Right, apply: grouped_thousands },
        Operator { name: "currency_other_amount", expect: Expect::Wrong, apply: currency_other_amount },
        Operator { name: "unicode_minus_flips_sign", expect: Expect::Wrong, apply: unicode_minus_flips_sign },
        Operator { name: "scientific_wrong_exponent", expect: Expect::Wrong, apply: scientific_wrong_exponent },
        Operator { name: "dot_grouped_thousands", expect: Expect::Wrong, apply: dot_grouped_thousands },
    ],
};

/// Unicode's minus sign (U+2212), as typeset text and many models write it.
const MINUS: char = '\u{2212}';

/// The final statement with `written` as the answer: in the box for a boxed base, else in a
/// sentence.
fn stated(base: &Base, written: &str, rng: &mut Rng) -> Option<Variant> {
    if base.boxed && rng.below(2) == 0 {
        return base.with_box_content(written);
    }
    let t = rng.pick(&[
        "The answer is {w}.",
        "So the final answer is {w}.",
        "**Answer:** {w}",
        "Therefore, the result is {w}.",
    ]);
    base.with_statement(&fill(t, &[("w", written)]))
}

/// An amount with a currency, as text; `{n}` is the amount.
const CURRENCIES: &[&str] = &["€{n}", "{n} €", "USD {n}", "{n} EUR", "£{n}", "{n} USD", "¥{n}"];

fn with_currency(n: i64, rng: &mut Rng) -> Option<String> {
    (n >= 0).then(|| fill(phrase(rng, CURRENCIES), &[("n", &n.to_string())]))
}

/// The answer with a currency symbol or code.
fn currency_symbol(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let w = with_currency(base.integer?, rng)?;
    stated(base, &w, rng)
}

/// Another amount with the same kind of currency symbol or code.
fn currency_other_amount(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = base.integer?;
    let w = with_currency(n + 1 + rng.below(9) as i64, rng)?;
    stated(base, &w, rng)
}

/// The answer with an explicit sign: `+n` for a positive answer, `−n` with Unicode's minus for a
/// negative one.
fn explicit_sign(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = base.integer.filter(|n| *n != 0)?;
    let w = if n > 0 { format!("+{n}") } else { format!("{MINUS}{}", -n) };
    stated(base, &w, rng)
}

/// Unicode's minus sign in front of a positive answer's digits (or `+` in front of a negative
/// answer's): the value of the other sign.
fn unicode_minus_flips_sign(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = base.integer.filter(|n| *n != 0)?;
    let w = if n > 0 { format!("{MINUS}{n}") } else { format!("+{}", -n) };
    stated(base, &w, rng)
}

/// `n` as `m \times 10^{k}` (or `\cdot`), with the mantissa's trailing zeros dropped, for
/// `|n| >= 1000`; the exponent moved by `shift`.
fn scientific(n: i64, shift: i64, rng: &mut Rng) -> Option<String> {
    if n.abs() < 1000 {
        return None;
    }
    let digits = n.abs().to_string();
    let k = digits.len() as i64 - 1 + shift;
    let rest = digits[1..].trim_end_matches('0');
    let mantissa = if rest.is_empty() { digits[..1].to_string() } else { format!("{}.{rest}", &digits[..1]) };
    let sign = if n < 0 { "-" } else { "" };
    let op = rng.pick(&["\\times", "\\cdot", "\\times"]);
    Some(format!("{sign}{mantissa} {op} 10^{{{k}}}"))
}

fn in_math(base: &Base, w: &str, rng: &mut Rng) -> Option<Variant> {
    if base.boxed && rng.below(2) == 0 {
        return base.with_box_content(w);
    }
    stated(base, &format!("${w}$"), rng)
}

/// The answer in scientific notation.
fn scientific_notation(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let w = scientific(base.integer?, 0, rng)?;
    in_math(base, &w, rng)
}

/// The answer's mantissa with a power of ten off by one.
fn scientific_wrong_exponent(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let shift = if rng.below(2) == 0 { 1 } else { -1 };
    let w = scientific(base.integer?, shift, rng)?;
    in_math(base, &w, rng)
}

/// The digits of a non-negative `n >= 1000` in groups of three joined by `sep`.
fn grouped(n: i64, sep: &str) -> Option<String> {
    if n < 1000 {
        return None;
    }
    let digits = n.to_string();
    let head = digits.len() % 3;
    let mut groups: Vec<&str> = if head > 0 { vec![&digits[..head]] } else { vec![] };
    groups.extend((head..digits.len()).step_by(3).map(|i| &digits[i..i + 3]));
    Some(groups.join(sep))
}

/// The answer's thousands grouped by a space, an apostrophe (in prose only), a no-break space or
/// a narrow no-break space.
fn grouped_thousands(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let sep = rng.pick(&[" ", "'", "\u{a0}", "\u{202f}"]);
    let w = grouped(base.integer?, sep)?;
    if *sep == "'" {
        // In math an apostrophe is a prime: the Swiss grouping is written as text.
        return base.with_statement(&format!("The answer is {w}."));
    }
    stated(base, &w, rng)
}

/// The answer's thousands grouped by dots (`12.345`): a decimal in most conventions.
fn dot_grouped_thousands(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let w = grouped(base.integer?, ".")?;
    stated(base, &w, rng)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{statement_of, BOXED_27};

    const BOXED_12345: &str = "We add 12000 and 345 to get the total.\n\nTherefore, the total is $\\boxed{12345}$.";

    #[test]
    fn currency_symbol_puts_a_currency_around_the_answer() {
        let s = statement_of(currency_symbol, "27", BOXED_27);
        assert!(["€", "£", "¥", "USD", "EUR"].iter().any(|c| s.contains(c)) && s.contains("27"), "{s}");
    }

    #[test]
    fn currency_other_amount_changes_the_amount() {
        let s = statement_of(currency_other_amount, "27", BOXED_27);
        assert!(["€", "£", "¥", "USD", "EUR"].iter().any(|c| s.contains(c)) && !s.contains("27"), "{s}");
    }

    #[test]
    fn explicit_sign_signs_the_answer_by_its_own_sign() {
        assert!(statement_of(explicit_sign, "27", BOXED_27).contains("+27"));
        let neg = "We subtract 30 from 3.\n\nTherefore, the change is $\\boxed{-27}$.";
        assert!(statement_of(explicit_sign, "-27", neg).contains("\u{2212}27"));
    }

    #[test]
    fn unicode_minus_flips_the_sign() {
        let s = statement_of(unicode_minus_flips_sign, "27", BOXED_27);
        assert!(s.contains("\u{2212}27") && !s.contains("+27"), "{s}");
    }

    #[test]
    fn scientific_notation_writes_mantissa_and_exponent() {
        let s = statement_of(scientific_notation, "12345", BOXED_12345);
        assert!(s.contains("1.2345 ") && s.contains("10^{4}"), "{s}");
        let mut rng = Rng::new(1);
        assert!(scientific(27000, 0, &mut rng).is_some_and(|w| w.starts_with("2.7 ") && w.ends_with("10^{4}")));
        assert_eq!(scientific(27, 0, &mut rng), None);
    }

    #[test]
    fn scientific_wrong_exponent_moves_the_power_of_ten() {
        let s = statement_of(scientific_wrong_exponent, "12345", BOXED_12345);
        assert!(s.contains("1.2345 ") && (s.contains("10^{5}") || s.contains("10^{3}")), "{s}");
    }

    #[test]
    fn grouped_thousands_splits_the_digits() {
        let s = statement_of(grouped_thousands, "12345", BOXED_12345);
        assert!(!s.contains("12345") && s.contains("345") && s.contains("12"), "{s}");
        assert_eq!(grouped(1234567, " ").as_deref(), Some("1 234 567"));
    }

    #[test]
    fn dot_grouped_thousands_writes_a_decimal_looking_number() {
        let s = statement_of(dot_grouped_thousands, "12345", BOXED_12345);
        assert!(s.contains("12.345"), "{s}");
    }
}
