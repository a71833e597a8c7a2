//! A recap after the boxed answer, as models close a long solution: a results table or a bullet
//! list of the intermediate values of the reasoning, with no answer row or with a last row that
//! restates the answer, which must stay right; and the same table or list whose last line states
//! another value as the final one (`| Total | 28 |`, `- Final answer: 28`), which must be wrong.

use crate::mutation::{base::differs, fill, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "recap_table",
    split: Split::HeldOut,
    why: "named by no class of issue 30 nor written by the 29 families before it (answer_layout replaces the \
          final statement with a table; numbers_after_answer recaps in one sentence; here a table or a list \
          of intermediate values follows the box): added on 2026-11-27 (second set) and scored first-seen \
          on 42b6fdd, before any fix for it: held out",
    operators: &[
        Operator { name: "intermediate_table", expect: Expect::Right, apply: intermediate_table },
        Operator { name: "table_answer_row", expect: Expect::Right, apply: table_answer_row },
        Operator { name: "bullets_end_on_answer", expect: Expect::Right, apply: bullets_end_on_answer },
        Operator { name: "table_other_final", expect: Expect::Wrong, apply: table_other_final },
        Operator { name: "bullets_other_final", expect: Expect::Wrong, apply: bullets_other_final },
    ],
};

/// Two integers the reasoning wrote (not the answer, and each wrong for the gold), in order.
fn intermediates(base: &Base) -> Option<(String, String)> {
    let mut found: Vec<&str> = Vec::new();
    for token in base.head().split(|c: char| !c.is_ascii_digit()).filter(|t| !t.is_empty() && t.len() <= 6) {
        if !found.contains(&token) && token != base.answer && differs(&base.gold, token) {
            found.push(token);
        }
        if found.len() == 2 {
            return Some((found[0].to_string(), found[1].to_string()));
        }
    }
    None
}

/// A table of the two intermediate values, with a last row `{last}` when given.
fn table(base: &Base, last: Option<(&str, &str)>, rng: &mut Rng) -> Option<String> {
    let (a, b) = intermediates(base)?;
    let (head, rows) = rng.pick(&[
        ("| Quantity | Value |", ["first intermediate result", "second intermediate result"]),
        ("| Step | Result |", ["Step 1", "Step 2"]),
        ("| Stage | Value found |", ["after the first step", "after the second step"]),
    ]);
    let title = rng.pick(&["**Summary of the computation:**", "Recap:", "### Results", "For reference:"]);
    let mut text = format!("{title}\n\n{head}\n|---|---|\n| {} | ${a}$ |\n| {} | ${b}$ |", rows[0], rows[1]);
    if let Some((label, value)) = last {
        text.push_str(&format!("\n| {label} | {value} |"));
    }
    Some(text)
}

/// A bullet list of the two intermediate values, ending on `{v}`.
fn bullets(base: &Base, value: &str, rng: &mut Rng) -> Option<String> {
    let (a, b) = intermediates(base)?;
    let t = rng.pick(&[
        "Recap:\n- first we found ${a}$\n- then ${b}$\n- final answer: {v}",
        "**Summary**\n* Intermediate value: ${a}$\n* Next value: ${b}$\n* Result: {v}",
        "To recap the steps:\n1. ${a}$\n2. ${b}$\n3. Total: {v}",
        "Key numbers:\n- ${a}$ (from the first step)\n- ${b}$ (from the second step)\n- so the result is {v}",
    ]);
    Some(fill(t, &[("a", &a), ("b", &b), ("v", value)]))
}

/// A table of intermediate values after the answer, with no answer row.
fn intermediate_table(base: &Base, rng: &mut Rng) -> Option<Variant> {
    base.append(&table(base, None, rng)?, true)
}

/// A table of intermediate values after the answer, whose last row restates the answer.
fn table_answer_row(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let label = rng.pick(&["**Final answer**", "Total", "Result", "Answer"]);
    base.append(&table(base, Some((label, &base.math())), rng)?, true)
}

/// A bullet recap after the answer whose last item restates the answer.
fn bullets_end_on_answer(base: &Base, rng: &mut Rng) -> Option<Variant> {
    base.append(&bullets(base, &base.math(), rng)?, true)
}

/// A table of intermediate values after the answer, whose last row states another final value.
fn table_other_final(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let label = rng.pick(&["**Final answer**", "Total", "Result", "Answer"]);
    base.append(&table(base, Some((label, &base.alt_math())), rng)?, true)
}

/// A bullet recap after the answer whose last item states another final value.
fn bullets_other_final(base: &Base, rng: &mut Rng) -> Option<Variant> {
    base.append(&bullets(base, &base.alt_math(), rng)?, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, BOXED_27};

    fn added(op: fn(&Base, &mut Rng) -> Option<Variant>) -> String {
        let (base, v) = example(op, "27", BOXED_27);
        assert!(v.starts_with(&base.response), "{v}");
        v[base.response.len()..].trim().to_string()
    }

    #[test]
    fn intermediates_are_the_reasonings_other_numbers() {
        let (base, _) = example(intermediate_table, "27", BOXED_27);
        assert_eq!(intermediates(&base), Some(("20".to_string(), "7".to_string())));
    }

    #[test]
    fn intermediate_table_lists_values_but_not_the_answer() {
        let a = added(intermediate_table);
        assert!(a.contains("| $20$ |") && a.contains("| $7$ |") && a.contains("|---|"), "{a}");
        assert!(!a.contains("27") && !a.contains("28"), "{a}");
    }

    #[test]
    fn table_answer_row_ends_on_the_answer() {
        let a = added(table_answer_row);
        assert!(a.contains("| $20$ |") && a.ends_with("| $27$ |") && !a.contains("28"), "{a}");
    }

    #[test]
    fn bullets_end_on_answer_ends_on_the_answer() {
        let a = added(bullets_end_on_answer);
        assert!(a.contains("$20$") && a.ends_with("$27$") && !a.contains("28"), "{a}");
    }

    #[test]
    fn table_other_final_ends_on_another_value() {
        let a = added(table_other_final);
        assert!(a.contains("| $7$ |") && a.ends_with("| $28$ |") && !a.contains("27"), "{a}");
    }

    #[test]
    fn bullets_other_final_ends_on_another_value() {
        let a = added(bullets_other_final);
        assert!(a.contains("$7$") && a.ends_with("$28$") && !a.contains("27"), "{a}");
    }
}
