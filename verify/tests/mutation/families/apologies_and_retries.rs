//! Apologies and retries after a boxed answer, as chat models write them: a wrong value boxed,
//! then an apology and a corrected box with the right value (the last committed answer wins), or
//! the right value boxed and an apology that leaves it unchanged (for the length, for a typo in a
//! step), which must stay right; and the right value boxed, then an apology that boxes a
//! different "correct" value, or that offers both values as possibly right, which must be wrong.

use crate::mutation::{fill, phrase, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "apologies_and_retries",
    split: Split::HeldOut,
    why: "named by no class of issue 30 nor written by the 35 families before it (later_correction writes an \
          unboxed revision after the answer and a wrong first attempt before the derivation; here the response \
          apologizes and boxes again, a second box correcting the first, or hedges between two boxes): added on \
          2026-11-27 (third set) and scored first-seen on a3fc502, before any fix for it: held out",
    operators: &[
        Operator { name: "apology_fixes_wrong_box", expect: Expect::Right, apply: apology_fixes_wrong_box },
        Operator { name: "apology_keeps_answer", expect: Expect::Right, apply: apology_keeps_answer },
        Operator { name: "apology_boxes_other", expect: Expect::Wrong, apply: apology_boxes_other },
        Operator { name: "apology_both_possible", expect: Expect::Wrong, apply: apology_both_possible },
    ],
};

/// Apologies that correct the last box; `{v}` is the value of the correction.
const CORRECTIONS: &[&str] = &[
    "Sorry, I made an error above: I dropped a term in the last step. The correct answer is $\\boxed{{v}}$.",
    "Apologies — I made a mistake in the final computation. Redoing it carefully gives $\\boxed{{v}}$.",
    "Wait, I'm sorry, that's not right; I misread one of the numbers. The correct final answer is $\\boxed{{v}}$.",
    "My apologies for the error above. Fixing the arithmetic, the answer is\n\n$$\\boxed{{v}}$$",
    "I apologize for the confusion in my previous answer. Let me correct it: the answer is $\\boxed{{v}}$.",
];

/// The response with its final answer replaced by the alternative (boxed), then an apology that
/// boxes the right answer.
fn apology_fixes_wrong_box(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let wrong = format!("\\boxed{{{}}}", base.alternative);
    let wrong = if base.boxed { wrong } else { format!("${wrong}$") };
    let (s, e) = base.span;
    let r = &base.response;
    let first = format!("{}{wrong}{}", &r[..s], &r[e..]);
    let fix = fill(phrase(rng, CORRECTIONS), &[("v", &base.answer)]);
    base.variant(format!("{}\n\n{fix}", first.trim_end()))
}

/// The right box, then an apology that changes nothing.
fn apology_keeps_answer(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "Sorry for the long-winded explanation! The answer is still $\\boxed{{x}}$.",
        "Apologies for the typo in one of the intermediate lines above (a sign was dropped while copying); it \
         does not affect the result, which remains {m}.",
        "Sorry if my first paragraph was confusing. To restate it clearly: the answer is {m}.",
        "I apologize for the messy formatting above, but the final answer, {m}, is correct.",
        "Sorry, I should have said this at the start: the answer is {m}, as derived above.",
    ]);
    base.append(&fill(t, &[("x", &base.answer), ("m", &base.math())]), true)
}

/// The right box, then an apology that boxes another value as the correct one.
fn apology_boxes_other(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let fix = fill(phrase(rng, CORRECTIONS), &[("v", &base.alternative)]);
    base.append(&fix, true)
}

/// The right box, then an apology that calls both values possible.
fn apology_both_possible(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "Sorry for the confusion; both $\\boxed{{x}}$ and $\\boxed{{y}}$ could be right, depending on how the \
         problem is read.",
        "Apologies if this was unclear — I could not rule out either value, so the answer is $\\boxed{{x}}$ or \
         $\\boxed{{y}}$.",
        "I'm sorry, I made a mistake somewhere and I cannot tell whether the answer is {mx} or {my}.",
        "Sorry, on reflection I am torn: it is either {mx} or {my}.",
    ]);
    let values =
        [("x", base.answer.as_str()), ("y", base.alternative.as_str()), ("mx", &base.math()), ("my", &base.alt_math())];
    base.append(&fill(t, &values), true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, last_box_of_27, BOXED_27};

    #[test]
    fn apology_fixes_wrong_box_boxes_the_wrong_value_then_the_right_one() {
        let (_, v) = example(apology_fixes_wrong_box, "27", BOXED_27);
        let wrong = v.find("\\boxed{28}").expect("the wrong box");
        let right = v.find("\\boxed{27}").expect("the right box");
        assert!(wrong < right && (v.contains("polog") || v.contains("orry")), "{v}");
        assert_eq!(last_box_of_27(apology_fixes_wrong_box).trim_end_matches(['$', '.', '\n']), "\\boxed{27}");
    }

    #[test]
    fn apology_keeps_answer_names_only_the_answer() {
        let (base, v) = example(apology_keeps_answer, "27", BOXED_27);
        let a = &v[base.response.len()..];
        assert!(v.starts_with(&base.response) && a.contains("27") && !a.contains("28"), "{v}");
    }

    #[test]
    fn apology_boxes_other_ends_on_another_box() {
        let (base, v) = example(apology_boxes_other, "27", BOXED_27);
        assert!(v.starts_with(&base.response), "{v}");
        assert!(last_box_of_27(apology_boxes_other).starts_with("\\boxed{28}"), "{v}");
    }

    #[test]
    fn apology_both_possible_names_both_values() {
        let (base, v) = example(apology_both_possible, "27", BOXED_27);
        let a = &v[base.response.len()..];
        assert!(a.contains("27") && a.contains("28"), "{a}");
    }
}
