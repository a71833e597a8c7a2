//! PPO-clip family (Schulman et al. 2017, arXiv:1707.06347 eq. 7): PPO, GRPO, GRPO dual-clip, GRPO w/o clip, DAPO, Dr.GRPO,
//! REINFORCE++ and the RLOO variant all share this per-token loss and differ in widths, advantage
//! estimator and aggregation (see the registry).

use super::parts::Prepared;
use super::{describe_opt, Kernel, Param};
use super::{LossInputs, LossTerms, Regions};
use crate::error::{Error, Result};
use crate::ops::{and, or, select};
use candle_core::Tensor;

/// Config of [`ppo_clip`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PpoClipConfig {
    /// Lower clip width `ε_l` (ratio floor `1 - ε_l`).
    pub eps_low: f64,
    /// Upper clip width `ε_h` (ratio cap `1 + ε_h`).
    pub eps_high: f64,
    /// Dual-clip constant `c > 1` for `A < 0` (Ye et al. 2020); `None` = off.
    pub dual_clip: Option<f64>,
}

impl Default for PpoClipConfig {
    fn default() -> Self {
        Self { eps_low: 0.2, eps_high: 0.2, dual_clip: None }
    }
}

impl PpoClipConfig {
    pub(crate) fn validate(&self) -> Result<()> {
        check_widths(self.eps_low, self.eps_high)?;
        check_dual(self.dual_clip)
    }
}

/// Checks `0 <= ε_l`, `0 <= ε_h` (finite).
pub(crate) fn check_widths(lo: f64, hi: f64) -> Result<()> {
    if !(lo.is_finite() && hi.is_finite() && lo >= 0.0 && hi >= 0.0) {
        return Err(Error::InvalidConfig(format!("clip widths must be finite and >= 0, got ({lo}, {hi})")));
    }
    Ok(())
}

/// Checks a dual-clip constant is `> 1`.
pub(crate) fn check_dual(c: Option<f64>) -> Result<()> {
    match c {
        Some(c) if !(c.is_finite() && c > 1.0) => {
            Err(Error::InvalidConfig(format!("dual-clip c must be > 1, got {c}")))
        }
        _ => Ok(()),
    }
}

/// PPO-clip (Schulman et al. 2017, arXiv:1707.06347 eq. 7; dual-clip: Ye et al. 2020, arXiv:1912.09729):
/// `ℓ = max(-rA, -clip(r, 1-ε_l, 1+ε_h)A)`; with dual-clip `c`, for `A<0` additionally
/// `ℓ = min(ℓ, -cA)`. Gradient `g = -Ar` on M ∪ LP ∪ HN, 0 on LN ∪ HP (and on `A<0, r>c`).
pub fn ppo_clip(inp: &LossInputs, cfg: &PpoClipConfig) -> Result<LossTerms> {
    cfg.validate()?;
    let p = Prepared::new(inp)?;
    let mut regions = p.ratio_regions(cfg.eps_low, cfg.eps_high)?;
    let unclipped = (&p.r * &p.adv)?.neg()?;
    let low = (&p.adv * (-(1.0 - cfg.eps_low)))?;
    let high = (&p.adv * (-(1.0 + cfg.eps_high)))?;
    let mut loss = select(&regions.ln, &low, &select(&regions.hp, &high, &unclipped)?)?;
    if let Some(c) = cfg.dual_clip {
        loss = apply_dual_clip(&p, c, loss, &mut regions)?;
    }
    Ok(LossTerms { loss, regions })
}

/// The hard dual-clip (Ye et al. 2020, arXiv:1912.09729) on a per-token loss: where `A < 0` and
/// `r > c` the loss is the constant `-cA` (no gradient); marks those tokens clipped.
pub(crate) fn apply_dual_clip(p: &Prepared, c: f64, loss: Tensor, regions: &mut Regions) -> Result<Tensor> {
    let dual = and(&p.neg, &p.r_d.gt(c)?)?;
    let loss = select(&dual, &(&p.adv * (-c))?, &loss)?;
    regions.clipped = or(&regions.clipped, &dual)?;
    regions.dual_clip = dual;
    Ok(loss)
}

/// GRPO without clipping (a baseline of CPGD, arXiv:2505.12504 §4.2): `ℓ = -rA`,
/// `g = -rA` everywhere. Unbounded; shows the ratio-driven collapse.
pub fn no_clip(inp: &LossInputs) -> Result<LossTerms> {
    let p = Prepared::new(inp)?;
    let mut regions = p.ratio_regions(0.2, 0.2)?;
    regions.clipped = regions.clipped.zeros_like()?;
    let loss = (&p.r * &p.adv)?.neg()?;
    Ok(LossTerms { loss, regions })
}

impl Kernel for PpoClipConfig {
    fn name(&self) -> &'static str {
        "ppo-clip"
    }
    fn per_token(&self, inp: &LossInputs) -> Result<LossTerms> {
        ppo_clip(inp, self)
    }
    fn describe(&self) -> String {
        format!("eps=({}, {}) dual_clip={}", self.eps_low, self.eps_high, describe_opt(self.dual_clip))
    }
    fn widths(&mut self) -> Option<(&mut f64, &mut f64)> {
        Some((&mut self.eps_low, &mut self.eps_high))
    }
    fn set_other(&mut self, p: Param, v: f64) -> Result<bool> {
        Ok(p == Param::DualClip && {
            self.dual_clip = Some(v);
            true
        })
    }
}

/// Config of [`no_clip`]: it has no hyper-parameter.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct NoClipConfig;

impl Kernel for NoClipConfig {
    fn name(&self) -> &'static str {
        "no-clip"
    }
    fn per_token(&self, inp: &LossInputs) -> Result<LossTerms> {
        no_clip(inp)
    }
    fn describe(&self) -> String {
        String::new()
    }
}
