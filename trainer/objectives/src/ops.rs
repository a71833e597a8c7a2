//! The bottom of the crate: small tensor helpers every other module uses (a clamp with a
//! masked derivative, constant tensors, `u8` mask logic, masked row means, a log-softmax with
//! its backward); they import nothing else of the crate, so no module imports sideways.

use candle_core::{DType, Tensor, D};

use crate::error::{Error, Result};

/// Log-ratios are clamped to `[-RHO_CLAMP, RHO_CLAMP]` before `exp` (as verl and OpenRLHF do).
pub const RHO_CLAMP: f64 = 20.0;

/// `clamp(x, lo, hi)` built from masks: derivative 1 strictly inside, 0 outside.
pub fn clamp(x: &Tensor, lo: f64, hi: f64) -> Result<Tensor> {
    // Fast path: nothing to clamp (the common case) costs two reductions instead of six ops.
    let xd = x.detach();
    let min = xd.min_all()?.to_dtype(DType::F64)?.to_scalar::<f64>()?;
    let max = xd.max_all()?.to_dtype(DType::F64)?.to_scalar::<f64>()?;
    if min >= lo && max <= hi {
        return Ok(x.clone());
    }
    let lo_t = full_like(x, lo)?;
    let hi_t = full_like(x, hi)?;
    let y = xd.lt(lo)?.where_cond(&lo_t, x)?;
    Ok(xd.gt(hi)?.where_cond(&hi_t, &y)?)
}

/// A constant tensor shaped and typed like `t`.
pub fn full_like(t: &Tensor, v: f64) -> Result<Tensor> {
    Ok(t.ones_like()?.detach().affine(0.0, v)?)
}

/// Logical and of two `u8` masks.
pub fn and(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    Ok(a.mul(b)?)
}

/// Logical or of two 0/1 `u8` masks (`a + b - a·b`; candle's `u8` maximum is slow on CPU).
pub fn or(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    Ok(((a + b)? - a.mul(b)?)?)
}

/// Logical not of a 0/1 `u8` mask.
pub fn not(a: &Tensor) -> Result<Tensor> {
    Ok((a.ones_like()? - a)?)
}

/// `where(mask, on_true, on_false)`.
pub fn select(mask: &Tensor, on_true: &Tensor, on_false: &Tensor) -> Result<Tensor> {
    Ok(mask.where_cond(on_true, on_false)?)
}

/// Logistic sigmoid from `exp` (has a backward, unlike some candle-nn ops).
pub fn sigmoid(z: &Tensor) -> Result<Tensor> {
    Ok(z.neg()?.exp()?.affine(1.0, 1.0)?.recip()?)
}

/// Sum over the last dim of `t * mask` divided by the number of valid tokens per row (`[B,1]`),
/// 0 for rows without valid tokens.
pub fn row_mean(t: &Tensor, mask_f: &Tensor) -> Result<Tensor> {
    let sum = (t * mask_f)?.sum_keepdim(1)?;
    let len = mask_f.sum_keepdim(1)?;
    let safe = len.maximum(&full_like(&len, 1.0)?)?;
    Ok(sum.div(&safe)?)
}

/// Converts a `u8` mask to the dtype `d` (0/1).
pub fn as_float(m: &Tensor, d: DType) -> Result<Tensor> {
    Ok(m.to_dtype(d)?)
}

/// Log-softmax of `logits / temperature` over the last dim (differentiable, elementary ops only).
pub fn log_softmax_t(logits: &Tensor, temperature: f64) -> Result<Tensor> {
    if !(temperature.is_finite() && temperature > 0.0) {
        return Err(Error::InvalidConfig(format!("temperature must be > 0, got {temperature}")));
    }
    let z = logits.affine(1.0 / temperature, 0.0)?;
    let max = z.max_keepdim(D::Minus1)?.detach();
    let diff = z.broadcast_sub(&max)?;
    let lse = diff.exp()?.sum_keepdim(D::Minus1)?.log()?;
    Ok(diff.broadcast_sub(&lse)?)
}
