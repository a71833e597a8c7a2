//! The answer inside a list of values written in prose: a final sentence that lists the
//! candidates and picks one (`The possible values are 24, 26 and 27; the answer is the largest,
//! 27.`, `Of 27, 28 and 31, only 27 satisfies every condition`), or a box followed by the
//! candidates the response rejected, which must stay right; and a final sentence that leaves the
//! choice open (`the answer is one of 26, 27 or 30`) or lists several solutions for a question
//! with one answer, which must be wrong.

use crate::mutation::base::differs;
use crate::mutation::{fill, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "answer_inside_prose_list",
    split: Split::HeldOut,
    why: "named by no class of issue 30 nor written by the 35 families before it (answer_layout and recap_table \
          write Markdown tables and bullet lists, multi_part labelled parts; here the values are a list inside \
          one prose sentence): added on 2026-11-27 (third set) and scored first-seen on a3fc502, before any \
          fix for it: held out",
    operators: &[
        Operator { name: "picked_from_list", expect: Expect::Right, apply: picked_from_list },
        Operator { name: "rejected_listed_after", expect: Expect::Right, apply: rejected_listed_after },
        Operator { name: "one_of_list", expect: Expect::Wrong, apply: one_of_list },
        Operator { name: "several_solutions", expect: Expect::Wrong, apply: several_solutions },
    ],
};

/// Two values other than the answer, in inline math: for an integer, two of its neighbours
/// (below it when `below`, above it otherwise); else the alternative and another fixed value
/// the verifier finds different from the gold.
fn others(base: &Base, below: bool) -> Option<(String, String)> {
    if let Some(n) = base.integer {
        let (a, b) = if below { (n - 3, n - 1) } else { (n + 1, n + 4) };
        return Some((format!("${a}$"), format!("${b}$")));
    }
    let second = ["13", "\\frac{2}{9}", "-4", "0.25", "7"]
        .into_iter()
        .find(|y| *y != base.alternative && *y != base.answer && differs(&base.gold, y))?;
    Some((base.alt_math(), format!("${second}$")))
}

/// A final sentence that lists the candidates and picks the answer.
fn picked_from_list(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let x = base.math();
    let t = match base.integer {
        Some(_) if rng.below(2) == 0 => {
            let (a, b) = others(base, true)?;
            let t = rng.pick(&[
                "The possible values are {a}, {b} and {x}; the answer is the largest, {x}.",
                "So the candidates are {a}, {b} and {x}, and since we want the maximum, the answer is $\\boxed{{n}}$.",
                "This leaves {a}, {b} or {x}; taking the greatest, we get {x}.",
            ]);
            fill(t, &[("a", &a), ("b", &b), ("x", &x), ("n", &base.answer)])
        }
        _ => {
            let (a, b) = others(base, false)?;
            let t = rng.pick(&[
                "Of the values {x}, {a} and {b}, only {x} satisfies every condition, so the answer is {x}.",
                "The candidates were {a}, {x} and {b}; checking each against the conditions leaves {x}. The answer is $\\boxed{{n}}$.",
                "Among {x}, {a} and {b}, the smallest that works is {x}, so that is our answer.",
            ]);
            fill(t, &[("a", &a), ("b", &b), ("x", &x), ("n", &base.answer)])
        }
    };
    base.with_statement(&t)
}

/// The answer, then a sentence naming the candidates the response rejected.
fn rejected_listed_after(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let (a, b) = others(base, false)?;
    let t = rng.pick(&[
        "(The other candidates, {a} and {b}, fail the conditions and were rejected.)",
        "We discarded {a} and {b} earlier because they violate the constraints of the problem.",
        "Note that {a} and {b} also came up along the way, but neither satisfies all the conditions.",
        "The values {a} and {b} are ruled out, since each breaks one of the given conditions.",
    ]);
    base.append(&fill(t, &[("a", &a), ("b", &b)]), true)
}

/// A final sentence that lists candidates, the answer among them, without choosing.
fn one_of_list(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let (a, b) = others(base, false)?;
    let t = rng.pick(&[
        "The answer is one of {a}, {x} or {b}.",
        "So the answer must be {x}, {a} or {b}, depending on which condition is binding.",
        "The possible values are {a}, {x} and {b}; any of them fits what we derived.",
        "Therefore the answer is either {x} or {a}.",
        "This narrows it down to {x}, {a} and {b}; the answer is among these.",
    ]);
    base.with_statement(&fill(t, &[("a", &a), ("b", &b), ("x", &base.math())]))
}

/// A final sentence that gives several solutions to a question with one answer.
fn several_solutions(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let (a, _) = others(base, false)?;
    let t = rng.pick(&[
        "The values that satisfy all the conditions are {x} and {a}.",
        "Both {x} and {a} satisfy the equation, so these are the answers.",
        "Hence the solutions are {x} and {a}.",
        "So the answers are {a} and {x}.",
    ]);
    base.with_statement(&fill(t, &[("a", &a), ("x", &base.math())]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, statement_of_27, BOXED_27};

    #[test]
    fn picked_from_list_lists_three_values_and_picks_the_answer() {
        let s = statement_of_27(picked_from_list);
        let values = ["$24$", "$26$", "$28$", "$31$"];
        assert!(values.iter().filter(|v| s.contains(*v)).count() == 2, "{s}");
        assert!(s.matches("27").count() >= 2, "{s}");
    }

    #[test]
    fn picked_from_list_works_for_a_non_integer() {
        let (_, v) = example(picked_from_list, "\\frac{1}{2}", "Half of one is a half.\n\nSo $\\boxed{\\frac{1}{2}}$.");
        assert!(v.matches("\\frac{1}{2}").count() >= 2 && v.contains("$7$") && v.contains("$13$"), "{v}");
    }

    #[test]
    fn rejected_listed_after_keeps_the_box_and_names_rejected_values() {
        let (base, v) = example(rejected_listed_after, "27", BOXED_27);
        let a = &v[base.response.len()..];
        assert!(v.starts_with(&base.response) && a.contains("$28$") && a.contains("$31$"), "{v}");
    }

    #[test]
    fn one_of_list_leaves_the_choice_open() {
        let s = statement_of_27(one_of_list);
        assert!(s.contains("$27$") && s.contains("$28$") && !s.contains("\\boxed"), "{s}");
    }

    #[test]
    fn several_solutions_gives_two_values() {
        let s = statement_of_27(several_solutions);
        assert!(s.contains("$27$") && s.contains("$28$"), "{s}");
    }
}
