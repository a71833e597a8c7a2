//! Alternatives in another script or form (issue 30, class 3): after an integer answer, a second
//! value offered as a number word, in the digits of another script or in Roman numerals; against
//! them, the same value restated in words or another script.

use crate::mutation::{fill, numerals, phrase, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "other_script_alternative",
    split: Split::HeldOut,
    why: "issue 30 class 3, named with one example (`(maybe eleven)`): held out to see whether a \
          fix for the example reads numerals in general",
    operators: &[
        Operator { name: "number_word_alternative", expect: Expect::Wrong, apply: number_word_alternative },
        Operator { name: "script_digits_alternative", expect: Expect::Wrong, apply: script_digits_alternative },
        Operator { name: "roman_alternative", expect: Expect::Wrong, apply: roman_alternative },
        Operator { name: "number_word_restated", expect: Expect::Right, apply: number_word_restated },
        Operator { name: "script_digits_restated", expect: Expect::Right, apply: script_digits_restated },
    ],
};

const HEDGES: &[&str] = &["(maybe {w})", "(or possibly {w})", "— perhaps {w}", ", or {w}"];
const RESTATEMENTS: &[&str] = &["(that is, {w})", "({w})", "— in words, {w}"];

/// The alternative value of an integer answer, as an integer.
fn other(base: &Base) -> Option<i64> {
    base.integer?;
    base.alternative.parse().ok()
}

/// `written` placed after the final answer (after its math block), within its sentence.
fn after_answer(base: &Base, written: &str) -> Option<Variant> {
    base.insert_after_answer(&format!(" {written}"))
}

fn number_word_alternative(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let w = numerals::words(other(base)?)?;
    after_answer(base, &fill(phrase(rng, HEDGES), &[("w", &w)]))
}

fn script_digits_alternative(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let (_, zero) = rng.pick(numerals::DIGIT_SCRIPTS);
    let w = numerals::digits_in(other(base)?, *zero)?;
    after_answer(base, &fill(phrase(rng, HEDGES), &[("w", &w)]))
}

fn roman_alternative(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let y = other(base)?;
    let w = if rng.below(2) == 0 { numerals::roman(y)? } else { numerals::roman_signs(y)? };
    after_answer(base, &fill(phrase(rng, HEDGES), &[("w", &w)]))
}

fn number_word_restated(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let w = numerals::words(base.integer?)?;
    after_answer(base, &fill(phrase(rng, RESTATEMENTS), &[("w", &w)]))
}

fn script_digits_restated(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let (_, zero) = rng.pick(numerals::DIGIT_SCRIPTS);
    let w = numerals::digits_in(base.integer?, *zero)?;
    after_answer(base, &fill(phrase(rng, RESTATEMENTS), &[("w", &w)]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, BOXED_27};

    fn added(op: fn(&Base, &mut Rng) -> Option<Variant>) -> String {
        let (_, v) = example(op, "27", BOXED_27);
        let at = v.find("\\boxed{27}").expect("the box stays") + "\\boxed{27}".len();
        v[at..].to_string()
    }

    #[test]
    fn number_word_alternative_offers_the_next_number_in_words() {
        assert!(added(number_word_alternative).contains("twenty-eight"));
    }

    #[test]
    fn script_digits_alternative_offers_the_next_number_in_another_script() {
        let a = added(script_digits_alternative);
        let twenty_eight: Vec<String> =
            numerals::DIGIT_SCRIPTS.iter().filter_map(|(_, z)| numerals::digits_in(28, *z)).collect();
        assert!(twenty_eight.iter().any(|w| a.contains(w.as_str())), "{a}");
    }

    #[test]
    fn roman_alternative_offers_the_next_number_in_roman_numerals() {
        let a = added(roman_alternative);
        assert!(a.contains("XXVIII") || a.contains("ⅩⅩⅤⅠⅠⅠ"), "{a}");
    }

    #[test]
    fn number_word_restated_repeats_the_answer_in_words() {
        let a = added(number_word_restated);
        assert!(a.contains("twenty-seven") && !a.contains("eight"), "{a}");
    }

    #[test]
    fn script_digits_restated_repeats_the_answer_in_another_script() {
        let a = added(script_digits_restated);
        let twenty_seven: Vec<String> =
            numerals::DIGIT_SCRIPTS.iter().filter_map(|(_, z)| numerals::digits_in(27, *z)).collect();
        assert!(twenty_seven.iter().any(|w| a.contains(w.as_str())), "{a}");
    }
}
