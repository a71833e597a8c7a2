//! The answer in someone else's voice: the response writes a dialogue or a quoted exchange (a
//! teacher and a student, two students, a self-questioning `Q:`/`A:` drill) in which the right
//! value is spoken by another voice or by an earlier line, while the response's own final line
//! gives another value; against them, a quoted teacher who confirms the response's own right
//! answer after it, and a drill whose every answer is the right value.

use crate::mutation::{fill, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "dialogue_voice",
    split: Split::HeldOut,
    why: "named by no class of issue 30 nor written by the 29 families before it (foreign_box attributes a \
          box in one sentence; here a dialogue or a Q/A drill carries the values in several voices): added \
          on 2026-11-27 (second set) and scored first-seen on 42b6fdd, before any fix for it: held out",
    operators: &[
        Operator { name: "quoted_right_own_other", expect: Expect::Wrong, apply: quoted_right_own_other },
        Operator { name: "drill_ends_other", expect: Expect::Wrong, apply: drill_ends_other },
        Operator { name: "teacher_confirms_own", expect: Expect::Right, apply: teacher_confirms_own },
        Operator { name: "drill_ends_same", expect: Expect::Right, apply: drill_ends_same },
    ],
};

/// A dialogue in which another voice gives the right value (`{x}` in math, `{a}` bare), then the
/// response's own final line with another value (`{y}`), not boxed.
fn quoted_right_own_other(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let dialogue = rng.pick(&[
        "**Teacher:** \"The answer is $\\boxed{{a}}$.\"\n**Student:** \"I got something else.\"",
        "> **Tutor:** So the total should be {x}, right?\n> **Me:** Let me check my own work first.",
        "Student A: I think it's {x}.\nStudent B: I'm getting a different number.",
        "Imagine the teacher saying: \"Clearly the answer is $\\boxed{{a}}$.\" But let's trust our own computation.",
        "— Is it {x}? asked my study partner.\n— Not quite, I said.",
    ]);
    let own = rng.pick(&[
        "My own final answer: {y}",
        "I'll go with my computation: {y}.",
        "So the answer I give is {y}.",
        "Final answer (mine): {y}",
    ]);
    let values = [("a", base.answer.as_str()), ("x", &base.math()), ("y", &base.alt_math())];
    base.with_statement(&format!("{}\n\n{}", fill(dialogue, &values), fill(own, &values)))
}

/// The drill of questions and answers that a model asks itself: `{first}` answers the first
/// question, `{last}` the last one, which asks for the final result.
fn drill(first: &str, last: &str, rng: &mut Rng) -> String {
    let t = rng.pick(&[
        "Q: What does the direct count give?\nA: {first}.\nQ: And what is the final count?\nA: {last}.",
        "**Q:** What did the first pass give?\n**A:** {first}\n**Q:** So what is the answer to the problem?\n**A:** {last}",
        "Question: what is the value before simplifying? Answer: {first}.\nQuestion: what is the final value? Answer: {last}.",
        "- Q: first estimate? A: {first}\n- Q: final result? A: {last}",
    ]);
    fill(t, &[("first", first), ("last", last)])
}

/// A self-questioning drill whose earlier answer is the right value and whose last answer is another.
fn drill_ends_other(base: &Base, rng: &mut Rng) -> Option<Variant> {
    base.with_statement(&drill(&base.math(), &base.alt_math(), rng))
}

/// A self-questioning drill whose answers are all the right value.
fn drill_ends_same(base: &Base, rng: &mut Rng) -> Option<Variant> {
    base.with_statement(&drill(&base.math(), &base.math(), rng))
}

/// A teacher quoted after the response's own answer, confirming it.
fn teacher_confirms_own(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "My teacher checked this and said: \"Yes, {x} is correct.\"",
        "> **Teacher:** Correct — {x}.",
        "(The tutor confirmed {x} when we went over it in class.)",
        "**Student:** So it's {x}?\n**Teacher:** Exactly, {x}.",
    ]);
    base.append(&fill(t, &[("x", &base.math())]), true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, statement_of_27, BOXED_27};

    #[test]
    fn quoted_right_own_other_gives_the_right_value_to_another_voice() {
        let s = statement_of_27(quoted_right_own_other);
        let last = s.lines().last().expect("an own final line");
        assert!(last.contains("$28$") && !last.contains("27") && !last.contains("\\boxed"), "{s}");
        assert!(s[..s.len() - last.len()].contains("27"), "{s}");
    }

    #[test]
    fn drill_ends_other_answers_another_value_last() {
        let s = statement_of_27(drill_ends_other);
        assert!(s.find("$27$").expect("the first answer") < s.find("$28$").expect("the last answer"), "{s}");
        assert!(s.contains("Q") && !s.contains("\\boxed"), "{s}");
    }

    #[test]
    fn drill_ends_same_answers_the_answer_twice() {
        let s = statement_of_27(drill_ends_same);
        assert_eq!(s.matches("$27$").count(), 2, "{s}");
        assert!(!s.contains("28"), "{s}");
    }

    #[test]
    fn teacher_confirms_own_follows_the_box() {
        let (base, v) = example(teacher_confirms_own, "27", BOXED_27);
        let added = &v[base.response.len()..];
        assert!(v.starts_with(&base.response) && added.contains("$27$") && !added.contains("28"), "{v}");
        assert!(["teacher", "Teacher", "tutor"].iter().any(|w| added.contains(w)), "{added}");
    }
}
