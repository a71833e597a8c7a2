//! A relation that does not name one value (issue 30, class 6), in forms the held-out
//! `condition_not_value` family does not write: a floor, a congruence, `\pm`, a membership in a
//! set of two values, `\neq`, a cube; against them, the value named with `=` in other ways
//! (`27 = k`, a subscripted name, a function value).

use crate::mutation::{fill, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "value_relation",
    split: Split::HeldOut,
    why: "issue 30 class 6 in relations no family and no fix names: added after the first look at \
          the other families, measured before any fix for it",
    operators: &[
        Operator { name: "floor_equation", expect: Expect::Wrong, apply: floor_equation },
        Operator { name: "congruence", expect: Expect::Wrong, apply: congruence },
        Operator { name: "plus_minus", expect: Expect::Wrong, apply: plus_minus },
        Operator { name: "membership", expect: Expect::Wrong, apply: membership },
        Operator { name: "not_equal", expect: Expect::Wrong, apply: not_equal },
        Operator { name: "cube_equation", expect: Expect::Wrong, apply: cube_equation },
        Operator { name: "value_on_the_left", expect: Expect::Right, apply: value_on_the_left },
        Operator { name: "subscript_name", expect: Expect::Right, apply: subscript_name },
    ],
};

const NAMES: &[&str] = &["k", "n", "x", "m"];

fn boxed(base: &Base, rng: &mut Rng, templates: &[&'static str], n: i64, other: &str) -> Option<Variant> {
    let t = rng.pick(templates);
    let name = rng.pick(NAMES);
    base.with_box_content(&fill(t, &[("k", name), ("x", &n.to_string()), ("y", other)]))
}

/// `\lfloor k \rfloor = x`: k is any number in [x, x+1).
fn floor_equation(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = base.integer?;
    boxed(base, rng, &["\\lfloor {k} \\rfloor = {x}", "\\lceil {k} \\rceil = {x}"], n, "")
}

/// `k \equiv x \pmod{m}` with a modulus above x: every x + jm.
fn congruence(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = base.integer.filter(|n| *n >= 0)?;
    let m = (n + 1 + rng.below(9) as i64).to_string();
    boxed(base, rng, &["{k} \\equiv {x} \\pmod{{y}}", "{k} \\equiv {x} \\ (\\mathrm{mod}\\ {y})"], n, &m)
}

/// `k = \pm x` for a positive answer: two values.
fn plus_minus(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = base.integer.filter(|n| *n > 0)?;
    boxed(base, rng, &["{k} = \\pm {x}", "\\pm {x}", "{k} = \\pm{x}"], n, "")
}

/// `k \in \{x, y\}`: the answer and another value.
fn membership(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = base.integer?;
    boxed(base, rng, &["{k} \\in \\{{x}, {y}\\}", "{k} \\in \\{{y}, {x}\\}"], n, &base.alternative)
}

/// `k \neq x`: everything but the answer.
fn not_equal(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = base.integer?;
    boxed(base, rng, &["{k} \\neq {x}", "{k} \\ne {x}"], n, "")
}

/// `k^3 = x^3` written out: the answer, unless a complex root is meant.
fn cube_equation(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = base.integer.filter(|n| *n > 1 && *n < 10_000)?;
    boxed(base, rng, &["{k}^3 = {y}", "{k}^{3} = {y}"], n, &(n * n * n).to_string())
}

/// The value named from the left: `x = k`.
fn value_on_the_left(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = base.integer?;
    boxed(base, rng, &["{x} = {k}", "{x}={k}"], n, "")
}

/// A subscripted name: `a_{10} = x`, `x_1 = x`.
fn subscript_name(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = base.integer?;
    boxed(base, rng, &["a_{10} = {x}", "x_1 = {x}", "S_{n} = {x}", "T_5={x}"], n, "")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::last_box_of_27;

    #[test]
    fn wrong_relations_hold_the_answer_in_a_condition() {
        assert!(last_box_of_27(floor_equation).contains(" = 27}"));
        assert!(last_box_of_27(congruence).contains("\\equiv 27"));
        assert!(last_box_of_27(plus_minus).contains("\\pm"));
        let b = last_box_of_27(membership);
        assert!(b.contains("\\in") && b.contains("27") && b.contains("28"), "{b}");
        assert!(last_box_of_27(not_equal).contains("27}"));
        assert!(last_box_of_27(cube_equation).contains("= 19683}"));
    }

    #[test]
    fn right_namings_name_the_answer() {
        assert!(last_box_of_27(value_on_the_left).starts_with("\\boxed{27"));
        assert!(last_box_of_27(subscript_name).contains("27}"));
    }
}
