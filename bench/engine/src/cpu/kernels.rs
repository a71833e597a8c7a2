//! Matrix products of quantized weights with quantized activations: integer dot products per
//! block of 32 (AVX-512 VNNI on panels of 16 rows, AVX2 on rows, or portable code), every weight
//! block reused across up to [`TILE`] activation rows, output rows spread over the decoding
//! threads ([`Pool`]).
//!
//! Each output value is summed in the same order whatever the batch size or thread count, so
//! results do not depend on which other rows share a batch.

use super::blocks::{BlockFormat, Layout, QActs, QMatrix, Storage, BLOCK};
use super::panels::{Panels, PANEL};
use super::pool::{Pool, SendPtr};
use std::sync::OnceLock;

/// Activation rows that share one pass over a weight row.
pub const TILE: usize = 4;

/// Output values computed per task at least (fewer means too much scheduling overhead).
const MIN_TASK_WORK: usize = 4096;

/// `out[b * out.len() / rows + offset_j + o] = dot(ws[j] row o, acts row b)` for every matrix `j`
/// (matrices side by side: `offset_j` is the sum of the previous ones' rows). All matrices must
/// have `acts`' column count; `out` holds `acts.rows()` rows of the total width.
///
/// # Panics
/// When the shapes disagree (in release builds too: the kernels rely on them).
pub fn matmul(ws: &[&QMatrix], acts: &QActs, out: &mut [f32]) {
    matmul_with(Simd::detect(), ws, acts, out)
}

/// [`matmul`] with the given kernels (which the CPU must support).
pub fn matmul_with(simd: Simd, ws: &[&QMatrix], acts: &QActs, out: &mut [f32]) {
    assert!(simd <= Simd::supported(), "{simd:?} kernels on a CPU without them");
    let m = acts.rows();
    let width: usize = ws.iter().map(|w| w.rows()).sum();
    // The SIMD kernels read and write without bounds checks: these shapes are what makes that
    // sound, so they are checked in every build (once per product, not per tile).
    assert_eq!(out.len(), m * width, "matmul: `out` holds {} values, the product has {m} x {width}", out.len());
    for w in ws {
        assert_eq!(
            w.blocks_per_row(),
            acts.blocks,
            "matmul: a {} x {} matrix against activations of {} columns",
            w.rows(),
            w.cols(),
            acts.blocks * BLOCK
        );
    }
    if m == 0 || width == 0 {
        return;
    }
    // Tasks: ranges of rows of one matrix, whole panels.
    let pool = Pool::global();
    let threads = pool.threads();
    let per_task = (width / (4 * threads))
        .max(MIN_TASK_WORK / (m * acts.blocks * BLOCK / 64).max(1))
        .max(8)
        .next_multiple_of(PANEL);
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
    let ptr = SendPtr(out.as_mut_ptr());
    let run = |&(j, start, end, offset): &(usize, usize, usize, usize)| {
        // SAFETY: each (b, offset + o) is written by exactly one task, and lies in `out`
        // (b < m, offset + o < width).
        let write = |b: usize, o: usize, v: f32| unsafe { *ptr.get().add(b * width + offset + o) = v };
        match ws[j].storage() {
            Storage::Rows { .. } => rows_task(simd, ws[j], start..end, acts, write),
            Storage::Panels(p) => panels_task(simd, p, start..end, acts, write),
        }
    };
    pool.for_each(tasks.len(), &|i| run(&tasks[i]));
}

/// Output rows `range` of a row-major matrix, for every activation row.
fn rows_task(simd: Simd, w: &QMatrix, range: std::ops::Range<usize>, acts: &QActs, write: impl Fn(usize, usize, f32)) {
    let m = acts.rows();
    let mut tile = [0.0f32; TILE];
    for o in range {
        let mut b = 0;
        while b < m {
            let n = (m - b).min(TILE);
            row_tile(simd, w, o, acts, b, n, &mut tile);
            for (i, &v) in tile[..n].iter().enumerate() {
                write(b + i, o, v);
            }
            b += n;
        }
    }
}

/// Output rows `range` (whole panels, but for the matrix's end) of a matrix in panels, for
/// every activation row.
fn panels_task(simd: Simd, w: &Panels, range: std::ops::Range<usize>, acts: &QActs, write: impl Fn(usize, usize, f32)) {
    let m = acts.rows();
    let mut tile = [[0.0f32; PANEL]; TILE];
    for p in QMatrix::panel_range(range.start, range.end) {
        let lanes = (range.end - p * PANEL).min(PANEL);
        let mut b = 0;
        while b < m {
            let n = (m - b).min(TILE);
            panel_tile(simd, w, p, acts, b, n, &mut tile);
            for (i, row) in tile[..n].iter().enumerate() {
                for (lane, &v) in row[..lanes].iter().enumerate() {
                    write(b + i, p * PANEL + lane, v);
                }
            }
            b += n;
        }
    }
}

/// Which kernels the CPU runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Simd {
    /// Portable code.
    Portable,
    /// AVX2, FMA and F16C (x86-64).
    Avx2,
    /// AVX-512 F/BW/VNNI (x86-64), on weights packed in panels.
    Avx512Vnni,
}

impl Simd {
    /// The best kernels this CPU supports, capped by `$RLVR_CPU_SIMD` (`portable`, `avx2` or
    /// `avx512`) when set, to compare kernels or test the slower ones.
    pub fn detect() -> Self {
        static DETECTED: OnceLock<Simd> = OnceLock::new();
        *DETECTED.get_or_init(|| {
            let best = Self::supported();
            match std::env::var("RLVR_CPU_SIMD").as_deref() {
                Ok("portable") => Simd::Portable,
                Ok("avx2") => best.min(Simd::Avx2),
                _ => best,
            }
        })
    }

    /// The best kernels this CPU supports.
    pub fn supported() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            if super::panels::avx2::available() {
                if super::panels::avx512::available() {
                    return Simd::Avx512Vnni;
                }
                return Simd::Avx2;
            }
        }
        Simd::Portable
    }

    /// The matrix layout these kernels are fastest on.
    pub fn layout(self) -> Layout {
        match self {
            Simd::Avx512Vnni | Simd::Avx2 => Layout::Panels,
            Simd::Portable => Layout::Rows,
        }
    }
}

/// Calls `$tile::<N>(args)` with the const `N` equal to the run-time row count `$n` (1 to
/// [`TILE`]).
macro_rules! with_rows {
    ($($tile:ident)::+, $n:expr, ($($arg:expr),*)) => {
        match $n {
            1 => $($tile)::+::<1>($($arg),*),
            2 => $($tile)::+::<2>($($arg),*),
            3 => $($tile)::+::<3>($($arg),*),
            _ => $($tile)::+::<4>($($arg),*),
        }
    };
}

/// Dot products of weight row `o` with activation rows `b..b + n` (n <= TILE) into `out[..n]`.
pub fn row_tile(simd: Simd, w: &QMatrix, o: usize, acts: &QActs, b: usize, n: usize, out: &mut [f32; TILE]) {
    match simd {
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 | Simd::Avx512Vnni => {
            // SAFETY: both levels are only chosen when the CPU has AVX2 and FMA; the slices
            // have the lengths the kernels read (checked by `matmul`'s shapes).
            unsafe { with_rows!(avx2::tile, n, (w, o, acts, b, out)) }
        }
        _ => {
            for (i, slot) in out[..n].iter_mut().enumerate() {
                *slot = portable_dot(w, o, acts, b + i);
            }
        }
    }
}

/// Dot products of panel `p` with activation rows `b..b + n` (n <= TILE) into `out[..n]`.
pub fn panel_tile(simd: Simd, w: &Panels, p: usize, acts: &QActs, b: usize, n: usize, out: &mut [[f32; PANEL]; TILE]) {
    match simd {
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512Vnni => {
            use super::panels::avx512::tile;
            // SAFETY: `Simd::Avx512Vnni` is only chosen when the CPU has AVX-512 F/BW/VNNI;
            // `p` is a panel of `w` and `acts` has the rows (checked by `matmul`'s shapes).
            unsafe { with_rows!(tile, n, (w, p, acts, b, out)) }
        }
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => {
            use super::panels::avx2::tile;
            // SAFETY: `Simd::Avx2` is only chosen when the CPU has AVX2, FMA and F16C; `p` is a
            // panel of `w` and `acts` has the rows (checked by `matmul`'s shapes).
            unsafe { with_rows!(tile, n, (w, p, acts, b, out)) }
        }
        _ => {
            for (i, slot) in out[..n].iter_mut().enumerate() {
                w.portable_dot(p, acts, b + i, slot);
            }
        }
    }
}

/// The dot product of weight row `o` and activation row `b`, in portable code.
pub fn portable_dot(w: &QMatrix, o: usize, acts: &QActs, b: usize) -> f32 {
    let nb = acts.blocks;
    let (qs, d, m) = w.row(o).expect("a row-major matrix");
    let a_qs = &acts.qs[b * nb * BLOCK..(b + 1) * nb * BLOCK];
    let (a_d, a_s) = (&acts.d[b * nb..(b + 1) * nb], &acts.s[b * nb..(b + 1) * nb]);
    let mut sum = 0.0f32;
    for k in 0..nb {
        let a = &a_qs[k * BLOCK..(k + 1) * BLOCK];
        let isum: i32 = match w.format() {
            BlockFormat::Q4 => {
                let p = &qs[k * 16..(k + 1) * 16];
                (0..16)
                    .map(|i| i32::from(p[i] & 0x0f) * i32::from(a[i]) + i32::from(p[i] >> 4) * i32::from(a[16 + i]))
                    .sum()
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
        let (qs, d, m) = w.row(o).expect("a row-major matrix");
        let a_row = |j: usize| (b + j) * nb;
        let ones = _mm256_set1_epi16(1);
        let mut acc = [_mm256_setzero_ps(); N];
        match w.format() {
            BlockFormat::Q4 => {
                let low = _mm_set1_epi8(0x0f);
                for (k, &dk) in d[..nb].iter().enumerate() {
                    // SAFETY: row `o` has `nb` blocks of 16 bytes.
                    let raw = unsafe { _mm_loadu_si128(qs.as_ptr().add(k * 16).cast()) };
                    let lo = _mm_and_si128(raw, low);
                    let hi = _mm_and_si128(_mm_srli_epi16::<4>(raw), low);
                    let wv = _mm256_set_m128i(hi, lo);
                    for (j, acc) in acc.iter_mut().enumerate() {
                        let at = a_row(j) + k;
                        // SAFETY: activation row b + j has `nb` blocks of 32 bytes.
                        let a = unsafe { _mm256_loadu_si256(acts.qs.as_ptr().add(at * BLOCK).cast()) };
                        let p = _mm256_madd_epi16(_mm256_maddubs_epi16(wv, a), ones);
                        let scale = _mm256_set1_ps(dk * acts.d[at]);
                        *acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), scale, *acc);
                    }
                }
            }
            BlockFormat::Q8 => {
                for (k, &dk) in d[..nb].iter().enumerate() {
                    // SAFETY: row `o` has `nb` blocks of 32 bytes.
                    let wv = unsafe { _mm256_loadu_si256(qs.as_ptr().add(k * BLOCK).cast()) };
                    let wabs = _mm256_sign_epi8(wv, wv);
                    for (j, acc) in acc.iter_mut().enumerate() {
                        let at = a_row(j) + k;
                        // SAFETY: activation row b + j has `nb` blocks of 32 bytes.
                        let a = unsafe { _mm256_loadu_si256(acts.qs.as_ptr().add(at * BLOCK).cast()) };
                        let signed = _mm256_sign_epi8(a, wv);
                        let p = _mm256_madd_epi16(_mm256_maddubs_epi16(wabs, signed), ones);
                        let scale = _mm256_set1_ps(dk * acts.d[at]);
                        *acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), scale, *acc);
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
    use super::super::blocks::GgmlBlockType;
    use super::*;

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

    /// Every kernel level this CPU runs, with both layouts.
    fn variants() -> Vec<(Simd, Layout)> {
        let levels = [Simd::Portable, Simd::Avx2, Simd::Avx512Vnni].into_iter().filter(|&s| s <= Simd::supported());
        levels.flat_map(|s| [(s, Layout::Rows), (s, Layout::Panels)]).collect()
    }

    #[test]
    fn kernels_match_the_dequantized_product() {
        let (rows, cols, m) = (37, 96, 7);
        let x = values(m * cols, 7);
        let mut acts = QActs::default();
        acts.quantize(&x, cols);
        let dq: Vec<f32> = (0..m * cols).map(|i| acts.d[i / BLOCK] * f32::from(acts.qs[i])).collect();
        let q41 = QMatrix::from_ggml(GgmlBlockType::Q4_1, rows, cols, &q4_1_bytes(rows, cols, 3)).unwrap();
        let q8 = QMatrix::quantize_q8(rows, cols, &values(rows * cols, 11)).unwrap();
        for (simd, layout) in variants() {
            let both = [q41.clone().with_layout(layout), q8.clone().with_layout(layout)];
            let mut out = vec![0.0; m * 2 * rows];
            matmul_with(simd, &[&both[0], &both[1]], &acts, &mut out);
            for (j, w) in both.iter().enumerate() {
                let wd = w.dequantize();
                for b in 0..m {
                    for o in 0..rows {
                        let want: f32 = (0..cols).map(|c| wd[o * cols + c] * dq[b * cols + c]).sum();
                        let got = out[b * 2 * rows + j * rows + o];
                        assert!(
                            (got - want).abs() < 1e-4 * (1.0 + want.abs()),
                            "{simd:?} {layout:?} matrix {j} row {b} out {o}: {got} vs {want}"
                        );
                    }
                }
            }
        }
    }

    /// The public product checks its shapes in every build: a wrong-sized output or a matrix of
    /// another width is a panic, never an unchecked read or write.
    #[test]
    fn wrong_shapes_panic_instead_of_reading_out_of_bounds() {
        let (rows, cols) = (16, 64);
        let w = QMatrix::quantize_q8(rows, cols, &values(rows * cols, 1)).unwrap();
        let narrow = QMatrix::quantize_q8(rows, 32, &values(rows * 32, 2)).unwrap();
        let mut acts = QActs::default();
        acts.quantize(&values(2 * cols, 3), cols);
        for layout in [Layout::Rows, Layout::Panels] {
            let w = w.clone().with_layout(layout);
            let short = std::panic::catch_unwind(|| matmul(&[&w], &acts, &mut vec![0.0; 2 * rows - 1]));
            assert!(short.is_err(), "{layout:?}: an output one value short must panic");
            let narrow = narrow.clone().with_layout(layout);
            let mismatched = std::panic::catch_unwind(|| matmul(&[&narrow], &acts, &mut vec![0.0; 2 * rows]));
            assert!(mismatched.is_err(), "{layout:?}: a matrix of 32 columns against 64 must panic");
        }
        let ragged = std::panic::catch_unwind(|| QActs::default().quantize(&values(100, 4), 64));
        assert!(ragged.is_err(), "100 values are not whole rows of 64");
    }

    #[test]
    fn results_do_not_depend_on_batch_mates() {
        let (rows, cols) = (64, 64);
        let w = QMatrix::from_ggml(GgmlBlockType::Q4_1, rows, cols, &q4_1_bytes(rows, cols, 5)).unwrap();
        let x = values(6 * cols, 9);
        let mut all = QActs::default();
        all.quantize(&x, cols);
        for (simd, layout) in variants() {
            let w = w.clone().with_layout(layout);
            let mut out_all = vec![0.0; 6 * rows];
            matmul_with(simd, &[&w], &all, &mut out_all);
            for b in 0..6 {
                let mut one = QActs::default();
                one.quantize(&x[b * cols..(b + 1) * cols], cols);
                let mut out = vec![0.0; rows];
                matmul_with(simd, &[&w], &one, &mut out);
                assert_eq!(out, out_all[b * rows..(b + 1) * rows].to_vec(), "{simd:?} {layout:?} row {b}");
            }
        }
    }
}
