//! The verifier's options as every front end spells them, declared once here: the flags of the
//! three command lines (`--reward signed`), the keys of rltrain's `config.json` (`"reward":
//! "signed"`) and the keywords of the Python package (`reward="signed"`) read the names, the
//! one-line help, the parse and the defaults written here.
//!
//! - [`VerifierOption`]: one option's values, by name, with their help (`verifier_option!` below);
//! - [`AnswerArgs`]: the options that decide a verdict, as a layer (each set or not) that every
//!   tool flattens into its command line (`clap::Args` with the `cli` feature) and rltrain into
//!   its settings (serde with the `serde` feature); [`AnswerOptions`] the same options with a
//!   value each (the [`Config`] defaults unless set), what rltrain's `config.json` records;
//! - [`ScoringArgs`]: [`AnswerArgs`] and the reward encoding; [`FormatRewardArgs`]: the CPGD
//!   format reward;
//! - [`config_options`]: the table every front end iterates (Python's keywords, the help's
//!   `[default: X]` notes, the tests that check each tool takes every option).
//!
//! A new option of [`Config`] is its field and enum, its `verifier_option!` row and its line in
//! `answer_options!` (the layer's field, the value's field, the fold, the table entry); then it
//! reaches `rlverify`, `rlbench`, `rltrain` (flag and `config.json` key) and Python's keywords
//! (see the README's "Adding a verifier option").
//!
//! ```
//! use rlverify::{options::VerifierOption, Truncated};
//! assert_eq!("no-answer".parse::<Truncated>(), Ok(Truncated::NoAnswer));
//! assert_eq!("No_Answer".parse::<Truncated>(), Ok(Truncated::NoAnswer));
//! assert_eq!(Truncated::FLAG, "truncated");
//! let err = "maybe".parse::<Truncated>().unwrap_err();
//! assert_eq!(err.to_string(), "`maybe` is not a value of `truncated`: use no-answer or lenient");
//! ```

use crate::{Config, Extraction, LastNumber, RewardKind, Truncated};

/// An option of [`Config`] that a user names: its flag, its values, their help.
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

        /// clap reads it by its [`VerifierOption`] names, with each value's help.
        #[cfg(feature = "cli")]
        impl clap::ValueEnum for $ty {
            fn value_variants<'a>() -> &'a [Self] {
                <$ty as VerifierOption>::ALL
            }

            fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
                Some(clap::builder::PossibleValue::new(self.as_str()).help(self.help()))
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

/// One option of [`Config`] as a front end handles it without knowing its type: what Python's
/// keywords, the help's `[default: X]` notes and the tests of the three tools iterate
/// ([`config_options`]).
pub trait ConfigOption: Sync {
    /// The flag without its dashes (`last-number`); Python's keyword writes `_` for `-`, and
    /// the clap id and rltrain's `config.json` key is [`ConfigOption::key`].
    fn flag(&self) -> &'static str;

    /// The flag as a field name (`last_number`): clap's id, rltrain's key, Python's keyword.
    fn key(&self) -> String {
        self.flag().replace('-', "_")
    }

    /// Every value's name, with its help, in the order the help lists them.
    fn values(&self) -> Vec<(&'static str, &'static str)>;

    /// The name of the value `cfg` holds.
    fn get(&self, cfg: &Config) -> &'static str;

    /// The name of the default value ([`Config::default`]'s).
    fn default_value(&self) -> &'static str {
        self.get(&Config::default())
    }

    /// Sets the option on `cfg` from a value's name (read as [`VerifierOption::parse`] reads it).
    fn set(&self, cfg: &mut Config, text: &str) -> Result<(), UnknownValue>;
}

/// The [`ConfigOption`] of a [`Config`] field whose type is a [`VerifierOption`].
pub struct ConfigField<T> {
    /// The field's value.
    pub get: fn(&Config) -> T,
    /// Sets the field.
    pub set: fn(&mut Config, T),
}

impl<T: VerifierOption> ConfigOption for ConfigField<T> {
    fn flag(&self) -> &'static str {
        T::FLAG
    }

    fn values(&self) -> Vec<(&'static str, &'static str)> {
        T::ALL.iter().map(|v| (v.as_str(), v.help())).collect()
    }

    fn get(&self, cfg: &Config) -> &'static str {
        (self.get)(cfg).as_str()
    }

    fn set(&self, cfg: &mut Config, text: &str) -> Result<(), UnknownValue> {
        (self.set)(cfg, T::parse(text)?);
        Ok(())
    }
}

/// The reward encoding's entry of [`config_options`] (the field [`ScoringArgs::reward`]).
pub const REWARD: &dyn ConfigOption = &ConfigField::<RewardKind> { get: |c| c.reward, set: |c, v| c.reward = v };

/// Every option of [`Config`] a user names, in the order the help lists them: the reward
/// encoding, then [`AnswerArgs::OPTIONS`]. (The format reward, [`FormatRewardArgs`], is a weight
/// outside [`Config`]: Python's `format_reward` keyword.)
pub fn config_options() -> impl Iterator<Item = &'static dyn ConfigOption> {
    std::iter::once(REWARD).chain(AnswerArgs::OPTIONS.iter().copied())
}

/// A group of the verifier's options twice: with a value each (`Self`, what a run records) and
/// as a layer ([`OptionGroup::Layer`], each set or not: flags given, keys written). rltrain
/// folds its layers into its settings through this, whatever the group's fields.
pub trait OptionGroup: Default + Clone + PartialEq {
    /// The group's layer: every field an `Option`.
    type Layer: Default + Clone + PartialEq;

    /// The fields' names (`last_number`), as clap's ids, serde's keys and Python's keywords.
    const NAMES: &'static [&'static str];

    /// Sets the fields `layer` sets; returns their names.
    fn fold(&mut self, layer: &Self::Layer) -> Vec<&'static str>;

    /// A layer that sets every field to this value.
    fn to_layer(&self) -> Self::Layer;

    /// The names of the fields `layer` sets.
    fn set_in(layer: &Self::Layer) -> Vec<&'static str> {
        Self::default().fold(layer)
    }
}

/// Declares the options that decide a verdict (each a [`Config`] field of a [`VerifierOption`]
/// type, its default [`Config::default`]'s): the layer ([`AnswerArgs`]), the values
/// ([`AnswerOptions`]), their fold and the table ([`AnswerArgs::OPTIONS`]).
macro_rules! answer_options {
    (
        $(
            $(#[doc = $doc:literal])*
            #[arg($($arg:tt)*)]
            $field:ident : $ty:ty
        ),* $(,)?
    ) => {
        /// Which readings of a response count as its answer, and the other options that decide
        /// a verdict (their flags under the heading "Scoring", whatever the command's own): the verifier's options of every tool (`rlverify score|check|extract|bench|serve`,
        /// `rlbench score|report|run|compare`, `rltrain`, Python's keywords), each set or not.
        /// Unset options keep the verifier's defaults ([`Config::default`]; the help says which,
        /// through `rlverify::cli::with_scoring_defaults`).
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        #[cfg_attr(feature = "cli", derive(clap::Args))]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        #[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
        pub struct AnswerArgs {
            $(
                $(#[doc = $doc])*
                #[cfg_attr(feature = "cli", arg(help_heading = "Scoring", $($arg)*))]
                #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
                pub $field: Option<$ty>,
            )*
        }

        /// The options of [`AnswerArgs`] with a value each (the verifier's defaults unless set):
        /// what rltrain's `config.json` records, by the same keys.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        #[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
        pub struct AnswerOptions {
            $(
                $(#[doc = $doc])*
                pub $field: $ty,
            )*
        }

        impl AnswerArgs {
            /// Each option's [`ConfigOption`], in the order of the help.
            pub const OPTIONS: &'static [&'static dyn ConfigOption] = &[
                $(&ConfigField::<$ty> { get: |c| c.$field, set: |c, v| c.$field = v }),*
            ];

            /// Sets the options given on `cfg`, leaving the others as they are.
            pub fn apply(&self, cfg: &mut Config) {
                $(
                    if let Some(v) = self.$field {
                        cfg.$field = v;
                    }
                )*
            }
        }

        impl AnswerOptions {
            /// The options `cfg` holds.
            pub fn of(cfg: &Config) -> Self {
                Self { $($field: cfg.$field),* }
            }

            /// Sets every option on `cfg`.
            pub fn apply(&self, cfg: &mut Config) {
                $(cfg.$field = self.$field;)*
            }
        }

        impl OptionGroup for AnswerOptions {
            type Layer = AnswerArgs;
            const NAMES: &'static [&'static str] = &[$(stringify!($field)),*];

            fn fold(&mut self, layer: &AnswerArgs) -> Vec<&'static str> {
                let mut set = Vec::new();
                $(
                    if let Some(v) = layer.$field {
                        self.$field = v;
                        set.push(stringify!($field));
                    }
                )*
                set
            }

            fn to_layer(&self) -> AnswerArgs {
                AnswerArgs { $($field: Some(self.$field)),* }
            }
        }
    };
}

answer_options! {
    /// Which readings of a response count as its answer.
    ///
    /// Risk of `lenient`: a response that gives up on its last number is read as answering it,
    /// so a policy trained on that reward learns to end on a guess.
    #[arg(long, value_enum, value_name = "MODE")]
    extract: Extraction,
    /// When the last number of a response with no explicit answer is its answer (`rlverify
    /// extract`, which has no gold, never takes it under `auto`).
    #[arg(long, value_enum, value_name = "WHEN")]
    last_number: LastNumber,
    /// What a response cut off mid-derivation (no final-answer marker, an unfinished last line)
    /// answers.
    #[arg(long, value_enum, value_name = "MODE")]
    truncated: Truncated,
}

impl Default for AnswerOptions {
    fn default() -> Self {
        Self::of(&Config::default())
    }
}

impl AnswerArgs {
    /// The verifier's defaults with these options.
    pub fn config(&self) -> Config {
        let mut cfg = Config::default();
        self.apply(&mut cfg);
        cfg
    }
}

/// The options that change verdicts and rewards: the reward encoding and [`AnswerArgs`]
/// (`rlverify score|check|bench|serve`; rltrain, whose `--reward` also has `auto`, holds
/// [`AnswerArgs`] and its own).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
pub struct ScoringArgs {
    /// Reward encoding.
    #[cfg_attr(feature = "cli", arg(long, value_enum, value_name = "KIND", help_heading = "Scoring"))]
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub reward: Option<RewardKind>,
    /// How the answer is read.
    #[cfg_attr(feature = "cli", command(flatten))]
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub answer: AnswerArgs,
}

impl ScoringArgs {
    /// Sets the options given on `cfg`, leaving the others as they are.
    pub fn apply(&self, cfg: &mut Config) {
        if let Some(r) = self.reward {
            cfg.reward = r;
        }
        self.answer.apply(cfg);
    }

    /// The library configuration these options describe (unset ones: the defaults).
    pub fn config(&self) -> Config {
        let mut cfg = Config::default();
        self.apply(&mut cfg);
        cfg
    }
}

/// The CPGD format reward, set or not: `rlverify score|serve`, `rltrain`, Python's
/// `format_reward` keyword.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
pub struct FormatRewardArgs {
    /// Add the CPGD format reward: `reward = accuracy + W * format_ok` (`--format-reward` alone: W = 0.5).
    ///
    /// A response is well formed when it is exactly `<think>...</think>` followed by
    /// `<answer>...</answer>` (whitespace aside, each tag once, neither part blank). Give a weight
    /// with `=`: `--format-reward=0.2` (so a following argument is never read as a weight).
    #[cfg_attr(feature = "cli", arg(long, value_name = "W", num_args = 0..=1, require_equals = true,
        default_missing_value = "0.5", help_heading = "Scoring", value_parser = parse_weight))]
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub format_reward: Option<f64>,
}

/// A weight of the format reward: any finite number.
#[cfg(feature = "cli")]
fn parse_weight(s: &str) -> Result<f64, String> {
    rlcli::parse_f64_in(s, |_| true, "the weight is a finite number")
}

/// The format reward's weight with a value (0 = off): what rltrain's `config.json` records as
/// `format_reward`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
pub struct FormatRewardOptions {
    /// `reward = accuracy + format_reward * format_ok`; 0 leaves the reward alone.
    pub format_reward: f64,
}

impl OptionGroup for FormatRewardOptions {
    type Layer = FormatRewardArgs;
    const NAMES: &'static [&'static str] = &["format_reward"];

    fn fold(&mut self, layer: &FormatRewardArgs) -> Vec<&'static str> {
        match layer.format_reward {
            Some(w) => {
                self.format_reward = w;
                vec!["format_reward"]
            }
            None => Vec::new(),
        }
    }

    fn to_layer(&self) -> FormatRewardArgs {
        FormatRewardArgs { format_reward: Some(self.format_reward) }
    }
}

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

    /// The table, the fields and the defaults are one declaration: each option's key is a field
    /// of both twins, its default is `Config::default()`'s, and a set option reaches the config.
    #[test]
    fn the_table_is_the_fields() {
        let keys: Vec<String> = AnswerArgs::OPTIONS.iter().map(|o| o.key()).collect();
        assert_eq!(keys, AnswerOptions::NAMES);
        let all: Vec<String> = config_options().map(|o| o.key()).collect();
        assert_eq!(all[0], "reward");
        assert_eq!(all[1..], keys[..]);
        let (def, values) = (Config::default(), AnswerOptions::default());
        assert_eq!(AnswerOptions::of(&def), values);
        assert_eq!(ScoringArgs::default().config().reward, def.reward);
        for option in config_options() {
            assert_eq!(option.default_value(), option.get(&def));
            // Every value named is read back, and set alone (the others keep their defaults).
            for (value, help) in option.values() {
                let mut cfg = Config::default();
                option.set(&mut cfg, value).expect(value);
                assert_eq!(option.get(&cfg), value);
                assert!(!help.is_empty());
                let others = config_options().filter(|o| o.key() != option.key());
                assert!(others.into_iter().all(|o| o.get(&cfg) == o.default_value()));
            }
            assert!(option.set(&mut Config::default(), "no-such-value").is_err());
        }
        // Each set option folds in under its name; the layer of a value sets every option.
        let mut folded = AnswerOptions::default();
        let layer = AnswerArgs { truncated: Some(Truncated::Lenient), ..AnswerArgs::default() };
        assert_eq!(folded.fold(&layer), vec!["truncated"]);
        assert_eq!(folded.truncated, Truncated::Lenient);
        assert_eq!(AnswerOptions::set_in(&folded.to_layer()), AnswerOptions::NAMES);
        assert_eq!(layer.config().truncated, Truncated::Lenient);
        let mut format = FormatRewardOptions::default();
        assert_eq!(format.fold(&FormatRewardArgs { format_reward: Some(0.2) }), vec!["format_reward"]);
        assert_eq!((format.format_reward, FormatRewardOptions::default().format_reward), (0.2, 0.0));
    }
}
