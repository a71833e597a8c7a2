//! Loss aggregation modes (verl's names, plus the per-group token mean of CPGD arXiv:2505.12504
//! eq. 2 and DGPO arXiv:2603.14389 eq. 10). Every mode is a constant weight matrix `W[B,T]` with the
//! scalar loss `Σ W·ℓ` over valid tokens, so normalisers can be global to the optimizer step
//! ([`GlobalNorm`]) while each micro-batch only sees its own rows.

use std::collections::BTreeMap;

use candle_core::{DType, Tensor};

use crate::error::{Error, Result};

/// How the per-token loss matrix becomes a scalar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggMode {
    /// `Σ mℓ / Σ m` (verl default; DAPO, CISPO, GPG, DGPO code).
    TokenMean,
    /// `(1/B) Σ_i Σ_t mℓ / |o_i|` (original GRPO, GSPO, GMPO, SAPO, CFPO eq. 8).
    SeqMeanTokenMean,
    /// `(1/B) Σ_i Σ_t mℓ` (sequence-level REINFORCE/RLOO).
    SeqMeanTokenSum,
    /// verl's `seq-mean-token-sum-norm`: `Σ mℓ / L_norm`; `None` = padded length of the batch.
    SeqMeanTokenSumNorm {
        /// `loss_scale_factor`.
        l_norm: Option<usize>,
    },
    /// Dr.GRPO (paper, TRL `dr_grpo`): `Σ mℓ / (B·L_max)` with a fixed `L_max`.
    DrGrpo {
        /// Maximum generation length.
        l_max: usize,
    },
    /// Per-prompt-group token mean, then mean over groups (CPGD eq. 2, DGPO eq. 10).
    GroupTokenMean,
}

impl AggMode {
    /// Every mode, with placeholder lengths where the mode carries one.
    pub const ALL: [AggMode; 6] = [
        AggMode::TokenMean,
        AggMode::SeqMeanTokenMean,
        AggMode::SeqMeanTokenSum,
        AggMode::SeqMeanTokenSumNorm { l_norm: None },
        AggMode::DrGrpo { l_max: 4096 },
        AggMode::GroupTokenMean,
    ];

    /// verl-style name of the mode.
    pub fn name(&self) -> &'static str {
        match self {
            Self::TokenMean => "token-mean",
            Self::SeqMeanTokenMean => "seq-mean-token-mean",
            Self::SeqMeanTokenSum => "seq-mean-token-sum",
            Self::SeqMeanTokenSumNorm { .. } => "seq-mean-token-sum-norm",
            Self::DrGrpo { .. } => "dr-grpo",
            Self::GroupTokenMean => "group-token-mean",
        }
    }

    /// Whether the mode needs prompt-group ids.
    pub fn needs_groups(&self) -> bool {
        matches!(self, Self::GroupTokenMean)
    }
}

impl std::fmt::Display for AggMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::SeqMeanTokenSumNorm { l_norm: Some(l) } => write!(f, "{}(L={l})", self.name()),
            Self::DrGrpo { l_max } => write!(f, "{}(L_max={l_max})", self.name()),
            _ => f.write_str(self.name()),
        }
    }
}

/// Normalisers of a whole mini-batch (all micro-batches, all ranks), as verl passes the mini-batch's token count to each micro-batch.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GlobalNorm {
    /// Valid tokens in the mini-batch.
    pub n_tokens: f64,
    /// Responses in the mini-batch.
    pub n_seqs: f64,
    /// Valid tokens per prompt group.
    pub group_tokens: BTreeMap<usize, f64>,
}

impl GlobalNorm {
    /// Normalisers from per-response lengths (valid tokens) and group ids.
    pub fn from_lengths(lengths: &[usize], groups: Option<&[usize]>) -> Result<Self> {
        let mut g = Self { n_seqs: lengths.len() as f64, ..Self::default() };
        if let Some(ids) = groups {
            if ids.len() != lengths.len() {
                return Err(Error::InvalidInput(format!("{} group ids for {} responses", ids.len(), lengths.len())));
            }
        }
        for (i, &len) in lengths.iter().enumerate() {
            g.n_tokens += len as f64;
            if let Some(ids) = groups {
                *g.group_tokens.entry(ids[i]).or_insert(0.0) += len as f64;
            }
        }
        Ok(g)
    }

    /// Merges the normalisers of another part of the mini-batch (another micro-batch or rank).
    pub fn merge(&mut self, other: &GlobalNorm) {
        self.n_tokens += other.n_tokens;
        self.n_seqs += other.n_seqs;
        for (k, v) in &other.group_tokens {
            *self.group_tokens.entry(*k).or_insert(0.0) += v;
        }
    }
}

/// Valid tokens per row of a `[B,T]` mask (non-zero entries).
pub fn row_lengths(mask: &Tensor) -> Result<Vec<usize>> {
    let counts = mask.ne(0.0)?.to_dtype(DType::F64)?.sum(1)?.to_vec1::<f64>()?;
    Ok(counts.into_iter().map(|c| c as usize).collect())
}

/// The weight matrix `W[B,T]` of `mode` for this micro-batch; `global` defaults to this batch.
pub fn weights(mode: AggMode, mask: &Tensor, groups: Option<&[usize]>, global: Option<&GlobalNorm>) -> Result<Tensor> {
    let lens = row_lengths(mask)?;
    if mode.needs_groups() && groups.is_none() {
        return Err(Error::InvalidInput(format!("aggregation {} needs prompt-group ids", mode.name())));
    }
    let local;
    let g = match global {
        Some(g) => g,
        None => {
            local = GlobalNorm::from_lengths(&lens, groups)?;
            &local
        }
    };
    let inv = |d: f64| if d > 0.0 { 1.0 / d } else { 0.0 };
    let padded = mask.dim(1)? as f64;
    let n_groups = g.group_tokens.len() as f64;
    let mut factors = Vec::with_capacity(lens.len());
    for (i, &len) in lens.iter().enumerate() {
        let f = match mode {
            AggMode::TokenMean => inv(g.n_tokens),
            AggMode::SeqMeanTokenMean => inv(g.n_seqs * len as f64),
            AggMode::SeqMeanTokenSum => inv(g.n_seqs),
            AggMode::SeqMeanTokenSumNorm { l_norm } => inv(l_norm.map_or(padded, |l| l as f64)),
            AggMode::DrGrpo { l_max } => inv(g.n_seqs * l_max as f64),
            AggMode::GroupTokenMean => {
                let id = groups.and_then(|ids| ids.get(i)).copied().ok_or_else(|| {
                    Error::InvalidInput(format!(
                        "{} group ids for {} responses",
                        groups.map_or(0, <[usize]>::len),
                        lens.len()
                    ))
                })?;
                let tok = g.group_tokens.get(&id).copied().unwrap_or(0.0);
                inv(n_groups * tok)
            }
        };
        factors.push(f);
    }
    let col = Tensor::from_vec(factors, (lens.len(), 1), mask.device())?.to_dtype(mask.dtype())?;
    let m = mask.ne(0.0)?.to_dtype(mask.dtype())?;
    Ok(m.broadcast_mul(&col)?)
}

/// `Σ W·ℓ` over valid tokens (padding is selected away, so a NaN there cannot leak in).
pub fn aggregate_with(loss: &Tensor, weights: &Tensor, mask: &Tensor) -> Result<Tensor> {
    let keep = mask.ne(0.0)?;
    let clean = keep.where_cond(loss, &loss.zeros_like()?.detach())?;
    Ok((clean * weights)?.sum_all()?)
}

/// Aggregates `loss` with `mode` using this batch's normalisers.
pub fn aggregate(mode: AggMode, loss: &Tensor, mask: &Tensor, groups: Option<&[usize]>) -> Result<Tensor> {
    let w = weights(mode, mask, groups, None)?;
    aggregate_with(loss, &w, mask)
}
