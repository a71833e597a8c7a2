//! The fold of a run's layers, in one place: the base (the defaults, or a resumed run's
//! `config.json`), then for a fresh run the paper preset and a pretrained model's defaults, then
//! the user's layers (a `--config` file, then the flags). Each value's [`Source`] is recorded in
//! `sources`; a preset or model default never replaces a value the user set, because the user's
//! layers fold after them.

use serde_json::Value;

use super::compat::{normalise, settings_only};
use super::declare::Source;
use super::presets;
use super::settings::{TrainConfig, TrainLayer};
use crate::error::{Error, Result};
use crate::optim::ScheduleKind;

/// `max_new_tokens` of a pretrained model unless set.
pub const PRETRAINED_MAX_NEW_TOKENS: usize = 512;

/// The defaults of a pretrained model: the learning rate of the seed papers' 1.5B runs (CPGD
/// arXiv:2505.12504 §5.1, DGPO arXiv:2603.14389 §5.1: 1e-6) and CFPO's schedule (arXiv:2601.22801
/// §5: cosine after a warm-up of a tenth of the run); responses long enough to reason in
/// ([`PRETRAINED_MAX_NEW_TOKENS`], not the tiny model's one-token answers); and a checkpoint
/// every tenth of the run, the newest 3 kept, so a killed job loses at most a tenth of its work.
/// The tiny model keeps the built-in 3e-3, constant, one token, and a checkpoint at the end.
pub fn pretrained_defaults(steps: u64) -> TrainLayer {
    let mut layer = TrainLayer::default();
    (layer.optim.lr, layer.optim.lr_schedule, layer.optim.warmup_steps) =
        (Some(1e-6), Some(ScheduleKind::Cosine), Some(steps / 10));
    layer.rollout.max_new_tokens = Some(PRETRAINED_MAX_NEW_TOKENS);
    (layer.run.save_every, layer.run.keep_checkpoints) = (Some((steps / 10).max(1)), Some(3));
    layer
}

impl TrainLayer {
    /// A layer from a config file's JSON, nested as `config.json` or flat by flag names
    /// ([`normalise`]); a whole `config.json` gives its settings (its records are left out).
    /// An unknown key is an error naming it; `null` leaves a setting unset.
    pub fn from_json(value: &Value) -> Result<TrainLayer> {
        if !value.is_object() {
            return Err(Error::invalid_config("a config layer must be a JSON object"));
        }
        serde_json::from_value(normalise(&settings_only(value))).map_err(|e| Error::invalid_config(format!("{e}")))
    }
}

impl TrainConfig {
    /// Parses a JSON config file's text, nested as `config.json` or flat (an older `config.json`,
    /// or a file of flag names: [`normalise`]); unknown keys are an error, naming the key.
    pub fn from_json(text: &str) -> Result<Self> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| Error::invalid_config(format!("config file: {e}")))?;
        serde_json::from_value(normalise(&value)).map_err(|e| Error::invalid_config(format!("config file: {e}")))
    }

    /// This config with `overlay` (JSON of the settings set, nested or flat) over it; `sources`
    /// is left as it is.
    pub fn merged(&self, overlay: &Value) -> Result<Self> {
        let mut out = self.clone();
        out.fold(&TrainLayer::from_json(overlay)?, Source::User);
        out.sources = self.sources.clone();
        Ok(out)
    }

    /// [`TrainConfig::resolve_layers`] with the user's layers as JSON (a config file, flat or
    /// nested, then the flags).
    pub fn resolve(base: Option<&TrainConfig>, layers: &[Value]) -> Result<TrainConfig> {
        let layers = layers.iter().map(TrainLayer::from_json).collect::<Result<Vec<_>>>()?;
        Self::resolve_layers(base, &layers)
    }

    /// Resolves a run's settings: `base` (a resumed run's config, else the defaults), then the
    /// paper preset and a pretrained model's defaults (fresh runs only: a resumed run keeps what
    /// they gave it), then the user's `layers` in order. `sources` records who set what; a
    /// setting no layer set is [`Source::Default`] (also in an older `config.json` that lacks it).
    pub fn resolve_layers(base: Option<&TrainConfig>, layers: &[TrainLayer]) -> Result<TrainConfig> {
        let cfg = Self::fold_layers(base, layers)?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// [`TrainConfig::resolve_layers`] without the checks across settings.
    pub(crate) fn fold_layers(base: Option<&TrainConfig>, layers: &[TrainLayer]) -> Result<TrainConfig> {
        let mut cfg = base.cloned().unwrap_or_default();
        if base.is_none() {
            // What the user chose decides which preset and model defaults apply.
            let mut chosen = cfg.clone();
            for layer in layers {
                chosen.fold(layer, Source::User);
            }
            if let Some(paper) = chosen.objective.paper {
                cfg.fold(&presets::overlay(paper, chosen.objective.objective.name)?, Source::Preset);
            }
            if chosen.model.model != "tiny" {
                cfg.fold(&pretrained_defaults(chosen.run.steps), Source::Model);
            }
        }
        for layer in layers {
            cfg.fold(layer, Source::User);
        }
        for name in TrainConfig::names() {
            cfg.sources.entry(name.to_string()).or_insert(Source::Default);
        }
        Ok(cfg)
    }
}
