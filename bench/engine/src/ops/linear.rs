//! A linear layer `y = x · wᵀ` (`x` `[.., in]`, `w` `[out, in]`) with its own backward:
//! `dx = dy · w`, `dw = dyᵀ · x`. The CPU kernel calls the `gemm` crate with the operands as they
//! lie in memory (candle's composite takes `w · xᵀ` and copies the transposed result, and its
//! backward copies the transposed gradients again) and widens bf16/f16 operands to f32 a block of
//! rows at a time instead of whole storages. Other devices take the composite.

use super::gemm::{rows_times, weight_grad};
use super::{backward_kernel2, contiguous, cpu_kernel, with_float};
use crate::error::{Error, Result};
use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, CustomOp2, Layout, Shape, Tensor, WithDType};

/// `x · wᵀ (+ b)` over the last dimension of `x`, with the fused kernel where it applies (CPU,
/// f32/bf16/f16, a training forward: `x` or `w` tracked); else [`linear_reference`].
pub fn linear(x: &Tensor, w: &Tensor, b: Option<&Tensor>) -> Result<Tensor> {
    let fused = cpu_kernel(x) && x.dtype() == w.dtype() && (x.track_op() || w.track_op());
    if !fused {
        return linear_reference(x, w, b);
    }
    let (dims, (out, inn)) = (x.dims().to_vec(), w.dims2()?);
    let (last, lead) = dims.split_last().ok_or_else(|| Error::Request("linear on a scalar".into()))?;
    if *last != inn {
        return Err(Error::Request(format!("linear: input {dims:?} for a weight {:?}", w.dims())));
    }
    let rows: usize = lead.iter().product();
    let y = x.reshape((rows, inn))?.contiguous()?.apply_op2(&w.contiguous()?, Linear)?;
    let y = match b {
        Some(b) => y.broadcast_add(b)?,
        None => y,
    };
    let mut shape = lead.to_vec();
    shape.push(out);
    Ok(y.reshape(shape)?)
}

/// The composite: candle matmuls, `w · xᵀ` then transposed (candle's CPU gemm is 2-5x faster
/// this way round than `x · wᵀ` for few rows, as in decoding, and no slower for many).
pub fn linear_reference(x: &Tensor, w: &Tensor, b: Option<&Tensor>) -> Result<Tensor> {
    let dims = x.dims().to_vec();
    let (last, lead) = dims.split_last().ok_or_else(|| Error::Request("linear on a scalar".into()))?;
    let rows: usize = lead.iter().product();
    let y = w.matmul(&x.reshape((rows, *last))?.t()?)?.t()?;
    let y = match b {
        Some(b) => y.broadcast_add(b)?,
        None => y,
    };
    let mut out = lead.to_vec();
    out.push(w.dims()[0]);
    Ok(y.reshape(out)?)
}

/// `(x [N, in], w [out, in])` to `y [N, out]`.
struct Linear;

impl CustomOp2 for Linear {
    fn name(&self) -> &'static str {
        "linear"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let name = self.name();
        let ((rows, inn), (out, _)) = (l1.shape().dims2()?, l2.shape().dims2()?);
        let y = with_float!(name, s1.dtype(), |E| {
            let (x, w) = (contiguous::<E>(name, s1, l1)?, contiguous::<E>(name, s2, l2)?);
            E::to_cpu_storage_owned(rows_times(x, w, rows, inn, out, true))
        });
        Ok((y, Shape::from((rows, out))))
    }

    fn bwd(
        &self,
        x: &Tensor,
        w: &Tensor,
        _res: &Tensor,
        grad: &Tensor,
    ) -> candle_core::Result<(Option<Tensor>, Option<Tensor>)> {
        let dy = grad.contiguous()?;
        let dx = if x.track_op() { Some(backward_kernel2(&dy, w, LinearInputGrad)?) } else { None };
        let dw = if w.track_op() { Some(backward_kernel2(&dy, x, LinearWeightGrad)?) } else { None };
        Ok((dx, dw))
    }
}

/// `(dy [N, out], w [out, in])` to `dx = dy · w` `[N, in]`.
struct LinearInputGrad;

impl CustomOp2 for LinearInputGrad {
    fn name(&self) -> &'static str {
        "linear-input-grad"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let name = self.name();
        let ((rows, out), (_, inn)) = (l1.shape().dims2()?, l2.shape().dims2()?);
        let dx = with_float!(name, s1.dtype(), |E| {
            let (dy, w) = (contiguous::<E>(name, s1, l1)?, contiguous::<E>(name, s2, l2)?);
            E::to_cpu_storage_owned(rows_times(dy, w, rows, out, inn, false))
        });
        Ok((dx, Shape::from((rows, inn))))
    }
}

/// `(dy [N, out], x [N, in])` to `dw = dyᵀ · x` `[out, in]`.
struct LinearWeightGrad;

impl CustomOp2 for LinearWeightGrad {
    fn name(&self) -> &'static str {
        "linear-weight-grad"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let name = self.name();
        let ((rows, out), (_, inn)) = (l1.shape().dims2()?, l2.shape().dims2()?);
        let dw = with_float!(name, s1.dtype(), |E| {
            let (dy, x) = (contiguous::<E>(name, s1, l1)?, contiguous::<E>(name, s2, l2)?);
            E::to_cpu_storage_owned(weight_grad(dy, x, rows, out, inn))
        });
        Ok((dw, Shape::from((out, inn))))
    }
}
