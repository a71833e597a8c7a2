//! The answer in another layout than a box or a sentence: a Markdown table row (`| Answer | 27
//! |`), a heading (`### Answer: 27`), a frame of another command (`\fbox{27}`, `\framebox{27}`), a
//! label line (`Final: 27`, a Markdown definition list); against them, a table or a list that
//! gives two different answers.

use crate::mutation::{fill, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "answer_layout",
    split: Split::HeldOut,
    why: "named by no class of issue 30 or of the fixes under way (tables, headings, \\fbox and label \
          lines are none of the answer markup, structured fields or tags): added on 2026-11-27 and \
          scored first-seen on 07ad560, before any fix for it: held out",
    operators: &[
        Operator { name: "table_row", expect: Expect::Right, apply: table_row },
        Operator { name: "heading", expect: Expect::Right, apply: heading },
        Operator { name: "frame_box", expect: Expect::Right, apply: frame_box },
        Operator { name: "label_line", expect: Expect::Right, apply: label_line },
        Operator { name: "table_two_answers", expect: Expect::Wrong, apply: table_two_answers },
        Operator { name: "list_two_answers", expect: Expect::Wrong, apply: list_two_answers },
    ],
};

/// The final statement becomes a Markdown table whose answer row holds the answer.
fn table_row(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "| Quantity | Value |\n|---|---|\n| Answer | {x} |",
        "| **Final answer** | {x} |\n|---|---|",
        "| Final Answer |\n|:---:|\n| {x} |",
        "Summary:\n\n| | |\n|---|---|\n| Result | {x} |",
    ]);
    base.with_statement(&fill(t, &[("x", &base.math())]))
}

/// The final statement becomes a Markdown heading with the answer, or a heading above it.
fn heading(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "### Answer: {x}",
        "## Final Answer\n\n{x}",
        "# Answer\n{x}",
        "### Final answer\n\n$$\n{a}\n$$",
        "#### Result: {x}",
    ]);
    base.with_statement(&fill(t, &[("x", &base.math()), ("a", &base.answer)]))
}

/// The box replaced, in place, by a frame of another command.
fn frame_box(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&["\\fbox{{a}}", "\\framebox{{a}}", "\\fbox{ {a} }", "\\boxed{\\boxed{{a}}}"]);
    base.boxed.then(|| base.replace_answer(&fill(t, &[("a", &base.answer)])))?
}

/// The final statement becomes a label line or a definition-list entry.
fn label_line(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "Final: {x}",
        "Result — {x}",
        "Solution: {x}",
        "Answer\n: {x}",
        "Final result = {x}",
        "Answer ⟶ {x}",
    ]);
    base.with_statement(&fill(t, &[("x", &base.math())]))
}

/// The final statement becomes a table with two rows that answer two different values.
fn table_two_answers(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "| Case | Answer |\n|---|---|\n| first reading | {x} |\n| second reading | {y} |",
        "| Quantity | Value |\n|---|---|\n| Answer | {x} |\n| Answer (alternative) | {y} |",
        "| Method | Result |\n|---|---|\n| Direct count | {x} |\n| Complementary count | {y} |",
        "| Final answer |\n|---|\n| {x} |\n| {y} |",
    ]);
    base.with_statement(&fill(t, &[("x", &base.math()), ("y", &base.alt_math())]))
}

/// The final statement becomes a list with two different answers.
fn list_two_answers(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "**Final answers:**\n- {x}\n- {y}",
        "Answer:\n1. {x}\n2. {y}",
        "- Answer (first interpretation): {x}\n- Answer (second interpretation): {y}",
        "### Answer\n\n* {x}\n* {y}",
    ]);
    base.with_statement(&fill(t, &[("x", &base.math()), ("y", &base.alt_math())]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, BOXED_27};

    fn statement(op: fn(&Base, &mut Rng) -> Option<Variant>) -> String {
        let (base, v) = example(op, "27", BOXED_27);
        assert!(v.starts_with(base.head()) && !v.contains("\\boxed"), "{v}");
        v[base.head().len()..].trim().to_string()
    }

    #[test]
    fn table_row_puts_the_answer_in_a_table() {
        let s = statement(table_row);
        assert!(s.contains("| $27$ |") && s.contains("|---"), "{s}");
    }

    #[test]
    fn heading_puts_the_answer_under_or_in_a_heading() {
        let s = statement(heading);
        assert!(s.starts_with('#') && s.contains("27"), "{s}");
    }

    #[test]
    fn frame_box_frames_the_answer_in_place() {
        let (base, v) = example(frame_box, "27", BOXED_27);
        let frames = ["\\fbox{27}", "\\framebox{27}", "\\fbox{ 27 }", "\\boxed{\\boxed{27}}"];
        assert!(v.starts_with(base.head()) && frames.iter().any(|f| v.contains(f)), "{v}");
        assert_ne!(v, base.response);
    }

    #[test]
    fn label_line_labels_the_answer() {
        let s = statement(label_line);
        assert!(s.ends_with("$27$") && !s.starts_with('$'), "{s}");
    }

    #[test]
    fn table_two_answers_has_two_answer_rows() {
        let s = statement(table_two_answers);
        assert!(s.contains("| $27$ |") && s.contains("| $28$ |"), "{s}");
    }

    #[test]
    fn list_two_answers_lists_both() {
        let s = statement(list_two_answers);
        let lines: Vec<&str> = s.lines().collect();
        assert!(lines.iter().any(|l| l.ends_with("$27$")) && lines.iter().any(|l| l.ends_with("$28$")), "{s}");
    }
}
