//! Units and scales against a gold without one (issue 30, classes 5 and 12): the answer followed
//! by a unit of measure in the spellings answers use and no hand list carries (`\text{ kgs}`,
//! `\, \text{WPM}`, `m²`, `square metres`, `km/h`, `\text{ft}^2`), in the box or after it, or
//! scaled exactly (`2 \text{ dozen}` for 24); against them, a scale word or cents that change the
//! value (`27 \text{ thousand}`, `$\boxed{27}$ dozen`, `27 \text{ cents}`).

use crate::mutation::{Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "unit_spelling",
    split: Split::HeldOut,
    why: "issue 30 classes 5 and 12 in spellings and places the dev family `unit_scale` does not \
          write: added after the first look at the other families, measured before any fix for it",
    operators: &[
        Operator { name: "measure_unit_in_box", expect: Expect::Right, apply: measure_unit_in_box },
        Operator { name: "measure_unit_after_box", expect: Expect::Right, apply: measure_unit_after_box },
        Operator { name: "exact_scale", expect: Expect::Right, apply: exact_scale },
        Operator { name: "scale_in_box", expect: Expect::Wrong, apply: scale_in_box },
        Operator { name: "scale_after_box", expect: Expect::Wrong, apply: scale_after_box },
        Operator { name: "cents_for_value", expect: Expect::Wrong, apply: cents_for_value },
    ],
};

/// Units of measure as answers write them, in LaTeX after a value.
const MEASURE_UNITS: &[&str] = &[
    "\\text{ kgs}",
    "\\, \\text{WPM}",
    "\\text{ m}^2",
    "\\text{ square metres}",
    "\\text{ km/h}",
    "\\text{ ft}^2",
    "\\,\\mathrm{m/s^2}",
    "\\text{ per hour}",
    "\\text{ cm}^3",
    "\\text{ mph}",
    "\\text{ lbs}",
    "\\text{ sq ft}",
    "\\text{ metres per second}",
    "\\text{ kWh}",
    "\\text{ mL}",
    "\\text{ m²}",
];

/// Units of measure as prose after a box writes them.
const PROSE_UNITS: &[&str] = &[
    "kgs",
    "WPM",
    "m²",
    "square metres",
    "km/h",
    "sq ft",
    "mph",
    "lbs",
    "metres per second",
    "kWh",
    "mL",
    "cubic feet",
];

const SCALES: &[&str] = &["dozen", "thousand", "hundred", "million", "billion"];

/// The base's nonzero integer value.
fn value(base: &Base) -> Option<i64> {
    base.integer.filter(|n| *n > 0)
}

/// The reasoning, then a final statement `text`.
fn statement(base: &Base, rng: &mut Rng, boxed: &str, after: &str) -> Option<Variant> {
    let lead = rng.pick(&["Therefore, the answer is", "So the final answer is", "Hence the result is"]);
    base.with_statement(&format!("{lead} $\\boxed{{{boxed}}}${after}."))
}

/// A unit of measure in the box: `\boxed{27 \text{ kgs}}`.
fn measure_unit_in_box(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = value(base)?;
    let unit = rng.pick(MEASURE_UNITS);
    statement(base, rng, &format!("{n}{unit}"), "")
}

/// A unit of measure in prose after the box: `$\boxed{27}$ square metres.`
fn measure_unit_after_box(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = value(base)?;
    let unit = rng.pick(PROSE_UNITS);
    statement(base, rng, &n.to_string(), &format!(" {unit}"))
}

/// The value scaled exactly: `2 \text{ dozen}` for 24, `3 \text{ hundred}` for 300.
fn exact_scale(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = value(base)?;
    let (k, word) = [(1_000_000, "million"), (1000, "thousand"), (100, "hundred"), (12, "dozen")]
        .into_iter()
        .find(|(k, _)| n % k == 0 && n > *k)?;
    let t = rng.pick(&["{q} \\text{ {w}}", "{q}\\text{ {w}}", "\\text{{q} {w}}"]);
    statement(base, rng, &t.replace("{q}", &(n / k).to_string()).replace("{w}", word), "")
}

/// A scale word in the box: `\boxed{27 \text{ thousand}}`.
fn scale_in_box(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = value(base)?;
    let word = rng.pick(SCALES);
    statement(base, rng, &format!("{n} \\text{{ {word}}}"), "")
}

/// A scale word in prose after the box: `$\boxed{27}$ thousand.`
fn scale_after_box(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = value(base)?;
    let word = rng.pick(SCALES);
    statement(base, rng, &n.to_string(), &format!(" {word}"))
}

/// Cents in the box or after it, against a gold that counts dollars or things.
fn cents_for_value(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = value(base)?;
    match rng.below(3) {
        0 => statement(base, rng, &format!("{n} \\text{{ cents}}"), ""),
        1 => statement(base, rng, &format!("{n}\\text{{¢}}"), ""),
        _ => statement(base, rng, &n.to_string(), " cents"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, last_box_of_27, BOXED_27};

    #[test]
    fn measure_units_follow_the_value() {
        let b = last_box_of_27(measure_unit_in_box);
        assert!(MEASURE_UNITS.iter().any(|u| b.starts_with(&format!("\\boxed{{27{u}}}"))), "{b}");
        let b = last_box_of_27(measure_unit_after_box);
        assert!(PROSE_UNITS.iter().any(|u| b.starts_with(&format!("\\boxed{{27}}$ {u}."))), "{b}");
    }

    #[test]
    fn exact_scale_divides_by_the_scale() {
        let (_, v) = example(exact_scale, "24", "Two dozen eggs make 24 eggs.\n\nSo there are $\\boxed{24}$ eggs.");
        assert!(v.contains("2") && v.contains("dozen") && !v.contains("\\boxed{24"), "{v}");
    }

    #[test]
    fn scales_and_cents_keep_the_number() {
        let b = last_box_of_27(scale_in_box);
        assert!(SCALES.iter().any(|w| b.contains(w)) && b.starts_with("\\boxed{27 "), "{b}");
        let b = last_box_of_27(scale_after_box);
        assert!(SCALES.iter().any(|w| b.contains(w)) && b.starts_with("\\boxed{27}"), "{b}");
        let (_, v) = example(cents_for_value, "27", BOXED_27);
        assert!(v.contains("27") && (v.contains("cents") || v.contains('¢')), "{v}");
    }
}
