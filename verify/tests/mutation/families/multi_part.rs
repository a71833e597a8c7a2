//! Sub-questions the response invented: for a gold with one answer, a final statement that answers
//! parts (a) and (b) with two different values, boxed or not, the right value first or last;
//! against them, parts that all give the same value and an answer boxed again under a final
//! heading (a restatement).

use crate::mutation::{fill, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "multi_part",
    split: Split::HeldOut,
    why: "named by no class of issue 30 or of the fixes under way: added on 2026-11-27 and scored \
          first-seen on 07ad560, before any fix for it: held out",
    operators: &[
        Operator { name: "invented_parts_boxed", expect: Expect::Wrong, apply: invented_parts_boxed },
        Operator { name: "invented_parts_plain", expect: Expect::Wrong, apply: invented_parts_plain },
        Operator { name: "right_part_last", expect: Expect::Wrong, apply: right_part_last },
        Operator { name: "parts_agree", expect: Expect::Right, apply: parts_agree },
        Operator { name: "box_restated_under_heading", expect: Expect::Right, apply: box_restated_under_heading },
    ],
};

/// Two parts, each boxed, the first `{p}` and the second `{q}`.
const BOXED_PARTS: &[&str] = &[
    "(a) $\\boxed{{p}}$ (b) $\\boxed{{q}}$",
    "**Part 1:** $\\boxed{{p}}$\n\n**Part 2:** $\\boxed{{q}}$",
    "i) $\\boxed{{p}}$\nii) $\\boxed{{q}}$",
    "For part (a), the answer is $\\boxed{{p}}$; for part (b), it is $\\boxed{{q}}$.",
    "**(a)** \\boxed{{p}} \u{2003} **(b)** \\boxed{{q}}",
];

/// Parts (a) and (b) boxed with the answer first and another value second.
fn invented_parts_boxed(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(BOXED_PARTS);
    base.with_statement(&fill(t, &[("p", &base.answer), ("q", &base.alternative)]))
}

/// Parts answered without boxes, the answer first and another value second.
fn invented_parts_plain(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "(a) {x}\n(b) {y}",
        "Part (a): {x}. Part (b): {y}.",
        "a) The answer is {x}.\nb) The answer is {y}.",
        "**Answers:** (i) {x}; (ii) {y}.",
    ]);
    base.with_statement(&fill(t, &[("x", &base.math()), ("y", &base.alt_math())]))
}

/// Parts (a) and (b) boxed with another value first and the answer last.
fn right_part_last(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(BOXED_PARTS);
    base.with_statement(&fill(t, &[("p", &base.alternative), ("q", &base.answer)]))
}

/// Parts (a) and (b) that both give the answer.
fn parts_agree(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "(a) $\\boxed{{x}}$ (b) $\\boxed{{x}}$",
        "**Part 1:** $\\boxed{{x}}$\n\n**Part 2:** the same value, $\\boxed{{x}}$.",
        "Both readings of the question give the same result: (i) $\\boxed{{x}}$, (ii) $\\boxed{{x}}$.",
    ]);
    base.with_statement(&fill(t, &[("x", &base.answer)]))
}

/// The whole response, then the answer boxed again under a final heading.
fn box_restated_under_heading(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "**Final Answer**\n\n$\\boxed{{x}}$",
        "### Final answer\n\\[\n\\boxed{{x}}\n\\]",
        "---\n\n**Answer:** $\\boxed{{x}}$",
    ]);
    base.append(&fill(t, &[("x", &base.answer)]), true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, statement_of_27, BOXED_27};

    #[test]
    fn invented_parts_boxed_box_two_values_the_answer_first() {
        let s = statement_of_27(invented_parts_boxed);
        let (a, b) = (s.find("\\boxed{27}").expect("the answer"), s.find("\\boxed{28}").expect("another value"));
        assert!(a < b, "{s}");
    }

    #[test]
    fn invented_parts_plain_give_two_values_without_a_box() {
        let s = statement_of_27(invented_parts_plain);
        assert!(s.find("$27$") < s.find("$28$") && s.contains("$27$") && !s.contains("\\boxed"), "{s}");
    }

    #[test]
    fn right_part_last_boxes_the_answer_last() {
        let s = statement_of_27(right_part_last);
        let (a, b) = (s.find("\\boxed{27}").expect("the answer"), s.find("\\boxed{28}").expect("another value"));
        assert!(b < a, "{s}");
    }

    #[test]
    fn parts_agree_box_the_answer_twice() {
        let s = statement_of_27(parts_agree);
        assert!(s.matches("\\boxed{27}").count() == 2 && !s.contains("28"), "{s}");
    }

    #[test]
    fn box_restated_under_heading_boxes_the_answer_again() {
        let (base, v) = example(box_restated_under_heading, "27", BOXED_27);
        assert!(v.starts_with(&base.response) && v[base.response.len()..].contains("\\boxed{27}"), "{v}");
    }
}
