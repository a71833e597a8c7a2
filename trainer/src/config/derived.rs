//! What a run derives from its settings, once ([`Resolved`]): the registry entry, the loss
//! recipe, the verifier's configuration, and the rules whose default is the objective's (the
//! reward encoding, DAPO's shaping, CPGD's epoch correction, the rollout decoder); and the checks
//! across settings ([`TrainConfig::validate`]).

use rlbase::DeviceSpec;

use super::choices::RolloutDecode;
use super::paper::check;
use super::settings::TrainConfig;
use crate::error::{Error, Result};
use crate::objectives::{LossConfig, Objective, ObjectiveConfig};
use rlverify::RewardKind;

/// The settings of a run as the loop uses them, derived once by [`TrainConfig::resolved`].
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The objective's registry entry.
    pub objective: &'static Objective,
    /// The loss recipe: the registry defaults with the overrides.
    pub loss: LossConfig,
    /// The verifier's configuration: its reward encoding and answer reading.
    pub verify: rlverify::Config,
    /// The `ε` of CPGD's multi-epoch advantage correction when it is on.
    pub cpgd_correction: Option<f64>,
    /// DAPO's overlong punishment `(L_max, L_cache)` when it is on.
    pub overlong: Option<(usize, usize)>,
    /// Whether DAPO dynamic sampling is on.
    pub dynamic_sampling: bool,
    /// Whether rollouts sample on the quantized CPU decoder.
    pub quantized: bool,
}

impl TrainConfig {
    /// Checks the settings and derives what the loop needs from them.
    pub fn resolved(&self) -> Result<Resolved> {
        self.validate()?;
        Ok(Resolved {
            objective: self.objective(),
            loss: self.loss_config()?,
            verify: self.verify_config()?,
            cpgd_correction: self.cpgd_epoch_correction_eps()?,
            overlong: match self.overlong_buffer_tokens() {
                0 => None,
                l => Some((self.rollout.max_new_tokens, l)),
            },
            dynamic_sampling: self.dynamic_sampling_on(),
            quantized: self.quantized_rollouts(),
        })
    }

    /// The registry entry of the objective.
    pub fn objective(&self) -> &'static Objective {
        self.objective.objective
    }

    /// The loss recipe: registry defaults plus overrides.
    pub fn loss_config(&self) -> Result<LossConfig> {
        self.objective.overrides.apply(self.objective(), self.rollout.max_new_tokens)
    }

    /// The encoding of the verdict (rlverify's reward kind): `auto` is the objective's.
    pub fn reward_kind(&self) -> Result<RewardKind> {
        Ok(self.rollout.reward.kind(self.objective().shaping.signed_rewards))
    }

    /// The verifier's settings of this run: its reward encoding and answer reading.
    pub fn verify_config(&self) -> Result<rlverify::Config> {
        let mut cfg = rlverify::Config { reward: self.reward_kind()?, ..rlverify::Config::default() };
        self.rollout.answer.apply(&mut cfg);
        Ok(cfg)
    }

    /// Whether DAPO dynamic sampling is on.
    pub fn dynamic_sampling_on(&self) -> bool {
        self.rollout.dynamic_sampling.unwrap_or(self.objective().shaping.dynamic_sampling)
    }

    /// The overlong-punishment buffer `L_cache` (0 = off): a fifth of the length for dapo, as
    /// DAPO (arXiv:2503.14476 §3.4) pairs L_max = 20480 with L_cache = 4096.
    pub fn overlong_buffer_tokens(&self) -> usize {
        let by_objective =
            self.objective().shaping.overlong_buffer_divisor.map_or(0, |n| self.rollout.max_new_tokens / n);
        self.rollout.overlong_buffer.unwrap_or(by_objective)
    }

    /// Whether CPGD's multi-epoch advantage correction (arXiv:2505.12504 §6.1) is on, and its `ε`.
    pub fn cpgd_epoch_correction_eps(&self) -> Result<Option<f64>> {
        let eps = match self.loss_config()?.objective {
            ObjectiveConfig::Cpg(c) => Some(c.eps),
            _ => None,
        };
        match (self.optim.cpgd_epoch_correction, eps) {
            (Some(false), _) => Ok(None),
            (None, e) => Ok(e.filter(|_| self.optim.iterations > 1)),
            (Some(true), Some(e)) => Ok(Some(e)),
            (Some(true), None) => Err(Error::invalid_config(format!(
                "--cpgd-epoch-correction needs a CPG objective (cpg, cpgd, cpgd-official), not `{}`",
                self.objective().name
            ))),
        }
    }

    /// Whether rollouts sample on the quantized CPU decoder.
    pub fn quantized_rollouts(&self) -> bool {
        match self.rollout.rollout_decode {
            RolloutDecode::Quantized => true,
            RolloutDecode::Dense => false,
            RolloutDecode::Auto => self.model.model != "tiny" && self.run.device == DeviceSpec::Cpu,
        }
    }

    /// Checks ranges that would otherwise fail deep inside the loop.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::invalid_config(m));
        self.loss_config()?;
        self.cpgd_epoch_correction_eps()?;
        if let Some(paper) = self.objective.paper {
            check(paper, self.objective().name)?;
        }
        if self.run.steps == 0 {
            return bad("--steps must be at least 1 (each step trains on one rollout batch)".into());
        }
        let generated = std::iter::once(&self.data.data).chain(&self.eval.eval_data).find(|d| d.starts_with("task:"));
        if let (Some(task), 0) = (generated, self.data.task_size) {
            return bad(format!("--task-size must be at least 1 (the problems generated for {task})"));
        }
        if self.model.model == "tiny" {
            self.check_tiny()?;
        }
        let (rollout, optim) = (&self.rollout, &self.optim);
        if rollout.prompts_per_step == 0 || rollout.group_size == 0 {
            return bad("--prompts-per-step and --group-size must be at least 1".into());
        }
        if optim.iterations == 0 || optim.mini_batches == 0 {
            return bad("--iterations and --mini-batches must be at least 1".into());
        }
        if optim.mini_batches > rollout.prompts_per_step * rollout.group_size {
            return bad(format!(
                "--mini-batches {} exceeds the {} responses of a step",
                optim.mini_batches,
                rollout.prompts_per_step * rollout.group_size
            ));
        }
        if rollout.max_new_tokens == 0 {
            return bad("--max-new-tokens must be at least 1".into());
        }
        if !(rollout.temperature.is_finite() && rollout.temperature > 0.0) {
            return bad(format!("--temperature must be > 0 (log-probs are taken at it), got {}", rollout.temperature));
        }
        if !(rollout.top_p > 0.0 && rollout.top_p <= 1.0) {
            return bad(format!("--top-p must be in (0, 1], got {}", rollout.top_p));
        }
        if !(optim.lr.is_finite() && optim.lr >= 0.0) {
            return bad(format!("--lr must be finite and >= 0, got {}", optim.lr));
        }
        if !(0.0..1.0).contains(&optim.adam_beta1) || !(0.0..1.0).contains(&optim.adam_beta2) {
            return bad("AdamW betas must be in [0, 1)".into());
        }
        if let Some(c) = rollout.tis_cap {
            if !(c.is_finite() && c >= 1.0) {
                return bad(format!("--tis-cap must be >= 1, got {c}"));
            }
        }
        if rollout.rollout_decode == RolloutDecode::Quantized && self.run.device != DeviceSpec::Cpu {
            return bad(format!("--rollout-decode quantized runs on the CPU only, not --device {}", self.run.device));
        }
        if self.run.max_bad_steps == 0 {
            return bad("--max-bad-steps must be at least 1".into());
        }
        if self.eval.eval_every > 0 && self.eval.eval_data.is_empty() {
            return bad("--eval-every needs --eval-data".into());
        }
        Ok(())
    }

    /// The tiny model's shape: at least one layer, and a width of 4 attention heads of an even
    /// size (a multiple of 8).
    fn check_tiny(&self) -> Result<()> {
        let m = &self.model;
        if m.tiny_layers == 0 {
            return Err(Error::invalid_config("--tiny-layers must be at least 1"));
        }
        if m.tiny_hidden == 0 || !m.tiny_hidden.is_multiple_of(8) {
            return Err(Error::invalid_config(format!(
                "--tiny-hidden must be a positive multiple of 8 (4 attention heads of an even width), got {}",
                m.tiny_hidden
            )));
        }
        Ok(())
    }
}
