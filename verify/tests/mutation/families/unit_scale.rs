//! Units and scales that change the value (issue 30, class 5): a scale word on the answer
//! (`27 dozen`), the unit after the answer swapped for a smaller one (`27 cents` for 27 dollars),
//! a percent sign on a fraction; against them, an exact conversion (`2700 cents`) and the exact
//! percent of a fraction (`25\%` for `\frac14`). The unit swaps are scored against the gold in the
//! base's own unit (`27 \text{ dollars}`), since a gold without a unit does not say which unit the
//! question asked for.

use crate::mutation::{Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "unit_scale",
    split: Split::Dev,
    why: "issue 30 classes 5, 12 and 13 (percent), named with examples: developed against",
    operators: &[
        Operator { name: "scale_word", expect: Expect::Wrong, apply: scale_word },
        Operator { name: "smaller_unit", expect: Expect::Wrong, apply: smaller_unit },
        Operator { name: "percent_of_fraction", expect: Expect::Wrong, apply: percent_of_fraction },
        Operator { name: "exact_unit_conversion", expect: Expect::Right, apply: exact_unit_conversion },
        Operator { name: "exact_percent", expect: Expect::Right, apply: exact_percent },
    ],
};

/// Units a response writes after an answer, with a smaller unit and how many of it make one.
const UNITS: &[(&[&str], &str, i64)] = &[
    (&["dollars", "dollar"], "cents", 100),
    (&["meters", "metres"], "centimeters", 100),
    (&["centimeters", "centimetres", "cm"], "millimeters", 10),
    (&["kilometers", "km"], "meters", 1000),
    (&["kilograms", "kg"], "grams", 1000),
    (&["hours", "hour"], "minutes", 60),
    (&["minutes"], "seconds", 60),
    (&["feet"], "inches", 12),
    (&["yards"], "feet", 3),
    (&["days"], "hours", 24),
    (&["weeks"], "days", 7),
    (&["years"], "months", 12),
    (&["liters", "litres"], "milliliters", 1000),
    (&["gallons"], "quarts", 4),
    (&["pounds"], "ounces", 16),
    (&["miles"], "feet", 5280),
];

/// Where the answer's unit is written.
enum UnitSite {
    /// `\$` opens the box content.
    DollarInBox,
    /// A unit word right after the answer: its byte span in the response.
    After(usize, usize),
}

/// The gold the base's answer answers, in the unit the base writes: the question's unit, which a
/// gold without one does not carry (`8` for `\boxed{8} kilometers` becomes `8 \text{ kilometers}`),
/// so that a variant that changes the unit is judged against it (the contract drops a unit of
/// measure against a gold without one: `5 cm` for `5`).
fn gold_in_unit(base: &Base, site: &UnitSite) -> Option<String> {
    let n = base.integer?;
    Some(match *site {
        UnitSite::DollarInBox => format!("\\${n}"),
        UnitSite::After(s, e) => format!("{n} \\text{{ {}}}", &base.response[s..e]),
    })
}

/// The unit of an integer answer: its site, the smaller unit and the factor.
fn unit(base: &Base) -> Option<(UnitSite, &'static str, i64)> {
    base.integer?;
    if base.boxed && base.answer.starts_with("\\$") {
        return Some((UnitSite::DollarInBox, "cents", 100));
    }
    let after = base.after();
    let rest = after.trim_start_matches(['$', ' ', '\\', ')', ']']);
    let rest = rest.strip_prefix("text{").map_or(rest, str::trim_start);
    let start = base.span.1 + (after.len() - rest.len());
    UNITS.iter().find_map(|(words, smaller, factor)| {
        let word = words
            .iter()
            .find(|w| rest.starts_with(**w) && !rest[w.len()..].starts_with(|c: char| c.is_ascii_alphabetic()))?;
        Some((UnitSite::After(start, start + word.len()), *smaller, *factor))
    })
}

/// The response with the answer replaced by `value` and its unit by `unit`, scored against the
/// gold in the base's unit ([`gold_in_unit`]).
fn with_value_and_unit(base: &Base, site: &UnitSite, value: &str, unit: &str) -> Option<Variant> {
    let gold = gold_in_unit(base, site)?;
    let v = match *site {
        UnitSite::DollarInBox => base.with_box_content(&format!("{value} \\text{{ {unit}}}")),
        UnitSite::After(s, e) => {
            let r = &base.response;
            let answer = if base.boxed { format!("\\boxed{{{value}}}") } else { value.to_string() };
            base.variant(format!("{}{answer}{}{unit}{}", &r[..base.span.0], &r[base.span.1..s], &r[e..]))
        }
    }?;
    Some(Variant { gold, response: v.response })
}

/// A scale word on a nonzero integer answer: `27 dozen`, `27 \text{ thousand}`.
fn scale_word(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = base.integer.filter(|n| *n != 0)?;
    let word = rng.pick(&["dozen", "thousand", "hundred", "million"]);
    if base.boxed {
        base.with_box_content(&format!("{} \\text{{ {word}}}", base.answer))
    } else {
        base.replace_answer(&format!("{n} {word}"))
    }
}

/// The same number in a smaller unit: `27 cents` for 27 dollars.
fn smaller_unit(base: &Base, _: &mut Rng) -> Option<Variant> {
    let (site, smaller, _) = unit(base)?;
    with_value_and_unit(base, &site, &base.integer?.to_string(), smaller)
}

/// The exact conversion into the smaller unit: `2700 cents` for 27 dollars.
fn exact_unit_conversion(base: &Base, _: &mut Rng) -> Option<Variant> {
    let (site, smaller, factor) = unit(base)?;
    with_value_and_unit(base, &site, &(base.integer? * factor).to_string(), smaller)
}

/// A fraction strictly between 0 and 1 written `\frac{a}{b}` (or `\dfrac`, `\tfrac`), `a/b` or
/// as a decimal `0.25`: `(a, b)`.
fn proper_fraction(answer: &str) -> Option<(i64, i64)> {
    let t = answer.trim();
    let (a, b) = if let Some(d) = t.strip_prefix("0.") {
        (d.parse().ok()?, 10i64.checked_pow(d.len() as u32)?)
    } else if let Some((a, b)) = t.split_once('/') {
        (a.trim().parse().ok()?, b.trim().parse().ok()?)
    } else {
        let rest = ["\\frac{", "\\dfrac{", "\\tfrac{"].iter().find_map(|p| t.strip_prefix(p))?;
        let (a, b) = rest.strip_suffix('}')?.split_once("}{")?;
        (a.parse().ok()?, b.parse().ok()?)
    };
    (0 < a && a < b).then_some((a, b))
}

/// A percent sign on a fraction: `\frac{1}{4}\%` is a hundredth of the answer.
fn percent_of_fraction(base: &Base, _: &mut Rng) -> Option<Variant> {
    proper_fraction(&base.answer)?;
    base.with_box_content(&format!("{}\\%", base.answer))
}

/// The exact percent of a fraction with a finite one: `25\%` for `\frac{1}{4}`, `12.5\%` for `\frac18`.
fn exact_percent(base: &Base, _: &mut Rng) -> Option<Variant> {
    let (a, b) = proper_fraction(&base.answer)?;
    // 100·a/b with at most two decimals.
    let hundredths = (a * 10_000).checked_rem(b).filter(|r| *r == 0).map(|_| a * 10_000 / b)?;
    let percent = match hundredths % 100 {
        0 => format!("{}", hundredths / 100),
        r if r % 10 == 0 => format!("{}.{}", hundredths / 100, r / 10),
        r => format!("{}.{r:02}", hundredths / 100),
    };
    base.with_box_content(&format!("{percent}\\%"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, BOXED_27};

    const DOLLARS: &str = "She earns 20 + 7 = 27 dollars.\n\nSo she earns $\\boxed{27}$ dollars.";
    const QUARTER: &str = "One of four equally likely cases.\n\nThe probability is $\\boxed{\\frac{1}{4}}$.";

    #[test]
    fn scale_word_scales_the_boxed_value() {
        let (_, v) = example(scale_word, "27", BOXED_27);
        assert!(
            ["dozen", "thousand", "hundred", "million"]
                .iter()
                .any(|w| v.contains(&format!("\\boxed{{27 \\text{{ {w}}}}}"))),
            "{v}"
        );
    }

    #[test]
    fn smaller_unit_keeps_the_number_and_swaps_the_unit() {
        let base = Base::new("example", "27", DOLLARS).expect("base");
        let v = smaller_unit(&base, &mut Rng::new(crate::mutation::SEED)).expect("applies");
        assert!(v.response.ends_with("$\\boxed{27}$ cents."), "{v:?}");
        assert_eq!(v.gold, "27 \\text{ dollars}");
    }

    #[test]
    fn exact_unit_conversion_converts_number_and_unit() {
        let (_, v) = example(exact_unit_conversion, "27", DOLLARS);
        assert!(v.ends_with("$\\boxed{2700}$ cents."), "{v}");
    }

    #[test]
    fn percent_of_fraction_adds_a_percent_sign() {
        let (_, v) = example(percent_of_fraction, "\\frac14", QUARTER);
        assert!(v.contains("\\boxed{\\frac{1}{4}\\%}"), "{v}");
    }

    #[test]
    fn exact_percent_writes_the_fraction_as_a_percent() {
        let (_, v) = example(exact_percent, "\\frac14", QUARTER);
        assert!(v.contains("\\boxed{25\\%}"), "{v}");
        assert_eq!(proper_fraction("1/8"), Some((1, 8)));
        assert_eq!(proper_fraction("0.125"), Some((125, 1000)));
        assert_eq!(proper_fraction("\\frac{5}{4}"), None);
    }
}
