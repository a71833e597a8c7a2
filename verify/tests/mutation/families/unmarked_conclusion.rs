//! Concluding statements without the markers the contract lists (issue 30, class 11): `Altogether,
//! ...`, `In total, ...`, a display after `Putting everything together:`; against them, the same
//! conclusion offering a second value.

use crate::mutation::{fill, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "unmarked_conclusion",
    split: Split::Dev,
    why: "issue 30 class 11, named with examples: developed against",
    operators: &[
        Operator { name: "conclusion_sentence", expect: Expect::Right, apply: conclusion_sentence },
        Operator { name: "display_after_lead_in", expect: Expect::Right, apply: display_after_lead_in },
        Operator { name: "conclusion_with_alternative", expect: Expect::Wrong, apply: conclusion_with_alternative },
    ],
};

fn conclusion_sentence(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "Altogether, that makes {x}.",
        "In total, we get {x}.",
        "All in all, the result is {x}.",
        "Hence {x} is the value we were asked for.",
        "This gives {x} as the final count.",
    ]);
    base.with_statement(&fill(t, &[("x", &base.math())]))
}

fn display_after_lead_in(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "Putting everything together:\n\n$$\n{x}\n$$",
        "Combining the steps:\n\\[ {x} \\]",
        "Collecting the results, the quantity asked for is\n\\[\n{x}\n\\]",
    ]);
    base.with_statement(&fill(t, &[("x", &base.answer)]))
}

fn conclusion_with_alternative(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "Altogether, that makes {x}, or {y} if we count the other way.",
        "In total, we get {x} (or {y}, depending on the reading).",
        "All in all, the result is {x} or perhaps {y}.",
    ]);
    base.with_statement(&fill(t, &[("x", &base.math()), ("y", &base.alt_math())]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, BOXED_27};

    #[test]
    fn conclusion_sentence_states_the_answer_without_a_marker() {
        let (base, v) = example(conclusion_sentence, "27", BOXED_27);
        let last = &v[base.head().len()..];
        assert!(last.contains("$27$") && !last.contains("\\boxed") && !last.contains("Therefore"), "{v}");
    }

    #[test]
    fn display_after_lead_in_ends_on_the_display() {
        let (base, v) = example(display_after_lead_in, "27", BOXED_27);
        let last = &v[base.head().len()..];
        assert!(last.contains(":\n") || last.contains("is\n"), "{v}");
        assert!(last.contains("27") && !last.contains("\\boxed"), "{v}");
    }

    #[test]
    fn conclusion_with_alternative_offers_two_values() {
        let (base, v) = example(conclusion_with_alternative, "27", BOXED_27);
        let last = &v[base.head().len()..];
        assert!(last.contains("$27$") && last.contains("$28$"), "{v}");
    }
}
