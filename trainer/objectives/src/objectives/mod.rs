//! Policy-optimisation objectives: one pure function per objective, a
//! common input/output type, and a registry chosen by name ([`Objective::from_name`]).
//!
//! Every objective maps a differentiable `logp[B,T]` plus constants (`logp_old`, advantages,
//! mask) to a per-token loss matrix `[B,T]` (loss = −objective) and the region masks LN/HP/LP/HN/M (DGPO arXiv:2603.14389 Table 1).
//! Aggregation ([`crate::aggregate`]), the reference KL ([`crate::kl`]) and the CPGD drift
//! ([`cpgd::drift`]) are separate terms combined by [`LossConfig::loss`].

pub mod covariance;
pub mod cpgd;
pub mod parts;
pub mod penalty;
pub mod ppo_clip;
pub mod registry;
pub mod reinforce;
pub mod sequence;
pub mod soft_clip;
mod table;

use candle_core::Tensor;

pub use covariance::{ClipCovConfig, KlCovConfig};
pub use cpgd::{CpgConfig, CpgValue, DriftConfig};
pub use penalty::CfpoConfig;
pub use ppo_clip::PpoClipConfig;
pub use registry::{LossConfig, LossOutput, Objective, ObjectiveKind, Shaping, OBJECTIVES};
pub use reinforce::{PgConfig, PgValue};
pub use sequence::{GmpoConfig, GspoConfig};
pub use soft_clip::{AspoConfig, CispoConfig, DgpoConfig, GppoConfig, SapoConfig};

use crate::error::{Error, Result};

/// Inputs of every objective. `logp` is the only differentiable tensor; the others are detached.
#[derive(Debug, Clone)]
pub struct LossInputs {
    /// `log π_θ` of the sampled tokens, `[B,T]`, differentiable.
    pub logp: Tensor,
    /// `log π_old` (behaviour policy, stored at rollout), `[B,T]`.
    pub logp_old: Tensor,
    /// Advantages `A[B,T]` (never differentiated).
    pub advantages: Tensor,
    /// Response mask `[B,T]`, 1 for response tokens, 0 for padding (same dtype as `logp`).
    pub mask: Tensor,
    /// `log π_ref` for a reference-KL term, `[B,T]`.
    pub logp_ref: Option<Tensor>,
    /// Token entropy `H[B,T]` for an entropy bonus (differentiable if it should train).
    pub entropy: Option<Tensor>,
    /// The value every stop-gradient `sg(logπ)` takes (and regions are decided on); `None` =
    /// `logp.detach()`. Set it only to evaluate a loss as `f(x, x̄)` of the live log-prob and its stop-gradient copy, with `x̄` held fixed, e.g.
    /// in finite-difference checks.
    pub sg_logp: Option<Tensor>,
}

impl LossInputs {
    /// Checks that all tensors are `[B,T]` with the same shape, float dtype and device.
    pub fn new(logp: Tensor, logp_old: Tensor, advantages: Tensor, mask: Tensor) -> Result<Self> {
        let me = Self { logp, logp_old, advantages, mask, logp_ref: None, entropy: None, sg_logp: None };
        me.check(&me.logp_old, "logp_old")?;
        me.check(&me.advantages, "advantages")?;
        me.check(&me.mask, "mask")?;
        if me.logp.rank() != 2 {
            return Err(Error::InvalidInput(format!("logp must be [B,T], got {:?}", me.logp.shape())));
        }
        if !me.logp.dtype().is_float() {
            return Err(Error::InvalidInput(format!("logp must be a float tensor, got {:?}", me.logp.dtype())));
        }
        Ok(me)
    }

    /// Adds `log π_ref` (for the reference-KL term).
    pub fn with_ref(mut self, logp_ref: Tensor) -> Result<Self> {
        self.check(&logp_ref, "logp_ref")?;
        self.logp_ref = Some(logp_ref);
        Ok(self)
    }

    /// Adds token entropies (for the entropy bonus and its metric).
    pub fn with_entropy(mut self, entropy: Tensor) -> Result<Self> {
        self.check(&entropy, "entropy")?;
        self.entropy = Some(entropy);
        Ok(self)
    }

    /// Holds every stop-gradient copy at `sg_logp` (see the field doc).
    pub fn with_sg_logp(mut self, sg_logp: Tensor) -> Result<Self> {
        self.check(&sg_logp, "sg_logp")?;
        self.sg_logp = Some(sg_logp);
        Ok(self)
    }

    fn check(&self, t: &Tensor, what: &str) -> Result<()> {
        if t.shape() != self.logp.shape() {
            return Err(Error::InvalidInput(format!(
                "{what} has shape {:?}, logp has {:?}",
                t.shape(),
                self.logp.shape()
            )));
        }
        if t.dtype() != self.logp.dtype() {
            return Err(Error::InvalidInput(format!(
                "{what} has dtype {:?}, logp has {:?}",
                t.dtype(),
                self.logp.dtype()
            )));
        }
        if !t.device().same_device(self.logp.device()) {
            return Err(Error::InvalidInput(format!("{what} is on another device than logp")));
        }
        Ok(())
    }
}

/// Region masks (DGPO arXiv:2603.14389 Table 1 naming; `u8`, `[B,T]`, restricted to valid tokens).
#[derive(Debug, Clone)]
pub struct Regions {
    /// LN: `r < 1-ε_l`, `A < 0` (left boundary).
    pub ln: Tensor,
    /// HP: `r > 1+ε_h`, `A > 0` (right boundary).
    pub hp: Tensor,
    /// LP: `r < 1-ε_l`, `A > 0` (reverse left).
    pub lp: Tensor,
    /// HN: `r > 1+ε_h`, `A < 0` (reverse right).
    pub hn: Tensor,
    /// M: every other valid token (including `A = 0`).
    pub in_band: Tensor,
    /// Where this objective's own clip is active, as its reference implementation counts its clip
    /// fraction (PPO: LN ∪ HP ∪ dual; CISPO: `r̂ ≠ r`; GSPO: tokens of clipped sequences; ...).
    pub clipped: Tensor,
    /// Dual-clip active (`A < 0`, `r > c`; ASPO: both soft dual-clips). Zeros when unused.
    pub dual_clip: Tensor,
}

impl Regions {
    /// Builds the five regions from `below`/`above` band masks and the advantage signs.
    pub fn from_sides(below: &Tensor, above: &Tensor, pos: &Tensor, neg: &Tensor, mask: &Tensor) -> Result<Self> {
        use crate::ops::{and, not, or};
        let below = and(below, mask)?;
        let above = and(above, mask)?;
        let ln = and(&below, neg)?;
        let hp = and(&above, pos)?;
        let lp = and(&below, pos)?;
        let hn = and(&above, neg)?;
        let any = or(&or(&ln, &hp)?, &or(&lp, &hn)?)?;
        let in_band = and(&not(&any)?, mask)?;
        let clipped = or(&ln, &hp)?;
        let dual_clip = ln.zeros_like()?;
        Ok(Self { ln, hp, lp, hn, in_band, clipped, dual_clip })
    }
}

/// Output of a per-token objective.
#[derive(Debug, Clone)]
pub struct LossTerms {
    /// Per-token loss `ℓ[B,T]` (0 on padding).
    pub loss: Tensor,
    /// Region masks for metrics.
    pub regions: Regions,
}

/// Hyper-parameters of one objective kernel; the variant selects the kernel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ObjectiveConfig {
    /// [`reinforce::pg`].
    Pg(PgConfig),
    /// [`ppo_clip::ppo_clip`].
    PpoClip(PpoClipConfig),
    /// [`ppo_clip::no_clip`].
    NoClip,
    /// [`cpgd::cpg`].
    Cpg(CpgConfig),
    /// [`penalty::cfpo`].
    Cfpo(CfpoConfig),
    /// [`soft_clip::dgpo`].
    Dgpo(DgpoConfig),
    /// [`soft_clip::cispo`].
    Cispo(CispoConfig),
    /// [`soft_clip::gppo`] (also CE-GPPO).
    Gppo(GppoConfig),
    /// [`soft_clip::aspo`].
    Aspo(AspoConfig),
    /// [`soft_clip::sapo`].
    Sapo(SapoConfig),
    /// [`sequence::gspo`] (sequence form).
    Gspo(GspoConfig),
    /// [`sequence::gspo_token`].
    GspoToken(GspoConfig),
    /// [`sequence::gmpo`].
    Gmpo(GmpoConfig),
    /// [`covariance::clip_cov`].
    ClipCov(ClipCovConfig),
    /// [`covariance::kl_cov`].
    KlCov(KlCovConfig),
}

/// A kernel hyper-parameter a user may set over the registry default (`rltrain`'s objective
/// flags). [`ObjectiveConfig::set`] knows which kernel has which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    /// One width `ε` for both sides: the single width of CPG/CPGD and CFPO, or both widths of a
    /// two-sided kernel.
    ClipEps,
    /// Lower clip width `ε_l` of a two-sided kernel.
    ClipLow,
    /// Upper clip width `ε_h` of a two-sided kernel.
    ClipHigh,
    /// Hard dual-clip constant `c` (PPO family, GPPO).
    DualClip,
    /// CPGD's tight-to-loose factor `λ`.
    CpgLambda,
    /// DGPO's left-boundary power `n`.
    DgpoN,
    /// DGPO's right-boundary root `m`.
    DgpoM,
}

impl Param {
    /// The parameter's name as a flag (`clip-low`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Self::ClipEps => "clip-eps",
            Self::ClipLow => "clip-low",
            Self::ClipHigh => "clip-high",
            Self::DualClip => "dual-clip",
            Self::CpgLambda => "cpg-lambda",
            Self::DgpoN => "dgpo-n",
            Self::DgpoM => "dgpo-m",
        }
    }
}

impl ObjectiveConfig {
    /// Sets hyper-parameter `p` of this kernel to `v`; an error names the kernel when it has no
    /// such parameter. Set [`Param::ClipEps`] before the one-sided widths, so that they win.
    pub fn set(&mut self, p: Param, v: f64) -> Result<()> {
        use Param::*;
        let kernel = self.kernel();
        let widths = match self {
            Self::PpoClip(PpoClipConfig { eps_low, eps_high, .. })
            | Self::Dgpo(DgpoConfig { eps_low, eps_high, .. })
            | Self::Gppo(GppoConfig { eps_low, eps_high, .. })
            | Self::Aspo(AspoConfig { eps_low, eps_high, .. })
            | Self::Gspo(GspoConfig { eps_low, eps_high })
            | Self::GspoToken(GspoConfig { eps_low, eps_high })
            | Self::ClipCov(ClipCovConfig { eps_low, eps_high, .. }) => Some((eps_low, eps_high)),
            _ => None,
        };
        match (p, widths) {
            (ClipEps, Some((lo, hi))) => (*lo, *hi) = (v, v),
            (ClipLow, Some((lo, _))) => *lo = v,
            (ClipHigh, Some((_, hi))) => *hi = v,
            _ => match (p, self) {
                (ClipEps, Self::Cispo(c)) => (c.eps_low, c.eps_high) = (Some(v), v),
                (ClipLow, Self::Cispo(c)) => c.eps_low = Some(v),
                (ClipHigh, Self::Cispo(c)) => c.eps_high = v,
                (ClipEps, Self::Cpg(CpgConfig { eps, .. }) | Self::Cfpo(CfpoConfig { eps })) => *eps = v,
                (ClipLow | ClipHigh, Self::Cpg(_) | Self::Cfpo(_)) => {
                    return Err(Error::InvalidConfig(format!(
                        "{kernel} has one clip width: set clip-eps, not {}",
                        p.name()
                    )))
                }
                (
                    DualClip,
                    Self::PpoClip(PpoClipConfig { dual_clip, .. }) | Self::Gppo(GppoConfig { dual_clip, .. }),
                ) => *dual_clip = Some(v),
                (CpgLambda, Self::Cpg(c)) => c.lambda = v,
                (DgpoN, Self::Dgpo(c)) => c.n = v,
                (DgpoM, Self::Dgpo(c)) => c.m = v,
                _ => return Err(Error::InvalidConfig(format!("{kernel} has no `{}` parameter", p.name()))),
            },
        }
        Ok(())
    }

    /// Short name of the kernel family (for errors and tables).
    pub fn kernel(&self) -> &'static str {
        match self {
            Self::Pg(_) => "pg",
            Self::PpoClip(_) => "ppo-clip",
            Self::NoClip => "no-clip",
            Self::Cpg(_) => "cpg",
            Self::Cfpo(_) => "cfpo",
            Self::Dgpo(_) => "dgpo",
            Self::Cispo(_) => "cispo",
            Self::Gppo(_) => "gppo",
            Self::Aspo(_) => "aspo",
            Self::Sapo(_) => "sapo",
            Self::Gspo(_) => "gspo",
            Self::GspoToken(_) => "gspo-token",
            Self::Gmpo(_) => "gmpo",
            Self::ClipCov(_) => "clip-cov",
            Self::KlCov(_) => "kl-cov",
        }
    }

    /// Whether the loss is a sequence-level function (needs seq-mean-token-mean aggregation).
    pub fn is_sequence_level(&self) -> bool {
        matches!(self, Self::Gspo(_) | Self::Gmpo(_))
    }

    /// Runs the kernel.
    pub fn per_token(&self, inp: &LossInputs) -> Result<LossTerms> {
        match self {
            Self::Pg(c) => reinforce::pg(inp, c),
            Self::PpoClip(c) => ppo_clip::ppo_clip(inp, c),
            Self::NoClip => ppo_clip::no_clip(inp),
            Self::Cpg(c) => cpgd::cpg(inp, c),
            Self::Cfpo(c) => penalty::cfpo(inp, c),
            Self::Dgpo(c) => soft_clip::dgpo(inp, c),
            Self::Cispo(c) => soft_clip::cispo(inp, c),
            Self::Gppo(c) => soft_clip::gppo(inp, c),
            Self::Aspo(c) => soft_clip::aspo(inp, c),
            Self::Sapo(c) => soft_clip::sapo(inp, c),
            Self::Gspo(c) => sequence::gspo(inp, c),
            Self::GspoToken(c) => sequence::gspo_token(inp, c),
            Self::Gmpo(c) => sequence::gmpo(inp, c),
            Self::ClipCov(c) => covariance::clip_cov(inp, c),
            Self::KlCov(c) => covariance::kl_cov(inp, c),
        }
    }

    /// The hyper-parameters as `key=value` pairs (for tables).
    pub fn describe(&self) -> String {
        fn opt(v: Option<f64>) -> String {
            v.map_or_else(|| "off".to_string(), |v| v.to_string())
        }
        match self {
            Self::Pg(c) => format!("value={:?}", c.value),
            Self::PpoClip(c) => format!("eps=({}, {}) dual_clip={}", c.eps_low, c.eps_high, opt(c.dual_clip)),
            Self::NoClip => String::new(),
            Self::Cpg(c) => format!("eps={} lambda={} value={:?}", c.eps, c.lambda, c.value),
            Self::Cfpo(c) => format!("eps={}", c.eps),
            Self::Dgpo(c) => format!("eps=({}, {}) n={} m={}", c.eps_low, c.eps_high, c.n, c.m),
            Self::Cispo(c) => {
                format!("eps_low={} eps_high={} abs_cap={}", opt(c.eps_low), c.eps_high, opt(c.abs_cap))
            }
            Self::Gppo(c) => format!(
                "eps=({}, {}) beta1={} beta2={} dual_clip={}",
                c.eps_low,
                c.eps_high,
                c.beta1,
                c.beta2,
                opt(c.dual_clip)
            ),
            Self::Aspo(c) => format!("eps=({}, {}) c_neg={} c_pos={}", c.eps_low, c.eps_high, c.c_neg, c.c_pos),
            Self::Sapo(c) => format!("tau+={} tau-={}", c.tau_pos, c.tau_neg),
            Self::Gspo(c) | Self::GspoToken(c) => format!("eps=({}, {})", c.eps_low, c.eps_high),
            Self::Gmpo(c) => format!("log_eps=({}, {})", c.log_eps_low, c.log_eps_high),
            Self::ClipCov(c) => {
                format!("eps=({}, {}) ratio={} cov=({}, {})", c.eps_low, c.eps_high, c.ratio, c.cov_lb, c.cov_ub)
            }
            Self::KlCov(c) => format!("ratio={} coef={}", c.ratio, c.coef),
        }
    }
}
