//! Rotary position embedding (RoFormer, Su et al., arXiv:2104.09864) in the rotate-half layout:
//! `y = x ∘ cos + rotate_half(x) ∘ sin`, `rotate_half([x1, x2]) = [−x2, x1]`, with its own
//! backward (candle's fused `rope` has none). The op is linear in `x`; its backward applies the
//! transposed rotation `[g1 ∘ cos1 + g2 ∘ sin2, g2 ∘ cos2 − g1 ∘ sin1]` with the same kernel. The
//! CPU kernel computes exactly the composite's f32 operations (bit-identical in f32; bf16/f16
//! are computed in f32 and rounded once); other devices take the composite.

use super::{backward_kernel, contiguous, cpu_kernel, with_float, Elem};
use crate::error::{Error, Result};
use candle_core::backend::BackendStorage;
use candle_core::WithDType;
use candle_core::{CpuStorage, CustomOp3, Layout, Shape, Tensor, D};
use rayon::prelude::*;

/// Rotary embedding of `x` `[B, T, N, hd]` (N heads) with tables `cos`, `sin` `[B, T, hd]`.
pub fn rotary(x: &Tensor, cos: &Tensor, sin: &Tensor) -> Result<Tensor> {
    let (b, t, _, hd) = x.dims4()?;
    if cos.dims() != [b, t, hd] || sin.dims() != [b, t, hd] || hd % 2 != 0 {
        return Err(Error::Request(format!(
            "rotary: tables {:?}, {:?} for input {:?}",
            cos.dims(),
            sin.dims(),
            x.dims()
        )));
    }
    if !(cpu_kernel(x) && cos.dtype() == x.dtype() && sin.dtype() == x.dtype()) {
        return rotary_reference(x, cos, sin);
    }
    Ok(x.contiguous()?.apply_op3(&cos.contiguous()?, &sin.contiguous()?, Rotary { transpose: false })?)
}

/// The composite the op replaces: `x ∘ cos + rotate_half(x) ∘ sin` with candle ops.
pub fn rotary_reference(x: &Tensor, cos: &Tensor, sin: &Tensor) -> Result<Tensor> {
    let half = x.dim(D::Minus1)? / 2;
    let rotated = Tensor::cat(&[&x.narrow(D::Minus1, half, half)?.neg()?, &x.narrow(D::Minus1, 0, half)?], D::Minus1)?;
    Ok((x.broadcast_mul(&cos.unsqueeze(2)?)? + rotated.broadcast_mul(&sin.unsqueeze(2)?)?)?)
}

/// The rotation (or, with `transpose`, its transpose: the backward).
struct Rotary {
    transpose: bool,
}

impl Rotary {
    fn apply<T: Elem>(&self, x: &[T], cos: &[T], sin: &[T], heads: usize, hd: usize) -> Vec<T> {
        let half = hd / 2;
        let mut out = vec![T::from_f32(0.0); x.len()];
        let position = heads * hd;
        out.par_chunks_mut(position).zip(x.par_chunks(position)).enumerate().for_each(|(p, (o, x))| {
            let (c, s) = (&cos[p * hd..(p + 1) * hd], &sin[p * hd..(p + 1) * hd]);
            for (o, x) in o.chunks_exact_mut(hd).zip(x.chunks_exact(hd)) {
                let (o1, o2) = o.split_at_mut(half);
                let (x1, x2) = x.split_at(half);
                for d in 0..half {
                    let (a, b) = (x1[d].to_f32(), x2[d].to_f32());
                    let (c1, c2, s1, s2) = (c[d].to_f32(), c[d + half].to_f32(), s[d].to_f32(), s[d + half].to_f32());
                    if self.transpose {
                        o1[d] = T::from_f32(a * c1 + b * s2);
                        o2[d] = T::from_f32(b * c2 + -a * s1);
                    } else {
                        o1[d] = T::from_f32(a * c1 + -b * s1);
                        o2[d] = T::from_f32(b * c2 + a * s2);
                    }
                }
            }
        });
        out
    }
}

impl CustomOp3 for Rotary {
    fn name(&self) -> &'static str {
        if self.transpose {
            "rotary-backward"
        } else {
            "rotary"
        }
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
        let (b, t, heads, hd) = l1.shape().dims4()?;
        let out = with_float!(name, s1.dtype(), |E| {
            let (x, cos, sin) =
                (contiguous::<E>(name, s1, l1)?, contiguous::<E>(name, s2, l2)?, contiguous::<E>(name, s3, l3)?);
            if cos.len() != b * t * hd || sin.len() != cos.len() || hd % 2 != 0 {
                candle_core::bail!("{name}: tables do not fit [{b}, {t}, {hd}]");
            }
            E::to_cpu_storage_owned(self.apply(x, cos, sin, heads, hd))
        });
        Ok((out, l1.shape().clone()))
    }

    fn bwd(
        &self,
        _x: &Tensor,
        cos: &Tensor,
        sin: &Tensor,
        _res: &Tensor,
        grad: &Tensor,
    ) -> candle_core::Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        let dx = backward_kernel(&grad.contiguous()?, cos, sin, Rotary { transpose: !self.transpose })?;
        Ok((Some(dx), None, None))
    }
}
