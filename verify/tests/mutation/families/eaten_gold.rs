//! Golds whose backslashes a JSON layer turned into control characters (issue 30, class 10):
//! the gold is the base's value written with a command whose first letter is an escape (`\boxed`,
//! `\frac`, `\text`, `\times`, `\right`), then eaten (`\b` → backspace, `\f` → form feed, `\t` →
//! tab, `\r` → carriage return, `\n` → newline); such a row must be reported (`invalid_gold`),
//! not scored. Against it, the same gold with its backslashes intact must stay right.

use crate::mutation::{Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "eaten_gold",
    split: Split::HeldOut,
    why: "issue 30 class 10, which no family wrote: added after the first look at the other \
          families, measured before any fix for it",
    operators: &[
        Operator { name: "eaten_command", expect: Expect::Wrong, apply: eaten_command },
        Operator { name: "intact_command", expect: Expect::Right, apply: intact_command },
    ],
};

/// Gold forms of an integer `{x}` (with `{2x}` its double) whose command starts with an escape letter.
const FORMS: &[&str] = &[
    "\\boxed{{x}}",
    "\\frac{{2x}}{2}",
    "\\text{{x}}",
    "{x} \\times 1",
    "\\tfrac{{2x}}{2}",
    "\\left({x}\\right)",
    "\\dfrac{{2x}}{2} \\text{ units}",
];

/// The gold form, drawn, for the base's integer.
fn form(base: &Base, rng: &mut Rng) -> Option<String> {
    let n = base.integer.filter(|n| n.abs() < 1_000_000_000)?;
    Some(rng.pick(FORMS).replace("{2x}", &(2 * n).to_string()).replace("{x}", &n.to_string()))
}

/// What a JSON layer makes of `\b`, `\f`, `\t`, `\r`, `\n` written with one backslash.
fn eat(gold: &str) -> String {
    gold.replace("\\b", "\u{8}").replace("\\f", "\u{c}").replace("\\t", "\t").replace("\\r", "\r").replace("\\n", "\n")
}

fn eaten_command(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let gold = eat(&form(base, rng)?);
    Some(Variant { gold, response: base.response.clone() })
}

fn intact_command(base: &Base, rng: &mut Rng) -> Option<Variant> {
    Some(Variant { gold: form(base, rng)?, response: base.response.clone() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::BOXED_27;

    #[test]
    fn eaten_gold_holds_a_control_character_and_intact_gold_the_command() {
        let base = Base::new("example", "27", BOXED_27).expect("base");
        let eaten = eaten_command(&base, &mut Rng::new(crate::mutation::SEED)).expect("applies");
        assert!(eaten.gold.chars().any(|c| c.is_control()) && eaten.gold.contains("27"), "{eaten:?}");
        let intact = intact_command(&base, &mut Rng::new(crate::mutation::SEED)).expect("applies");
        assert!(intact.gold.contains('\\') && !intact.gold.chars().any(|c| c.is_control()), "{intact:?}");
    }
}
