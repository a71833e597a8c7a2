//! A run's settings as one value ([`TrainConfig`], what `config.json` records) and one layer of
//! them ([`TrainLayer`]: the command line's flags, a config file, a preset): the groups of
//! [`super::groups`] side by side, folded group by group.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::declare::{Change, Group, Source, Sources};
use super::flat::flat_entries;
use super::groups::{
    DataLayer, DataSettings, EvalLayer, EvalSettings, ModelLayer, ModelSettings, ObjectiveLayer, ObjectiveSettings,
    OptimLayer, OptimSettings, RolloutLayer, RolloutSettings, RunLayer, RunSettings,
};

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
    /// [`super::groups`]). Any other change alters the experiment.
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
    pub fn changes_from(&self, before: &TrainConfig) -> crate::Result<Vec<Change>> {
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
    pub fn settings(&self) -> BTreeMap<String, Value> {
        flat_entries(&serde_json::to_value(self).unwrap_or_default()).into_iter().collect()
    }
}

impl TrainLayer {
    /// The settings this layer sets, by name, with their values.
    pub fn settings(&self) -> BTreeMap<String, Value> {
        flat_entries(&serde_json::to_value(self).unwrap_or_default()).into_iter().collect()
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
