//! SwiGLU's gating (Shazeer, arXiv:2002.05202): `silu(gate) ∘ up` with its own backward. The CPU
//! kernel computes candle's `gate.silu() * up` (`silu(v) = v / (1 + e^-v)`) with the same f32
//! operations, so the f32 forward is bit-identical to the composite (bf16/f16: computed in f32,
//! rounded once). Backward with `s = sigmoid(gate)`: `d gate = dy ∘ up ∘ s (1 + gate (1 − s))`,
//! `d up = dy ∘ silu(gate)`. Other devices take the composite.

use super::{backward_kernel, contiguous, cpu_kernel, with_float, Elem};
use crate::error::{Error, Result};
use candle_core::backend::BackendStorage;
use candle_core::WithDType;
use candle_core::{CpuStorage, CustomOp2, CustomOp3, Layout, Shape, Tensor};
use rayon::prelude::*;

/// Elements per rayon task.
const TASK: usize = 1 << 14;

/// `silu(gate) ∘ up` (same shapes).
pub fn swiglu(gate: &Tensor, up: &Tensor) -> Result<Tensor> {
    if gate.dims() != up.dims() || gate.dtype() != up.dtype() {
        return Err(Error::Request(format!("swiglu: gate {:?} and up {:?} differ", gate.dims(), up.dims())));
    }
    if !cpu_kernel(gate) {
        return Ok((gate.silu()? * up)?);
    }
    Ok(gate.contiguous()?.apply_op2(&up.contiguous()?, SwiGlu)?)
}

#[inline(always)]
fn silu(v: f32) -> f32 {
    v / (1.0 + (-v).exp())
}

struct SwiGlu;

impl CustomOp2 for SwiGlu {
    fn name(&self) -> &'static str {
        "swiglu"
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
            let (g, u) = (contiguous::<E>(name, s1, l1)?, contiguous::<E>(name, s2, l2)?);
            let mut out = vec![E::from_f32(0.0); g.len()];
            out.par_chunks_mut(TASK).zip(g.par_chunks(TASK).zip(u.par_chunks(TASK))).for_each(|(o, (g, u))| {
                for ((o, &g), &u) in o.iter_mut().zip(g).zip(u) {
                    *o = E::from_f32(silu(g.to_f32()) * u.to_f32());
                }
            });
            E::to_cpu_storage_owned(out)
        });
        Ok((out, l1.shape().clone()))
    }

    fn bwd(
        &self,
        gate: &Tensor,
        up: &Tensor,
        _res: &Tensor,
        grad: &Tensor,
    ) -> candle_core::Result<(Option<Tensor>, Option<Tensor>)> {
        let packed = backward_kernel(gate, up, &grad.contiguous()?, SwiGluBackward)?;
        let n = gate.elem_count();
        Ok((Some(packed.narrow(0, 0, n)?.reshape(gate.shape())?), Some(packed.narrow(0, n, n)?.reshape(up.shape())?)))
    }
}

/// `(gate, up, dy)` to `[d gate | d up]`.
struct SwiGluBackward;

impl CustomOp3 for SwiGluBackward {
    fn name(&self) -> &'static str {
        "swiglu-backward"
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
        let n = l1.shape().elem_count();
        let out = with_float!(name, s1.dtype(), |E| {
            let (g, u, dy) =
                (contiguous::<E>(name, s1, l1)?, contiguous::<E>(name, s2, l2)?, contiguous::<E>(name, s3, l3)?);
            if u.len() != n || dy.len() != n {
                candle_core::bail!("{name}: gate, up and gradient differ in size");
            }
            let mut packed = vec![E::from_f32(0.0); 2 * n];
            let (dg, du) = packed.split_at_mut(n);
            let inputs = g.par_chunks(TASK).zip(u.par_chunks(TASK).zip(dy.par_chunks(TASK)));
            dg.par_chunks_mut(TASK).zip(du.par_chunks_mut(TASK)).zip(inputs).for_each(|((dg, du), (g, (u, dy)))| {
                for ((dg, du), ((&g, &u), &dy)) in dg.iter_mut().zip(du).zip(g.iter().zip(u).zip(dy)) {
                    let (g, u, dy) = (g.to_f32(), u.to_f32(), dy.to_f32());
                    let s = 1.0 / (1.0 + (-g).exp());
                    *dg = E::from_f32(dy * u * s * (1.0 + g * (1.0 - s)));
                    *du = E::from_f32(dy * g * s);
                }
            });
            E::to_cpu_storage_owned(packed)
        });
        Ok((out, Shape::from(2 * n)))
    }
}
