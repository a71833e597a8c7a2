//! Per-batch training metrics (the statistics verl and TRL log): clip fractions per region, ratio statistics, the KL
//! between consecutive policies, token entropy; and the differentiable log-prob / entropy of
//! logits at a sampling temperature.

use candle_core::{DType, Tensor, D};

use crate::error::Result;
use crate::objectives::{LossInputs, Regions};
use crate::ops::{clamp, log_softmax_t, RHO_CLAMP};

/// Metrics of one batch; fractions are over valid tokens.
#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    /// Valid tokens.
    pub n_tokens: usize,
    /// LN ∪ HP (verl `pg_clipfrac`).
    pub clipfrac: f64,
    /// LN (`clipfrac/low`).
    pub clipfrac_low: f64,
    /// HP (`clipfrac/high`).
    pub clipfrac_high: f64,
    /// LP.
    pub clipfrac_lp: f64,
    /// HN.
    pub clipfrac_hn: f64,
    /// M (in-band).
    pub frac_in_band: f64,
    /// Dual-clip active.
    pub clipfrac_dual: f64,
    /// The objective's own clip indicator ([`Regions::clipped`]).
    pub clipfrac_objective: f64,
    /// Mean ratio.
    pub ratio_mean: f64,
    /// Min ratio.
    pub ratio_min: f64,
    /// Max ratio.
    pub ratio_max: f64,
    /// `mean(logπ_old - logπ)` (k1 of `KL(π_old‖π_θ)`, verl `ppo_kl`).
    pub ppo_kl: f64,
    /// `mean(r - 1 - ρ)` (k3, ≥ 0).
    pub ppo_kl_k3: f64,
    /// Mean token entropy when given.
    pub entropy: Option<f64>,
}

fn flat(t: &Tensor) -> Result<Vec<f64>> {
    Ok(t.detach().to_dtype(DType::F64)?.flatten_all()?.to_vec1::<f64>()?)
}

/// Metrics from the inputs and the region masks of an objective.
pub fn batch_metrics(inp: &LossInputs, regions: &Regions) -> Result<Metrics> {
    let m = flat(&inp.mask)?;
    let valid: Vec<usize> = (0..m.len()).filter(|&i| m[i] != 0.0).collect();
    let n = valid.len();
    let nf = (n as f64).max(1.0);
    let frac = |t: &Tensor| -> Result<f64> {
        let v = flat(t)?;
        Ok(valid.iter().filter(|&&i| v[i] != 0.0).count() as f64 / nf)
    };
    let rho = clamp(&(inp.logp.detach() - inp.logp_old.detach())?, -RHO_CLAMP, RHO_CLAMP)?;
    let rho = flat(&rho)?;
    let (mut sum_r, mut min_r, mut max_r, mut k1, mut k3) = (0.0, f64::INFINITY, f64::NEG_INFINITY, 0.0, 0.0);
    for &i in &valid {
        let r = rho[i].exp();
        sum_r += r;
        min_r = min_r.min(r);
        max_r = max_r.max(r);
        k1 -= rho[i];
        k3 += r - 1.0 - rho[i];
    }
    if n == 0 {
        (min_r, max_r) = (0.0, 0.0);
    }
    let entropy = match &inp.entropy {
        Some(h) => {
            let h = flat(h)?;
            Some(valid.iter().map(|&i| h[i]).sum::<f64>() / nf)
        }
        None => None,
    };
    let ln = frac(&regions.ln)?;
    let hp = frac(&regions.hp)?;
    Ok(Metrics {
        n_tokens: n,
        clipfrac: ln + hp,
        clipfrac_low: ln,
        clipfrac_high: hp,
        clipfrac_lp: frac(&regions.lp)?,
        clipfrac_hn: frac(&regions.hn)?,
        frac_in_band: frac(&regions.in_band)?,
        clipfrac_dual: frac(&regions.dual_clip)?,
        clipfrac_objective: frac(&regions.clipped)?,
        ratio_mean: sum_r / nf,
        ratio_min: min_r,
        ratio_max: max_r,
        ppo_kl: k1 / nf,
        ppo_kl_k3: k3 / nf,
        entropy,
    })
}

/// `log π(y)` of the sampled tokens: logits `[B,T,V]`, tokens `[B,T]` (u32) → `[B,T]`.
pub fn token_logprobs(logits: &Tensor, tokens: &Tensor, temperature: f64) -> Result<Tensor> {
    let lp = log_softmax_t(logits, temperature)?;
    let idx = tokens.to_dtype(DType::U32)?.unsqueeze(D::Minus1)?.contiguous()?;
    Ok(lp.gather(&idx, D::Minus1)?.squeeze(D::Minus1)?)
}

/// Token entropy `H = -Σ π log π` of `logits / temperature` (`[..,V]` → `[..]`), differentiable.
pub fn token_entropy(logits: &Tensor, temperature: f64) -> Result<Tensor> {
    let lp = log_softmax_t(logits, temperature)?;
    Ok((lp.exp()? * &lp)?.sum(D::Minus1)?.neg()?)
}
