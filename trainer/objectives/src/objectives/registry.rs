//! The registry (verl-like): every objective by name, as a recipe (kernel + defaults + aggregation +
//! advantage estimator + optional drift / reference-KL terms), and the combined loss.

use candle_core::Tensor;

use super::cpgd::{self, DriftConfig};
pub use super::table::OBJECTIVES;
use super::{LossInputs, LossTerms, ObjectiveConfig};
use crate::advantage::Estimator;
use crate::aggregate::{aggregate_with, weights, AggMode, GlobalNorm};
use crate::error::{Error, Result};
use crate::kl::{kl_ref_sg, RefKl};
use crate::names::closest;

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
    pub(super) fn plain(objective: ObjectiveConfig, agg: AggMode, advantage: Estimator) -> Self {
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
            let h = inp
                .entropy
                .as_ref()
                .ok_or_else(|| Error::InvalidInput("entropy_coef is set but no token entropy was given".into()))?;
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
    pub fn loss_with(
        &self,
        inp: &LossInputs,
        groups: Option<&[usize]>,
        global: Option<&GlobalNorm>,
    ) -> Result<LossOutput> {
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
    /// Family number (the forms of one method share it: RLOO, CPGD, GSPO, Clip/KL-Cov).
    pub row: u8,
    /// Human-readable title.
    pub title: &'static str,
    /// Paper citation (authors, year, arXiv id).
    pub paper: &'static str,
    /// Which paper (or code) the defaults follow, and the setting that decides it.
    pub follows: &'static str,
    /// Per-token loss and gradient, one line.
    pub formula: &'static str,
    /// How a runtime shapes this objective's rewards and batches by default.
    pub shaping: Shaping,
    pub(super) defaults: fn() -> LossConfig,
}

/// What an objective asks of the runtime around the loss, by default (a user's setting wins):
/// the reward encoding and DAPO's batch and length shaping (arXiv:2503.14476 §3.2, §3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shaping {
    /// Rewards of ±1 instead of {0,1} (DAPO arXiv:2503.14476, DGPO arXiv:2603.14389).
    pub signed_rewards: bool,
    /// DAPO's dynamic sampling: drop groups whose rewards are all equal and refill the batch.
    pub dynamic_sampling: bool,
    /// DAPO's soft overlong punishment with the buffer `L_cache = L_max / N` (`Some(N)`; DAPO
    /// pairs `L_max` = 20480 with `L_cache` = 4096, a fifth); `None` = off.
    pub overlong_buffer_divisor: Option<usize>,
}

impl Shaping {
    /// Nothing beyond the loss: {0,1} rewards, every group kept, no length shaping.
    pub const NONE: Shaping = Shaping { signed_rewards: false, dynamic_sampling: false, overlong_buffer_divisor: None };
    /// DAPO's: ±1 rewards, dynamic sampling, a fifth of the length as the overlong buffer.
    pub const DAPO: Shaping =
        Shaping { signed_rewards: true, dynamic_sampling: true, overlong_buffer_divisor: Some(5) };
}

/// Two entries are the same objective when they have the same name (the registry holds each
/// once).
impl PartialEq for Objective {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for Objective {}

/// An objective is written by its registry name.
impl serde::Serialize for Objective {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name)
    }
}

/// An objective is read by its registry name, in any case and with `_` for `-` (`Dr_GRPO` is
/// `dr-grpo`): the registry's entry, looked up once.
impl<'de> serde::Deserialize<'de> for &'static Objective {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let name = <String as serde::Deserialize>::deserialize(d)?;
        Objective::from_name(&name.replace('_', "-")).map_err(serde::de::Error::custom)
    }
}

impl Objective {
    /// Looks an objective up by name, in any case (`GRPO` is `grpo`); the error names the closest
    /// registered name ("did you mean") and lists every valid one.
    pub fn from_name(name: &str) -> Result<&'static Objective> {
        OBJECTIVES.iter().find(|o| o.name.eq_ignore_ascii_case(name.trim())).ok_or_else(|| Error::UnknownObjective {
            name: name.to_string(),
            suggestion: closest(name, Self::names()),
            valid: Self::names().join(", "),
        })
    }

    /// Every registered name, in table order.
    pub fn names() -> Vec<&'static str> {
        OBJECTIVES.iter().map(|o| o.name).collect()
    }

    /// The registry defaults of this objective (see `follows`).
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
        let mut s = String::from(
            "| name | row | objective | defaults | aggregation | advantage | extra terms | paper | defaults follow |\n",
        );
        s.push_str("|---|---|---|---|---|---|---|---|---|\n");
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
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                o.name,
                o.row,
                o.title,
                format!("{} {}", c.objective.kernel(), c.objective.describe()).trim_end(),
                c.agg,
                c.advantage,
                if extra.is_empty() { "-".to_string() } else { extra.join("; ") },
                o.paper,
                o.follows
            ));
        }
        s
    }
}
