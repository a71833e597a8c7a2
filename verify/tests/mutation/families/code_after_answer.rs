//! A code check after the answer: a program and its output follow the boxed answer and the
//! response states what the code gives; the output is another value (an unmarked correction in
//! code form) or the answer (a confirmation). Not a class of issue 30.

use crate::mutation::{fill, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "code_after_answer",
    split: Split::HeldOut,
    why: "named by no class of issue 30 (class 1 names checks in prose only): held out",
    operators: &[
        Operator { name: "code_gives_other_value", expect: Expect::Wrong, apply: code_gives_other_value },
        Operator { name: "code_confirms", expect: Expect::Right, apply: code_confirms },
    ],
};

const CHECKS: &[&str] = &[
    "Let me verify with code:\n```python\nprint(result)\n```\n```output\n{v}\n```\nThe code gives {m}.",
    "Running a quick check:\n```python\nanswer = solve()\nprint(answer)\n```\nOutput: {v}\n\nSo the program returns {m}.",
    "```python\n# brute force\nprint(count())\n```\n```output\n{v}\n```\nThe brute-force count is {m}.",
];

fn code_gives_other_value(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(CHECKS);
    base.append(&fill(t, &[("v", &base.alternative), ("m", &base.alt_math())]), true)
}

fn code_confirms(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(CHECKS);
    base.append(&fill(t, &[("v", &base.answer), ("m", &base.math())]), true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, BOXED_27};

    #[test]
    fn code_gives_other_value_ends_on_another_value() {
        let (base, v) = example(code_gives_other_value, "27", BOXED_27);
        let added = &v[base.response.len()..];
        assert!(
            v.starts_with(&base.response) && added.contains("```") && added.contains("28") && !added.contains("27"),
            "{v}"
        );
    }

    #[test]
    fn code_confirms_ends_on_the_answer() {
        let (base, v) = example(code_confirms, "27", BOXED_27);
        let added = &v[base.response.len()..];
        assert!(
            v.starts_with(&base.response) && added.contains("```") && added.contains("$27$") && !added.contains("28"),
            "{v}"
        );
    }
}
