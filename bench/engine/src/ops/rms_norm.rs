//! RMSNorm (Zhang & Sennrich, arXiv:1910.07467): `y = x / sqrt(mean(x²) + eps) · w` over the last
//! dim, with its own backward (candle's fused `rms_norm` has none: its gradient is silently
//! dropped). The CPU kernel computes exactly what `candle_nn::ops::rms_norm_slow` computes (same
//! f32 operations in the same order, the sum of squares in candle's lane order), so the forward
//! is bit-identical to the composite in f32, bf16 and f16; other devices take the composite.
//!
//! Backward with `r = 1 / sqrt(mean(x²) + eps)`, `n = x r`, `u = dy ∘ w`:
//! `dx = r (u − n · mean(u ∘ n))`, `dw = Σ_rows dy ∘ n` (f32 accumulation).

use super::{backward_kernel, contiguous, cpu_kernel, with_float, Elem};
use crate::error::{Error, Result};
use candle_core::backend::BackendStorage;
use candle_core::WithDType;
use candle_core::{CpuStorage, CustomOp2, CustomOp3, Layout, Shape, Tensor};
use rayon::prelude::*;

/// RMSNorm of `x` `[.., D]` with gain `w` `[D]`.
pub fn rms_norm(x: &Tensor, w: &Tensor, eps: f32) -> Result<Tensor> {
    let d = w.dims1()?;
    if x.dims().last() != Some(&d) {
        return Err(Error::Request(format!("rms norm: gain of {d} for input {:?}", x.dims())));
    }
    if !(cpu_kernel(x) && x.dtype() == w.dtype()) {
        return Ok(candle_nn::ops::rms_norm_slow(x, w, eps)?);
    }
    Ok(x.contiguous()?.apply_op2(&w.contiguous()?, RmsNorm { eps })?)
}

/// `sum(x²)` summed as candle sums a row (`vec_sum`): with AVX2, four 8-lane accumulators over
/// blocks of 32, reduced pairwise, then the tail in order; otherwise in order.
fn candle_sum_of_squares(x: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        let mut acc = [[0f32; 8]; 4];
        let blocks = x.chunks_exact(32);
        let tail = blocks.remainder();
        for block in blocks {
            for (a, lanes) in acc.iter_mut().zip(block.chunks_exact(8)) {
                for (a, &v) in a.iter_mut().zip(lanes) {
                    *a += v * v;
                }
            }
        }
        let x0: [f32; 8] = std::array::from_fn(|i| (acc[0][i] + acc[1][i]) + (acc[2][i] + acc[3][i]));
        let t0: [f32; 4] = std::array::from_fn(|i| x0[i] + x0[i + 4]);
        let mut sum = (t0[0] + t0[1]) + (t0[2] + t0[3]);
        for &v in tail {
            sum += v * v;
        }
        return sum;
    }
    let mut sum = 0f32;
    for &v in x {
        sum += v * v;
    }
    sum
}

/// `sqrt(mean(x²) + eps)` of one row, as `rms_norm_slow` computes it (its division by the
/// width and `+ eps` are candle affine ops: `v * mul + add`).
#[inline]
fn rms(x: &[f32], eps: f32) -> f32 {
    let mean = candle_sum_of_squares(x) * (1.0 / x.len() as f64) as f32 + 0.0;
    (mean * 1.0 + eps).sqrt()
}

/// Rows per rayon task of the backward (a constant, so the gain gradient's sum order does not
/// depend on the number of threads).
const ROWS_PER_TASK: usize = 32;

struct RmsNorm {
    eps: f32,
}

impl RmsNorm {
    fn forward<T: Elem>(&self, x: &[T], w: &[T]) -> Vec<T> {
        let d = w.len();
        let mut out = vec![T::from_f32(0.0); x.len()];
        out.par_chunks_mut(d).zip(x.par_chunks(d)).for_each_init(
            || vec![0f32; d],
            |row, (o, x)| {
                for (r, &v) in row.iter_mut().zip(x) {
                    *r = v.to_f32();
                }
                // `x / sqrt(..)` as the composite's `broadcast_div`, rounded to the dtype, then
                // times the gain in the dtype.
                let denom = rms(row, self.eps);
                for ((o, &v), &g) in o.iter_mut().zip(row.iter()).zip(w) {
                    *o = T::from_f32(T::from_f32(v / denom).to_f32() * g.to_f32());
                }
            },
        );
        out
    }
}

impl CustomOp2 for RmsNorm {
    fn name(&self) -> &'static str {
        "rms-norm"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let name = self.name();
        let out = with_float!(name, s1.dtype(), |E| {
            let (x, w) = (contiguous::<E>(name, s1, l1)?, contiguous::<E>(name, s2, l2)?);
            if w.is_empty() || x.len() % w.len() != 0 {
                candle_core::bail!("{name}: {} values are not rows of {}", x.len(), w.len());
            }
            E::to_cpu_storage_owned(self.forward(x, w))
        });
        Ok((out, l1.shape().clone()))
    }

    fn bwd(
        &self,
        x: &Tensor,
        w: &Tensor,
        _res: &Tensor,
        grad: &Tensor,
    ) -> candle_core::Result<(Option<Tensor>, Option<Tensor>)> {
        let d = w.dim(0)?;
        let packed = backward_kernel(x, w, &grad.contiguous()?, RmsNormBackward { eps: self.eps })?;
        let rows = x.elem_count() / d.max(1);
        let dx = packed.narrow(0, 0, rows)?.reshape(x.shape())?;
        let dw = packed.narrow(0, rows, 1)?.reshape(d)?;
        Ok((Some(dx), Some(dw)))
    }
}

/// `(x, w, dy)` to `[dx rows | dw]`, `[N + 1, D]`.
struct RmsNormBackward {
    eps: f32,
}

impl RmsNormBackward {
    fn backward<T: Elem>(&self, x: &[T], w: &[T], dy: &[T]) -> Vec<T> {
        let d = w.len();
        let w32: Vec<f32> = w.iter().map(|v| v.to_f32()).collect();
        let mut packed = vec![T::from_f32(0.0); x.len() + d];
        let (dx, dw_out) = packed.split_at_mut(x.len());
        // Rows in chunks of a fixed size, each with its partial gain gradient (f32), summed in
        // chunk order: the same floats whatever the number of threads.
        let per_task = ROWS_PER_TASK * d;
        let partials: Vec<Vec<f32>> = dx
            .par_chunks_mut(per_task)
            .zip(x.par_chunks(per_task).zip(dy.par_chunks(per_task)))
            .map(|(dx, (x, dy))| {
                let (mut dw, mut xr, mut u) = (vec![0f32; d], vec![0f32; d], vec![0f32; d]);
                for (dx, (x, dy)) in dx.chunks_exact_mut(d).zip(x.chunks_exact(d).zip(dy.chunks_exact(d))) {
                    for (r, &v) in xr.iter_mut().zip(x) {
                        *r = v.to_f32();
                    }
                    let r = 1.0 / rms(&xr, self.eps);
                    let mut dot = 0f32;
                    for (((u, &g), &wv), (&xv, dw)) in u.iter_mut().zip(dy).zip(&w32).zip(xr.iter().zip(dw.iter_mut()))
                    {
                        let g = g.to_f32();
                        *u = g * wv;
                        dot += *u * xv * r;
                        *dw += g * xv * r;
                    }
                    let mean = dot / d as f32;
                    for ((o, &u), &xv) in dx.iter_mut().zip(&u).zip(&xr) {
                        *o = T::from_f32(r * (u - xv * r * mean));
                    }
                }
                dw
            })
            .collect();
        let mut dw = vec![0f32; d];
        for partial in partials {
            dw.iter_mut().zip(partial).for_each(|(a, b)| *a += b);
        }
        for (o, v) in dw_out.iter_mut().zip(dw) {
            *o = T::from_f32(v);
        }
        packed
    }
}

impl CustomOp3 for RmsNormBackward {
    fn name(&self) -> &'static str {
        "rms-norm-backward"
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
        let d = l2.shape().elem_count();
        let rows = l1.shape().elem_count() / d.max(1);
        let out = with_float!(name, s1.dtype(), |E| {
            let (x, w, dy) =
                (contiguous::<E>(name, s1, l1)?, contiguous::<E>(name, s2, l2)?, contiguous::<E>(name, s3, l3)?);
            if d == 0 || dy.len() != x.len() || x.len() != rows * d {
                candle_core::bail!("{name}: input, gain and gradient do not fit");
            }
            E::to_cpu_storage_owned(self.backward(x, w, dy))
        });
        Ok((out, Shape::from((rows + 1, d))))
    }
}
