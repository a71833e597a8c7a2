//! The answer set in emphasis (Markdown bold or italics, `\textbf{}`, `\mathbf{}`, `\underline{}`)
//! as the final statement, then a hedge that offers another value (`**27**, or perhaps 28`, `*27*
//! (maybe 28)`, `$\underline{27}$ (or $28$)`); against them, the emphasized answer alone, with a
//! restatement (`**27** (twenty-seven)`) or in a sentence. Emphasis other than bold is not a
//! marker the contract lists: the right forms measure whether it still reads the sentence.

use crate::mutation::{fill, numerals, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "emphasis_hedge",
    split: Split::HeldOut,
    why: "named by no class of issue 30 nor written by the 29 families before it (answer_markup writes \
          underscore and HTML bold; italics, \\textbf, \\mathbf and \\underline are new): added on 2026-11-27 \
          (second set) and scored first-seen on 42b6fdd, before any fix for it: held out",
    operators: &[
        Operator { name: "bold_then_hedge", expect: Expect::Wrong, apply: bold_then_hedge },
        Operator { name: "italic_then_hedge", expect: Expect::Wrong, apply: italic_then_hedge },
        Operator { name: "latex_emphasis_hedge", expect: Expect::Wrong, apply: latex_emphasis_hedge },
        Operator { name: "bold_restated", expect: Expect::Right, apply: bold_restated },
        Operator { name: "italic_answer", expect: Expect::Right, apply: italic_answer },
        Operator { name: "latex_emphasis", expect: Expect::Right, apply: latex_emphasis },
    ],
};

/// A value as a model writes it inside Markdown emphasis: bare when it is plain text (`27`,
/// `0.5`), in inline math when it holds LaTeX.
fn shown(value: &str) -> String {
    if value.contains(['\\', '{', '^', '_', '$']) {
        format!("${value}$")
    } else {
        value.to_string()
    }
}

/// A value wrapped in a LaTeX emphasis command (text commands only around plain text).
fn emphasized(value: &str, rng: &mut Rng) -> String {
    let plain = !value.contains(['\\', '{', '^', '_']);
    let command = if plain {
        rng.pick(&["\\textbf", "\\mathbf", "\\underline", "\\boldsymbol", "\\underline{\\underline"])
    } else {
        rng.pick(&["\\mathbf", "\\underline", "\\boldsymbol", "\\underline{\\underline"])
    };
    if *command == "\\underline{\\underline" {
        format!("\\underline{{\\underline{{{value}}}}}")
    } else {
        format!("{command}{{{value}}}")
    }
}

/// The answer in bold, then a hedge with another value.
fn bold_then_hedge(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "**{x}**, or perhaps {y}",
        "The answer is **{x}** (maybe {y}).",
        "**Answer: {x}**, though {y} is also possible.",
        "**{x}** — if not, {y}",
        "Final answer: **{x}** (possibly **{y}**)",
    ]);
    base.with_statement(&fill(t, &[("x", &shown(&base.answer)), ("y", &shown(&base.alternative))]))
}

/// The answer in italics, then a hedge with another value.
fn italic_then_hedge(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "*{x}* (maybe {y})",
        "_{x}_, or possibly {y}",
        "The result is *{x}*, perhaps {y}.",
        "***{x}*** or {y}",
        "Answer: *{x}* (could also be *{y}*)",
    ]);
    base.with_statement(&fill(t, &[("x", &shown(&base.answer)), ("y", &shown(&base.alternative))]))
}

/// The answer in a LaTeX emphasis command, then a hedge with another value.
fn latex_emphasis_hedge(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "${e}$, or perhaps ${b}$",
        "${e}$ (maybe ${b}$)",
        "The answer is ${e}$, though ${b}$ is possible.",
        "Final answer: ${e}$ or ${b}$",
    ]);
    let e = emphasized(&base.answer, rng);
    base.with_statement(&fill(t, &[("e", &e), ("b", &base.alternative)]))
}

/// The answer in bold, alone, in a sentence or with a restatement that gives the same value.
fn bold_restated(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let x = shown(&base.answer);
    if let Some(w) = base.integer.and_then(numerals::words).filter(|_| rng.below(2) == 0) {
        let t = rng.pick(&["**{x}** ({w})", "**{x}** (that is, {w})", "The answer is **{x}** ({w})."]);
        return base.with_statement(&fill(t, &[("x", &x), ("w", &w)]));
    }
    let t = rng.pick(&["**{x}**", "The answer is **{x}**.", "**Final answer: {x}**", "***{x}***", "**{x}** in total"]);
    base.with_statement(&fill(t, &[("x", &x)]))
}

/// The answer in italics, in an answer line or a sentence.
fn italic_answer(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&["The answer is *{x}*.", "So we get _{x}_.", "Final answer: *{x}*", "*Answer:* {x}"]);
    base.with_statement(&fill(t, &[("x", &shown(&base.answer))]))
}

/// The answer in a LaTeX emphasis command, alone, in a sentence or in the box.
fn latex_emphasis(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&["${e}$", "The answer is ${e}$.", "Final answer: ${e}$", "$\\boxed{{e}}$"]);
    let e = emphasized(&base.answer, rng);
    base.with_statement(&fill(t, &[("e", &e)]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::statement_of_27;

    const LATEX: [&str; 4] = ["\\textbf{", "\\mathbf{", "\\underline{", "\\boldsymbol{"];

    #[test]
    fn bold_then_hedge_bolds_the_answer_and_offers_another() {
        let s = statement_of_27(bold_then_hedge);
        assert!(s.contains("**") && s.contains("27") && s.contains("28") && !s.contains("\\boxed"), "{s}");
    }

    #[test]
    fn italic_then_hedge_italicizes_the_answer_and_offers_another() {
        let s = statement_of_27(italic_then_hedge);
        assert!((s.contains("*27*") || s.contains("_27_")) && s.contains("28"), "{s}");
    }

    #[test]
    fn latex_emphasis_hedge_wraps_the_answer_and_offers_another() {
        let s = statement_of_27(latex_emphasis_hedge);
        assert!(LATEX.iter().any(|c| s.contains(&format!("{c}27}}"))) && s.contains("$28$"), "{s}");
    }

    #[test]
    fn bold_restated_names_no_other_value() {
        let s = statement_of_27(bold_restated);
        assert!(s.contains("**27**") || s.contains("**Final answer: 27**") || s.contains("***27***"), "{s}");
        assert!(!s.contains("28") && !s.contains("eight"), "{s}");
    }

    #[test]
    fn italic_answer_italicizes_only_the_answer() {
        let s = statement_of_27(italic_answer);
        assert!(s.contains('*') || s.contains('_'), "{s}");
        assert!(s.contains("27") && !s.contains("28") && !s.contains("**"), "{s}");
    }

    #[test]
    fn latex_emphasis_wraps_only_the_answer() {
        let s = statement_of_27(latex_emphasis);
        assert!(LATEX.iter().any(|c| s.contains(&format!("{c}27}}"))) && !s.contains("28"), "{s}");
    }

    #[test]
    fn emphasis_keeps_latex_answers_in_math() {
        assert_eq!(shown("\\frac{1}{2}"), "$\\frac{1}{2}$");
        assert_eq!(shown("27"), "27");
        let e = emphasized("\\frac{1}{2}", &mut Rng::new(1));
        assert!(!e.starts_with("\\textbf") && e.contains("\\frac{1}{2}"), "{e}");
    }
}
