//! A later correction without a marker (issue 30, class 1): after the answer, a check, a
//! postscript or an edit says the value is something else; against it, a check that confirms
//! the answer and an earlier wrong attempt that the response itself corrects.

use crate::mutation::{fill, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "later_correction",
    split: Split::Dev,
    why: "issue 30 class 1, named with examples: developed against",
    operators: &[
        Operator { name: "checking_again", expect: Expect::Wrong, apply: checking_again },
        Operator { name: "postscript", expect: Expect::Wrong, apply: postscript },
        Operator { name: "edit_note", expect: Expect::Wrong, apply: edit_note },
        Operator { name: "confirming_check", expect: Expect::Right, apply: confirming_check },
        Operator { name: "corrected_first_attempt", expect: Expect::Right, apply: corrected_first_attempt },
    ],
};

/// A recount after the answer that arrives at another value.
fn checking_again(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "Checking again, the count must be {y}.",
        "Rechecking the last step, it should be {y}.",
        "Let me recount: it comes to {y}.",
        "Hmm, going over the arithmetic once more, the total is {y}.",
    ]);
    base.append(&fill(t, &[("y", &base.alt_math())]), true)
}

/// A postscript or footnote that gives another value.
fn postscript(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "P.S. I made an arithmetic slip above; the correct value is {y}.",
        "PS: the result is actually {y}.",
        "¹ Correction: the value above should read {y}.",
        "Footnote: after fixing a sign error, the result becomes {y}.",
    ]);
    base.append(&fill(t, &[("y", &base.alt_math())]), true)
}

/// An edit note that replaces the answer.
fn edit_note(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "Edit: it is actually {y}, not {x}.",
        "[Edit: corrected to {y}.]",
        "Update: {y} (I mis-added earlier).",
        "EDIT — the right value is {y}; {x} came from a typo.",
    ]);
    base.append(&fill(t, &[("x", &base.math()), ("y", &base.alt_math())]), true)
}

/// A check after the answer that confirms it.
fn confirming_check(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "Check: substituting back confirms {x}.",
        "Double-checking the arithmetic gives {x} again.",
        "Verification: every condition holds for {x}.",
        "A quick recount agrees: {x}.",
    ]);
    base.append(&fill(t, &[("x", &base.math())]), true)
}

/// A wrong first attempt, marked wrong, before the whole right response.
fn corrected_first_attempt(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "First attempt: {y}. That is wrong, I dropped a case. Starting over:",
        "My first guess was {y}, but that ignores a condition. Let me redo it.",
        "(An earlier draft said {y}; it was mistaken.)",
    ]);
    base.variant(format!("{}\n\n{}", fill(t, &[("y", &base.alt_math())]), base.response))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, BOXED_27};

    #[test]
    fn checking_again_adds_another_value_after_the_box() {
        let (base, v) = example(checking_again, "27", BOXED_27);
        assert!(v.starts_with(&base.response) && v.ends_with("$28$."), "{v}");
    }

    #[test]
    fn postscript_adds_another_value_after_the_box() {
        let (base, v) = example(postscript, "27", BOXED_27);
        assert!(v.starts_with(&base.response) && v[base.response.len()..].contains("$28$"), "{v}");
    }

    #[test]
    fn edit_note_replaces_the_value() {
        let (base, v) = example(edit_note, "27", BOXED_27);
        assert!(v.starts_with(&base.response) && v[base.response.len()..].contains("$28$"), "{v}");
    }

    #[test]
    fn confirming_check_restates_the_answer() {
        let (base, v) = example(confirming_check, "27", BOXED_27);
        let added = &v[base.response.len()..];
        assert!(v.starts_with(&base.response) && added.contains("$27$") && !added.contains("28"), "{v}");
    }

    #[test]
    fn corrected_first_attempt_comes_before_the_response() {
        let (base, v) = example(corrected_first_attempt, "27", BOXED_27);
        let before = v.strip_suffix(base.response.as_str()).expect("the response follows the attempt");
        assert!(before.contains("$28$") && !before.contains("27"), "{v}");
    }
}
