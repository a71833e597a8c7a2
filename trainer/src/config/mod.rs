//! A run's settings: declared once per group ([`groups`], through [`declare::settings!`]), each
//! group with its all-`Option` layer that is both the command line's flags and a config file's
//! keys; the layers folded in one place with each value's provenance ([`resolve`]); what is
//! derived from them once for a run ([`derived::Resolved`]); and the reading of older
//! `config.json` files ([`compat`]).
//!
//! Precedence: built-in defaults < paper preset (`--paper`, [`presets`]) and a pretrained
//! model's defaults ([`resolve::pretrained_defaults`]) < `--config FILE.json` < command-line
//! flags. A preset or model default never replaces a value the user set.
//!
//! Modules import downwards only: [`declare`], [`choices`] and [`paper`] at the bottom; then
//! [`groups`]; then this module's [`TrainConfig`] and [`TrainLayer`]; then [`compat`],
//! [`presets`], [`overrides`], [`resolve`] and [`derived`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub mod choices;
pub mod compat;
pub mod declare;
pub mod derived;
pub mod groups;
pub mod overrides;
pub mod paper;
pub mod presets;
pub mod resolve;

pub use choices::{PromptTemplate, RewardChoice, RolloutDecode, TokenizerChoice};
pub use declare::{Group, Source, Sources};
pub use derived::Resolved;
pub use groups::{
    DataLayer, DataSettings, EvalLayer, EvalSettings, ModelLayer, ModelSettings, ObjectiveLayer, ObjectiveOverrides,
    ObjectiveSettings, OptimLayer, OptimSettings, OverridesLayer, RolloutLayer, RolloutSettings, RunLayer, RunSettings,
};
pub use paper::{Paper, PAPERS};
pub use resolve::{pretrained_defaults, PRETRAINED_MAX_NEW_TOKENS};

/// Default cap `c_ω` of CPGD's clip-filter-like weight (CPGD official code, arXiv:2505.12504 §4.3).
pub use crate::advantage::CPGD_WEIGHT_CAP;

/// Every setting of a training run, grouped as `rltrain help train` groups its flags; each field
/// is named as its flag (`--lr` is `optim.lr`), and `config.json` keeps the groups.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrainConfig {
    /// Run: how the run is kept: where it writes, how long it runs, its seed and device, what it logs and saves.
    pub run: RunSettings,
    /// Model: the policy: a pretrained model or the seeded `tiny` one.
    pub model: ModelSettings,
    /// Data: the training problems and how they become prompts.
    pub data: DataSettings,
    /// Rollout: sampling the rollout batch and rewarding it.
    pub rollout: RolloutSettings,
    /// Optimisation: passes over the batch, the optimizer and its schedule.
    pub optim: OptimSettings,
    /// Objective: the objective of the registry, a paper preset, and overrides of its hyper-parameters.
    pub objective: ObjectiveSettings,
    /// Evaluation: periodic evaluation.
    pub eval: EvalSettings,
    /// Where each value came from, by flag name (`lr`, `clip_low`); filled by
    /// [`TrainConfig::resolve`].
    pub sources: Sources,
    /// Settings changed when the run was resumed (`rltrain --resume DIR --allow-changes`).
    pub changes: Vec<ResumeChange>,
    /// The memory plan the run chose (micro-batch size, recomputation) and the figures behind it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<crate::memory::plan::MemoryPlan>,
}

/// One layer of settings (the command line, a config file, a paper preset, a pretrained model's
/// defaults): each group's layer, every field set or not. The command line's training flags are
/// this type (`clap::Args` with the `cli` feature); a config file is its JSON.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(default, deny_unknown_fields)]
pub struct TrainLayer {
    /// Run.
    #[cfg_attr(feature = "cli", command(flatten))]
    pub run: RunLayer,
    /// Model.
    #[cfg_attr(feature = "cli", command(flatten))]
    pub model: ModelLayer,
    /// Data.
    #[cfg_attr(feature = "cli", command(flatten))]
    pub data: DataLayer,
    /// Rollout and scoring.
    #[cfg_attr(feature = "cli", command(flatten))]
    pub rollout: RolloutLayer,
    /// Optimisation.
    #[cfg_attr(feature = "cli", command(flatten))]
    pub optim: OptimLayer,
    /// Objective.
    #[cfg_attr(feature = "cli", command(flatten))]
    pub objective: ObjectiveLayer,
    /// Evaluation.
    #[cfg_attr(feature = "cli", command(flatten))]
    pub eval: EvalLayer,
}

/// A setting changed on resume, as recorded in `config.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResumeChange {
    /// The checkpoint step the run resumed from.
    pub step: u64,
    /// The setting, by flag name (`lr`, `clip_low`).
    pub field: String,
    /// Its value before.
    pub from: Value,
    /// Its value after.
    pub to: Value,
}

impl TrainConfig {
    /// Sets what `layer` sets, recording `source` for each value.
    pub fn fold(&mut self, layer: &TrainLayer, source: Source) {
        let sources = &mut self.sources;
        self.run.fold(&layer.run, source, sources);
        self.model.fold(&layer.model, source, sources);
        self.data.fold(&layer.data, source, sources);
        self.rollout.fold(&layer.rollout, source, sources);
        self.optim.fold(&layer.optim, source, sources);
        self.objective.fold(&layer.objective, source, sources);
        self.eval.fold(&layer.eval, source, sources);
    }

    /// Every setting's name (the flag's, with `_`), in `config.json` order.
    pub fn names() -> Vec<&'static str> {
        let mut out = Vec::new();
        RunSettings::names(&mut out);
        ModelSettings::names(&mut out);
        DataSettings::names(&mut out);
        RolloutSettings::names(&mut out);
        OptimSettings::names(&mut out);
        ObjectiveSettings::names(&mut out);
        EvalSettings::names(&mut out);
        out
    }

    /// The names of the settings a resumed run may change freely: how long it runs, where and
    /// how it logs, evaluates and saves, and how the work is split in memory (`[free]` in
    /// [`groups`]). Any other change alters the experiment.
    pub fn free_on_resume() -> Vec<&'static str> {
        let mut out = Vec::new();
        RunSettings::free(&mut out);
        ModelSettings::free(&mut out);
        DataSettings::free(&mut out);
        RolloutSettings::free(&mut out);
        OptimSettings::free(&mut out);
        ObjectiveSettings::free(&mut out);
        EvalSettings::free(&mut out);
        out
    }

    /// The settings other than the [free](TrainConfig::free_on_resume) ones that differ from
    /// `before` (a resumed run's config), as `(name, before, now)`.
    pub fn changes_from(&self, before: &TrainConfig) -> crate::Result<Vec<declare::Change>> {
        let mut out = Vec::new();
        self.run.changes(&before.run, &mut out);
        self.model.changes(&before.model, &mut out);
        self.data.changes(&before.data, &mut out);
        self.rollout.changes(&before.rollout, &mut out);
        self.optim.changes(&before.optim, &mut out);
        self.objective.changes(&before.objective, &mut out);
        self.eval.changes(&before.eval, &mut out);
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// A layer that sets every setting to this config's value.
    pub fn to_layer(&self) -> TrainLayer {
        TrainLayer {
            run: self.run.to_layer(),
            model: self.model.to_layer(),
            data: self.data.to_layer(),
            rollout: self.rollout.to_layer(),
            optim: self.optim.to_layer(),
            objective: self.objective.to_layer(),
            eval: self.eval.to_layer(),
        }
    }
}

impl TrainConfig {
    /// Every setting by its name with its value (the flat view of `config.json`: `lr`,
    /// `clip_low`, ...), without the run's records.
    pub fn settings(&self) -> std::collections::BTreeMap<String, Value> {
        compat::flat_entries(&serde_json::to_value(self).unwrap_or_default()).into_iter().collect()
    }
}

impl TrainLayer {
    /// The settings this layer sets, by name, with their values.
    pub fn settings(&self) -> std::collections::BTreeMap<String, Value> {
        compat::flat_entries(&serde_json::to_value(self).unwrap_or_default()).into_iter().collect()
    }

    /// The names of the settings this layer sets.
    pub fn set(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        RunSettings::set_in(&self.run, &mut out);
        ModelSettings::set_in(&self.model, &mut out);
        DataSettings::set_in(&self.data, &mut out);
        RolloutSettings::set_in(&self.rollout, &mut out);
        OptimSettings::set_in(&self.optim, &mut out);
        ObjectiveSettings::set_in(&self.objective, &mut out);
        EvalSettings::set_in(&self.eval, &mut out);
        out
    }
}

#[cfg(test)]
mod tests;
