//! Covariance-based entropy control (Cui et al. 2025, arXiv:2505.22617): Clip-Cov and
//! KL-Cov select tokens by the centred covariance `(A - Ā)(logπ - mean logπ)` (detached, over the
//! valid tokens of the batch) and damp their update.

use super::Kernel;
use candle_core::{DType, Tensor};

use super::parts::Prepared;
use super::ppo_clip::{ppo_clip, PpoClipConfig};
use super::{LossInputs, LossTerms};
use crate::error::{Error, Result};
use crate::ops::{and, or, select};

/// Config of [`clip_cov`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClipCovConfig {
    /// PPO-clip widths of the underlying loss.
    pub eps_low: f64,
    /// Upper PPO-clip width.
    pub eps_high: f64,
    /// Fraction of valid tokens to detach at most (`max(1, ⌊ratio·N⌋)`).
    pub ratio: f64,
    /// Lower covariance bound (exclusive).
    pub cov_lb: f64,
    /// Upper covariance bound (exclusive).
    pub cov_ub: f64,
    /// Seed of the random subset (verl uses `randperm`; vary it per step for fresh draws).
    pub seed: u64,
}

impl Default for ClipCovConfig {
    fn default() -> Self {
        Self { eps_low: 0.2, eps_high: 0.2, ratio: 2e-4, cov_lb: 1.0, cov_ub: 5.0, seed: 0 }
    }
}

/// Config of [`kl_cov`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KlCovConfig {
    /// Fraction of valid tokens (top covariance) that get the `|ρ|` penalty.
    pub ratio: f64,
    /// Penalty coefficient `κ` (verl yaml 0.1; code fallback 1.0).
    pub coef: f64,
}

impl Default for KlCovConfig {
    fn default() -> Self {
        Self { ratio: 2e-4, coef: 0.1 }
    }
}

/// Centred covariances of the valid tokens, flattened row-major; `None` on padding.
pub fn centred_cov(adv: &Tensor, logp: &Tensor, mask: &Tensor) -> Result<Vec<Option<f64>>> {
    let a = adv.detach().to_dtype(DType::F64)?.flatten_all()?.to_vec1::<f64>()?;
    let x = logp.detach().to_dtype(DType::F64)?.flatten_all()?.to_vec1::<f64>()?;
    let m = mask.to_dtype(DType::F64)?.flatten_all()?.to_vec1::<f64>()?;
    let valid: Vec<usize> = (0..m.len()).filter(|&i| m[i] != 0.0).collect();
    if valid.is_empty() {
        return Ok(vec![None; m.len()]);
    }
    let n = valid.len() as f64;
    let a_mean = valid.iter().map(|&i| a[i]).sum::<f64>() / n;
    let x_mean = valid.iter().map(|&i| x[i]).sum::<f64>() / n;
    Ok((0..m.len()).map(|i| (m[i] != 0.0).then(|| (a[i] - a_mean) * (x[i] - x_mean))).collect())
}

fn select_count(ratio: f64, n_valid: usize) -> Result<usize> {
    if !(ratio.is_finite() && (0.0..=1.0).contains(&ratio)) {
        return Err(Error::InvalidConfig(format!("covariance ratio must be in [0,1], got {ratio}")));
    }
    Ok(((ratio * n_valid as f64).floor() as usize).max(1))
}

/// A 0/1 `u8` tensor shaped like `like` with ones at `picked` (flat indices).
fn picked_mask(like: &Tensor, picked: &[usize]) -> Result<Tensor> {
    let mut v = vec![0u8; like.elem_count()];
    for &i in picked {
        v[i] = 1;
    }
    Ok(Tensor::from_vec(v, like.shape(), like.device())?)
}

/// Clip-Cov (Cui et al. 2025, arXiv:2505.22617; verl `clip_cov`): PPO-clip, plus a random subset of
/// at most `max(1, ⌊ratio·N⌋)` not-clipped tokens whose covariance lies in `(lb, ub)` get loss and
/// gradient 0. The subset is drawn with `seed`. `clipped` = LN ∪ HP ∪ the detached tokens.
pub fn clip_cov(inp: &LossInputs, cfg: &ClipCovConfig) -> Result<LossTerms> {
    let base = ppo_clip(inp, &PpoClipConfig { eps_low: cfg.eps_low, eps_high: cfg.eps_high, dual_clip: None })?;
    let p = Prepared::new(inp)?;
    let cov = centred_cov(&p.adv, &p.x_bar, &p.mask)?;
    let hard = base.regions.clipped.flatten_all()?.to_vec1::<u8>()?;
    let n_valid = cov.iter().filter(|c| c.is_some()).count();
    let k = select_count(cfg.ratio, n_valid)?;
    let mut cand: Vec<usize> = cov
        .iter()
        .enumerate()
        .filter_map(|(i, c)| match c {
            Some(c) if hard[i] == 0 && *c > cfg.cov_lb && *c < cfg.cov_ub => Some(i),
            _ => None,
        })
        .collect();
    shuffle(&mut cand, cfg.seed);
    cand.truncate(k);
    let picked = picked_mask(&p.x, &cand)?;
    let zero = p.x.zeros_like()?.detach();
    let loss = select(&picked, &zero, &base.loss)?;
    let mut regions = base.regions;
    regions.clipped = or(&regions.clipped, &picked)?;
    Ok(LossTerms { loss, regions })
}

/// KL-Cov (Cui et al. 2025, arXiv:2505.22617; verl `kl_cov`): no ratio clip; `ℓ = -rA`, and the
/// top `max(1, ⌊ratio·N⌋)` tokens by covariance get `ℓ = -rA + κ|ρ|` (`g = -rA + κ·sign(ρ)`).
/// Regions are reported at ε = 0.2 for monitoring; `clipped` = the penalised tokens.
pub fn kl_cov(inp: &LossInputs, cfg: &KlCovConfig) -> Result<LossTerms> {
    let p = Prepared::new(inp)?;
    let cov = centred_cov(&p.adv, &p.x_bar, &p.mask)?;
    let mut valid: Vec<(usize, f64)> = cov.iter().enumerate().filter_map(|(i, c)| c.map(|c| (i, c))).collect();
    let k = if valid.is_empty() { 0 } else { select_count(cfg.ratio, valid.len())? };
    valid.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let picked: Vec<usize> = valid.iter().take(k).map(|&(i, _)| i).collect();
    let picked = and(&picked_mask(&p.x, &picked)?, &p.mask)?;
    let base = (&p.r * &p.adv)?.neg()?;
    // |ρ| with derivative sign(sg(ρ)) and 0 at ρ = 0 (PyTorch's abs; candle's abs gives +1 there).
    let zero = p.rho.zeros_like()?.detach();
    let abs_rho = select(&p.rho_d.gt(0.0)?, &p.rho, &select(&p.rho_d.lt(0.0)?, &p.rho.neg()?, &zero)?)?;
    let pen = (&base + abs_rho.affine(cfg.coef, 0.0)?)?;
    let loss = select(&picked, &pen, &base)?;
    let mut regions = p.ratio_regions(0.2, 0.2)?;
    regions.clipped = picked;
    Ok(LossTerms { loss, regions })
}

/// Deterministic Fisher-Yates shuffle with a xorshift64* generator.
fn shuffle(v: &mut [usize], seed: u64) {
    let mut state = seed ^ 0x9E37_79B9_7F4A_7C15;
    if state == 0 {
        state = 1;
    }
    for i in (1..v.len()).rev() {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let r = state.wrapping_mul(0x2545_F491_4F6C_DD1D);
        let j = (r % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
}

impl Kernel for ClipCovConfig {
    fn name(&self) -> &'static str {
        "clip-cov"
    }
    fn per_token(&self, inp: &LossInputs) -> Result<LossTerms> {
        clip_cov(inp, self)
    }
    fn describe(&self) -> String {
        let (lo, hi, r, cl, cu) = (self.eps_low, self.eps_high, self.ratio, self.cov_lb, self.cov_ub);
        format!("eps=({lo}, {hi}) ratio={r} cov=({cl}, {cu})")
    }
    fn widths(&mut self) -> Option<(&mut f64, &mut f64)> {
        Some((&mut self.eps_low, &mut self.eps_high))
    }
}

impl Kernel for KlCovConfig {
    fn name(&self) -> &'static str {
        "kl-cov"
    }
    fn per_token(&self, inp: &LossInputs) -> Result<LossTerms> {
        kl_cov(inp, self)
    }
    fn describe(&self) -> String {
        format!("ratio={} coef={}", self.ratio, self.coef)
    }
}
