//! Log-prob of each target token and the entropy of the next-token distribution straight from
//! hidden states, `chunk` tokens at a time, so the `[N, V]` logits are never in memory at once
//! (the memory-saving idea of Liger Kernel's fused linear cross-entropy, Hsu et al.,
//! arXiv:2410.10989). Per chunk the forward computes the LM-head product, the log-softmax, the
//! target's log-prob and the entropy ([`crate::logprob`]) and keeps nothing but the `[N, 2]`
//! result; the backward recomputes each chunk's logits and takes `d logits` (`[chunk, V]`) to
//! `d hidden = d logits · W` and `d W += d logitsᵀ · hidden`. Any device and float dtype: the
//! products are candle matmuls, the per-row statistics the CPU f32 kernel of [`crate::logprob`]
//! or its composite elsewhere; logits are taken to f32 (f64 models stay f64).
//!
//! On the CPU (f32, bf16, f16) a kernel of its own goes further ([`logprob_entropy_tiled`]): the
//! head is read in blocks of [`VOCAB_BLOCK`] rows (widened to f32 one block at a time), the
//! logits exist only as `[rows, block]` tiles of at most [`ROW_BLOCK`] rows, and the softmax's
//! statistics are carried across blocks online (running maximum, sum of exponentials and the
//! sum the entropy needs), so no `[chunk, V]` tensor exists in either pass; the forward keeps
//! each row's log-sum-exp (a third output column) for the backward, which recomputes each tile,
//! turns it into `d logits` in place and accumulates `d hidden` and the block's `d W` in f32
//! with the `gemm` crate.

use super::gemm::{matmul, narrow, narrow_into, widen, Mat};
use super::{contiguous, cpu_kernel, precomputed_forward, with_float, Elem, Precomputed};
use crate::error::{Error, Result};
use crate::logprob::{logits_gradient, token_logprob_entropy};
use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, CustomOp3, DType, Layout, Shape, Storage, Tensor, WithDType};
use rayon::prelude::*;

/// Head rows per block of the CPU kernel.
pub const VOCAB_BLOCK: usize = 4096;

/// Hidden rows per tile of the CPU kernel.
pub const ROW_BLOCK: usize = 512;

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
    if cpu_kernel(hidden) && w.dtype() == hidden.dtype() && w.device().is_cpu() {
        return logprob_entropy_tiled(hidden, w, targets, temperature, ROW_BLOCK, VOCAB_BLOCK);
    }
    logprob_entropy_chunked(hidden, w, targets, temperature, chunk_rows(w.dim(0)?))
}

/// Checks the arguments; returns the targets as contiguous u32.
fn check(hidden: &Tensor, w: &Tensor, targets: &Tensor, temperature: f64) -> Result<Tensor> {
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
    Ok(targets)
}

/// [`logprob_entropy`] by the CPU kernel, with tiles of `rows` hidden rows by `vocab` head rows
/// (f32, bf16 or f16 CPU tensors of one dtype; other inputs take [`logprob_entropy_chunked`]).
pub fn logprob_entropy_tiled(
    hidden: &Tensor,
    w: &Tensor,
    targets: &Tensor,
    temperature: f64,
    rows: usize,
    vocab: usize,
) -> Result<(Tensor, Tensor)> {
    if !(cpu_kernel(hidden) && w.dtype() == hidden.dtype() && w.device().is_cpu()) {
        return logprob_entropy_chunked(hidden, w, targets, temperature, chunk_rows(w.dim(0)?));
    }
    let targets = check(hidden, w, targets, temperature)?;
    let op = TiledHead { temperature, rows: rows.max(1), vocab: vocab.max(1) };
    let out = hidden.contiguous()?.apply_op3(&w.contiguous()?, &targets, op)?;
    Ok((out.narrow(1, 0, 1)?.squeeze(1)?, out.narrow(1, 1, 1)?.squeeze(1)?))
}

/// [`logprob_entropy`] with `chunk` rows per chunk.
pub fn logprob_entropy_chunked(
    hidden: &Tensor,
    w: &Tensor,
    targets: &Tensor,
    temperature: f64,
    chunk: usize,
) -> Result<(Tensor, Tensor)> {
    let n = hidden.dim(0)?;
    let targets = check(hidden, w, targets, temperature)?;
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

/// The contiguous elements of a CPU tensor argument of any dtype.
fn slice<'a, T: WithDType>(name: &str, s: &'a CpuStorage, l: &Layout) -> candle_core::Result<&'a [T]> {
    match l.contiguous_offsets() {
        Some((a, b)) => Ok(&s.as_slice::<T>()?[a..b]),
        None => candle_core::bail!("{name}: expected a contiguous tensor"),
    }
}

/// The CPU kernel's op: `(hidden [N, D], w [V, D], targets [N])` to `[N, 3]`: log-prob, entropy
/// and the log-sum-exp of `logits / T` (kept for the backward).
struct TiledHead {
    temperature: f64,
    rows: usize,
    vocab: usize,
}

/// A row's online softmax statistics over the blocks seen so far, of `z = logit / T`: the
/// maximum, `s0 = Σ exp(z - max)`, `s1 = Σ exp(z - max) (z - max)` (f64), the target's `z`, and
/// whether a NaN or `+inf` was seen.
#[derive(Clone, Copy)]
struct RowStats {
    max: f32,
    s0: f64,
    s1: f64,
    target: f32,
    bad: bool,
}

impl RowStats {
    const EMPTY: RowStats = RowStats { max: f32::NEG_INFINITY, s0: 0.0, s1: 0.0, target: f32::NAN, bad: false };

    /// Takes in one tile row of logits, the first of which is head row `v0`.
    fn update(&mut self, logits: &[f32], inv_t: f32, v0: usize, target: usize) {
        let mut max = f32::NEG_INFINITY;
        for &x in logits {
            if x.is_nan() || x == f32::INFINITY {
                self.bad = true;
                return;
            }
            max = max.max(x * inv_t);
        }
        if (v0..v0 + logits.len()).contains(&target) {
            self.target = logits[target - v0] * inv_t;
        }
        if max == f32::NEG_INFINITY {
            return;
        }
        if max > self.max {
            if self.max > f32::NEG_INFINITY {
                let shift = f64::from(self.max - max);
                let scale = shift.exp();
                self.s1 = scale * (self.s1 + shift * self.s0);
                self.s0 *= scale;
            }
            self.max = max;
        }
        let (mut s0, mut s1) = (0f64, 0f64);
        for &x in logits {
            let d = x * inv_t - self.max;
            let e = d.exp();
            if e > 0.0 {
                s0 += f64::from(e);
                s1 += f64::from(e) * f64::from(d);
            }
        }
        self.s0 += s0;
        self.s1 += s1;
    }

    /// `(log-prob of the target, entropy, log-sum-exp)`, NaN where `log_softmax` gives NaN.
    fn finish(&self) -> [f32; 3] {
        if self.bad || self.max == f32::NEG_INFINITY {
            return [f32::NAN; 3];
        }
        let log_s = self.s0.ln();
        let lse = f64::from(self.max) + log_s;
        [(f64::from(self.target) - lse) as f32, (log_s - self.s1 / self.s0) as f32, lse as f32]
    }
}

impl TiledHead {
    fn forward<T: Elem>(&self, h: &[T], w: &[T], targets: &[u32], d: usize) -> Vec<f32> {
        let (n, v) = (targets.len(), w.len() / d.max(1));
        let inv_t = (1.0 / self.temperature) as f32;
        let hf = widen(h);
        let mut stats = vec![RowStats::EMPTY; n];
        let (rb, vb) = (self.rows.min(n.max(1)), self.vocab.min(v.max(1)));
        let mut tile = vec![0f32; rb * vb];
        for v0 in (0..v).step_by(vb) {
            let cols = vb.min(v - v0);
            let wf = widen(&w[v0 * d..(v0 + cols) * d]);
            for r0 in (0..n).step_by(rb) {
                let r = rb.min(n - r0);
                let tile = &mut tile[..r * cols];
                matmul(r, cols, d, tile, false, Mat::rows(&hf[r0 * d..(r0 + r) * d], d), Mat::transposed(&wf, d));
                stats[r0..r0 + r]
                    .par_iter_mut()
                    .zip(tile.par_chunks(cols))
                    .zip(&targets[r0..r0 + r])
                    .for_each(|((st, row), &y)| st.update(row, inv_t, v0, y as usize));
            }
        }
        stats.iter().flat_map(RowStats::finish).collect()
    }

    /// `d hidden` and (when `want_dw`) `d w` from the output gradient `go` `[N, 2]` and the
    /// forward's `[N, 3]` result.
    #[allow(clippy::too_many_arguments)]
    fn backward<T: Elem>(
        &self,
        h: &[T],
        w: &[T],
        targets: &[u32],
        res: &[f32],
        go: &[f32],
        d: usize,
        want_dw: bool,
    ) -> (Vec<T>, Vec<T>) {
        let (n, v) = (targets.len(), w.len() / d.max(1));
        let inv_t = (1.0 / self.temperature) as f32;
        let hf = widen(h);
        let mut dh = vec![0f32; n * d];
        let mut dw = if want_dw { vec![T::from_f32(0.0); v * d] } else { Vec::new() };
        let (rb, vb) = (self.rows.min(n.max(1)), self.vocab.min(v.max(1)));
        let mut tile = vec![0f32; rb * vb];
        let mut dwb = vec![0f32; if want_dw { vb * d } else { 0 }];
        for v0 in (0..v).step_by(vb) {
            let cols = vb.min(v - v0);
            let wf = widen(&w[v0 * d..(v0 + cols) * d]);
            for r0 in (0..n).step_by(rb) {
                let r = rb.min(n - r0);
                let tile = &mut tile[..r * cols];
                let hr = Mat::rows(&hf[r0 * d..(r0 + r) * d], d);
                matmul(r, cols, d, tile, false, hr, Mat::transposed(&wf, d));
                let rows = res[3 * r0..3 * (r0 + r)].par_chunks(3).zip(go[2 * r0..2 * (r0 + r)].par_chunks(2));
                tile.par_chunks_mut(cols).zip(rows).zip(&targets[r0..r0 + r]).for_each(|((row, (st, g)), &y)| {
                    let (entropy, lse) = (st[1], st[2]);
                    let (g_lp, g_h) = (g[0], g[1]);
                    if !(entropy.is_finite() && lse.is_finite()) {
                        row.fill(f32::NAN);
                        return;
                    }
                    for x in row.iter_mut() {
                        let log_p = *x * inv_t - lse;
                        let p = log_p.exp();
                        let h_term = if p > 0.0 { -g_h * p * (log_p + entropy) } else { 0.0 };
                        *x = (-g_lp * p + h_term) * inv_t;
                    }
                    if let Some(x) = (y as usize).checked_sub(v0).and_then(|j| row.get_mut(j)) {
                        *x += g_lp * inv_t;
                    }
                });
                matmul(r, d, cols, &mut dh[r0 * d..(r0 + r) * d], true, Mat::rows(tile, cols), Mat::rows(&wf, d));
                if want_dw {
                    let dwb = &mut dwb[..cols * d];
                    matmul(cols, d, r, dwb, r0 > 0, Mat::transposed(tile, cols), hr);
                }
            }
            if want_dw {
                narrow_into(&dwb[..cols * d], &mut dw[v0 * d..(v0 + cols) * d]);
            }
        }
        (narrow(dh), dw)
    }
}

impl CustomOp3 for TiledHead {
    fn name(&self) -> &'static str {
        "lm-head-logprob-entropy-tiled"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
        s3: &CpuStorage,
        l3: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let name = self.name();
        let (n, d) = l1.shape().dims2()?;
        let targets = slice::<u32>(name, s3, l3)?;
        let out = with_float!(name, s1.dtype(), |E| {
            let (h, w) = (contiguous::<E>(name, s1, l1)?, contiguous::<E>(name, s2, l2)?);
            self.forward(h, w, targets, d)
        });
        Ok((CpuStorage::F32(out), Shape::from((n, 3))))
    }

    fn bwd(
        &self,
        hidden: &Tensor,
        w: &Tensor,
        targets: &Tensor,
        res: &Tensor,
        grad: &Tensor,
    ) -> candle_core::Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        // One pass gives both gradients (a custom op has one output), written straight into
        // tensors of their own: the backward is not recorded as a graph.
        let name = self.name();
        let want_dw = w.track_op();
        let go = grad.narrow(1, 0, 2)?.to_dtype(DType::F32)?.contiguous()?;
        let res = res.to_dtype(DType::F32)?.contiguous()?;
        let ((n, d), v) = (hidden.dims2()?, w.dim(0)?);
        let (hs, hl) = hidden.storage_and_layout();
        let (ws, wl) = w.storage_and_layout();
        let (ts, tl) = targets.storage_and_layout();
        let (rs, rl) = res.storage_and_layout();
        let (gs, gl) = go.storage_and_layout();
        let (Storage::Cpu(hs), Storage::Cpu(ws), Storage::Cpu(ts), Storage::Cpu(rs), Storage::Cpu(gs)) =
            (&*hs, &*ws, &*ts, &*rs, &*gs)
        else {
            candle_core::bail!("{name}: CPU tensors only")
        };
        let (targets, res, go) =
            (slice::<u32>(name, ts, tl)?, slice::<f32>(name, rs, rl)?, slice::<f32>(name, gs, gl)?);
        let cpu = &candle_core::Device::Cpu;
        let (dh, dw) = with_float!(name, hidden.dtype(), |E| {
            let (h, w) = (contiguous::<E>(name, hs, hl)?, contiguous::<E>(name, ws, wl)?);
            let (dh, dw) = self.backward(h, w, targets, res, go, d, want_dw);
            let dw = if want_dw { Some(Tensor::from_vec(dw, (v, d), cpu)?) } else { None };
            (Tensor::from_vec(dh, (n, d), cpu)?, dw)
        });
        Ok((Some(dh), dw, None))
    }
}
