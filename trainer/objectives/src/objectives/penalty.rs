//! Penalty-based trust region: CFPO (Çağatan et al. 2026, arXiv:2601.22801) / SPO (Xie et al., arXiv:2401.16025).

use super::parts::Prepared;
use super::{one_width_only, Kernel, Param};
use super::{LossInputs, LossTerms};
use crate::error::{Error, Result};

/// Config of [`cfpo`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CfpoConfig {
    /// Trust-region width `ε` of the quadratic penalty (same as the clip it replaces).
    pub eps: f64,
}

impl Default for CfpoConfig {
    fn default() -> Self {
        Self { eps: 0.2 }
    }
}

/// CFPO / SPO (Clipping-Free Policy Optimization, Çağatan et al. 2026; Simple Policy Optimization,
/// Xie et al. 2025, arXiv:2401.16025): `ℓ = -[rA - |A|/(2ε)(r-1)²]`,
/// `g = -r[A - |A|(r-1)/ε]`: zero at `r* = 1 + sign(A)ε`, restoring beyond it, never flat.
/// `clipped` marks the restoring side (LN ∪ HP at width ε).
pub fn cfpo(inp: &LossInputs, cfg: &CfpoConfig) -> Result<LossTerms> {
    if !(cfg.eps.is_finite() && cfg.eps > 0.0) {
        return Err(Error::InvalidConfig(format!("CFPO eps must be > 0, got {}", cfg.eps)));
    }
    let p = Prepared::new(inp)?;
    let regions = p.ratio_regions(cfg.eps, cfg.eps)?;
    let gain = (&p.r * &p.adv)?;
    let pen = (p.r.affine(1.0, -1.0)?.sqr()? * p.adv.abs()?)?.affine(1.0 / (2.0 * cfg.eps), 0.0)?;
    let loss = (pen - gain)?;
    Ok(LossTerms { loss, regions })
}

impl Kernel for CfpoConfig {
    fn name(&self) -> &'static str {
        "cfpo"
    }
    fn per_token(&self, inp: &LossInputs) -> Result<LossTerms> {
        cfpo(inp, self)
    }
    fn describe(&self) -> String {
        format!("eps={}", self.eps)
    }
    fn set_other(&mut self, p: Param, v: f64) -> Result<bool> {
        match p {
            Param::ClipEps => self.eps = v,
            Param::ClipLow | Param::ClipHigh => return Err(one_width_only(self.name(), p)),
            _ => return Ok(false),
        }
        Ok(true)
    }
}
