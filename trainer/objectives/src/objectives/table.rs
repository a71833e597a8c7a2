//! The static table of registered objectives: 30 entries (RLOO, CPGD, GSPO and the covariance
//! methods have two forms each), each a recipe of kernel + defaults + aggregation + advantage
//! estimator, and the source its defaults follow (`follows`). Where the three seed papers ran a
//! baseline (CPGD arXiv:2505.12504, CFPO arXiv:2601.22801, DGPO arXiv:2603.14389), the default is
//! that paper's setting; `rltrain --paper NAME` ([`crate::presets`]) gives each paper's settings
//! exactly.

use super::cpgd::DriftConfig;
use super::registry::{LossConfig, Objective, Shaping};
use super::{
    AspoConfig, CfpoConfig, CispoConfig, ClipCovConfig, CpgConfig, CpgValue, DgpoConfig, GmpoConfig, GppoConfig,
    GspoConfig, GspoTokenConfig, KlCovConfig, NoClipConfig, ObjectiveConfig, PgConfig, PgValue, PpoClipConfig,
    SapoConfig,
};
use crate::advantage::Estimator;
use crate::aggregate::AggMode;
use crate::kl::{KlEstimator, RefKl};

const GROUP: Estimator = Estimator::GRPO;
/// GRPO-style token-level PPO-clip with ε = 0.2 on both sides (Schulman et al. 2017, arXiv:1707.06347 eq. 7).
const PPO: ObjectiveConfig = ObjectiveConfig::PpoClip(PpoClipConfig { eps_low: 0.2, eps_high: 0.2, dual_clip: None });
const CPGD_DRIFT: DriftConfig = DriftConfig { coef: 0.01, clip: 2.0 };
const CPG: ObjectiveConfig = ObjectiveConfig::Cpg(CpgConfig { eps: 0.2, lambda: 1.0, value: CpgValue::LogRatio });
const CPGD_ADV: Estimator = Estimator::CPGD;
/// CISPO with the two-sided 0.2/0.2 bounds of the DGPO paper's comparison (MiniMax-M1 itself sets
/// no lower bound: `--clip-low 10`).
pub(crate) const CISPO_DGPO: CispoConfig = CispoConfig { eps_low: Some(0.2), eps_high: 0.2, abs_cap: None };
const PG_RATIO: ObjectiveConfig = ObjectiveConfig::Pg(PgConfig { value: PgValue::LogRatio });

/// Every registered objective, in table order.
pub static OBJECTIVES: &[Objective] = &[
    Objective {
        name: "pg",
        row: 1,
        title: "PG / REINFORCE",
        paper: "Williams 1992, Machine Learning 8:229-256",
        follows: "Williams 1992 (no baseline stated; mean baseline)",
        formula: "ℓ = -A·logπ; g = -A",
        shaping: Shaping::NONE,
        defaults: || {
            LossConfig::plain(ObjectiveConfig::Pg(PgConfig::default()), AggMode::TokenMean, Estimator::MeanCentred)
        },
    },
    Objective {
        name: "ppo",
        row: 2,
        title: "PPO-clip",
        paper: "Schulman et al. 2017, arXiv:1707.06347",
        follows: "Schulman et al. 2017 eq. 7, ε = 0.2",
        formula: "ℓ = max(-rA, -clip(r,1-ε_l,1+ε_h)A); g = -rA, 0 on LN∪HP",
        shaping: Shaping::NONE,
        defaults: || LossConfig::plain(PPO, AggMode::TokenMean, GROUP),
    },
    Objective {
        name: "grpo",
        row: 3,
        title: "GRPO",
        paper: "Shao et al. 2024 (DeepSeekMath), arXiv:2402.03300",
        follows: "CPGD, CFPO and DGPO papers (β = 0; DeepSeekMath's β = 0.04 via --kl-coef 0.04)",
        formula: "PPO-clip + β·k3(logπ, logπ_ref), seq-mean-token-mean",
        shaping: Shaping::NONE,
        defaults: || LossConfig::plain(PPO, AggMode::SeqMeanTokenMean, GROUP),
    },
    Objective {
        name: "grpo-dual-clip",
        row: 4,
        title: "GRPO with dual-clip",
        paper: "Ye et al. 2020, arXiv:1912.09729; CPGD (Liu et al. 2025) §4.2",
        follows: "CPGD paper §5 (c = 3, per-sequence mean)",
        formula: "PPO-clip; for A<0 also min(ℓ, -cA); g = 0 when A<0, r>c",
        shaping: Shaping::NONE,
        defaults: || {
            LossConfig::plain(
                ObjectiveConfig::PpoClip(PpoClipConfig { dual_clip: Some(3.0), ..PpoClipConfig::default() }),
                AggMode::SeqMeanTokenMean,
                GROUP,
            )
        },
    },
    Objective {
        name: "grpo-no-clip",
        row: 5,
        title: "GRPO w/o clip",
        paper: "Liu et al. 2025 (CPGD) §4.2, arXiv:2505.12504",
        follows: "CPGD paper §5 (per-sequence mean)",
        formula: "ℓ = -rA; g = -rA",
        shaping: Shaping::NONE,
        defaults: || LossConfig::plain(ObjectiveConfig::NoClip(NoClipConfig), AggMode::SeqMeanTokenMean, GROUP),
    },
    Objective {
        name: "grpo-drift",
        row: 6,
        title: "GRPO w/ drift",
        paper: "Liu et al. 2025 (CPGD) §4.2, arXiv:2505.12504",
        follows: "CPGD paper §5 (α = 0.01, c = 2, per-sequence mean)",
        formula: "PPO-clip + α·min(sg(r)-1, c)·logπ; g = g_clip + α·min(r-1, c)",
        shaping: Shaping::NONE,
        defaults: || LossConfig { drift: Some(CPGD_DRIFT), ..LossConfig::plain(PPO, AggMode::SeqMeanTokenMean, GROUP) },
    },
    Objective {
        name: "reinforce-pp",
        row: 7,
        title: "REINFORCE++",
        paper: "Hu et al. 2025, arXiv:2501.03262",
        follows: "CPGD paper §5 (OpenRLHF returns, per-sequence mean)",
        formula: "PPO-clip on whitened token returns with k1 KL in the reward",
        shaping: Shaping::NONE,
        defaults: || LossConfig::plain(PPO, AggMode::SeqMeanTokenMean, Estimator::REINFORCE_PP),
    },
    Objective {
        name: "reinforce-pp-baseline",
        row: 8,
        title: "REINFORCE++-baseline",
        paper: "Hu et al. 2025, arXiv:2501.03262 (OpenRLHF)",
        follows: "OpenRLHF defaults (k3 loss, β = 0.001)",
        formula: "PPO-clip on whitened (R - group mean); KL to ref as a loss term",
        shaping: Shaping::NONE,
        defaults: || LossConfig {
            ref_kl: Some(RefKl { estimator: KlEstimator::K3, coef: 0.001 }),
            ..LossConfig::plain(PPO, AggMode::TokenMean, Estimator::REINFORCE_PP_BASELINE)
        },
    },
    Objective {
        name: "rloo-reinforce",
        row: 9,
        title: "RLOO (original, sequence-level REINFORCE)",
        paper: "Ahmadian et al. 2024, arXiv:2402.14740; Kool et al. 2019",
        follows: "Ahmadian et al. 2024 §3 (sequence-level REINFORCE)",
        formula: "ℓ = -A_loo·logπ, seq-mean-token-sum; g = -A",
        shaping: Shaping::NONE,
        defaults: || {
            LossConfig::plain(ObjectiveConfig::Pg(PgConfig::default()), AggMode::SeqMeanTokenSum, Estimator::RLOO)
        },
    },
    Objective {
        name: "rloo-ppo",
        row: 9,
        title: "RLOO (OpenRLHF / CPGD-paper variant)",
        paper: "Ahmadian et al. 2024, arXiv:2402.14740; OpenRLHF (Hu et al. 2024, arXiv:2405.11143)",
        follows: "CPGD paper §5 (LOO + k1 shaping + whitening, per-sequence mean)",
        formula: "PPO-clip on LOO advantages with k1 KL shaping and returns",
        shaping: Shaping::NONE,
        defaults: || LossConfig::plain(PPO, AggMode::SeqMeanTokenMean, Estimator::RLOO_CPGD),
    },
    Objective {
        name: "cpgd-pg",
        row: 10,
        title: "PG (CPGD ablation)",
        paper: "Liu et al. 2025 (CPGD), arXiv:2505.12504",
        follows: "CPGD paper eq. 2 ablation (group-token-mean)",
        formula: "ℓ = -A·ρ; g = -A",
        shaping: Shaping::NONE,
        defaults: || LossConfig::plain(PG_RATIO, AggMode::GroupTokenMean, CPGD_ADV),
    },
    Objective {
        name: "pgd",
        row: 11,
        title: "PGD (PG + drift, CPGD ablation)",
        paper: "Liu et al. 2025 (CPGD), arXiv:2505.12504",
        follows: "CPGD paper eq. 2 ablation (group-token-mean)",
        formula: "ℓ = -A·ρ + α·min(sg(r)-1, c)·logπ; g = -A + α·min(r-1, c)",
        shaping: Shaping::NONE,
        defaults: || LossConfig {
            drift: Some(CPGD_DRIFT),
            ..LossConfig::plain(PG_RATIO, AggMode::GroupTokenMean, CPGD_ADV)
        },
    },
    Objective {
        name: "cpg",
        row: 12,
        title: "CPG (CPGD without drift)",
        paper: "Liu et al. 2025 (CPGD), arXiv:2505.12504",
        follows: "CPGD paper eq. 2 ablation (group-token-mean)",
        formula: "ℓ = -min(ρA, clip(ρ, ln(1-ε), ln(1+ε))A); g = -A, 0 on LN∪HP",
        shaping: Shaping::NONE,
        defaults: || LossConfig::plain(CPG, AggMode::GroupTokenMean, CPGD_ADV),
    },
    Objective {
        name: "cpgd",
        row: 13,
        title: "CPGD",
        paper: "Liu et al. 2025 (CPGD), arXiv:2505.12504",
        follows: "CPGD paper eq. 2 (group-token-mean; α, c, ε of the official code)",
        formula: "CPG + α·min(sg(r)-1, c)·logπ; tight-to-loose ε_i optional",
        shaping: Shaping::NONE,
        defaults: || LossConfig {
            drift: Some(CPGD_DRIFT),
            ..LossConfig::plain(CPG, AggMode::GroupTokenMean, CPGD_ADV)
        },
    },
    Objective {
        name: "cpgd-official",
        row: 13,
        title: "CPGD (official-code preset: seq-mean-token-mean)",
        paper: "Liu et al. 2025 (CPGD), arXiv:2505.12504; MM-EUREKA code",
        follows: "CPGD official code (seq-mean-token-mean)",
        formula: "as cpgd, aggregated seq-mean-token-mean",
        shaping: Shaping::NONE,
        defaults: || LossConfig {
            drift: Some(CPGD_DRIFT),
            ..LossConfig::plain(CPG, AggMode::SeqMeanTokenMean, CPGD_ADV)
        },
    },
    Objective {
        name: "cfpo",
        row: 14,
        title: "CFPO / SPO",
        paper: "Çağatan et al. 2026 (CFPO); Xie et al. 2025 (SPO), arXiv:2401.16025",
        follows: "CFPO paper eq. 8 (seq-mean-token-mean, ε = 0.2)",
        formula: "ℓ = -[rA - |A|(r-1)²/(2ε)]; g = -r[A - |A|(r-1)/ε]",
        shaping: Shaping::NONE,
        defaults: || LossConfig::plain(ObjectiveConfig::Cfpo(CfpoConfig::default()), AggMode::SeqMeanTokenMean, GROUP),
    },
    Objective {
        name: "dgpo",
        row: 15,
        title: "DGPO",
        paper: "Fu et al. 2026 (DGPO), arXiv:2603.14389",
        follows: "DGPO paper eq. 10 (per-group token mean, n = 1, m = 2)",
        formula: "ℓ = -A·v; v = r^{n+1}/(1-ε_l)^n (LN), (1+ε_h)^{1/m}r^{1-1/m} (HP), r else; g = -A·v",
        shaping: Shaping { signed_rewards: true, ..Shaping::NONE },
        defaults: || LossConfig::plain(ObjectiveConfig::Dgpo(DgpoConfig::default()), AggMode::GroupTokenMean, GROUP),
    },
    Objective {
        name: "cispo",
        row: 16,
        title: "CISPO",
        paper: "Chen et al. 2025 (MiniMax-M1), arXiv:2506.13585",
        follows: "DGPO paper §5 baseline (ε = 0.2/0.2)",
        formula: "ℓ = -sg(clip(r, 1-ε_l, 1+ε_h))·A·logπ; g = -r̂A",
        shaping: Shaping::NONE,
        defaults: || LossConfig::plain(ObjectiveConfig::Cispo(CISPO_DGPO), AggMode::TokenMean, GROUP),
    },
    Objective {
        name: "gppo",
        row: 17,
        title: "GPPO",
        paper: "Su et al. 2025a (Klear-Reasoner), arXiv:2508.07629",
        follows: "DGPO paper §5 baseline (ε = 0.2/0.2, β1 = β2 = 1)",
        formula: "forward PPO-clip; g = -(1+ε_h)A on HP, -(1-ε_l)A on LN, -rA else",
        shaping: Shaping::NONE,
        defaults: || LossConfig::plain(ObjectiveConfig::Gppo(GppoConfig::default()), AggMode::TokenMean, GROUP),
    },
    Objective {
        name: "ce-gppo",
        row: 18,
        title: "CE-GPPO",
        paper: "Su et al. 2025b (CE-GPPO), arXiv:2509.20712",
        follows: "DGPO paper §5 baseline (β1 = 0.75, β2 = 1)",
        formula: "g = -β2(1+ε_h)A on HP, -β1(1-ε_l)A on LN, -rA else; dual-clip c",
        shaping: Shaping::NONE,
        defaults: || LossConfig::plain(ObjectiveConfig::Gppo(GppoConfig::ce_gppo()), AggMode::TokenMean, GROUP),
    },
    Objective {
        name: "aspo",
        row: 19,
        title: "ASPO",
        paper: "Wang et al. 2025 (ASPO, Archer2.0), arXiv:2510.06062",
        follows: "Archer2.0 code (ε = 0.2, c = 3)",
        formula: "A>0: g = -A/r (band/LP), 0 (HP), -A·c_pos (r<1/c_pos); A<0: PPO-clip, -A·c_neg (r>c_neg)",
        shaping: Shaping::NONE,
        defaults: || LossConfig::plain(ObjectiveConfig::Aspo(AspoConfig::default()), AggMode::TokenMean, GROUP),
    },
    Objective {
        name: "dapo",
        row: 20,
        title: "DAPO",
        paper: "Yu et al. 2025 (DAPO), arXiv:2503.14476",
        follows: "DAPO paper §3 (ε = 0.2/0.28, token-mean)",
        formula: "PPO-clip with ε_l=0.2, ε_h=0.28, token-mean; overlong shaping; dynamic sampling",
        shaping: Shaping::DAPO,
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
        follows: "Dr.GRPO paper §3.2",
        formula: "PPO-clip, Σℓ/(B·L_max), A = R - mean(R)",
        shaping: Shaping::NONE,
        defaults: || LossConfig::plain(PPO, AggMode::DrGrpo { l_max: 4096 }, Estimator::MeanCentred),
    },
    Objective {
        name: "gpg",
        row: 22,
        title: "GPG",
        paper: "Chu et al. 2025 (GPG), arXiv:2504.02546",
        follows: "GPG paper (F_norm = 1)",
        formula: "ℓ = -Â·logπ, Â = α(R - mean R)/F_norm, α = B/(B-M)",
        shaping: Shaping::NONE,
        defaults: || LossConfig::plain(ObjectiveConfig::Pg(PgConfig::default()), AggMode::TokenMean, Estimator::GPG),
    },
    Objective {
        name: "gspo",
        row: 23,
        title: "GSPO (sequence form)",
        paper: "Zheng et al. 2025 (GSPO), arXiv:2507.18071",
        follows: "GSPO paper §4 (ε = 3e-4/4e-4)",
        formula: "s = exp(mean ρ); ℓ_i = -min(sA, clip(s)A); g = -A·s/|o|",
        shaping: Shaping::NONE,
        defaults: || LossConfig::plain(ObjectiveConfig::Gspo(GspoConfig::default()), AggMode::SeqMeanTokenMean, GROUP),
    },
    Objective {
        name: "gspo-token",
        row: 23,
        title: "GSPO-token",
        paper: "Zheng et al. 2025 (GSPO), arXiv:2507.18071",
        follows: "GSPO paper §4.3",
        formula: "s_t = sg(s)·exp(logπ - sg(logπ)); PPO-clip per token",
        shaping: Shaping::NONE,
        defaults: || {
            LossConfig::plain(ObjectiveConfig::GspoToken(GspoTokenConfig::default()), AggMode::SeqMeanTokenMean, GROUP)
        },
    },
    Objective {
        name: "gmpo",
        row: 24,
        title: "GMPO (geometric mean)",
        paper: "Zhao et al. 2025 (GMPO), arXiv:2507.20673",
        follows: "GMPO / verl geo_mean (log-space ε = 0.4)",
        formula: "ℓ_i = -A·exp(mean_t clip_log(ρ_t)); clip in log space",
        shaping: Shaping::NONE,
        defaults: || LossConfig::plain(ObjectiveConfig::Gmpo(GmpoConfig::default()), AggMode::SeqMeanTokenMean, GROUP),
    },
    Objective {
        name: "sapo",
        row: 25,
        title: "SAPO",
        paper: "Gao et al. 2025 (SAPO), arXiv:2511.20347",
        follows: "SAPO paper (τ+ = 1, τ- = 1.05)",
        formula: "ℓ = -A·(4/τ)σ(τ(r-1)); g = -A·4σ(1-σ)r",
        shaping: Shaping::NONE,
        defaults: || LossConfig::plain(ObjectiveConfig::Sapo(SapoConfig::default()), AggMode::SeqMeanTokenMean, GROUP),
    },
    Objective {
        name: "clip-cov",
        row: 26,
        title: "Clip-Cov",
        paper: "Cui et al. 2025 (The Entropy Mechanism of RL for Reasoning LMs), arXiv:2505.22617",
        follows: "Cui et al. 2025 code defaults",
        formula: "PPO-clip; random high-covariance tokens (cov in (lb,ub)) get ℓ = g = 0",
        shaping: Shaping::NONE,
        defaults: || LossConfig::plain(ObjectiveConfig::ClipCov(ClipCovConfig::default()), AggMode::TokenMean, GROUP),
    },
    Objective {
        name: "kl-cov",
        row: 26,
        title: "KL-Cov",
        paper: "Cui et al. 2025 (The Entropy Mechanism of RL for Reasoning LMs), arXiv:2505.22617",
        follows: "Cui et al. 2025 code defaults",
        formula: "ℓ = -rA (+κ|ρ| on the top-covariance tokens); no clip",
        shaping: Shaping::NONE,
        defaults: || LossConfig::plain(ObjectiveConfig::KlCov(KlCovConfig::default()), AggMode::TokenMean, GROUP),
    },
];
