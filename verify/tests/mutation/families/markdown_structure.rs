//! The answer inside Markdown and HTML structure that chat interfaces render: a blockquote, a
//! collapsible `<details>` block, a nested list, a horizontal rule and a footer after the answer,
//! which must stay right; and, after the right answer, a horizontal rule and a `Summary` section
//! that states another value, or a collapsible block that holds another final answer, which must
//! be wrong.

use crate::mutation::{fill, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "markdown_structure",
    split: Split::HeldOut,
    why: "named by no class of issue 30 nor written by the 35 families before it (answer_layout writes tables, \
          headings and label lines, recap_table tables and bullets of intermediate values; blockquotes, \
          <details> blocks, nested lists and rule-separated summaries are new): added on 2026-11-27 (third set) \
          and scored first-seen on a3fc502, before any fix for it: held out",
    operators: &[
        Operator { name: "blockquote_answer", expect: Expect::Right, apply: blockquote_answer },
        Operator { name: "details_answer", expect: Expect::Right, apply: details_answer },
        Operator { name: "nested_list_answer", expect: Expect::Right, apply: nested_list_answer },
        Operator { name: "rule_then_footer", expect: Expect::Right, apply: rule_then_footer },
        Operator { name: "rule_then_summary_other", expect: Expect::Wrong, apply: rule_then_summary_other },
        Operator { name: "details_other_answer", expect: Expect::Wrong, apply: details_other_answer },
    ],
};

fn values<'a>(base: &'a Base, x: &'a str, y: &'a str) -> [(&'static str, &'a str); 3] {
    [("a", base.answer.as_str()), ("x", x), ("y", y)]
}

/// The final statement as a blockquote.
fn blockquote_answer(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "> **Final answer:** $\\boxed{{a}}$",
        "> The answer is {x}.",
        "> $\\boxed{{a}}$",
        "> **Answer**\n>\n> {x}",
    ]);
    let x = base.math();
    base.with_statement(&fill(t, &values(base, &x, "")))
}

/// The final statement inside a collapsible `<details>` block.
fn details_answer(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "<details>\n<summary>Final answer</summary>\n\n$\\boxed{{a}}$\n\n</details>",
        "<details><summary>Click to reveal the answer</summary>\n\nThe answer is **{x}**.\n</details>",
        "<details open>\n<summary><b>Answer</b></summary>\n\n{x}\n\n</details>",
    ]);
    let x = base.math();
    base.with_statement(&fill(t, &values(base, &x, "")))
}

/// The final statement as an item of a nested list.
fn nested_list_answer(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "- **Result**\n  - Final answer: {x}\n  - Checked against every condition of the problem",
        "1. Summary of the solution\n   - the derivation is above\n   - **the answer is $\\boxed{{a}}$**",
        "* Conclusion:\n    * Answer: {x}",
    ]);
    let x = base.math();
    base.with_statement(&fill(t, &values(base, &x, "")))
}

/// The answer, a horizontal rule and a footer without a value.
fn rule_then_footer(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "---\n\n*Let me know if you'd like a more detailed walk-through of any step.*",
        "***\n\n_Solution written step by step; every quantity above is exact._",
        "---\n\n**Key takeaway:** set up the equations carefully before computing.",
        "___\n\n> *Tip:* re-read the question once the computation is done.",
    ]);
    base.append(t, true)
}

/// The answer, a horizontal rule and a summary section that states another value.
fn rule_then_summary_other(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "---\n\n### Summary\n\nThe answer is {y}.",
        "---\n\n**Summary:** putting the steps together, the final value is {y}.",
        "***\n\n## TL;DR\n\n{y}",
        "---\n\n#### Summary\n- Setup: translate the problem into equations\n- Result: {y}",
    ]);
    let y = base.alt_math();
    base.append(&fill(t, &values(base, "", &y)), true)
}

/// The answer, then a collapsible block that holds another final answer.
fn details_other_answer(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "<details>\n<summary>Final answer</summary>\n\n$\\boxed{{b}}$\n\n</details>",
        "<details><summary>Show the answer</summary>\n\nThe answer is **{y}**.\n</details>",
        "<details>\n<summary>Answer (after double-checking)</summary>\n\n{y}\n\n</details>",
    ]);
    let y = base.alt_math();
    base.append(&fill(t, &[("b", base.alternative.as_str()), ("y", &y)]), true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, statement_of_27, BOXED_27};

    fn added(op: fn(&Base, &mut Rng) -> Option<Variant>) -> String {
        let (base, v) = example(op, "27", BOXED_27);
        assert!(v.starts_with(&base.response), "{v}");
        v[base.response.len()..].trim().to_string()
    }

    #[test]
    fn blockquote_answer_quotes_the_answer() {
        let s = statement_of_27(blockquote_answer);
        assert!(s.starts_with("> ") && s.contains("27") && !s.contains("28"), "{s}");
    }

    #[test]
    fn details_answer_folds_the_answer() {
        let s = statement_of_27(details_answer);
        assert!(s.starts_with("<details") && s.ends_with("</details>") && s.contains("27"), "{s}");
    }

    #[test]
    fn nested_list_answer_indents_the_answer() {
        let s = statement_of_27(nested_list_answer);
        let line = s.lines().find(|l| l.contains("27")).expect("the answer's line");
        assert!(line.starts_with("  ") && !s.contains("28"), "{s}");
    }

    #[test]
    fn rule_then_footer_adds_no_value() {
        let a = added(rule_then_footer);
        assert!(["---", "***", "___"].iter().any(|r| a.starts_with(r)), "{a}");
        assert!(!a.bytes().any(|b| b.is_ascii_digit()), "{a}");
    }

    #[test]
    fn rule_then_summary_other_states_another_value() {
        let a = added(rule_then_summary_other);
        assert!(["---", "***"].iter().any(|r| a.starts_with(r)) && a.contains("$28$") && !a.contains("27"), "{a}");
    }

    #[test]
    fn details_other_answer_folds_another_value() {
        let a = added(details_other_answer);
        assert!(a.starts_with("<details") && a.contains("28") && !a.contains("27"), "{a}");
    }
}
