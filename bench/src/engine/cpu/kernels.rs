//! Matrix products of quantized weights with quantized activations: integer dot products per
//! block of 32 (AVX2 where the CPU has it, portable code elsewhere), every weight block reused
//! across up to [`TILE`] activation rows, output rows spread over rayon's threads.
//!
//! Each output value is summed in the same order whatever the batch size or thread count, so
//! results do not depend on which other rows share a batch.

use super::blocks::{BlockFormat, QActs, QMatrix, BLOCK};
use rayon::prelude::*;

/// Activation rows that share one pass over a weight row.
pub const TILE: usize = 4;

/// Output values computed per rayon task at least (fewer means too much scheduling overhead).
const MIN_TASK_WORK: usize = 4096;

/// `out[b * out.len() / rows + offset_j + o] = dot(ws[j] row o, acts row b)` for every matrix `j`
/// (matrices side by side: `offset_j` is the sum of the previous ones' rows). All matrices must
/// have `acts`' column count; `out` holds `acts.rows()` rows of the total width.
pub fn matmul(ws: &[&QMatrix], acts: &QActs, out: &mut [f32]) {
    let m = acts.rows();
    let width: usize = ws.iter().map(|w| w.rows()).sum();
    debug_assert_eq!(out.len(), m * width);
    debug_assert!(ws.iter().all(|w| w.blocks_per_row() == acts.blocks));
    if m == 0 || width == 0 {
        return;
    }
    let simd = Simd::detect();
    // Tasks: ranges of rows of one matrix.
    let threads = rayon::current_num_threads().max(1);
    let per_task = (width / (4 * threads)).max(MIN_TASK_WORK / (m * acts.blocks * BLOCK / 64).max(1)).max(8);
    let mut tasks = Vec::new();
    let mut offset = 0;
    for (j, w) in ws.iter().enumerate() {
        let mut start = 0;
        while start < w.rows() {
            let end = (start + per_task).min(w.rows());
            tasks.push((j, start, end, offset));
            start = end;
        }
        offset += w.rows();
    }
    let ptr = OutPtr(out.as_mut_ptr());
    let run = |&(j, start, end, offset): &(usize, usize, usize, usize)| {
        let w = ws[j];
        let mut tile = [0.0f32; TILE];
        for o in start..end {
            let mut b = 0;
            while b < m {
                let n = (m - b).min(TILE);
                row_tile(simd, w, o, acts, b, n, &mut tile);
                for (i, &v) in tile[..n].iter().enumerate() {
                    // SAFETY: each (b + i, offset + o) is written by exactly one task, and lies
                    // in `out` (b + i < m, offset + o < width).
                    unsafe { ptr.write((b + i) * width + offset + o, v) };
                }
                b += n;
            }
        }
    };
    if tasks.len() == 1 {
        run(&tasks[0]);
    } else {
        tasks.par_iter().for_each(run);
    }
}

/// A raw output pointer shared by tasks that write disjoint elements.
#[derive(Clone, Copy)]
struct OutPtr(*mut f32);
// SAFETY: tasks write disjoint elements (see `matmul`), and the buffer outlives the parallel loop.
unsafe impl Send for OutPtr {}
unsafe impl Sync for OutPtr {}

impl OutPtr {
    /// # Safety
    /// `i` must be in bounds and written by no other thread concurrently.
    unsafe fn write(self, i: usize, v: f32) {
        unsafe { *self.0.add(i) = v };
    }
}

/// Which kernels the CPU runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Simd {
    /// AVX2 and FMA (x86-64).
    Avx2,
    /// Portable code.
    Portable,
}

impl Simd {
    /// The best kernels this CPU supports.
    pub fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                return Simd::Avx2;
            }
        }
        Simd::Portable
    }
}

/// Dot products of weight row `o` with activation rows `b..b + n` (n <= TILE) into `out[..n]`.
pub fn row_tile(simd: Simd, w: &QMatrix, o: usize, acts: &QActs, b: usize, n: usize, out: &mut [f32; TILE]) {
    match simd {
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => {
            // SAFETY: `Simd::Avx2` is only chosen when the CPU has AVX2 and FMA; the slices
            // have the lengths the kernels read (checked by `matmul`'s shapes).
            unsafe {
                match n {
                    1 => avx2::tile::<1>(w, o, acts, b, out),
                    2 => avx2::tile::<2>(w, o, acts, b, out),
                    3 => avx2::tile::<3>(w, o, acts, b, out),
                    _ => avx2::tile::<4>(w, o, acts, b, out),
                }
            }
        }
        _ => {
            for (i, slot) in out[..n].iter_mut().enumerate() {
                *slot = portable_dot(w, o, acts, b + i);
            }
        }
    }
}

/// The dot product of weight row `o` and activation row `b`, in portable code.
pub fn portable_dot(w: &QMatrix, o: usize, acts: &QActs, b: usize) -> f32 {
    let nb = acts.blocks;
    let (qs, d, m) = (w.row_qs(o), w.row_d(o), w.row_m(o));
    let a_qs = &acts.qs[b * nb * BLOCK..(b + 1) * nb * BLOCK];
    let (a_d, a_s) = (&acts.d[b * nb..(b + 1) * nb], &acts.s[b * nb..(b + 1) * nb]);
    let mut sum = 0.0f32;
    for k in 0..nb {
        let a = &a_qs[k * BLOCK..(k + 1) * BLOCK];
        let isum: i32 = match w.format() {
            BlockFormat::Q4 => {
                let p = &qs[k * 16..(k + 1) * 16];
                (0..16).map(|i| i32::from(p[i] & 0x0f) * i32::from(a[i]) + i32::from(p[i] >> 4) * i32::from(a[16 + i])).sum()
            }
            BlockFormat::Q8 => {
                let p = &qs[k * BLOCK..(k + 1) * BLOCK];
                p.iter().zip(a).map(|(&x, &y)| i32::from(x as i8) * i32::from(y)).sum()
            }
        };
        sum += isum as f32 * d[k] * a_d[k];
    }
    sum + m.iter().zip(a_s).map(|(x, y)| x * y).sum::<f32>()
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::super::blocks::{BlockFormat, QActs, QMatrix, BLOCK};
    use super::TILE;
    use std::arch::x86_64::*;

    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn hsum(v: __m256) -> f32 {
        let lo = _mm256_castps256_ps128(v);
        let hi = _mm256_extractf128_ps::<1>(v);
        let s = _mm_add_ps(lo, hi);
        let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        let s = _mm_add_ss(s, _mm_movehdup_ps(s));
        _mm_cvtss_f32(s)
    }

    /// `N` dot products of weight row `o` with activation rows `b..b + N`.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA; `acts` must hold rows `b..b + N` of `w.cols()` values.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn tile<const N: usize>(w: &QMatrix, o: usize, acts: &QActs, b: usize, out: &mut [f32; TILE]) {
        let nb = acts.blocks;
        let (qs, d, m) = (w.row_qs(o), w.row_d(o), w.row_m(o));
        let a_row = |j: usize| (b + j) * nb;
        let ones = _mm256_set1_epi16(1);
        let mut acc = [_mm256_setzero_ps(); N];
        match w.format() {
            BlockFormat::Q4 => {
                let low = _mm_set1_epi8(0x0f);
                for k in 0..nb {
                    // SAFETY: row `o` has `nb` blocks of 16 bytes.
                    let raw = unsafe { _mm_loadu_si128(qs.as_ptr().add(k * 16).cast()) };
                    let lo = _mm_and_si128(raw, low);
                    let hi = _mm_and_si128(_mm_srli_epi16::<4>(raw), low);
                    let wv = _mm256_set_m128i(hi, lo);
                    for j in 0..N {
                        let at = a_row(j) + k;
                        // SAFETY: activation row b + j has `nb` blocks of 32 bytes.
                        let a = unsafe { _mm256_loadu_si256(acts.qs.as_ptr().add(at * BLOCK).cast()) };
                        let p = _mm256_madd_epi16(_mm256_maddubs_epi16(wv, a), ones);
                        let scale = _mm256_set1_ps(d[k] * acts.d[at]);
                        acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), scale, acc[j]);
                    }
                }
            }
            BlockFormat::Q8 => {
                for k in 0..nb {
                    // SAFETY: row `o` has `nb` blocks of 32 bytes.
                    let wv = unsafe { _mm256_loadu_si256(qs.as_ptr().add(k * BLOCK).cast()) };
                    let wabs = _mm256_sign_epi8(wv, wv);
                    for j in 0..N {
                        let at = a_row(j) + k;
                        // SAFETY: activation row b + j has `nb` blocks of 32 bytes.
                        let a = unsafe { _mm256_loadu_si256(acts.qs.as_ptr().add(at * BLOCK).cast()) };
                        let signed = _mm256_sign_epi8(a, wv);
                        let p = _mm256_madd_epi16(_mm256_maddubs_epi16(wabs, signed), ones);
                        let scale = _mm256_set1_ps(d[k] * acts.d[at]);
                        acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), scale, acc[j]);
                    }
                }
            }
        }
        for j in 0..N {
            let s = &acts.s[a_row(j)..a_row(j) + nb];
            let offset: f32 = m.iter().zip(s).map(|(x, y)| x * y).sum();
            out[j] = hsum(acc[j]) + offset;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use super::super::blocks::GgmlBlockType;

    fn values(n: usize, seed: u32) -> Vec<f32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (s >> 8) as f32 / (1u32 << 24) as f32 - 0.5
            })
            .collect()
    }

    fn q4_1_bytes(rows: usize, cols: usize, seed: u32) -> Vec<u8> {
        let v = values(rows * cols / 32 * 18, seed);
        let mut bytes = Vec::new();
        for (i, chunk) in v.chunks_exact(18).enumerate() {
            bytes.extend_from_slice(&[0x00, 0x24]); // d = 2^-6 * 1.5 ~ 0.0234
            bytes.extend_from_slice(&[0x00, if i % 2 == 0 { 0xa4 } else { 0x24 }]); // m = -/+0.0234
            bytes.extend(chunk[..16].iter().map(|x| ((x + 0.5) * 255.0) as u8));
        }
        bytes
    }

    #[test]
    fn kernels_match_the_dequantized_product() {
        let (rows, cols, m) = (37, 96, 7);
        let x = values(m * cols, 7);
        let mut acts = QActs::default();
        acts.quantize(&x, cols);
        let dq: Vec<f32> = (0..m * cols)
            .map(|i| acts.d[i / BLOCK] * f32::from(acts.qs[i]))
            .collect();
        let q41 = QMatrix::from_ggml(GgmlBlockType::Q4_1, rows, cols, &q4_1_bytes(rows, cols, 3)).unwrap();
        let q8 = QMatrix::quantize_q8(rows, cols, &values(rows * cols, 11)).unwrap();
        let both = [&q41, &q8];
        let mut out = vec![0.0; m * 2 * rows];
        matmul(&both, &acts, &mut out);
        for (j, w) in both.iter().enumerate() {
            let wd = w.dequantize();
            for b in 0..m {
                for o in 0..rows {
                    let want: f32 = (0..cols).map(|c| wd[o * cols + c] * dq[b * cols + c]).sum();
                    let got = out[b * 2 * rows + j * rows + o];
                    assert!((got - want).abs() < 1e-4 * (1.0 + want.abs()), "matrix {j} row {b} out {o}: {got} vs {want}");
                    let portable = portable_dot(w, o, &acts, b);
                    assert!((portable - want).abs() < 1e-4 * (1.0 + want.abs()));
                }
            }
        }
    }

    #[test]
    fn results_do_not_depend_on_batch_mates() {
        let (rows, cols) = (64, 64);
        let w = QMatrix::from_ggml(GgmlBlockType::Q4_1, rows, cols, &q4_1_bytes(rows, cols, 5)).unwrap();
        let x = values(6 * cols, 9);
        let mut all = QActs::default();
        all.quantize(&x, cols);
        let mut out_all = vec![0.0; 6 * rows];
        matmul(&[&w], &all, &mut out_all);
        for b in 0..6 {
            let mut one = QActs::default();
            one.quantize(&x[b * cols..(b + 1) * cols], cols);
            let mut out = vec![0.0; rows];
            matmul(&[&w], &one, &mut out);
            assert_eq!(out, out_all[b * rows..(b + 1) * rows].to_vec(), "row {b}");
        }
    }
}
