//! What follows the answer in a chat reply: pleasantries and offers of help after the right
//! answer; against them, a pleasantry that slips in the answer to another reading of the problem.
//! Not a class of issue 30 (its contract point 2 names pleasantries as what may follow).

use crate::mutation::{fill, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "pleasantries",
    split: Split::HeldOut,
    why: "named by no class of issue 30 (only as a word in its contract point): held out",
    operators: &[
        Operator { name: "closing_pleasantry", expect: Expect::Right, apply: closing_pleasantry },
        Operator { name: "offer_more_help", expect: Expect::Right, apply: offer_more_help },
        Operator { name: "other_reading_aside", expect: Expect::Wrong, apply: other_reading_aside },
    ],
};

fn closing_pleasantry(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "I hope this helps!",
        "Hope that helps! 😊",
        "Good luck with your studies!",
        "Thanks for the fun problem!",
        "Have a great day!",
    ]);
    base.append(t, rng.below(2) == 0)
}

fn offer_more_help(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "If you'd like, I can walk through any step in more detail.",
        "Feel free to ask a follow-up question.",
        "Let me know if anything is unclear and I will explain it another way.",
    ]);
    base.append(t, true)
}

/// A friendly aside that gives the answer to another reading of the problem.
fn other_reading_aside(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "Hope this helps! Though if the problem meant the other case, the answer would be {y} instead.",
        "Happy to help! (If your book counts it differently, it is {y}.)",
        "Good luck! Just note that under the other interpretation you would get {y}.",
    ]);
    base.append(&fill(t, &[("y", &base.alt_math())]), true)
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
    fn closing_pleasantry_adds_no_value() {
        let a = added(closing_pleasantry);
        assert!(a.trim().len() > 5 && !a.chars().any(|c| c.is_ascii_digit()), "{a}");
    }

    #[test]
    fn offer_more_help_adds_no_value() {
        let a = added(offer_more_help);
        assert!(a.trim().len() > 5 && !a.chars().any(|c| c.is_ascii_digit()), "{a}");
    }

    #[test]
    fn other_reading_aside_adds_another_value() {
        assert!(added(other_reading_aside).contains("$28$"));
    }
}
