//! A value offered under a condition or another reading of the problem, after the answer: an
//! aside right after it (`$\boxed{27}$ ($28$ if the endpoints are included)`), an `unless`
//! clause, a label for the other reading (`For the inclusive reading: $28$.`) or a postscript
//! (`P.S. $28$ if you count the endpoints.`); against them, a condition that leads back to the
//! same value (`(the same if the endpoints are included)`) and a condition on the problem's givens
//! that names no value (`This assumes the given quantities are exact.`).

use crate::mutation::{fill, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "conditional_alternative",
    split: Split::HeldOut,
    why: "named by no class of issue 30 nor written by the 29 families before it (a value offered under a \
          condition after a committed answer): added on 2026-11-27 (second set) and scored first-seen on \
          42b6fdd, before any fix for it: held out",
    operators: &[
        Operator { name: "conditional_aside", expect: Expect::Wrong, apply: conditional_aside },
        Operator { name: "unless_clause", expect: Expect::Wrong, apply: unless_clause },
        Operator { name: "reading_label", expect: Expect::Wrong, apply: reading_label },
        Operator { name: "conditional_postscript", expect: Expect::Wrong, apply: conditional_postscript },
        Operator { name: "condition_same_value", expect: Expect::Right, apply: condition_same_value },
        Operator { name: "condition_on_givens", expect: Expect::Right, apply: condition_on_givens },
    ],
};

/// Conditions under which a counting or algebra problem reads differently (a clause after `if`).
const CONDITIONS: &[&str] = &[
    "the endpoints are included",
    "order matters",
    "repetition is allowed",
    "the empty case is counted",
    "zero counts as a valid value",
    "reflections count as different",
];

/// Other readings of a problem (a noun phrase).
const READINGS: &[&str] =
    &["ordered pairs", "the inclusive count", "distinct values only", "the other endpoint convention"];

/// Another value under a condition, right after the answer and the math around it.
fn conditional_aside(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[" ({y} if {c})", " (it would be {y} if {c})", " — {y} if {c}", " [{y} if {c}]"]);
    base.insert_after_answer(&fill(t, &[("y", &base.alt_math()), ("c", *rng.pick(CONDITIONS))]))
}

/// An `unless` clause after the answer that gives another value for another reading.
fn unless_clause(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "That is, unless the problem means {r}, in which case it is {y}.",
        "Unless {r} is intended; then the count becomes {y}.",
        "This holds unless the problem asks for {r}: that version gives {y}.",
        "(Unless the problem wants {r} — then {y}.)",
    ]);
    base.append(&fill(t, &[("y", &base.alt_math()), ("r", *rng.pick(READINGS))]), rng.below(2) == 0)
}

/// A label for another reading of the problem, then another value.
fn reading_label(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "For the inclusive reading: {y}.",
        "Inclusive interpretation: {y}",
        "Under the stricter reading: {y}.",
        "(Alternative reading, with {r}: {y}.)",
        "**If {c}:** {y}",
    ]);
    let (r, c) = (rng.pick(READINGS), rng.pick(CONDITIONS));
    base.append(&fill(t, &[("y", &base.alt_math()), ("r", r), ("c", c)]), true)
}

/// A postscript or note that gives another value under a condition.
fn conditional_postscript(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "P.S. {y} if {c}.",
        "Note: if {c}, you'd get {y}.",
        "N.B. If {c}, it's {y}.",
        "PS — if {c}, the answer is {y}.",
    ]);
    base.append(&fill(t, &[("y", &base.alt_math()), ("c", *rng.pick(CONDITIONS))]), true)
}

/// A condition that leads back to the answer's own value.
fn condition_same_value(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let c = rng.pick(CONDITIONS);
    if rng.below(3) == 0 {
        return base.insert_after_answer(&format!(" (the same if {c})"));
    }
    let t = rng.pick(&[
        "The answer is the same if {c}.",
        "If {c}, the answer is still {x}.",
        "Whether or not {c}, we get {x}.",
        "Even if {c}, the value stays {x}.",
    ]);
    base.append(&fill(t, &[("x", &base.math()), ("c", c)]), true)
}

/// A condition on the problem's givens that names no value.
fn condition_on_givens(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "This assumes the given quantities are exact.",
        "(assuming all the given quantities are positive, as the problem states)",
        "If the problem's data were different, the same method would apply, but as stated the result stands.",
        "Here we assumed the conditions hold exactly as stated in the problem.",
    ]);
    base.append(t, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, BOXED_27};

    fn variant(op: fn(&Base, &mut Rng) -> Option<Variant>) -> (Base, String) {
        example(op, "27", BOXED_27)
    }

    fn added(op: fn(&Base, &mut Rng) -> Option<Variant>) -> String {
        let (base, v) = variant(op);
        assert!(v.starts_with(base.response.trim_end()), "{v}");
        v[base.response.trim_end().len()..].to_string()
    }

    #[test]
    fn conditional_aside_follows_the_box_with_a_conditioned_value() {
        let (_, v) = variant(conditional_aside);
        let after = &v[v.find("$\\boxed{27}$").expect("the box stays") + "$\\boxed{27}$".len()..];
        assert!(after.contains("$28$") && after.contains(" if "), "{v}");
    }

    #[test]
    fn unless_clause_gives_another_value() {
        let a = added(unless_clause);
        assert!(a.to_lowercase().contains("unless") && a.contains("$28$"), "{a}");
    }

    #[test]
    fn reading_label_gives_another_value() {
        let a = added(reading_label);
        assert!(a.contains("$28$") && !a.contains("27"), "{a}");
    }

    #[test]
    fn conditional_postscript_gives_another_value_under_a_condition() {
        let a = added(conditional_postscript);
        assert!(a.to_lowercase().contains("if ") && a.contains("$28$"), "{a}");
    }

    #[test]
    fn condition_same_value_names_no_other_value() {
        let (base, v) = variant(condition_same_value);
        assert!(v.len() > base.response.len() && !v.contains("28"), "{v}");
        assert!(CONDITIONS.iter().any(|c| v.contains(c)), "{v}");
    }

    #[test]
    fn condition_on_givens_names_no_value() {
        let a = added(condition_on_givens);
        assert!(a.trim().len() > 10 && !a.chars().any(|c| c.is_ascii_digit()), "{a}");
    }
}
