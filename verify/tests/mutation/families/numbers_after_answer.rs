//! Other numbers after the answer that do not answer: a recap of the problem's givens or of an
//! intermediate result after the right answer; against them, a recap that ends on another value
//! for the answer. Not a class of issue 30: it checks that a fix for later corrections reads
//! what a later number is about, instead of rejecting every number after the answer.

use crate::mutation::{base::differs, fill, phrase, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "numbers_after_answer",
    split: Split::HeldOut,
    why: "named by no class of issue 30 (the counterpart of class 1): held out",
    operators: &[
        Operator { name: "recap_givens", expect: Expect::Right, apply: recap_givens },
        Operator { name: "intermediate_recap", expect: Expect::Right, apply: intermediate_recap },
        Operator { name: "recap_then_other_answer", expect: Expect::Wrong, apply: recap_then_other_answer },
    ],
};

/// Two different integers of the reasoning that are not the answer (each wrong for the gold), in
/// order of appearance.
fn reasoning_numbers(base: &Base) -> Option<(String, String)> {
    let head = base.head();
    let mut found: Vec<&str> = Vec::new();
    // Whole integers only: `3.5` gives nothing, a sentence's final period is not part of `7.`.
    let tokens = head.split(|c: char| !c.is_ascii_digit() && c != '.').map(|t| t.trim_matches('.'));
    for token in tokens.filter(|t| !t.is_empty() && t.len() <= 6 && !t.contains('.')) {
        if !found.contains(&token) && token != base.answer && differs(&base.gold, token) {
            found.push(token);
        }
        if found.len() == 2 {
            return Some((found[0].to_string(), found[1].to_string()));
        }
    }
    None
}

fn recap_givens(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let (a, b) = reasoning_numbers(base)?;
    let t = phrase(
        rng,
        &[
            "(Recall that the problem gives {a} and {b}.)",
            "Note: we used the given values {a} and {b} above.",
            "The data were {a} and {b}; nothing else was needed.",
        ],
    );
    base.append(&fill(t, &[("a", &a), ("b", &b)]), true)
}

fn intermediate_recap(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let (a, _) = reasoning_numbers(base)?;
    let t = phrase(
        rng,
        &[
            "Along the way we found {a}, which was only an intermediate step.",
            "(The value {a} above is an intermediate result, not the answer.)",
            "Remember that {a} was just a partial result.",
        ],
    );
    base.append(&fill(t, &[("a", &a)]), true)
}

fn recap_then_other_answer(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let (a, b) = reasoning_numbers(base)?;
    let t = phrase(
        rng,
        &[
            "(Recall that the problem gives {a} and {b}, so the answer is really {y}.)",
            "Note: with the given values {a} and {b}, the result should be {y}.",
            "The data were {a} and {b}; redoing it with them gives {y}.",
        ],
    );
    base.append(&fill(t, &[("a", &a), ("b", &b), ("y", &base.alt_math())]), true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, BOXED_27};

    fn added(op: fn(&Base, &mut Rng) -> Option<Variant>) -> String {
        let (base, v) = example(op, "27", BOXED_27);
        assert!(v.starts_with(&base.response), "{v}");
        v[base.response.len()..].to_string()
    }

    #[test]
    fn recap_givens_names_numbers_of_the_reasoning() {
        let a = added(recap_givens);
        assert!(a.contains("20") && a.contains('7') && !a.contains("27") && !a.contains("28"), "{a}");
    }

    #[test]
    fn intermediate_recap_names_a_number_of_the_reasoning() {
        let a = added(intermediate_recap);
        assert!(a.contains("20") && !a.contains("27") && !a.contains("28"), "{a}");
    }

    #[test]
    fn recap_then_other_answer_ends_on_another_value() {
        let a = added(recap_then_other_answer);
        assert!(a.contains("20") && a.contains("$28$"), "{a}");
    }
}
