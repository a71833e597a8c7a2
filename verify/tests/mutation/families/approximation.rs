//! An exact answer given only as an approximation: for a gold whose value has no terminating
//! decimal (`\frac{1}{3}`, `\frac{\sqrt{7}}{4}`, `7\pi`), the final answer replaced by its value
//! rounded to a few decimals (`\boxed{0.33}`), or stated with `\approx`; against them, the exact
//! answer with its approximation restated beside it (`\boxed{\frac{1}{3}} \approx 0.333`,
//! `\boxed{\frac{1}{3} \approx 0.333}`) and the exact repeating decimal (`0.\overline{3}`).
//! Applies only to the bases whose gold is such a closed form (a few dozen), not to integers.

use crate::mutation::{fill, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "approximation",
    split: Split::HeldOut,
    why: "named by no class of issue 30 or of the fixes under way: added on 2026-11-27 and scored \
          first-seen on 07ad560, before any fix for it: held out",
    operators: &[
        Operator { name: "rounded_in_place", expect: Expect::Wrong, apply: rounded_in_place },
        Operator { name: "approximate_statement", expect: Expect::Wrong, apply: approximate_statement },
        Operator { name: "exact_then_approximation", expect: Expect::Right, apply: exact_then_approximation },
        Operator { name: "approximation_in_box", expect: Expect::Right, apply: approximation_in_box },
        Operator { name: "repeating_decimal", expect: Expect::Right, apply: repeating_decimal },
    ],
};

/// A gold's value: its floating-point value, and the reduced fraction when it is rational.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Value {
    pub approx: f64,
    pub ratio: Option<(i128, i128)>,
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

fn ratio(p: i128, q: i128) -> Option<(i128, i128)> {
    if q == 0 {
        return None;
    }
    let g = gcd(p, q).max(1);
    let (p, q) = (p / g, q / g);
    Some(if q < 0 { (-p, -q) } else { (p, q) })
}

impl Value {
    fn rational(p: i128, q: i128) -> Option<Value> {
        let (p, q) = ratio(p, q)?;
        Some(Value { approx: p as f64 / q as f64, ratio: Some((p, q)) })
    }

    fn irrational(x: f64) -> Value {
        Value { approx: x, ratio: None }
    }

    fn add(self, o: Value) -> Option<Value> {
        match (self.ratio, o.ratio) {
            (Some((a, b)), Some((c, d))) => Value::rational(a.checked_mul(d)?.checked_add(c.checked_mul(b)?)?, b * d),
            _ => Some(Value::irrational(self.approx + o.approx)),
        }
    }

    fn mul(self, o: Value) -> Option<Value> {
        match (self.ratio, o.ratio) {
            (Some((a, b)), Some((c, d))) => Value::rational(a.checked_mul(c)?, b.checked_mul(d)?),
            _ => Some(Value::irrational(self.approx * o.approx)),
        }
    }

    fn div(self, o: Value) -> Option<Value> {
        match (self.ratio, o.ratio) {
            (Some((a, b)), Some((c, d))) => Value::rational(a.checked_mul(d)?, b.checked_mul(c)?),
            _ if o.approx != 0.0 => Some(Value::irrational(self.approx / o.approx)),
            _ => None,
        }
    }

    /// True when the value has no terminating decimal: irrational, or a fraction whose reduced
    /// denominator has a prime factor other than 2 and 5.
    pub fn non_terminating(&self) -> bool {
        match self.ratio {
            None => self.approx.is_finite(),
            Some((_, mut q)) => {
                for f in [2, 5] {
                    while q % f == 0 {
                        q /= f;
                    }
                }
                q != 1
            }
        }
    }
}

/// The content of the brace group that opens `s` (`{...}`), and the rest after it.
fn group(s: &str) -> Option<(&str, &str)> {
    let s = s.strip_prefix('{')?;
    let mut depth = 1usize;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some((&s[..i], &s[i + 1..]));
                }
            }
            _ => {}
        }
    }
    None
}

/// The value of a simple closed form: sums of terms, each a fraction `\frac{A}{B}` of closed
/// forms or a product of an integer, square roots of integers and `\pi` (`3\sqrt{2}`, `7\pi`).
/// `None` for anything else (variables, mixed numbers, decimals, sets).
pub fn value(gold: &str) -> Option<Value> {
    let s: String = gold.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac").split_whitespace().collect();
    // Split at top-level signs.
    let mut terms: Vec<(bool, &str)> = Vec::new();
    let (mut depth, mut start, mut negative) = (0i32, 0usize, false);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            '+' | '-' if depth == 0 => {
                if i > start {
                    terms.push((negative, &s[start..i]));
                } else if i > 0 {
                    return None;
                }
                negative = c == '-';
                start = i + 1;
            }
            _ => {}
        }
    }
    terms.push((negative, &s[start..]));
    let mut total = Value::rational(0, 1)?;
    for (negative, term) in terms {
        let v = term_value(term)?;
        total = total.add(if negative { v.mul(Value::rational(-1, 1)?)? } else { v })?;
    }
    Some(total)
}

fn term_value(term: &str) -> Option<Value> {
    if let Some(rest) = term.strip_prefix("\\frac") {
        let (num, rest) = group(rest)?;
        let (den, rest) = group(rest)?;
        return rest.is_empty().then(|| value(num)?.div(value(den)?))?;
    }
    let digits = term.chars().take_while(char::is_ascii_digit).count();
    let mut v = if digits > 0 { Value::rational(term[..digits].parse().ok()?, 1)? } else { Value::rational(1, 1)? };
    let mut rest = &term[digits..];
    if rest.is_empty() && digits == 0 {
        return None;
    }
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("\\pi") {
            v = v.mul(Value::irrational(std::f64::consts::PI))?;
            rest = r;
        } else if let Some(r) = rest.strip_prefix("\\sqrt") {
            let (radicand, r) = group(r)?;
            let n: i128 = radicand.parse().ok()?;
            let root = (n as f64).sqrt().round() as i128;
            v =
                v.mul(if root * root == n { Value::rational(root, 1)? } else { Value::irrational((n as f64).sqrt()) })?;
            rest = r;
        } else {
            return None;
        }
    }
    Some(v)
}

/// The gold's value when it has no terminating decimal (the bases this family applies to).
fn inexact(base: &Base) -> Option<Value> {
    value(&base.gold).filter(Value::non_terminating)
}

/// The value rounded to `places` decimals (`0.333`).
fn rounded(v: &Value, places: usize) -> String {
    format!("{:.*}", places, v.approx)
}

/// The value rounded to 2 to 4 significant digits (at least one decimal): a rounding, never the
/// six-digit decimal that the equivalence accepts for an exact gold (EQUIVALENCE.md, rule 4 of
/// the decimals).
fn rounding(v: &Value, rng: &mut Rng) -> Option<String> {
    let significant = 2 + rng.below(3) as i32;
    let magnitude = v.approx.abs().log10().floor() as i32 + 1;
    let written = rounded(v, (significant - magnitude).max(1) as usize);
    let digits = written.trim_start_matches(['-', '0', '.']).chars().filter(char::is_ascii_digit).count();
    (digits < 6).then_some(written)
}

/// The exact repeating decimal of a fraction (`0.1\overline{6}`), when its period is short.
pub fn repeating(v: &Value) -> Option<String> {
    let (p, q) = v.ratio?;
    let (whole, mut rem) = (p.abs() / q, p.abs() % q);
    let mut digits = String::new();
    let mut seen: Vec<i128> = Vec::new();
    while rem != 0 && !seen.contains(&rem) && seen.len() < 24 {
        seen.push(rem);
        rem *= 10;
        digits.push(char::from_digit((rem / q) as u32, 10)?);
        rem %= q;
    }
    let at = seen.iter().position(|r| *r == rem).filter(|_| rem != 0)?;
    let (pre, period) = digits.split_at(at);
    (period.len() <= 12).then(|| format!("{}{whole}.{pre}\\overline{{{period}}}", if p < 0 { "-" } else { "" }))
}

/// The answer replaced, in place, by `content` (in its box, or as the plain value).
fn in_place(base: &Base, content: &str) -> Option<Variant> {
    if base.boxed {
        base.with_box_content(content)
    } else {
        base.replace_answer(content)
    }
}

/// The answer replaced by the value rounded to 2 to 4 significant digits, with nothing else said.
fn rounded_in_place(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let v = inexact(base)?;
    in_place(base, &rounding(&v, rng)?)
}

/// A final statement that gives the rounded value with `\approx` or an approximation word.
fn approximate_statement(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let v = inexact(base)?;
    let t = rng.pick(&[
        "The answer is $\\boxed{\\approx {d}}$.",
        "So the value is approximately $\\boxed{{d}}$.",
        "Final answer: $\\approx {d}$",
        "Therefore the result is about $\\boxed{{d}}$ (rounded).",
        "Numerically, the answer is roughly $\\boxed{{d}}$.",
    ]);
    base.with_statement(&fill(t, &[("d", &rounding(&v, rng)?)]))
}

/// The exact answer, then its approximation right after it.
fn exact_then_approximation(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let v = inexact(base)?;
    let t = rng.pick(&[
        " $\\approx {d}$",
        " (approximately {d})",
        ", which is about ${d}$",
        " ($\\approx {d}$ to {p} decimal places)",
    ]);
    let places = 2 + rng.below(3);
    base.insert_after_answer(&fill(t, &[("d", &rounded(&v, places)), ("p", &places.to_string())]))
}

/// The exact answer and its approximation in the same box (`\boxed{\frac{1}{3} \approx 0.333}`).
fn approximation_in_box(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let v = inexact(base)?;
    let t = rng.pick(&["{x} \\approx {d}", "{x}\\approx{d}", "{x} \\ (\\approx {d})"]);
    base.with_box_content(&fill(t, &[("x", &base.answer), ("d", &rounded(&v, 2 + rng.below(3)))]))
}

/// The answer replaced, in place, by its exact repeating decimal.
fn repeating_decimal(base: &Base, _rng: &mut Rng) -> Option<Variant> {
    let v = inexact(base)?;
    in_place(base, &repeating(&v)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, BOXED_27};

    const THIRD: &str =
        "There are 3 equally likely cases and 1 is favourable.\n\nSo the probability is $\\boxed{\\frac{1}{3}}$.";

    fn third(op: fn(&Base, &mut Rng) -> Option<Variant>) -> String {
        example(op, "\\frac{1}{3}", THIRD).1
    }

    #[test]
    fn values_of_closed_forms() {
        let close = |g: &str, x: f64| (value(g).expect(g).approx - x).abs() < 1e-9;
        assert!(close("\\frac{1}{3}", 1.0 / 3.0) && close("-\\frac{30}{17}", -30.0 / 17.0));
        assert!(close("\\frac{\\sqrt{7}}{4}", 7f64.sqrt() / 4.0) && close("7\\pi", 7.0 * std::f64::consts::PI));
        assert!(close("1+3\\sqrt{2}", 1.0 + 3.0 * 2f64.sqrt()) && close("\\dfrac{14}{3}", 14.0 / 3.0));
        assert!(value("\\frac{1}{4}").is_some_and(|v| !v.non_terminating()));
        assert!(value("\\sqrt{16}").is_some_and(|v| !v.non_terminating()));
        assert!(value("\\frac{1}{6}").is_some_and(|v| v.non_terminating()));
        for not_closed in ["12\\frac{3}{5}", "x+1", "0.25", "(1,2)", "", "\\frac{1}{4p^2}"] {
            assert_eq!(value(not_closed), None, "{not_closed}");
        }
        assert_eq!(repeating(&value("\\frac{1}{6}").unwrap()).as_deref(), Some("0.1\\overline{6}"));
        assert_eq!(repeating(&value("-\\frac{14}{3}").unwrap()).as_deref(), Some("-4.\\overline{6}"));
        assert_eq!(repeating(&value("\\frac{4}{11}").unwrap()).as_deref(), Some("0.\\overline{36}"));
    }

    #[test]
    fn roundings_write_two_to_four_significant_digits() {
        for (gold, seed) in ["16\\sqrt{3}", "\\frac{1}{60}", "\\frac{3840}{289}", "-\\frac{30}{17}"].iter().zip(1..) {
            let v = value(gold).expect(gold);
            let mut rng = Rng::new(seed);
            for _ in 0..20 {
                let r = rounding(&v, &mut rng).expect("a rounding");
                let digits = r.trim_start_matches(['-', '0', '.']).chars().filter(char::is_ascii_digit).count();
                assert!((2..=4).contains(&digits) && r.contains('.'), "{gold}: {r}");
                assert!((r.parse::<f64>().unwrap() - v.approx).abs() < 0.05 * v.approx.abs(), "{gold}: {r}");
            }
        }
    }

    #[test]
    fn operators_skip_integers_and_terminating_golds() {
        let base = Base::new("example", "27", BOXED_27).expect("base");
        let quarter = Base::new("example", "\\frac{1}{4}", "Half of a half.\n\nSo it is $\\boxed{\\frac{1}{4}}$.");
        for op in FAMILY.operators {
            assert!((op.apply)(&base, &mut Rng::new(1)).is_none(), "{}", op.name);
            assert!((op.apply)(quarter.as_ref().expect("base"), &mut Rng::new(1)).is_none(), "{}", op.name);
        }
    }

    #[test]
    fn rounded_in_place_boxes_only_the_decimal() {
        let v = third(rounded_in_place);
        assert!(["0.33", "0.333", "0.3333"].iter().any(|d| v.contains(&format!("\\boxed{{{d}}}"))), "{v}");
        assert!(!v.contains("frac"), "{v}");
    }

    #[test]
    fn approximate_statement_gives_only_the_decimal() {
        let v = third(approximate_statement);
        assert!(v.contains("0.33") && !v.contains("frac") && v.starts_with("There are 3"), "{v}");
    }

    #[test]
    fn exact_then_approximation_keeps_the_box_and_adds_the_decimal() {
        let v = third(exact_then_approximation);
        let after = &v[v.find("\\boxed{\\frac{1}{3}}$").expect("the box stays")..];
        assert!(after.contains("0.33"), "{v}");
    }

    #[test]
    fn approximation_in_box_holds_both() {
        let v = third(approximation_in_box);
        assert!(v.contains("\\boxed{\\frac{1}{3}") && v.contains("\\approx") && v.contains("0.33"), "{v}");
    }

    #[test]
    fn repeating_decimal_is_exact() {
        assert!(third(repeating_decimal).contains("\\boxed{0.\\overline{3}}"));
    }
}
