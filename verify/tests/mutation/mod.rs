//! A mutation engine for the final-answer contract (issue 30, point 3): it takes the right
//! responses of the dev corpora and rewrites each into variants that **must be wrong** (the
//! response no longer commits to one right answer) or **must stay right** (the answer is still the
//! gold's, written another way), in families of operators, and measures how many the verifier gets
//! right per family and per operator.
//!
//! - [`base`]: the inputs: rows of both dev corpora that the verifier scores right today and whose
//!   label says right, each with its final answer located and a wrong alternative value.
//! - [`families`]: the families and their operators, one module per family, each with the reason
//!   for its place in the development or the held-out set ([`Split`]).
//! - [`numerals`]: number words, digits of other scripts, fullwidth digits, Roman numerals.
//! - [`measure`]: runs every operator on a seeded sample of bases and tallies the verdicts.
//! - [`floor`]: the committed per-family floor and its comparison; [`report`]: the Markdown tables.
//!
//! Everything is deterministic: the sample of each operator and each template drawn are functions
//! of [`SEED`], the operator's name and the base's origin (rlbase's SplitMix64), never of the base's
//! index: a base that joins or leaves the set moves no other base's draw.

pub mod base;
pub mod families;
pub mod floor;
pub mod measure;
pub mod numerals;
pub mod report;

pub use base::Base;

/// The seed of every draw of the engine.
pub const SEED: u64 = 0x3030_6d75_7461_7465;

/// The engine's generator (rlbase's SplitMix64: the stream never changes).
pub type Rng = rlbase::SplitMix64;

/// What a variant must score.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// The response commits to no single right answer: the verifier must not reward it.
    Wrong,
    /// The response still commits to the gold's value: the verifier must reward it.
    Right,
}

/// Whether a family is developed against or kept back to measure a first look.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// Fixes may be written against it.
    Dev,
    /// Nobody develops against it: its score after a change is a first-seen score.
    HeldOut,
}

impl Split {
    pub fn as_str(self) -> &'static str {
        match self {
            Split::Dev => "dev",
            Split::HeldOut => "held-out",
        }
    }
}

/// A mutated response, with the gold it is scored against (the base's, unless the operator
/// changes the question, as [`families::article_choice`] does).
#[derive(Clone, Debug)]
pub struct Variant {
    pub gold: String,
    pub response: String,
}

/// One rewrite of a base: `None` where it does not make sense for that base (a unit conversion
/// of an answer without a unit, a number word for a fraction).
pub struct Operator {
    pub name: &'static str,
    pub expect: Expect,
    pub apply: fn(&Base, &mut Rng) -> Option<Variant>,
}

/// A family of operators: one kind of shape a response can take.
pub struct Family {
    pub name: &'static str,
    pub split: Split,
    /// What the family rewrites, and why it sits in its split.
    pub why: &'static str,
    pub operators: &'static [Operator],
}

/// One of several phrasings, drawn by the seed.
pub fn phrase(rng: &mut Rng, phrasings: &[&'static str]) -> &'static str {
    phrasings[rng.below(phrasings.len())]
}

/// Fill a template: each `{key}` is replaced by its value (so `\\boxed{{x}}` is the box of `x`).
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    values.iter().fold(template.to_string(), |text, (key, value)| text.replace(&format!("{{{key}}}"), value))
}
