//! Answer markup the contract does not list (issue 30, class 11, named loosely): an answer tag
//! of another name, bold written with underscores, HTML bold; against them, the same markup
//! holding two values.

use crate::mutation::{fill, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "answer_markup",
    split: Split::HeldOut,
    why: "issue 30 class 11 names `<final_answer>` and underscore bold in passing: held out, with \
          tag names and markup it does not name",
    operators: &[
        Operator { name: "other_tag_name", expect: Expect::Right, apply: other_tag_name },
        Operator { name: "underscore_bold", expect: Expect::Right, apply: underscore_bold },
        Operator { name: "html_bold", expect: Expect::Right, apply: html_bold },
        Operator { name: "tag_two_values", expect: Expect::Wrong, apply: tag_two_values },
        Operator { name: "underscore_bold_hedge", expect: Expect::Wrong, apply: underscore_bold_hedge },
    ],
};

const TAGS: &[&str] = &["final_answer", "result", "solution", "ans", "final"];

fn other_tag_name(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let tag = rng.pick(TAGS);
    base.with_statement(&format!("<{tag}>{}</{tag}>", base.answer))
}

fn underscore_bold(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&["__{x}__", "__${x}$__", "The value we want is __{x}__."]);
    base.with_statement(&fill(t, &[("x", &base.answer)]))
}

fn html_bold(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&["<b>{x}</b>", "<strong>{x}</strong>", "The result: <b>{x}</b>"]);
    base.with_statement(&fill(t, &[("x", &base.answer)]))
}

fn tag_two_values(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let tag = rng.pick(TAGS);
    let t = rng.pick(&["<{t}>{x}</{t}>\n<{t}>{y}</{t}>", "<{t}>{x} or {y}</{t}>", "<{t}>{x}; alternatively {y}</{t}>"]);
    base.with_statement(&fill(t, &[("t", tag), ("x", &base.answer), ("y", &base.alternative)]))
}

fn underscore_bold_hedge(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&["__{x}__ or __{y}__", "__{x}__ (maybe __{y}__)", "__{x}, possibly {y}__"]);
    base.with_statement(&fill(t, &[("x", &base.answer), ("y", &base.alternative)]))
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
    fn other_tag_name_tags_the_answer() {
        let s = statement(other_tag_name);
        assert!(s.starts_with('<') && s.contains(">27</") && !s.starts_with("<answer>"), "{s}");
    }

    #[test]
    fn underscore_bold_bolds_the_answer() {
        let s = statement(underscore_bold);
        assert!(s.contains("__27__") || s.contains("__$27$__"), "{s}");
    }

    #[test]
    fn html_bold_bolds_the_answer() {
        let s = statement(html_bold);
        assert!(s.contains(">27</"), "{s}");
    }

    #[test]
    fn tag_two_values_holds_both_values() {
        let s = statement(tag_two_values);
        assert!(s.contains("27") && s.contains("28") && s.starts_with('<'), "{s}");
    }

    #[test]
    fn underscore_bold_hedge_holds_both_values() {
        let s = statement(underscore_bold_hedge);
        assert!(s.starts_with("__27") && s.contains("28"), "{s}");
    }
}
