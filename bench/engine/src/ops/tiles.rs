//! The f32 tile products the fused attention is built from (rows of `hd` values, row-major
//! tiles of at most [`super::attention::BLOCK`] rows), compiled for the baseline CPU and with
//! AVX2/FMA.

use crate::cpu::{multiversion, sum_lanes};

multiversion! {
    /// `s[i * nk + j] = scale * (a_i . b_j)`: `a` is `[nq, hd]`, `b` `[nk, hd]`, `s` `[nq, nk]`.
    pub fn dot_rows(a: &[f32], b: &[f32], hd: usize, scale: f32, s: &mut [f32]) {
        let nk = b.len() / hd;
        for (ai, si) in a.chunks_exact(hd).zip(s.chunks_exact_mut(nk)) {
            for (bj, sij) in b.chunks_exact(hd).zip(si.iter_mut()) {
                let mut lanes = [0.0f32; 16];
                for (x, y) in ai.chunks_exact(16).zip(bj.chunks_exact(16)) {
                    for l in 0..16 {
                        lanes[l] += x[l] * y[l];
                    }
                }
                let tail: f32 = ai
                    .chunks_exact(16)
                    .remainder()
                    .iter()
                    .zip(bj.chunks_exact(16).remainder())
                    .map(|(x, y)| x * y)
                    .sum();
                *sij = (sum_lanes(&lanes) + tail) * scale;
            }
        }
    }
}

multiversion! {
    /// `o += p x`: `p` is `[nq, nk]`, `x` `[nk, hd]`, `o` `[nq, hd]`.
    pub fn add_product(p: &[f32], x: &[f32], hd: usize, o: &mut [f32]) {
        let nk = x.len() / hd;
        for (pi, oi) in p.chunks_exact(nk).zip(o.chunks_exact_mut(hd)) {
            for (&w, xj) in pi.iter().zip(x.chunks_exact(hd)) {
                if w != 0.0 {
                    for (o, &v) in oi.iter_mut().zip(xj) {
                        *o += w * v;
                    }
                }
            }
        }
    }
}

multiversion! {
    /// `o += pᵀ x`: `p` is `[nq, nk]`, `x` `[nq, hd]`, `o` `[nk, hd]`.
    pub fn add_transposed_product(p: &[f32], x: &[f32], hd: usize, o: &mut [f32]) {
        let nk = o.len() / hd;
        for (pi, xi) in p.chunks_exact(nk).zip(x.chunks_exact(hd)) {
            for (&w, oj) in pi.iter().zip(o.chunks_exact_mut(hd)) {
                if w != 0.0 {
                    for (o, &v) in oj.iter_mut().zip(xi) {
                        *o += w * v;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tile_products_match_their_definitions() {
        let (nq, nk, hd) = (3, 5, 20);
        let a: Vec<f32> = (0..nq * hd).map(|i| (i as f32 * 0.37).sin()).collect();
        let b: Vec<f32> = (0..nk * hd).map(|i| (i as f32 * 0.11).cos()).collect();
        let mut s = vec![0.0; nq * nk];
        dot_rows(&a, &b, hd, 0.5, &mut s);
        for i in 0..nq {
            for j in 0..nk {
                let want: f32 = (0..hd).map(|d| a[i * hd + d] * b[j * hd + d]).sum::<f32>() * 0.5;
                assert!((s[i * nk + j] - want).abs() < 1e-5);
            }
        }
        let mut o = vec![1.0; nq * hd];
        add_product(&s, &b, hd, &mut o);
        let mut ot = vec![0.0; nk * hd];
        add_transposed_product(&s, &a, hd, &mut ot);
        for d in 0..hd {
            let want: f32 = 1.0 + (0..nk).map(|j| s[nk + j] * b[j * hd + d]).sum::<f32>();
            assert!((o[hd + d] - want).abs() < 1e-5);
            let want: f32 = (0..nq).map(|i| s[i * nk + 2] * a[i * hd + d]).sum();
            assert!((ot[2 * hd + d] - want).abs() < 1e-5);
        }
    }
}
