//! A long afterword after the answer, as chatty models close a solution: tips for similar
//! problems, a pointer to the formula used, a related fact with its own numbers, a
//! generalization to other parameters (`for $n = 10$ the count is $55$`), none of which restates
//! a value for the question asked, which must stay right; the same afterword ending on a sentence
//! that brings the original question back with the answer's value (right) or another value
//! (wrong), the last one far from the box.

use crate::mutation::{fill, phrase, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "long_tail_after_answer",
    split: Split::HeldOut,
    why: "named by no class of issue 30 nor written by the 35 families before it (pleasantries adds one closing \
          line, numbers_after_answer a recap of the givens; here several paragraphs about other problems, with \
          numbers of their own, follow the answer): added on 2026-11-27 (third set) and scored first-seen on \
          a3fc502, before any fix for it: held out",
    operators: &[
        Operator { name: "afterword_tips", expect: Expect::Right, apply: afterword_tips },
        Operator { name: "afterword_other_numbers", expect: Expect::Right, apply: afterword_other_numbers },
        Operator { name: "afterword_ends_same", expect: Expect::Right, apply: afterword_ends_same },
        Operator { name: "afterword_ends_other", expect: Expect::Wrong, apply: afterword_ends_other },
    ],
};

/// Paragraphs of advice and pointers to a formula: no number that could be a value.
const TIPS: &[&str] = &[
    "**Tips for similar problems.** Write down every given quantity before you start, and label each \
     intermediate result with what it counts. Most mistakes on problems like this one come from mixing up \
     two quantities that look alike, so it pays to check what each line of the computation measures.",
    "A quick sanity check is always worth it: the result should have the right order of magnitude compared \
     with the givens, and it should move in the expected direction if one of the givens grows.",
    "The key idea here is to translate the words into equations one sentence at a time; once the equations \
     are written down, the rest is routine algebra.",
    "See also the inclusion–exclusion principle, $|A \\cup B| = |A| + |B| - |A \\cap B|$, which handles \
     overlapping counts in the same spirit.",
    "**Common pitfalls:** forgetting a case, dividing where one should multiply, and reading \"more than\" \
     as \"at least\". Re-reading the question once the computation is done catches most of them.",
];

/// Paragraphs with numbers of other quantities: a related fact, a generalization, an example of
/// the formula used.
const OTHER_NUMBERS: &[&str] = &[
    "A related fact: the sum of the first $100$ positive integers is $5050$, which Gauss is said to have \
     found as a schoolboy by pairing $1$ with $100$, $2$ with $99$, and so on.",
    "More generally, the same argument works for any number of items $n$: the count becomes \
     $\\frac{n(n+1)}{2}$, which for $n = 10$ is $55$.",
    "For comparison, a standard deck has $52$ cards, and the number of ways to choose $5$ of them is \
     $\\binom{52}{5} = 2598960$.",
    "The identity behind a step like this is $(a+b)^2 = a^2 + 2ab + b^2$; for instance, $(3+4)^2 = 49 = 9 + \
     24 + 16$.",
    "Fun fact: there are $25$ primes below $100$ and $168$ below $1000$, so primes thin out slowly as \
     numbers grow.",
    "If you want to practise, try the same problem with every given doubled; the method is unchanged, only \
     the arithmetic grows.",
];

/// Sentences that bring the original question back; `{v}` is the value.
const ENDINGS: &[&str] = &[
    "Returning to the original question, the answer is {v}.",
    "So, for the problem as stated, the final count comes to {v}.",
    "In summary, the value we were asked for is {v}.",
    "Back to our problem: the result is {v}.",
    "To wrap up, the answer to the question asked is {v}.",
];

/// Two or three distinct paragraphs drawn from `pool`.
fn paragraphs(pool: &[&'static str], rng: &mut Rng) -> String {
    let mut picked: Vec<&str> = Vec::new();
    let want = 2 + rng.below(2);
    while picked.len() < want.min(pool.len()) {
        let p = phrase(rng, pool);
        if !picked.contains(&p) {
            picked.push(p);
        }
    }
    picked.join("\n\n")
}

/// A mixed afterword: a tip, then paragraphs with numbers of other quantities.
fn mixed(rng: &mut Rng) -> String {
    format!("{}\n\n{}", phrase(rng, TIPS), paragraphs(OTHER_NUMBERS, rng))
}

/// The answer, then paragraphs of advice and formulas.
fn afterword_tips(base: &Base, rng: &mut Rng) -> Option<Variant> {
    base.append(&paragraphs(TIPS, rng), true)
}

/// The answer, then paragraphs with numbers of other quantities.
fn afterword_other_numbers(base: &Base, rng: &mut Rng) -> Option<Variant> {
    base.append(&mixed(rng), true)
}

/// The answer, the afterword, and a last sentence that states the answer again.
fn afterword_ends_same(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let end = fill(phrase(rng, ENDINGS), &[("v", &base.math())]);
    base.append(&format!("{}\n\n{end}", mixed(rng)), true)
}

/// The answer, the afterword, and a last sentence that states another value for the question.
fn afterword_ends_other(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let end = fill(phrase(rng, ENDINGS), &[("v", &base.alt_math())]);
    base.append(&format!("{}\n\n{end}", mixed(rng)), true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, BOXED_27};

    fn added(op: fn(&Base, &mut Rng) -> Option<Variant>) -> String {
        let (base, v) = example(op, "27", BOXED_27);
        assert!(v.starts_with(&base.response), "{v}");
        v[base.response.len()..].to_string()
    }

    #[test]
    fn afterword_tips_adds_paragraphs_without_digits_of_a_value() {
        let a = added(afterword_tips);
        assert!(a.matches("\n\n").count() >= 2 && a.len() > 150, "{a}");
        assert!(!a.contains("27") && !a.contains("28") && !a.contains("\\boxed"), "{a}");
    }

    #[test]
    fn afterword_other_numbers_adds_numbers_of_other_quantities() {
        let a = added(afterword_other_numbers);
        assert!(a.bytes().any(|b| b.is_ascii_digit()) && a.matches("\n\n").count() >= 3, "{a}");
        assert!(!a.contains("27") && !a.contains("28"), "{a}");
    }

    #[test]
    fn afterword_ends_same_ends_on_the_answer() {
        let a = added(afterword_ends_same);
        assert!(a.trim_end().ends_with("$27$.") && !a.contains("28") && a.len() > 300, "{a}");
    }

    #[test]
    fn afterword_ends_other_ends_on_another_value_far_from_the_box() {
        let a = added(afterword_ends_other);
        assert!(a.trim_end().ends_with("$28$.") && a.len() > 300, "{a}");
    }
}
