//! Units against a gold that has one (issue 30, classes 5 and 12): the gold is the base's value
//! in a unit (`27 \text{ km}`) and the final statement writes it in the gold's unit under another
//! spelling, in a smaller unit by the exact factor (`27000 \text{ m}`), with a bare unit letter in
//! math (`27000 m`), or as the bare value; against them, the same number in a smaller unit
//! (`27 \text{ m}` for 27 km) or in a unit of another quantity (`27 \text{ kg}`).

use crate::mutation::{Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "unit_conversion",
    split: Split::HeldOut,
    why: "issue 30 classes 5 and 12 against golds that carry a unit, which no dev family has: \
          added after the first look at the other families, measured before any fix for it",
    operators: &[
        Operator { name: "converted_unit", expect: Expect::Right, apply: converted_unit },
        Operator { name: "respelled_unit", expect: Expect::Right, apply: respelled_unit },
        Operator { name: "letter_unit", expect: Expect::Right, apply: letter_unit },
        Operator { name: "bare_value_for_unit_gold", expect: Expect::Right, apply: bare_value },
        Operator { name: "same_number_smaller_unit", expect: Expect::Wrong, apply: same_number_smaller_unit },
        Operator { name: "other_quantity_unit", expect: Expect::Wrong, apply: other_quantity_unit },
        Operator { name: "letter_unit_same_number", expect: Expect::Wrong, apply: letter_unit_same_number },
    ],
};

/// A unit a gold carries: how the gold writes it, other spellings of it, a smaller unit (its
/// spellings, how many of it make one, its bare letter in math if it has one) and a unit of
/// another quantity.
struct GoldUnit {
    gold: &'static str,
    same: &'static [&'static str],
    smaller: &'static [&'static str],
    factor: i64,
    letter: Option<&'static str>,
    other: &'static str,
}

const GOLD_UNITS: &[GoldUnit] = &[
    GoldUnit {
        gold: "\\text{ km}",
        same: &["\\text{ kilometres}", "\\text{ kilometers}", "\\,\\mathrm{km}", "\\text{ km}"],
        smaller: &["\\text{ m}", "\\text{ meters}", "\\text{ metres}", "\\,\\mathrm{m}"],
        factor: 1000,
        letter: Some("m"),
        other: "\\text{ kg}",
    },
    GoldUnit {
        gold: "\\text{ m}",
        same: &["\\text{ meters}", "\\text{ metres}", "\\,\\mathrm{m}"],
        smaller: &["\\text{ cm}", "\\text{ centimeters}", "\\text{ centimetres}"],
        factor: 100,
        letter: None,
        other: "\\text{ s}",
    },
    GoldUnit {
        gold: "\\text{ kg}",
        same: &["\\text{ kilograms}", "\\text{ kgs}", "\\,\\mathrm{kg}"],
        smaller: &["\\text{ g}", "\\text{ grams}", "\\,\\mathrm{g}"],
        factor: 1000,
        letter: Some("g"),
        other: "\\text{ km}",
    },
    GoldUnit {
        gold: "\\text{ hours}",
        same: &["\\text{ hrs}", "\\text{ hour}", "\\text{ h}"],
        smaller: &["\\text{ minutes}", "\\text{ min}", "\\text{ mins}"],
        factor: 60,
        letter: None,
        other: "\\text{ miles}",
    },
    GoldUnit {
        gold: "\\text{ minutes}",
        same: &["\\text{ min}", "\\text{ mins}", "\\text{ minute}"],
        smaller: &["\\text{ seconds}", "\\text{ s}", "\\text{ secs}"],
        factor: 60,
        letter: Some("s"),
        other: "\\text{ meters}",
    },
    GoldUnit {
        gold: "\\text{ L}",
        same: &["\\text{ liters}", "\\text{ litres}", "\\,\\mathrm{L}"],
        smaller: &["\\text{ mL}", "\\text{ ml}", "\\text{ milliliters}"],
        factor: 1000,
        letter: None,
        other: "\\text{ kg}",
    },
    GoldUnit {
        gold: "\\text{ km/h}",
        same: &["\\text{ km/hr}", "\\text{ kph}", "\\text{ kilometres per hour}", "\\,\\mathrm{km/h}"],
        smaller: &["\\text{ m/h}", "\\text{ meters per hour}", "\\text{ m/hr}"],
        factor: 1000,
        letter: None,
        other: "\\text{ km}",
    },
    GoldUnit {
        gold: "\\text{ ft}^2",
        same: &["\\text{ square feet}", "\\text{ sq ft}", "\\text{ ft}^{2}"],
        smaller: &["\\text{ in}^2", "\\text{ square inches}", "\\text{ sq in}"],
        factor: 144,
        letter: None,
        other: "\\text{ ft}",
    },
    GoldUnit {
        gold: "\\text{ m}^2",
        same: &["\\text{ square metres}", "\\text{ m}^{2}", "\\text{ sq m}", "\\text{ m²}"],
        smaller: &["\\text{ cm}^2", "\\text{ square centimeters}", "\\text{ cm²}"],
        factor: 10_000,
        letter: None,
        other: "\\text{ m}^3",
    },
];

/// The base's positive integer value and a unit for its gold, drawn.
fn draw(base: &Base, rng: &mut Rng) -> Option<(i64, &'static GoldUnit)> {
    let n = base.integer.filter(|n| (1..100_000).contains(n))?;
    Some((n, rng.pick(GOLD_UNITS)))
}

/// The base's reasoning, then a final statement boxing `answer`, scored against `n` in `unit`.
fn statement(base: &Base, rng: &mut Rng, n: i64, unit: &GoldUnit, answer: &str) -> Option<Variant> {
    let lead = rng.pick(&["Therefore, the answer is", "So the final answer is", "Hence the result is"]);
    let v = base.with_statement(&format!("{lead} $\\boxed{{{answer}}}$."))?;
    Some(Variant { gold: format!("{n} {}", unit.gold), response: v.response })
}

/// The exact conversion into a smaller unit: `27000 \text{ m}` for `27 \text{ km}`.
fn converted_unit(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let (n, u) = draw(base, rng)?;
    let spelling = rng.pick(u.smaller);
    statement(base, rng, n, u, &format!("{}{spelling}", n * u.factor))
}

/// The gold's unit under another spelling: `27 \text{ kilometres}` for `27 \text{ km}`.
fn respelled_unit(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let (n, u) = draw(base, rng)?;
    let spelling = rng.pick(u.same);
    statement(base, rng, n, u, &format!("{n}{spelling}"))
}

/// The exact conversion into a unit written as a bare letter in math: `27000 m` for 27 km.
fn letter_unit(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let (n, u) = draw(base, rng)?;
    let letter = u.letter?;
    statement(base, rng, n, u, &format!("{} {letter}", n * u.factor))
}

/// The bare value: the unit is the gold's to name.
fn bare_value(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let (n, u) = draw(base, rng)?;
    statement(base, rng, n, u, &n.to_string())
}

/// The same number in the smaller unit: `27 \text{ m}` for 27 km.
fn same_number_smaller_unit(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let (n, u) = draw(base, rng)?;
    let spelling = rng.pick(u.smaller);
    statement(base, rng, n, u, &format!("{n}{spelling}"))
}

/// The same number in a unit of another quantity: `27 \text{ kg}` for 27 km.
fn other_quantity_unit(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let (n, u) = draw(base, rng)?;
    statement(base, rng, n, u, &format!("{n}{}", u.other))
}

/// The same number with the smaller unit's bare letter: `27 m` for 27 km.
fn letter_unit_same_number(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let (n, u) = draw(base, rng)?;
    let letter = u.letter?;
    statement(base, rng, n, u, &format!("{n} {letter}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, BOXED_27};

    fn variant(apply: fn(&Base, &mut Rng) -> Option<Variant>) -> Variant {
        let base = Base::new("example", "27", BOXED_27).expect("base");
        (0..64).find_map(|k| apply(&base, &mut Rng::new(k))).expect("the operator applies")
    }

    #[test]
    fn converted_unit_multiplies_by_the_factor() {
        let v = variant(converted_unit);
        let u = GOLD_UNITS.iter().find(|u| v.gold == format!("27 {}", u.gold)).expect("a gold unit");
        assert!(v.response.contains(&format!("\\boxed{{{}", 27 * u.factor)), "{v:?}");
    }

    #[test]
    fn respelled_unit_keeps_the_number() {
        let (_, v) = example(respelled_unit, "27", BOXED_27);
        assert!(v.contains("\\boxed{27\\") && v.starts_with("We add"), "{v}");
    }

    #[test]
    fn letter_unit_writes_a_bare_letter() {
        let v = variant(letter_unit);
        assert!(
            v.response.contains("000 m}") || v.response.contains("000 g}") || v.response.contains("620 s}"),
            "{v:?}"
        );
    }

    #[test]
    fn bare_value_boxes_the_number() {
        assert!(variant(bare_value).response.contains("\\boxed{27}"));
    }

    #[test]
    fn wrong_operators_keep_the_number_and_change_the_unit() {
        for apply in [same_number_smaller_unit, other_quantity_unit, letter_unit_same_number] {
            let v = variant(apply);
            assert!(v.response.contains("\\boxed{27 ") || v.response.contains("\\boxed{27\\"), "{v:?}");
            assert!(v.gold.starts_with("27 "), "{v:?}");
        }
    }
}
