//! Boxes that are not the response's answer (issue 30, class 2): the right value boxed in a
//! friend's answer, a format example or a comment while the response's own answer is another
//! value, or a box followed by a statement that the problem was not solved; against them, a wrong
//! value attributed to someone else after the response's own right answer.

use crate::mutation::{fill, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "foreign_box",
    split: Split::Dev,
    why: "issue 30 class 2, named with examples: developed against",
    operators: &[
        Operator { name: "attributed_box", expect: Expect::Wrong, apply: attributed_box },
        Operator { name: "format_example_box", expect: Expect::Wrong, apply: format_example_box },
        Operator { name: "commented_box", expect: Expect::Wrong, apply: commented_box },
        Operator { name: "unsolved_after_box", expect: Expect::Wrong, apply: unsolved_after_box },
        Operator { name: "attributed_wrong_value", expect: Expect::Right, apply: attributed_wrong_value },
    ],
};

/// The final statement becomes: someone else's box holds the right value, the response's own
/// answer is another.
fn attributed_box(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "A friend got $\\boxed{{x}}$, but I get {y}.",
        "The answer key says $\\boxed{{x}}$; my own computation gives {y}.",
        "Many students answer $\\boxed{{x}}$ here, which is a common mistake: the value is {y}.",
        "My classmate's answer was \\boxed{{x}}. I disagree and get {y}.",
    ]);
    base.with_statement(&fill(t, &[("x", &base.answer), ("y", &base.alt_math())]))
}

/// The response answers another value, then quotes a format instruction whose example box holds
/// the right value.
fn format_example_box(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let own = rng.pick(&["So the answer is {y}.", "Hence the value is {y}.", "The result is {y}."]);
    let quote = rng.pick(&[
        "(The problem says: \"put your final answer in a box, e.g. $\\boxed{{x}}$\".)",
        "Example of the required format: `\\boxed{{x}}`",
        "> Sample output from the instructions: \\boxed{{x}}",
    ]);
    let values = [("x", base.answer.as_str()), ("y", &base.alt_math())];
    base.with_statement(&format!("{}\n\n{}", fill(own, &values), fill(quote, &values)))
}

/// The response answers another value, then a comment holds a box with the right value.
fn commented_box(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let own = rng.pick(&["So the answer is {y}.", "Thus we get {y}.", "The value is {y}."]);
    let comment =
        rng.pick(&["% earlier draft: \\boxed{{x}}", "<!-- \\boxed{{x}} -->", "// old answer, ignore: \\boxed{{x}}"]);
    let values = [("x", base.answer.as_str()), ("y", &base.alt_math())];
    base.with_statement(&format!("{}\n{}", fill(own, &values), fill(comment, &values)))
}

/// After the box, the response says it did not solve the problem.
fn unsolved_after_box(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "Actually, I was not able to solve this problem; the box above is only a placeholder.",
        "I could not complete the solution, so the value above is a guess, not an answer.",
        "Note: this problem remains unsolved; disregard the boxed value.",
    ]);
    base.boxed.then(|| base.append(t, true))?
}

/// After the right answer, a wrong value attributed to someone else.
fn attributed_wrong_value(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "(A common wrong answer is {y}, from forgetting a case.)",
        "A friend got {y} here, but that misses a step; the answer stays {x}.",
        "Some solutions online give {y}, which double-counts; ours is {x}.",
    ]);
    base.append(&fill(t, &[("x", &base.math()), ("y", &base.alt_math())]), true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, BOXED_27};

    #[test]
    fn attributed_box_boxes_the_answer_and_states_another() {
        let (base, v) = example(attributed_box, "27", BOXED_27);
        assert!(v.starts_with(base.head()) && v.contains("\\boxed{27}") && v.ends_with("$28$."), "{v}");
    }

    #[test]
    fn format_example_box_quotes_the_answer_after_another() {
        let (_, v) = example(format_example_box, "27", BOXED_27);
        let (own, quote) = (v.find("$28$").expect("own value"), v.rfind("\\boxed{27}").expect("quoted box"));
        assert!(own < quote, "{v}");
    }

    #[test]
    fn commented_box_comments_out_the_answer() {
        let (_, v) = example(commented_box, "27", BOXED_27);
        let last = v.lines().last().unwrap_or_default();
        assert!(v.contains("$28$") && last.contains("\\boxed{27}") && !last.starts_with("\\boxed"), "{v}");
    }

    #[test]
    fn unsolved_after_box_keeps_the_box_and_disowns_it() {
        let (base, v) = example(unsolved_after_box, "27", BOXED_27);
        assert!(v.starts_with(&base.response) && v.len() > base.response.len() + 20, "{v}");
    }

    #[test]
    fn attributed_wrong_value_follows_the_right_answer() {
        let (base, v) = example(attributed_wrong_value, "27", BOXED_27);
        assert!(v.starts_with(&base.response) && v[base.response.len()..].contains("$28$"), "{v}");
    }
}
