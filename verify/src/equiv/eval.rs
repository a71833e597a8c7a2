//! Evaluation of an expression to a number: exact (Gaussian rationals) while every step is
//! rational, high-precision complex floats (astro-float) otherwise.
//!
//! Free symbols take values from an environment (random rational points chosen by the caller).
//! A user function `f(..)` is evaluated as a fixed rational function derived from its name, so
//! `f(x+1)` and `f(1+x)` agree and `f(x)`, `g(x)` do not. When an exact computation would exceed
//! an integer cap, the value is approximated instead and [`Evaluator::capped`] records the cap, so
//! that the caller never reports `Equal` on the strength of an approximation of a huge number.

use super::elementary;
pub use super::elementary::bf_to_f64;
use super::number::{self, Q};
use crate::ast::{Constant, Expr, Func};
use crate::limits::{Budget, LimitKind};
use astro_float::{BigFloat, Consts, RoundingMode, Sign};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

/// Step charges of float operations at 256 bits, proportional to their measured cost (astro-float
/// 0.9, release build): about 20 steps per microsecond, so that the default budget of 200,000
/// steps stops a comparison after roughly 10 ms.
mod cost {
    /// Complex addition.
    pub const ADD: u64 = 8;
    /// Complex multiplication.
    pub const MUL: u64 = 20;
    /// Complex division.
    pub const DIV: u64 = 30;
    /// Base of an exact rational operation (plus its size in 32-bit words).
    pub const EXACT: u64 = 4;
    /// `exp` (~20-40 us with [`super::elementary::exp`]; astro-float's own takes ~65 us).
    pub const EXP: u64 = 800;
    /// astro-float's `ln` of a positive real (~130 us); a complex one adds an `atan`.
    pub const LN: u64 = 2600;
    /// [`super::elementary::ln`] (two `exp` and a few operations).
    pub const LN_FAST: u64 = 1600;
    /// `atan`, `asin`, `acos` (~120 us).
    pub const INV_TRIG: u64 = 2400;
    /// `sin`, `cos`, `tan` (~25-50 us for both with [`super::elementary::cos_sin`]).
    pub const TRIG: u64 = 1000;
    /// `sinh`, `cosh`, `tanh` (an `exp` and a few operations).
    pub const HYP: u64 = 1500;
    /// astro-float's real power (`ln` and `exp`, ~210 us).
    pub const POW: u64 = 4300;
    /// A square root or an integer root (~20 us).
    pub const ROOT: u64 = 400;
}

/// Default working precision in bits.
pub const PREC: usize = 256;
const RM: RoundingMode = RoundingMode::ToEven;
/// Evaluation recursion bound (the parser bounds nesting; this guards hand-built trees).
const MAX_EVAL_DEPTH: usize = 128;
/// Largest root index evaluated.
const MAX_ROOT_INDEX: u64 = 1 << 12;
/// Largest argument of `sin`/`cos`/`tan`, in bits of its magnitude (about 10^4932): beyond it the
/// argument reduction alone would exceed any step budget.
const MAX_TRIG_ARG_BITS: u64 = 1 << 14;

/// A complex high-precision float.
#[derive(Clone, Debug)]
pub struct Cf {
    /// Real part.
    pub re: BigFloat,
    /// Imaginary part.
    pub im: BigFloat,
}

/// The value of an expression.
#[derive(Clone, Debug)]
pub enum Value {
    /// An exact complex rational.
    Exact(Q),
    /// A high-precision complex float.
    Approx(Cf),
}

/// Why an expression has no value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvalErr {
    /// A cost bound was hit.
    Limit(LimitKind),
    /// Outside the domain (division by zero, `\arcsin 2`, `0^0`).
    Undefined,
    /// Not a number at all (a set, an unknown symbol, infinity).
    NotNumeric,
}

impl From<LimitKind> for EvalErr {
    fn from(k: LimitKind) -> Self {
        EvalErr::Limit(k)
    }
}

type R<T> = Result<T, EvalErr>;

/// A variable assignment.
pub type Env = [(String, BigRational)];

/// Evaluates expressions at one precision with one environment.
pub struct Evaluator<'a> {
    prec: usize,
    budget: &'a mut Budget,
    cc: &'a mut Option<Consts>,
    env: &'a Env,
    /// Set when an exact computation hit a cap and was approximated.
    pub capped: Option<LimitKind>,
    depth: usize,
    /// Results of the costly float functions already computed by this evaluator (one point, both
    /// sides: `e^{-t}` written four times is computed once).
    memo: Vec<MemoEntry>,
    /// Real domains: an even root or a logarithm of a negative real (so also a non-integer power
    /// of one) is undefined instead of complex. Set for the points of free-symbol comparisons
    /// without `i`, so that points outside a side's real domain are skipped.
    pub real_domain: bool,
}

/// A real value below zero.
fn negative_real(v: &Value) -> bool {
    match v {
        Value::Exact(q) => q.is_real() && q.re.is_negative(),
        Value::Approx(c) => c.is_real() && c.re.is_negative(),
    }
}

/// A memoised float function.
#[derive(Clone, Debug, PartialEq)]
enum Op {
    Exp,
    /// `(cos x, sin x)` of a real `x`, kept as the complex number `cos x + i sin x`.
    CosSin,
    Ln,
    Pow,
    Func(Func),
}

#[derive(Debug)]
struct MemoEntry {
    op: Op,
    arg: Value,
    arg2: Option<Value>,
    result: Value,
}

/// astro-float constants caches (digits of `π`, `e`, `ln 2`, `ln 10`) that no comparison holds:
/// a comparison that needs constants takes one and gives it back ([`give_back_consts`]), so that
/// each constant is computed once per process, not once per thread. They only memoise constants,
/// so verdicts do not depend on which one a comparison gets.
static CONSTS: std::sync::Mutex<Vec<Consts>> = std::sync::Mutex::new(Vec::new());

fn take_consts() -> Option<Consts> {
    CONSTS.lock().unwrap_or_else(std::sync::PoisonError::into_inner).pop()
}

/// Return the constants cache a comparison took.
pub fn give_back_consts(cc: Consts) {
    CONSTS.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(cc);
}

/// Largest number of memoised results per evaluator.
const MEMO_CAP: usize = 32;

/// The same number (same exactness, same value; float precision is not compared).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Exact(x), Value::Exact(y)) => x == y,
        (Value::Approx(x), Value::Approx(y)) => x.re.cmp(&y.re) == Some(0) && x.im.cmp(&y.im) == Some(0),
        _ => false,
    }
}

fn bf_zero(p: usize) -> BigFloat {
    BigFloat::from_word(0, p)
}

fn check(x: BigFloat) -> R<BigFloat> {
    if x.is_nan() {
        Err(EvalErr::Undefined)
    } else if x.is_inf() {
        Err(EvalErr::Limit(LimitKind::ExponentTooLarge))
    } else {
        Ok(x)
    }
}

/// Exact conversion of a big integer.
pub fn int_to_bf(n: &BigInt) -> BigFloat {
    let (sign, digits) = n.to_u64_digits();
    if digits.is_empty() {
        return bf_zero(64);
    }
    let s = if sign == num_bigint::Sign::Minus { Sign::Neg } else { Sign::Pos };
    let e = (digits.len() * 64) as i32;
    let words: Vec<astro_float::Word> = digits.iter().map(|&d| d as astro_float::Word).collect();
    BigFloat::from_words(&words, s, e)
}

/// `q^(1/n)` for a positive rational and a small `n`, to `p` bits, from an integer `n`-th root
/// with 64 guard bits (`None` when the numbers involved would be large).
fn root_rat(q: &BigRational, n: u32, p: usize) -> Option<BigFloat> {
    if !(2..=16).contains(&n) || !q.is_positive() {
        return None;
    }
    let n64 = u64::from(n);
    if q.numer().bits() + (n64 - 1) * q.denom().bits() > 200_000 {
        return None;
    }
    let num = q.numer() * num_traits::Pow::pow(q.denom(), n - 1);
    let target = (p as u64 + 64) * n64;
    let have = num.bits();
    let k = if have >= target { 0 } else { (target - have).div_ceil(n64) };
    let scaled = num << usize::try_from(k * n64).ok()?;
    let r = scaled.nth_root(n);
    let den = q.denom() << usize::try_from(k).ok()?;
    Some(int_to_bf(&r).div(&int_to_bf(&den), p, RM))
}

/// A rational rounded to `p` bits.
pub fn rat_to_bf(q: &BigRational, p: usize) -> BigFloat {
    if q.denom().is_one() {
        let mut x = int_to_bf(q.numer());
        let _ = x.set_precision(p.max(64), RM);
        return x;
    }
    int_to_bf(q.numer()).div(&int_to_bf(q.denom()), p, RM)
}

/// The exact rational value of a finite float (`None` when too large for `max_bits`).
pub fn bf_to_rat(x: &BigFloat, max_bits: u64) -> Option<BigRational> {
    if x.is_zero() {
        return Some(BigRational::zero());
    }
    let (words, _, sign, e, _) = x.as_raw_parts()?;
    let total = (words.len() * 64) as i64;
    let shift = i64::from(e) - total;
    if shift.unsigned_abs() > max_bits + total as u64 {
        return None;
    }
    let mut m = BigInt::zero();
    for w in words.iter().rev() {
        m = (m << 64) + BigInt::from(*w);
    }
    if sign == Sign::Neg {
        m = -m;
    }
    let r = if shift >= 0 {
        BigRational::from_integer(m << shift as usize)
    } else {
        BigRational::new(m, BigInt::one() << (-shift) as usize)
    };
    Some(r)
}

impl Cf {
    fn real(re: BigFloat, p: usize) -> Cf {
        Cf { re, im: bf_zero(p) }
    }
    /// Whether the imaginary part is exactly zero.
    pub fn is_real(&self) -> bool {
        self.im.is_zero()
    }
    /// `|z|` (or `|re|` for a real).
    pub fn modulus(&self, p: usize) -> BigFloat {
        if self.im.is_zero() {
            return self.re.abs();
        }
        if self.re.is_zero() {
            return self.im.abs();
        }
        let s = self.re.mul(&self.re, p, RM).add(&self.im.mul(&self.im, p, RM), p, RM);
        s.sqrt(p, RM)
    }
    /// `|z|^2`.
    pub fn norm_sqr(&self, p: usize) -> BigFloat {
        if self.im.is_zero() {
            return self.re.mul(&self.re, p, RM);
        }
        self.re.mul(&self.re, p, RM).add(&self.im.mul(&self.im, p, RM), p, RM)
    }
    fn add(&self, o: &Cf, p: usize) -> Cf {
        Cf { re: self.re.add(&o.re, p, RM), im: self.im.add(&o.im, p, RM) }
    }
    /// `self - o`.
    pub fn sub(&self, o: &Cf, p: usize) -> Cf {
        Cf { re: self.re.sub(&o.re, p, RM), im: self.im.sub(&o.im, p, RM) }
    }
    fn mul(&self, o: &Cf, p: usize) -> Cf {
        if self.im.is_zero() && o.im.is_zero() {
            return Cf::real(self.re.mul(&o.re, p, RM), p);
        }
        Cf {
            re: self.re.mul(&o.re, p, RM).sub(&self.im.mul(&o.im, p, RM), p, RM),
            im: self.re.mul(&o.im, p, RM).add(&self.im.mul(&o.re, p, RM), p, RM),
        }
    }
    fn is_zero(&self) -> bool {
        self.re.is_zero() && self.im.is_zero()
    }
    fn div(&self, o: &Cf, p: usize) -> R<Cf> {
        if o.is_zero() {
            return Err(EvalErr::Undefined);
        }
        if o.im.is_zero() {
            return Ok(Cf { re: self.re.div(&o.re, p, RM), im: self.im.div(&o.re, p, RM) });
        }
        let den = o.re.mul(&o.re, p, RM).add(&o.im.mul(&o.im, p, RM), p, RM);
        let conj = Cf { re: o.re.clone(), im: o.im.neg() };
        let n = self.mul(&conj, p);
        Ok(Cf { re: n.re.div(&den, p, RM), im: n.im.div(&den, p, RM) })
    }
    fn neg(&self) -> Cf {
        Cf { re: self.re.neg(), im: self.im.neg() }
    }
    fn checked(self) -> R<Cf> {
        Ok(Cf { re: check(self.re)?, im: check(self.im)? })
    }
}

impl Value {
    /// The value as a complex float at precision `p`.
    pub fn to_cf(&self, p: usize) -> Cf {
        match self {
            Value::Exact(q) => {
                Cf { re: rat_to_bf(&q.re, p), im: if q.im.is_zero() { bf_zero(p) } else { rat_to_bf(&q.im, p) } }
            }
            Value::Approx(c) => c.clone(),
        }
    }
    /// The exact value if it is exact.
    pub fn exact(&self) -> Option<&Q> {
        match self {
            Value::Exact(q) => Some(q),
            Value::Approx(_) => None,
        }
    }
    fn exact_int(&self) -> Option<BigInt> {
        match self {
            Value::Exact(q) if q.is_real() && q.re.is_integer() => Some(q.re.to_integer()),
            _ => None,
        }
    }
}

impl<'a> Evaluator<'a> {
    /// A new evaluator. `cc` is the lazily created astro-float constants cache.
    pub fn new(prec: usize, budget: &'a mut Budget, cc: &'a mut Option<Consts>, env: &'a Env) -> Self {
        Evaluator { prec, budget, cc, env, capped: None, depth: 0, memo: Vec::new(), real_domain: false }
    }

    fn memo_get(&mut self, op: &Op, arg: &Value, arg2: Option<&Value>) -> Option<Value> {
        let hit = self.memo.iter().find(|m| {
            m.op == *op
                && same_value(&m.arg, arg)
                && match (&m.arg2, arg2) {
                    (None, None) => true,
                    (Some(a), Some(b)) => same_value(a, b),
                    _ => false,
                }
        });
        hit.map(|m| m.result.clone())
    }

    fn memo_put(&mut self, op: Op, arg: Value, arg2: Option<Value>, result: &Value) {
        if self.memo.len() < MEMO_CAP {
            self.memo.push(MemoEntry { op, arg, arg2, result: result.clone() });
        }
    }

    fn consts(&mut self) -> R<&mut Consts> {
        if self.cc.is_none() {
            *self.cc = Some(match take_consts() {
                Some(cc) => cc,
                None => Consts::new().map_err(|_| EvalErr::Undefined)?,
            });
        }
        self.cc.as_mut().ok_or(EvalErr::Undefined)
    }

    fn pi(&mut self) -> R<BigFloat> {
        let p = self.prec;
        Ok(self.consts()?.pi(p, RM))
    }

    /// Evaluate `e`.
    pub fn eval(&mut self, e: &Expr) -> R<Value> {
        self.budget.charge(1)?;
        self.depth += 1;
        if self.depth > MAX_EVAL_DEPTH {
            self.depth -= 1;
            return Err(EvalErr::Limit(LimitKind::TooDeep));
        }
        let r = self.eval_inner(e);
        self.depth -= 1;
        r
    }

    fn eval_inner(&mut self, e: &Expr) -> R<Value> {
        match e {
            Expr::Num(n) => Ok(Value::Exact(Q::real(n.value.clone()))),
            Expr::Sym(s) => match self.env.iter().find(|(name, _)| name == s) {
                Some((_, v)) => Ok(Value::Exact(Q::real(v.clone()))),
                None => Err(EvalErr::NotNumeric),
            },
            Expr::Neg(a) => {
                let v = self.eval(a)?;
                Ok(self.neg(v))
            }
            Expr::Add(ts) => {
                let Some((first, rest)) = ts.split_first() else { return Ok(Value::Exact(Q::int(0))) };
                let mut acc = self.eval(first)?;
                for t in rest {
                    let v = self.eval(t)?;
                    acc = self.add(acc, v)?;
                }
                Ok(acc)
            }
            Expr::Mul(fs) => {
                let Some((first, rest)) = fs.split_first() else { return Ok(Value::Exact(Q::int(1))) };
                let mut acc = self.eval(first)?;
                for f in rest {
                    let v = self.eval(f)?;
                    acc = self.mul(acc, v)?;
                }
                Ok(acc)
            }
            Expr::Div(a, b) => {
                let x = self.eval(a)?;
                let y = self.eval(b)?;
                self.div(x, y)
            }
            Expr::Pow(b, x) => {
                if let Expr::Const(Constant::E) = **b {
                    // e^x: the exponential directly (astro-float's general power goes through a
                    // logarithm and costs three times as much). Integer exponents keep the
                    // repeated-multiplication path below.
                    let xv = self.eval(x)?;
                    let integer = xv.exact().is_some_and(|q| q.is_real() && q.re.is_integer());
                    if !integer {
                        return self.exp_of(xv);
                    }
                    let bv = self.eval(b)?;
                    return self.pow(bv, xv);
                }
                let bv = self.eval(b)?;
                let xv = self.eval(x)?;
                self.pow(bv, xv)
            }
            _ => self.eval_rare(e),
        }
    }

    /// The less common nodes, kept out of `eval_inner` so that its stack frame stays small.
    #[inline(never)]
    fn eval_rare(&mut self, e: &Expr) -> R<Value> {
        let p = self.prec;
        match e {
            Expr::Const(Constant::Pi) => Ok(Value::Approx(Cf::real(self.pi()?, p))),
            Expr::Const(Constant::E) => {
                let e = self.consts()?.e(p, RM);
                Ok(Value::Approx(Cf::real(e, p)))
            }
            Expr::Const(Constant::I) => Ok(Value::Exact(Q::i())),
            Expr::Const(Constant::Infinity) => Err(EvalErr::NotNumeric),
            Expr::Root { index, radicand } => {
                let n = self.eval(index)?.exact_int().ok_or(EvalErr::Undefined)?;
                let n = match n.to_u64() {
                    Some(n) if (1..=MAX_ROOT_INDEX).contains(&n) => n,
                    _ => return Err(EvalErr::Undefined),
                };
                let r = self.eval(radicand)?;
                self.root(r, n)
            }
            Expr::Func(f, args) => self.func(f, args),
            Expr::Log { base, arg } => {
                let b = self.eval(base)?;
                let a = self.eval(arg)?;
                let lb = self.ln(b)?;
                let la = self.ln(a)?;
                self.div(la, lb)
            }
            Expr::Factorial(a) => {
                let n = self.eval(a)?.exact_int().ok_or(EvalErr::Undefined)?;
                if n.is_negative() {
                    return Err(EvalErr::Undefined);
                }
                let f = number::factorial(&n, self.budget)?;
                Ok(Value::Exact(Q::real(BigRational::from_integer(f))))
            }
            Expr::Binom(n, k) => {
                let n = self.eval(n)?.exact_int().ok_or(EvalErr::Undefined)?;
                let k = self.eval(k)?.exact_int().ok_or(EvalErr::Undefined)?;
                let v = number::binom(&n, &k, self.budget)?;
                Ok(Value::Exact(Q::real(BigRational::from_integer(v))))
            }
            Expr::Percent(a) => {
                let v = self.eval(a)?;
                self.div(v, Value::Exact(Q::int(100)))
            }
            Expr::Degrees(a) => {
                let v = self.eval(a)?;
                let pi = Value::Approx(Cf::real(self.pi()?, p));
                let r = self.mul(v, pi)?;
                self.div(r, Value::Exact(Q::int(180)))
            }
            // A unit of measure is compared apart (`equiv::scalar`); a scale unit is its number.
            Expr::Quantity(a, u) => match crate::units::scale_of(*u) {
                Some(scale) => self.eval(&Expr::Mul(vec![(**a).clone(), scale])),
                None => self.eval(a),
            },
            _ => Err(EvalErr::NotNumeric),
        }
    }

    /// Charge a float operation, scaled by the working precision (256 bits = 1x; astro-float's
    /// functions at 1024 bits cost about 3 to 4 times as much as at 256).
    fn charge_float(&mut self, steps: u64) -> Result<(), LimitKind> {
        let scale = (self.prec / PREC).max(1) as u64;
        self.budget.charge(steps * scale)
    }

    /// Charge an exact operation on `a` and `b` by the size of the numbers. The gcd that reduces
    /// each result (num-bigint's binary gcd) takes one pass over the larger number per bit it
    /// removes, so its cost grows with the square of that size: a 65k-bit integer times a decimal
    /// took ~100 ms under a linear charge (found by the fuzzer).
    fn charge_exact(&mut self, a: &Q, b: &Q) -> Result<(), LimitKind> {
        let sizes = [number::bits(&a.re), number::bits(&a.im), number::bits(&b.re), number::bits(&b.im)];
        let (bits, largest) = (sizes.iter().sum::<u64>(), sizes.into_iter().max().unwrap_or(0));
        self.budget.charge(cost::EXACT + bits / 32 + largest * largest / (1 << 15))
    }

    /// The charge of a function [`elementary`] served: `fast` at the working precision, `astro`
    /// (astro-float's, which served it before) above, so that the budget, and so every verdict
    /// that hits it, stays what it was when the 1024-bit re-evaluation used astro-float.
    fn served_cost(&self, fast: u64, astro: u64) -> u64 {
        if self.prec <= PREC {
            fast
        } else {
            astro
        }
    }

    fn note_cap(&mut self, k: LimitKind) {
        if self.capped.is_none() {
            self.capped = Some(k);
        }
    }

    fn neg(&mut self, v: Value) -> Value {
        match v {
            Value::Exact(q) => Value::Exact(q.negate()),
            Value::Approx(c) => Value::Approx(c.neg()),
        }
    }

    fn add(&mut self, a: Value, b: Value) -> R<Value> {
        if let (Value::Exact(x), Value::Exact(y)) = (&a, &b) {
            self.charge_exact(x, y)?;
            match x.add(y, self.budget) {
                Ok(q) => return Ok(Value::Exact(q)),
                Err(k) => self.note_cap(k),
            }
        }
        self.charge_float(cost::ADD)?;
        let p = self.prec;
        Ok(Value::Approx(a.to_cf(p).add(&b.to_cf(p), p).checked()?))
    }

    fn mul(&mut self, a: Value, b: Value) -> R<Value> {
        if let (Value::Exact(x), Value::Exact(y)) = (&a, &b) {
            self.charge_exact(x, y)?;
            match x.mul(y, self.budget) {
                Ok(q) => return Ok(Value::Exact(q)),
                Err(k) => self.note_cap(k),
            }
        }
        // An exact zero factor keeps the product exactly zero.
        if a.exact().is_some_and(Q::is_zero) || b.exact().is_some_and(Q::is_zero) {
            return Ok(Value::Exact(Q::int(0)));
        }
        self.charge_float(cost::MUL)?;
        let p = self.prec;
        Ok(Value::Approx(a.to_cf(p).mul(&b.to_cf(p), p).checked()?))
    }

    /// `a / b` (exact when both are exact).
    pub fn divide(&mut self, a: Value, b: Value) -> R<Value> {
        self.div(a, b)
    }

    fn div(&mut self, a: Value, b: Value) -> R<Value> {
        if let (Value::Exact(x), Value::Exact(y)) = (&a, &b) {
            self.charge_exact(x, y)?;
            match x.div(y, self.budget) {
                Ok(Some(q)) => return Ok(Value::Exact(q)),
                Ok(None) => return Err(EvalErr::Undefined),
                Err(k) => self.note_cap(k),
            }
        }
        if a.exact().is_some_and(Q::is_zero) && !b.to_cf(64).is_zero() {
            return Ok(Value::Exact(Q::int(0)));
        }
        self.charge_float(cost::DIV)?;
        let p = self.prec;
        Ok(Value::Approx(a.to_cf(p).div(&b.to_cf(p), p)?.checked()?))
    }

    /// Complex float power by squaring, `|n| <= max_exponent`.
    fn powi_cf(&mut self, z: &Cf, n: u64, negative: bool) -> R<Cf> {
        let p = self.prec;
        let mut result = Cf::real(BigFloat::from_word(1, p), p);
        let mut sq = z.clone();
        let mut k = n;
        while k > 0 {
            self.charge_float(2 * cost::MUL)?;
            if k & 1 == 1 {
                result = result.mul(&sq, p).checked()?;
            }
            k >>= 1;
            if k > 0 {
                sq = sq.mul(&sq, p).checked()?;
            }
        }
        if negative {
            let one = Cf::real(BigFloat::from_word(1, p), p);
            result = one.div(&result, p)?.checked()?;
        }
        Ok(result)
    }

    fn pow(&mut self, b: Value, x: Value) -> R<Value> {
        let p = self.prec;
        if let Value::Exact(xq) = &x {
            if xq.is_real() {
                let xr = xq.re.clone();
                if xr.is_integer() {
                    let n = xr.to_integer();
                    if let Value::Exact(bq) = &b {
                        if bq.is_zero() {
                            return if n.is_positive() { Ok(Value::Exact(Q::int(0))) } else { Err(EvalErr::Undefined) };
                        }
                        match bq.pow(&n, self.budget) {
                            Ok(Some(q)) => return Ok(Value::Exact(q)),
                            Ok(None) => return Err(EvalErr::Undefined),
                            Err(LimitKind::StepBudget) => return Err(EvalErr::Limit(LimitKind::StepBudget)),
                            Err(k) => self.note_cap(k),
                        }
                    }
                    if let Some(e) = n.abs().to_u64() {
                        if e <= self.budget.limits.max_exponent {
                            let z = b.to_cf(p);
                            if z.is_zero() {
                                return if n.is_positive() {
                                    Ok(Value::Exact(Q::int(0)))
                                } else {
                                    Err(EvalErr::Undefined)
                                };
                            }
                            return Ok(Value::Approx(self.powi_cf(&z, e, n.is_negative())?));
                        }
                    }
                    self.note_cap(LimitKind::ExponentTooLarge);
                } else {
                    // Rational exponent num/den: exact when the root is rational; real roots of
                    // negative bases for odd denominators.
                    let num = xr.numer().clone();
                    if let Some(den) = xr.denom().to_u64().filter(|d| *d <= MAX_ROOT_INDEX) {
                        let exact_root = match &b {
                            Value::Exact(q) if q.is_real() => {
                                self.budget.charge(1 + number::bits(&q.re) / 64)?;
                                let den32 = u32::try_from(den).map_err(|_| EvalErr::Undefined)?;
                                number::rational_root(&q.re.abs(), den32).is_some()
                            }
                            _ => false,
                        };
                        if !exact_root {
                            // No exact root: `b^x` is a float power `exp(x ln |b|)`, with the sign
                            // of the real odd root of a negative base. (Taking the root first and
                            // raising it to the numerator cost a 997th root at every sampled
                            // point, and a numerator beyond `max_exponent` noted a cap: `3^n`
                            // against `3 \cdot 3^{n-1}` ended in `exponent_too_large`.)
                            let sign = match &b {
                                Value::Exact(q) if q.is_real() && !q.re.is_zero() => Some(q.re.is_negative()),
                                Value::Approx(c) if c.is_real() && !c.re.is_zero() => Some(c.re.is_negative()),
                                _ => None,
                            };
                            match sign {
                                Some(false) => return self.general_pow(b, x),
                                Some(true) if den % 2 == 1 => {
                                    let abs_b = self.neg(b);
                                    let m = self.general_pow(abs_b, x)?;
                                    return Ok(if num.bit(0) { self.neg(m) } else { m });
                                }
                                _ => {}
                            }
                        }
                        let r = self.root(b, den)?;
                        return self.pow(r, Value::Exact(Q::real(BigRational::from_integer(num))));
                    }
                }
            }
        }
        self.general_pow(b, x)
    }

    /// `b^x = exp(x ln b)` (principal branch).
    fn general_pow(&mut self, b: Value, x: Value) -> R<Value> {
        if let Some(r) = self.memo_get(&Op::Pow, &b, Some(&x)) {
            self.budget.charge(1)?;
            return Ok(r);
        }
        let r = self.general_pow_uncached(&b, &x)?;
        self.memo_put(Op::Pow, b, Some(x), &r);
        Ok(r)
    }

    fn general_pow_uncached(&mut self, b: &Value, x: &Value) -> R<Value> {
        let p = self.prec;
        self.charge_float(cost::MUL)?;
        let z = b.to_cf(p);
        if z.is_zero() {
            let w = x.to_cf(p);
            return if w.re.is_positive() { Ok(Value::Exact(Q::int(0))) } else { Err(EvalErr::Undefined) };
        }
        let w = x.to_cf(p);
        // |b^x| <= 2^(|e_b| |x|): refuse results whose binary exponent could leave the float range
        // (`2^{10^{10}}`) before computing them.
        // The binary exponent of |b|, from |b|^2 (astro-float square roots are slow).
        let e2 = z.norm_sqr(p).exponent().unwrap_or(0);
        let eb = f64::from((e2 + 1).div_euclid(2).unsigned_abs().max(1));
        let wm = bf_to_f64(&w.re).hypot(bf_to_f64(&w.im));
        let bound = eb * wm;
        if bound.is_nan() || bound >= 1e9 {
            return Err(EvalErr::Limit(LimitKind::ExponentTooLarge));
        }
        if z.is_real() && z.re.is_positive() && w.is_real() {
            // b^x = e^(x ln b) with the fast functions (astro-float's power costs ~210 us);
            // ln b is memoised, so 2^{a}, 2^{a-1}, ... share it at a point.
            if let Value::Approx(l) = self.ln(Value::Approx(z.clone()))? {
                let t = w.re.mul(&l.re, p, RM);
                if let Some(r) = elementary::exp(&t, p) {
                    self.charge_float(self.served_cost(cost::EXP, cost::POW))?;
                    return Ok(Value::Approx(Cf::real(r, p)));
                }
            }
            self.charge_float(cost::POW)?;
            let cc = self.consts()?;
            let r = check(z.re.pow(&w.re, p, RM, cc))?;
            return Ok(Value::Approx(Cf::real(r, p)));
        }
        let l = self.ln(Value::Approx(z))?.to_cf(p);
        self.exp_cf(&w.mul(&l, p))
    }

    /// Principal `n`-th root, except that odd roots of negative reals are real.
    fn root(&mut self, v: Value, n: u64) -> R<Value> {
        let p = self.prec;
        if n == 1 {
            return Ok(v);
        }
        let n32 = u32::try_from(n).map_err(|_| EvalErr::Undefined)?;
        if self.real_domain && n.is_multiple_of(2) && negative_real(&v) {
            return Err(EvalErr::Undefined);
        }
        if let Value::Exact(q) = &v {
            if q.is_real() {
                self.budget.charge(1 + number::bits(&q.re) / 64)?;
                let neg = q.re.is_negative();
                let abs = q.re.abs();
                if let Some(r) = number::rational_root(&abs, n32) {
                    if !neg {
                        return Ok(Value::Exact(Q::real(r)));
                    }
                    if n % 2 == 1 {
                        return Ok(Value::Exact(Q::real(-r)));
                    }
                    if n == 2 {
                        return Ok(Value::Exact(Q { re: BigRational::zero(), im: r }));
                    }
                }
            }
        }
        self.charge_float(cost::ROOT)?;
        let z = v.to_cf(p);
        if z.is_zero() {
            return Ok(Value::Exact(Q::int(0)));
        }
        if z.is_real() {
            let neg = z.re.is_negative();
            if !neg || n % 2 == 1 || n == 2 {
                let a = z.re.abs();
                // Integer roots of the exact rational value: much faster than astro-float's.
                let exact_abs = match &v {
                    Value::Exact(q) => Some(q.re.abs()),
                    Value::Approx(_) => bf_to_rat(&a, 1 << 16),
                };
                let fast = exact_abs.and_then(|q| root_rat(&q, n32, p));
                let r = match fast {
                    Some(r) => check(r)?,
                    None if n == 2 => check(a.sqrt(p, RM))?,
                    None => {
                        self.charge_float(cost::POW)?;
                        let inv = BigFloat::from_word(1, p).div(&BigFloat::from_word(n, p), p, RM);
                        let cc = self.consts()?;
                        check(a.pow(&inv, p, RM, cc))?
                    }
                };
                return Ok(Value::Approx(if !neg {
                    Cf::real(r, p)
                } else if n % 2 == 1 {
                    Cf::real(r.neg(), p)
                } else {
                    Cf { re: bf_zero(p), im: r }
                }));
            }
        }
        let l = self.ln(Value::Approx(z))?.to_cf(p);
        let inv = Cf::real(BigFloat::from_word(1, p).div(&BigFloat::from_word(n, p), p, RM), p);
        self.exp_cf(&l.mul(&inv, p))
    }

    /// `e^x` for a non-integer exponent, with the bound of [`Self::general_pow`] on the result.
    fn exp_of(&mut self, x: Value) -> R<Value> {
        let w = x.to_cf(self.prec);
        // general_pow refuses 2^(|exponent of e| |x|) >= 2^(10^9), and the exponent of e is 2.
        let wm = bf_to_f64(&w.re).hypot(bf_to_f64(&w.im));
        if wm.is_nan() || 2.0 * wm >= 1e9 {
            return Err(EvalErr::Limit(LimitKind::ExponentTooLarge));
        }
        self.exp_cf(&w)
    }

    fn exp_cf(&mut self, w: &Cf) -> R<Value> {
        let key = Value::Approx(w.clone());
        if let Some(v) = self.memo_get(&Op::Exp, &key, None) {
            self.budget.charge(1)?;
            return Ok(v);
        }
        let r = self.exp_cf_uncached(w)?;
        self.memo_put(Op::Exp, key, None, &r);
        Ok(r)
    }

    fn exp_cf_uncached(&mut self, w: &Cf) -> R<Value> {
        let p = self.prec;
        self.charge_float(if w.im.is_zero() { cost::EXP } else { cost::EXP + 2 * cost::TRIG })?;
        let m = match elementary::exp(&w.re, p) {
            Some(m) => m,
            None => {
                let cc = self.consts()?;
                check(w.re.exp(p, RM, cc))?
            }
        };
        if w.im.is_zero() {
            return Ok(Value::Approx(Cf::real(m, p)));
        }
        let (c, s) = self.cos_sin(&w.im)?;
        Ok(Value::Approx(Cf { re: m.mul(&c, p, RM), im: m.mul(&s, p, RM) }))
    }

    /// `(cos x, sin x)`, by [`elementary::cos_sin`] where it applies.
    fn cos_sin(&mut self, x: &BigFloat) -> R<(BigFloat, BigFloat)> {
        let key = Value::Approx(Cf::real(x.clone(), self.prec));
        if let Some(Value::Approx(c)) = self.memo_get(&Op::CosSin, &key, None) {
            return Ok((c.re, c.im));
        }
        let (c, s) = self.cos_sin_uncached(x)?;
        self.memo_put(Op::CosSin, key, None, &Value::Approx(Cf { re: c.clone(), im: s.clone() }));
        Ok((c, s))
    }

    fn cos_sin_uncached(&mut self, x: &BigFloat) -> R<(BigFloat, BigFloat)> {
        let p = self.prec;
        // astro-float reduces x modulo π at p + (bits of |x|) bits, which costs about the square
        // of that size (`\sin(10^{100000})` took 12 s): charge it, and refuse arguments whose
        // reduction alone would exceed any budget (the fuzzer found `\tan(10^{ys})`).
        let bits = x.exponent().unwrap_or(0).max(0) as u64;
        if bits > MAX_TRIG_ARG_BITS {
            return Err(EvalErr::Limit(LimitKind::ExponentTooLarge));
        }
        let size = bits / p as u64;
        self.charge_float(cost::TRIG * size * size / 4)?;
        let cc = self.consts()?;
        if p <= elementary::MAX_PREC {
            let pi = cc.pi(p + 64, RM);
            if let Some(cs) = elementary::cos_sin(x, p, &pi) {
                return Ok(cs);
            }
        }
        let c = check(x.cos(p, RM, cc))?;
        let s = check(x.sin(p, RM, cc))?;
        Ok((c, s))
    }

    /// Principal natural logarithm.
    fn ln(&mut self, v: Value) -> R<Value> {
        if self.real_domain && negative_real(&v) {
            return Err(EvalErr::Undefined);
        }
        if let Value::Exact(q) = &v {
            if q.is_zero() {
                return Err(EvalErr::Undefined);
            }
            if q.is_real() && q.re.is_one() {
                return Ok(Value::Exact(Q::int(0)));
            }
        }
        if let Some(r) = self.memo_get(&Op::Ln, &v, None) {
            self.budget.charge(1)?;
            return Ok(r);
        }
        let r = self.ln_uncached(&v)?;
        self.memo_put(Op::Ln, v, None, &r);
        Ok(r)
    }

    fn ln_uncached(&mut self, v: &Value) -> R<Value> {
        let p = self.prec;
        let z = v.to_cf(p);
        if z.is_zero() {
            return Err(EvalErr::Undefined);
        }
        if z.is_real() && z.re.is_positive() {
            return Ok(Value::Approx(Cf::real(self.ln_positive(&z.re)?, p)));
        }
        self.charge_float(cost::INV_TRIG)?;
        let m2 = z.norm_sqr(p);
        let arg = self.atan2(&z.im, &z.re)?;
        // ln|z| = ln(|z|^2) / 2, without a square root.
        let lm = self.ln_positive(&m2)?.div(&BigFloat::from_word(2, p), p, RM);
        Ok(Value::Approx(Cf { re: lm, im: arg }))
    }

    /// `ln x` of a positive float, by [`elementary::ln`] where it applies.
    fn ln_positive(&mut self, x: &BigFloat) -> R<BigFloat> {
        let p = self.prec;
        if let Some(l) = elementary::ln(x, p) {
            self.charge_float(self.served_cost(cost::LN_FAST, cost::LN))?;
            return Ok(l);
        }
        self.charge_float(cost::LN)?;
        let cc = self.consts()?;
        check(x.ln(p, RM, cc))
    }

    fn atan2(&mut self, y: &BigFloat, x: &BigFloat) -> R<BigFloat> {
        let p = self.prec;
        let pi = self.pi()?;
        if x.is_zero() {
            let half = pi.div(&BigFloat::from_word(2, p), p, RM);
            return Ok(if y.is_negative() { half.neg() } else { half });
        }
        let cc = self.consts()?;
        let a = check(y.div(x, p, RM).atan(p, RM, cc))?;
        Ok(if x.is_positive() {
            a
        } else if y.is_negative() {
            a.sub(&pi, p, RM)
        } else {
            a.add(&pi, p, RM)
        })
    }

    /// A real argument as a float, or `Undefined` for a complex one.
    fn real_arg(&mut self, v: &Value) -> R<BigFloat> {
        let c = v.to_cf(self.prec);
        if c.is_real() {
            Ok(c.re)
        } else {
            Err(EvalErr::Undefined)
        }
    }

    fn func(&mut self, f: &Func, args: &[Expr]) -> R<Value> {
        let p = self.prec;
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(self.eval(a)?);
        }
        if let Func::Other(name) = f {
            if is_sign_name(name) && vals.len() == 1 {
                // The sign function of a real value: -1, 0 or 1.
                let zero = Value::Exact(Q::int(0));
                let s = match self.cmp_real(&vals[0], &zero)? {
                    std::cmp::Ordering::Less => -1,
                    std::cmp::Ordering::Equal => 0,
                    std::cmp::Ordering::Greater => 1,
                };
                return Ok(Value::Exact(Q::int(s)));
            }
            return self.uninterpreted(name, vals);
        }
        match f {
            Func::Gcd | Func::Lcm => return self.gcd_lcm(matches!(f, Func::Gcd), &vals),
            Func::Max | Func::Min => return self.max_min(matches!(f, Func::Max), vals),
            _ => {}
        }
        let [v] = <[Value; 1]>::try_from(vals).map_err(|_| EvalErr::NotNumeric)?;
        let is_zero = v.exact().is_some_and(Q::is_zero);
        match f {
            Func::Ln => return self.ln(v),
            Func::Log10 => {
                let l = self.ln(v)?;
                let cc = self.consts()?;
                let l10 = cc.ln_10(p, RM);
                return self.div(l, Value::Approx(Cf::real(l10, p)));
            }
            Func::Exp => {
                if is_zero {
                    return Ok(Value::Exact(Q::int(1)));
                }
                return self.exp_cf(&v.to_cf(p));
            }
            Func::Abs => {
                if let Value::Exact(q) = &v {
                    if q.is_real() {
                        return Ok(Value::Exact(Q::real(q.re.abs())));
                    }
                }
                return Ok(Value::Approx(Cf::real(v.to_cf(p).modulus(p), p)));
            }
            Func::Floor | Func::Ceil => {
                let floor = matches!(f, Func::Floor);
                if let Value::Exact(q) = &v {
                    if q.is_real() {
                        let r = if floor { q.re.floor() } else { q.re.ceil() };
                        return Ok(Value::Exact(Q::real(r)));
                    }
                }
                let x = self.real_arg(&v)?;
                let r = if floor { x.floor() } else { x.ceil() };
                let q =
                    bf_to_rat(&r, self.budget.limits.max_int_bits).ok_or(EvalErr::Limit(LimitKind::IntegerTooLarge))?;
                return Ok(Value::Exact(Q::real(q)));
            }
            _ => {}
        }
        // Odd functions vanish at 0; cos, sec, cosh are 1 there.
        if is_zero {
            match f {
                Func::Sin | Func::Tan | Func::Arcsin | Func::Arctan | Func::Sinh | Func::Tanh => {
                    return Ok(Value::Exact(Q::int(0)))
                }
                Func::Cos | Func::Sec | Func::Cosh => return Ok(Value::Exact(Q::int(1))),
                _ => {}
            }
        }
        let op = Op::Func(f.clone());
        if let Some(r) = self.memo_get(&op, &v, None) {
            self.budget.charge(1)?;
            return Ok(r);
        }
        let r = self.float_func(f, &v)?;
        self.memo_put(op, v, None, &r);
        Ok(r)
    }

    /// The trigonometric and hyperbolic functions and their inverses, of a real argument.
    fn float_func(&mut self, f: &Func, v: &Value) -> R<Value> {
        let p = self.prec;
        self.charge_float(match f {
            Func::Sin | Func::Cos | Func::Tan | Func::Cot | Func::Sec | Func::Csc => cost::TRIG,
            Func::Sinh | Func::Cosh | Func::Tanh | Func::Coth => cost::HYP,
            _ => cost::INV_TRIG,
        })?;
        let x = self.real_arg(v)?;
        let one = BigFloat::from_word(1, p);
        let recip = |y: BigFloat| -> R<BigFloat> {
            if y.is_zero() {
                Err(EvalErr::Undefined)
            } else {
                Ok(one.div(&y, p, RM))
            }
        };
        if matches!(f, Func::Sin | Func::Cos | Func::Tan | Func::Cot | Func::Sec | Func::Csc) {
            let (c, s) = self.cos_sin(&x)?;
            let r = match f {
                Func::Sin => s,
                Func::Cos => c,
                Func::Tan => {
                    if c.is_zero() {
                        return Err(EvalErr::Undefined);
                    }
                    s.div(&c, p, RM)
                }
                Func::Cot => {
                    if s.is_zero() {
                        return Err(EvalErr::Undefined);
                    }
                    c.div(&s, p, RM)
                }
                Func::Sec => recip(c)?,
                _ => recip(s)?,
            };
            return Ok(Value::Approx(Cf::real(check(r)?, p)));
        }
        let in_unit = |y: &BigFloat| y.abs().cmp(&one).is_some_and(|c| c <= 0);
        let pi = self.pi()?;
        let cc = self.consts()?;
        let r = match f {
            Func::Arcsin | Func::Arccos => {
                if !in_unit(&x) {
                    return Err(EvalErr::Undefined);
                }
                if matches!(f, Func::Arcsin) {
                    x.asin(p, RM, cc)
                } else {
                    x.acos(p, RM, cc)
                }
            }
            Func::Arctan => x.atan(p, RM, cc),
            Func::Arccot => {
                if x.is_zero() {
                    pi.div(&BigFloat::from_word(2, p), p, RM)
                } else {
                    recip(x.clone())?.atan(p, RM, cc)
                }
            }
            Func::Arcsec | Func::Arccsc => {
                let y = recip(x)?;
                if !in_unit(&y) {
                    return Err(EvalErr::Undefined);
                }
                if matches!(f, Func::Arcsec) {
                    y.acos(p, RM, cc)
                } else {
                    y.asin(p, RM, cc)
                }
            }
            Func::Sinh => x.sinh(p, RM, cc),
            Func::Cosh => x.cosh(p, RM, cc),
            Func::Tanh => x.tanh(p, RM, cc),
            Func::Coth => recip(x.tanh(p, RM, cc))?,
            _ => return Err(EvalErr::NotNumeric),
        };
        Ok(Value::Approx(Cf::real(check(r)?, p)))
    }

    fn gcd_lcm(&mut self, gcd: bool, vals: &[Value]) -> R<Value> {
        use num_integer::Integer;
        let mut acc: Option<BigInt> = None;
        for v in vals {
            self.budget.charge(1)?;
            let n = v.exact_int().ok_or(EvalErr::Undefined)?;
            self.budget.check_bits(n.bits() * 2)?;
            acc = Some(match acc {
                None => n.abs(),
                Some(a) => {
                    if gcd {
                        a.gcd(&n)
                    } else {
                        a.lcm(&n)
                    }
                }
            });
        }
        let a = acc.ok_or(EvalErr::NotNumeric)?;
        Ok(Value::Exact(Q::real(BigRational::from_integer(a))))
    }

    fn max_min(&mut self, max: bool, vals: Vec<Value>) -> R<Value> {
        let mut best: Option<Value> = None;
        for v in vals {
            self.budget.charge(1)?;
            best = Some(match best {
                None => v,
                Some(b) => {
                    let ord = self.cmp_real(&v, &b)?;
                    if (max && ord == std::cmp::Ordering::Greater) || (!max && ord == std::cmp::Ordering::Less) {
                        v
                    } else {
                        b
                    }
                }
            });
        }
        best.ok_or(EvalErr::NotNumeric)
    }

    fn cmp_real(&mut self, a: &Value, b: &Value) -> R<std::cmp::Ordering> {
        if let (Value::Exact(x), Value::Exact(y)) = (a, b) {
            if x.is_real() && y.is_real() {
                return Ok(x.re.cmp(&y.re));
            }
        }
        let x = self.real_arg(a)?;
        let y = self.real_arg(b)?;
        Ok(x.cmp(&y).ok_or(EvalErr::Undefined)?.cmp(&0))
    }

    /// `f(a1..an) = (c0 + sum c_k a_k) / (1 + sum d_k a_k^2)` with coefficients from the name.
    fn uninterpreted(&mut self, name: &str, vals: Vec<Value>) -> R<Value> {
        let mut h = fnv1a(name.as_bytes());
        let mut next = || {
            h = splitmix64(h);
            Value::Exact(Q::int(1 + (h % 89) as i64))
        };
        let mut num = next();
        let mut den = Value::Exact(Q::int(1));
        for v in vals {
            let c = next();
            let d = next();
            let t = self.mul(c, v.clone())?;
            num = self.add(num, t)?;
            let sq = self.mul(v.clone(), v)?;
            let t = self.mul(d, sq)?;
            den = self.add(den, t)?;
        }
        self.div(num, den)
    }
}

/// Whether a function name denotes the sign function (`\operatorname{sgn}`, `\operatorname{sign}`).
pub fn is_sign_name(name: &str) -> bool {
    matches!(name, "sgn" | "sign" | "signum")
}

/// FNV-1a and one SplitMix64 step: the workspace's one copy (`rlbase`).
pub use rlbase::{fnv1a, splitmix64};
