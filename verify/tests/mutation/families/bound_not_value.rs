//! A bound instead of a value: the final answer qualified as a lower or upper bound or a range
//! around it; against it, `exactly`. Not a class of issue 30.

use crate::mutation::{phrase, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "bound_not_value",
    split: Split::HeldOut,
    why: "named by no class of issue 30: held out",
    operators: &[
        Operator { name: "lower_bound", expect: Expect::Wrong, apply: lower_bound },
        Operator { name: "upper_bound", expect: Expect::Wrong, apply: upper_bound },
        Operator { name: "range_around", expect: Expect::Wrong, apply: range_around },
        Operator { name: "exactly", expect: Expect::Right, apply: exactly },
    ],
};

/// The answer in a template, in the box (`{x}` is the answer).
fn qualified(base: &Base, template: &str) -> Option<Variant> {
    base.with_box_content(&template.replace("{x}", &base.answer))
}

fn lower_bound(base: &Base, rng: &mut Rng) -> Option<Variant> {
    qualified(
        base,
        phrase(rng, &["\\text{at least } {x}", "{x} \\text{ or more}", "\\geq {x}", "{x} \\text{ at minimum}"]),
    )
}

fn upper_bound(base: &Base, rng: &mut Rng) -> Option<Variant> {
    qualified(
        base,
        phrase(rng, &["\\text{at most } {x}", "{x} \\text{ or fewer}", "\\leq {x}", "\\text{no more than } {x}"]),
    )
}

/// A range of integers around an integer answer.
fn range_around(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = base.integer?;
    let (lo, hi) = ((n - 1).to_string(), (n + 1).to_string());
    let t = rng.pick(&[
        "\\text{between } {lo} \\text{ and } {hi}",
        "\\text{somewhere from } {lo} \\text{ to } {hi}",
        "{lo} \\text{ to } {hi}",
    ]);
    base.with_box_content(&t.replace("{lo}", &lo).replace("{hi}", &hi))
}

fn exactly(base: &Base, rng: &mut Rng) -> Option<Variant> {
    qualified(base, phrase(rng, &["\\text{exactly } {x}", "{x} \\text{ exactly}", "\\text{precisely } {x}"]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::last_box_of_27;

    #[test]
    fn lower_bound_qualifies_the_answer() {
        let b = last_box_of_27(lower_bound);
        assert!(b.contains("27") && ["least", "more", "\\geq", "minimum"].iter().any(|w| b.contains(w)), "{b}");
    }

    #[test]
    fn upper_bound_qualifies_the_answer() {
        let b = last_box_of_27(upper_bound);
        assert!(b.contains("27") && ["most", "fewer", "\\leq", "no more"].iter().any(|w| b.contains(w)), "{b}");
    }

    #[test]
    fn range_around_replaces_the_answer_by_a_range() {
        let b = last_box_of_27(range_around);
        assert!(b.contains("26") && b.contains("28") && !b.contains("27"), "{b}");
    }

    #[test]
    fn exactly_keeps_the_answer() {
        let b = last_box_of_27(exactly);
        assert!(b.contains("27") && (b.contains("exactly") || b.contains("precisely")), "{b}");
    }
}
