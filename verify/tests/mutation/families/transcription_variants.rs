//! The answer transcribed with the LaTeX variants models write: the same content respelled
//! (`\dfrac` or `\tfrac` for `\frac`, `\left( \right)` for parentheses, `^{\circ}` for `^\circ`)
//! or wrapped (`\text{27}`, `\mathbf{27}`, `\mathrm{27}`, `{27}`, `\displaystyle 27`, a trailing
//! period inside the box), which must stay right; and a wrong value written in the same variants
//! (the alternative wrapped, the answer with one number changed and respelled), which must be
//! wrong.

use crate::mutation::{base::differs, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "transcription_variants",
    split: Split::HeldOut,
    why: "named by no class of issue 30 nor written by the 29 families before it (value_form writes number \
          words, fullwidth digits and thin-space thousands; these are LaTeX spellings of the same content): \
          added on 2026-11-27 (second set) and scored first-seen on 42b6fdd, before any fix for it: held out",
    operators: &[
        Operator { name: "respelled_answer", expect: Expect::Right, apply: respelled_answer },
        Operator { name: "wrapped_answer", expect: Expect::Right, apply: wrapped_answer },
        Operator { name: "respelled_wrong_value", expect: Expect::Wrong, apply: respelled_wrong_value },
        Operator { name: "wrapped_wrong_value", expect: Expect::Wrong, apply: wrapped_wrong_value },
    ],
};

/// `value` respelled by one of the rewrites that apply to it, or `None` when none does.
fn respell(value: &str, rng: &mut Rng) -> Option<String> {
    let mut rewrites: Vec<String> = Vec::new();
    if value.contains("\\frac") {
        rewrites.push(value.replace("\\frac", "\\dfrac"));
        rewrites.push(value.replace("\\frac", "\\tfrac"));
    }
    let (open, close) = (value.matches('(').count(), value.matches(')').count());
    if open > 0 && open == close && !value.contains("\\left") && !value.contains("\\right") {
        rewrites.push(value.replace('(', "\\left(").replace(')', "\\right)"));
    }
    if value.contains("^\\circ") {
        rewrites.push(value.replace("^\\circ", "^{\\circ}"));
    }
    (!rewrites.is_empty()).then(|| rewrites.swap_remove(rng.below(rewrites.len())))
}

/// `value` wrapped by one of the commands models put around a whole answer (text commands only
/// around plain text).
fn wrap(value: &str, rng: &mut Rng) -> String {
    let plain = !value.contains(['\\', '{', '^', '_']);
    let t = if plain {
        rng.pick(&[
            "\\text{{v}}",
            "\\mathbf{{v}}",
            "\\mathrm{{v}}",
            "{{v}}",
            "\\displaystyle {v}",
            "{v}.",
            "\\textbf{{v}}",
        ])
    } else {
        rng.pick(&["\\mathbf{{v}}", "{{v}}", "\\displaystyle {v}", "{v}.", "\\displaystyle{{v}}"])
    };
    t.replace("{v}", value)
}

/// The answer as the box's content (boxed bases) or in inline math (plain ones).
fn put(base: &Base, content: &str) -> Option<Variant> {
    if base.boxed {
        base.with_box_content(content)
    } else {
        base.replace_answer(&format!("${content}$"))
    }
}

/// The answer with one of its numbers changed: a fraction's terms swapped (`\frac{3}{4}` →
/// `\frac{4}{3}`), else its last digit moved by one; `None` unless the verifier finds it different.
fn perturbed(base: &Base) -> Option<String> {
    let a = &base.answer;
    let swapped = a.find("\\frac{").and_then(|i| {
        let rest = &a[i + "\\frac{".len()..];
        let (num, rest) = rest.split_once("}{")?;
        let (den, _) = rest.split_once('}')?;
        let simple = |t: &str| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric());
        (simple(num) && simple(den) && num != den).then(|| {
            let old = format!("\\frac{{{num}}}{{{den}}}");
            a.replacen(&old, &format!("\\frac{{{den}}}{{{num}}}"), 1)
        })
    });
    let moved = || {
        let i = a.rfind(|c: char| c.is_ascii_digit())?;
        let d = a.as_bytes()[i] - b'0';
        Some(format!("{}{}{}", &a[..i], (d + 1) % 10, &a[i + 1..]))
    };
    swapped.or_else(moved).filter(|w| differs(&base.gold, w))
}

/// The answer respelled in place (`\dfrac`, `\left(`, `^{\circ}`).
fn respelled_answer(base: &Base, rng: &mut Rng) -> Option<Variant> {
    put(base, &respell(&base.answer, rng)?)
}

/// The answer wrapped in place (`\text{27}`, `\mathbf{27}`, `27.`).
fn wrapped_answer(base: &Base, rng: &mut Rng) -> Option<Variant> {
    put(base, &wrap(&base.answer, rng))
}

/// A changed answer respelled in place.
fn respelled_wrong_value(base: &Base, rng: &mut Rng) -> Option<Variant> {
    respell(&base.answer, rng)?;
    let wrong = perturbed(base)?;
    put(base, &respell(&wrong, rng)?)
}

/// The alternative value wrapped in place.
fn wrapped_wrong_value(base: &Base, rng: &mut Rng) -> Option<Variant> {
    put(base, &wrap(&base.alternative, rng))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, BOXED_27};

    const HALF: &str =
        "Halving 3 gives one and a half, over 1 whole.\n\nTherefore, the answer is $\\boxed{\\frac{3}{2}}$.";

    fn last_box(v: &str) -> &str {
        &v[v.rfind("\\boxed{").expect("a box")..]
    }

    #[test]
    fn respell_rewrites_only_spelling() {
        let mut rng = Rng::new(7);
        assert!(respell("27", &mut rng).is_none());
        let r = respell("(1, 2)", &mut rng).expect("parentheses respell");
        assert_eq!(r, "\\left(1, 2\\right)");
        assert_eq!(respell("90^\\circ", &mut rng).as_deref(), Some("90^{\\circ}"));
    }

    #[test]
    fn respelled_answer_writes_dfrac_or_tfrac() {
        let (_, v) = example(respelled_answer, "\\frac{3}{2}", HALF);
        let b = last_box(&v);
        assert!(b.starts_with("\\boxed{\\dfrac{3}{2}}") || b.starts_with("\\boxed{\\tfrac{3}{2}}"), "{v}");
    }

    #[test]
    fn wrapped_answer_wraps_the_integer() {
        let b = crate::mutation::families::last_box_of_27(wrapped_answer);
        assert!(b.contains("27") && !b.starts_with("\\boxed{27}") && !b.contains("28"), "{b}");
    }

    #[test]
    fn respelled_wrong_value_swaps_the_fraction_and_respells_it() {
        let (_, v) = example(respelled_wrong_value, "\\frac{3}{2}", HALF);
        let b = last_box(&v);
        assert!(b.starts_with("\\boxed{\\dfrac{2}{3}}") || b.starts_with("\\boxed{\\tfrac{2}{3}}"), "{v}");
    }

    #[test]
    fn respelled_wrong_value_needs_a_respelling() {
        let (base, _) = example(wrapped_answer, "27", BOXED_27);
        assert!(respelled_wrong_value(&base, &mut Rng::new(1)).is_none());
    }

    #[test]
    fn wrapped_wrong_value_wraps_the_alternative() {
        let b = crate::mutation::families::last_box_of_27(wrapped_wrong_value);
        assert!(b.contains("28") && !b.starts_with("\\boxed{28}") && !b.contains("27"), "{b}");
    }
}
