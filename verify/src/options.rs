//! The verifier's options as every front end spells them: the flags of the three command lines
//! (`--reward signed`, through `rlverify::cli`) and the keywords of the Python package
//! (`reward="signed"`) read the names, the one-line help and the parse written here, so that a
//! value is added or renamed in one place.
//!
//! ```
//! use rlverify::{options::VerifierOption, Truncated};
//! assert_eq!("no-answer".parse::<Truncated>(), Ok(Truncated::NoAnswer));
//! assert_eq!("No_Answer".parse::<Truncated>(), Ok(Truncated::NoAnswer));
//! assert_eq!(Truncated::FLAG, "truncated");
//! let err = "maybe".parse::<Truncated>().unwrap_err();
//! assert_eq!(err.to_string(), "`maybe` is not a value of `truncated`: use no-answer or lenient");
//! ```

use crate::{Extraction, LastNumber, RewardKind, Truncated};

/// An option of [`Config`](crate::Config) that a user names: its flag, its values, their help.
pub trait VerifierOption: Copy + PartialEq + Sized + 'static {
    /// The flag without its dashes (`last-number`); Python's keyword writes `_` for `-`.
    const FLAG: &'static str;
    /// Every value, in the order the help lists them.
    const ALL: &'static [Self];

    /// The value's name (`no-answer`).
    fn as_str(self) -> &'static str;

    /// What the value does, in one line (the help of the flag and of the keyword).
    fn help(self) -> &'static str;

    /// The value named `text`; case, surrounding blanks and `_` for `-` do not matter.
    fn parse(text: &str) -> Result<Self, UnknownValue> {
        let key = text.trim().to_ascii_lowercase().replace('_', "-");
        Self::ALL.iter().copied().find(|v| v.as_str() == key).ok_or_else(|| UnknownValue {
            flag: Self::FLAG,
            value: text.to_string(),
            valid: Self::ALL.iter().map(|v| v.as_str()).collect(),
        })
    }
}

/// A name that is none of an option's values.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{value}` is not a value of `{flag}`: use {}", or_list(.valid))]
pub struct UnknownValue {
    /// The option ([`VerifierOption::FLAG`]).
    pub flag: &'static str,
    /// What was given.
    pub value: String,
    /// The values there are.
    pub valid: Vec<&'static str>,
}

fn or_list(names: &[&str]) -> String {
    match names.split_last() {
        Some((last, init)) if !init.is_empty() => format!("{} or {last}", init.join(", ")),
        _ => names.join(""),
    }
}

/// Writes the [`VerifierOption`], `FromStr` and `Display` impls of one option enum.
macro_rules! verifier_option {
    ($ty:ty, $flag:literal, $($variant:ident => $name:literal, $help:literal;)+) => {
        impl VerifierOption for $ty {
            const FLAG: &'static str = $flag;
            const ALL: &'static [Self] = &[$(Self::$variant),+];

            fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $name),+
                }
            }

            fn help(self) -> &'static str {
                match self {
                    $(Self::$variant => $help),+
                }
            }
        }

        impl std::str::FromStr for $ty {
            type Err = UnknownValue;

            fn from_str(s: &str) -> Result<Self, UnknownValue> {
                <Self as VerifierOption>::parse(s)
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        /// Written by its name.
        #[cfg(feature = "serde")]
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        /// Read by its name ([`VerifierOption::parse`]); a wrong one lists the right ones.
        #[cfg(feature = "serde")]
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let name = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                <Self as VerifierOption>::parse(&name).map_err(serde::de::Error::custom)
            }
        }
    };
}

verifier_option!(RewardKind, "reward",
    Binary => "binary", "1 for a right answer, 0 otherwise";
    Signed => "signed", "1 for a right answer, -1 otherwise";
);

verifier_option!(Extraction, "extract",
    Strict => "strict", "only a committed answer (a box, an answer tag or phrase, `####`, a final bold or choice line, a concluding sentence, or a response that is only an answer)";
    Lenient => "lenient", "also the last math block, the last number (see `--last-number`) and an answer inside the reasoning: for base models that never mark one";
);

verifier_option!(LastNumber, "last-number",
    Auto => "auto", "with `--extract lenient`, when the gold answer is a plain number (the GSM8K convention)";
    Always => "always", "also in strict mode";
    Never => "never", "never";
);

verifier_option!(Truncated, "truncated",
    NoAnswer => "no-answer", "a response cut off mid-derivation has no answer";
    Lenient => "lenient", "its last math block or number, as for a finished response without a marker";
);

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trips<T: VerifierOption + std::fmt::Debug + std::str::FromStr<Err = UnknownValue>>() {
        for v in T::ALL {
            assert_eq!(v.as_str().parse::<T>(), Ok(*v));
            assert_eq!(v.as_str().to_uppercase().replace('-', "_").parse::<T>(), Ok(*v));
            assert!(!v.help().is_empty() && !v.help().contains("[`"), "{v:?}");
        }
        let err = "nope".parse::<T>().expect_err("no such value");
        assert_eq!((err.flag, err.valid.len()), (T::FLAG, T::ALL.len()));
    }

    #[test]
    fn every_value_reads_back() {
        round_trips::<RewardKind>();
        round_trips::<Extraction>();
        round_trips::<LastNumber>();
        round_trips::<Truncated>();
        assert_eq!(
            "ternary".parse::<RewardKind>().map_err(|e| e.to_string()),
            Err("`ternary` is not a value of `reward`: use binary or signed".to_string())
        );
        assert_eq!(LastNumber::Always.to_string(), "always");
    }
}
