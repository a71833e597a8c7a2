//! The global L2 norm of the gradient (before clipping) and the clip factor. On CPU the norm is
//! read straight from the gradients' storage (no temporaries), one gradient per rayon task; each
//! gradient's sum and the total run in a fixed order, so the norm does not depend on the threads.

use candle_core::{DType, Storage, Tensor};
use half::{bf16, f16};
use rayon::prelude::*;

use crate::error::Result;

/// The global norm, and the first parameter whose gradient is not finite.
#[derive(Debug, Clone, PartialEq)]
pub struct GradNorm {
    /// `sqrt(Σ g²)` over every gradient (f64 accumulation).
    pub norm: f64,
    /// Index of the first gradient holding NaN or inf, if any.
    pub first_bad: Option<usize>,
}

fn sum_sq(g: &Tensor) -> Result<f64> {
    {
        let (storage, layout) = g.storage_and_layout();
        if let (Storage::Cpu(cpu), Some((start, end))) = (&*storage, layout.contiguous_offsets()) {
            match g.dtype() {
                DType::F32 => {
                    let s = &cpu.as_slice::<f32>()?[start..end];
                    return Ok(s.iter().map(|&x| f64::from(x) * f64::from(x)).sum());
                }
                DType::F64 => {
                    let s = &cpu.as_slice::<f64>()?[start..end];
                    return Ok(s.iter().map(|&x| x * x).sum());
                }
                DType::BF16 => {
                    let s = &cpu.as_slice::<bf16>()?[start..end];
                    return Ok(s.iter().map(|&x| f64::from(x.to_f32()).powi(2)).sum());
                }
                DType::F16 => {
                    let s = &cpu.as_slice::<f16>()?[start..end];
                    return Ok(s.iter().map(|&x| f64::from(x.to_f32()).powi(2)).sum());
                }
                _ => {}
            }
        }
    }
    Ok(g.to_dtype(DType::F64)?.sqr()?.sum_all()?.to_scalar::<f64>()?)
}

/// The global norm of `grads` (entries `None` are parameters without a gradient).
pub fn global_norm(grads: &[Option<Tensor>]) -> Result<GradNorm> {
    let sums: Vec<Option<f64>> = grads.par_iter().map(|g| g.as_ref().map(sum_sq).transpose()).collect::<Result<_>>()?;
    let mut total = 0.0;
    let mut first_bad = None;
    for (i, s) in sums.into_iter().enumerate() {
        if let Some(s) = s {
            if !s.is_finite() && first_bad.is_none() {
                first_bad = Some(i);
            }
            total += s;
        }
    }
    Ok(GradNorm { norm: total.sqrt(), first_bad })
}

/// The factor gradients are scaled by so their norm is at most `max_norm` (0 = no clipping).
pub fn clip_scale(norm: f64, max_norm: f64) -> f64 {
    if max_norm > 0.0 && norm > max_norm {
        max_norm / (norm + 1e-6)
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    #[test]
    fn norm_and_bad_entries() {
        let a = Tensor::new(&[3.0f32, 0.0], &Device::Cpu).unwrap();
        let b = Tensor::new(&[[4.0f64]], &Device::Cpu).unwrap();
        let n = global_norm(&[Some(a.clone()), None, Some(b)]).unwrap();
        assert_eq!(n, GradNorm { norm: 5.0, first_bad: None });
        // A strided view takes the generic path.
        let m = Tensor::new(&[[3.0f32, 1.0], [4.0, 1.0]], &Device::Cpu).unwrap().t().unwrap().narrow(0, 0, 1).unwrap();
        assert_eq!(global_norm(&[Some(m)]).unwrap().norm, 5.0);
        let bad = Tensor::new(&[1.0f32, f32::NAN], &Device::Cpu).unwrap();
        assert_eq!(global_norm(&[Some(a), Some(bad)]).unwrap().first_bad, Some(1));
        assert_eq!(clip_scale(5.0, 0.0), 1.0);
        assert_eq!(clip_scale(0.5, 1.0), 1.0);
        assert!((clip_scale(10.0, 1.0) - 0.1).abs() < 1e-6);
    }
}
