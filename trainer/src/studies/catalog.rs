//! The studies: one entry per seed paper, with the settings its findings run under and the
//! findings themselves as paired comparisons (`rltrain study NAME`).
//!
//! A finding names two arms (objective × iterations over each rollout) of one setting, the metric
//! that carries the paper's claim and the sign the paper predicts for `a - b`. A finding about a
//! baseline that *degrades* first needs the baseline to learn at all: `requires_learning` names the
//! arm whose mean last-10 accuracy must reach [`LEARNED`], else the finding is `not testable`.
//!
//! Why these settings (the tiny model, a few hundred steps, the 2-core machine):
//! - `task:add-small` with one new token (`--max-new-tokens 1`): sums of two digits 0-4 are single
//!   digits, so one sampled token is the whole answer and chance is about 1/15. Every objective,
//!   REINFORCE++ and RLOO included, learns here within 200 steps; with two new tokens (chance
//!   about 1/60, `07` or `7<eos>` to learn) RLOO never left chance in 300 steps and REINFORCE++
//!   learned in some seeds only, so a loss under reuse could not show.
//! - The reuse levels are the papers' stress: 1 iteration is on-policy, 4, 8 and 16 reuse each
//!   rollout for 16, 32 and 64 AdamW steps (4 mini-batches each). At 8 every soft-clip objective's
//!   entropy is gone within 20 steps, so the DGPO study also runs 4.

use super::stats::{self, Direction};
use crate::config::Paper;
use Direction::{Higher, Lower};
use Metric::{Accuracy, Entropy, MaxKl};

/// The mean last-10 accuracy an arm must reach to count as having learned (chance is about 1/15
/// on the one-token tasks; the papers' baselines all learn before they degrade).
pub const LEARNED: f64 = 0.25;

/// The least seeds a report may claim a verdict from (fewer: the smoke test's runs).
pub const MIN_SEEDS: u64 = 8;

/// One arm: an objective at a number of passes over each rollout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arm {
    /// Objective of the registry.
    pub objective: &'static str,
    /// Passes over each rollout batch (`--iterations`).
    pub iterations: usize,
}

impl Arm {
    /// `grpo ×8`.
    pub fn label(&self) -> String {
        format!("{} ×{}", self.objective, self.iterations)
    }

    /// `grpo-it8`, for file and run names.
    pub fn slug(&self) -> String {
        format!("{}-it{}", self.objective, self.iterations)
    }
}

/// A metric a finding is judged on; each is one number per run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Metric {
    /// Mean accuracy over the last 10 steps.
    Accuracy,
    /// Mean per-token entropy of the rollouts over the last 10 steps.
    Entropy,
    /// The largest k3 KL between consecutive policies (`kl/old_k3`, per step) over the run.
    MaxKl,
}

/// The three metrics, in report order.
pub const METRICS: [Metric; 3] = [Metric::Accuracy, Metric::Entropy, Metric::MaxKl];

impl Metric {
    /// Column text.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Accuracy => "acc last 10",
            Metric::Entropy => "entropy last 10",
            Metric::MaxKl => "max KL",
        }
    }

    /// Its place in [`METRICS`] (and in every per-metric array).
    pub fn index(self) -> usize {
        match self {
            Metric::Accuracy => 0,
            Metric::Entropy => 1,
            Metric::MaxKl => 2,
        }
    }

    /// The paired difference over seeds a finding reports: `a - b` for accuracy and entropy, the
    /// log ratio `ln a - ln b` for the largest KL, which spans orders of magnitude across seeds
    /// ([`stats::paired_log_ratio`]).
    pub fn paired(self, a: &[f64], b: &[f64]) -> stats::Interval {
        match self {
            Metric::MaxKl => stats::paired_log_ratio(a, b),
            _ => stats::paired_difference(a, b),
        }
    }

    /// The interval as the report prints it: signed differences, or ratios for the KL.
    pub fn render(self, interval: &stats::Interval) -> String {
        match self {
            Metric::Accuracy => interval.render(2),
            Metric::Entropy => interval.render(3),
            Metric::MaxKl => interval.render_ratio(2),
        }
    }

    /// The per-step key of `metrics.jsonl` it is computed from.
    pub fn key(self) -> &'static str {
        match self {
            Metric::Accuracy => "acc",
            Metric::Entropy => "entropy",
            Metric::MaxKl => "kl/old_k3",
        }
    }
}

/// One training setting of a study: task, horizon and the arms it runs.
#[derive(Debug, Clone, Copy)]
pub struct Setting {
    /// Name in the report and the run folders.
    pub name: &'static str,
    /// `--data`.
    pub data: &'static str,
    /// `--max-new-tokens`.
    pub max_new_tokens: usize,
    /// Training steps.
    pub steps: u64,
    /// Learning rate.
    pub lr: f64,
    /// Mini-batches per pass over the rollout.
    pub mini_batches: usize,
    /// Objectives run.
    pub objectives: &'static [&'static str],
    /// Iteration levels each objective runs at.
    pub iterations: &'static [usize],
    /// Why this setting: what it lets the findings show.
    pub why: &'static str,
}

/// One finding of the paper as a paired comparison over seeds.
#[derive(Debug, Clone, Copy)]
pub struct Finding {
    /// Short id (`dgpo-entropy-cispo`), also the plots' file prefix.
    pub id: &'static str,
    /// The paper's claim in a sentence.
    pub claim: &'static str,
    /// The setting it runs in.
    pub setting: &'static str,
    /// First arm.
    pub a: Arm,
    /// Second arm; the finding is about `a - b`.
    pub b: Arm,
    /// The metric that carries the claim.
    pub metric: Metric,
    /// The sign the paper predicts for `a - b`.
    pub direction: Direction,
    /// An arm that must learn first (see [`LEARNED`]).
    pub requires_learning: Option<Arm>,
}

impl Finding {
    /// What the paper predicts, as the report states it: `Δ entropy last 10 > 0`, `max KL a / b < 1`.
    pub fn prediction(&self) -> String {
        match self.metric {
            Metric::MaxKl => format!("max KL a / b {} 1", self.direction.symbol()),
            m => format!("Δ {} {} 0", m.label(), self.direction.symbol()),
        }
    }
}

/// A study: one paper's stability findings.
#[derive(Debug, Clone, Copy)]
pub struct Study {
    /// `rltrain study NAME`.
    pub name: &'static str,
    /// The paper whose settings every run takes (`--paper`).
    pub paper: Paper,
    /// The paper's finding in a sentence, with where it is stated.
    pub claim: &'static str,
    /// The settings, in run order.
    pub settings: &'static [Setting],
    /// The findings, in report order.
    pub findings: &'static [Finding],
    /// Seeds per arm unless `--seeds` says otherwise: as many as keep the study under 30 minutes
    /// on a 2-core machine.
    pub seeds: u64,
}

impl Study {
    /// The study called `name`, in any case.
    pub fn from_name(name: &str) -> Option<&'static Study> {
        STUDIES.iter().find(|s| s.name.eq_ignore_ascii_case(name.trim()))
    }

    /// The setting called `name`.
    pub fn setting(&self, name: &str) -> Option<&'static Setting> {
        self.settings.iter().find(|s| s.name == name)
    }
}

const fn arm(objective: &'static str, iterations: usize) -> Arm {
    Arm { objective, iterations }
}

/// A finding of the `reuse` setting: `a` against `b` on `metric`, in the predicted `direction`.
const fn compare(
    id: &'static str,
    claim: &'static str,
    a: Arm,
    b: Arm,
    metric: Metric,
    direction: Direction,
) -> Finding {
    Finding { id, claim, setting: "reuse", a, b, metric, direction, requires_learning: None }
}

/// A finding of the `reuse` setting: `objective`'s accuracy falls from 1 iteration to
/// `iterations`. The 1-iteration arm must learn first.
const fn degrades(id: &'static str, claim: &'static str, objective: &'static str, iterations: usize) -> Finding {
    Finding {
        id,
        claim,
        setting: "reuse",
        a: arm(objective, iterations),
        b: arm(objective, 1),
        metric: Metric::Accuracy,
        direction: Direction::Lower,
        requires_learning: Some(arm(objective, 1)),
    }
}

/// The one setting every study runs: `task:add-small` with one new token, 200 steps.
const fn reuse(objectives: &'static [&'static str], iterations: &'static [usize]) -> Setting {
    Setting {
        name: "reuse",
        data: "task:add-small",
        max_new_tokens: 1,
        steps: 200,
        lr: 1e-3,
        mini_batches: 4,
        objectives,
        iterations,
        why: "sums of two digits 0-4 answered in one token (chance about 1/15): every objective learns on-policy \
              here, so a loss under reuse can show",
    }
}

/// Every study.
pub static STUDIES: &[Study] = &[
    Study {
        name: "cfpo",
        paper: Paper::Cfpo,
        seeds: 12,
        claim: "GRPO degrades as each rollout is reused for more passes (1 → 16 iterations); CFPO's quadratic \
                penalty keeps it stable (Çağatan et al. 2026, arXiv:2601.22801 §5)",
        settings: &[reuse(&["grpo", "cfpo"], &[1, 4, 8, 16])],
        findings: &[
            degrades("cfpo-grpo-degrades", "GRPO's accuracy falls when each rollout is reused 16 times", "grpo", 16),
            compare(
                "cfpo-accuracy",
                "under 16× reuse CFPO keeps more accuracy than GRPO",
                arm("cfpo", 16),
                arm("grpo", 16),
                Accuracy,
                Higher,
            ),
            compare(
                "cfpo-trust-region",
                "under 16× reuse CFPO stays closer to the sampling policy than GRPO",
                arm("cfpo", 16),
                arm("grpo", 16),
                MaxKl,
                Lower,
            ),
            compare(
                "cfpo-entropy",
                "under 16× reuse CFPO keeps more entropy than GRPO",
                arm("cfpo", 16),
                arm("grpo", 16),
                Entropy,
                Higher,
            ),
        ],
    },
    Study {
        name: "cpgd",
        paper: Paper::Cpgd,
        seeds: 16,
        claim: "RLOO, REINFORCE++ and GRPO without a reference KL degrade when each rollout is reused; CPGD's \
                clipped log-ratio and drift term keep it stable (Liu et al. 2025, arXiv:2505.12504 §5)",
        settings: &[reuse(&["grpo", "reinforce-pp", "rloo-ppo", "cpgd"], &[1, 8])],
        findings: &[
            degrades("cpgd-reinforce-pp-degrades", "REINFORCE++'s accuracy falls under 8× reuse", "reinforce-pp", 8),
            degrades("cpgd-rloo-degrades", "RLOO's accuracy falls under 8× reuse", "rloo-ppo", 8),
            degrades("cpgd-grpo-degrades", "GRPO's accuracy falls under 8× reuse", "grpo", 8),
            compare(
                "cpgd-vs-grpo",
                "under 8× reuse CPGD keeps more accuracy than GRPO",
                arm("cpgd", 8),
                arm("grpo", 8),
                Accuracy,
                Higher,
            ),
            compare(
                "cpgd-vs-reinforce-pp",
                "under 8× reuse CPGD keeps more accuracy than REINFORCE++",
                arm("cpgd", 8),
                arm("reinforce-pp", 8),
                Accuracy,
                Higher,
            ),
            compare(
                "cpgd-vs-rloo",
                "under 8× reuse CPGD keeps more accuracy than RLOO",
                arm("cpgd", 8),
                arm("rloo-ppo", 8),
                Accuracy,
                Higher,
            ),
        ],
    },
    Study {
        name: "dgpo",
        paper: Paper::Dgpo,
        seeds: 16,
        claim: "CISPO and GPPO, which keep gradients outside the trust region at full strength, collapse entropy \
                under sample reuse; DGPO's decayed weights keep it (Fu et al. 2026, arXiv:2603.14389 §5)",
        settings: &[reuse(&["cispo", "gppo", "dgpo"], &[1, 4, 8])],
        findings: &[
            compare(
                "dgpo-entropy-cispo",
                "under 8× reuse DGPO keeps more entropy than CISPO",
                arm("dgpo", 8),
                arm("cispo", 8),
                Entropy,
                Higher,
            ),
            compare(
                "dgpo-entropy-gppo",
                "under 8× reuse DGPO keeps more entropy than GPPO",
                arm("dgpo", 8),
                arm("gppo", 8),
                Entropy,
                Higher,
            ),
            compare(
                "dgpo-entropy-cispo-x4",
                "under 4× reuse DGPO keeps more entropy than CISPO",
                arm("dgpo", 4),
                arm("cispo", 4),
                Entropy,
                Higher,
            ),
            compare(
                "dgpo-entropy-gppo-x4",
                "under 4× reuse DGPO keeps more entropy than GPPO",
                arm("dgpo", 4),
                arm("gppo", 4),
                Entropy,
                Higher,
            ),
            compare(
                "dgpo-kl-cispo",
                "under 8× reuse DGPO moves less between consecutive policies than CISPO",
                arm("dgpo", 8),
                arm("cispo", 8),
                MaxKl,
                Lower,
            ),
            compare(
                "dgpo-kl-gppo",
                "under 8× reuse DGPO moves less between consecutive policies than GPPO",
                arm("dgpo", 8),
                arm("gppo", 8),
                MaxKl,
                Lower,
            ),
            compare(
                "dgpo-accuracy-cispo",
                "under 8× reuse DGPO keeps more accuracy than CISPO",
                arm("dgpo", 8),
                arm("cispo", 8),
                Accuracy,
                Higher,
            ),
            compare(
                "dgpo-accuracy-gppo",
                "under 8× reuse DGPO keeps more accuracy than GPPO",
                arm("dgpo", 8),
                arm("gppo", 8),
                Accuracy,
                Higher,
            ),
        ],
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets;

    #[test]
    fn every_finding_compares_arms_its_setting_runs() {
        for study in STUDIES {
            assert!(!study.findings.is_empty(), "{}", study.name);
            for f in study.findings {
                let setting = study.setting(f.setting).unwrap_or_else(|| panic!("{}: no setting {}", f.id, f.setting));
                for arm in [Some(f.a), Some(f.b), f.requires_learning].into_iter().flatten() {
                    assert!(setting.objectives.contains(&arm.objective), "{}: {}", f.id, arm.objective);
                    assert!(setting.iterations.contains(&arm.iterations), "{}: ×{}", f.id, arm.iterations);
                }
                assert_ne!(f.a, f.b, "{}", f.id);
                assert!(f.id.starts_with(study.name), "{}", f.id);
            }
            for s in study.settings {
                for objective in s.objectives {
                    presets::check(study.paper, objective).unwrap_or_else(|e| panic!("{}: {e}", study.name));
                }
            }
        }
        let ids: std::collections::BTreeSet<_> = STUDIES.iter().flat_map(|s| s.findings).map(|f| f.id).collect();
        assert_eq!(ids.len(), STUDIES.iter().map(|s| s.findings.len()).sum::<usize>(), "finding ids are unique");
        assert!(STUDIES.iter().all(|s| s.seeds >= MIN_SEEDS));
        assert!(METRICS.iter().enumerate().all(|(i, m)| m.index() == i), "index() is the place in METRICS");
    }
}
