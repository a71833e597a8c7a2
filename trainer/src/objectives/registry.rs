//! The registry: every objective of spec §1 by name, as a recipe (kernel + defaults + aggregation +
//! advantage estimator + optional drift / reference-KL terms), and the combined loss.

use candle_core::Tensor;

use super::cpgd::{self, DriftConfig};
use super::{
    AspoConfig, CfpoConfig, CispoConfig, ClipCovConfig, CpgConfig, CpgValue, DgpoConfig, GmpoConfig, GppoConfig,
    GspoConfig, KlCovConfig, LossInputs, LossTerms, ObjectiveConfig, PgConfig, PgValue, PpoClipConfig, SapoConfig,
};
use crate::advantage::{CpgdWeight, Estimator, GpgNorm, Whitening};
use crate::aggregate::{aggregate_with, weights, AggMode, GlobalNorm};
use crate::error::{Error, Result};
use crate::kl::{kl_ref_sg, KlEstimator, RefKl};

/// Per-token or sequence-level loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectiveKind {
    /// Each `ℓ_{i,t}` depends only on its own `logπ_{i,t}`.
    PerToken,
    /// `ℓ_i` depends on the whole sequence (GSPO, GMPO).
    Sequence,
}

/// A complete loss recipe: kernel hyper-parameters plus the additive terms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LossConfig {
    /// Kernel and its hyper-parameters.
    pub objective: ObjectiveConfig,
    /// Aggregation applied to every term.
    pub agg: AggMode,
    /// Advantage estimator the recipe pairs with (used by the trainer, not by [`LossConfig::loss`]).
    pub advantage: Estimator,
    /// CPGD policy-drift term `+α·Agg(E)`.
    pub drift: Option<DriftConfig>,
    /// Reference-KL term `+β·Agg(k)`.
    pub ref_kl: Option<RefKl>,
    /// Entropy bonus `-c_H·Agg(H)` (0 = off).
    pub entropy_coef: f64,
}

/// Scalar terms of one loss evaluation.
#[derive(Debug, Clone)]
pub struct LossOutput {
    /// Total loss to back-propagate.
    pub total: Tensor,
    /// Aggregated policy term.
    pub policy: Tensor,
    /// Aggregated drift term `Agg(E)` (before `α`).
    pub drift: Option<Tensor>,
    /// Aggregated reference KL (before `β`).
    pub kl: Option<Tensor>,
    /// Aggregated entropy.
    pub entropy: Option<Tensor>,
    /// The per-token matrix and regions of the policy term.
    pub terms: LossTerms,
}

impl LossConfig {
    fn plain(objective: ObjectiveConfig, agg: AggMode, advantage: Estimator) -> Self {
        Self { objective, agg, advantage, drift: None, ref_kl: None, entropy_coef: 0.0 }
    }

    /// Checks the aggregation is allowed (sequence-level losses need seq-mean-token-mean).
    pub fn validate(&self) -> Result<()> {
        if self.objective.is_sequence_level() && self.agg != AggMode::SeqMeanTokenMean {
            return Err(Error::InvalidConfig(format!(
                "{} is a sequence-level loss: its aggregation must be seq-mean-token-mean, got {}",
                self.objective.kernel(),
                self.agg
            )));
        }
        if !self.entropy_coef.is_finite() {
            return Err(Error::InvalidConfig("entropy_coef must be finite".into()));
        }
        Ok(())
    }

    /// Per-token total `ℓ + α·E + β·k - c_H·H` before aggregation (padding 0).
    pub fn per_token_total(&self, inp: &LossInputs) -> Result<Tensor> {
        let terms = self.objective.per_token(inp)?;
        let mut total = terms.loss;
        for (coef, t) in self.extra_terms(inp)? {
            total = (total + t.affine(coef, 0.0)?)?;
        }
        Ok(total)
    }

    /// The additive terms as `(signed coefficient, per-token matrix)`, in the order drift, KL, entropy.
    fn extra_terms(&self, inp: &LossInputs) -> Result<Vec<(f64, Tensor)>> {
        let mut out = Vec::new();
        let keep = inp.mask.ne(0.0)?;
        let zeros = inp.logp.zeros_like()?.detach();
        if let Some(d) = self.drift {
            out.push((d.coef, cpgd::drift(inp, d.clip)?));
        }
        if let Some(k) = self.ref_kl {
            let r = inp.logp_ref.as_ref().ok_or_else(|| {
                Error::InvalidInput(format!(
                    "this loss has a reference-KL term ({} × {}) but no logp_ref was given; \
                     provide it or set ref_kl to None",
                    k.coef,
                    k.estimator.name()
                ))
            })?;
            let x = keep.where_cond(&inp.logp, &zeros)?;
            let bar = inp.sg_logp.as_ref().unwrap_or(&inp.logp).detach();
            let x_bar = keep.where_cond(&bar, &zeros)?;
            let r = keep.where_cond(&r.detach(), &zeros)?;
            out.push((k.coef, kl_ref_sg(k.estimator, &x, &x_bar, &r)?));
        }
        if self.entropy_coef != 0.0 {
            let h = inp.entropy.as_ref().ok_or_else(|| {
                Error::InvalidInput("entropy_coef is set but no token entropy was given".into())
            })?;
            out.push((-self.entropy_coef, keep.where_cond(h, &zeros)?));
        }
        Ok(out)
    }

    /// The scalar loss with this batch's normalisers (`groups`: prompt id per response, needed
    /// for group-token-mean).
    pub fn loss(&self, inp: &LossInputs, groups: Option<&[usize]>) -> Result<LossOutput> {
        self.loss_with(inp, groups, None)
    }

    /// The scalar loss of one micro-batch with normalisers of the whole mini-batch.
    pub fn loss_with(&self, inp: &LossInputs, groups: Option<&[usize]>, global: Option<&GlobalNorm>) -> Result<LossOutput> {
        self.validate()?;
        let terms = self.objective.per_token(inp)?;
        let w = weights(self.agg, &inp.mask, groups, global)?;
        let policy = aggregate_with(&terms.loss, &w, &inp.mask)?;
        let mut total = policy.clone();
        let (mut drift, mut kl, mut entropy) = (None, None, None);
        let mut extra = self.extra_terms(inp)?.into_iter();
        if self.drift.is_some() {
            if let Some((c, t)) = extra.next() {
                let v = aggregate_with(&t, &w, &inp.mask)?;
                total = (total + v.affine(c, 0.0)?)?;
                drift = Some(v);
            }
        }
        if self.ref_kl.is_some() {
            if let Some((c, t)) = extra.next() {
                let v = aggregate_with(&t, &w, &inp.mask)?;
                total = (total + v.affine(c, 0.0)?)?;
                kl = Some(v);
            }
        }
        if self.entropy_coef != 0.0 {
            if let Some((c, t)) = extra.next() {
                let v = aggregate_with(&t, &w, &inp.mask)?;
                total = (total + v.affine(c, 0.0)?)?;
                entropy = Some(v);
            }
        }
        Ok(LossOutput { total, policy, drift, kl, entropy, terms })
    }
}

/// One registered objective.
#[derive(Debug)]
pub struct Objective {
    /// Registry name (kebab-case).
    pub name: &'static str,
    /// Row of the spec's summary table (§1).
    pub row: u8,
    /// Human-readable title.
    pub title: &'static str,
    /// Paper citation (authors, year, arXiv id).
    pub paper: &'static str,
    /// Per-token loss and gradient, one line.
    pub formula: &'static str,
    defaults: fn() -> LossConfig,
}

impl Objective {
    /// Looks an objective up by name; the error lists every valid name.
    pub fn from_name(name: &str) -> Result<&'static Objective> {
        OBJECTIVES.iter().find(|o| o.name == name).ok_or_else(|| Error::UnknownObjective {
            name: name.to_string(),
            valid: Self::names().join(", "),
        })
    }

    /// Every registered name, in table order.
    pub fn names() -> Vec<&'static str> {
        OBJECTIVES.iter().map(|o| o.name).collect()
    }

    /// The spec's defaults for this objective.
    pub fn defaults(&self) -> LossConfig {
        (self.defaults)()
    }

    /// Per-token or sequence-level.
    pub fn kind(&self) -> ObjectiveKind {
        if self.defaults().objective.is_sequence_level() {
            ObjectiveKind::Sequence
        } else {
            ObjectiveKind::PerToken
        }
    }

    /// Runs this objective's kernel with `cfg`, which must be of this objective's kernel.
    pub fn per_token(&self, inp: &LossInputs, cfg: &ObjectiveConfig) -> Result<LossTerms> {
        let expected = self.defaults().objective.kernel();
        if cfg.kernel() != expected {
            return Err(Error::ConfigMismatch { objective: self.name, expected, got: cfg.kernel() });
        }
        cfg.per_token(inp)
    }

    /// Renders the registry as a Markdown table with defaults (for `rltrain objectives`).
    pub fn render_table() -> String {
        let mut s = String::from("| name | row | objective | defaults | aggregation | advantage | extra terms | paper |\n");
        s.push_str("|---|---|---|---|---|---|---|---|\n");
        for o in OBJECTIVES {
            let c = o.defaults();
            let mut extra = Vec::new();
            if let Some(d) = c.drift {
                extra.push(format!("drift α={} c={}", d.coef, d.clip));
            }
            if let Some(k) = c.ref_kl {
                extra.push(format!("ref-KL {} β={}", k.estimator.name(), k.coef));
            }
            s.push_str(&format!(
                "| {} | {} | {} | {} {} | {} | {} | {} | {} |\n",
                o.name,
                o.row,
                o.title,
                c.objective.kernel(),
                c.objective.describe(),
                c.agg,
                c.advantage,
                if extra.is_empty() { "-".to_string() } else { extra.join("; ") },
                o.paper
            ));
        }
        s
    }
}

const GROUP: Estimator = Estimator::GroupNorm { eps_std: 1e-6, unbiased: true };
const PPO: ObjectiveConfig = ObjectiveConfig::PpoClip(PpoClipConfig { eps_low: 0.2, eps_high: 0.2, dual_clip: None });
const CPGD_DRIFT: DriftConfig = DriftConfig { coef: 0.01, clip: 2.0 };
const CPG: ObjectiveConfig = ObjectiveConfig::Cpg(CpgConfig { eps: 0.2, lambda: 1.0, value: CpgValue::LogRatio });
const CPGD_ADV: Estimator = Estimator::Cpgd { weight: CpgdWeight::Std { eps: 1e-6 } };
const PG_RATIO: ObjectiveConfig = ObjectiveConfig::Pg(PgConfig { value: PgValue::LogRatio });

/// Every objective of spec §1 (26 rows; rows 9, 13 and 23 have two entries).
pub static OBJECTIVES: &[Objective] = &[
    Objective {
        name: "pg",
        row: 1,
        title: "PG / REINFORCE",
        paper: "Williams 1992, Machine Learning 8:229-256",
        formula: "ℓ = -A·logπ; g = -A",
        defaults: || LossConfig::plain(ObjectiveConfig::Pg(PgConfig::default()), AggMode::TokenMean, Estimator::MeanCentred),
    },
    Objective {
        name: "ppo",
        row: 2,
        title: "PPO-clip",
        paper: "Schulman et al. 2017, arXiv:1707.06347",
        formula: "ℓ = max(-rA, -clip(r,1-ε_l,1+ε_h)A); g = -rA, 0 on LN∪HP",
        defaults: || LossConfig::plain(PPO, AggMode::TokenMean, GROUP),
    },
    Objective {
        name: "grpo",
        row: 3,
        title: "GRPO",
        paper: "Shao et al. 2024 (DeepSeekMath), arXiv:2402.03300",
        formula: "PPO-clip + β·k3(logπ, logπ_ref), seq-mean-token-mean",
        defaults: || LossConfig {
            ref_kl: Some(RefKl { estimator: KlEstimator::K3, coef: 0.04 }),
            ..LossConfig::plain(PPO, AggMode::SeqMeanTokenMean, GROUP)
        },
    },
    Objective {
        name: "grpo-dual-clip",
        row: 4,
        title: "GRPO with dual-clip",
        paper: "Ye et al. 2020, arXiv:1912.09729; CPGD (Liu et al. 2025) §4.2",
        formula: "PPO-clip; for A<0 also min(ℓ, -cA); g = 0 when A<0, r>c",
        defaults: || {
            LossConfig::plain(
                ObjectiveConfig::PpoClip(PpoClipConfig { dual_clip: Some(3.0), ..PpoClipConfig::default() }),
                AggMode::TokenMean,
                GROUP,
            )
        },
    },
    Objective {
        name: "grpo-no-clip",
        row: 5,
        title: "GRPO w/o clip",
        paper: "Liu et al. 2025 (CPGD) §4.2, arXiv:2505.12504",
        formula: "ℓ = -rA; g = -rA",
        defaults: || LossConfig::plain(ObjectiveConfig::NoClip, AggMode::TokenMean, GROUP),
    },
    Objective {
        name: "grpo-drift",
        row: 6,
        title: "GRPO w/ drift",
        paper: "Liu et al. 2025 (CPGD) §4.2, arXiv:2505.12504",
        formula: "PPO-clip + α·min(sg(r)-1, c)·logπ; g = g_clip + α·min(r-1, c)",
        defaults: || LossConfig { drift: Some(CPGD_DRIFT), ..LossConfig::plain(PPO, AggMode::TokenMean, GROUP) },
    },
    Objective {
        name: "reinforce-pp",
        row: 7,
        title: "REINFORCE++",
        paper: "Hu et al. 2025, arXiv:2501.03262",
        formula: "PPO-clip on whitened token returns with k1 KL in the reward",
        defaults: || {
            LossConfig::plain(
                PPO,
                AggMode::TokenMean,
                Estimator::ReinforcePP { kl_coef: 0.01, gamma: 1.0, whitening: Whitening::Biased },
            )
        },
    },
    Objective {
        name: "reinforce-pp-baseline",
        row: 8,
        title: "REINFORCE++-baseline",
        paper: "Hu et al. 2025, arXiv:2501.03262 (OpenRLHF)",
        formula: "PPO-clip on whitened (R - group mean); KL to ref as a loss term",
        defaults: || LossConfig {
            ref_kl: Some(RefKl { estimator: KlEstimator::K3, coef: 0.001 }),
            ..LossConfig::plain(PPO, AggMode::TokenMean, Estimator::ReinforcePPBaseline { whitening: Whitening::Biased })
        },
    },
    Objective {
        name: "rloo-reinforce",
        row: 9,
        title: "RLOO (original, sequence-level REINFORCE)",
        paper: "Ahmadian et al. 2024, arXiv:2402.14740; Kool et al. 2019",
        formula: "ℓ = -A_loo·logπ, seq-mean-token-sum; g = -A",
        defaults: || {
            LossConfig::plain(
                ObjectiveConfig::Pg(PgConfig::default()),
                AggMode::SeqMeanTokenSum,
                Estimator::Loo { kl_coef: 0.0, whitening: None },
            )
        },
    },
    Objective {
        name: "rloo-ppo",
        row: 9,
        title: "RLOO (OpenRLHF / CPGD-paper variant)",
        paper: "Ahmadian et al. 2024, arXiv:2402.14740; OpenRLHF (Hu et al. 2024, arXiv:2405.11143)",
        formula: "PPO-clip on LOO advantages with k1 KL shaping and returns",
        defaults: || {
            LossConfig::plain(PPO, AggMode::TokenMean, Estimator::Loo { kl_coef: 0.01, whitening: None })
        },
    },
    Objective {
        name: "cpgd-pg",
        row: 10,
        title: "PG (CPGD ablation)",
        paper: "Liu et al. 2025 (CPGD), arXiv:2505.12504",
        formula: "ℓ = -A·ρ; g = -A",
        defaults: || LossConfig::plain(PG_RATIO, AggMode::GroupTokenMean, CPGD_ADV),
    },
    Objective {
        name: "pgd",
        row: 11,
        title: "PGD (PG + drift, CPGD ablation)",
        paper: "Liu et al. 2025 (CPGD), arXiv:2505.12504",
        formula: "ℓ = -A·ρ + α·min(sg(r)-1, c)·logπ; g = -A + α·min(r-1, c)",
        defaults: || LossConfig { drift: Some(CPGD_DRIFT), ..LossConfig::plain(PG_RATIO, AggMode::GroupTokenMean, CPGD_ADV) },
    },
    Objective {
        name: "cpg",
        row: 12,
        title: "CPG (CPGD without drift)",
        paper: "Liu et al. 2025 (CPGD), arXiv:2505.12504",
        formula: "ℓ = -min(ρA, clip(ρ, ln(1-ε), ln(1+ε))A); g = -A, 0 on LN∪HP",
        defaults: || LossConfig::plain(CPG, AggMode::GroupTokenMean, CPGD_ADV),
    },
    Objective {
        name: "cpgd",
        row: 13,
        title: "CPGD",
        paper: "Liu et al. 2025 (CPGD), arXiv:2505.12504",
        formula: "CPG + α·min(sg(r)-1, c)·logπ; tight-to-loose ε_i optional",
        defaults: || LossConfig { drift: Some(CPGD_DRIFT), ..LossConfig::plain(CPG, AggMode::GroupTokenMean, CPGD_ADV) },
    },
    Objective {
        name: "cpgd-official",
        row: 13,
        title: "CPGD (official-code preset: seq-mean-token-mean)",
        paper: "Liu et al. 2025 (CPGD), arXiv:2505.12504; MM-EUREKA code",
        formula: "as cpgd, aggregated seq-mean-token-mean",
        defaults: || LossConfig { drift: Some(CPGD_DRIFT), ..LossConfig::plain(CPG, AggMode::SeqMeanTokenMean, CPGD_ADV) },
    },
    Objective {
        name: "cfpo",
        row: 14,
        title: "CFPO / SPO",
        paper: "Çağatan et al. 2026 (CFPO); Xie et al. 2025 (SPO), arXiv:2401.16025",
        formula: "ℓ = -[rA - |A|(r-1)²/(2ε)]; g = -r[A - |A|(r-1)/ε]",
        defaults: || LossConfig::plain(ObjectiveConfig::Cfpo(CfpoConfig::default()), AggMode::SeqMeanTokenMean, GROUP),
    },
    Objective {
        name: "dgpo",
        row: 15,
        title: "DGPO",
        paper: "Fu et al. 2026 (DGPO), arXiv:2603.14389",
        formula: "ℓ = -A·v; v = r^{n+1}/(1-ε_l)^n (LN), (1+ε_h)^{1/m}r^{1-1/m} (HP), r else; g = -A·v",
        defaults: || LossConfig::plain(ObjectiveConfig::Dgpo(DgpoConfig::default()), AggMode::TokenMean, GROUP),
    },
    Objective {
        name: "cispo",
        row: 16,
        title: "CISPO",
        paper: "Chen et al. 2025 (MiniMax-M1), arXiv:2506.13585",
        formula: "ℓ = -sg(clip(r, 1-ε_l, 1+ε_h))·A·logπ; g = -r̂A",
        defaults: || LossConfig::plain(ObjectiveConfig::Cispo(CispoConfig::default()), AggMode::TokenMean, GROUP),
    },
    Objective {
        name: "gppo",
        row: 17,
        title: "GPPO",
        paper: "Su et al. 2025a (Klear-Reasoner), arXiv:2508.07629",
        formula: "forward PPO-clip; g = -(1+ε_h)A on HP, -(1-ε_l)A on LN, -rA else",
        defaults: || LossConfig::plain(ObjectiveConfig::Gppo(GppoConfig::default()), AggMode::TokenMean, GROUP),
    },
    Objective {
        name: "ce-gppo",
        row: 18,
        title: "CE-GPPO",
        paper: "Su et al. 2025b (CE-GPPO), arXiv:2509.20712",
        formula: "g = -β2(1+ε_h)A on HP, -β1(1-ε_l)A on LN, -rA else; dual-clip c",
        defaults: || LossConfig::plain(ObjectiveConfig::Gppo(GppoConfig::ce_gppo()), AggMode::TokenMean, GROUP),
    },
    Objective {
        name: "aspo",
        row: 19,
        title: "ASPO",
        paper: "Wang et al. 2025 (ASPO, Archer2.0), arXiv:2510.06062",
        formula: "A>0: g = -A/r (band/LP), 0 (HP), -A·c_pos (r<1/c_pos); A<0: PPO-clip, -A·c_neg (r>c_neg)",
        defaults: || LossConfig::plain(ObjectiveConfig::Aspo(AspoConfig::default()), AggMode::TokenMean, GROUP),
    },
    Objective {
        name: "dapo",
        row: 20,
        title: "DAPO",
        paper: "Yu et al. 2025 (DAPO), arXiv:2503.14476",
        formula: "PPO-clip with ε_l=0.2, ε_h=0.28, token-mean; overlong shaping; dynamic sampling",
        defaults: || {
            LossConfig::plain(
                ObjectiveConfig::PpoClip(PpoClipConfig { eps_low: 0.2, eps_high: 0.28, dual_clip: None }),
                AggMode::TokenMean,
                GROUP,
            )
        },
    },
    Objective {
        name: "dr-grpo",
        row: 21,
        title: "Dr.GRPO",
        paper: "Liu et al. 2025 (Dr.GRPO), arXiv:2503.20783",
        formula: "PPO-clip, Σℓ/(B·L_max), A = R - mean(R)",
        defaults: || LossConfig::plain(PPO, AggMode::DrGrpo { l_max: 4096 }, Estimator::MeanCentred),
    },
    Objective {
        name: "gpg",
        row: 22,
        title: "GPG",
        paper: "Chu et al. 2025 (GPG), arXiv:2504.02546",
        formula: "ℓ = -Â·logπ, Â = α(R - mean R)/F_norm, α = B/(B-M)",
        defaults: || {
            LossConfig::plain(
                ObjectiveConfig::Pg(PgConfig::default()),
                AggMode::TokenMean,
                Estimator::Gpg { f_norm: GpgNorm::One },
            )
        },
    },
    Objective {
        name: "gspo",
        row: 23,
        title: "GSPO (sequence form)",
        paper: "Zheng et al. 2025 (GSPO), arXiv:2507.18071",
        formula: "s = exp(mean ρ); ℓ_i = -min(sA, clip(s)A); g = -A·s/|o|",
        defaults: || LossConfig::plain(ObjectiveConfig::Gspo(GspoConfig::default()), AggMode::SeqMeanTokenMean, GROUP),
    },
    Objective {
        name: "gspo-token",
        row: 23,
        title: "GSPO-token",
        paper: "Zheng et al. 2025 (GSPO), arXiv:2507.18071",
        formula: "s_t = sg(s)·exp(logπ - sg(logπ)); PPO-clip per token",
        defaults: || {
            LossConfig::plain(ObjectiveConfig::GspoToken(GspoConfig::default()), AggMode::SeqMeanTokenMean, GROUP)
        },
    },
    Objective {
        name: "gmpo",
        row: 24,
        title: "GMPO (geometric mean)",
        paper: "Zhao et al. 2025 (GMPO), arXiv:2507.20673",
        formula: "ℓ_i = -A·exp(mean_t clip_log(ρ_t)); clip in log space",
        defaults: || LossConfig::plain(ObjectiveConfig::Gmpo(GmpoConfig::default()), AggMode::SeqMeanTokenMean, GROUP),
    },
    Objective {
        name: "sapo",
        row: 25,
        title: "SAPO",
        paper: "Gao et al. 2025 (SAPO), arXiv:2511.20347",
        formula: "ℓ = -A·(4/τ)σ(τ(r-1)); g = -A·4σ(1-σ)r",
        defaults: || LossConfig::plain(ObjectiveConfig::Sapo(SapoConfig::default()), AggMode::SeqMeanTokenMean, GROUP),
    },
    Objective {
        name: "clip-cov",
        row: 26,
        title: "Clip-Cov",
        paper: "Cui et al. 2025 (The Entropy Mechanism of RL for Reasoning LMs), arXiv:2505.22617",
        formula: "PPO-clip; random high-covariance tokens (cov in (lb,ub)) get ℓ = g = 0",
        defaults: || LossConfig::plain(ObjectiveConfig::ClipCov(ClipCovConfig::default()), AggMode::TokenMean, GROUP),
    },
    Objective {
        name: "kl-cov",
        row: 26,
        title: "KL-Cov",
        paper: "Cui et al. 2025 (The Entropy Mechanism of RL for Reasoning LMs), arXiv:2505.22617",
        formula: "ℓ = -rA (+κ|ρ| on the top-covariance tokens); no clip",
        defaults: || LossConfig::plain(ObjectiveConfig::KlCov(KlCovConfig::default()), AggMode::TokenMean, GROUP),
    },
];
