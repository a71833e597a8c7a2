//! A cheap screen in double precision: evaluate both sides at a point as complex `f64` values
//! with a running bound on their error, and report when they certainly differ.
//!
//! The 256-bit evaluation ([`super::eval`]) costs tens of microseconds per transcendental function
//! (astro-float), so a wrong answer with free symbols and `e^{t}`, `\sin t`, ... used to cost
//! milliseconds. Here each value is a *ball*: a complex `f64` centre and an absolute error bound
//! `err` that every operation propagates (first-order bounds of the function's derivative on the
//! ball, plus a generous rounding term). Two balls whose distance exceeds the sum of their error
//! bounds by a wide margin, and by far more than the comparison tolerance, denote different
//! numbers: the high-precision comparison at that point would say `NotEqual` too.
//!
//! The screen only ever answers "certainly different" or "don't know". Whenever the 256-bit
//! evaluation could take another branch (a ball containing zero in a denominator or a logarithm,
//! a value near a branch cut or a domain edge, a node the screen does not model such as `n!`,
//! a floor or ceiling of a value near an integer, user functions), it answers "don't know" and the caller falls back to the
//! exact/high-precision path, whose verdict is then unchanged. Equality is never decided here.

use crate::ast::{Constant, Expr, Func};
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};

/// Rounding allowance per operation: 2^-50, eight times the unit round-off of `f64`.
const U: f64 = 1.0 / (1u64 << 50) as f64;
/// Nesting depth modelled (the high-precision evaluator allows 128).
const MAX_DEPTH: usize = 96;
/// Largest integer exponent evaluated by repeated multiplication.
const MAX_POW: u64 = 64;
/// Largest root index modelled.
const MAX_ROOT: u64 = 64;
/// Error bounds are multiplied by this before two balls are declared apart.
const SAFETY: f64 = 16.0;
/// Magnitudes below this are "don't know": far from underflow, so that a product that underflows
/// to an exact-looking zero is never taken for a zero.
const TINY: f64 = 1e-200;

/// A complex `f64` value with an absolute error bound.
#[derive(Clone, Copy, Debug)]
pub struct Ball {
    re: f64,
    im: f64,
    err: f64,
    /// Computed by real operations only: the high-precision value then has an exactly zero
    /// imaginary part too (branch decisions may rely on it).
    real: bool,
}

impl Ball {
    fn real(v: f64, err: f64) -> Option<Ball> {
        Ball { re: v, im: 0.0, err, real: true }.finite()
    }
    fn finite(self) -> Option<Ball> {
        (self.re.is_finite() && self.im.is_finite() && self.err.is_finite()).then_some(self)
    }
    /// The centre of a real value certain to a relative `1e-12`, for root finding.
    pub fn real_value(&self) -> Option<f64> {
        (self.real && self.err <= 1e-12 * self.re.abs().max(1.0)).then_some(self.re)
    }
    /// An upper bound of the modulus of the centre.
    fn mag(&self) -> f64 {
        self.re.abs() + self.im.abs()
    }
    fn modulus(&self) -> f64 {
        self.re.hypot(self.im)
    }
    /// Whether zero may lie in the ball (with a safety margin).
    fn may_be_zero(&self) -> bool {
        self.modulus() <= 4.0 * self.err + f64::MIN_POSITIVE
    }
    /// A real value certainly above zero.
    fn positive_real(&self) -> bool {
        self.real && self.re > 4.0 * self.err
    }
}

fn add(a: Ball, b: Ball) -> Option<Ball> {
    Ball { re: a.re + b.re, im: a.im + b.im, err: a.err + b.err + U * (a.mag() + b.mag()), real: a.real && b.real }
        .finite()
}

fn neg(a: Ball) -> Ball {
    Ball { re: -a.re, im: -a.im, ..a }
}

fn mul(a: Ball, b: Ball) -> Option<Ball> {
    let (ma, mb) = (a.mag(), b.mag());
    if ma > 0.0 && mb > 0.0 && ma * mb < TINY {
        return None;
    }
    let (re, im) =
        if a.real && b.real { (a.re * b.re, 0.0) } else { (a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re) };
    Ball { re, im, err: ma * b.err + mb * a.err + a.err * b.err + 4.0 * U * ma * mb, real: a.real && b.real }.finite()
}

fn div(a: Ball, b: Ball) -> Option<Ball> {
    if b.may_be_zero() {
        return None;
    }
    let bm = b.modulus();
    let (re, im) = if b.real {
        (a.re / b.re, a.im / b.re)
    } else {
        let d = b.re * b.re + b.im * b.im;
        ((a.re * b.re + a.im * b.im) / d, (a.im * b.re - a.re * b.im) / d)
    };
    let zm = re.abs() + im.abs();
    if a.mag() > 0.0 && zm < TINY {
        return None;
    }
    let err = 2.0 * (a.err + zm * b.err) / bm + 8.0 * U * zm;
    Ball { re, im, err, real: a.real && b.real }.finite()
}

fn exp(w: Ball) -> Option<Ball> {
    if w.re > 700.0 || w.re < -400.0 || w.err > 0.25 {
        return None;
    }
    let m = w.re.exp();
    let (re, im) = if w.real { (m, 0.0) } else { (m * w.im.cos(), m * w.im.sin()) };
    Ball { re, im, err: m * (2.0 * w.err + 8.0 * U * (1.0 + w.im.abs() * U)), real: w.real }.finite()
}

/// Principal logarithm; "don't know" near zero and near the negative real axis (where the
/// high-precision branch depends on the sign of a zero imaginary part).
fn ln(z: Ball) -> Option<Ball> {
    if z.may_be_zero() {
        return None;
    }
    if z.positive_real() {
        let v = z.re.ln();
        return Ball::real(v, 2.0 * z.err / z.re + U * (v.abs() + 1.0));
    }
    if z.re <= 4.0 * z.err && z.im.abs() <= 4.0 * z.err {
        return None;
    }
    if z.re < 0.0 && z.im.abs() <= 4.0 * z.err {
        return None;
    }
    let r = z.modulus();
    let v = r.ln();
    Ball { re: v, im: z.im.atan2(z.re), err: 4.0 * z.err / r + U * (v.abs() + 8.0), real: false }.finite()
}

fn powi(z: Ball, n: i64) -> Option<Ball> {
    let mut k = n.unsigned_abs();
    if k > MAX_POW || z.may_be_zero() {
        return None;
    }
    let mut result = Ball::real(1.0, 0.0)?;
    let mut sq = z;
    while k > 0 {
        if k & 1 == 1 {
            result = mul(result, sq)?;
        }
        k >>= 1;
        if k > 0 {
            sq = mul(sq, sq)?;
        }
    }
    if n < 0 {
        result = div(Ball::real(1.0, 0.0)?, result)?;
    }
    Some(result)
}

/// `n`-th root as the high-precision evaluator takes it, for the cases where its branch is
/// certain: positive reals, odd roots of negative reals, square roots of negative reals.
fn root(z: Ball, n: u64) -> Option<Ball> {
    if n == 1 {
        return Some(z);
    }
    if n > MAX_ROOT || !z.real || z.may_be_zero() {
        return None;
    }
    let a = z.re.abs();
    if a <= 4.0 * z.err {
        return None;
    }
    let nf = n as f64;
    let r = if n == 2 { a.sqrt() } else { a.powf(1.0 / nf) };
    let err = 2.0 * r * z.err / (nf * a) + 4.0 * U * r;
    if z.re > 0.0 {
        Ball::real(r, err)
    } else if n % 2 == 1 {
        Ball::real(-r, err)
    } else if n == 2 {
        Ball { re: 0.0, im: r, err, real: false }.finite()
    } else {
        None
    }
}

/// A small exact Gaussian rational (`(re + i im) / den`), to know the exponent of a power the
/// way the exact evaluator sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Small {
    re: i128,
    im: i128,
    den: i128,
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    a = a.abs();
    b = b.abs();
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Small {
    const LIMIT: i128 = 1 << 60;
    fn new(re: i128, im: i128, den: i128) -> Option<Small> {
        if den == 0 {
            return None;
        }
        let g = gcd(gcd(re, im), den);
        let s = if den < 0 { -g } else { g };
        let (re, im, den) = (re / s, im / s, den / s);
        (re.abs() < Self::LIMIT && im.abs() < Self::LIMIT && den < Self::LIMIT).then_some(Small { re, im, den })
    }
    fn from_rat(q: &BigRational) -> Option<Small> {
        Small::new(q.numer().to_i128()?, 0, q.denom().to_i128()?)
    }
    fn add(self, o: Small) -> Option<Small> {
        Small::new(
            self.re.checked_mul(o.den)?.checked_add(o.re.checked_mul(self.den)?)?,
            self.im.checked_mul(o.den)?.checked_add(o.im.checked_mul(self.den)?)?,
            self.den.checked_mul(o.den)?,
        )
    }
    fn mul(self, o: Small) -> Option<Small> {
        let re = self.re.checked_mul(o.re)?.checked_sub(self.im.checked_mul(o.im)?)?;
        let im = self.re.checked_mul(o.im)?.checked_add(self.im.checked_mul(o.re)?)?;
        Small::new(re, im, self.den.checked_mul(o.den)?)
    }
    fn recip(self) -> Option<Small> {
        // den / (re + i im) = den (re - i im) / (re^2 + im^2)
        let m = self.re.checked_mul(self.re)?.checked_add(self.im.checked_mul(self.im)?)?;
        Small::new(self.den.checked_mul(self.re)?, -(self.den.checked_mul(self.im)?), m)
    }
}

/// The exact value of an exponent built from literals, symbols, `i`, `+ - * /` and small
/// integer powers; `None` when it is anything else (then the screen does not model the power).
fn exact_small(e: &Expr, env: &[(String, BigRational)], depth: usize) -> Option<Small> {
    if depth > 16 {
        return None;
    }
    match e {
        Expr::Num(n) => Small::from_rat(&n.value),
        Expr::Sym(s) => Small::from_rat(&env.iter().find(|(name, _)| name == s)?.1),
        Expr::Const(Constant::I) => Some(Small { re: 0, im: 1, den: 1 }),
        Expr::Neg(a) => exact_small(a, env, depth + 1).map(|s| Small { re: -s.re, im: -s.im, den: s.den }),
        Expr::Add(v) => {
            v.iter().try_fold(Small { re: 0, im: 0, den: 1 }, |acc, t| acc.add(exact_small(t, env, depth + 1)?))
        }
        Expr::Mul(v) => {
            v.iter().try_fold(Small { re: 1, im: 0, den: 1 }, |acc, t| acc.mul(exact_small(t, env, depth + 1)?))
        }
        Expr::Div(a, b) => {
            let b = exact_small(b, env, depth + 1)?;
            if b.re == 0 && b.im == 0 {
                return None;
            }
            exact_small(a, env, depth + 1)?.mul(b.recip()?)
        }
        Expr::Pow(b, x) => {
            let x = exact_small(x, env, depth + 1)?;
            if x.im != 0 || x.den != 1 || x.re.abs() > 8 {
                return None;
            }
            let b = exact_small(b, env, depth + 1)?;
            if b.re == 0 && b.im == 0 {
                return None;
            }
            let mut r = Small { re: 1, im: 0, den: 1 };
            for _ in 0..x.re.abs() {
                r = r.mul(b)?;
            }
            if x.re < 0 {
                r = r.recip()?;
            }
            Some(r)
        }
        _ => None,
    }
}

/// Evaluates expressions as balls at one point.
pub struct Screen<'a> {
    env: &'a [(String, BigRational)],
    depth: usize,
    /// Nodes evaluated so far (the caller charges its budget with them).
    pub nodes: u64,
}

fn rat(q: &BigRational) -> Option<Ball> {
    if q.is_zero() {
        return Ball::real(0.0, 0.0);
    }
    let v = q.to_f64()?;
    if v.abs() < TINY {
        return None;
    }
    Ball::real(v, 2.0 * U * v.abs())
}

impl<'a> Screen<'a> {
    /// A screen for the variable assignment `env`.
    pub fn new(env: &'a [(String, BigRational)]) -> Self {
        Screen { env, depth: 0, nodes: 0 }
    }

    /// The value of `e` as a ball, or `None` when the screen does not model it.
    pub fn eval(&mut self, e: &Expr) -> Option<Ball> {
        if self.depth >= MAX_DEPTH {
            return None;
        }
        self.nodes += 1;
        self.depth += 1;
        let r = self.eval_inner(e);
        self.depth -= 1;
        r
    }

    fn eval_inner(&mut self, e: &Expr) -> Option<Ball> {
        match e {
            Expr::Num(n) => rat(&n.value),
            Expr::Sym(s) => rat(&self.env.iter().find(|(name, _)| name == s)?.1),
            Expr::Const(Constant::Pi) => Ball::real(std::f64::consts::PI, U),
            Expr::Const(Constant::E) => Ball::real(std::f64::consts::E, U),
            Expr::Const(Constant::I) => Some(Ball { re: 0.0, im: 1.0, err: 0.0, real: false }),
            Expr::Neg(a) => self.eval(a).map(neg),
            Expr::Add(ts) => {
                let mut acc = Ball::real(0.0, 0.0)?;
                for t in ts {
                    acc = add(acc, self.eval(t)?)?;
                }
                Some(acc)
            }
            Expr::Mul(fs) => {
                let mut acc = Ball::real(1.0, 0.0)?;
                for f in fs {
                    acc = mul(acc, self.eval(f)?)?;
                }
                Some(acc)
            }
            Expr::Div(a, b) => div(self.eval(a)?, self.eval(b)?),
            Expr::Pow(b, x) => self.pow(b, x),
            Expr::Root { index, radicand } => {
                let n = exact_small(index, self.env, 0)?;
                if n.im != 0 || n.den != 1 || n.re < 1 {
                    return None;
                }
                root(self.eval(radicand)?, u64::try_from(n.re).ok()?)
            }
            Expr::Func(f, args) => self.func(f, args),
            Expr::Log { base, arg } => {
                let lb = ln(self.eval(base)?)?;
                let la = ln(self.eval(arg)?)?;
                div(la, lb)
            }
            Expr::Percent(a) => div(self.eval(a)?, Ball::real(100.0, 0.0)?),
            Expr::Degrees(a) => {
                let r = mul(self.eval(a)?, Ball::real(std::f64::consts::PI, U)?)?;
                div(r, Ball::real(180.0, 0.0)?)
            }
            Expr::Quantity(a, u) => match u.unit().kind {
                crate::units::Kind::Scale => {
                    mul(self.eval(a)?, Ball::real(u.unit().factor, u.unit().factor.abs() * U)?)
                }
                crate::units::Kind::Measure(_) => self.eval(a),
            },
            _ => None,
        }
    }

    fn pow(&mut self, b: &Expr, x: &Expr) -> Option<Ball> {
        let z = self.eval(b)?;
        if let Some(s) = exact_small(x, self.env, 0) {
            if s.im == 0 {
                if s.den == 1 {
                    return powi(z, i64::try_from(s.re).ok()?);
                }
                let r = root(z, u64::try_from(s.den).ok()?)?;
                return powi(r, i64::try_from(s.re).ok()?);
            }
        }
        // General power exp(x ln b), principal branch.
        let w = self.eval(x)?;
        // The high-precision evaluator refuses |b^x| beyond 2^(10^9); stay far from that bound.
        if z.may_be_zero() || w.mag() * z.modulus().log2().abs().max(1.0) > 1e7 {
            return None;
        }
        let l = ln(z)?;
        exp(mul(w, l)?)
    }

    fn func(&mut self, f: &Func, args: &[Expr]) -> Option<Ball> {
        if matches!(f, Func::Max | Func::Min) && args.len() == 2 {
            // The larger or smaller of two certainly ordered real values.
            let (a, b) = (self.eval(&args[0])?, self.eval(&args[1])?);
            if !a.real || !b.real || (a.re - b.re).abs() <= 4.0 * (a.err + b.err) {
                return None;
            }
            return Some(if (a.re > b.re) == matches!(f, Func::Max) { a } else { b });
        }
        let [a] = args else { return None };
        let v = self.eval(a)?;
        match f {
            Func::Exp => return exp(v),
            Func::Ln => return ln(v),
            Func::Log10 => return div(ln(v)?, Ball::real(std::f64::consts::LN_10, U)?),
            Func::Abs => {
                let m = v.modulus();
                return Ball::real(m, v.err + 2.0 * U * m);
            }
            _ => {}
        }
        if !v.real {
            return None;
        }
        let (x, e) = (v.re, v.err);
        let one = Ball::real(1.0, 0.0)?;
        let plain = |r: f64, slope: f64| Ball::real(r, slope * e + 4.0 * U * (r.abs() + 1.0));
        match f {
            Func::Sin => plain(x.sin(), 1.0),
            Func::Cos => plain(x.cos(), 1.0),
            Func::Tan | Func::Cot => {
                let t = x.tan();
                let slope = 1.0 + t * t;
                if slope * e > 1e-3 {
                    return None;
                }
                let tb = plain(t, 2.0 * slope)?;
                if matches!(f, Func::Tan) {
                    Some(tb)
                } else {
                    div(one, tb)
                }
            }
            Func::Sec => div(one, plain(x.cos(), 1.0)?),
            Func::Csc => div(one, plain(x.sin(), 1.0)?),
            Func::Arcsin | Func::Arccos => inverse_trig(x, e, matches!(f, Func::Arcsin)),
            Func::Arcsec | Func::Arccsc => {
                let y = div(one, v)?;
                inverse_trig(y.re, y.err, matches!(f, Func::Arccsc))
            }
            Func::Arctan => plain(x.atan(), 1.0),
            Func::Arccot => {
                let y = div(one, v)?;
                let r = y.re.atan();
                Ball::real(r, y.err + 4.0 * U * (r.abs() + 1.0))
            }
            Func::Sinh | Func::Cosh => {
                if x.abs() + e > 700.0 {
                    return None;
                }
                let slope = (x.abs() + e).cosh();
                plain(if matches!(f, Func::Sinh) { x.sinh() } else { x.cosh() }, 2.0 * slope)
            }
            Func::Tanh => plain(x.tanh(), 1.0),
            Func::Coth => div(one, plain(x.tanh(), 1.0)?),
            Func::Floor | Func::Ceil => {
                // Certain only when no integer lies within the ball (with a margin).
                let r = if matches!(f, Func::Floor) { x.floor() } else { x.ceil() };
                let margin = 4.0 * e + 4.0 * U * (x.abs() + 1.0);
                if (x - x.floor()) <= margin || (x.ceil() - x) <= margin || r.abs() > 1e15 {
                    return None;
                }
                Ball::real(r, 0.0)
            }
            _ => None,
        }
    }
}

/// `\arcsin` / `\arccos` strictly inside their domain.
fn inverse_trig(x: f64, e: f64, sin: bool) -> Option<Ball> {
    let edge = x.abs() + 4.0 * e;
    if edge >= 1.0 {
        return None;
    }
    let slope = 1.0 / (1.0 - edge * edge).sqrt();
    let r = if sin { x.asin() } else { x.acos() };
    Ball::real(r, 2.0 * slope * e + 4.0 * U * (r.abs() + 1.0))
}

/// Whether the numbers in `a` and `b` certainly differ by more than `tol` relative, and by far
/// more than a cancellation residue (so the high-precision comparison says `NotEqual` as well).
pub fn clearly_different(a: &Ball, b: &Ball, tol: f64) -> bool {
    let d = (a.re - b.re).hypot(a.im - b.im);
    let slack = SAFETY * (a.err + b.err) + 8.0 * U * (a.mag() + b.mag());
    let low = d - slack;
    // NaN (from an infinite error bound) is not a difference.
    if low.is_nan() || low <= 0.0 {
        return false;
    }
    let m = a.modulus().max(b.modulus()) + SAFETY * a.err.max(b.err);
    low > 4.0 * tol * m && low > 1e-20 * m.max(1.0)
}

/// Evaluate both sides at `env` and tell whether they certainly differ, with the number of nodes
/// evaluated (the cost, for the caller's budget: about 50 ns each).
///
/// With `real_only`, only values computed by real operations count (the caller skips points where
/// a side is non-real, so a difference there must not decide).
pub fn differ_at(g: &Expr, p: &Expr, env: &[(String, BigRational)], tol: f64, real_only: bool) -> (bool, u64) {
    let mut s = Screen::new(env);
    let differ = match (s.eval(g), s.eval(p)) {
        (Some(gv), Some(pv)) => (!real_only || (gv.real && pv.real)) && clearly_different(&gv, &pv, tol),
        _ => false,
    };
    (differ, s.nodes)
}

/// The ratio `a / b` at `env` when both sides and the quotient are certainly defined there,
/// with the number of nodes evaluated.
pub fn ratio_at(a: &Expr, b: &Expr, env: &[(String, BigRational)]) -> (Option<Ball>, u64) {
    let mut s = Screen::new(env);
    let r = match (s.eval(a), s.eval(b)) {
        (Some(x), Some(y)) => div(x, y),
        _ => None,
    };
    (r, s.nodes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigInt;

    fn q(n: i64, d: i64) -> BigRational {
        BigRational::new(BigInt::from(n), BigInt::from(d))
    }
    use crate::latex::parse;
    use crate::limits::Limits;

    fn e(s: &str) -> Expr {
        match parse(s, &Limits::default()) {
            Ok(x) => x,
            Err(err) => panic!("{s}: {err:?}"),
        }
    }

    fn env() -> Vec<(String, BigRational)> {
        vec![("t".into(), q(7, 5)), ("x".into(), q(2, 3)), ("c".into(), q(11, 13))]
    }

    #[test]
    fn different_values_are_told_apart() {
        let cases = [
            ("\\frac{e^{t}}{3}+ce^{-2t}", "\\frac{e^{t}}{3}-ce^{-2t}"),
            ("\\sin x", "\\cos x"),
            ("2+\\pi", "2\\pi"),
            ("\\sqrt{x}", "x^{1/3}"),
            ("e^{2it}", "e^{-2it}"),
            ("\\ln(x+1)", "\\log(x+1)"),
            ("x^{2}", "x^{3}"),
        ];
        for (a, b) in cases {
            assert!(differ_at(&e(a), &e(b), &env(), 1e-30, false).0, "{a} vs {b}");
        }
    }

    #[test]
    fn equal_or_doubtful_values_are_not_called_different() {
        let cases = [
            ("\\frac{e^{t}}{3}+ce^{-2t}", "\\frac{1}{3} e^{t}+c e^{-2t}"),
            ("\\cos^2 x + \\sin^2 x", "1"),
            ("(x+1)^2", "x^2+2x+1"),
            // Within the decimal tolerance.
            ("x", "x + 10^{-9}"),
            // Below f64 resolution: only the high-precision path can tell.
            ("1+10^{-20}x", "1"),
            // Division by an exact zero: undefined, not different.
            ("\\frac{1}{x-x}", "1"),
            // Domain edges and branch cuts are left to the exact path.
            ("\\arcsin(3x)", "0"),
            ("\\ln(-x)", "0"),
            // Not modelled.
            ("x!", "3"),
            ("f(x)", "g(x)"),
        ];
        for (a, b) in cases {
            let tol = if b.contains("10^{-9}") { 1e-6 } else { 1e-30 };
            assert!(!differ_at(&e(a), &e(b), &env(), tol, false).0, "{a} vs {b}");
        }
    }

    #[test]
    fn odd_roots_of_negative_reals_are_real() {
        let mut s = Screen::new(&[]);
        let v = s.eval(&e("\\sqrt[3]{-8}")).map(|b| (b.re, b.im, b.real));
        assert!(matches!(v, Some((r, i, true)) if (r + 2.0).abs() < 1e-12 && i == 0.0));
        let v = s.eval(&e("(-8)^{1/3}")).map(|b| (b.re, b.real));
        assert!(matches!(v, Some((r, true)) if (r + 2.0).abs() < 1e-12));
    }
}
