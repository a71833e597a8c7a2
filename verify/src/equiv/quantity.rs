//! Values with units of measure: `5 m` against `500 cm`, `90^\circ` against
//! `\frac{\pi}{2} \text{ rad}`.
//!
//! A side's unit is taken out of its expression when every unit in its terms, factors and signs
//! is the same one (`-5 m`, `3 \times 4 \text{ m}`); two different units in one answer
//! (`5 m 20 cm`) are not read. Then
//! (`crate::units` has the registry and the rule):
//! - both sides have a unit: the prediction's is converted to the gold's by the exact factor
//!   between them, and compared (rule `unit`); units of different quantities (`kg` and `m`), or
//!   different units with an offset (`°C` and `K`), are not equal;
//! - only the gold has one: the prediction's bare value answers it (`5` for `5 m`);
//! - only the prediction has one: the unit is dropped (`5 cm` for `5`: the problem named it),
//!   except money, which a gold without a unit counts in dollars (`12 cents` is not `12`).
//!
//! An angle in degrees (`90^\circ`) is a value in the unit degree when the other side has an
//! angle unit. Scale units (`dozen`, `cents`) are no measure: they are their number wherever
//! they stand (`equiv::eval`).

use super::context::{Cmp, Cx, Res};
use super::rule::Rule;
use crate::ast::Expr;
use crate::units::{conversion, lookup, Kind, UnitId, MONEY};

/// The unit of measure of a side.
enum Measured {
    /// No unit of measure.
    None,
    /// The value without its unit, and the unit.
    One(Expr, UnitId),
    /// Units of two kinds in one answer.
    Mixed,
}

/// The measured reading of `e` (module doc).
fn measured(e: &Expr) -> Measured {
    let (mut unit, mut mixed) = (None, false);
    units_in(e, &mut unit, &mut mixed, 0);
    match unit {
        None => Measured::None,
        Some(_) if mixed => Measured::Mixed,
        Some(u) => Measured::One(strip(e), u),
    }
}

/// The units of measure in the terms, factors and signs of `e` (where [`strip`] takes them out),
/// down to a depth of 16: no allocation, and one step for a plain number.
fn units_in(e: &Expr, unit: &mut Option<UnitId>, mixed: &mut bool, depth: usize) {
    if depth > 16 {
        return;
    }
    match e {
        Expr::Quantity(a, u) => {
            if matches!(u.unit().kind, Kind::Measure(_)) {
                *mixed |= unit.is_some_and(|v| v != *u);
                *unit = Some(*u);
            }
            units_in(a, unit, mixed, depth + 1);
        }
        Expr::Neg(a) => units_in(a, unit, mixed, depth + 1),
        Expr::Div(a, b) => {
            units_in(a, unit, mixed, depth + 1);
            units_in(b, unit, mixed, depth + 1);
        }
        Expr::Add(v) | Expr::Mul(v) => v.iter().for_each(|x| units_in(x, unit, mixed, depth + 1)),
        _ => {}
    }
}

/// `e` with its units of measure taken out.
fn strip(e: &Expr) -> Expr {
    let strip_all = |v: &[Expr]| v.iter().map(strip).collect();
    match e {
        Expr::Quantity(a, u) if matches!(u.unit().kind, Kind::Measure(_)) => strip(a),
        Expr::Quantity(a, u) => Expr::Quantity(Box::new(strip(a)), *u),
        Expr::Neg(a) => Expr::Neg(Box::new(strip(a))),
        Expr::Add(v) => Expr::Add(strip_all(v)),
        Expr::Mul(v) => Expr::Mul(strip_all(v)),
        Expr::Div(a, b) => Expr::Div(Box::new(strip(a)), Box::new(strip(b))),
        other => other.clone(),
    }
}

/// The factor from a unit of money to the dollar, which a value without a unit counts in.
fn in_dollars(unit: UnitId) -> Option<Expr> {
    (unit.unit().kind == Kind::Measure(MONEY)).then(|| conversion(unit, lookup("dollar")?)).flatten()
}

/// The degree, for `90^\circ` against an angle unit.
fn degree() -> Option<UnitId> {
    lookup("degree")
}

/// A side read as a value in degrees when it is one (`90^\circ`) and the other side has an angle
/// unit.
fn as_degrees(e: &Expr, other: &Measured) -> Option<Measured> {
    let Measured::One(_, u) = other else { return None };
    let (Expr::Degrees(a), Kind::Measure("angle")) = (e, u.unit().kind) else { return None };
    Some(Measured::One((**a).clone(), degree()?))
}

/// A side without a unit read with its letters as one (`27000 m`, `3000 g`, `10 m/s^2`) when the
/// other side has a unit of measure that the letters' unit converts to (a length for `m`): a
/// letter after a number is a variable everywhere else (`5 x`, and `5 m` against `5`), since
/// nothing but the other side's unit says that it is not.
fn letters_as_unit(e: &Expr, other: &Measured) -> Option<Measured> {
    let Measured::One(_, unit) = other else { return None };
    let (value, phrase) = letters_of(e)?;
    let id = lookup(&phrase).filter(|&id| conversion(id, *unit).is_some())?;
    Some(Measured::One(value, id))
}

/// `e` as a number times a unit spelled in letters: the number and the spelling (`m/s²` for
/// `\frac{10 m}{s^2}`).
fn letters_of(e: &Expr) -> Option<(Expr, String)> {
    match e {
        Expr::Neg(a) => letters_of(a).map(|(v, u)| (Expr::Neg(Box::new(v)), u)),
        Expr::Div(a, b) => {
            let (value, top) = letters_of(a)?;
            let bottom = letters(std::slice::from_ref(&**b))?;
            Some((value, format!("{top}/{bottom}")))
        }
        Expr::Mul(factors) => {
            let at = factors.iter().position(|x| !matches!(x, Expr::Num(_)))?;
            let value = match &factors[..at] {
                [] => return None,
                [n] => n.clone(),
                ns => Expr::Mul(ns.to_vec()),
            };
            Some((value, letters(&factors[at..])?))
        }
        _ => None,
    }
}

/// Factors that are letters, a power 2 or 3 only on the last (`m`, `L`, `s^2`): their spelling
/// (`mL`, `s²`).
fn letters(factors: &[Expr]) -> Option<String> {
    let letter = |x: &Expr| match x {
        Expr::Sym(s) if (1..=3).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphabetic()) => Some(s.clone()),
        _ => None,
    };
    let mut out = String::new();
    for (k, x) in factors.iter().enumerate() {
        match x {
            Expr::Pow(base, exp) if k + 1 == factors.len() => {
                let power = match &**exp {
                    Expr::Num(n)
                        if n.decimals.is_none() && n.value == num_rational::BigRational::from_integer(2.into()) =>
                    {
                        "²"
                    }
                    Expr::Num(n)
                        if n.decimals.is_none() && n.value == num_rational::BigRational::from_integer(3.into()) =>
                    {
                        "³"
                    }
                    _ => return None,
                };
                out.push_str(&letter(base)?);
                out.push_str(power);
            }
            _ => out.push_str(&letter(x)?),
        }
    }
    (!out.is_empty() && out.len() <= 8).then_some(out)
}

/// The comparison of two sides of which at least one has a unit of measure, their values compared
/// by `compare_scalars` (`scalar::compare`, passed in so that this module does not import the one
/// that calls it); `None` when neither has one.
pub(super) fn compare(
    g: &Expr,
    p: &Expr,
    cx: &mut Cx,
    compare_scalars: fn(&Expr, &Expr, &mut Cx<'_>) -> Res,
) -> Option<Res> {
    let (mut gm, mut pm) = (measured(g), measured(p));
    if matches!((&gm, &pm), (Measured::None, Measured::None)) {
        return None;
    }
    if let Some(m) = as_degrees(g, &pm) {
        gm = m;
    }
    if let Some(m) = as_degrees(p, &gm) {
        pm = m;
    }
    if let Some(m) = letters_as_unit(g, &pm) {
        gm = m;
    }
    if let Some(m) = letters_as_unit(p, &gm) {
        pm = m;
    }
    Some(match (gm, pm) {
        (Measured::Mixed, _) | (_, Measured::Mixed) => Ok(Cmp::new(false, Rule::Unit)),
        (Measured::One(gv, gu), Measured::One(pv, pu)) => match conversion(pu, gu) {
            None => Ok(Cmp::new(false, Rule::Unit)),
            Some(factor) => {
                compare_scalars(&gv, &Expr::Mul(vec![pv, factor]), cx).map(|c| c.with_rule_if_eq(Rule::Unit))
            }
        },
        (Measured::One(gv, gu), Measured::None) => match in_dollars(gu) {
            // `50 cents` is answered by `50` and by `\$0.50` (whose sign is no unit).
            Some(factor) => match compare_scalars(&gv, p, cx) {
                Ok(c) if !c.eq => {
                    compare_scalars(&Expr::Mul(vec![gv, factor]), p, cx).map(|c| c.with_rule_if_eq(Rule::Unit))
                }
                other => other,
            },
            None => compare_scalars(&gv, p, cx),
        },
        (Measured::None, Measured::One(pv, pu)) => match in_dollars(pu) {
            Some(factor) => compare_scalars(g, &Expr::Mul(vec![pv, factor]), cx).map(|c| c.with_rule_if_eq(Rule::Unit)),
            None => compare_scalars(g, &pv, cx),
        },
        (Measured::None, Measured::None) => return None,
    })
}
