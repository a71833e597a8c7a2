//! A choice read from a word (issue 30, class 8): the final line says `The answer is a tricky
//! one` and names another option, scored against the gold `A`; against it, the right option
//! restated in words.

use crate::mutation::{fill, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "article_choice",
    split: Split::Dev,
    why: "issue 30 class 8, named with an example: developed against",
    operators: &[
        Operator { name: "article_a", expect: Expect::Wrong, apply: article_a },
        Operator { name: "choice_restated", expect: Expect::Right, apply: choice_restated },
    ],
};

/// The letter of a multiple-choice gold (`C`, `(C)`, `\text{C}`).
fn gold_letter(gold: &str) -> Option<char> {
    let t = gold.trim().trim_matches('$');
    let t = t.strip_prefix("\\text{").and_then(|t| t.strip_suffix('}')).unwrap_or(t);
    let t = t.trim().trim_start_matches('(').trim_end_matches(')');
    let mut chars = t.chars();
    match (chars.next(), chars.next()) {
        (Some(c @ 'A'..='E'), None) => Some(c),
        _ => None,
    }
}

/// Asked as a question whose gold is `A`, the response ends on `The answer is a ...` and another
/// option (the base's own when it is not A, else B).
fn article_a(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let own = gold_letter(&base.gold)?;
    let other = if own == 'A' { 'B' } else { own };
    let t = rng.pick(&[
        "The answer is a tricky one, but I would go with ({o}).",
        "The answer is a close call; option ({o}) fits best.",
        "So the answer is a matter of elimination, leaving ({o}).",
    ]);
    let response = base.with_statement(&fill(t, &[("o", &other.to_string())]))?.response;
    Some(Variant { gold: "A".to_string(), response })
}

/// The right option named in words, without a box.
fn choice_restated(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let letter = gold_letter(&base.gold)?;
    let t = rng.pick(&["The correct option is ({l}).", "So I choose option {l}.", "Option ({l}) is correct."]);
    base.with_statement(&fill(t, &[("l", &letter.to_string())]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::example;

    const CHOICE_C: &str = "Only the third graph has a hole at x = 1.\n\nThe correct answer is $\\boxed{C}$.";

    #[test]
    fn article_a_asks_for_a_and_names_another_option() {
        let base = Base::new("example", "C", CHOICE_C).expect("a right choice");
        let v = article_a(&base, &mut Rng::new(crate::mutation::SEED)).expect("applies to a choice");
        assert_eq!(v.gold, "A");
        assert!(v.response.contains("answer is a "), "{}", v.response);
        assert!(v.response.contains("(C)") && !v.response.contains("\\boxed"), "{}", v.response);
    }

    #[test]
    fn choice_restated_names_the_option_without_a_box() {
        let (_, v) = example(choice_restated, "(C)", CHOICE_C);
        assert!(v.contains(" C") || v.contains("(C)"), "{v}");
        assert!(!v.contains("\\boxed"), "{v}");
        assert_eq!(gold_letter("\\text{(B)}"), Some('B'));
        assert_eq!(gold_letter("42"), None);
    }
}
