//! REINFORCE family: plain policy gradient without importance ratio (PG, the CPGD ablation "PG",
//! GPG's per-token loss, original RLOO).

use super::parts::Prepared;
use super::Kernel;
use super::{LossInputs, LossTerms};
use crate::error::Result;

/// Which value the PG loss reports; the gradient is `-A` either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PgValue {
    /// `ℓ = -A·logπ` (Williams 1992; GPG; RLOO).
    LogProb,
    /// `ℓ = -A·ρ`, value 0 on-policy (CPGD ablation "PG").
    LogRatio,
}

/// Config of [`pg`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PgConfig {
    /// Value convention (gradient is identical).
    pub value: PgValue,
}

impl Default for PgConfig {
    fn default() -> Self {
        Self { value: PgValue::LogProb }
    }
}

/// PG / REINFORCE (Williams 1992, Machine Learning 8:229-256): `ℓ = -A·logπ` (or `-A·ρ`), `g = -A`, F = 1 in every
/// region. No ratio, no clip: nothing bounds an off-policy update.
pub fn pg(inp: &LossInputs, cfg: &PgConfig) -> Result<LossTerms> {
    let p = Prepared::new(inp)?;
    let live = match cfg.value {
        PgValue::LogProb => p.x.clone(),
        PgValue::LogRatio => p.rho.clone(),
    };
    let loss = (&live * &p.adv)?.neg()?;
    let mut regions = p.ratio_regions(0.2, 0.2)?;
    regions.clipped = regions.clipped.zeros_like()?;
    Ok(LossTerms { loss, regions })
}

impl Kernel for PgConfig {
    fn name(&self) -> &'static str {
        "pg"
    }
    fn per_token(&self, inp: &LossInputs) -> Result<LossTerms> {
        pg(inp, self)
    }
    fn describe(&self) -> String {
        format!("value={:?}", self.value)
    }
}
