//! A self-assessment after the answer, as models trained to report calibration write it: a
//! confidence statement that splits belief between the answer and another value (`I'd put 70% on
//! 27 and 30% on 28`) or names a backup answer; against them, a confidence statement that names
//! no other value, in words (`Confidence: high.`) or as a number that is not a value of the answer
//! (`Confidence: 95%`).

use crate::mutation::{fill, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "self_assessment",
    split: Split::HeldOut,
    why: "named by no class of issue 30 or of the fixes under way: added on 2026-11-27 and scored \
          first-seen on 07ad560, before any fix for it: held out",
    operators: &[
        Operator { name: "split_belief", expect: Expect::Wrong, apply: split_belief },
        Operator { name: "backup_answer", expect: Expect::Wrong, apply: backup_answer },
        Operator { name: "confidence_words", expect: Expect::Right, apply: confidence_words },
        Operator { name: "confidence_number", expect: Expect::Right, apply: confidence_number },
    ],
};

/// A confidence statement that shares belief between the answer and another value.
fn split_belief(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "I'd put 70% on {x} and 30% on {y}.",
        "Confidence: medium; the other candidate is {y}.",
        "Confidence breakdown: {x} (65%), {y} (35%).",
        "My credence is about 0.6 for {x} and 0.4 for {y}.",
        "**Confidence:** moderate. I'm torn between {x} and {y}, leaning {x}.",
        "Self-assessment: likely {x}, but {y} is a close second.",
    ]);
    base.append(&fill(t, &[("x", &base.math()), ("y", &base.alt_math())]), true)
}

/// A backup or second-choice answer named after the answer.
fn backup_answer(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "Backup answer: {y}.",
        "If I had to give a second choice, it would be {y}.",
        "Runner-up candidate: {y}.",
        "My fallback, if this is marked wrong, is {y}.",
        "Second guess: {y}.",
    ]);
    base.append(&fill(t, &[("y", &base.alt_math())]), true)
}

/// A confidence statement in words, naming no value.
fn confidence_words(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "Confidence: high.",
        "I'm confident in this result.",
        "**Confidence:** very high, every step was checked.",
        "Self-assessment: the reasoning is complete and I am quite sure of this answer.",
        "Confidence level: high (the computation is straightforward).",
    ]);
    base.append(t, true)
}

/// A confidence statement with a number that is a probability, not a value of the answer.
fn confidence_number(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "Confidence: 95%.",
        "I'd put about 90% on this answer.",
        "Confidence score: 0.9",
        "Certainty: 9/10.",
        "I'm 95% sure the answer is {x}.",
    ]);
    base.append(&fill(t, &[("x", &base.math())]), true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, BOXED_27};

    fn added(op: fn(&Base, &mut Rng) -> Option<Variant>) -> String {
        let (base, v) = example(op, "27", BOXED_27);
        assert!(v.starts_with(base.response.trim_end()), "{v}");
        v[base.response.trim_end().len()..].to_string()
    }

    #[test]
    fn split_belief_names_another_value() {
        assert!(added(split_belief).contains("$28$"));
    }

    #[test]
    fn backup_answer_names_another_value() {
        let a = added(backup_answer);
        assert!(a.contains("$28$") && !a.contains("27"), "{a}");
    }

    #[test]
    fn confidence_words_name_no_value() {
        let a = added(confidence_words);
        assert!(a.trim().len() > 10 && !a.chars().any(|c| c.is_ascii_digit()), "{a}");
    }

    #[test]
    fn confidence_number_names_no_other_value() {
        let a = added(confidence_number);
        assert!(a.chars().any(|c| c.is_ascii_digit()) && !a.contains("28"), "{a}");
    }
}
