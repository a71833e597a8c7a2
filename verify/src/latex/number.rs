//! Numeric literals to exact values, fallibly and within the size caps.

use super::ParseError;
use crate::ast::Number;
use crate::limits::{LimitKind, Limits};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};

/// Parse a literal `42`, `3.14`, `.5`, `5.`, `8.7e8`, `1E-3` (already free of separators).
pub(crate) fn parse_number(text: &str, limits: &Limits) -> Result<Number, ParseError> {
    let bad = || ParseError::Syntax { message: format!("invalid number `{text}`"), position: 0 };
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(k) => (&text[..k], Some(&text[k + 1..])),
        None => (text, None),
    };
    let (int_part, frac_part) = match mantissa.find('.') {
        Some(k) => (&mantissa[..k], Some(&mantissa[k + 1..])),
        None => (mantissa, None),
    };
    if int_part.is_empty() && frac_part.is_none_or(str::is_empty) {
        return Err(bad());
    }
    let frac_digits = frac_part.unwrap_or("");
    if !int_part.bytes().chain(frac_digits.bytes()).all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    // Roughly 3.33 bits per decimal digit.
    let digits = (int_part.len() + frac_digits.len()) as u64;
    if digits.saturating_mul(10) / 3 > limits.max_int_bits {
        return Err(ParseError::Limit(LimitKind::IntegerTooLarge));
    }
    if exponent.is_none() && digits <= MAX_SMALL_DIGITS {
        return small(int_part, frac_digits, limits)
            .map(|value| Number { value, decimals: frac_part.map(|f| f.len() as u32) });
    }
    let all_digits = format!("{int_part}{frac_digits}");
    let numerator = if all_digits.is_empty() {
        BigInt::zero()
    } else {
        BigInt::parse_bytes(all_digits.as_bytes(), 10).ok_or_else(bad)?
    };
    let scale = frac_digits.len() as i64;
    let exp: i64 = match exponent {
        None => 0,
        Some(e) => {
            let (neg, body) = match e.as_bytes().first() {
                Some(b'-') => (true, &e[1..]),
                Some(b'+') => (false, &e[1..]),
                _ => (false, e),
            };
            if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            let v: u64 = body.parse().map_err(|_| ParseError::Limit(LimitKind::ExponentTooLarge))?;
            if v > limits.max_exponent {
                return Err(ParseError::Limit(LimitKind::ExponentTooLarge));
            }
            if neg {
                -(v as i64)
            } else {
                v as i64
            }
        }
    };
    let value = scaled(numerator, exp - scale, limits)?;
    let decimals = frac_part.map(|f| f.len() as u32);
    Ok(Number { value, decimals })
}

/// Digits of a literal that [`small`] reads (the numerator and `10^decimals` fit a `u64`).
const MAX_SMALL_DIGITS: u64 = 18;

/// The value of a literal of at most [`MAX_SMALL_DIGITS`] digits without an exponent (nearly
/// every literal), in machine integers: the reduced fraction, and the cap check, that [`scaled`]
/// gives, without formatting a string and parsing a big integer.
fn small(int_part: &str, frac_digits: &str, limits: &Limits) -> Result<BigRational, ParseError> {
    let n = int_part.bytes().chain(frac_digits.bytes()).fold(0u64, |n, b| n * 10 + u64::from(b - b'0'));
    let mag = frac_digits.len() as u64;
    let bits = u64::from(u64::BITS - n.leading_zeros());
    if mag > limits.max_exponent || bits + mag * 10 / 3 > limits.max_int_bits {
        return Err(ParseError::Limit(LimitKind::IntegerTooLarge));
    }
    let den = 10u64.pow(mag as u32);
    // `BigRational::new` reduces by the gcd and writes zero as 0/1 (gcd(0, den) = den).
    let g = num_integer::Integer::gcd(&n, &den);
    Ok(BigRational::new_raw(BigInt::from(n / g), BigInt::from(den / g)))
}

/// `n * 10^shift` as an exact rational, refusing results over the integer size cap.
pub(crate) fn scaled(n: BigInt, shift: i64, limits: &Limits) -> Result<BigRational, ParseError> {
    let mag = shift.unsigned_abs();
    if mag > limits.max_exponent || (n.bits() + mag * 10 / 3) > limits.max_int_bits {
        return Err(ParseError::Limit(LimitKind::IntegerTooLarge));
    }
    let p = num_traits::pow(BigInt::from(10), mag as usize);
    Ok(if shift >= 0 { BigRational::from_integer(n * p) } else { BigRational::new(n, p) })
}

/// A plain integer literal.
pub(crate) fn parse_int(text: &str, limits: &Limits) -> Result<BigInt, ParseError> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ParseError::Syntax { message: format!("invalid integer `{text}`"), position: 0 });
    }
    if (text.len() as u64).saturating_mul(10) / 3 > limits.max_int_bits {
        return Err(ParseError::Limit(LimitKind::IntegerTooLarge));
    }
    BigInt::parse_bytes(text.as_bytes(), 10)
        .ok_or_else(|| ParseError::Syntax { message: format!("invalid integer `{text}`"), position: 0 })
}

/// Whether a value is the integer one (used by the builder for `\sin^{-1}`).
pub(crate) fn is_one(n: &Number) -> bool {
    n.value.is_integer() && n.value.numer().is_one()
}
