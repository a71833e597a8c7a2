//! CPGD (Liu et al. 2025, arXiv:2505.12504) and its ablations (eqs. 1-2): the clipped
//! log-ratio policy gradient (CPG) with the tight-to-loose schedule, and the clipped-gradient k3
//! policy-drift term used by CPGD, PGD and "GRPO w/ drift".

use super::{one_width_only, Kernel, Param};
use candle_core::{DType, Tensor};

use super::parts::Prepared;
use super::{LossInputs, LossTerms, Regions};
use crate::error::{Error, Result};
use crate::ops::select;

/// Which value the CPG loss reports; the gradient is identical (the paper reports the log-ratio form, siiRL and LightRFT the log-prob one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpgValue {
    /// Paper convention: `-min(ρA, clip(ρ, ln(1-ε), ln(1+ε))A)`, value 0 on-policy.
    LogRatio,
    /// siiRL/LightRFT convention: paper value `- A·logπ_old`.
    LogProb,
}

/// Config of [`cpg`] (the CPG part of CPGD).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpgConfig {
    /// Clip width `ε` in ratio units; bounds are `ln(1-ε_i)`, `ln(1+ε_i)`.
    pub eps: f64,
    /// Tight-to-loose factor `λ ∈ [0,1]`: `ε_i = λε + (1-λ)ε·i/|y|` (1-based `i`); 1 = constant.
    pub lambda: f64,
    /// Value convention.
    pub value: CpgValue,
}

impl Default for CpgConfig {
    fn default() -> Self {
        Self { eps: 0.2, lambda: 1.0, value: CpgValue::LogRatio }
    }
}

/// Config of the CPGD policy-drift term `α·E`, `E = min(sg(r)-1, c)·logπ` (CPGD arXiv:2505.12504 eq. 2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DriftConfig {
    /// Coefficient `α` (official CPGD code 0.01; siiRL 0.001).
    pub coef: f64,
    /// Cap `c` on the gradient coefficient `r - 1` (official code and siiRL: 2.0).
    pub clip: f64,
}

impl Default for DriftConfig {
    fn default() -> Self {
        Self { coef: 0.01, clip: 2.0 }
    }
}

/// Per-token widths `ε_i` of the tight-to-loose schedule as a `[B,T]` tensor (padding gets `ε`).
pub fn eps_schedule(mask: &Tensor, eps: f64, lambda: f64) -> Result<Tensor> {
    let rows = mask.to_dtype(DType::F64)?.to_vec2::<f64>()?;
    let t = rows.first().map_or(0, Vec::len);
    let mut out = Vec::with_capacity(rows.len() * t);
    for row in &rows {
        let len = row.iter().filter(|&&m| m != 0.0).count() as f64;
        let mut i = 0.0;
        for &m in row {
            if m != 0.0 {
                i += 1.0;
                out.push(lambda * eps + (1.0 - lambda) * eps * i / len);
            } else {
                out.push(eps);
            }
        }
    }
    Ok(Tensor::from_vec(out, (rows.len(), t), mask.device())?.to_dtype(mask.dtype())?)
}

/// CPG, the clipped policy gradient of CPGD (Liu et al. 2025, arXiv:2505.12504, eq. 2 without the
/// drift term), eq. 2: `ℓ = -min(ρA, clip(ρ, ln(1-ε_i), ln(1+ε_i))A)`; gradient `-A` on
/// M ∪ LP ∪ HN and 0 on LN ∪ HP — the ratio never multiplies the gradient.
pub fn cpg(inp: &LossInputs, cfg: &CpgConfig) -> Result<LossTerms> {
    if !(cfg.eps > 0.0 && cfg.eps < 1.0 && (0.0..=1.0).contains(&cfg.lambda)) {
        return Err(Error::InvalidConfig(format!(
            "CPG needs 0 < eps < 1 and 0 <= lambda <= 1, got eps={} lambda={}",
            cfg.eps, cfg.lambda
        )));
    }
    let p = Prepared::new(inp)?;
    let (lo, hi) = if cfg.lambda == 1.0 {
        let z = p.x.zeros_like()?.detach();
        (z.affine(0.0, (1.0 - cfg.eps).ln())?, z.affine(0.0, (1.0 + cfg.eps).ln())?)
    } else {
        let e = eps_schedule(&inp.mask, cfg.eps, cfg.lambda)?.to_dtype(p.x.dtype())?;
        (e.neg()?.affine(1.0, 1.0)?.log()?, e.affine(1.0, 1.0)?.log()?)
    };
    let below = p.rho_d.lt(&lo)?;
    let above = p.rho_d.gt(&hi)?;
    let regions = Regions::from_sides(&below, &above, &p.pos, &p.neg, &p.mask)?;
    let unclipped = (&p.rho * &p.adv)?.neg()?;
    let low = (&lo * &p.adv)?.neg()?;
    let high = (&hi * &p.adv)?.neg()?;
    let mut loss = select(&regions.ln, &low, &select(&regions.hp, &high, &unclipped)?)?;
    if cfg.value == CpgValue::LogProb {
        loss = (loss - (&p.adv * &p.old)?)?;
    }
    Ok(LossTerms { loss, regions })
}

/// The CPGD policy-drift term `E = min(sg(r) - 1, c)·logπ` per token (eq. 2): a clipped-gradient
/// k3 estimate of `KL(π_old‖π_θ)`; gradient `min(r-1, c)`, always restoring toward `r = 1`. Its value
/// is not a KL value (log [`crate::kl::drift_k3`] for that). 0 on padding.
pub fn drift(inp: &LossInputs, clip: f64) -> Result<Tensor> {
    let p = Prepared::new(inp)?;
    let coef = p.r_d.affine(1.0, -1.0)?;
    let cap = coef.ones_like()?.affine(0.0, clip)?;
    let coef = select(&coef.gt(clip)?, &cap, &coef)?;
    Ok((coef * &p.x)?)
}

/// CPGD's multi-epoch correction (Liu et al. 2025, arXiv:2505.12504 §6.1): when a rollout batch is
/// reused, the advantage of epoch `m ≥ 2` is weighted per token by the detached, clipped ratio of
/// the previous epoch's policy to the behaviour policy,
/// `A_t ← clip(π_{θ(m-1)}(y_t)/π_old(y_t), 1-ε, 1+ε) · A_t`. `adv`, `logp_prev` and `logp_old` hold
/// one row per response (its valid tokens; longer log-prob rows are cut to the advantage row).
/// Returns the corrected advantages and the mean weight over all tokens.
pub fn epoch_corrected_advantages(
    adv: &[Vec<f64>],
    logp_prev: &[Vec<f32>],
    logp_old: &[&[f32]],
    eps: f64,
) -> Result<(Vec<Vec<f64>>, f64)> {
    if logp_prev.len() != adv.len() || logp_old.len() != adv.len() {
        return Err(Error::InvalidInput(format!(
            "{} advantage rows, {} previous-epoch and {} rollout log-prob rows",
            adv.len(),
            logp_prev.len(),
            logp_old.len()
        )));
    }
    if !(eps > 0.0 && eps < 1.0) {
        return Err(Error::InvalidConfig(format!("the CPGD epoch correction needs 0 < ε < 1, got {eps}")));
    }
    let (mut sum, mut n) = (0.0, 0usize);
    let mut out = Vec::with_capacity(adv.len());
    for (i, row) in adv.iter().enumerate() {
        if logp_prev[i].len() < row.len() || logp_old[i].len() < row.len() {
            return Err(Error::InvalidInput(format!("response {i}: fewer log-probs than advantages")));
        }
        let corrected: Vec<f64> = row
            .iter()
            .enumerate()
            .map(|(t, &a)| {
                let w = (f64::from(logp_prev[i][t]) - f64::from(logp_old[i][t])).exp().clamp(1.0 - eps, 1.0 + eps);
                sum += w;
                n += 1;
                w * a
            })
            .collect();
        out.push(corrected);
    }
    Ok((out, if n == 0 { 1.0 } else { sum / n as f64 }))
}

impl Kernel for CpgConfig {
    fn name(&self) -> &'static str {
        "cpg"
    }
    fn per_token(&self, inp: &LossInputs) -> Result<LossTerms> {
        cpg(inp, self)
    }
    fn describe(&self) -> String {
        format!("eps={} lambda={} value={:?}", self.eps, self.lambda, self.value)
    }
    fn set_other(&mut self, p: Param, v: f64) -> Result<bool> {
        match p {
            Param::ClipEps => self.eps = v,
            Param::CpgLambda => self.lambda = v,
            Param::ClipLow | Param::ClipHigh => return Err(one_width_only(self.name(), p)),
            _ => return Ok(false),
        }
        Ok(true)
    }
}
