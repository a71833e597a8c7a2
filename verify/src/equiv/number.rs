//! Exact numbers: Gaussian rationals with size checks, integer roots, factorials, binomials, and
//! the decimal rounding test used by the tolerance rules.

use crate::limits::{Budget, LimitKind};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

/// Bits needed to store a rational (numerator plus denominator).
pub fn bits(q: &BigRational) -> u64 {
    q.numer().bits() + q.denom().bits()
}

/// An exact complex rational `re + im*i` (almost always with `im == 0`).
#[derive(Clone, Debug, PartialEq)]
pub struct Q {
    /// Real part.
    pub re: BigRational,
    /// Imaginary part.
    pub im: BigRational,
}

impl Q {
    /// A real rational.
    pub fn real(re: BigRational) -> Q {
        Q { re, im: BigRational::zero() }
    }

    /// A small integer.
    pub fn int(n: i64) -> Q {
        Q::real(BigRational::from_integer(BigInt::from(n)))
    }

    /// The imaginary unit.
    pub fn i() -> Q {
        Q { re: BigRational::zero(), im: BigRational::one() }
    }

    /// Whether the imaginary part is zero.
    pub fn is_real(&self) -> bool {
        self.im.is_zero()
    }

    /// Whether both parts are zero.
    pub fn is_zero(&self) -> bool {
        self.re.is_zero() && self.im.is_zero()
    }

    fn bits(&self) -> u64 {
        bits(&self.re) + if self.im.is_zero() { 0 } else { bits(&self.im) }
    }
}

/// Greatest common divisor, with Euclidean steps while the sizes differ a lot (num-integer's
/// binary gcd shifts the larger number bit by bit: `gcd(1, 2004!)` took milliseconds).
fn gcd(a: &BigInt, b: &BigInt) -> BigInt {
    use num_integer::Integer;
    let (mut x, mut y) = (a.abs(), b.abs());
    loop {
        if y.is_zero() {
            return x;
        }
        if x.is_zero() {
            return y;
        }
        let (bx, by) = (x.bits(), y.bits());
        if bx.abs_diff(by) <= 64 {
            return x.gcd(&y);
        }
        if bx > by {
            x %= &y;
        } else {
            y %= &x;
        }
    }
}

/// `a * b` reduced by cross-cancelling (operands may be unnormalised in sign: `b` may have a
/// negative denominator).
fn rat_mul(a: &BigRational, b: &BigRational) -> BigRational {
    let g1 = gcd(a.numer(), b.denom());
    let g2 = gcd(b.numer(), a.denom());
    let one = |g: &BigInt| g.is_one() || g.is_zero();
    let (an, bd) = if one(&g1) { (a.numer().clone(), b.denom().clone()) } else { (a.numer() / &g1, b.denom() / &g1) };
    let (bn, ad) = if one(&g2) { (b.numer().clone(), a.denom().clone()) } else { (b.numer() / &g2, a.denom() / &g2) };
    let (mut n, mut d) = (an * bn, ad * bd);
    if d.is_negative() {
        n = -n;
        d = -d;
    }
    if n.is_zero() {
        return BigRational::zero();
    }
    BigRational::new_raw(n, d)
}

impl Q {
    /// The negated number.
    pub fn negate(self) -> Q {
        Q { re: -self.re, im: -self.im }
    }

    /// Exact sum; errors when the result could exceed `max_int_bits`.
    pub fn add(&self, o: &Q, b: &Budget) -> Result<Q, LimitKind> {
        b.check_bits(self.bits() + o.bits())?;
        if self.im.is_zero() && o.im.is_zero() {
            if self.re.is_integer() && o.re.is_integer() {
                return Ok(Q::real(BigRational::from_integer(self.re.numer() + o.re.numer())));
            }
            return Ok(Q::real(&self.re + &o.re));
        }
        Ok(Q { re: &self.re + &o.re, im: &self.im + &o.im })
    }

    /// Exact product; errors when the result could exceed `max_int_bits`.
    pub fn mul(&self, o: &Q, b: &Budget) -> Result<Q, LimitKind> {
        b.check_bits(self.bits() + o.bits())?;
        if self.im.is_zero() && o.im.is_zero() {
            // Integers: no gcd (num-rational's cross-cancelling gcd is slow on huge integers).
            if self.re.is_integer() && o.re.is_integer() {
                return Ok(Q::real(BigRational::from_integer(self.re.numer() * o.re.numer())));
            }
            return Ok(Q::real(rat_mul(&self.re, &o.re)));
        }
        Ok(Q { re: &self.re * &o.re - &self.im * &o.im, im: &self.re * &o.im + &self.im * &o.re })
    }

    /// Exact quotient; `None` for division by zero.
    pub fn div(&self, o: &Q, b: &Budget) -> Result<Option<Q>, LimitKind> {
        if o.is_zero() {
            return Ok(None);
        }
        if o.im.is_zero() {
            b.check_bits(self.bits() + o.bits())?;
            if self.im.is_zero() {
                let inv = BigRational::new_raw(o.re.denom().clone(), o.re.numer().clone());
                return Ok(Some(Q::real(rat_mul(&self.re, &inv))));
            }
            return Ok(Some(Q { re: &self.re / &o.re, im: &self.im / &o.re }));
        }
        b.check_bits(self.bits() + 2 * o.bits())?;
        let den = &o.re * &o.re + &o.im * &o.im;
        let conj = Q { re: o.re.clone(), im: -o.im.clone() };
        let num = self.mul(&conj, b)?;
        Ok(Some(Q { re: num.re / &den, im: num.im / &den }))
    }

    /// Exact integer power; errors on exponent or size caps (the caller may approximate).
    pub fn pow(&self, n: &BigInt, b: &mut Budget) -> Result<Option<Q>, LimitKind> {
        let max_e = b.limits.max_exponent;
        let e = match n.abs().to_u64() {
            Some(e) if e <= max_e => e,
            _ => return Err(LimitKind::ExponentTooLarge),
        };
        b.check_bits(self.bits().saturating_mul(e.max(1)))?;
        let base = if n.is_negative() {
            match Q::int(1).div(self, b)? {
                Some(q) => q,
                None => return Ok(None),
            }
        } else {
            self.clone()
        };
        if base.is_real() {
            let e32 = i32::try_from(e).map_err(|_| LimitKind::ExponentTooLarge)?;
            b.charge(1 + e / 64)?;
            return Ok(Some(Q::real(num_traits::Pow::pow(&base.re, e32))));
        }
        let mut result = Q::int(1);
        let mut sq = base;
        let mut k = e;
        while k > 0 {
            b.charge(1)?;
            if k & 1 == 1 {
                result = result.mul(&sq, b)?;
            }
            k >>= 1;
            if k > 0 {
                sq = sq.mul(&sq, b)?;
            }
        }
        Ok(Some(result))
    }
}

/// The exact `n`-th root of a non-negative rational when it is rational.
pub fn rational_root(q: &BigRational, n: u32) -> Option<BigRational> {
    if q.is_negative() || n == 0 {
        return None;
    }
    let rn = q.numer().nth_root(n);
    let rd = q.denom().nth_root(n);
    if num_traits::Pow::pow(&rn, n) == *q.numer() && num_traits::Pow::pow(&rd, n) == *q.denom() {
        Some(BigRational::new(rn, rd))
    } else {
        None
    }
}

/// `n!` exactly, within `max_factorial` and `max_int_bits`.
pub fn factorial(n: &BigInt, b: &mut Budget) -> Result<BigInt, LimitKind> {
    let n = match n.to_u64() {
        Some(n) if n <= b.limits.max_factorial => n,
        _ => return Err(LimitKind::FactorialTooLarge),
    };
    b.check_bits(log2_factorial(n) as u64)?;
    b.charge(1 + n / 8)?;
    // Factors are gathered in a machine word while they fit (a few per word): fewer passes over
    // the growing big integer, the same product.
    let mut acc = BigInt::one();
    let mut word: u64 = 1;
    for k in 2..=n {
        match word.checked_mul(k) {
            Some(w) => word = w,
            None => {
                acc *= word;
                word = k;
            }
        }
    }
    Ok(acc * word)
}

/// `log2(n!)` estimated from above (Stirling), for size checks.
fn log2_factorial(n: u64) -> f64 {
    if n < 2 {
        return 1.0;
    }
    let x = n as f64;
    (x * x.ln() - x + 0.5 * (2.0 * std::f64::consts::PI * x).ln() + 1.0) / std::f64::consts::LN_2 + 1.0
}

/// `\binom{n}{k}` exactly for integers (0 when `k < 0` or `k > n >= 0`).
pub fn binom(n: &BigInt, k: &BigInt, b: &mut Budget) -> Result<BigInt, LimitKind> {
    if k.is_negative() || (!n.is_negative() && k > n) {
        return Ok(BigInt::zero());
    }
    // Use the smaller of k and n-k when n is a non-negative integer.
    let k = if !n.is_negative() { std::cmp::min(k.clone(), n - k) } else { k.clone() };
    let k = match k.to_u64() {
        Some(k) if k <= b.limits.max_factorial => k,
        _ => return Err(LimitKind::FactorialTooLarge),
    };
    b.check_bits((n.bits().max(1) + 1).saturating_mul(k))?;
    b.charge(1 + k / 8)?;
    let mut acc = BigInt::one();
    for i in 0..k {
        acc = acc * (n - BigInt::from(i)) / BigInt::from(i + 1);
    }
    Ok(acc)
}

/// `10^d` as a rational, within the integer size cap.
pub fn pow10(d: u32, b: &Budget) -> Result<BigRational, LimitKind> {
    b.check_bits(u64::from(d) * 4)?;
    Ok(BigRational::from_integer(num_traits::Pow::pow(BigInt::from(10), d)))
}

/// Whether `x` rounded half away from zero to `d` decimals equals `target` (which has at most
/// `d` decimals).
pub fn rounds_to(x: &BigRational, d: u32, target: &BigRational, b: &Budget) -> Result<bool, LimitKind> {
    let scale = pow10(d, b)?;
    let m = target * &scale;
    if m.is_integer() {
        // Integers only (no gcd reductions): compare 2 p 10^d with (2m -+ 1) q for x = p/q, q > 0.
        let m = m.to_integer();
        let y2 = x.numer() * scale.numer() * 2;
        let q = x.denom();
        let lo = (&m * 2 - 1) * q;
        let hi = (&m * 2 + 1) * q;
        return Ok(if m.is_positive() {
            lo <= y2 && y2 < hi
        } else if m.is_negative() {
            lo < y2 && y2 <= hi
        } else {
            lo < y2 && y2 < hi
        });
    }
    let y = x * &scale;
    let half = BigRational::new(BigInt::one(), BigInt::from(2));
    let lo = &m - &half;
    let hi = &m + &half;
    Ok(if m.is_positive() {
        lo <= y && y < hi
    } else if m.is_negative() {
        lo < y && y <= hi
    } else {
        lo < y && y < hi
    })
}

/// Significant digits of a decimal literal (`0.333` -> 3, `12.0` -> 3, `0.05` -> 1).
pub fn significant_digits(value: &BigRational, decimals: u32, b: &Budget) -> Result<u32, LimitKind> {
    // round(|n| 10^d / den), half away from zero, as floor((2 |n| 10^d + den) / (2 den)): in
    // integers, without the gcd of a rational product.
    let scale = pow10(decimals, b)?;
    let (num, den) = (value.numer().abs() * scale.numer(), value.denom().abs());
    let scaled = ((num << 1usize) + &den) / (den << 1usize);
    if scaled.is_zero() {
        return Ok(0);
    }
    Ok(scaled.to_str_radix(10).len() as u32)
}

/// The decimal position of the last written digit of a decimal literal with `d` decimals in its
/// mantissa: `d` for a plain decimal, more for scientific notation with a negative exponent
/// (`1.325e-27` has its last digit at 30 decimals). `None` if the value is not a decimal fraction.
pub fn effective_decimals(value: &BigRational, d: u32) -> Option<u32> {
    let mut den = value.denom().clone();
    // Factors 2 by the trailing zero bits, factors 5 by 5^27 (the largest power in a u64) first.
    let a = u32::try_from(den.trailing_zeros().unwrap_or(0)).ok()?;
    den >>= a;
    const FIVE_27: u64 = 7_450_580_596_923_828_125;
    let mut b = 0u32;
    while !den.is_one() && (&den % FIVE_27).is_zero() {
        den /= FIVE_27;
        b += 27;
    }
    while !den.is_one() && (&den % 5u32).is_zero() {
        den /= 5u32;
        b += 1;
    }
    if !den.is_one() {
        return None;
    }
    Some(d.max(a).max(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::Limits;

    /// The integer rounding gives the digits of the rational one.
    #[test]
    fn significant_digits_match_rational_rounding() {
        let b = Budget::new(&Limits::default());
        for (n, d) in [
            (0i64, 1i64),
            (1, 3),
            (2, 3),
            (-2, 3),
            (5, 2),
            (-5, 2),
            (333, 1000),
            (12, 1),
            (1, 20),
            (-7, 40),
            (999_999, 1000),
        ] {
            let v = BigRational::new(BigInt::from(n), BigInt::from(d));
            for decimals in 0..8 {
                let want = (v.abs() * pow10(decimals, &b).unwrap_or_default()).round().to_integer();
                let want = if want.is_zero() { 0 } else { want.to_str_radix(10).len() as u32 };
                assert_eq!(significant_digits(&v, decimals, &b), Ok(want), "{v} at {decimals}");
            }
        }
    }

    /// The word-gathered product is `n!`: against the plain product, across word boundaries.
    #[test]
    fn factorial_is_the_plain_product() {
        let limits = Limits::default();
        let mut plain = BigInt::one();
        for n in 0..=400u64 {
            if n >= 2 {
                plain *= n;
            }
            let mut b = Budget::new(&limits);
            assert_eq!(factorial(&BigInt::from(n), &mut b), Ok(plain.clone()), "{n}!");
        }
    }
}
