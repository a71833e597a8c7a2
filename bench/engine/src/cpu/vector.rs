//! The decoder's small f32 loops (dot products, attention of one head, RMS norm, SiLU gating,
//! exp), written so the compiler vectorises them, and compiled twice: for the baseline CPU and
//! with AVX2/FMA, picked at run time.

use super::kernels::Simd;

/// Defines `pub fn NAME(args) -> ret` whose body is compiled for the baseline CPU and again with
/// AVX2 and FMA enabled; the AVX2 copy runs where [`Simd::detect`] allows.
macro_rules! multiversion {
    ($(#[$meta:meta])* pub fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block) => {
        $(#[$meta])*
        pub fn $name($($arg: $ty),*) $(-> $ret)? {
            #[inline(always)]
            fn body($($arg: $ty),*) $(-> $ret)? $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2,fma")]
                fn avx2($($arg: $ty),*) $(-> $ret)? {
                    body($($arg),*)
                }
                if $crate::cpu::Simd::detect() >= $crate::cpu::Simd::Avx2 {
                    // SAFETY: the CPU has AVX2 and FMA.
                    return unsafe { avx2($($arg),*) };
                }
            }
            body($($arg),*)
        }
    };
}
pub(crate) use multiversion;

/// `e^x` for f32, to about 2 ulp (Cephes' polynomial after reducing by powers of 2); no libm
/// call, so loops over it vectorise. Inputs are clamped to [-87.3, 88.7] (results from about
/// 1.2e-38 to 3.4e38; NaN stays NaN).
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    let x = x.clamp(-87.336_55, 88.722_83);
    let k = (x * LOG2E).round_ties_even();
    let r = x - k * LN2_HI - k * LN2_LO;
    let mut p = 1.987_569_1e-4f32;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 0.5;
    let poly = p * r * r + r + 1.0;
    // 2^k, k in -126..=128: split in two factors so both stay normal numbers.
    let k = k as i32;
    let (a, b) = (k / 2, k - k / 2);
    poly * f32::from_bits(((a + 127) as u32) << 23) * f32::from_bits(((b + 127) as u32) << 23)
}

/// Attention of one query head over `scores.len()` cached positions, unnormalised: `keys[p *
/// stride ..]` and `values[p * stride ..]` hold position `p`'s head (`q.len()` values). Writes
/// `sum_p exp(s_p - max) * value_p` into `out` and returns `(max, sum_p exp(s_p - max))`, where
/// `s_p = scale * q . key_p`; spans of positions are merged with [`merge_spans`]. `scores` is
/// scratch space.
pub fn attend_span(
    q: &[f32],
    keys: &[f32],
    values: &[f32],
    stride: usize,
    scale: f32,
    scores: &mut [f32],
    out: &mut [f32],
) -> (f32, f32) {
    #[cfg(target_arch = "x86_64")]
    if Simd::detect() >= Simd::Avx2 {
        // SAFETY: the CPU has AVX2 and FMA.
        unsafe {
            return match q.len() {
                64 => attend_avx2::<64>(q, keys, values, stride, scale, scores, out),
                128 => attend_avx2::<128>(q, keys, values, stride, scale, scores, out),
                _ => attend_avx2::<0>(q, keys, values, stride, scale, scores, out),
            };
        }
    }
    match q.len() {
        64 => attend::<64>(q, keys, values, stride, scale, scores, out),
        128 => attend::<128>(q, keys, values, stride, scale, scores, out),
        _ => attend::<0>(q, keys, values, stride, scale, scores, out),
    }
}

/// Merges spans' partial attention (each `[max, total, acc...]` as [`attend_span`] returns it)
/// into the normalised output.
pub fn merge_spans<'a>(spans: impl Iterator<Item = &'a [f32]> + Clone, out: &mut [f32]) {
    let max = spans.clone().fold(f32::NEG_INFINITY, |m, s| m.max(s[0]));
    let mut total = 0.0;
    out.fill(0.0);
    for span in spans {
        let w = (span[0] - max).exp();
        total += w * span[1];
        for (o, &a) in out.iter_mut().zip(&span[2..]) {
            *o += w * a;
        }
    }
    let inv = 1.0 / total;
    out.iter_mut().for_each(|o| *o *= inv);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn attend_avx2<const HD: usize>(
    q: &[f32],
    keys: &[f32],
    values: &[f32],
    stride: usize,
    scale: f32,
    scores: &mut [f32],
    out: &mut [f32],
) -> (f32, f32) {
    attend::<HD>(q, keys, values, stride, scale, scores, out)
}

/// [`attend_span`]'s body for a head size known at compile time (`HD`), which keeps the output
/// in registers, or any size (`HD = 0`).
#[inline(always)]
fn attend<const HD: usize>(
    q: &[f32],
    keys: &[f32],
    values: &[f32],
    stride: usize,
    scale: f32,
    scores: &mut [f32],
    out: &mut [f32],
) -> (f32, f32) {
    let hd = if HD == 0 { q.len() } else { HD };
    let (q, out) = (&q[..hd], &mut out[..hd]);
    // Scores, 32 partial sums each (short dependency chains).
    let mut max = f32::NEG_INFINITY;
    for (p, sc) in scores.iter_mut().enumerate() {
        let key = &keys[p * stride..p * stride + hd];
        let mut lanes = [0.0f32; 32];
        for (x, y) in q.chunks_exact(32).zip(key.chunks_exact(32)) {
            for i in 0..32 {
                lanes[i] += x[i] * y[i];
            }
        }
        let tail: f32 =
            q.chunks_exact(32).remainder().iter().zip(key.chunks_exact(32).remainder()).map(|(x, y)| x * y).sum();
        *sc = (sum_lanes(&lanes) + tail) * scale;
        max = max.max(*sc);
    }
    let mut lanes = [0.0f32; 8];
    let mut exact = scores.chunks_exact_mut(8);
    for c in &mut exact {
        for i in 0..8 {
            c[i] = exp(c[i] - max);
            lanes[i] += c[i];
        }
    }
    let mut total = sum_lanes(&lanes);
    for sc in exact.into_remainder() {
        *sc = exp(*sc - max);
        total += *sc;
    }
    if HD == 0 {
        out.fill(0.0);
        for (p, &w) in scores.iter().enumerate() {
            for (o, &v) in out.iter_mut().zip(&values[p * stride..p * stride + hd]) {
                *o += w * v;
            }
        }
    } else {
        let mut acc = [0.0f32; HD];
        for (p, &w) in scores.iter().enumerate() {
            let value = &values[p * stride..p * stride + HD];
            for i in 0..HD {
                acc[i] += w * value[i];
            }
        }
        out.copy_from_slice(&acc);
    }
    (max, total)
}

/// Sum of partial sums, pairwise.
#[inline(always)]
pub(crate) fn sum_lanes<const N: usize>(lanes: &[f32; N]) -> f32 {
    let mut v = *lanes;
    let mut n = N;
    while n > 1 {
        n /= 2;
        for i in 0..n {
            v[i] += v[i + n];
        }
    }
    v[0]
}

multiversion! {
    /// RMS norm of each `w.len()`-long row of `x` times the gain `w`, into `out`.
    pub fn rms_norm(x: &[f32], w: &[f32], eps: f32, out: &mut [f32]) {
        for (xr, or) in x.chunks_exact(w.len()).zip(out.chunks_exact_mut(w.len())) {
            let mut lanes = [0.0f32; 8];
            for c in xr.chunks_exact(8) {
                for i in 0..8 {
                    lanes[i] += c[i] * c[i];
                }
            }
            let tail: f32 = xr.chunks_exact(8).remainder().iter().map(|v| v * v).sum();
            let ms = (lanes.iter().sum::<f32>() + tail) / w.len() as f32;
            let inv = 1.0 / (ms + eps).sqrt();
            for ((o, &v), &g) in or.iter_mut().zip(xr).zip(w) {
                *o = v * inv * g;
            }
        }
    }
}

multiversion! {
    /// `out[i] = silu(gate[i]) * up[i]`.
    pub fn silu_mul(gate: &[f32], up: &[f32], out: &mut [f32]) {
        for ((o, &g), &u) in out.iter_mut().zip(gate).zip(up) {
            *o = g / (1.0 + exp(-g)) * u;
        }
    }
}

multiversion! {
    /// `y += x`.
    pub fn add_assign(y: &mut [f32], x: &[f32]) {
        for (a, &b) in y.iter_mut().zip(x) {
            *a += b;
        }
    }
}

multiversion! {
    /// Quantizes 32 values to `i8` with one scale (`max |x| / 127`, rounding to nearest, ties to
    /// even); returns the scale and the sum of the quantized values.
    pub fn quantize_block(block: &[f32], out: &mut [u8]) -> (f32, i32) {
        let amax = block.iter().fold(0.0f32, |a, &x| a.max(x.abs()));
        let d = amax / 127.0;
        let inv = if d > 0.0 { 1.0 / d } else { 0.0 };
        let mut sum = 0i32;
        for (o, &x) in out.iter_mut().zip(block) {
            let q = (x * inv).round_ties_even() as i32;
            sum += q;
            *o = q as i8 as u8;
        }
        (d, sum)
    }
}

multiversion! {
    /// `(max, ln(sum(exp(x - max))))` of a slice, the pieces of its log-sum-exp (`max + second`),
    /// summed in f64.
    pub fn log_sum_exp_parts(x: &[f32]) -> (f32, f64) {
        let max = x.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
        let mut total = 0.0f64;
        for chunk in x.chunks(256) {
            let mut lanes = [0.0f32; 8];
            let exact = chunk.chunks_exact(8);
            let tail: f32 = exact.remainder().iter().map(|&v| exp(v - max)).sum();
            for c in exact {
                for i in 0..8 {
                    lanes[i] += exp(c[i] - max);
                }
            }
            total += f64::from(lanes.iter().sum::<f32>() + tail);
        }
        (max, total.ln())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_is_within_a_few_ulp_of_libm() {
        let mut worst = 0.0f64;
        for i in -8700..=8800 {
            let x = i as f32 / 100.0 + 0.003;
            let (got, want) = (f64::from(exp(x)), f64::from(x).exp());
            worst = worst.max(((got - want) / want).abs());
        }
        assert!(worst < 4e-7, "relative error {worst}");
        assert!(exp(-200.0) < 1.3e-38 && exp(-200.0) >= 0.0);
        assert!(exp(100.0) > 3e38);
        assert!(exp(f32::NAN).is_nan());
    }

    /// Full attention through spans of `split` positions merged.
    fn attend_split(q: &[f32], keys: &[f32], values: &[f32], stride: usize, n: usize, split: usize) -> Vec<f32> {
        let hd = q.len();
        let mut parts = Vec::new();
        for start in (0..n).step_by(split) {
            let len = split.min(n - start);
            let mut part = vec![0.0; hd + 2];
            let (max, total) = attend_span(
                q,
                &keys[start * stride..],
                &values[start * stride..],
                stride,
                0.3,
                &mut vec![0.0; len],
                &mut part[2..],
            );
            part[0] = max;
            part[1] = total;
            parts.push(part);
        }
        let mut out = vec![0.0; hd];
        merge_spans(parts.iter().map(|p| p.as_slice()), &mut out);
        out
    }

    #[test]
    fn attention_matches_the_direct_formula() {
        for (hd, stride, n) in [(12, 20, 7), (64, 70, 45), (128, 136, 19)] {
            let q: Vec<f32> = (0..hd).map(|i| (i as f32 - 5.0) / 7.0).collect();
            let keys: Vec<f32> = (0..n * stride).map(|i| ((i * 37 % 23) as f32 - 11.0) / 9.0).collect();
            let values: Vec<f32> = (0..n * stride).map(|i| ((i * 11 % 19) as f32 - 9.0) / 5.0).collect();
            let scores: Vec<f64> = (0..n)
                .map(|p| 0.3 * (0..hd).map(|i| f64::from(q[i]) * f64::from(keys[4 + p * stride + i])).sum::<f64>())
                .collect();
            let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let z: f64 = scores.iter().map(|s| (s - max).exp()).sum();
            for split in [n, 8, 5] {
                let out = attend_split(&q, &keys[4..], &values[4..], stride, n, split);
                for (i, &o) in out.iter().enumerate() {
                    let want: f64 =
                        (0..n).map(|p| (scores[p] - max).exp() / z * f64::from(values[4 + p * stride + i])).sum();
                    assert!((f64::from(o) - want).abs() < 1e-5, "head size {hd}, spans of {split}, {i}: {o} vs {want}");
                }
            }
            // The fixed-size body equals the any-size one.
            let (mut a, mut b) = (vec![0.0; hd], vec![0.0; hd]);
            let ra = attend_span(&q, &keys, &values, stride, 0.3, &mut vec![0.0; n], &mut a);
            let rb = attend::<0>(&q, &keys, &values, stride, 0.3, &mut vec![0.0; n], &mut b);
            assert!((ra.1 - rb.1).abs() < 1e-4 && a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-4));
        }
    }

    #[test]
    fn norm_gating_and_log_sum_exp_match_their_formulas() {
        let x: Vec<f32> = (0..40).map(|i| (i as f32 - 17.0) / 3.0).collect();
        let w: Vec<f32> = (0..20).map(|i| 1.0 + i as f32 / 10.0).collect();
        let mut out = vec![0.0; 40];
        rms_norm(&x, &w, 1e-5, &mut out);
        for r in 0..2 {
            let row = &x[r * 20..(r + 1) * 20];
            let inv = 1.0 / (row.iter().map(|v| v * v).sum::<f32>() / 20.0 + 1e-5).sqrt();
            for i in 0..20 {
                assert!((out[r * 20 + i] - row[i] * inv * w[i]).abs() < 1e-5);
            }
        }
        silu_mul(&x[..20], &x[20..], &mut out[..20]);
        for i in 0..20 {
            let g = f64::from(x[i]);
            let want = g / (1.0 + (-g).exp()) * f64::from(x[20 + i]);
            assert!((f64::from(out[i]) - want).abs() < 1e-5 * (1.0 + want.abs()));
        }
        let big: Vec<f32> = (0..1000).map(|i| ((i * 7919) % 1000) as f32 / 37.0 - 10.0).collect();
        let (max, rest) = log_sum_exp_parts(&big);
        let want = big.iter().map(|&v| f64::from(v).exp()).sum::<f64>().ln();
        assert!((f64::from(max) + rest - want).abs() < 1e-6);
    }
}
