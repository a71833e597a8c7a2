//! The loss recipe of a run: the objective's registry defaults with the user's
//! [`ObjectiveOverrides`] applied.

use super::groups::ObjectiveOverrides;
use crate::advantage::{CpgdWeight, Estimator, CPGD_WEIGHT_CAP};
use crate::aggregate::AggMode;
use crate::error::{Error, Result};
use crate::kl::{KlEstimator, RefKl};
use crate::objectives::{DriftConfig, LossConfig, Objective, Param};

impl ObjectiveOverrides {
    /// The objective's defaults with these overrides applied; Dr.GRPO's `L_max` is `l_max`. The
    /// kernel's own parameters go through [`crate::objectives::ObjectiveConfig::set`], which knows
    /// which kernel has which; the additive terms (drift, reference KL, entropy), the aggregation
    /// and the advantage estimator apply to every objective.
    pub fn apply(&self, objective: &Objective, l_max: usize) -> Result<LossConfig> {
        let mut cfg = objective.defaults();
        let name = objective.name;
        let params = [
            (Param::ClipEps, self.clip_eps),
            (Param::ClipLow, self.clip_low),
            (Param::ClipHigh, self.clip_high),
            (Param::DualClip, self.dual_clip),
            (Param::CpgLambda, self.cpg_lambda),
            (Param::DgpoN, self.dgpo_n),
            (Param::DgpoM, self.dgpo_m),
        ];
        for (param, value) in params {
            if let Some(v) = value {
                cfg.objective.set(param, v).map_err(|e| match e {
                    rlobjectives::Error::InvalidConfig(m) => Error::invalid_config(format!("objective `{name}`: {m}")),
                    other => other.into(),
                })?;
            }
        }
        if self.drift_coef.is_some() || self.drift_clip.is_some() {
            let base = cfg.drift.unwrap_or_default();
            let d =
                DriftConfig { coef: self.drift_coef.unwrap_or(base.coef), clip: self.drift_clip.unwrap_or(base.clip) };
            cfg.drift = if d.coef == 0.0 { None } else { Some(d) };
        }
        if self.kl_coef.is_some() || self.kl_estimator.is_some() {
            let estimator = self.kl_estimator.or(cfg.ref_kl.map(|k| k.estimator)).unwrap_or(KlEstimator::K3);
            let coef = self.kl_coef.or(cfg.ref_kl.map(|k| k.coef)).unwrap_or(0.0);
            cfg.ref_kl = if coef == 0.0 { None } else { Some(RefKl { estimator, coef }) };
        }
        if let Some(c) = self.entropy_coef {
            cfg.entropy_coef = c;
        }
        if let Some(a) = self.aggregation {
            cfg.agg = a;
        }
        if let AggMode::DrGrpo { l_max: l } = &mut cfg.agg {
            *l = l_max;
        }
        if let Some(a) = &self.advantage {
            cfg.advantage = match Estimator::from_name(a)? {
                Estimator::Cpgd { weight: CpgdWeight::ClipFilterLike { .. } } => Estimator::Cpgd {
                    weight: CpgdWeight::ClipFilterLike { cap: self.cpgd_weight_cap.unwrap_or(CPGD_WEIGHT_CAP) },
                },
                named => named,
            };
        }
        if let Some(cap) = self.cpgd_weight_cap {
            if !matches!(cfg.advantage, Estimator::Cpgd { weight: CpgdWeight::ClipFilterLike { .. } }) {
                return Err(Error::invalid_config(format!(
                    "--cpgd-weight-cap {cap} needs --advantage cpgd-clip-filter (the advantage is {})",
                    cfg.advantage
                )));
            }
            if !(cap.is_finite() && cap >= 1.0) {
                return Err(Error::invalid_config(format!("--cpgd-weight-cap must be >= 1, got {cap}")));
            }
        }
        cfg.validate()?;
        Ok(cfg)
    }
}
