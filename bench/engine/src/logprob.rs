//! Fused per-token log-prob and entropy: logits `[N, V]` and targets `[N]` to
//! `log softmax(logits / T)[target]` and the entropy of `softmax(logits / T)`, both `[N]`.
//!
//! The unfused path (`log_softmax`, `gather`, `exp`, product, sum) materialises several `[N, V]`
//! tensors in the forward pass and as many gradients in the backward pass; with SmolLM2's
//! vocabulary of 49,152, 8 x 256 tokens are 400 MB per copy. On the CPU in f32 this op reads the
//! logits row by row (rayon over rows) and keeps nothing but the logits for the backward pass,
//! which writes the one `[N, V]` gradient directly. With `z = logits / T`, `p = softmax(z)`,
//! `H = -sum p log p`:
//!
//! - `d log p_y / d logits_j = (1[j = y] - p_j) / T`
//! - `d H / d logits_j = -p_j (log p_j + H) / T`
//!
//! Other devices and dtypes take the plain tensor-op path ([`unfused`]), with the same values.
//! Non-finite rows follow `log_softmax`: a NaN or `+inf` logit, or a row of `-inf`, gives NaN;
//! `-inf` logits among finite ones have probability 0 (and contribute 0 to the entropy, where
//! the unfused product `0 * -inf` gives NaN).

use super::error::{Error, Result};
use candle_core::{CpuStorage, CustomOp2, CustomOp3, DType, Device, Layout, Shape, Tensor, D};
use rayon::prelude::*;

/// Log-prob of each row's target and entropy of each row, under `softmax(logits / temperature)`.
/// `logits` is `[N, V]`, `targets` `[N]` (u32, each below `V`); returns `([N], [N])`, with
/// gradients flowing into `logits`.
pub fn token_logprob_entropy(logits: &Tensor, targets: &Tensor, temperature: f64) -> Result<(Tensor, Tensor)> {
    if !(temperature.is_finite() && temperature > 0.0) {
        return Err(Error::Request(format!("temperature must be positive, got {temperature}")));
    }
    let (n, _) = logits.dims2()?;
    if targets.dims() != [n] {
        return Err(Error::Request(format!("targets must be [{n}], got {:?}", targets.dims())));
    }
    if !(matches!(logits.device(), Device::Cpu) && logits.dtype() == DType::F32) {
        return unfused(logits, targets, temperature);
    }
    let targets = targets.to_dtype(DType::U32)?.contiguous()?;
    // `apply_op2` records the backward (only when `logits` tracks gradients).
    let out = logits.contiguous()?.apply_op2(&targets, FusedForward { temperature })?;
    Ok((out.narrow(1, 0, 1)?.squeeze(1)?, out.narrow(1, 1, 1)?.squeeze(1)?))
}

/// The same values with plain tensor ops (any device, any float dtype).
pub fn unfused(logits: &Tensor, targets: &Tensor, temperature: f64) -> Result<(Tensor, Tensor)> {
    let z = if temperature == 1.0 { logits.clone() } else { (logits / temperature)? };
    let logp = candle_nn::ops::log_softmax(&z, D::Minus1)?;
    let index = targets.to_dtype(DType::U32)?.unsqueeze(1)?.contiguous()?;
    let target_logp = logp.gather(&index, 1)?.squeeze(1)?;
    let entropy = (logp.exp()? * &logp)?.sum(D::Minus1)?.neg()?;
    Ok((target_logp, entropy))
}

/// The gradient of `logits` `[N, V]` given the gradients `[N, 2]` of its outputs (log-prob,
/// entropy): the fused backward kernel on CPU f32 logits, autograd of [`unfused`] elsewhere.
/// Used by the chunked head ([`crate::ops::lm_head`]), which recomputes logits per chunk.
pub(crate) fn logits_gradient(logits: &Tensor, targets: &Tensor, grad: &Tensor, temperature: f64) -> Result<Tensor> {
    let targets = targets.to_dtype(DType::U32)?.contiguous()?;
    if matches!(logits.device(), Device::Cpu) && logits.dtype() == DType::F32 {
        let grad = grad.to_dtype(DType::F32)?.contiguous()?;
        return Ok(logits.contiguous()?.apply_op3_no_bwd(&targets, &grad, &FusedBackward { temperature })?);
    }
    let var = candle_core::Var::from_tensor(&logits.detach())?;
    let (lp, h) = unfused(var.as_tensor(), &targets, temperature)?;
    let grad = grad.to_dtype(lp.dtype())?;
    let loss =
        ((lp * grad.narrow(1, 0, 1)?.squeeze(1)?)?.sum_all()? + (h * grad.narrow(1, 1, 1)?.squeeze(1)?)?.sum_all()?)?;
    let grads = loss.backward()?;
    grads.get(var.as_tensor()).cloned().ok_or_else(|| Error::Format("log-prob backward: no gradient".into()))
}

/// Per-row statistics of `z = x / T`: the maximum, `s = sum exp(z - max)` and
/// `sum exp(z - max) (z - max)`, accumulated in f64. `None` when the row has a NaN or `+inf`, or
/// is all `-inf` (where `log_softmax` gives NaN).
fn row_stats(row: &[f32], inv_t: f32) -> Option<(f32, f64, f64)> {
    let mut max = f32::NEG_INFINITY;
    for &x in row {
        if x.is_nan() {
            return None;
        }
        max = max.max(x * inv_t);
    }
    if !max.is_finite() {
        return None;
    }
    let (mut s, mut sz) = (0f64, 0f64);
    for &x in row {
        let d = x * inv_t - max;
        let e = d.exp();
        if e > 0.0 {
            s += f64::from(e);
            sz += f64::from(e) * f64::from(d);
        }
    }
    Some((max, s, sz))
}

/// Contiguous f32 data of a CPU tensor argument.
fn f32_slice<'a>(s: &'a CpuStorage, l: &Layout) -> candle_core::Result<&'a [f32]> {
    let data = s.as_slice::<f32>()?;
    match l.contiguous_offsets() {
        Some((a, b)) => Ok(&data[a..b]),
        None => candle_core::bail!("fused log-prob: expected contiguous f32 data"),
    }
}

/// Contiguous u32 data of a CPU tensor argument.
fn u32_slice<'a>(s: &'a CpuStorage, l: &Layout) -> candle_core::Result<&'a [u32]> {
    let data = s.as_slice::<u32>()?;
    match l.contiguous_offsets() {
        Some((a, b)) => Ok(&data[a..b]),
        None => candle_core::bail!("fused log-prob: expected contiguous u32 targets"),
    }
}

/// Checks shapes and targets; returns `(N, V)`.
fn check_args(l1: &Layout, targets: &[u32]) -> candle_core::Result<(usize, usize)> {
    let (n, v) = l1.shape().dims2()?;
    if targets.len() != n {
        candle_core::bail!("fused log-prob: {} targets for {n} rows", targets.len());
    }
    if let Some(&bad) = targets.iter().find(|&&t| t as usize >= v) {
        candle_core::bail!("fused log-prob: target {bad} outside the vocabulary of {v}");
    }
    Ok((n, v))
}

/// Forward: `[N, V]` f32 logits and `[N]` u32 targets to `[N, 2]` (log-prob, entropy).
struct FusedForward {
    temperature: f64,
}

impl CustomOp2 for FusedForward {
    fn name(&self) -> &'static str {
        "fused-token-logprob-entropy"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let logits = f32_slice(s1, l1)?;
        let targets = u32_slice(s2, l2)?;
        let (n, v) = check_args(l1, targets)?;
        let inv_t = (1.0 / self.temperature) as f32;
        let mut out = vec![0f32; 2 * n];
        out.par_chunks_mut(2).zip(logits.par_chunks(v.max(1))).zip(targets.par_iter()).for_each(|((o, row), &y)| {
            match row_stats(row, inv_t) {
                Some((max, s, sz)) => {
                    let log_s = s.ln();
                    o[0] = (f64::from(row[y as usize] * inv_t - max) - log_s) as f32;
                    o[1] = (log_s - sz / s) as f32;
                }
                None => o.fill(f32::NAN),
            }
        });
        Ok((CpuStorage::F32(out), Shape::from((n, 2))))
    }

    fn bwd(
        &self,
        logits: &Tensor,
        targets: &Tensor,
        _res: &Tensor,
        grad_res: &Tensor,
    ) -> candle_core::Result<(Option<Tensor>, Option<Tensor>)> {
        let grad = logits.apply_op3_no_bwd(
            targets,
            &grad_res.contiguous()?,
            &FusedBackward { temperature: self.temperature },
        )?;
        Ok((Some(grad), None))
    }
}

/// Backward: logits `[N, V]`, targets `[N]` and the output gradient `[N, 2]` to the gradient of
/// the logits, `(g_logp (1[j = y] - p_j) - g_H p_j (log p_j + H)) / T`.
struct FusedBackward {
    temperature: f64,
}

impl CustomOp3 for FusedBackward {
    fn name(&self) -> &'static str {
        "fused-token-logprob-entropy-backward"
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
        let logits = f32_slice(s1, l1)?;
        let targets = u32_slice(s2, l2)?;
        let grad_out = f32_slice(s3, l3)?;
        let (n, v) = check_args(l1, targets)?;
        if grad_out.len() != 2 * n {
            candle_core::bail!("fused log-prob backward: output gradient of {} values for {n} rows", grad_out.len());
        }
        let inv_t = (1.0 / self.temperature) as f32;
        let mut grad = vec![0f32; n * v];
        grad.par_chunks_mut(v.max(1))
            .zip(logits.par_chunks(v.max(1)))
            .zip(grad_out.par_chunks(2).zip(targets.par_iter()))
            .for_each(|((g, row), (go, &y))| {
                let Some((max, s, sz)) = row_stats(row, inv_t) else {
                    g.fill(f32::NAN);
                    return;
                };
                let log_s = s.ln();
                let entropy = log_s - sz / s;
                let (g_lp, g_h) = (f64::from(go[0]), f64::from(go[1]));
                let scale = f64::from(inv_t);
                for (gj, &x) in g.iter_mut().zip(row) {
                    let log_p = f64::from(x * inv_t - max) - log_s;
                    let p = log_p.exp();
                    let h_term = if p > 0.0 { -g_h * p * (log_p + entropy) } else { 0.0 };
                    *gj = ((-g_lp * p + h_term) * scale) as f32;
                }
                g[y as usize] += (g_lp * scale) as f32;
            });
        Ok((CpuStorage::F32(grad), Shape::from((n, v))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rng;
    use candle_core::Var;

    fn random_logits(n: usize, v: usize, seed: u64, scale: f64) -> Vec<f32> {
        let mut rng = Rng::new(seed);
        (0..n * v).map(|_| (rng.normal() * scale) as f32).collect()
    }

    fn to_vec(t: &Tensor) -> Vec<f32> {
        t.to_vec1::<f32>().unwrap_or_default()
    }

    fn close(a: &[f32], b: &[f32], tol: f32) -> bool {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| x == y || (x - y).abs() <= tol * (1.0 + y.abs()) || (x.is_nan() && y.is_nan()))
    }

    #[test]
    fn values_equal_the_unfused_path() -> Result<()> {
        for (n, v, t, scale) in [(1, 2, 1.0, 1.0), (7, 13, 1.0, 3.0), (16, 1000, 0.6, 2.0), (5, 4096, 1.3, 8.0)] {
            let x = Tensor::from_vec(random_logits(n, v, (n * v) as u64, scale), (n, v), &Device::Cpu)?;
            let y: Vec<u32> = (0..n).map(|i| ((i * 7919) % v) as u32).collect();
            let y = Tensor::new(y.as_slice(), &Device::Cpu)?;
            let (lp, h) = token_logprob_entropy(&x, &y, t)?;
            let (lp0, h0) = unfused(&x, &y, t)?;
            assert!(
                close(&to_vec(&lp), &to_vec(&lp0), 1e-5),
                "logp n={n} v={v}: {:?} vs {:?}",
                to_vec(&lp),
                to_vec(&lp0)
            );
            assert!(close(&to_vec(&h), &to_vec(&h0), 1e-5), "entropy n={n} v={v}");
        }
        Ok(())
    }

    /// Loss `sum(a * logp + b * H)` with fixed weights, and the gradient of the logits.
    fn loss_grad(fused: bool, x: &[f32], n: usize, v: usize, y: &[u32], t: f64) -> Result<(f32, Vec<f32>)> {
        let var = Var::from_vec(x.to_vec(), (n, v), &Device::Cpu)?;
        let y = Tensor::new(y, &Device::Cpu)?;
        let (lp, h) =
            if fused { token_logprob_entropy(var.as_tensor(), &y, t)? } else { unfused(var.as_tensor(), &y, t)? };
        let a: Vec<f32> = (0..n).map(|i| 0.5 + i as f32 * 0.25).collect();
        let b: Vec<f32> = (0..n).map(|i| 1.0 - i as f32 * 0.3).collect();
        let a = Tensor::new(a.as_slice(), &Device::Cpu)?;
        let b = Tensor::new(b.as_slice(), &Device::Cpu)?;
        let loss = ((lp * a)?.sum_all()? + (h * b)?.sum_all()?)?;
        let grads = loss.backward()?;
        let g = grads.get(var.as_tensor()).ok_or_else(|| Error::Format("no gradient".into()))?;
        Ok((loss.to_scalar::<f32>()?, g.flatten_all()?.to_vec1::<f32>()?))
    }

    #[test]
    fn gradients_equal_autograd_of_the_unfused_path_and_finite_differences() -> Result<()> {
        for (n, v, t) in [(3, 5, 1.0), (4, 64, 0.7), (2, 500, 1.5)] {
            let x = random_logits(n, v, 11 + v as u64, 2.0);
            let y: Vec<u32> = (0..n).map(|i| ((i * 31 + 2) % v) as u32).collect();
            let (_, g_fused) = loss_grad(true, &x, n, v, &y, t)?;
            let (_, g_plain) = loss_grad(false, &x, n, v, &y, t)?;
            assert!(close(&g_fused, &g_plain, 1e-5), "n={n} v={v} t={t}");
            // Central differences in f64 on the definitions, for a few coordinates.
            let f = |x: &[f32]| -> f64 {
                (0..n)
                    .map(|i| {
                        let z: Vec<f64> = x[i * v..(i + 1) * v].iter().map(|&a| f64::from(a) / t).collect();
                        let m = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                        let lse = m + z.iter().map(|a| (a - m).exp()).sum::<f64>().ln();
                        let h: f64 = z.iter().map(|a| -(a - lse).exp() * (a - lse)).sum();
                        (0.5 + i as f64 * 0.25) * (z[y[i] as usize] - lse) + (1.0 - i as f64 * 0.3) * h
                    })
                    .sum()
            };
            for j in [0, 1, v - 1, v + 2, n * v - 1] {
                let eps = 1e-2f32;
                let (mut up, mut down) = (x.clone(), x.clone());
                up[j] += eps;
                down[j] -= eps;
                let fd = (f(&up) - f(&down)) / (2.0 * f64::from(eps));
                assert!((fd - f64::from(g_fused[j])).abs() < 1e-3, "n={n} v={v} j={j}: fd {fd} vs {}", g_fused[j]);
            }
        }
        Ok(())
    }

    #[test]
    fn non_finite_rows_follow_log_softmax() -> Result<()> {
        let inf = f32::INFINITY;
        let rows: [[f32; 3]; 5] =
            [[1.0, 2.0, 3.0], [f32::NAN, 0.0, 0.0], [-inf, -inf, -inf], [inf, 0.0, 0.0], [-inf, 0.0, 0.0]];
        let x = Tensor::from_vec(rows.iter().flatten().copied().collect::<Vec<f32>>(), (5, 3), &Device::Cpu)?;
        let y = Tensor::new(&[0u32, 1, 1, 1, 0], &Device::Cpu)?;
        let (lp, h) = token_logprob_entropy(&x, &y, 1.0)?;
        let (lp0, h0) = unfused(&x, &y, 1.0)?;
        let (lp, h, lp0, h0) = (to_vec(&lp), to_vec(&h), to_vec(&lp0), to_vec(&h0));
        assert!(close(&lp, &lp0, 1e-6), "{lp:?} vs {lp0:?}");
        assert!(close(&h[..4], &h0[..4], 1e-6), "{h:?} vs {h0:?}");
        assert!(lp[1].is_nan() && lp[2].is_nan() && lp[3].is_nan() && h[1].is_nan() && h[2].is_nan() && h[3].is_nan());
        // A -inf logit has probability 0: its target log-prob is -inf, the entropy is that of the
        // other two (ln 2), where the unfused product 0 * -inf gives NaN.
        assert_eq!(lp[4], f32::NEG_INFINITY);
        assert!((h[4] - 2f32.ln()).abs() < 1e-6 && h0[4].is_nan(), "{} {}", h[4], h0[4]);
        Ok(())
    }

    #[test]
    fn bad_arguments_are_errors() -> Result<()> {
        let x = Tensor::zeros((2, 4), DType::F32, &Device::Cpu)?;
        let y = Tensor::new(&[0u32, 4], &Device::Cpu)?;
        assert!(token_logprob_entropy(&x, &y, 1.0).is_err(), "target outside the vocabulary");
        let y = Tensor::new(&[0u32, 1, 2], &Device::Cpu)?;
        assert!(token_logprob_entropy(&x, &y, 1.0).is_err(), "wrong target count");
        let y = Tensor::new(&[0u32, 1], &Device::Cpu)?;
        for t in [0.0, -1.0, f64::NAN] {
            assert!(token_logprob_entropy(&x, &y, t).is_err(), "temperature {t}");
        }
        // f64 takes the plain path with the same values.
        let (lp, h) = token_logprob_entropy(&x.to_dtype(DType::F64)?, &y, 1.0)?;
        assert!(
            (lp.to_vec1::<f64>()?[0] + 4f64.ln()).abs() < 1e-12 && (h.to_vec1::<f64>()?[1] - 4f64.ln()).abs() < 1e-12
        );
        Ok(())
    }
}
