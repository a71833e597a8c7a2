//! Shared pieces of every objective: input preparation (masking, log-ratio, clamped ratio) and
//! region masks (LN/HP/LP/HN/M, the naming of DGPO arXiv:2603.14389 Table 1). Nothing here is
//! objective-specific; the tensor helpers are in [`crate::ops`].

use candle_core::Tensor;

use super::{LossInputs, Regions};
use crate::error::Result;
use crate::ops::{clamp, RHO_CLAMP};

/// Inputs after masking, with the log-ratio and ratio computed once.
///
/// Padding tokens are replaced by benign values (`logp = logp_old = 0`, `A = 0`) so that no branch
/// of any objective can produce NaN or inf there; the live log-prob keeps its gradient on valid
/// tokens only.
pub struct Prepared {
    /// Live log-prob `x` (differentiable), 0 on padding.
    pub x: Tensor,
    /// `logp_old`, constant, 0 on padding.
    pub old: Tensor,
    /// Advantages, constant, 0 on padding.
    pub adv: Tensor,
    /// Response mask as `u8`.
    pub mask: Tensor,
    /// Response mask as 0/1 in the loss dtype.
    pub mask_f: Tensor,
    /// `rho = x - old` (differentiable, not clamped).
    pub rho: Tensor,
    /// `clamp(rho, -20, 20)` (differentiable inside the clamp).
    pub rho_c: Tensor,
    /// `r = exp(clamp(rho))` (differentiable).
    pub r: Tensor,
    /// Stop-gradient copy `x̄ = sg(x)` (or [`LossInputs::sg_logp`]), 0 on padding.
    pub x_bar: Tensor,
    /// `sg(r)`: the ratio at `x̄` (regions are decided on it).
    pub r_d: Tensor,
    /// `sg(ρ)` (clamped), `x̄ - old`.
    pub rho_d: Tensor,
    /// `A > 0` as `u8` (valid tokens only).
    pub pos: Tensor,
    /// `A < 0` as `u8` (valid tokens only).
    pub neg: Tensor,
}

impl Prepared {
    /// Masks the inputs and computes the log-ratio and ratio.
    pub fn new(inp: &LossInputs) -> Result<Self> {
        let mask = inp.mask.ne(0.0)?;
        let zeros = inp.logp.zeros_like()?;
        let x = mask.where_cond(&inp.logp, &zeros)?;
        let old = mask.where_cond(&inp.logp_old.detach(), &zeros)?;
        let adv = mask.where_cond(&inp.advantages.detach(), &zeros)?;
        let mask_f = mask.to_dtype(inp.logp.dtype())?;
        let rho = (&x - &old)?;
        let rho_c = clamp(&rho, -RHO_CLAMP, RHO_CLAMP)?;
        let r = rho_c.exp()?;
        let (x_bar, rho_d, r_d) = match &inp.sg_logp {
            // Usual case: the stop-gradient copy is the live value, so reuse it.
            None => (x.detach(), rho_c.detach(), r.detach()),
            Some(t) => {
                let x_bar = mask.where_cond(&t.detach(), &zeros.detach())?;
                let rho_d = clamp(&(&x_bar - &old)?, -RHO_CLAMP, RHO_CLAMP)?;
                let r_d = rho_d.exp()?;
                (x_bar, rho_d, r_d)
            }
        };
        let pos = adv.gt(0.0)?;
        let neg = adv.lt(0.0)?;
        Ok(Self { x, old, adv, mask, mask_f, rho, rho_c, r, x_bar, r_d, rho_d, pos, neg })
    }

    /// PPO regions (DGPO arXiv:2603.14389 Table 1) on the ratio with bounds `1 - eps_low`, `1 + eps_high`.
    pub fn ratio_regions(&self, eps_low: f64, eps_high: f64) -> Result<Regions> {
        let below = self.r_d.lt(1.0 - eps_low)?;
        let above = self.r_d.gt(1.0 + eps_high)?;
        Regions::from_sides(&below, &above, &self.pos, &self.neg, &self.mask)
    }
}

impl Prepared {
    /// `r / sg(r) = exp(ρ - sg(ρ))`: value 1 (at `x = x̄`), derivative equal to its value.
    pub fn unit(&self) -> Result<Tensor> {
        Ok((&self.rho_c - &self.rho_d)?.exp()?)
    }
}
