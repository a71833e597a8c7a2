//! Advantage estimators, computed once per rollout batch on the host, without autograd.
//! Outcome estimators give one scalar per response, broadcast to its tokens; REINFORCE++ and the
//! RLOO variant give token-level returns. Responses are right-padded: token `t` of response `i`
//! is valid iff `t < lengths[i]`.
//!
//! # A group of one response
//!
//! The estimators do not agree on a prompt with a single response (group size 1, or a group cut
//! to one by dynamic sampling), and neither do the peers; each does this:
//!
//! - group-norm (GRPO): `A = R / (1 + ε_std)`, as verl (mean 0, std 1 for a singleton);
//! - mean-centred (Dr.GRPO) and LOO (RLOO): `A = R` (verl's RLOO keeps `R` for a singleton too);
//! - REINFORCE++-baseline, GPG, CPGD (every weight) and OPO: `A = 0`, the reward minus its own
//!   group mean; verl's REINFORCE++-baseline instead takes a singleton's mean as 0 (`A = R` before
//!   its whitening);
//! - REINFORCE++ and raw: `A` does not depend on the group (token returns, or `R`).

use std::collections::BTreeMap;

use candle_core::{DType, Device, Tensor};

use crate::error::{Error, Result};
use crate::names::did_you_mean;

/// Global whitening variant (REINFORCE++, arXiv:2501.03262: OpenRLHF biased, verl unbiased).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whitening {
    /// OpenRLHF: population variance, `(A-μ)/sqrt(max(σ², 1e-8))`.
    Biased,
    /// verl `masked_whiten`: unbiased variance, `(A-μ)/sqrt(σ² + 1e-8)`.
    Unbiased,
}

/// CPGD weighting factor `ω(x)` of `A = ω(x)(R - mean R)` (CPGD arXiv:2505.12504 eq. 2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CpgdWeight {
    /// `ω = 1` (≡ Dr.GRPO advantage).
    Equal,
    /// `ω = 1/(std + eps)` (≡ GRPO advantage).
    Std {
        /// Added to the unbiased std.
        eps: f64,
    },
    /// `ω = min(c, P/P_{≠0})` over prompts (paper/LightRFT; 1 if no prompt has variance).
    ClipFilterLike {
        /// Cap `c_ω` (3).
        cap: f64,
    },
}

/// GPG normaliser `F_norm` (GPG, Chu et al. 2025, arXiv:2504.02546).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpgNorm {
    /// `F_norm = 1` (default).
    One,
    /// `F_norm = std` of the group (unbiased).
    Std,
}

/// An advantage estimator with its parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Estimator {
    /// GRPO group normalisation `(R - mean)/(std + eps)`.
    GroupNorm {
        /// `ε_std` (verl 1e-6, TRL 1e-4, OpenRLHF 1e-9).
        eps_std: f64,
        /// Bessel-corrected std (verl/TRL/OpenRLHF) or population std.
        unbiased: bool,
    },
    /// `R - mean` (Dr.GRPO; CPGD equal weight).
    MeanCentred,
    /// Leave-one-out baseline, optionally with k1 KL shaping into token returns and whitening
    /// (RLOO; OpenRLHF/CPGD-paper variant with `kl_coef > 0`).
    Loo {
        /// `β` of the per-token KL shaping (0 = none).
        kl_coef: f64,
        /// Global whitening (OpenRLHF before 2025-06-11), `None` = off.
        whitening: Option<Whitening>,
    },
    /// REINFORCE++: token rewards `-β·KL + 1[t=T]·R`, returns with `γ`, global whitening.
    ReinforcePP {
        /// `β` (OpenRLHF `init_coef` 0.01).
        kl_coef: f64,
        /// Discount `γ` (1).
        gamma: f64,
        /// Whitening variant.
        whitening: Whitening,
    },
    /// REINFORCE++-baseline: `R - group mean`, broadcast, global whitening.
    ReinforcePPBaseline {
        /// Whitening variant.
        whitening: Whitening,
    },
    /// GPG: `α(R - mean)/F_norm`, `α = B/(B - M)`.
    Gpg {
        /// `F_norm`.
        f_norm: GpgNorm,
    },
    /// CPGD: `ω(x)(R - mean)`.
    Cpgd {
        /// Weighting factor.
        weight: CpgdWeight,
    },
    /// OPO: length-weighted group baseline.
    Opo,
    /// Unprocessed rewards `A = R` (CPGD ablation).
    Raw,
}

/// Default cap `c_ω` of CPGD's clip-filter-like weight (CPGD official code, arXiv:2505.12504 §4.3).
pub const CPGD_WEIGHT_CAP: f64 = 3.0;

impl Estimator {
    /// GRPO's group normalisation with verl's `ε_std = 1e-6` and Bessel's correction.
    pub const GRPO: Estimator = Estimator::GroupNorm { eps_std: 1e-6, unbiased: true };
    /// RLOO (Ahmadian et al. 2024): leave-one-out baseline, no shaping.
    pub const RLOO: Estimator = Estimator::Loo { kl_coef: 0.0, whitening: None };
    /// RLOO as the CPGD paper writes it (§5 baselines): LOO baseline, k1 KL shaping (β = 0.01)
    /// into token returns, global whitening (OpenRLHF before 2025-06-11).
    pub const RLOO_CPGD: Estimator = Estimator::Loo { kl_coef: 0.01, whitening: Some(Whitening::Biased) };
    /// REINFORCE++ with OpenRLHF's `init_coef` 0.01, γ = 1, OpenRLHF's whitening.
    pub const REINFORCE_PP: Estimator =
        Estimator::ReinforcePP { kl_coef: 0.01, gamma: 1.0, whitening: Whitening::Biased };
    /// REINFORCE++-baseline with OpenRLHF's whitening.
    pub const REINFORCE_PP_BASELINE: Estimator = Estimator::ReinforcePPBaseline { whitening: Whitening::Biased };
    /// GPG with `F_norm = 1`.
    pub const GPG: Estimator = Estimator::Gpg { f_norm: GpgNorm::One };
    /// CPGD with the STD weight `ω = 1/(std + 1e-6)`.
    pub const CPGD: Estimator = Estimator::Cpgd { weight: CpgdWeight::Std { eps: 1e-6 } };

    /// Every estimator by the name `--advantage` takes, in help order (`cpgd-clip-filter` with the
    /// default cap [`CPGD_WEIGHT_CAP`]).
    pub const NAMED: [(&'static str, Estimator); 12] = [
        ("group-norm", Self::GRPO),
        ("mean-centred", Estimator::MeanCentred),
        ("loo", Self::RLOO),
        ("rloo-cpgd", Self::RLOO_CPGD),
        ("reinforce++", Self::REINFORCE_PP),
        ("reinforce++-baseline", Self::REINFORCE_PP_BASELINE),
        ("gpg", Self::GPG),
        ("cpgd", Self::CPGD),
        ("cpgd-equal", Estimator::Cpgd { weight: CpgdWeight::Equal }),
        ("cpgd-clip-filter", Estimator::Cpgd { weight: CpgdWeight::ClipFilterLike { cap: CPGD_WEIGHT_CAP } }),
        ("opo", Estimator::Opo),
        ("raw", Estimator::Raw),
    ];

    /// The estimator `--advantage NAME` names, in any case (`mean-centered` is accepted too); the
    /// error names the closest valid name and lists them all.
    pub fn from_name(name: &str) -> Result<Estimator> {
        let folded = name.trim().to_lowercase();
        let folded = if folded == "mean-centered" { "mean-centred" } else { folded.as_str() };
        Self::NAMED.iter().find(|(n, _)| *n == folded).map(|(_, e)| *e).ok_or_else(|| {
            let valid: Vec<&str> = Self::NAMED.iter().map(|(n, _)| *n).collect();
            Error::InvalidConfig(format!(
                "unknown advantage estimator `{name}`{}; valid: {}",
                did_you_mean(name, valid.iter().copied()),
                valid.join(", ")
            ))
        })
    }
}

impl std::fmt::Display for Estimator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::GroupNorm { eps_std, unbiased } => {
                write!(f, "group-norm(eps={eps_std:e}{})", if *unbiased { "" } else { ", population std" })
            }
            Self::MeanCentred => f.write_str("mean-centred"),
            Self::Loo { kl_coef, whitening } => {
                write!(f, "loo(kl={kl_coef}, whiten={whitening:?})")
            }
            Self::ReinforcePP { kl_coef, gamma, whitening } => {
                write!(f, "reinforce++(kl={kl_coef}, gamma={gamma}, {whitening:?})")
            }
            Self::ReinforcePPBaseline { whitening } => {
                write!(f, "reinforce++-baseline({whitening:?})")
            }
            Self::Gpg { f_norm } => write!(f, "gpg(F_norm={f_norm:?})"),
            Self::Cpgd { weight } => match weight {
                CpgdWeight::Equal => f.write_str("cpgd(ω=1)"),
                CpgdWeight::Std { eps } => write!(f, "cpgd(ω=1/(std+{eps:e}))"),
                CpgdWeight::ClipFilterLike { cap } => write!(f, "cpgd(ω=min({cap}, P/P≠0))"),
            },
            Self::Opo => f.write_str("opo"),
            Self::Raw => f.write_str("raw"),
        }
    }
}

/// One rollout batch as the estimators see it.
#[derive(Debug, Clone, Copy)]
pub struct Rollout<'a> {
    /// Outcome reward per response.
    pub rewards: &'a [f64],
    /// Prompt (group) id per response.
    pub groups: &'a [usize],
    /// Valid response tokens per response.
    pub lengths: &'a [usize],
    /// Per-token KL of `π_old` vs `π_ref` (k1 at rollout), one row per response of its length.
    pub kl: Option<&'a [Vec<f64>]>,
}

impl Rollout<'_> {
    fn check(&self) -> Result<()> {
        let b = self.rewards.len();
        if self.groups.len() != b || self.lengths.len() != b {
            return Err(Error::InvalidInput(format!(
                "{} rewards, {} group ids, {} lengths",
                b,
                self.groups.len(),
                self.lengths.len()
            )));
        }
        if let Some(i) = self.rewards.iter().position(|r| !r.is_finite()) {
            return Err(Error::InvalidInput(format!("reward {i} is not finite")));
        }
        if let Some(kl) = self.kl {
            if kl.len() != b || kl.iter().zip(self.lengths).any(|(row, &l)| row.len() != l) {
                return Err(Error::InvalidInput("kl rows must match the response lengths".into()));
            }
        }
        Ok(())
    }

    fn group_members(&self) -> BTreeMap<usize, Vec<usize>> {
        let mut m: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (i, &g) in self.groups.iter().enumerate() {
            m.entry(g).or_default().push(i);
        }
        m
    }
}

struct Stats {
    mean: f64,
    std: f64,
    all_equal: bool,
}

fn stats(vals: &[f64], unbiased: bool) -> Stats {
    let n = vals.len() as f64;
    let mean = vals.iter().sum::<f64>() / n;
    let all_equal = vals.iter().all(|&v| v == vals[0]);
    let ss = vals.iter().map(|v| (v - mean).powi(2)).sum::<f64>();
    let denom = if unbiased { n - 1.0 } else { n };
    let std = if all_equal || denom <= 0.0 { 0.0 } else { (ss / denom).sqrt() };
    Stats { mean, std, all_equal }
}

/// Per-response advantages of outcome estimators; members of all-equal groups get exactly 0,
/// singleton groups get `A = R` for group-norm, mean-centred and LOO (verl: mean 0, std 1).
fn outcome(est: &Estimator, ro: &Rollout) -> Result<Vec<f64>> {
    let groups = ro.group_members();
    let mut out = vec![0.0; ro.rewards.len()];
    let n_prompts = groups.len() as f64;
    let mut n_var_prompts = 0.0;
    let mut zero_std_samples = 0.0;
    for members in groups.values() {
        let vals: Vec<f64> = members.iter().map(|&i| ro.rewards[i]).collect();
        if stats(&vals, true).all_equal {
            zero_std_samples += members.len() as f64;
        } else {
            n_var_prompts += 1.0;
        }
    }
    for members in groups.values() {
        let vals: Vec<f64> = members.iter().map(|&i| ro.rewards[i]).collect();
        let k = vals.len() as f64;
        let singleton = members.len() == 1;
        let unbiased = !matches!(est, Estimator::GroupNorm { unbiased: false, .. });
        let st = stats(&vals, unbiased);
        for (j, &i) in members.iter().enumerate() {
            let centred = if st.all_equal { 0.0 } else { vals[j] - st.mean };
            out[i] = match est {
                Estimator::GroupNorm { eps_std, .. } if singleton => vals[j] / (1.0 + eps_std),
                Estimator::MeanCentred | Estimator::Loo { .. } if singleton => vals[j],
                Estimator::GroupNorm { eps_std, .. } => centred / (st.std + eps_std),
                Estimator::MeanCentred | Estimator::ReinforcePPBaseline { .. } => centred,
                Estimator::Loo { .. } => centred * k / (k - 1.0),
                Estimator::Gpg { f_norm } => {
                    let b = ro.rewards.len() as f64;
                    let alpha = if b > zero_std_samples { b / (b - zero_std_samples) } else { 1.0 };
                    let norm = match f_norm {
                        GpgNorm::One => 1.0,
                        GpgNorm::Std if st.std > 0.0 => st.std,
                        GpgNorm::Std => 1.0,
                    };
                    alpha * centred / norm
                }
                Estimator::Cpgd { weight } => {
                    let w = match weight {
                        CpgdWeight::Equal => 1.0,
                        CpgdWeight::Std { eps } => 1.0 / (st.std + eps),
                        CpgdWeight::ClipFilterLike { cap } if n_var_prompts > 0.0 => cap.min(n_prompts / n_var_prompts),
                        CpgdWeight::ClipFilterLike { .. } => 1.0,
                    };
                    w * centred
                }
                Estimator::Opo => {
                    let lens: Vec<f64> = members.iter().map(|&i| ro.lengths[i] as f64).collect();
                    let total: f64 = lens.iter().sum();
                    if st.all_equal || total == 0.0 {
                        0.0
                    } else {
                        let b = lens.iter().zip(&vals).map(|(l, r)| l * r).sum::<f64>() / total;
                        vals[j] - b
                    }
                }
                Estimator::Raw => vals[j],
                Estimator::ReinforcePP { .. } => 0.0,
            };
        }
    }
    Ok(out)
}

/// Token-level advantages `[B][len_i]` of `est` on a rollout batch.
pub fn compute(est: &Estimator, ro: &Rollout) -> Result<Vec<Vec<f64>>> {
    ro.check()?;
    let broadcast = |a: &[f64]| -> Vec<Vec<f64>> { a.iter().zip(ro.lengths).map(|(&v, &l)| vec![v; l]).collect() };
    match *est {
        Estimator::ReinforcePP { kl_coef, gamma, whitening } => {
            let mut rows = shaped_returns(ro.rewards, ro, kl_coef, gamma)?;
            whiten(&mut rows, whitening);
            Ok(rows)
        }
        Estimator::ReinforcePPBaseline { whitening } => {
            let mut rows = broadcast(&outcome(est, ro)?);
            whiten(&mut rows, whitening);
            Ok(rows)
        }
        Estimator::Loo { kl_coef, whitening } => {
            let a = outcome(est, ro)?;
            let mut rows = if kl_coef == 0.0 { broadcast(&a) } else { shaped_returns(&a, ro, kl_coef, 1.0)? };
            if let Some(w) = whitening {
                whiten(&mut rows, w);
            }
            Ok(rows)
        }
        _ => Ok(broadcast(&outcome(est, ro)?)),
    }
}

/// Token returns `G_t = Σ_{j≥t} γ^{j-t} r_j` with `r_t = -β·KL_t + 1[t=T]·final_i` (REINFORCE++,
/// arXiv:2501.03262).
fn shaped_returns(final_reward: &[f64], ro: &Rollout, kl_coef: f64, gamma: f64) -> Result<Vec<Vec<f64>>> {
    let kl = match (ro.kl, kl_coef != 0.0) {
        (Some(kl), _) => Some(kl),
        (None, false) => None,
        (None, true) => {
            return Err(Error::InvalidInput(format!(
                "KL shaping with coefficient {kl_coef} needs per-token KL (old vs ref)"
            )))
        }
    };
    let mut rows = Vec::with_capacity(final_reward.len());
    for (i, &len) in ro.lengths.iter().enumerate() {
        let mut g = vec![0.0; len];
        let mut acc = 0.0;
        for t in (0..len).rev() {
            let mut r = kl.map_or(0.0, |k| -kl_coef * k[i][t]);
            if t + 1 == len {
                r += final_reward[i];
            }
            acc = r + gamma * acc;
            g[t] = acc;
        }
        rows.push(g);
    }
    Ok(rows)
}

/// Global whitening over all valid tokens of the batch (REINFORCE++, arXiv:2501.03262), in place.
pub fn whiten(rows: &mut [Vec<f64>], w: Whitening) {
    let n: usize = rows.iter().map(Vec::len).sum();
    if n == 0 {
        return;
    }
    let nf = n as f64;
    let mean = rows.iter().flatten().sum::<f64>() / nf;
    let var = rows.iter().flatten().map(|v| (v - mean).powi(2)).sum::<f64>() / nf;
    let scale = match w {
        Whitening::Biased => var.max(1e-8).sqrt(),
        Whitening::Unbiased => {
            let unb = if n > 1 { var * nf / (nf - 1.0) } else { var };
            (unb + 1e-8).sqrt()
        }
    };
    for v in rows.iter_mut().flatten() {
        *v = (*v - mean) / scale;
    }
}

/// Truncated importance sampling of a sampler/trainer mismatch (TIS, as TRL, OpenRLHF and verl
/// offer for vLLM rollouts): each token's advantage times the detached `min(π_old/π_sampler, cap)`
/// with `π_old` the trainer's log-probs (`old`) and `π_sampler` the sampler's. Every policy loss of
/// the registry is positively homogeneous in `A`, so this weights the per-token policy loss (not
/// the KL, drift or entropy terms). Rows are cut to the shortest of the three. Returns the mean
/// weight.
pub fn truncated_is(advantages: &mut [Vec<f64>], old: &[&[f32]], sampler: &[Vec<f32>], cap: f64) -> f64 {
    let (mut sum, mut n) = (0.0, 0usize);
    for ((row, p), q) in advantages.iter_mut().zip(old).zip(sampler) {
        for ((a, &p), &q) in row.iter_mut().zip(p.iter()).zip(q) {
            let w = (f64::from(p) - f64::from(q)).exp().min(cap);
            *a *= w;
            sum += w;
            n += 1;
        }
    }
    if n == 0 {
        1.0
    } else {
        sum / n as f64
    }
}

/// Fraction of prompts whose rewards are all equal (the groups DAPO's dynamic sampling drops, arXiv:2503.14476 §3.2).
pub fn frac_zero_std_groups(rewards: &[f64], groups: &[usize]) -> f64 {
    let ro = Rollout { rewards, groups, lengths: &[], kl: None };
    let g = ro.group_members();
    if g.is_empty() {
        return 0.0;
    }
    let zero = g.values().filter(|m| m.iter().all(|&i| rewards.get(i) == rewards.get(m[0]))).count();
    zero as f64 / g.len() as f64
}

/// Right-padded `[B,T]` tensor from token rows (rows longer than `t` are an error).
pub fn to_tensor(rows: &[Vec<f64>], t: usize, dtype: DType, device: &Device) -> Result<Tensor> {
    let mut v = vec![0.0; rows.len() * t];
    for (i, row) in rows.iter().enumerate() {
        if row.len() > t {
            return Err(Error::InvalidInput(format!("row {i} has {} tokens, more than T={t}", row.len())));
        }
        v[i * t..i * t + row.len()].copy_from_slice(row);
    }
    Ok(Tensor::from_vec(v, (rows.len(), t), device)?.to_dtype(dtype)?)
}

/// Right-padded response mask `[B,T]` from lengths.
pub fn mask_from_lengths(lengths: &[usize], t: usize, dtype: DType, device: &Device) -> Result<Tensor> {
    let rows: Vec<Vec<f64>> = lengths.iter().map(|&l| vec![1.0; l.min(t)]).collect();
    to_tensor(&rows, t, dtype, device)
}
