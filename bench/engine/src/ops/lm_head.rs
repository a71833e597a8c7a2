//! Log-prob of each target token and the entropy of the next-token distribution straight from
//! hidden states, `chunk` tokens at a time, so the `[N, V]` logits are never in memory at once
//! (the memory-saving idea of Liger Kernel's fused linear cross-entropy, Hsu et al.,
//! arXiv:2410.10989). Per chunk the forward computes the LM-head product, the log-softmax, the
//! target's log-prob and the entropy ([`crate::logprob`]) and keeps nothing but the `[N, 2]`
//! result; the backward recomputes each chunk's logits and takes `d logits` (`[chunk, V]`) to
//! `d hidden = d logits · W` and `d W += d logitsᵀ · hidden`. Any device and float dtype: the
//! products are candle matmuls, the per-row statistics the CPU f32 kernel of [`crate::logprob`]
//! or its composite elsewhere; logits are taken to f32 (f64 models stay f64).

use super::{precomputed_forward, Precomputed};
use crate::error::{Error, Result};
use crate::logprob::{logits_gradient, token_logprob_entropy};
use candle_core::{CustomOp3, DType, Tensor};

/// Bytes of one chunk's f32 logits: the chunk is the most rows that fit (at least one).
pub const CHUNK_LOGIT_BYTES: usize = 32 << 20;

/// Rows per chunk for a vocabulary of `vocab`.
pub fn chunk_rows(vocab: usize) -> usize {
    (CHUNK_LOGIT_BYTES / (4 * vocab).max(1)).max(1)
}

/// `(log p(target), entropy)` per row of `hidden` `[N, D]` under `softmax(hidden · Wᵀ / temperature)`
/// with the LM head `w` `[V, D]` and `targets` `[N]` (u32, below `V`); both `[N]`, with gradients
/// into `hidden` and `w`.
pub fn logprob_entropy(hidden: &Tensor, w: &Tensor, targets: &Tensor, temperature: f64) -> Result<(Tensor, Tensor)> {
    logprob_entropy_chunked(hidden, w, targets, temperature, chunk_rows(w.dim(0)?))
}

/// [`logprob_entropy`] with `chunk` rows per chunk.
pub fn logprob_entropy_chunked(
    hidden: &Tensor,
    w: &Tensor,
    targets: &Tensor,
    temperature: f64,
    chunk: usize,
) -> Result<(Tensor, Tensor)> {
    let (n, d) = hidden.dims2()?;
    let (v, wd) = w.dims2()?;
    if wd != d || targets.dims() != [n] {
        return Err(Error::Request(format!(
            "lm-head log-probs: hidden {:?}, head {:?}, targets {:?} do not fit",
            hidden.dims(),
            w.dims(),
            targets.dims()
        )));
    }
    if !(temperature.is_finite() && temperature > 0.0) {
        return Err(Error::Request(format!("temperature must be positive, got {temperature}")));
    }
    let targets = targets.to_dtype(DType::U32)?.contiguous()?;
    if let Some(&bad) = targets.to_vec1::<u32>()?.iter().find(|&&t| t as usize >= v) {
        return Err(Error::Request(format!("lm-head log-probs: target {bad} outside the vocabulary of {v}")));
    }
    let chunk = chunk.max(1);
    let (hd, wd) = (hidden.detach(), w.detach());
    let mut parts = Vec::with_capacity(n.div_ceil(chunk));
    for i0 in (0..n).step_by(chunk) {
        let rows = chunk.min(n - i0);
        let logits = chunk_logits(&hd.narrow(0, i0, rows)?, &wd)?;
        let (lp, h) = token_logprob_entropy(&logits, &targets.narrow(0, i0, rows)?, temperature)?;
        parts.push(Tensor::stack(&[lp, h], 1)?);
    }
    let out =
        if parts.is_empty() { Tensor::zeros((0, 2), DType::F32, hidden.device())? } else { Tensor::cat(&parts, 0)? };
    let op = LmHeadLogProb { temperature, chunk, out: Precomputed::new(&out)? };
    let out = hidden.apply_op3(w, &targets, op)?;
    Ok((out.narrow(1, 0, 1)?.squeeze(1)?, out.narrow(1, 1, 1)?.squeeze(1)?))
}

/// Logits `[rows, V]` of hidden rows, in f32 (f64 for f64 models), as the network's linear
/// layers compute them (`w · hᵀ`, transposed).
fn chunk_logits(h: &Tensor, w: &Tensor) -> Result<Tensor> {
    let logits = w.matmul(&h.t()?)?.t()?;
    Ok(if logits.dtype() == DType::F64 { logits } else { logits.to_dtype(DType::F32)? })
}

/// The op: its forward hands out the per-chunk results, its backward recomputes each chunk.
struct LmHeadLogProb {
    temperature: f64,
    chunk: usize,
    out: Precomputed,
}

impl LmHeadLogProb {
    fn backward(
        &self,
        hidden: &Tensor,
        w: &Tensor,
        targets: &Tensor,
        grad: &Tensor,
    ) -> Result<(Tensor, Option<Tensor>)> {
        // The head's gradient only where it is trained (a frozen head skips the `[V, D]` products).
        let want_dw = w.track_op();
        let (hidden, w, grad) = (hidden.detach(), w.detach(), grad.detach());
        let n = hidden.dim(0)?;
        let mut dh = Vec::with_capacity(n.div_ceil(self.chunk));
        let mut dw: Option<Tensor> = None;
        for i0 in (0..n).step_by(self.chunk) {
            let rows = self.chunk.min(n - i0);
            let h = hidden.narrow(0, i0, rows)?;
            let logits = chunk_logits(&h, &w)?;
            let g = grad.narrow(0, i0, rows)?;
            let dlogits = logits_gradient(&logits, &targets.narrow(0, i0, rows)?, &g, self.temperature)?;
            drop(logits);
            let dlogits = dlogits.to_dtype(w.dtype())?;
            dh.push(dlogits.matmul(&w)?);
            if want_dw {
                let part = dlogits.t()?.matmul(&h)?;
                dw = Some(match dw {
                    Some(acc) => (acc + part)?,
                    None => part,
                });
            }
        }
        let dh = if dh.is_empty() { hidden.zeros_like()? } else { Tensor::cat(&dh, 0)? };
        Ok((dh, dw))
    }
}

impl CustomOp3 for LmHeadLogProb {
    fn name(&self) -> &'static str {
        "lm-head-logprob-entropy"
    }

    precomputed_forward!(out);

    fn bwd(
        &self,
        hidden: &Tensor,
        w: &Tensor,
        targets: &Tensor,
        _res: &Tensor,
        grad: &Tensor,
    ) -> candle_core::Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        let (dh, dw) = self.backward(hidden, w, targets, grad).map_err(candle_core::Error::wrap)?;
        Ok((Some(dh), dw, None))
    }
}
