//! A box that the sentence around it negates, questions or retracts (issue 30, class 9); against
//! it, a rhetorical question the response answers yes.

use crate::mutation::{fill, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "negated_box",
    split: Split::Dev,
    why: "issue 30 class 9, named with examples: developed against",
    operators: &[
        Operator { name: "not_the_answer", expect: Expect::Wrong, apply: not_the_answer },
        Operator { name: "questioned_box", expect: Expect::Wrong, apply: questioned_box },
        Operator { name: "box_then_no", expect: Expect::Wrong, apply: box_then_no },
        Operator { name: "rhetorical_yes", expect: Expect::Right, apply: rhetorical_yes },
    ],
};

/// The final statement says the value is not the answer.
fn not_the_answer(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "Wait: the answer is not $\\boxed{{x}}$.",
        "On reflection, $\\boxed{{x}}$ is not the answer.",
        "So the answer cannot be \\boxed{{x}} after all.",
        "This rules out $\\boxed{{x}}$ as the answer.",
    ]);
    base.with_statement(&fill(t, &[("x", &base.answer)]))
}

/// The final statement only asks whether the value is the answer.
fn questioned_box(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "Is the answer $\\boxed{{x}}$? I am not sure.",
        "Could the answer be $\\boxed{{x}}$?",
        "Maybe $\\boxed{{x}}$? I cannot tell.",
    ]);
    base.with_statement(&fill(t, &[("x", &base.answer)]))
}

/// Right after the box, the response asks and answers no.
fn box_then_no(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&["? No", "? No, that cannot be right", "... no, scratch that"]);
    base.boxed.then(|| base.insert_after_answer(t))?
}

/// A rhetorical question about the answer, answered yes.
fn rhetorical_yes(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "Is the answer really {x}? Yes: it satisfies every condition of the problem.",
        "Could it be anything other than {x}? No, the steps above leave only this value.",
        "Does {x} check out? Yes.",
    ]);
    base.append(&fill(t, &[("x", &base.math())]), true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, BOXED_27};

    #[test]
    fn not_the_answer_negates_the_box() {
        let (base, v) = example(not_the_answer, "27", BOXED_27);
        let last = &v[base.head().len()..];
        assert!(last.contains("\\boxed{27}") && (last.contains("not") || last.contains("rules out")), "{v}");
    }

    #[test]
    fn questioned_box_asks_about_the_box() {
        let (base, v) = example(questioned_box, "27", BOXED_27);
        let last = &v[base.head().len()..];
        assert!(last.contains("\\boxed{27}") && last.contains('?'), "{v}");
    }

    #[test]
    fn box_then_no_answers_no_right_after_the_box() {
        let (_, v) = example(box_then_no, "27", BOXED_27);
        assert!(v.contains("\\boxed{27}$? No") || v.contains("\\boxed{27}$... no"), "{v}");
    }

    #[test]
    fn rhetorical_yes_confirms_the_answer() {
        let (base, v) = example(rhetorical_yes, "27", BOXED_27);
        let added = &v[base.response.len()..];
        assert!(v.starts_with(&base.response) && added.contains("$27$") && !added.contains("28"), "{v}");
    }
}
