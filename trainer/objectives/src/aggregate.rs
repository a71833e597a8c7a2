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

    /// The mode `name` names ([`AggMode::name`]), in any case, with `_` for `-`; a mode that
    /// carries a length gets [`AggMode::ALL`]'s placeholder, which the runtime sets.
    pub fn from_name(name: &str) -> Result<Self> {
        let key = name.trim().to_lowercase().replace('_', "-");
        Self::ALL.into_iter().find(|m| m.name() == key).ok_or_else(|| {
            let valid: Vec<&str> = Self::ALL.iter().map(|m| m.name()).collect();
            Error::InvalidConfig(format!("unknown aggregation `{name}`; valid: {}", valid.join(", ")))
        })
    }

    /// What the mode computes, in one line (the help of `--aggregation`).
    pub fn help(&self) -> &'static str {
        match self {
            Self::TokenMean => "Mean over every valid token of the mini-batch",
            Self::SeqMeanTokenMean => "Token mean per response, then mean over responses",
            Self::SeqMeanTokenSum => "Token sum per response, then mean over responses",
            Self::SeqMeanTokenSumNorm { .. } => "verl's token sum over a fixed length",
            Self::DrGrpo { .. } => "Dr.GRPO: token sum over `B·L_max`",
            Self::GroupTokenMean => "Token mean per prompt group, then mean over groups",
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

crate::names::serde_by_name!(AggMode, "an aggregation name");

/// `--aggregation` takes the modes by [`AggMode::name`] (with the placeholder lengths of
/// [`AggMode::ALL`]).
#[cfg(feature = "cli")]
impl clap::ValueEnum for AggMode {
    fn value_variants<'a>() -> &'a [Self] {
        &Self::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()).help(self.help()))
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
    /// The longest response: the padded width of the whole mini-batch, which each micro-batch
    /// (padded to its own longest row) uses for `seq-mean-token-sum-norm` (0: the mask's width).
    pub max_len: usize,
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
            g.max_len = g.max_len.max(len);
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
        self.max_len = self.max_len.max(other.max_len);
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
    let padded = match global {
        Some(g) if g.max_len > 0 => g.max_len as f64,
        _ => mask.dim(1)? as f64,
    };
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every mode is written by its name and read back in any case (`_` for `-` too), with the
    /// placeholder length of [`AggMode::ALL`]; a wrong name lists the right ones.
    #[test]
    fn names_round_trip() {
        for m in AggMode::ALL {
            let text = serde_json::to_string(&m).unwrap();
            assert_eq!(text, format!("\"{}\"", m.name()));
            assert_eq!(serde_json::from_str::<AggMode>(&text.to_uppercase().replace('-', "_")).unwrap(), m);
        }
        let err = serde_json::from_str::<AggMode>("\"token-sum\"").unwrap_err().to_string();
        assert!(err.contains("group-token-mean"), "{err}");
    }
    use candle_core::Device;

    /// A right-padded mask of `lengths`, as wide as the longest.
    fn mask(lengths: &[usize]) -> Tensor {
        let width = lengths.iter().copied().max().unwrap_or(0);
        let rows: Vec<f64> =
            lengths.iter().flat_map(|&l| (0..width).map(move |t| if t < l { 1.0 } else { 0.0 })).collect();
        Tensor::from_vec(rows, (lengths.len(), width), &Device::Cpu).unwrap()
    }

    /// A loss value per token that differs everywhere.
    fn loss(rows: &[usize], width: usize) -> Tensor {
        let v: Vec<f64> = rows.iter().flat_map(|&r| (0..width).map(move |t| 0.3 + r as f64 + 0.1 * t as f64)).collect();
        Tensor::from_vec(v, (rows.len(), width), &Device::Cpu).unwrap()
    }

    #[test]
    fn micro_batches_with_the_global_normalisers_sum_to_the_whole_mini_batch() {
        // Rows of different lengths and groups, split into micro-batches each padded to its own
        // longest row (as the trainer lays them out): token-mean must stay the mean over every
        // token of the mini-batch, not a mean of micro-batch means, and so on for each mode.
        let lengths = [5usize, 1, 3, 7, 2, 2, 6];
        let groups = [0usize, 0, 1, 1, 1, 2, 2];
        let all: Vec<usize> = (0..lengths.len()).collect();
        let global = GlobalNorm::from_lengths(&lengths, Some(&groups)).unwrap();
        let modes = [
            AggMode::TokenMean,
            AggMode::SeqMeanTokenMean,
            AggMode::SeqMeanTokenSum,
            AggMode::SeqMeanTokenSumNorm { l_norm: None },
            AggMode::SeqMeanTokenSumNorm { l_norm: Some(9) },
            AggMode::DrGrpo { l_max: 8 },
            AggMode::GroupTokenMean,
        ];
        for mode in modes {
            let whole = aggregate(mode, &loss(&all, 7), &mask(&lengths), Some(&groups)).unwrap();
            let whole = whole.to_scalar::<f64>().unwrap();
            for micro in [1, 2, 3] {
                let mut sum = 0.0;
                for part in all.chunks(micro) {
                    let lens: Vec<usize> = part.iter().map(|&i| lengths[i]).collect();
                    let ids: Vec<usize> = part.iter().map(|&i| groups[i]).collect();
                    let m = mask(&lens);
                    let w = weights(mode, &m, Some(&ids), Some(&global)).unwrap();
                    let l = aggregate_with(&loss(part, m.dim(1).unwrap()), &w, &m).unwrap();
                    sum += l.to_scalar::<f64>().unwrap();
                }
                assert!((sum - whole).abs() < 1e-12, "{mode} in micro-batches of {micro}: {sum} vs {whole}");
            }
        }
    }
}
