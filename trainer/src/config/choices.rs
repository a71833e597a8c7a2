//! The small enums of the settings that are rltrain's own (`--tokenizer`, `--prompt-template`,
//! `--rollout-decode`, `--reward`), each with the names its flag and `config.json` both use.

use crate::objectives::Objective;
use rlverify::options::VerifierOption;
use rlverify::RewardKind;
use serde::{Deserialize, Serialize};

/// `--tokenizer` of the tiny model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum TokenizerChoice {
    /// The task's own alphabet for `task:` data, else bytes.
    Auto,
    /// The task's alphabet (needs `task:` data).
    Task,
    /// Byte-level.
    Byte,
}

/// `--prompt-template`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum PromptTemplate {
    /// Raw for `tiny`, chat otherwise.
    Auto,
    /// The problem text as is.
    Raw,
    /// The model's chat template with the instruction.
    Chat,
}

/// `--rollout-decode`: the decoder rollouts sample with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum RolloutDecode {
    /// Quantized for a pretrained model on the CPU, dense otherwise.
    Auto,
    /// The trainable network's own forward: the sampler's log-probs are `π_old`.
    Dense,
    /// rlengine's quantized CPU decoder (Q8_0 weights of the current policy, several times
    /// faster); `π_old` is then recomputed with one no-grad forward of the trainable model.
    Quantized,
}

/// `--reward`: the encoding of the verifier's verdict: one of the verifier's [`RewardKind`]s (by
/// its names, as in `rlverify score`), or `auto` (the objective's: ±1 for dapo and dgpo, DAPO
/// arXiv:2503.14476, DGPO arXiv:2603.14389; else {0,1}), what a config file writes when the flag
/// is left out. `zero-one` and `plus-minus-one`, the names of older config files, are read too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RewardChoice {
    /// The objective's encoding.
    Auto,
    /// The verifier's encoding named.
    Kind(RewardKind),
}

impl RewardChoice {
    /// The verifier's encoding this choice names; `auto` is `by_objective`'s.
    pub fn kind(self, signed_by_objective: bool) -> RewardKind {
        match self {
            Self::Auto if signed_by_objective => RewardKind::Signed,
            Self::Auto => RewardKind::Binary,
            Self::Kind(kind) => kind,
        }
    }

    /// The choice named `name` (`auto`, a [`RewardKind`], or an older name).
    fn parse(name: &str) -> Result<Self, String> {
        match name.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Self::Auto),
            "zero-one" => Ok(Self::Kind(RewardKind::Binary)),
            "plus-minus-one" => Ok(Self::Kind(RewardKind::Signed)),
            _ => RewardKind::parse(name).map(Self::Kind).map_err(|e| format!("{e} (or auto)")),
        }
    }
}

impl From<RewardKind> for RewardChoice {
    fn from(kind: RewardKind) -> Self {
        Self::Kind(kind)
    }
}

/// Written by its name (`auto`, `binary`, `signed`).
impl Serialize for RewardChoice {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Auto => s.serialize_str("auto"),
            Self::Kind(kind) => kind.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for RewardChoice {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Self::parse(&name).map_err(serde::de::Error::custom)
    }
}

/// `--reward` takes the verifier's encodings, by the verifier's names and help (`auto` is what
/// leaving it out means).
#[cfg(feature = "cli")]
impl clap::ValueEnum for RewardChoice {
    fn value_variants<'a>() -> &'a [Self] {
        static KINDS: std::sync::LazyLock<Vec<RewardChoice>> =
            std::sync::LazyLock::new(|| RewardKind::ALL.iter().copied().map(RewardChoice::Kind).collect());
        &KINDS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        match self {
            Self::Auto => None,
            Self::Kind(kind) => Some(clap::builder::PossibleValue::new(kind.as_str()).help(kind.help())),
        }
    }
}

/// `--objective` unless set: GRPO.
pub(crate) fn default_objective() -> &'static Objective {
    use crate::objectives::OBJECTIVES;
    OBJECTIVES.iter().find(|o| o.name == "grpo").unwrap_or(&OBJECTIVES[0])
}
