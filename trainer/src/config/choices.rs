//! The small enums of the settings that are rltrain's own (`--tokenizer`, `--prompt-template`,
//! `--rollout-decode`, `--reward`), each with the names its flag and `config.json` both use.

use crate::objectives::Objective;
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

/// `--reward`: the encoding of the verifier's verdict (`binary` and `signed` as in `rlverify
/// score`, the verifier's [`RewardKind`]; `auto` in a config file; `zero-one` and
/// `plus-minus-one`, the names of older config files, are read too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RewardChoice {
    /// ±1 for dapo and dgpo (DAPO arXiv:2503.14476, DGPO arXiv:2603.14389), else {0,1}.
    Auto,
    /// Correct 1, wrong 0.
    #[serde(alias = "zero-one")]
    Binary,
    /// Correct +1, wrong −1.
    #[serde(alias = "plus-minus-one")]
    Signed,
}

impl RewardChoice {
    /// The verifier's encoding this choice names; `auto` is `by_objective`'s.
    pub fn kind(self, signed_by_objective: bool) -> RewardKind {
        match self {
            Self::Auto if signed_by_objective => RewardKind::Signed,
            Self::Auto | Self::Binary => RewardKind::Binary,
            Self::Signed => RewardKind::Signed,
        }
    }
}

impl From<RewardKind> for RewardChoice {
    fn from(kind: RewardKind) -> Self {
        match kind {
            RewardKind::Binary => Self::Binary,
            RewardKind::Signed => Self::Signed,
        }
    }
}

/// `--reward` takes the verifier's encodings, by the verifier's names and help (`auto` is what
/// leaving it out means).
#[cfg(feature = "cli")]
impl clap::ValueEnum for RewardChoice {
    fn value_variants<'a>() -> &'a [Self] {
        &[Self::Binary, Self::Signed]
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        use rlverify::options::VerifierOption;
        let kind = match self {
            Self::Auto => return None,
            Self::Binary => RewardKind::Binary,
            Self::Signed => RewardKind::Signed,
        };
        Some(clap::builder::PossibleValue::new(kind.as_str()).help(kind.help()))
    }
}

/// `--objective` unless set: GRPO.
pub(crate) fn default_objective() -> &'static Objective {
    use crate::objectives::OBJECTIVES;
    OBJECTIVES.iter().find(|o| o.name == "grpo").unwrap_or(&OBJECTIVES[0])
}
