//! The answer given early and a long check after it, as a model that verifies its work writes:
//! the response's answer, then a verification that walks through the last steps of the reasoning
//! again and ends on a sentence stating another value as the check's result, with no word of
//! correction (`Verifying: the count is 28.`), or a short answer first, the whole derivation
//! after it and a last sentence that states another value; against them, the same checks and
//! derivations ending on the answer's own value.

use crate::mutation::{fill, phrase, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "delayed_commitment",
    split: Split::HeldOut,
    why: "named by no class of issue 30 nor written by the 29 families before it (later_correction writes a \
          one-line revision with a correction word; here a long check or the whole derivation follows the \
          answer and its last sentence states the value plainly): added on 2026-11-27 (second set) and \
          scored first-seen on 42b6fdd, before any fix for it: held out",
    operators: &[
        Operator { name: "check_ends_other", expect: Expect::Wrong, apply: check_ends_other },
        Operator { name: "early_answer_late_other", expect: Expect::Wrong, apply: early_answer_late_other },
        Operator { name: "check_ends_same", expect: Expect::Right, apply: check_ends_same },
        Operator { name: "early_answer_late_same", expect: Expect::Right, apply: early_answer_late_same },
    ],
};

/// A verification after the answer: an opener and the last lines of the reasoning walked through
/// again (at most three lines of text, without a box), as a re-derivation repeats its steps.
fn rework(base: &Base, rng: &mut Rng) -> String {
    let lines: Vec<&str> = base
        .head()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.contains("\\boxed") && l.len() <= 300)
        .collect();
    let steps = lines[lines.len().saturating_sub(3)..].join("\n");
    let opener = rng.pick(&[
        "Let me verify this by working through it again.",
        "Double-check, going step by step:",
        "**Verification.**",
        "Let me re-derive the result to be sure.",
    ]);
    format!("{opener}\n\n{steps}")
}

/// Sentences that end a check by stating its result; `{v}` is the value.
const CHECK_ENDINGS: &[&str] = &[
    "Verifying: the count is {v}.",
    "So the check gives {v}.",
    "After the check, the total comes to {v}.",
    "Result of the verification: {v}.",
    "This re-derivation yields {v}.",
];

/// Sentences that end a derivation by stating its result; `{v}` is the value.
const DERIVATION_ENDINGS: &[&str] =
    &["Thus we get {v}.", "This gives {v}.", "Hence the value is {v}.", "So the final count is {v}."];

/// An answer given before the derivation.
fn early_answer(base: &Base, rng: &mut Rng) -> String {
    let t = rng.pick(&[
        "**Answer:** $\\boxed{{a}}$",
        "Short answer: {x}.",
        "TL;DR: the answer is {x}.",
        "Answer first: {x}",
    ]);
    fill(t, &[("a", &base.answer), ("x", &base.math())])
}

fn check_ending(base: &Base, value: &str, rng: &mut Rng) -> Option<Variant> {
    let check = rework(base, rng);
    let end = fill(phrase(rng, CHECK_ENDINGS), &[("v", value)]);
    base.append(&format!("{check}\n\n{end}"), true)
}

fn early_then_derivation(base: &Base, value: &str, rng: &mut Rng) -> Option<Variant> {
    let first = early_answer(base, rng);
    let end = fill(phrase(rng, DERIVATION_ENDINGS), &[("v", value)]);
    base.variant(format!("{first}\n\n{}\n\n{end}", base.head()))
}

/// The answer, a check, and a last sentence that states another value as the check's result.
fn check_ends_other(base: &Base, rng: &mut Rng) -> Option<Variant> {
    check_ending(base, &base.alt_math(), rng)
}

/// A short answer first, the derivation, and a last sentence that states another value.
fn early_answer_late_other(base: &Base, rng: &mut Rng) -> Option<Variant> {
    early_then_derivation(base, &base.alt_math(), rng)
}

/// The answer, a check, and a last sentence that states the answer again.
fn check_ends_same(base: &Base, rng: &mut Rng) -> Option<Variant> {
    check_ending(base, &base.math(), rng)
}

/// A short answer first, the derivation, and a last sentence that states the answer again.
fn early_answer_late_same(base: &Base, rng: &mut Rng) -> Option<Variant> {
    early_then_derivation(base, &base.math(), rng)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, BOXED_27};

    const LONGER: &str = "First we count the red apples: there are 20.\nThen the green ones: there are 7.\n\
                          Adding them, 20 + 7 = 27.\n\nTherefore, the total is $\\boxed{27}$.";

    fn added(op: fn(&Base, &mut Rng) -> Option<Variant>) -> String {
        let (base, v) = example(op, "27", LONGER);
        assert!(v.starts_with(&base.response), "{v}");
        v[base.response.len()..].to_string()
    }

    #[test]
    fn check_ends_other_repeats_steps_and_ends_on_another_value() {
        let a = added(check_ends_other);
        assert!(a.contains("Then the green ones") && a.trim_end().ends_with("$28$."), "{a}");
        assert!(a.lines().count() >= 5, "{a}");
    }

    #[test]
    fn check_ends_same_ends_on_the_answer() {
        let a = added(check_ends_same);
        assert!(a.contains("20 + 7 = 27") && a.trim_end().ends_with("$27$.") && !a.contains("28"), "{a}");
    }

    #[test]
    fn early_answer_late_other_answers_first_and_states_another_value_last() {
        let (base, v) = example(early_answer_late_other, "27", BOXED_27);
        let (first, rest) = v.split_once("\n\n").expect("an answer line first");
        assert!(first.contains("27") && rest.starts_with(base.head()) && v.ends_with("$28$."), "{v}");
    }

    #[test]
    fn early_answer_late_same_states_the_answer_twice() {
        let (base, v) = example(early_answer_late_same, "27", BOXED_27);
        let (first, rest) = v.split_once("\n\n").expect("an answer line first");
        assert!(first.contains("27") && rest.starts_with(base.head()) && v.ends_with("$27$."), "{v}");
        assert!(!v.contains("28"), "{v}");
    }
}
