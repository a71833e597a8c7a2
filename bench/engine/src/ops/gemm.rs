//! f32 matrix products on the CPU through the `gemm` crate (candle's own), with the operands'
//! strides as they lie in memory (no transposed copies), accumulating into the destination when
//! asked, and bf16/f16 operands widened to f32 a block of rows at a time (candle's CPU matmul
//! widens both whole storages on every bf16 product). The products split their output over
//! rayon's threads (never the inner dimension), so the sums' order does not depend on the threads.

use super::Elem;
use rayon::prelude::*;
use std::borrow::Cow;

/// A matrix operand: `data[r * rs + c * cs]` is element `(r, c)`.
#[derive(Clone, Copy)]
pub(crate) struct Mat<'a> {
    pub data: &'a [f32],
    pub rs: usize,
    pub cs: usize,
}

impl<'a> Mat<'a> {
    /// A row-major `[rows, cols]` matrix.
    pub fn rows(data: &'a [f32], cols: usize) -> Self {
        Mat { data, rs: cols, cs: 1 }
    }

    /// The transpose of a row-major matrix with `cols` columns.
    pub fn transposed(data: &'a [f32], cols: usize) -> Self {
        Mat { data, rs: 1, cs: cols }
    }

    fn fits(&self, rows: usize, cols: usize) -> bool {
        rows == 0 || cols == 0 || (rows - 1) * self.rs + (cols - 1) * self.cs < self.data.len()
    }
}

/// Products at least this large (`m·n·k`) split over threads.
const PARALLEL_WORK: usize = 1 << 18;

/// `dst[m, n]` (row-major) `= a[m, k] · b[k, n]`, or `+=` when `accumulate`.
pub(crate) fn matmul(m: usize, n: usize, k: usize, dst: &mut [f32], accumulate: bool, a: Mat<'_>, b: Mat<'_>) {
    assert!(dst.len() >= m * n && a.fits(m, k) && b.fits(k, n), "gemm: operands do not fit their shapes");
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !accumulate {
            dst[..m * n].fill(0.0);
        }
        return;
    }
    let threads = rayon::current_num_threads();
    let parallelism = if threads > 1 && m * n * k >= PARALLEL_WORK {
        gemm::Parallelism::Rayon(threads)
    } else {
        gemm::Parallelism::None
    };
    // SAFETY: every index the product reads or writes is inside its slice (checked above:
    // `dst` holds `m·n` row-major elements, `a` and `b` reach at most their last element), the
    // destination is borrowed mutably and does not alias the operands (shared borrows).
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            accumulate,
            a.data.as_ptr(),
            a.cs as isize,
            a.rs as isize,
            b.data.as_ptr(),
            b.cs as isize,
            b.rs as isize,
            1.0,
            1.0,
            false,
            false,
            false,
            parallelism,
        )
    }
}

/// Elements per rayon task of the conversions.
const TASK: usize = 1 << 15;

/// `s` as f32: borrowed when it is f32, else widened (over threads).
pub(crate) fn widen<T: Elem>(s: &[T]) -> Cow<'_, [f32]> {
    match T::as_f32(s) {
        Some(f) => Cow::Borrowed(f),
        None => {
            let mut out = vec![0f32; s.len()];
            out.par_chunks_mut(TASK).zip(s.par_chunks(TASK)).for_each(|(o, s)| {
                for (o, &x) in o.iter_mut().zip(s) {
                    *o = x.to_f32();
                }
            });
            Cow::Owned(out)
        }
    }
}

/// Writes f32 values into `out` (rounded to `T`, over threads).
pub(crate) fn narrow_into<T: Elem>(src: &[f32], out: &mut [T]) {
    out.par_chunks_mut(TASK).zip(src.par_chunks(TASK)).for_each(|(o, s)| {
        for (o, &x) in o.iter_mut().zip(s) {
            *o = T::from_f32(x);
        }
    });
}

/// f32 values as a vector of `T` (the same vector when `T` is f32).
pub(crate) fn narrow<T: Elem>(v: Vec<f32>) -> Vec<T> {
    T::from_f32_vec(v).unwrap_or_else(|v| {
        let mut out = vec![T::from_f32(0.0); v.len()];
        narrow_into(&v, &mut out);
        out
    })
}

/// Bytes of f32 a block of rows of a widened operand may take.
const BLOCK_BYTES: usize = 16 << 20;

/// Rows per block for rows `width` wide (all of them in f32: nothing is widened).
pub(crate) fn block_rows<T: Elem>(rows: usize, width: usize) -> usize {
    if T::as_f32(&[]).is_some() {
        rows.max(1)
    } else {
        (BLOCK_BYTES / (4 * width.max(1))).clamp(1, rows.max(1))
    }
}

/// `y[rows, n] = x[rows, k] · W`, with `W = wᵀ` for `w` `[n, k]` when `transposed`, else `w`
/// `[k, n]`; bf16/f16 rows are widened a block at a time, `w` once.
pub(crate) fn rows_times<T: Elem>(x: &[T], w: &[T], rows: usize, k: usize, n: usize, transposed: bool) -> Vec<T> {
    if k == 0 || n == 0 {
        return vec![T::from_f32(0.0); rows * n];
    }
    let wf = widen(w);
    let b = if transposed { Mat::transposed(&wf, k) } else { Mat::rows(&wf, n) };
    let mut y = vec![T::from_f32(0.0); rows * n];
    if let Some(yf) = T::as_f32_mut(&mut y) {
        let xf = widen(x);
        matmul(rows, n, k, yf, false, Mat::rows(&xf, k), b);
        return y;
    }
    let block = block_rows::<T>(rows, k.max(n));
    let mut yf = vec![0f32; block * n];
    for (xs, ys) in x.chunks(block * k).zip(y.chunks_mut(block * n)) {
        let r = xs.len() / k.max(1);
        let xf = widen(xs);
        matmul(r, n, k, &mut yf[..r * n], false, Mat::rows(&xf, k), b);
        narrow_into(&yf[..r * n], ys);
    }
    y
}

/// `dw[n, k] = dyᵀ · x` for `dy` `[rows, n]` and `x` `[rows, k]` (a linear layer's weight
/// gradient), summed over blocks of rows in f32.
pub(crate) fn weight_grad<T: Elem>(dy: &[T], x: &[T], rows: usize, n: usize, k: usize) -> Vec<T> {
    let mut dw = vec![0f32; n * k];
    if n == 0 || k == 0 {
        return narrow(dw);
    }
    let block = block_rows::<T>(rows, k.max(n));
    for (i, (dys, xs)) in dy.chunks(block * n).zip(x.chunks(block * k)).enumerate() {
        let r = dys.len() / n.max(1);
        let (dyf, xf) = (widen(dys), widen(xs));
        matmul(n, k, r, &mut dw, i > 0, Mat::transposed(&dyf, n), Mat::rows(&xf, k));
    }
    narrow(dw)
}
