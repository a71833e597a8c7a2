//! Paper presets (`rltrain --paper NAME`): each seed paper's own settings for the objectives it
//! compared, so a comparison from the paper runs by name. A preset fills what the user did not set:
//! the clip widths, the reference KL, the aggregation, the advantage estimator, the reward range,
//! the sampling temperature, and the optimizer settings the paper states that do not depend on the
//! model size. Learning rates are left to the model defaults ([`super::resolve::pretrained_defaults`]),
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

use super::choices::RewardChoice;
use super::flat::flat_entries;
use super::groups::OverridesLayer;
pub use super::paper::{check, Paper, PAPERS};
use super::settings::TrainLayer;
use crate::aggregate::AggMode;
use crate::error::Result;
use rlverify::RewardKind;

/// The settings `paper` gives `objective`, as a layer: [`Paper`]'s common settings, then the
/// objective's own overrides.
pub fn overlay(paper: Paper, objective: &str) -> Result<TrainLayer> {
    check(paper, objective)?;
    let mut layer = common(paper);
    objective_overrides(paper, objective, &mut layer.objective.overrides);
    Ok(layer)
}

/// Run settings shared by every objective of the paper.
fn common(paper: Paper) -> TrainLayer {
    let mut l = TrainLayer::default();
    let (r, o, overrides) = (&mut l.rollout, &mut l.optim, &mut l.objective.overrides);
    overrides.kl_coef = Some(0.0);
    match paper {
        Paper::Cpgd => (r.reward, r.temperature) = (Some(RewardChoice::Kind(RewardKind::Binary)), Some(1.0)),
        Paper::Cfpo => {
            (r.reward, r.temperature) = (Some(RewardChoice::Kind(RewardKind::Binary)), Some(0.9));
            overrides.aggregation = Some(AggMode::SeqMeanTokenMean);
            overrides.advantage = Some("group-norm".into());
        }
        Paper::Dgpo => {
            (r.reward, r.temperature) = (Some(RewardChoice::Kind(RewardKind::Signed)), Some(1.0));
            (o.adam_beta2, o.grad_clip) = (Some(0.95), Some(1.0));
            overrides.aggregation = Some(AggMode::GroupTokenMean);
            overrides.advantage = Some("group-norm".into());
        }
    }
    l
}

/// The objective-specific overrides, over the common ones.
fn objective_overrides(paper: Paper, objective: &str, o: &mut OverridesLayer) {
    use AggMode::{GroupTokenMean as Group, SeqMeanTokenMean as Seq};
    let mut set = |aggregation: AggMode, advantage: &str| {
        (o.aggregation, o.advantage) = (Some(aggregation), Some(advantage.into()));
    };
    match (paper, objective) {
        (Paper::Cpgd, "grpo" | "grpo-no-clip" | "grpo-dual-clip" | "grpo-drift") => set(Seq, "group-norm"),
        (Paper::Cpgd, "reinforce-pp") => set(Seq, "reinforce++"),
        (Paper::Cpgd, "rloo-ppo") => set(Seq, "rloo-cpgd"),
        (Paper::Cpgd, "cpgd-pg" | "pgd" | "cpg" | "cpgd") => set(Group, "cpgd"),
        (Paper::Cpgd, "cpgd-official") => set(Seq, "cpgd"),
        _ => {}
    }
    match (paper, objective) {
        (Paper::Cpgd, "grpo-dual-clip") => o.dual_clip = Some(3.0),
        (Paper::Cpgd, "grpo-drift" | "pgd") => (o.drift_coef, o.drift_clip) = (Some(0.01), Some(2.0)),
        (Paper::Cpgd, "cpg") => o.clip_eps = Some(0.2),
        (Paper::Cpgd, "cpgd" | "cpgd-official") => {
            (o.clip_eps, o.drift_coef, o.drift_clip) = (Some(0.2), Some(0.01), Some(2.0));
        }
        (Paper::Cpgd, _) => {}
        (Paper::Cfpo, "cfpo") => o.clip_eps = Some(0.2),
        (Paper::Cfpo, _) => {}
        (Paper::Dgpo, "grpo") => (o.clip_low, o.clip_high, o.dual_clip) = (Some(0.2), Some(0.2), Some(3.0)),
        (Paper::Dgpo, "dgpo") => {
            (o.clip_low, o.clip_high, o.dgpo_n, o.dgpo_m) = (Some(0.2), Some(0.2), Some(1.0), Some(2.0));
        }
        (Paper::Dgpo, _) => (o.clip_low, o.clip_high) = (Some(0.2), Some(0.2)),
    }
}

/// The presets as a Markdown table (for `rltrain objectives`).
pub fn render_table() -> String {
    let mut s = String::from("| --paper | objectives | settings | source |\n|---|---|---|---|\n");
    for p in PAPERS {
        let layer = common(p);
        fn json(v: impl serde::Serialize) -> serde_json::Value {
            serde_json::to_value(v).unwrap_or_default()
        }
        let overrides: Vec<String> =
            flat_entries(&json(&layer.objective.overrides)).into_iter().map(|(k, _)| k).collect();
        // By name, the objective's overrides together where `overrides` sorts.
        let mut entries = flat_entries(&json(&layer));
        entries.sort_by_key(|(k, _)| (if overrides.contains(k) { "overrides".into() } else { k.clone() }, k.clone()));
        let settings: Vec<String> = entries
            .into_iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().map_or(v.to_string(), String::from)))
            .collect();
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
