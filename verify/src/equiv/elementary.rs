//! `exp`, `cos` and `sin` of a real high-precision float, several times faster than astro-float's
//! own at 256 bits: argument reduction by a power of two, a short Taylor series, then repeated
//! squaring (double angles), all with 64 guard bits so the result is accurate to the working
//! precision. Used for precisions up to 1024 bits: the 256-bit evaluation and its 1024-bit
//! re-evaluation (astro-float's functions took three quarters of the latter's time).

use astro_float::{BigFloat, RoundingMode, Sign};
use std::hash::{BuildHasherDefault, Hasher};

const RM: RoundingMode = RoundingMode::ToEven;
/// Guard bits of the intermediate computations (the squarings lose at most 48 bits).
const GUARD: usize = 64;
/// `exp` reduces its argument below 2^-EXP_REDUCE: fewer series terms (each costs a division, the
/// slowest operation) for more squarings (cheap); 2^38 error growth at most, within the guard.
const EXP_REDUCE: i32 = 28;
/// `cos_sin` reduces below 2^-TRIG_REDUCE (a double angle costs four operations).
const TRIG_REDUCE: i32 = 18;
/// Largest precision served here (`equiv::scalar`'s re-evaluation precision).
pub const MAX_PREC: usize = 1024;

/// An approximate `f64` of a finite float (infinite when out of the `f64` range).
pub fn bf_to_f64(x: &BigFloat) -> f64 {
    let Some((words, _, sign, e, _)) = x.as_raw_parts() else { return f64::NAN };
    let Some(top) = words.last() else { return 0.0 };
    if x.is_zero() {
        return 0.0;
    }
    let m = (*top as f64) / 2f64.powi(64);
    let v = if e > 1100 {
        f64::INFINITY
    } else if e < -1100 {
        0.0
    } else {
        m * 2f64.powi(e)
    };
    if sign == Sign::Neg {
        -v
    } else {
        v
    }
}

fn approx_f64(x: &BigFloat) -> f64 {
    bf_to_f64(x)
}

/// How many halvings bring `|x|` below 2^-reduce.
fn halvings(xf: f64, reduce: i32) -> Option<u32> {
    if xf == 0.0 {
        return Some(0);
    }
    let e = xf.abs().log2().ceil() as i32 + reduce;
    u32::try_from(e.clamp(0, 48)).ok()
}

fn scaled_down(x: &BigFloat, k: u32, wp: usize) -> BigFloat {
    if k == 0 {
        let mut r = x.clone();
        let _ = r.set_precision(wp, RM);
        return r;
    }
    x.div(&BigFloat::from_word(1u64 << k, wp), wp, RM)
}

/// Whether `term` is negligible next to a sum of magnitude about 1.
fn negligible(term: &BigFloat, wp: usize) -> bool {
    term.is_zero() || term.exponent().is_none_or(|e| e < -(wp as i32) - 2)
}

thread_local! {
    /// `1/n` at a working precision, for the series coefficients (a multiplication is four
    /// times cheaper than a division).
    static RECIPROCALS: std::cell::RefCell<ReciprocalTable> = std::cell::RefCell::new(ReciprocalTable::default());
}

type ReciprocalTable = std::collections::HashMap<(u64, usize), BigFloat, BuildHasherDefault<KeyHasher>>;

/// A multiplicative hash of the two integers of a [`ReciprocalTable`] key (the standard SipHash
/// cost more than the lookup it served).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// `x * (1/n)` at precision `wp`, with `1/n` cached per thread (and not copied out).
fn mul_recip(x: &BigFloat, n: u64, wp: usize) -> BigFloat {
    RECIPROCALS.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() > 4096 {
            c.clear();
        }
        let r = c.entry((n, wp)).or_insert_with(|| BigFloat::from_word(1, wp).div(&BigFloat::from_word(n, wp), wp, RM));
        x.mul(r, wp, RM)
    })
}

fn rounded(mut x: BigFloat, p: usize) -> BigFloat {
    let _ = x.set_precision(p, RM);
    x
}

/// `e^x` for a real `x` with `|x| <= 1000` at precision `p <= MAX_PREC` (`None` otherwise).
pub fn exp(x: &BigFloat, p: usize) -> Option<BigFloat> {
    let xf = approx_f64(x);
    // (Up to MAX_PREC + GUARD for the Newton steps of `ln`.)
    if p > MAX_PREC + GUARD || !xf.is_finite() || xf.abs() > 1000.0 || x.is_nan() {
        return None;
    }
    let wp = p + GUARD;
    let k = halvings(xf, EXP_REDUCE)?;
    let r = scaled_down(x, k, wp);
    let mut term = BigFloat::from_word(1, wp);
    let mut sum = term.clone();
    for n in 1..200u64 {
        term = mul_recip(&term.mul(&r, wp, RM), n, wp);
        sum = sum.add(&term, wp, RM);
        if negligible(&term, wp) {
            break;
        }
    }
    for _ in 0..k {
        sum = sum.mul(&sum, wp, RM);
    }
    Some(rounded(sum, p))
}

/// `ln x` for a positive `x` in the `f64` range and not within 2^-20 of 1 (where the absolute
/// accuracy of Newton's method would not be a relative one), at precision `p <= MAX_PREC`:
/// Halley steps `y += 2 (x - e^y) / (x + e^y)` from the `f64` logarithm, each tripling the
/// correct bits (53 -> 159 -> 477 -> 1431): two up to 477 working bits (256-bit results), three
/// beyond (1024-bit results).
pub fn ln(x: &BigFloat, p: usize) -> Option<BigFloat> {
    let xf = approx_f64(x);
    if p > MAX_PREC || !xf.is_finite() || !(1e-300..1e300).contains(&xf) || (xf - 1.0).abs() < 1.0 / (1u64 << 20) as f64
    {
        return None;
    }
    let wp = p + GUARD;
    let mut xw = x.clone();
    let _ = xw.set_precision(wp, RM);
    let mut y = BigFloat::from_f64(xf.ln(), wp);
    let steps = if wp <= 477 { 2 } else { 3 };
    for _ in 0..steps {
        let ey = exp(&y, wp)?;
        let num = xw.sub(&ey, wp, RM);
        let den = xw.add(&ey, wp, RM);
        let step = num.div(&den, wp, RM).mul(&BigFloat::from_word(2, wp), wp, RM);
        y = y.add(&step, wp, RM);
    }
    Some(rounded(y, p))
}

/// `(cos x, sin x)` for a real `x` with `|x| <= 10^6` at precision `p <= MAX_PREC`; `pi` is `π`
/// to at least `p + 64` bits.
pub fn cos_sin(x: &BigFloat, p: usize, pi: &BigFloat) -> Option<(BigFloat, BigFloat)> {
    let xf = approx_f64(x);
    if p > MAX_PREC || !xf.is_finite() || xf.abs() > 1e6 || x.is_nan() {
        return None;
    }
    let wp = p + GUARD;
    // x = r + 2 pi n with |r| <= pi (about 20 bits of the guard are spent for |x| near 10^6).
    let n = (xf / (2.0 * std::f64::consts::PI)).round();
    let r = if n == 0.0 {
        let mut r = x.clone();
        let _ = r.set_precision(wp, RM);
        r
    } else {
        let two_pi_n = pi.mul(&BigFloat::from_f64(2.0 * n, wp), wp, RM);
        x.sub(&two_pi_n, wp, RM)
    };
    let k = halvings(approx_f64(&r), TRIG_REDUCE)?;
    let t = scaled_down(&r, k, wp);
    let t2 = t.mul(&t, wp, RM);
    // cos t = sum (-1)^m t^2m / (2m)!, sin t = sum (-1)^m t^(2m+1) / (2m+1)!
    let mut c = BigFloat::from_word(1, wp);
    let mut s = t.clone();
    let mut ct = c.clone();
    let mut st = t.clone();
    for m in 1..100u64 {
        ct = mul_recip(&ct.mul(&t2, wp, RM), (2 * m - 1) * (2 * m), wp).neg();
        st = mul_recip(&st.mul(&t2, wp, RM), (2 * m) * (2 * m + 1), wp).neg();
        c = c.add(&ct, wp, RM);
        s = s.add(&st, wp, RM);
        if negligible(&ct, wp) && negligible(&st, wp) {
            break;
        }
    }
    let two = BigFloat::from_word(2, wp);
    for _ in 0..k {
        let cc = c.mul(&c, wp, RM);
        let ss = s.mul(&s, wp, RM);
        s = c.mul(&s, wp, RM).mul(&two, wp, RM);
        c = cc.sub(&ss, wp, RM);
    }
    Some((rounded(c, p), rounded(s, p)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use astro_float::Consts;

    /// |a - b| <= 2^-(p - 8) max(1, |a|)
    fn agree(a: &BigFloat, b: &BigFloat, p: usize) -> bool {
        let d = a.sub(b, p, RM).abs();
        if d.is_zero() {
            return true;
        }
        let scale = a.abs().exponent().unwrap_or(0).max(1);
        d.exponent().is_some_and(|e| e < scale - (p as i32) + 8)
    }

    /// |a - b| <= 2^-(p - 8) |a|
    fn agree_rel(a: &BigFloat, b: &BigFloat, p: usize) -> bool {
        let d = a.sub(b, p, RM).abs();
        d.is_zero() || d.exponent().zip(a.exponent()).is_some_and(|(ed, ea)| ed < ea - (p as i32) + 8)
    }

    /// At the evaluation's precision and at its 1024-bit re-evaluation's.
    #[test]
    fn match_astro_float() {
        for p in [256, MAX_PREC] {
            match_astro_float_at(p);
        }
    }

    fn match_astro_float_at(p: usize) {
        let mut cc = match Consts::new() {
            Ok(c) => c,
            Err(e) => panic!("{e:?}"),
        };
        let pi = cc.pi(p + GUARD, RM);
        let args = [0.0, 1e-30, -3e-7, 0.5, -0.7312, 1.0, 2.0, -3.3, 7.25, 31.4159, -100.5, 699.0, -745.0, 12345.678];
        for a in args {
            // A 256-bit value that is not a short binary fraction.
            let x = BigFloat::from_f64(a, p).div(&BigFloat::from_word(3, p), p, RM);
            let e = exp(&x, p).map(|v| agree_rel(&v, &x.exp(p, RM, &mut cc), p));
            assert!(e.unwrap_or(a.abs() / 3.0 > 1000.0), "exp({a}/3)");
            let (c, s) = match cos_sin(&x, p, &pi) {
                Some(v) => v,
                None => panic!("cos_sin({a}/3)"),
            };
            assert!(agree(&c, &x.cos(p, RM, &mut cc), p), "cos({a}/3)");
            assert!(agree(&s, &x.sin(p, RM, &mut cc), p), "sin({a}/3)");
            // ln of e^(a/3) (positive, spread over the range).
            let y = x.exp(p, RM, &mut cc);
            if let Some(l) = ln(&y, p) {
                assert!(agree(&l, &y.ln(p, RM, &mut cc), p), "ln(e^({a}/3))");
            }
        }
        for v in [2.0, 3.0, 7.0, 10.0, 0.5, 1e-200, 1e200, 1.0001, 0.9999] {
            let y = BigFloat::from_f64(v, p);
            let l = ln(&y, p);
            assert!(l.is_some_and(|l| agree(&l, &y.ln(p, RM, &mut cc), p)), "ln({v})");
        }
        // The ends of the range served (the most Halley steps needed), relative accuracy.
        let near_one = 1.0 / (1u64 << 19) as f64;
        for v in [1e-299, 3e-150, 9e299, 4e150, 1.0 + near_one, 1.0 - near_one, 1.37, 0.73] {
            let y =
                BigFloat::from_f64(v, p).div(&BigFloat::from_word(3, p), p, RM).mul(&BigFloat::from_word(3, p), p, RM);
            let l = ln(&y, p);
            assert!(l.is_some_and(|l| agree_rel(&l, &y.ln(p, RM, &mut cc), p)), "ln({v}) at {p} bits");
        }
        // Near 1 the relative accuracy is left to astro-float.
        assert!(ln(&BigFloat::from_f64(1.0 + 1e-9, p), p).is_none());
        // A sweep of pseudo-random arguments over the ranges served.
        let mut h: u64 = 0x9e37_79b9_7f4a_7c15;
        for k in 0..300 {
            h ^= h << 13;
            h ^= h >> 7;
            h ^= h << 17;
            let unit = (h >> 11) as f64 / (1u64 << 53) as f64;
            let a = match k % 3 {
                0 => (unit - 0.5) * 2000.0,
                1 => (unit - 0.5) * 20.0,
                _ => (unit - 0.5) * 1e-3,
            };
            let x = BigFloat::from_f64(a, p).div(&BigFloat::from_word(7, p), p, RM);
            if let Some(v) = exp(&x, p) {
                assert!(agree_rel(&v, &x.exp(p, RM, &mut cc), p), "exp({a}/7)");
            }
            let (c, s) = match cos_sin(&x, p, &pi) {
                Some(v) => v,
                None => panic!("cos_sin({a}/7)"),
            };
            assert!(agree(&c, &x.cos(p, RM, &mut cc), p), "cos({a}/7)");
            assert!(agree(&s, &x.sin(p, RM, &mut cc), p), "sin({a}/7)");
            let y = x.abs();
            if let Some(l) = ln(&y, p) {
                assert!(agree_rel(&l, &y.ln(p, RM, &mut cc), p), "ln(|{a}/7|)");
            }
        }
    }
}
