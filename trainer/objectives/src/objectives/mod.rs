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
pub use ppo_clip::{NoClipConfig, PpoClipConfig};
pub use registry::{LossConfig, LossOutput, Objective, ObjectiveKind, Shaping, OBJECTIVES};
pub use reinforce::{PgConfig, PgValue};
pub use sequence::{GmpoConfig, GspoConfig, GspoTokenConfig};
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

/// One objective kernel: its hyper-parameter type computes the per-token loss. A new kernel is
/// one `impl Kernel` (beside its loss function) and one line in the `kernels!` list below.
pub trait Kernel {
    /// Short name of the kernel family (errors, tables).
    fn name(&self) -> &'static str;
    /// Runs the kernel.
    fn per_token(&self, inp: &LossInputs) -> Result<LossTerms>;
    /// The hyper-parameters as `key=value` pairs (tables).
    fn describe(&self) -> String;
    /// Whether the loss is a function of whole sequences (needs seq-mean-token-mean aggregation).
    fn is_sequence_level(&self) -> bool {
        false
    }
    /// The two clip widths `(ε_l, ε_h)`, for kernels that have both: `clip-eps` sets both,
    /// `clip-low`/`clip-high` one each.
    fn widths(&mut self) -> Option<(&mut f64, &mut f64)> {
        None
    }
    /// Sets a parameter [`Kernel::widths`] does not cover; `Ok(false)` when the kernel has no
    /// such parameter.
    fn set_other(&mut self, _p: Param, _v: f64) -> Result<bool> {
        Ok(false)
    }
}

/// Declares [`ObjectiveConfig`], one variant per kernel, and dispatches to [`Kernel`].
macro_rules! kernels {
    ($($(#[$doc:meta])* $variant:ident($config:ty),)*) => {
        /// Hyper-parameters of one objective kernel; the variant selects the kernel.
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub enum ObjectiveConfig {
            $($(#[$doc])* $variant($config),)*
        }

        impl ObjectiveConfig {
            /// The kernel behind this configuration.
            pub fn as_kernel(&self) -> &dyn Kernel {
                match self {
                    $(Self::$variant(c) => c,)*
                }
            }

            fn as_kernel_mut(&mut self) -> &mut dyn Kernel {
                match self {
                    $(Self::$variant(c) => c,)*
                }
            }
        }

        $(impl From<$config> for ObjectiveConfig {
            fn from(c: $config) -> Self {
                Self::$variant(c)
            }
        })*
    };
}

kernels! {
    /// [`reinforce::pg`].
    Pg(PgConfig),
    /// [`ppo_clip::ppo_clip`].
    PpoClip(PpoClipConfig),
    /// [`ppo_clip::no_clip`].
    NoClip(NoClipConfig),
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
    GspoToken(GspoTokenConfig),
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
        let kernel = self.as_kernel_mut();
        match (p, kernel.widths()) {
            (Param::ClipEps, Some((lo, hi))) => (*lo, *hi) = (v, v),
            (Param::ClipLow, Some((lo, _))) => *lo = v,
            (Param::ClipHigh, Some((_, hi))) => *hi = v,
            _ => {
                if !kernel.set_other(p, v)? {
                    return Err(Error::InvalidConfig(format!("{} has no `{}` parameter", kernel.name(), p.name())));
                }
            }
        }
        Ok(())
    }

    /// Short name of the kernel family (for errors and tables).
    pub fn kernel(&self) -> &'static str {
        self.as_kernel().name()
    }

    /// Whether the loss is a sequence-level function (needs seq-mean-token-mean aggregation).
    pub fn is_sequence_level(&self) -> bool {
        self.as_kernel().is_sequence_level()
    }

    /// Runs the kernel.
    pub fn per_token(&self, inp: &LossInputs) -> Result<LossTerms> {
        self.as_kernel().per_token(inp)
    }

    /// The hyper-parameters as `key=value` pairs (for tables).
    pub fn describe(&self) -> String {
        self.as_kernel().describe()
    }
}

/// `v` as a table value, `off` for `None`.
pub(crate) fn describe_opt(v: Option<f64>) -> String {
    v.map_or_else(|| "off".to_string(), |v| v.to_string())
}

/// The error for `clip-low`/`clip-high` on a kernel with one clip width.
pub(crate) fn one_width_only(kernel: &str, p: Param) -> Error {
    Error::InvalidConfig(format!("{kernel} has one clip width: set clip-eps, not {}", p.name()))
}
