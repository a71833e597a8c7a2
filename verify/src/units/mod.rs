//! Units after a value: which words are units, and what each does to the value it follows.
//!
//! Units of measure come from [uom](https://docs.rs/uom)'s SI system (module `registry`): every unit
//! of the quantities a math answer meets (length, area, volume, mass, time, speed, energy, ...),
//! with its abbreviation, singular and plural, its quantity and its factor to the SI base unit,
//! under the spellings answers use (`metres`, `kgs`, `m^2`, `sq ft`). What uom does not carry but
//! changes a value all the same comes from two small tables: money (`dollars`, `cents`: a
//! quantity whose unit a gold without one is counted in, the dollar) and the number words of
//! [`Kind::Scale`] (`dozen` is 12, `thousand` is 1000).
//!
//! Why uom: it is maintained, permissively licensed, and carries for every unit the three
//! spellings answers use (abbreviation, singular, plural) with its factor, readable at run time
//! through `FromStr`. UCUM-based crates speak UCUM codes (`[lb_av]`), not words; GNU units is
//! GPL and reads most English words as units. Its limit: customary factors are given to 7
//! significant digits, so conversions between customary and metric units are judged at six
//! (`conversion`).
//!
//! The rule the checker applies (`equiv::scalar`): a unit in the prediction must be the gold's or
//! an exact conversion of it (`500 cm` for `5 m`; not `5 cm`, nor `3 g` for `3 kg`). Against a
//! gold without a unit, a unit of measure is dropped (the problem named it: `5 cm` for `5`) but a
//! scale unit is applied (`12 dozen` is 144), and money is counted in dollars (`12 cents` is
//! 0.12); a word the registry does not know (`apples`) is a counted noun and is dropped as before.

mod registry;

use crate::ast::{Expr, Number};
use num_bigint::BigInt;
use num_rational::BigRational;

pub use registry::is_unit_word;
pub(crate) use registry::{is_currency, lookup, starts_longer_unit, MONEY};

/// A unit of the registry (an index into it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UnitId(u16);

/// What a unit measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A physical quantity, by uom's name for it (`"length"`).
    Measure(&'static str),
    /// A number times the value: number words (`dozen`).
    Scale,
}

/// One unit.
#[derive(Clone, Debug, PartialEq)]
pub struct Unit {
    /// Its singular name (`"kilometer"`).
    pub name: String,
    /// What it measures.
    pub kind: Kind,
    /// Its factor to the base unit of its quantity (uom's coefficient, given to 7 significant
    /// digits for customary units) or, for a scale unit, the number it stands for.
    pub factor: f64,
    /// Whether it has an offset (`degree Celsius`): such a unit converts to nothing else.
    pub affine: bool,
}

impl UnitId {
    /// The unit.
    pub fn unit(self) -> &'static Unit {
        registry::unit(self)
    }

    /// The registry index, as written in the normalised answer (`\unit{17}`).
    pub(crate) fn index(self) -> u16 {
        self.0
    }

    /// The unit written `\unit{index}` by the normaliser.
    pub(crate) fn from_index(index: u16) -> Option<UnitId> {
        registry::exists(index).then_some(UnitId(index))
    }
}

/// The factor that turns a value in `from` into one in `to`, as an exact expression when it is a
/// rational (`100` from meters to centimeters, `12` from feet to inches) or a rational times `π`
/// (degrees and radians), else as a six-digit decimal literal (the precision of uom's customary
/// factors, which the decimal rules then respect). `None` when the two units measure different
/// things or one of them has an offset and they differ.
pub(crate) fn conversion(from: UnitId, to: UnitId) -> Option<Expr> {
    let (a, b) = (from.unit(), to.unit());
    if from == to {
        return Some(Expr::Num(Number::int(1)));
    }
    if a.kind != b.kind || a.affine || b.affine {
        return None;
    }
    Some(factor_expr(a.factor / b.factor))
}

/// Whether a parsed answer is a value with a unit of the registry (`3 \text{ minutes}`,
/// `-5 \text{ m}`).
pub(crate) fn has_unit(e: &Expr) -> bool {
    match e {
        Expr::Quantity(..) => true,
        Expr::Neg(a) => has_unit(a),
        _ => false,
    }
}

/// A scale unit's number as an expression (`12` for `dozen`).
pub(crate) fn scale_of(unit: UnitId) -> Option<Expr> {
    let u = unit.unit();
    (u.kind == Kind::Scale).then(|| factor_expr(u.factor))
}

/// `r` as a small rational, a small rational times `π`, or a 6-digit literal.
fn factor_expr(r: f64) -> Expr {
    if let Some(q) = small_rational(r) {
        return Expr::Num(q);
    }
    let pi = Expr::Const(crate::ast::Constant::Pi);
    if let Some(q) = small_rational(r / std::f64::consts::PI) {
        return Expr::Mul(vec![Expr::Num(q), pi]);
    }
    if let Some(q) = small_rational(r * std::f64::consts::PI) {
        return Expr::Div(Box::new(Expr::Num(q)), Box::new(pi));
    }
    Expr::Num(six_digits(r))
}

/// `r` rounded to six significant digits, as the decimal literal that writes it.
fn six_digits(r: f64) -> Number {
    let exp = r.abs().log10().floor() as i32 - 5;
    let digits = BigInt::from((r / 10f64.powi(exp)).round() as i64);
    let ten = BigRational::from_integer(BigInt::from(10));
    let value = BigRational::from_integer(digits) * num_traits::Pow::pow(&ten, exp);
    Number { value, decimals: Some(u32::try_from(-exp).unwrap_or(0)) }
}

/// The rational with the smallest denominator (at most 10^4) within 10^-12 of `r`, relatively
/// (a ratio of two exact factors; a customary factor given to 7 digits is no such ratio).
fn small_rational(r: f64) -> Option<Number> {
    if !r.is_finite() || r == 0.0 {
        return None;
    }
    let (mut h0, mut h1, mut k0, mut k1) = (0i128, 1i128, 1i128, 0i128);
    let mut x = r.abs();
    for _ in 0..40 {
        let a = x.floor();
        if a > 1e15 {
            return None;
        }
        let a = a as i128;
        (h0, h1) = (h1, a * h1 + h0);
        (k0, k1) = (k1, a * k1 + k0);
        if k1 > 10_000 {
            return None;
        }
        let approx = h1 as f64 / k1 as f64;
        if (approx - r.abs()).abs() <= 1e-12 * r.abs() {
            let sign = if r < 0.0 { -1 } else { 1 };
            let value = BigRational::new(BigInt::from(sign * h1), BigInt::from(k1));
            return Some(Number { value, decimals: None });
        }
        let frac = x - x.floor();
        if frac == 0.0 {
            return None;
        }
        x = 1.0 / frac;
    }
    None
}
