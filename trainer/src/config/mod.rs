//! A run's settings: declared once per group ([`groups`], through `settings!` of [`declare`]), each
//! group with its all-`Option` layer that is both the command line's flags and a config file's
//! keys; the layers folded in one place with each value's provenance ([`resolve`]); what is
//! derived from them once for a run ([`derived::Resolved`]); and the reading of older
//! `config.json` files ([`compat`]).
//!
//! Precedence: built-in defaults < paper preset (`--paper`, [`presets`]) and a pretrained
//! model's defaults ([`resolve::pretrained_defaults`]) < `--config FILE.json` < command-line
//! flags. A preset or model default never replaces a value the user set.
//!
//! Modules import downwards only (this one only declares and re-exports): [`declare`],
//! [`choices`], [`paper`] and `flat` at the bottom; then [`groups`]; then [`settings`] (the
//! whole [`TrainConfig`] and [`TrainLayer`]); then [`compat`], [`presets`], [`overrides`] and
//! [`derived`]; then [`resolve`].

pub mod choices;
pub mod compat;
pub mod declare;
pub mod derived;
mod flat;
pub mod groups;
pub mod overrides;
pub mod paper;
pub mod presets;
pub mod resolve;
pub mod settings;

pub use choices::{PromptTemplate, RewardChoice, RolloutDecode, TokenizerChoice};
pub use declare::{Group, Source, Sources};
pub use derived::Resolved;
pub use groups::{
    DataLayer, DataSettings, EvalLayer, EvalSettings, ModelLayer, ModelSettings, ObjectiveLayer, ObjectiveOverrides,
    ObjectiveSettings, OptimLayer, OptimSettings, OverridesLayer, RolloutLayer, RolloutSettings, RunLayer, RunSettings,
};
pub use paper::{Paper, PAPERS};
pub use resolve::{pretrained_defaults, PRETRAINED_MAX_NEW_TOKENS};
pub use settings::{ResumeChange, TrainConfig, TrainLayer};

/// Default cap `c_ω` of CPGD's clip-filter-like weight (CPGD official code, arXiv:2505.12504 §4.3).
pub use crate::advantage::CPGD_WEIGHT_CAP;

#[cfg(test)]
mod tests;
