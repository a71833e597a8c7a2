//! Soft clipping: objectives that keep (reshaped, bounded) gradients beyond the PPO band —
//! CISPO, GPPO, CE-GPPO, ASPO, DGPO and SAPO (arXiv:2506.13585, 2508.07629, 2509.20712, 2510.06062, 2603.14389, 2511.20347).

use super::parts::Prepared;
use super::ppo_clip::{check_dual, check_widths};
use super::{describe_opt, Kernel, Param};
use super::{LossInputs, LossTerms};
use crate::error::{Error, Result};
use crate::ops::{and, full_like, or, select, sigmoid};

/// Config of [`cispo`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CispoConfig {
    /// Lower IS-weight width: floor `1 - ε_l`; `None` (MiniMax default) or `ε_l >= 1` = no floor.
    pub eps_low: Option<f64>,
    /// Upper width: cap `1 + ε_h` (verl example 0.2).
    pub eps_high: f64,
    /// Absolute cap `r̂ = min(r, cap)` replacing `1 + ε_h` (TRL form, ScaleRL 5.0); `None` = off.
    pub abs_cap: Option<f64>,
}

impl Default for CispoConfig {
    fn default() -> Self {
        Self { eps_low: None, eps_high: 0.2, abs_cap: None }
    }
}

/// CISPO (MiniMax-M1, Chen et al. 2025, arXiv:2506.13585):
/// `ℓ = -sg(r̂)·A·logπ`, `r̂ = clip(r, 1-ε_l, 1+ε_h)` (or `min(r, cap)`); `g = -r̂A` on every
/// token — no token is dropped. `clipped` marks `r̂ ≠ r`.
pub fn cispo(inp: &LossInputs, cfg: &CispoConfig) -> Result<LossTerms> {
    check_widths(cfg.eps_low.unwrap_or(0.0), cfg.eps_high)?;
    let hi = match cfg.abs_cap {
        Some(c) if c.is_finite() && c > 0.0 => c,
        Some(c) => return Err(Error::InvalidConfig(format!("CISPO abs_cap must be > 0, got {c}"))),
        None => 1.0 + cfg.eps_high,
    };
    let lo = cfg.eps_low.map_or(0.0, |e| (1.0 - e).max(0.0));
    let p = Prepared::new(inp)?;
    let below = p.r_d.lt(lo)?;
    let above = p.r_d.gt(hi)?;
    let mut regions = super::Regions::from_sides(&below, &above, &p.pos, &p.neg, &p.mask)?;
    regions.clipped = and(&or(&below, &above)?, &p.mask)?;
    let w = p.r_d.clamp(lo, hi)?;
    let loss = (w * &p.adv)?.mul(&p.x)?.neg()?;
    Ok(LossTerms { loss, regions })
}

/// Config of [`gppo`] (CE-GPPO with `β1 = β2 = 1` is GPPO).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GppoConfig {
    /// Lower width `ε_l`.
    pub eps_low: f64,
    /// Upper width `ε_h` (Clip-Higher 0.28 is a documented option).
    pub eps_high: f64,
    /// Scale `β1` of the LN gradient (GPPO 1; CE-GPPO 0.75).
    pub beta1: f64,
    /// Scale `β2` of the HP gradient (1).
    pub beta2: f64,
    /// Hard dual-clip `c` for `A < 0` (recipes 10); `None` = off.
    pub dual_clip: Option<f64>,
}

impl Default for GppoConfig {
    fn default() -> Self {
        Self { eps_low: 0.2, eps_high: 0.2, beta1: 1.0, beta2: 1.0, dual_clip: None }
    }
}

impl GppoConfig {
    /// CE-GPPO defaults (Su et al. 2025b): `β1 = 0.75`, `β2 = 1`, dual-clip `c = 10` (recipes).
    pub fn ce_gppo() -> Self {
        Self { beta1: 0.75, dual_clip: Some(10.0), ..Self::default() }
    }
}

/// GPPO (Klear-Reasoner, Su et al. 2025a, arXiv:2508.07629) and CE-GPPO (Su et al. 2025b,
/// arXiv:2509.20712): forward value = PPO-clip; the clipped branches carry
/// `r/sg(r)` so LN keeps gradient `-β1(1-ε_l)A` and HP `-β2(1+ε_h)A`; elsewhere `-rA`;
/// optional hard dual-clip for `A < 0`.
pub fn gppo(inp: &LossInputs, cfg: &GppoConfig) -> Result<LossTerms> {
    check_widths(cfg.eps_low, cfg.eps_high)?;
    check_dual(cfg.dual_clip)?;
    let p = Prepared::new(inp)?;
    let mut regions = p.ratio_regions(cfg.eps_low, cfg.eps_high)?;
    let u = p.unit()?;
    let ua = (&u * &p.adv)?;
    let low = ua.affine(-cfg.beta1 * (1.0 - cfg.eps_low), 0.0)?;
    let high = ua.affine(-cfg.beta2 * (1.0 + cfg.eps_high), 0.0)?;
    let unclipped = (&p.r * &p.adv)?.neg()?;
    let mut loss = select(&regions.ln, &low, &select(&regions.hp, &high, &unclipped)?)?;
    if let Some(c) = cfg.dual_clip {
        loss = super::ppo_clip::apply_dual_clip(&p, c, loss, &mut regions)?;
    }
    Ok(LossTerms { loss, regions })
}

/// Config of [`aspo`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AspoConfig {
    /// Lower width `ε_l`.
    pub eps_low: f64,
    /// Upper width `ε_h`.
    pub eps_high: f64,
    /// Soft dual-clip weight for `A < 0`, active when `r > c_neg`.
    pub c_neg: f64,
    /// Soft dual-clip weight for `A > 0`, active when `1/r > c_pos`.
    pub c_pos: f64,
}

impl Default for AspoConfig {
    fn default() -> Self {
        Self { eps_low: 0.2, eps_high: 0.2, c_neg: 3.0, c_pos: 3.0 }
    }
}

/// ASPO (Archer2.0, Wang et al. 2025, arXiv:2510.06062), following
/// `compute_policy_loss_archer`: for `A > 0` the ratio is flipped (`g = -A/r` in band/LP, 0 on HP,
/// `-A·c_pos` when `r < 1/c_pos`); for `A < 0` PPO-clip (`-Ar`, 0 on LN) with the soft dual-clip
/// `g = -A·c_neg` when `r > c_neg`. The entropy-dependent widths of Archer2.0 are not included.
pub fn aspo(inp: &LossInputs, cfg: &AspoConfig) -> Result<LossTerms> {
    check_widths(cfg.eps_low, cfg.eps_high)?;
    if !(cfg.c_neg > 1.0 && cfg.c_pos > 1.0) {
        return Err(Error::InvalidConfig(format!("ASPO needs c_neg, c_pos > 1, got {} {}", cfg.c_neg, cfg.c_pos)));
    }
    let p = Prepared::new(inp)?;
    let mut regions = p.ratio_regions(cfg.eps_low, cfg.eps_high)?;
    let dual_neg = and(&p.neg, &p.r_d.gt(cfg.c_neg)?)?;
    let dual_pos = and(&p.pos, &p.r_d.lt(1.0 / cfg.c_pos)?)?;
    // A < 0 branch.
    let neg_soft = (&p.adv * &p.x)?.affine(-cfg.c_neg, 0.0)?;
    let neg_ln = p.adv.affine(-(1.0 - cfg.eps_low), 0.0)?;
    let neg_in = (&p.r * &p.adv)?.neg()?;
    let neg_loss = select(&dual_neg, &neg_soft, &select(&regions.ln, &neg_ln, &neg_in)?)?;
    // A > 0 branch (flipped ratio).
    let pos_soft = (&p.adv * &p.x)?.affine(-cfg.c_pos, 0.0)?;
    let pos_hp = p.adv.affine(-1.0 / (1.0 + cfg.eps_high), 0.0)?;
    let pos_in = (p.unit()?.div(&p.r_d)? * &p.adv)?.neg()?;
    let pos_loss = select(&dual_pos, &pos_soft, &select(&regions.hp, &pos_hp, &pos_in)?)?;
    let zero = p.x.zeros_like()?.detach();
    let loss = select(&p.neg, &neg_loss, &select(&p.pos, &pos_loss, &zero)?)?;
    regions.dual_clip = or(&dual_neg, &dual_pos)?;
    regions.clipped = or(&regions.clipped, &regions.dual_clip)?;
    Ok(LossTerms { loss, regions })
}

/// Config of [`dgpo`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DgpoConfig {
    /// Lower width `ε_l`.
    pub eps_low: f64,
    /// Upper width `ε_h`.
    pub eps_high: f64,
    /// Decay power `n >= 0` on the left boundary (LN): `F = r^{n+1}/(1-ε_l)^n`.
    pub n: f64,
    /// Opening power `m > 0` on the right boundary (HP): `F = (1+ε_h)^{1/m} r^{1-1/m}`.
    pub m: f64,
}

impl Default for DgpoConfig {
    fn default() -> Self {
        Self { eps_low: 0.2, eps_high: 0.2, n: 1.0, m: 2.0 }
    }
}

impl DgpoConfig {
    /// The probability-space constants of DGPO eq. 10 for one token with old probability
    /// `pi_old`: `(C_left, C_right) = ((1-ε_l)^{-n} / π_old^{n+1}, (1+ε_h)^{1/m} π_old^{1/m-1})`.
    pub fn constants(&self, pi_old: f64) -> (f64, f64) {
        let c_left = (1.0 - self.eps_low).powf(-self.n) / pi_old.powf(self.n + 1.0);
        let c_right = (1.0 + self.eps_high).powf(1.0 / self.m) * pi_old.powf(1.0 / self.m - 1.0);
        (c_left, c_right)
    }
}

/// DGPO (Decoupled Gradient Policy Optimization, Fu et al. 2026, arXiv:2603.14389), eq. 10,
/// ratio form of `ratio_mode=dgpo`: `ℓ = -A·v` with LN `v = exp(ρ + n·sg(ρ))/(1-ε_l)^n`
/// (value `r^{n+1}/(1-ε_l)^n`), HP `v = exp(ρ + ln(1+ε_h)/m - sg(ρ)/m)` (value
/// `(1+ε_h)^{1/m} r^{1-1/m}`), elsewhere `v = r`; `g = -A·v`, continuous at both boundaries.
/// Equivalently the probability-gradient weight `W = C_left·sg(π)^n` (LN), `C_right·sg(π)^{-1/m}`
/// (HP), `1/π_old` otherwise ([`DgpoConfig::constants`]). No dual-clip.
pub fn dgpo(inp: &LossInputs, cfg: &DgpoConfig) -> Result<LossTerms> {
    check_widths(cfg.eps_low, cfg.eps_high)?;
    if !(cfg.eps_low < 1.0 && cfg.n >= 0.0 && cfg.m > 0.0 && cfg.n.is_finite() && cfg.m.is_finite()) {
        return Err(Error::InvalidConfig(format!(
            "DGPO needs eps_low < 1, n >= 0, m > 0; got eps_low={} n={} m={}",
            cfg.eps_low, cfg.n, cfg.m
        )));
    }
    let p = Prepared::new(inp)?;
    let regions = p.ratio_regions(cfg.eps_low, cfg.eps_high)?;
    let zero = p.rho_c.zeros_like()?.detach();
    // Each branch sees the log-ratio only on its own tokens (0 elsewhere), so no branch can
    // overflow where it is not selected (its gradient would be 0·inf there).
    let rho_ln = select(&regions.ln, &p.rho_c, &zero)?;
    let bar_ln = select(&regions.ln, &p.rho_d, &zero)?;
    let v_ln = (&rho_ln + bar_ln.affine(cfg.n, 0.0)?)?.exp()?.affine((1.0 - cfg.eps_low).powf(-cfg.n), 0.0)?;
    let rho_hp = select(&regions.hp, &p.rho_c, &zero)?;
    let bar_hp = select(&regions.hp, &p.rho_d, &zero)?;
    let v_hp = (&rho_hp - bar_hp.affine(1.0 / cfg.m, 0.0)?)?.affine(1.0, (1.0 + cfg.eps_high).ln() / cfg.m)?.exp()?;
    let v = select(&regions.ln, &v_ln, &select(&regions.hp, &v_hp, &p.r)?)?;
    let loss = (v * &p.adv)?.neg()?;
    Ok(LossTerms { loss, regions })
}

/// Config of [`sapo`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SapoConfig {
    /// Gate temperature for `A > 0`.
    pub tau_pos: f64,
    /// Gate temperature for `A <= 0`.
    pub tau_neg: f64,
}

impl Default for SapoConfig {
    fn default() -> Self {
        Self { tau_pos: 1.0, tau_neg: 1.05 }
    }
}

/// SAPO (Soft Adaptive Policy Optimization, Gao et al. 2025, arXiv:2511.20347):
/// `ℓ = -A·(4/τ)σ(τ(r-1))`, `τ = τ+` if `A > 0` else `τ-`; `g = -A·4σ(1-σ)r` (a smooth gate,
/// `-A` at `r = 1`). Regions are reported at ε = 0.2 for monitoring only.
pub fn sapo(inp: &LossInputs, cfg: &SapoConfig) -> Result<LossTerms> {
    if !(cfg.tau_pos > 0.0 && cfg.tau_neg > 0.0) {
        return Err(Error::InvalidConfig(format!(
            "SAPO temperatures must be > 0, got {} {}",
            cfg.tau_pos, cfg.tau_neg
        )));
    }
    let p = Prepared::new(inp)?;
    let mut regions = p.ratio_regions(0.2, 0.2)?;
    regions.clipped = regions.clipped.zeros_like()?;
    let tau = select(&p.pos, &full_like(&p.r_d, cfg.tau_pos)?, &full_like(&p.r_d, cfg.tau_neg)?)?;
    let z = (p.r.affine(1.0, -1.0)? * &tau)?;
    let f = sigmoid(&z)?.affine(4.0, 0.0)?.div(&tau)?;
    let loss = (f * &p.adv)?.neg()?;
    Ok(LossTerms { loss, regions })
}

impl Kernel for DgpoConfig {
    fn name(&self) -> &'static str {
        "dgpo"
    }
    fn per_token(&self, inp: &LossInputs) -> Result<LossTerms> {
        dgpo(inp, self)
    }
    fn describe(&self) -> String {
        format!("eps=({}, {}) n={} m={}", self.eps_low, self.eps_high, self.n, self.m)
    }
    fn widths(&mut self) -> Option<(&mut f64, &mut f64)> {
        Some((&mut self.eps_low, &mut self.eps_high))
    }
    fn set_other(&mut self, p: Param, v: f64) -> Result<bool> {
        match p {
            Param::DgpoN => self.n = v,
            Param::DgpoM => self.m = v,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

impl Kernel for CispoConfig {
    fn name(&self) -> &'static str {
        "cispo"
    }
    fn per_token(&self, inp: &LossInputs) -> Result<LossTerms> {
        cispo(inp, self)
    }
    fn describe(&self) -> String {
        let (lo, cap) = (describe_opt(self.eps_low), describe_opt(self.abs_cap));
        format!("eps_low={lo} eps_high={} abs_cap={cap}", self.eps_high)
    }
    /// CISPO's lower width is optional (no floor by default), so it sets its widths itself.
    fn set_other(&mut self, p: Param, v: f64) -> Result<bool> {
        match p {
            Param::ClipEps => (self.eps_low, self.eps_high) = (Some(v), v),
            Param::ClipLow => self.eps_low = Some(v),
            Param::ClipHigh => self.eps_high = v,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

impl Kernel for GppoConfig {
    fn name(&self) -> &'static str {
        "gppo"
    }
    fn per_token(&self, inp: &LossInputs) -> Result<LossTerms> {
        gppo(inp, self)
    }
    fn describe(&self) -> String {
        let dual = describe_opt(self.dual_clip);
        format!("eps=({}, {}) beta1={} beta2={} dual_clip={dual}", self.eps_low, self.eps_high, self.beta1, self.beta2)
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

impl Kernel for AspoConfig {
    fn name(&self) -> &'static str {
        "aspo"
    }
    fn per_token(&self, inp: &LossInputs) -> Result<LossTerms> {
        aspo(inp, self)
    }
    fn describe(&self) -> String {
        format!("eps=({}, {}) c_neg={} c_pos={}", self.eps_low, self.eps_high, self.c_neg, self.c_pos)
    }
    fn widths(&mut self) -> Option<(&mut f64, &mut f64)> {
        Some((&mut self.eps_low, &mut self.eps_high))
    }
}

impl Kernel for SapoConfig {
    fn name(&self) -> &'static str {
        "sapo"
    }
    fn per_token(&self, inp: &LossInputs) -> Result<LossTerms> {
        sapo(inp, self)
    }
    fn describe(&self) -> String {
        format!("tau+={} tau-={}", self.tau_pos, self.tau_neg)
    }
}
