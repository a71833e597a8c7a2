//! Paper presets (`rltrain --paper NAME`): each seed paper's own settings for the objectives it
//! compared, so a comparison from the paper runs by name. A preset fills what the user did not set:
//! the clip widths, the reference KL, the aggregation, the advantage estimator, the reward range,
//! the sampling temperature, and the optimizer settings the paper states that do not depend on the
//! model size. Learning rates are left to the model defaults ([`crate::config::pretrained_defaults`]),
//! since the papers' values (1e-6 to 3e-6) are for 1.5B-14B models.
//!
//! - **CPGD** (Liu et al. 2025, arXiv:2505.12504, §5.1 and Table 1): rewards in {0,1}, no
//!   reference KL, temperature 1. The baselines (GRPO with and without clip, dual-clip c = 3, drift,
//!   REINFORCE++, RLOO) are averaged per sequence (the official code's micro-batch of one response);
//!   PG/PGD/CPG/CPGD follow eq. 2 (token mean per prompt group, `A = ω(R - mean R)` with the STD
//!   weight); RLOO whitens the KL-shaped leave-one-out return as the paper writes it.
//! - **CFPO** (Çağatan et al. 2026, arXiv:2601.22801, §5 and eq. 8): GRPO and CFPO with ε = 0.2,
//!   β = 0, per-sequence token mean, group-normalised advantages, rewards in {0,1}, temperature 0.9.
//! - **DGPO** (Fu et al. 2026, arXiv:2603.14389, eq. 10 and §5.1): every method aggregated per
//!   prompt group (eq. 10), group-normalised advantages, rewards in {-1,+1}, no KL, temperature 1,
//!   AdamW β2 = 0.95, gradient clip 1; GRPO with dual-clip c = 3 (the paper's code), CISPO with
//!   two-sided 0.2/0.2 bounds, GPPO/CE-GPPO/ASPO with ε = 0.2, DGPO with (n, m) = (1, 2).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::error::{Error, Result};

/// A seed paper whose settings `--paper` applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Paper {
    /// CPGD, Liu et al. 2025, arXiv:2505.12504.
    Cpgd,
    /// CFPO, Çağatan et al. 2026, arXiv:2601.22801.
    Cfpo,
    /// DGPO, Fu et al. 2026, arXiv:2603.14389.
    Dgpo,
}

/// Every paper, in table order.
pub const PAPERS: [Paper; 3] = [Paper::Cpgd, Paper::Cfpo, Paper::Dgpo];

impl Paper {
    /// Flag value.
    pub fn name(self) -> &'static str {
        match self {
            Self::Cpgd => "cpgd",
            Self::Cfpo => "cfpo",
            Self::Dgpo => "dgpo",
        }
    }

    /// Citation.
    pub fn citation(self) -> &'static str {
        match self {
            Self::Cpgd => "Liu et al. 2025 (CPGD), arXiv:2505.12504 §5.1, eq. 2",
            Self::Cfpo => "Çağatan et al. 2026 (CFPO), arXiv:2601.22801 §5, eq. 8",
            Self::Dgpo => "Fu et al. 2026 (DGPO), arXiv:2603.14389 §5.1, eq. 10",
        }
    }

    /// The objectives the paper ran.
    pub fn objectives(self) -> &'static [&'static str] {
        match self {
            Self::Cpgd => &[
                "grpo",
                "grpo-dual-clip",
                "grpo-no-clip",
                "grpo-drift",
                "reinforce-pp",
                "rloo-ppo",
                "cpgd-pg",
                "pgd",
                "cpg",
                "cpgd",
                "cpgd-official",
            ],
            Self::Cfpo => &["grpo", "cfpo"],
            Self::Dgpo => &["grpo", "cispo", "gppo", "ce-gppo", "aspo", "dgpo"],
        }
    }

    /// Run settings shared by every objective of the paper.
    fn common(self) -> Value {
        match self {
            Self::Cpgd => json!({ "reward": "binary", "temperature": 1.0, "overrides": { "kl_coef": 0.0 } }),
            Self::Cfpo => json!({
                "reward": "binary", "temperature": 0.9,
                "overrides": { "kl_coef": 0.0, "aggregation": "seq-mean-token-mean", "advantage": "group-norm" }
            }),
            Self::Dgpo => json!({
                "reward": "signed", "temperature": 1.0, "adam_beta2": 0.95, "grad_clip": 1.0,
                "overrides": { "kl_coef": 0.0, "aggregation": "group-token-mean", "advantage": "group-norm" }
            }),
        }
    }

    /// The objective-specific overrides.
    fn objective_overrides(self, objective: &str) -> Value {
        let seq = "seq-mean-token-mean";
        match (self, objective) {
            (Self::Cpgd, "grpo" | "grpo-no-clip") => {
                json!({ "aggregation": seq, "advantage": "group-norm" })
            }
            (Self::Cpgd, "grpo-dual-clip") => {
                json!({ "aggregation": seq, "advantage": "group-norm", "dual_clip": 3.0 })
            }
            (Self::Cpgd, "grpo-drift") => {
                json!({ "aggregation": seq, "advantage": "group-norm", "drift_coef": 0.01, "drift_clip": 2.0 })
            }
            (Self::Cpgd, "reinforce-pp") => json!({ "aggregation": seq, "advantage": "reinforce++" }),
            (Self::Cpgd, "rloo-ppo") => json!({ "aggregation": seq, "advantage": "rloo-cpgd" }),
            (Self::Cpgd, "cpgd-pg") => json!({ "aggregation": "group-token-mean", "advantage": "cpgd" }),
            (Self::Cpgd, "pgd") => json!({
                "aggregation": "group-token-mean", "advantage": "cpgd", "drift_coef": 0.01, "drift_clip": 2.0
            }),
            (Self::Cpgd, "cpg") => {
                json!({ "aggregation": "group-token-mean", "advantage": "cpgd", "clip_eps": 0.2 })
            }
            (Self::Cpgd, "cpgd") => json!({
                "aggregation": "group-token-mean", "advantage": "cpgd", "clip_eps": 0.2,
                "drift_coef": 0.01, "drift_clip": 2.0
            }),
            (Self::Cpgd, "cpgd-official") => json!({
                "aggregation": seq, "advantage": "cpgd", "clip_eps": 0.2, "drift_coef": 0.01, "drift_clip": 2.0
            }),
            (Self::Cfpo, "cfpo") => json!({ "clip_eps": 0.2 }),
            (Self::Dgpo, "grpo") => json!({ "clip_low": 0.2, "clip_high": 0.2, "dual_clip": 3.0 }),
            (Self::Dgpo, "dgpo") => json!({ "clip_low": 0.2, "clip_high": 0.2, "dgpo_n": 1.0, "dgpo_m": 2.0 }),
            _ => json!({ "clip_low": 0.2, "clip_high": 0.2 }),
        }
    }
}

/// Fails unless `paper` ran `objective`, naming the ones it did.
pub fn check(paper: Paper, objective: &str) -> Result<()> {
    if paper.objectives().contains(&objective) {
        return Ok(());
    }
    Err(Error::invalid_config(format!(
        "--paper {}: the paper ran {}; `{objective}` is not one of them",
        paper.name(),
        paper.objectives().join(", ")
    )))
}

/// The settings `paper` gives `objective`, as a config overlay (JSON object, overrides under
/// `overrides`).
pub fn overlay(paper: Paper, objective: &str) -> Result<Value> {
    check(paper, objective)?;
    let mut v = paper.common();
    let extra = paper.objective_overrides(objective);
    if let (Some(Value::Object(o)), Value::Object(e)) = (v.get_mut("overrides"), extra) {
        o.extend(e);
    }
    Ok(v)
}

/// The presets as a Markdown table (for `rltrain objectives`).
pub fn render_table() -> String {
    let mut s = String::from("| --paper | objectives | settings | source |\n|---|---|---|---|\n");
    for p in PAPERS {
        let common = p.common();
        let settings: Vec<String> = crate::config::flat_settings(&common);
        s.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            p.name(),
            p.objectives().join(", "),
            settings.join(", "),
            p.citation()
        ));
    }
    s
}
