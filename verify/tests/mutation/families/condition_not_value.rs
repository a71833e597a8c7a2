//! A condition instead of a value (issue 30, class 6): `|k| = x`, `k^2 = x^2`, `n \geq x`, a
//! statement about the digits of the answer; against them, the value named with `=`.

use crate::mutation::{Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "condition_not_value",
    split: Split::HeldOut,
    why: "issue 30 class 6, named with two examples (`|k| = 5`, a digit sum): held out to see \
          whether a fix for them reads other relations",
    operators: &[
        Operator { name: "absolute_value", expect: Expect::Wrong, apply: absolute_value },
        Operator { name: "square_equation", expect: Expect::Wrong, apply: square_equation },
        Operator { name: "inequality", expect: Expect::Wrong, apply: inequality },
        Operator { name: "digit_sum", expect: Expect::Wrong, apply: digit_sum },
        Operator { name: "named_value", expect: Expect::Right, apply: named_value },
    ],
};

const NAMES: &[&str] = &["k", "n", "N", "m"];

/// `|k| = x` for a positive integer answer (k could be -x).
fn absolute_value(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = base.integer.filter(|n| *n > 0)?;
    base.with_box_content(&format!("|{}| = {n}", rng.pick(NAMES)))
}

/// `k^2 = x^2` written out (`k^2 = 729`) for a positive integer answer.
fn square_equation(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = base.integer.filter(|n| *n > 1 && *n < 1_000_000)?;
    base.with_box_content(&format!("{}^2 = {}", rng.pick(NAMES), n * n))
}

/// A bound on an unnamed quantity: `n \geq x`.
fn inequality(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = base.integer?;
    let relation = rng.pick(&["\\geq", "\\leq", ">", "<"]);
    base.with_box_content(&format!("{} {relation} {n}", rng.pick(NAMES)))
}

/// The final statement gives only the digit sum of the answer, for answers of two or more digits
/// whose digit sum differs from them.
fn digit_sum(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = base.integer.filter(|n| *n >= 10)?;
    let sum: u32 = n.to_string().chars().filter_map(|c| c.to_digit(10)).sum();
    let t = rng.pick(&[
        "The sum of the digits of the answer is $\\boxed{{s}}$.",
        "The answer's digits add up to $\\boxed{{s}}$.",
        "The digit sum of the result is \\boxed{{s}}.",
    ]);
    base.with_statement(&t.replace("{s}", &sum.to_string()))
}

/// The value named with `=`: `k = x`.
fn named_value(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = base.integer?;
    base.with_box_content(&format!("{} = {n}", rng.pick(NAMES)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, last_box_of_27, BOXED_27};

    #[test]
    fn absolute_value_boxes_a_condition() {
        let b = last_box_of_27(absolute_value);
        assert!(b.contains('|') && b.contains("| = 27}"), "{b}");
    }

    #[test]
    fn square_equation_boxes_the_square() {
        assert!(last_box_of_27(square_equation).contains("^2 = 729}"));
    }

    #[test]
    fn inequality_boxes_a_bound() {
        let b = last_box_of_27(inequality);
        assert!(b.ends_with(" 27}$.") && ["\\geq", "\\leq", ">", "<"].iter().any(|r| b.contains(r)), "{b}");
    }

    #[test]
    fn digit_sum_boxes_the_digit_sum() {
        let (base, v) = example(digit_sum, "27", BOXED_27);
        assert!(v[base.head().len()..].contains("\\boxed{9}") && v.contains("digit"), "{v}");
    }

    #[test]
    fn named_value_names_the_answer() {
        assert!(last_box_of_27(named_value).contains(" = 27}"));
    }
}
