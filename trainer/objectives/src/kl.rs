//! KL estimators (Schulman 2020, "Approximating KL divergence"; k3 as in DeepSeekMath, arXiv:2402.03300 eq. 4): k1, k2, k3, verl's low-variance k3 and the straight-through k3+, for
//! the reference constraint; and the k3 value of the CPGD policy drift for monitoring.

use candle_core::Tensor;

use crate::error::Result;
use crate::ops::{clamp, log_softmax_t, RHO_CLAMP};

/// Per-token KL estimator of `KL(π‖π_ref)` with `d = logπ - logπ_ref`. A config and the
/// command line name it `k1`, `k2`, `k3`, `low-var-kl` (or verl's `low_var_kl`) or `k3+`, in any
/// case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum KlEstimator {
    /// `d`; gradient 1 (expected gradient 0 as a loss: use in the reward only).
    #[cfg_attr(feature = "cli", value(name = "k1", help = "`d = logπ - logπ_ref`"))]
    K1,
    /// `d²/2`; gradient `d` (the reverse-KL gradient).
    #[cfg_attr(feature = "cli", value(name = "k2", help = "`d²/2`"))]
    K2,
    /// `e^{-d} - 1 + d`; gradient `1 - π_ref/π` (forward-KL gradient). `-d` clamped to ±20 before `exp`.
    ///
    /// This is the papers' estimator (Schulman 2020; DeepSeekMath eq. 4), with no clamp on the
    /// value. verl's `kl_loss_type: k3` is not: verl treats `k3` as an alias of its
    /// `low_var_kl`, whose value is clamped to ±10 ([`KlEstimator::LowVarK3`]); pick that one to
    /// reproduce verl's numbers.
    #[cfg_attr(feature = "cli", value(name = "k3", help = "`e^{-d} - 1 + d`"))]
    K3,
    /// verl `low_var_kl` (and verl's `k3`, an alias of it): k3 with `-d` clamped to ±20 and the
    /// value clamped to ±10.
    #[cfg_attr(feature = "cli", value(name = "low-var-kl", alias = "low_var_kl", help = "verl's clamped k3"))]
    LowVarK3,
    /// verl `k3+`: value of k3, gradient of k2 (`k2 - sg(k2) + sg(k3)`).
    #[cfg_attr(feature = "cli", value(name = "k3+", help = "Value of k3, gradient of k2"))]
    K3Plus,
}

impl KlEstimator {
    /// Every estimator, in help order.
    pub const ALL: [KlEstimator; 5] = [Self::K1, Self::K2, Self::K3, Self::LowVarK3, Self::K3Plus];

    /// The name a config file and `--kl-estimator` use (`low-var-kl`; [`KlEstimator::name`] is verl's).
    pub fn flag_name(&self) -> &'static str {
        match self {
            Self::LowVarK3 => "low-var-kl",
            other => other.name(),
        }
    }

    /// The estimator `name` names ([`KlEstimator::flag_name`] or verl's), in any case.
    pub fn from_name(name: &str) -> Result<Self> {
        let key = name.trim().to_lowercase().replace('_', "-");
        Self::ALL.into_iter().find(|k| k.flag_name() == key).ok_or_else(|| {
            let valid: Vec<&str> = Self::ALL.iter().map(|k| k.flag_name()).collect();
            crate::Error::InvalidConfig(format!("unknown KL estimator `{name}`; valid: {}", valid.join(", ")))
        })
    }

    /// Name as in verl.
    pub fn name(&self) -> &'static str {
        match self {
            Self::K1 => "k1",
            Self::K2 => "k2",
            Self::K3 => "k3",
            Self::LowVarK3 => "low_var_kl",
            Self::K3Plus => "k3+",
        }
    }
}

crate::names::serde_by_name!(KlEstimator, "a KL estimator name", flag_name);

/// Config of the reference-KL loss term `coef·Agg(k(logπ, logπ_ref))`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RefKl {
    /// Estimator.
    pub estimator: KlEstimator,
    /// Coefficient `β`.
    pub coef: f64,
}

fn k3(d: &Tensor) -> Result<Tensor> {
    let nd = clamp(&d.neg()?, -RHO_CLAMP, RHO_CLAMP)?;
    Ok(((nd.exp()? - nd)?.affine(1.0, -1.0))?)
}

/// Per-token KL estimate `[B,T]` between `logp` (differentiable) and `logp_ref` (constant).
pub fn kl_ref(est: KlEstimator, logp: &Tensor, logp_ref: &Tensor) -> Result<Tensor> {
    kl_ref_sg(est, logp, &logp.detach(), logp_ref)
}

/// As [`kl_ref`], with the stop-gradient copy of `logp` (used by k3+) given explicitly.
pub fn kl_ref_sg(est: KlEstimator, logp: &Tensor, logp_sg: &Tensor, logp_ref: &Tensor) -> Result<Tensor> {
    let d = (logp - logp_ref.detach())?;
    Ok(match est {
        KlEstimator::K1 => d,
        KlEstimator::K2 => d.sqr()?.affine(0.5, 0.0)?,
        KlEstimator::K3 => k3(&d)?,
        KlEstimator::LowVarK3 => clamp(&k3(&d)?, -10.0, 10.0)?,
        KlEstimator::K3Plus => {
            let d_bar = (logp_sg.detach() - logp_ref.detach())?;
            let k2 = d.sqr()?.affine(0.5, 0.0)?;
            let k2_bar = d_bar.sqr()?.affine(0.5, 0.0)?;
            ((k2 - k2_bar)? + k3(&d_bar)?)?
        }
    })
}

/// k3 value of the policy drift `KL(π_old‖π_θ)` per token: `r - 1 - ρ` (≥ 0; detached).
pub fn drift_k3(logp: &Tensor, logp_old: &Tensor) -> Result<Tensor> {
    let rho = clamp(&(logp.detach() - logp_old.detach())?, -RHO_CLAMP, RHO_CLAMP)?;
    Ok((rho.exp()?.affine(1.0, -1.0)? - rho)?)
}

/// Exact `KL(π‖π_ref)` over the vocabulary at each position (the sum the k-estimators approximate), from logits
/// `[..,V]` of the policy (differentiable) and the reference (constant) at `temperature`.
pub fn full_kl(logits: &Tensor, ref_logits: &Tensor, temperature: f64) -> Result<Tensor> {
    let lp = log_softmax_t(logits, temperature)?;
    let lr = log_softmax_t(&ref_logits.detach(), temperature)?;
    Ok((lp.exp()? * (&lp - lr)?)?.sum(candle_core::D::Minus1)?)
}

#[cfg(test)]
mod tests {
    use super::KlEstimator;

    /// Every estimator is written by its flag name and read back in any case, verl's
    /// `low_var_kl` too; a wrong name lists the right ones.
    #[test]
    fn names_round_trip() {
        for k in KlEstimator::ALL {
            let text = serde_json::to_string(&k).unwrap();
            assert_eq!(text, format!("\"{}\"", k.flag_name()));
            assert_eq!(serde_json::from_str::<KlEstimator>(&text.to_uppercase()).unwrap(), k);
        }
        assert_eq!(serde_json::from_str::<KlEstimator>("\"low_var_kl\"").unwrap(), KlEstimator::LowVarK3);
        let err = serde_json::from_str::<KlEstimator>("\"k4\"").unwrap_err().to_string();
        assert!(err.contains("low-var-kl"), "{err}");
    }
}
