//! The value in another form (issue 30, class 11): an integer answer as a number word or in
//! fullwidth digits in the final sentence, or with a thin-space thousands separator; against
//! them, the number word of another value.

use crate::mutation::{fill, numerals, phrase, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "value_form",
    split: Split::Dev,
    why: "issue 30 class 11, named with examples (`The answer is five.`, fullwidth digits): developed against",
    operators: &[
        Operator { name: "number_word", expect: Expect::Right, apply: number_word },
        Operator { name: "fullwidth_digits", expect: Expect::Right, apply: fullwidth_digits },
        Operator { name: "thin_space_thousands", expect: Expect::Right, apply: thin_space_thousands },
        Operator { name: "wrong_number_word", expect: Expect::Wrong, apply: wrong_number_word },
    ],
};

const SENTENCES: &[&str] =
    &["The answer is {w}.", "So the answer is {w}.", "Final answer: {w}", "The total comes to {w}."];

fn number_word(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let w = numerals::words(base.integer?)?;
    base.with_statement(&fill(phrase(rng, SENTENCES), &[("w", &w)]))
}

fn fullwidth_digits(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let w = numerals::fullwidth(base.integer?);
    let t = rng.pick(&["The answer is {w}.", "Final answer: {w}", "答案是{w}。", "So the result is {w}."]);
    base.with_statement(&fill(t, &[("w", &w)]))
}

/// `12\,345` in the box for an answer of at least 1000.
fn thin_space_thousands(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = base.integer.filter(|n| *n >= 1000)?;
    let sep = rng.pick(&["\\,", "\\ ", "{,}"]);
    let digits = n.to_string();
    let head = digits.len() % 3;
    let mut groups: Vec<&str> = if head > 0 { vec![&digits[..head]] } else { vec![] };
    groups.extend((head..digits.len()).step_by(3).map(|i| &digits[i..i + 3]));
    let written = groups.join(sep);
    if base.boxed {
        base.with_box_content(&written)
    } else {
        base.replace_answer(&format!("${written}$"))
    }
}

/// The number word of the alternative value, as the final sentence.
fn wrong_number_word(base: &Base, rng: &mut Rng) -> Option<Variant> {
    base.integer?;
    let w = numerals::words(base.alternative.parse().ok()?)?;
    base.with_statement(&fill(phrase(rng, SENTENCES), &[("w", &w)]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, BOXED_27};

    #[test]
    fn number_word_writes_the_answer_in_words() {
        let (_, v) = example(number_word, "27", BOXED_27);
        assert!(v.contains("twenty-seven") && !v.contains("\\boxed"), "{v}");
    }

    #[test]
    fn fullwidth_digits_write_the_answer_in_fullwidth() {
        let (_, v) = example(fullwidth_digits, "27", BOXED_27);
        assert!(v.contains("２７") && !v.contains("\\boxed"), "{v}");
    }

    #[test]
    fn thin_space_thousands_groups_the_digits() {
        let (_, v) = example(
            thin_space_thousands,
            "12345",
            "Adding the parts gives 12345.\n\nSo the total is $\\boxed{12345}$.",
        );
        assert!(["12\\,345", "12\\ 345", "12{,}345"].iter().any(|w| v.contains(&format!("\\boxed{{{w}}}"))), "{v}");
    }

    #[test]
    fn wrong_number_word_writes_another_value() {
        let (_, v) = example(wrong_number_word, "27", BOXED_27);
        assert!(v.contains("twenty-eight") && !v.contains("\\boxed"), "{v}");
    }
}
