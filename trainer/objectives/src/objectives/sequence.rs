//! Sequence-level ratios: GSPO (sequence and token forms) and GMPO (GSPO arXiv:2507.18071; GMPO arXiv:2507.20673). Their
//! per-token matrix holds the sequence loss `ℓ_i` on every valid token, so the aggregation must be
//! seq-mean-token-mean (`(1/B)·Σ_i ℓ_i`); the registry enforces that.

use super::Kernel;
use candle_core::Tensor;

use super::parts::Prepared;
use super::ppo_clip::check_widths;
use super::{LossInputs, LossTerms, Regions};
use crate::error::Result;
use crate::ops::{and, clamp, full_like, or, row_mean, select, RHO_CLAMP};

/// Cap on the log of the sequence ratio (verl's GSPO clamps `log s <= 10`).
const LOG_S_MAX: f64 = 10.0;

/// Config of [`gspo`] and [`gspo_token`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GspoConfig {
    /// Lower width in units of the length-normalised sequence ratio.
    pub eps_low: f64,
    /// Upper width.
    pub eps_high: f64,
}

impl Default for GspoConfig {
    fn default() -> Self {
        Self { eps_low: 3e-4, eps_high: 4e-4 }
    }
}

/// Per-sequence pieces shared by both GSPO forms.
struct SeqRatio {
    /// `s_i` as `[B,1]` (differentiable through the mean log-ratio inside the clamp).
    s: Tensor,
    /// `sg(s_i)` as `[B,1]` (from `x̄`).
    s_d: Tensor,
    /// Sequences whose mean log-ratio (at `x̄`) lies outside the clamp `[-20, 10]`, as `[B,1]`
    /// `u8`; `None` when there is none (the common case).
    clamped: Option<Tensor>,
    /// Sequence advantage `A_i = mean_t A_{i,t}` as `[B,1]`.
    a: Tensor,
    /// Sequence regions broadcast to `[B,T]`.
    regions: Regions,
}

fn seq_ratio(p: &Prepared, cfg: &GspoConfig) -> Result<SeqRatio> {
    check_widths(cfg.eps_low, cfg.eps_high)?;
    let clamped_exp = |log_s: &Tensor| -> Result<Tensor> { Ok(clamp(log_s, -RHO_CLAMP, LOG_S_MAX)?.exp()?) };
    let s = clamped_exp(&row_mean(&p.rho, &p.mask_f)?)?;
    let log_s_d = row_mean(&(&p.x_bar - &p.old)?, &p.mask_f)?;
    let s_d = clamped_exp(&log_s_d)?;
    let outside = or(&log_s_d.gt(LOG_S_MAX)?, &log_s_d.lt(-RHO_CLAMP)?)?;
    let clamped = if outside.max_all()?.to_scalar::<u8>()? > 0 { Some(outside) } else { None };
    let a = row_mean(&p.adv, &p.mask_f)?;
    let shape = p.x.shape().clone();
    let s_full = s_d.broadcast_as(&shape)?.contiguous()?;
    let below = s_full.lt(1.0 - cfg.eps_low)?;
    let above = s_full.gt(1.0 + cfg.eps_high)?;
    let a_full = a.broadcast_as(&shape)?.contiguous()?;
    let pos = and(&a_full.gt(0.0)?, &p.mask)?;
    let neg = and(&a_full.lt(0.0)?, &p.mask)?;
    let regions = Regions::from_sides(&below, &above, &pos, &neg, &p.mask)?;
    Ok(SeqRatio { s, s_d, clamped, a, regions })
}

/// GSPO, sequence form (Zheng et al. 2025, arXiv:2507.18071):
/// `s_i = exp(mean_t ρ_{i,t})`, `ℓ_i = -min(s_i A_i, clip(s_i, 1-ε_l, 1+ε_h) A_i)`;
/// `∂ℓ_i/∂logπ_{i,t} = -A_i s_i/|o_i|` unless the sequence is clipped (then 0 for all its tokens).
/// Returns `ℓ_i` on every valid token (aggregate with seq-mean-token-mean).
pub fn gspo(inp: &LossInputs, cfg: &GspoConfig) -> Result<LossTerms> {
    let p = Prepared::new(inp)?;
    let sr = seq_ratio(&p, cfg)?;
    let s_d = &sr.s_d;
    let below = and(&s_d.lt(1.0 - cfg.eps_low)?, &sr.a.lt(0.0)?)?;
    let above = and(&s_d.gt(1.0 + cfg.eps_high)?, &sr.a.gt(0.0)?)?;
    let unclipped = (&sr.s * &sr.a)?.neg()?;
    let low = sr.a.affine(-(1.0 - cfg.eps_low), 0.0)?;
    let high = sr.a.affine(-(1.0 + cfg.eps_high), 0.0)?;
    let l_seq = select(&below, &low, &select(&above, &high, &unclipped)?)?;
    let loss = l_seq.broadcast_as(p.x.shape())?.mul(&p.mask_f)?;
    let mut regions = sr.regions;
    regions.clipped = or(&regions.ln, &regions.hp)?;
    Ok(LossTerms { loss, regions })
}

/// GSPO-token (verl `gspo`, TRL `gspo_token`; GSPO arXiv:2507.18071): `s_{i,t} = sg(s_i)·exp(logπ - sg(logπ))`
/// (value `s_i`, derivative `s_i`), then PPO-clip per token with `A_{i,t}` and the sequence's
/// clip decision. Same gradient as [`gspo`] under seq-mean-token-mean when `A_{i,t} = A_i`.
///
/// Where the mean log-ratio is clamped (above 10, as verl clamps `log s_{i,t}`, or below -20,
/// the crate's clamp of every log-ratio) the value is the clamped `s_i` and no gradient flows
/// through it, as in verl (`torch.clamp` passes none outside its bounds). TRL's `gspo_token`
/// does not clamp: there its value is the unclamped `s_i` and its gradient `s_i`.
pub fn gspo_token(inp: &LossInputs, cfg: &GspoConfig) -> Result<LossTerms> {
    let p = Prepared::new(inp)?;
    let sr = seq_ratio(&p, cfg)?;
    let live = sr.s_d.broadcast_mul(&(&p.x - &p.x_bar)?.exp()?)?;
    let s_tok = match &sr.clamped {
        Some(rows) => {
            let shape = p.x.shape();
            select(&rows.broadcast_as(shape)?.contiguous()?, &sr.s_d.broadcast_as(shape)?.contiguous()?, &live)?
        }
        None => live,
    };
    // Clip decision per token uses the token's advantage sign with the sequence ratio.
    let s_d = sr.s_d.broadcast_as(p.x.shape())?.contiguous()?;
    let below = s_d.lt(1.0 - cfg.eps_low)?;
    let above = s_d.gt(1.0 + cfg.eps_high)?;
    let regions = Regions::from_sides(&below, &above, &p.pos, &p.neg, &p.mask)?;
    let unclipped = (&s_tok * &p.adv)?.neg()?;
    let low = p.adv.affine(-(1.0 - cfg.eps_low), 0.0)?;
    let high = p.adv.affine(-(1.0 + cfg.eps_high), 0.0)?;
    let loss = select(&regions.ln, &low, &select(&regions.hp, &high, &unclipped)?)?;
    Ok(LossTerms { loss, regions })
}

/// Config of [`gmpo`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GmpoConfig {
    /// Lower clip bound in **log space** (`ρ >= -ε_l`).
    pub log_eps_low: f64,
    /// Upper clip bound in log space (`ρ <= ε_h`).
    pub log_eps_high: f64,
}

impl Default for GmpoConfig {
    fn default() -> Self {
        Self { log_eps_low: 0.4, log_eps_high: 0.4 }
    }
}

/// GMPO (Geometric-Mean Policy Optimization, Zhao et al. 2025, arXiv:2507.20673; verl `geo_mean`),
/// (GMPO arXiv:2507.20673): `ρ̃_t = sign(A)·min(sign(A)ρ_t, sign(A)·clip(ρ_t, -ε_l, ε_h))` (log space),
/// `ℓ_i = -A_i·exp(mean_t ρ̃_t)`; gradient `-A_i r̄_i/|o_i|` on unclipped tokens, 0 on clipped.
/// Returns `ℓ_i` on every valid token (aggregate with seq-mean-token-mean).
pub fn gmpo(inp: &LossInputs, cfg: &GmpoConfig) -> Result<LossTerms> {
    check_widths(cfg.log_eps_low, cfg.log_eps_high)?;
    let p = Prepared::new(inp)?;
    let a = row_mean(&p.adv, &p.mask_f)?;
    let shape = p.x.shape().clone();
    let a_full = a.broadcast_as(&shape)?.contiguous()?;
    let pos = and(&a_full.gt(0.0)?, &p.mask)?;
    let neg = and(&a_full.lt(0.0)?, &p.mask)?;
    let below = p.rho_d.lt(-cfg.log_eps_low)?;
    let above = p.rho_d.gt(cfg.log_eps_high)?;
    let mut regions = Regions::from_sides(&below, &above, &pos, &neg, &p.mask)?;
    let clip_hi = and(&above, &pos)?;
    let clip_lo = and(&below, &neg)?;
    let rho_t = select(
        &clip_hi,
        &full_like(&p.rho_c, cfg.log_eps_high)?,
        &select(&clip_lo, &full_like(&p.rho_c, -cfg.log_eps_low)?, &p.rho_c)?,
    )?;
    let mean = row_mean(&rho_t, &p.mask_f)?;
    let r_bar = clamp(&mean, -RHO_CLAMP, RHO_CLAMP)?.exp()?;
    let l_seq = (r_bar * &a)?.neg()?;
    let loss = l_seq.broadcast_as(&shape)?.mul(&p.mask_f)?;
    regions.clipped = or(&clip_hi, &clip_lo)?;
    Ok(LossTerms { loss, regions })
}

impl Kernel for GspoConfig {
    fn name(&self) -> &'static str {
        "gspo"
    }
    fn per_token(&self, inp: &LossInputs) -> Result<LossTerms> {
        gspo(inp, self)
    }
    fn describe(&self) -> String {
        format!("eps=({}, {})", self.eps_low, self.eps_high)
    }
    fn is_sequence_level(&self) -> bool {
        true
    }
    fn widths(&mut self) -> Option<(&mut f64, &mut f64)> {
        Some((&mut self.eps_low, &mut self.eps_high))
    }
}

/// Config of [`gspo_token`]: GSPO's widths, on the token-level form.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GspoTokenConfig(pub GspoConfig);

impl Kernel for GspoTokenConfig {
    fn name(&self) -> &'static str {
        "gspo-token"
    }
    fn per_token(&self, inp: &LossInputs) -> Result<LossTerms> {
        gspo_token(inp, &self.0)
    }
    fn describe(&self) -> String {
        self.0.describe()
    }
    fn widths(&mut self) -> Option<(&mut f64, &mut f64)> {
        self.0.widths()
    }
}

impl Kernel for GmpoConfig {
    fn name(&self) -> &'static str {
        "gmpo"
    }
    fn per_token(&self, inp: &LossInputs) -> Result<LossTerms> {
        gmpo(inp, self)
    }
    fn describe(&self) -> String {
        format!("log_eps=({}, {})", self.log_eps_low, self.log_eps_high)
    }
    fn is_sequence_level(&self) -> bool {
        true
    }
}
