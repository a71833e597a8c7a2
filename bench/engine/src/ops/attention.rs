//! Attention `softmax(Q Kᵀ / sqrt(hd) + mask) V` with a backward pass that keeps `O(B·H·T)`
//! floats instead of `O(B·H·T·S)`, after FlashAttention-2 (Dao, arXiv:2307.08691): one op for
//! training and for sampling with a KV cache.
//!
//! - Inputs: `q` `[B, H, T, hd]`, `k` and `v` `[B, KVH, S, hd]` (any strides with a contiguous
//!   last dim, so the KV cache's views are read in place), f32, bf16 or f16; output
//!   `[B, T, H·hd]` (the layout the output projection reads). Query heads `h` with the same
//!   `h / (H / KVH)` share a key/value head (GQA) and read it in place, without repeats.
//! - Mask ([`KeyMask`]): query `i` sees key `j` when `j <= offset + i` (causal, after `offset`
//!   cached keys) and key `j` of its row is a real token (left-padded prompts, right-padded
//!   responses). A query that sees no key (padding) gets a zero output and no gradient.
//! - CPU kernel: rayon over (batch, block of [`BLOCK`] queries); for each head, the key blocks up
//!   to the causal limit are read as f32 tiles and merged with an online softmax (running max
//!   and sum, f32). The forward keeps only `O` and the row log-sum-exp `L` `[B, T, H]`. The
//!   backward runs over (batch, kv head): per query and key block it recomputes
//!   `P = exp(scale·Q Kᵀ − L)`, and with `Di = rowsum(dO ∘ O)` accumulates `dV += Pᵀ dO`,
//!   `dS = P ∘ (dO Vᵀ − D)`, `dQ += scale·dS K`, `dK += scale·dS ᵀQ` (f32 accumulators, the
//!   task's keys and values in f32, never a score tensor beyond one tile).
//! - Other devices: [`attention_tiled`], the same algorithm as candle ops over chunks of queries
//!   (forward on detached tensors, keeping `O` and `L`; the backward recomputes each chunk's
//!   probabilities), so memory is bounded by one chunk's scores ([`COMPOSITE_SCORE_BYTES`]). A
//!   CUDA kernel replaces it as `FlashAttention::cuda_fwd` (and the backward op's) behind
//!   [`attention`].
//! - [`attention_reference`]: the plain composite (full f32 scores, additive mask, softmax),
//!   which keeps several `[B, H, T, S]` tensors for the backward: the tests' reference.

use super::tiles::{add_product, add_transposed_product, dot_rows};
use super::{backward_kernel, cpu_kernel, precomputed_forward, with_float, Elem, Precomputed};
use crate::cpu::exp;
use crate::error::{Error, Result};
use candle_core::backend::BackendStorage;
use candle_core::WithDType;
use candle_core::{CpuStorage, CustomOp3, DType, Device, Layout, Shape, Storage, Tensor, D};
use rayon::prelude::*;
use std::sync::{Arc, OnceLock};

/// Query and key rows per tile of the CPU kernel (a 64 x 64 score tile is 16 KiB).
pub const BLOCK: usize = 64;

/// Bytes one `[B, H, q, S]` f32 score tensor of [`attention_tiled`] may take: the query chunk `q`
/// is the largest that fits (at least one row).
pub const COMPOSITE_SCORE_BYTES: usize = 64 << 20;

/// Additive mask of the composite paths (finite, so a fully masked row stays finite).
const MASKED: f32 = -1e30;

/// Which keys each query may attend to: causal after `offset` cached keys, and per batch row,
/// which of the `S` keys are real tokens.
#[derive(Debug, Clone)]
pub struct KeyMask {
    valid: Arc<[bool]>,
    batch: usize,
    keys: usize,
    offset: usize,
}

impl KeyMask {
    /// `key_valid[b][j]` for every batch row (all of one length `S`); queries are the last
    /// `S - offset` positions.
    pub fn new(key_valid: &[Vec<bool>], offset: usize) -> Result<Self> {
        let keys = key_valid.first().map_or(0, Vec::len);
        if key_valid.iter().any(|row| row.len() != keys) || offset > keys {
            return Err(Error::Request(format!(
                "key mask: rows of one length and at most that many cached keys ({offset}) needed"
            )));
        }
        let valid: Vec<bool> = key_valid.iter().flatten().copied().collect();
        Ok(KeyMask { valid: valid.into(), batch: key_valid.len(), keys, offset })
    }

    /// Number of keys `S` (cached plus new).
    pub fn keys(&self) -> usize {
        self.keys
    }

    /// Number of queries `T = S - offset`.
    pub fn queries(&self) -> usize {
        self.keys - self.offset
    }

    /// Whether query `i` of row `b` sees key `j`.
    #[inline(always)]
    fn sees(&self, b: usize, i: usize, j: usize) -> bool {
        j <= self.offset + i && self.valid[b * self.keys + j]
    }

    /// Additive f32 mask `[B, 1, 1, n, S]` of queries `rows` (0 where seen, [`MASKED`] elsewhere)
    /// and whether each query sees any key, `[B, 1, 1, n, 1]` (u8).
    fn tensors(&self, rows: std::ops::Range<usize>, device: &Device) -> Result<(Tensor, Tensor)> {
        let (n, s) = (rows.len(), self.keys);
        let mut add = Vec::with_capacity(self.batch * n * s);
        let mut any = Vec::with_capacity(self.batch * n);
        for b in 0..self.batch {
            for i in rows.clone() {
                let before = add.len();
                add.extend((0..s).map(|j| if self.sees(b, i, j) { 0.0 } else { MASKED }));
                any.push(u8::from(add[before..].contains(&0.0)));
            }
        }
        Ok((
            Tensor::from_vec(add, (self.batch, 1, 1, n, s), device)?,
            Tensor::from_vec(any, (self.batch, 1, 1, n, 1), device)?,
        ))
    }
}

/// Shapes of one attention call.
#[derive(Debug, Clone, Copy)]
struct Dims {
    b: usize,
    h: usize,
    kvh: usize,
    t: usize,
    s: usize,
    hd: usize,
}

impl Dims {
    fn of(q: &Tensor, k: &Tensor, v: &Tensor, mask: &KeyMask) -> Result<Self> {
        let (b, h, t, hd) = q.dims4()?;
        let (kb, kvh, s, khd) = k.dims4()?;
        let bad = |what: &str| Err(Error::Request(format!("attention: {what}")));
        if v.dims() != k.dims() || kb != b || khd != hd {
            return bad(&format!("q {:?}, k {:?}, v {:?} do not fit", q.dims(), k.dims(), v.dims()));
        }
        if kvh == 0 || h % kvh != 0 {
            return bad(&format!("{h} query heads do not share {kvh} kv heads"));
        }
        if mask.batch != b || mask.keys != s || mask.queries() != t {
            return bad(&format!(
                "mask of {} rows, {} keys after {} for [{b}, {t}] queries over {s} keys",
                mask.batch, mask.keys, mask.offset
            ));
        }
        if q.dtype() != k.dtype() || q.dtype() != v.dtype() {
            return bad("q, k and v must have one dtype");
        }
        Ok(Dims { b, h, kvh, t, s, hd })
    }

    fn rep(&self) -> usize {
        self.h / self.kvh
    }

    fn scale(&self) -> f64 {
        1.0 / (self.hd as f64).sqrt()
    }
}

/// Attention of `q` `[B, H, T, hd]` over `k`, `v` `[B, KVH, S, hd]` under `mask`, as
/// `[B, T, H·hd]`, with a backward pass: the CPU kernel for f32/bf16/f16 CPU tensors,
/// [`attention_tiled`] elsewhere.
pub fn attention(q: &Tensor, k: &Tensor, v: &Tensor, mask: &KeyMask) -> Result<Tensor> {
    let dims = Dims::of(q, k, v, mask)?;
    if !cpu_kernel(q) {
        return attention_tiled(q, k, v, mask);
    }
    let op = FlashAttention { dims, mask: mask.clone(), lse: OnceLock::new() };
    Ok(q.apply_op3(k, v, op)?)
}

/// A `[B, n0, n1, n2, hd]`-style view of CPU data: element `(a, b, c, d)` at
/// `offset + a·st[0] + b·st[1] + c·st[2] + d` (the last dim contiguous).
#[derive(Clone, Copy)]
struct View<'a, T> {
    data: &'a [T],
    offset: usize,
    st: [usize; 3],
}

impl<'a, T: Elem> View<'a, T> {
    fn of(name: &str, s: &'a CpuStorage, l: &Layout) -> candle_core::Result<Self> {
        let st = l.stride();
        if st.len() != 4 || st[3] != 1 {
            candle_core::bail!("{name}: 4-d tensors with a contiguous last dim only, got strides {st:?}");
        }
        Ok(View { data: s.as_slice::<T>()?, offset: l.start_offset(), st: [st[0], st[1], st[2]] })
    }

    /// Row `(a, b, c)`, `hd` values.
    #[inline(always)]
    fn row(&self, a: usize, b: usize, c: usize, hd: usize) -> &'a [T] {
        let at = self.offset + a * self.st[0] + b * self.st[1] + c * self.st[2];
        &self.data[at..at + hd]
    }

    /// Rows `(a, b, c0..c1)` into `out` as f32.
    fn load(&self, a: usize, b: usize, c0: usize, c1: usize, hd: usize, out: &mut [f32]) {
        for (c, o) in (c0..c1).zip(out.chunks_exact_mut(hd)) {
            for (o, &x) in o.iter_mut().zip(self.row(a, b, c, hd)) {
                *o = x.to_f32();
            }
        }
    }
}

/// The forward kernel; keeps the row log-sum-exp for its backward.
struct FlashAttention {
    dims: Dims,
    mask: KeyMask,
    lse: OnceLock<Arc<Vec<f32>>>,
}

/// Masks one tile row of scores (`row[c]` is key `j0 + c`) and folds it into the running max
/// `m`, sum `l` and output `acc` (rescaled by the change of max); leaves the row's weights
/// `exp(s - m)` in `row` (0 where masked).
#[inline(always)]
fn online_softmax_row(sees: impl Fn(usize) -> bool, row: &mut [f32], m: &mut f32, l: &mut f32, acc: &mut [f32]) {
    let mut block_max = f32::NEG_INFINITY;
    for (c, x) in row.iter_mut().enumerate() {
        if !sees(c) {
            *x = f32::NEG_INFINITY;
        }
        block_max = block_max.max(*x);
    }
    if block_max == f32::NEG_INFINITY {
        row.fill(0.0);
        return;
    }
    let m_new = m.max(block_max);
    let mut sum = 0.0;
    for x in row.iter_mut() {
        *x = if *x == f32::NEG_INFINITY { 0.0 } else { exp(*x - m_new) };
        sum += *x;
    }
    if *m != f32::NEG_INFINITY && *m != m_new {
        let correction = exp(*m - m_new);
        *l *= correction;
        acc.iter_mut().for_each(|a| *a *= correction);
    }
    *l += sum;
    *m = m_new;
}

impl FlashAttention {
    fn forward<T: Elem>(&self, q: View<'_, T>, k: View<'_, T>, v: View<'_, T>) -> (Vec<T>, Vec<f32>) {
        let Dims { b: nb, h, t, s, hd, .. } = self.dims;
        let (rep, scale, mask) = (self.dims.rep(), self.dims.scale() as f32, &self.mask);
        let mut out = vec![T::from_f32(0.0); nb * t * h * hd];
        let mut lse = vec![f32::INFINITY; nb * t * h];
        if out.is_empty() {
            return (out, lse);
        }
        let per_batch = (out.par_chunks_mut(t * h * hd)).zip(lse.par_chunks_mut(t * h));
        per_batch.enumerate().for_each(|(b, (out_b, lse_b))| {
            let blocks = out_b.par_chunks_mut(BLOCK * h * hd).zip(lse_b.par_chunks_mut(BLOCK * h));
            blocks.enumerate().for_each(|(blk, (out_blk, lse_blk))| {
                let (i0, i1) = (blk * BLOCK, (blk * BLOCK + BLOCK).min(t));
                let nq = i1 - i0;
                let (mut qt, mut kt, mut vt) = (vec![0f32; nq * hd], vec![0f32; BLOCK * hd], vec![0f32; BLOCK * hd]);
                let (mut st, mut acc) = (vec![0f32; nq * BLOCK], vec![0f32; nq * hd]);
                let (mut m, mut l) = (vec![0f32; nq], vec![0f32; nq]);
                // Keys past the last query's causal limit are never seen.
                let key_end = s.min(mask.offset + i1);
                for head in 0..h {
                    let g = head / rep;
                    q.load(b, head, i0, i1, hd, &mut qt);
                    acc.fill(0.0);
                    m.fill(f32::NEG_INFINITY);
                    l.fill(0.0);
                    for j0 in (0..key_end).step_by(BLOCK) {
                        let nk = (j0 + BLOCK).min(key_end) - j0;
                        k.load(b, g, j0, j0 + nk, hd, &mut kt[..nk * hd]);
                        v.load(b, g, j0, j0 + nk, hd, &mut vt[..nk * hd]);
                        let st = &mut st[..nq * nk];
                        dot_rows(&qt, &kt[..nk * hd], hd, scale, st);
                        for (r, row) in st.chunks_exact_mut(nk).enumerate() {
                            let sees = |c: usize| mask.sees(b, i0 + r, j0 + c);
                            online_softmax_row(sees, row, &mut m[r], &mut l[r], &mut acc[r * hd..(r + 1) * hd]);
                        }
                        add_product(st, &vt[..nk * hd], hd, &mut acc);
                    }
                    for r in 0..nq {
                        let o = &mut out_blk[(r * h + head) * hd..][..hd];
                        if l[r] > 0.0 {
                            let inv = 1.0 / l[r];
                            for (o, &a) in o.iter_mut().zip(&acc[r * hd..(r + 1) * hd]) {
                                *o = T::from_f32(a * inv);
                            }
                            lse_blk[r * h + head] = m[r] + l[r].ln();
                        }
                    }
                }
            });
        });
        (out, lse)
    }
}

impl CustomOp3 for FlashAttention {
    fn name(&self) -> &'static str {
        "flash-attention"
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
        let (out, lse) = with_float!(name, s1.dtype(), |E| {
            let (out, lse) =
                self.forward::<E>(View::of(name, s1, l1)?, View::of(name, s2, l2)?, View::of(name, s3, l3)?);
            (E::to_cpu_storage_owned(out), lse)
        });
        let _ = self.lse.set(Arc::new(lse));
        let Dims { b, t, h, hd, .. } = self.dims;
        Ok((out, Shape::from((b, t, h * hd))))
    }

    fn bwd(
        &self,
        q: &Tensor,
        k: &Tensor,
        v: &Tensor,
        out: &Tensor,
        grad: &Tensor,
    ) -> candle_core::Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        let Some(lse) = self.lse.get() else { candle_core::bail!("flash-attention: backward before forward") };
        let op = FlashAttentionBackward {
            dims: self.dims,
            mask: self.mask.clone(),
            lse: lse.clone(),
            out: out.detach(),
            grad: grad.detach().contiguous()?,
        };
        let packed = backward_kernel(q, k, v, op)?;
        let Dims { b, h, kvh, t, s, hd } = self.dims;
        let (nq, nkv) = (b * h * t * hd, b * kvh * s * hd);
        let dq = packed.narrow(0, 0, nq)?.reshape((b, h, t, hd))?;
        let dk = packed.narrow(0, nq, nkv)?.reshape((b, kvh, s, hd))?;
        let dv = packed.narrow(0, nq + nkv, nkv)?.reshape((b, kvh, s, hd))?;
        Ok((Some(dq), Some(dk), Some(dv)))
    }
}

/// The backward kernel: `(q, k, v)` plus the forward's output, its gradient and log-sum-exp to
/// `[dq (B·H·T·hd) | dk (B·KVH·S·hd) | dv (B·KVH·S·hd)]`, in the inputs' dtype.
struct FlashAttentionBackward {
    dims: Dims,
    mask: KeyMask,
    lse: Arc<Vec<f32>>,
    out: Tensor,
    grad: Tensor,
}

impl FlashAttentionBackward {
    fn backward<T: Elem>(&self, q: View<'_, T>, k: View<'_, T>, v: View<'_, T>, o: &[T], d_o: &[T]) -> Vec<T> {
        let Dims { b: nb, h, kvh, t, s, hd } = self.dims;
        let (rep, scale, mask, lse) = (self.dims.rep(), self.dims.scale() as f32, &self.mask, &self.lse);
        let (nq, nkv) = (nb * h * t * hd, nb * kvh * s * hd);
        let mut packed = vec![T::from_f32(0.0); nq + 2 * nkv];
        if packed.is_empty() {
            return packed;
        }
        // `o` and `d_o` are `[B, T, H, hd]`: row (b, head, i).
        let at = |b: usize, head: usize, i: usize| ((b * t + i) * h + head) * hd;
        let (dq, dkv) = packed.split_at_mut(nq);
        let (dk, dv) = dkv.split_at_mut(nkv);
        let tasks =
            dq.par_chunks_mut((rep * t * hd).max(1)).zip(dk.par_chunks_mut(s * hd).zip(dv.par_chunks_mut(s * hd)));
        tasks.enumerate().for_each(|(task, (dq_g, (dk_g, dv_g)))| {
            let (b, g) = (task / kvh, task % kvh);
            let (mut dk_acc, mut dv_acc) = (vec![0f32; s * hd], vec![0f32; s * hd]);
            let (mut qt, mut dot) = (vec![0f32; BLOCK * hd], vec![0f32; BLOCK * hd]);
            let (mut kt, mut vt, mut dqt) = (vec![0f32; BLOCK * hd], vec![0f32; BLOCK * hd], vec![0f32; BLOCK * hd]);
            let (mut p, mut ds) = (vec![0f32; BLOCK * BLOCK], vec![0f32; BLOCK * BLOCK]);
            let mut delta = vec![0f32; BLOCK];
            for r in 0..rep {
                let head = g * rep + r;
                for i0 in (0..t).step_by(BLOCK) {
                    let i1 = (i0 + BLOCK).min(t);
                    let n_q = i1 - i0;
                    q.load(b, head, i0, i1, hd, &mut qt[..n_q * hd]);
                    for (i, (dot_row, dl)) in (i0..i1).zip(dot.chunks_exact_mut(hd).zip(delta.iter_mut())) {
                        let (go, oo) = (&d_o[at(b, head, i)..][..hd], &o[at(b, head, i)..][..hd]);
                        let mut sum = 0.0;
                        for ((d, &g), &x) in dot_row.iter_mut().zip(go).zip(oo) {
                            *d = g.to_f32();
                            sum += *d * x.to_f32();
                        }
                        *dl = sum;
                    }
                    dqt[..n_q * hd].fill(0.0);
                    let key_end = s.min(mask.offset + i1);
                    for j0 in (0..key_end).step_by(BLOCK) {
                        let nk = (j0 + BLOCK).min(key_end) - j0;
                        let (kt, vt) = (&mut kt[..nk * hd], &mut vt[..nk * hd]);
                        k.load(b, g, j0, j0 + nk, hd, kt);
                        v.load(b, g, j0, j0 + nk, hd, vt);
                        let (p, ds) = (&mut p[..n_q * nk], &mut ds[..n_q * nk]);
                        dot_rows(&qt[..n_q * hd], kt, hd, scale, p);
                        for (r, row) in p.chunks_exact_mut(nk).enumerate() {
                            let l = lse[(b * t + i0 + r) * h + head];
                            for (c, x) in row.iter_mut().enumerate() {
                                *x = if l.is_finite() && mask.sees(b, i0 + r, j0 + c) { exp(*x - l) } else { 0.0 };
                            }
                        }
                        let (dk_blk, dv_blk) =
                            (&mut dk_acc[j0 * hd..(j0 + nk) * hd], &mut dv_acc[j0 * hd..(j0 + nk) * hd]);
                        add_transposed_product(p, &dot[..n_q * hd], hd, dv_blk);
                        dot_rows(&dot[..n_q * hd], vt, hd, 1.0, ds);
                        for (r, (ds_row, p_row)) in ds.chunks_exact_mut(nk).zip(p.chunks_exact(nk)).enumerate() {
                            for (d, &pv) in ds_row.iter_mut().zip(p_row) {
                                *d = pv * (*d - delta[r]) * scale;
                            }
                        }
                        add_product(ds, kt, hd, &mut dqt[..n_q * hd]);
                        add_transposed_product(ds, &qt[..n_q * hd], hd, dk_blk);
                    }
                    let dst = &mut dq_g[(r * t + i0) * hd..(r * t + i1) * hd];
                    for (d, &x) in dst.iter_mut().zip(&dqt[..n_q * hd]) {
                        *d = T::from_f32(x);
                    }
                }
            }
            for (d, &x) in dk_g.iter_mut().zip(&dk_acc) {
                *d = T::from_f32(x);
            }
            for (d, &x) in dv_g.iter_mut().zip(&dv_acc) {
                *d = T::from_f32(x);
            }
        });
        packed
    }
}

impl CustomOp3 for FlashAttentionBackward {
    fn name(&self) -> &'static str {
        "flash-attention-backward"
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
        let Dims { b, h, kvh, t, s, hd } = self.dims;
        let (out, out_layout) = self.out.storage_and_layout();
        let (grad, grad_layout) = self.grad.storage_and_layout();
        let (Storage::Cpu(out), Storage::Cpu(grad)) = (&*out, &*grad) else {
            candle_core::bail!("{name}: output and gradient on the CPU only")
        };
        let packed = with_float!(name, s1.dtype(), |E| {
            let o = super::contiguous::<E>(name, out, out_layout)?;
            let d_o = super::contiguous::<E>(name, grad, grad_layout)?;
            if o.len() != b * t * h * hd || d_o.len() != o.len() {
                candle_core::bail!("{name}: output or gradient is not [{b}, {t}, {}]", h * hd);
            }
            let (q, k, v) = (View::<E>::of(name, s1, l1)?, View::of(name, s2, l2)?, View::of(name, s3, l3)?);
            E::to_cpu_storage_owned(self.backward(q, k, v, o, d_o))
        });
        Ok((packed, Shape::from(b * h * t * hd + 2 * b * kvh * s * hd)))
    }
}

/// The dtype the composite paths compute scores and probabilities in.
fn score_dtype(dtype: DType) -> DType {
    match dtype {
        DType::F16 | DType::BF16 => DType::F32,
        d => d,
    }
}

/// Groups the query heads that share a kv head: `[B, H, n, hd]` to `[B, KVH, rep·n, hd]`.
fn grouped(x: &Tensor, dims: &Dims) -> Result<Tensor> {
    let n = x.dim(2)?;
    Ok(x.contiguous()?.reshape((dims.b, dims.kvh, dims.rep() * n, dims.hd))?)
}

/// Masked scores `scale·q kᵀ + mask` of queries `i0..i0 + n`, `[B, KVH, rep, n, S]` in the score
/// dtype, and whether each query sees a key (`[B, 1, 1, n, 1]`, u8).
fn masked_scores(dims: &Dims, mask: &KeyMask, q: &Tensor, k: &Tensor, i0: usize, n: usize) -> Result<(Tensor, Tensor)> {
    let qc = grouped(&q.narrow(2, i0, n)?, dims)?;
    let scores = (qc.matmul(&k.t()?)?.to_dtype(score_dtype(q.dtype()))? * dims.scale())?;
    let (add, any) = mask.tensors(i0..i0 + n, q.device())?;
    let scores = scores.reshape((dims.b, dims.kvh, dims.rep(), n, dims.s))?;
    Ok((scores.broadcast_add(&add.to_dtype(scores.dtype())?)?, any))
}

/// Rows `i0..i0 + n` of `[B, T, H·hd]` as `[B, KVH, rep·n, hd]`.
fn grouped_rows(x: &Tensor, dims: &Dims, i0: usize, n: usize) -> Result<Tensor> {
    let x = x.reshape((dims.b, dims.t, dims.h, dims.hd))?.narrow(1, i0, n)?.transpose(1, 2)?;
    grouped(&x, dims)
}

/// Queries per chunk of [`attention_tiled`]: one chunk's `[B, H, q, S]` f32 scores within
/// [`COMPOSITE_SCORE_BYTES`].
fn query_chunk(dims: &Dims) -> usize {
    let per_row = (dims.b * dims.h * dims.s * 4).max(1);
    (COMPOSITE_SCORE_BYTES / per_row).clamp(1, dims.t.max(1))
}

/// [`attention`] as candle ops, for any device and dtype: the forward runs on detached tensors
/// one chunk of queries at a time and keeps `O` and the row log-sum-exp; the backward recomputes
/// each chunk's probabilities from them (as the CPU kernel does per tile).
pub fn attention_tiled(q: &Tensor, k: &Tensor, v: &Tensor, mask: &KeyMask) -> Result<Tensor> {
    let chunk = query_chunk(&Dims::of(q, k, v, mask)?);
    attention_in_chunks(q, k, v, mask, chunk)
}

/// [`attention_tiled`] with `chunk` queries per chunk.
pub fn attention_in_chunks(q: &Tensor, k: &Tensor, v: &Tensor, mask: &KeyMask, chunk: usize) -> Result<Tensor> {
    let dims = Dims::of(q, k, v, mask)?;
    let (b, h, t, hd) = (dims.b, dims.h, dims.t, dims.hd);
    let (qd, kd, vd) = (q.detach(), k.detach().contiguous()?, v.detach().contiguous()?);
    let chunk = chunk.max(1);
    let (mut outs, mut lses) = (Vec::new(), Vec::new());
    for i0 in (0..t).step_by(chunk) {
        let n = chunk.min(t - i0);
        let (scores, any) = masked_scores(&dims, mask, &qd, &kd, i0, n)?;
        let max = scores.max_keepdim(D::Minus1)?;
        let e = scores.broadcast_sub(&max)?.exp()?;
        let sum = e.sum_keepdim(D::Minus1)?;
        let any = any.broadcast_as(sum.shape())?;
        let p = e.broadcast_div(&sum)?.broadcast_mul(&any.to_dtype(e.dtype())?)?;
        let inf = Tensor::full(f32::INFINITY, sum.shape(), q.device())?.to_dtype(sum.dtype())?;
        lses.push(any.where_cond(&(max + sum.log()?)?, &inf)?);
        let o = p.reshape((b, dims.kvh, dims.rep() * n, dims.s))?.to_dtype(q.dtype())?.matmul(&vd)?;
        outs.push(o.reshape((b, h, n, hd))?.transpose(1, 2)?);
    }
    let out = if outs.is_empty() {
        Tensor::zeros((b, t, h * hd), q.dtype(), q.device())?
    } else {
        Tensor::cat(&outs, 1)?.reshape((b, t, h * hd))?
    };
    let op = TiledAttention { dims, mask: mask.clone(), chunk, out: Precomputed::new(&out)?, lse: lses };
    Ok(q.apply_op3(k, v, op)?)
}

/// [`attention_tiled`]'s op: its forward hands out the precomputed output, its backward
/// recomputes the probabilities chunk by chunk.
struct TiledAttention {
    dims: Dims,
    mask: KeyMask,
    chunk: usize,
    out: Precomputed,
    /// Per chunk of queries, the log-sum-exp `[B, KVH, rep, n, 1]` (`+inf` for queries that see no key).
    lse: Vec<Tensor>,
}

impl TiledAttention {
    fn backward(&self, q: &Tensor, k: &Tensor, v: &Tensor, out: &Tensor, grad: &Tensor) -> Result<[Tensor; 3]> {
        let dims = &self.dims;
        let (b, kvh, rep, s, hd) = (dims.b, dims.kvh, dims.rep(), dims.s, dims.hd);
        let (q, k, v) = (q.detach(), k.detach().contiguous()?, v.detach().contiguous()?);
        let sdt = score_dtype(q.dtype());
        let mut dk = Tensor::zeros((b, kvh, s, hd), sdt, q.device())?;
        let mut dv = dk.clone();
        let mut dqs = Vec::with_capacity(self.lse.len());
        for (c, lse) in self.lse.iter().enumerate() {
            let i0 = c * self.chunk;
            let n = self.chunk.min(dims.t - i0);
            let (scores, _) = masked_scores(dims, &self.mask, &q, &k, i0, n)?;
            let p = scores.broadcast_sub(lse)?.exp()?.reshape((b, kvh, rep * n, s))?;
            let d_o = grouped_rows(grad, dims, i0, n)?;
            let o = grouped_rows(out, dims, i0, n)?;
            let delta = (d_o.to_dtype(sdt)? * o.to_dtype(sdt)?)?.sum_keepdim(D::Minus1)?;
            dv = (dv + p.t()?.to_dtype(q.dtype())?.matmul(&d_o)?.to_dtype(sdt)?)?;
            let dp = d_o.matmul(&v.t()?)?.to_dtype(sdt)?;
            let ds = ((p * dp.broadcast_sub(&delta)?)? * dims.scale())?.to_dtype(q.dtype())?;
            dqs.push(ds.matmul(&k)?.reshape((b, dims.h, n, hd))?);
            let qc = grouped(&q.narrow(2, i0, n)?, dims)?;
            dk = (dk + ds.t()?.matmul(&qc)?.to_dtype(sdt)?)?;
        }
        let dq = if dqs.is_empty() { q.zeros_like()? } else { Tensor::cat(&dqs, 2)? };
        Ok([dq, dk.to_dtype(q.dtype())?, dv.to_dtype(q.dtype())?])
    }
}

impl CustomOp3 for TiledAttention {
    fn name(&self) -> &'static str {
        "tiled-attention"
    }

    precomputed_forward!(out);

    fn bwd(
        &self,
        q: &Tensor,
        k: &Tensor,
        v: &Tensor,
        out: &Tensor,
        grad: &Tensor,
    ) -> candle_core::Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        let [dq, dk, dv] = self.backward(q, k, v, out, grad).map_err(candle_core::Error::wrap)?;
        Ok((Some(dq), Some(dk), Some(dv)))
    }
}

/// The plain composite attention the fused op replaces (full `[B, H, T, S]` scores in f32 for
/// half-precision inputs, an additive mask, softmax, a cast back), same inputs and output as
/// [`attention`]. A query that sees no key attends to all keys uniformly here (where the fused
/// op gives zeros); such rows are padding, never read.
pub fn attention_reference(q: &Tensor, k: &Tensor, v: &Tensor, mask: &KeyMask) -> Result<Tensor> {
    let dims = Dims::of(q, k, v, mask)?;
    let (b, h, t, hd) = (dims.b, dims.h, dims.t, dims.hd);
    let (scores, _) = masked_scores(&dims, mask, q, &k.contiguous()?, 0, t)?;
    let probs = candle_nn::ops::softmax(&scores, D::Minus1)?.to_dtype(q.dtype())?;
    let out = probs.reshape((b, dims.kvh, dims.rep() * t, dims.s))?.matmul(&v.contiguous()?)?;
    Ok(out.reshape((b, h, t, hd))?.transpose(1, 2)?.reshape((b, t, h * hd))?)
}
