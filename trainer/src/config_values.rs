//! The values `rltrain`'s flags take, checked where they are typed (the value parsers of
//! [`crate::config::groups`], with the `cli` feature): every number must be finite and in its
//! range (`--lr nan`, `--grad-clip inf` and `--temperature -1` are errors naming the flag, never a
//! silent default: JSON, and so a run's `config.json`, cannot hold a non-finite number), and the
//! names (`--objective`, `--advantage`, `--lr-schedule`) in any case, a typo getting the closest.

use clap::builder::{PossibleValuesParser, TypedValueParser};
use rlcli::parse_f64_in;

use crate::advantage::Estimator;
use crate::objectives::Objective;
use crate::optim::ScheduleKind;

/// Any finite number.
pub fn finite(s: &str) -> Result<f64, String> {
    parse_f64_in(s, |_| true, "a finite number")
}

/// A finite number, 0 or more.
pub fn non_negative(s: &str) -> Result<f64, String> {
    parse_f64_in(s, |v| v >= 0.0, "a finite number, 0 or more")
}

/// A finite number above 0.
pub fn positive(s: &str) -> Result<f64, String> {
    parse_f64_in(s, |v| v > 0.0, "a finite number above 0")
}

/// A sampling temperature of the trainer: above 0 (log-probs are taken at it).
pub fn temperature(s: &str) -> Result<f64, String> {
    parse_f64_in(s, |v| v > 0.0, "a finite number above 0 (log-probs are taken at the sampling temperature)")
}

/// A nucleus mass: above 0, at most 1.
pub fn top_p(s: &str) -> Result<f64, String> {
    parse_f64_in(s, |v| v > 0.0 && v <= 1.0, "above 0 and at most 1 (1 turns nucleus sampling off)")
}

/// A fraction from 0 to 1.
pub fn fraction(s: &str) -> Result<f64, String> {
    parse_f64_in(s, |v| (0.0..=1.0).contains(&v), "from 0 to 1")
}

/// An AdamW β: 0 or more, below 1.
pub fn beta(s: &str) -> Result<f64, String> {
    parse_f64_in(s, |v| (0.0..1.0).contains(&v), "0 or more and below 1")
}

/// A cap of a ratio or weight: 1 or more.
pub fn cap(s: &str) -> Result<f64, String> {
    parse_f64_in(s, |v| v >= 1.0, "a finite number, 1 or more")
}

/// The gradient-norm clip: 0 turns it off (there is no infinite clip).
pub fn grad_clip(s: &str) -> Result<f64, String> {
    parse_f64_in(s, |v| v >= 0.0, "a finite number, 0 or more (0 turns gradient clipping off)")
}

/// A clip width ε: a side without clipping is a large width, not infinity.
pub fn clip_width(s: &str) -> Result<f64, String> {
    parse_f64_in(s, |v| v >= 0.0, "a finite number, 0 or more (for no clipping on a side, a large width such as 1e9)")
}

/// The dual-clip constant c (> 1); leaving the flag out keeps the objective's own (often none).
pub fn dual_clip(s: &str) -> Result<f64, String> {
    parse_f64_in(s, |v| v > 1.0, "a finite number above 1 (for no dual clip, leave the flag out)")
}

/// A registry entry by name, in any case (`GRPO` is `grpo`, `Dr_GRPO` is `dr-grpo`; a typo gets
/// "did you mean" and the valid names).
pub fn objective(name: &str) -> Result<&'static Objective, String> {
    let name = name.trim().to_ascii_lowercase().replace('_', "-");
    Objective::from_name(&name).map_err(|e| e.to_string())
}

/// The names `--advantage` takes, in any case (a typo lists them, with the closest).
pub fn advantage() -> impl TypedValueParser<Value = String> {
    PossibleValuesParser::new(Estimator::NAMED.map(|(name, _)| name)).map(|name| name.to_lowercase())
}

/// The schedules `--lr-schedule` takes (listed in the help; a typo gets the closest).
pub fn schedule_kind() -> impl TypedValueParser<Value = ScheduleKind> {
    PossibleValuesParser::new(ScheduleKind::NAMES).try_map(|s| s.parse::<ScheduleKind>())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Non-finite values are refused by every parser, with the range in the message.
    #[test]
    fn non_finite_values_are_refused_everywhere() {
        type Parser = fn(&str) -> Result<f64, String>;
        let parsers: [Parser; 11] =
            [finite, non_negative, positive, temperature, top_p, fraction, beta, cap, grad_clip, clip_width, dual_clip];
        for p in parsers {
            for bad in ["nan", "NaN", "inf", "-inf", "infinity", "1e999", "x"] {
                assert!(p(bad).is_err(), "{bad} accepted");
            }
        }
        assert!(grad_clip("inf").is_err_and(|e| e.contains("0 turns gradient clipping off")));
        assert!(clip_width("inf").is_err_and(|e| e.contains("1e9")));
        assert_eq!((grad_clip("0"), top_p("1"), dual_clip("3")), (Ok(0.0), Ok(1.0), Ok(3.0)));
        assert!(temperature("0").is_err() && top_p("0").is_err() && beta("1").is_err() && dual_clip("1").is_err());
    }
}
