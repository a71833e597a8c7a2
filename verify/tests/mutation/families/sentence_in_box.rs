//! A sentence in a `\text{}` box (issue 30, class 13): the box holds a sentence whose only value
//! is the answer; against it, a boxed sentence that names a second value.

use crate::mutation::{fill, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "sentence_in_box",
    split: Split::HeldOut,
    why: "issue 30 class 13, named with one example (`\\boxed{\\text{Adam loses \\$16.}}`): held out \
          to see whether a fix for it reads other sentences",
    operators: &[
        Operator { name: "boxed_sentence", expect: Expect::Right, apply: boxed_sentence },
        Operator { name: "boxed_sentence_math", expect: Expect::Right, apply: boxed_sentence_math },
        Operator { name: "boxed_sentence_two_values", expect: Expect::Wrong, apply: boxed_sentence_two_values },
    ],
};

/// An integer answer inside a `\text{}` sentence.
fn boxed_sentence(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = base.integer?;
    let t = rng.pick(&[
        "\\text{The total is {x}.}",
        "\\text{The answer is {x}.}",
        "\\text{So we get {x}.}",
        "\\text{The result is {x}.}",
    ]);
    base.with_box_content(&fill(t, &[("x", &n.to_string())]))
}

/// Any answer in math mode between `\text{}` words.
fn boxed_sentence_math(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&["\\text{The value is } {x}", "\\text{We get } {x} \\text{.}", "\\text{Result: } {x}"]);
    base.with_box_content(&fill(t, &[("x", &base.answer)]))
}

fn boxed_sentence_two_values(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "\\text{The value is } {x} \\text{ or } {y}",
        "\\text{Either } {x} \\text{ or } {y} \\text{, depending on the reading.}",
        "\\text{We get } {x} \\text{ unless the order matters, then } {y}",
    ]);
    base.with_box_content(&fill(t, &[("x", &base.answer), ("y", &base.alternative)]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::last_box_of_27;

    #[test]
    fn boxed_sentence_writes_the_answer_in_a_text_sentence() {
        let b = last_box_of_27(boxed_sentence);
        assert!(b.starts_with("\\boxed{\\text{") && b.contains(" 27") && !b.contains("28"), "{b}");
    }

    #[test]
    fn boxed_sentence_math_keeps_the_answer_in_math() {
        let b = last_box_of_27(boxed_sentence_math);
        assert!(b.starts_with("\\boxed{\\text{") && b.contains("} 27") && !b.contains("28"), "{b}");
    }

    #[test]
    fn boxed_sentence_two_values_names_both() {
        let b = last_box_of_27(boxed_sentence_two_values);
        assert!(b.contains("27") && b.contains("28"), "{b}");
    }
}
