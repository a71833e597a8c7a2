//! Quantized weight matrices in blocks of 32 values along each row (the GGUF/ggml formats
//! Q4_0, Q4_1 and Q8_0), and activations quantized the same way (8 bits per value, one scale per
//! block, as llama.cpp's Q8_1).

use super::super::error::{Error, Result};
use super::panels::{Panels, PANEL};
use super::pool::{Pool, SendPtr};
use super::vector::quantize_block;

/// Values per block, in every format.
pub const BLOCK: usize = 32;

/// How a matrix stores its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockFormat {
    /// 4-bit values `q` in 0..16 meaning `d * q + m` (Q4_0 is stored this way with `m = -8 d`).
    Q4,
    /// 8-bit signed values `q` meaning `d * q` (Q8_0).
    Q8,
}

impl BlockFormat {
    /// Bytes of packed values per block.
    pub fn packed_bytes(self) -> usize {
        match self {
            BlockFormat::Q4 => BLOCK / 2,
            BlockFormat::Q8 => BLOCK,
        }
    }
}

/// A `[rows, cols]` matrix stored in blocks of 32 values per row (`cols` a multiple of 32).
///
/// Q4 blocks pack value `i` of the block in the low nibble of byte `i` and value `16 + i` in its
/// high nibble (the ggml layout). Matrices are read row by row; [`QMatrix::to_panels`] interleaves
/// rows for the AVX-512 kernel.
#[derive(Debug, Clone)]
pub struct QMatrix {
    format: BlockFormat,
    rows: usize,
    cols: usize,
    storage: Storage,
}

/// How a matrix's blocks are laid out in memory.
#[derive(Debug, Clone)]
pub(crate) enum Storage {
    /// Row-major blocks.
    Rows {
        /// Packed values, `packed_bytes` per block.
        qs: Vec<u8>,
        /// One scale per block.
        d: Vec<f32>,
        /// One offset per block (Q4 only; empty for Q8).
        m: Vec<f32>,
    },
    /// Panels of 16 interleaved rows (see `panels.rs`).
    Panels(Panels),
}

/// Which layout matrices use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Row-major blocks (portable and AVX2 kernels).
    Rows,
    /// Panels of 16 interleaved rows (AVX-512 VNNI kernel).
    Panels,
}

/// IEEE half precision bits to f32.
pub fn f16_to_f32(bits: u16) -> f32 {
    let sign = u32::from(bits >> 15) << 31;
    let exp = u32::from((bits >> 10) & 0x1f);
    let frac = u32::from(bits & 0x3ff);
    let value = match (exp, frac) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: frac * 2^-24.
            let v = frac as f32 * (1.0 / 16_777_216.0);
            return if sign != 0 { -v } else { v };
        }
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, _) => sign | 0x7fc0_0000,
        _ => sign | ((exp + 127 - 15) << 23) | (frac << 13),
    };
    f32::from_bits(value)
}

fn read_f16(bytes: &[u8], at: usize) -> f32 {
    f16_to_f32(u16::from_le_bytes([bytes[at], bytes[at + 1]]))
}

/// The ggml block types this module reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GgmlBlockType {
    /// `d: f16, qs: [u8; 16]`, value `d * (q - 8)`.
    Q4_0,
    /// `d: f16, m: f16, qs: [u8; 16]`, value `d * q + m`.
    Q4_1,
    /// `d: f16, qs: [i8; 32]`, value `d * q`.
    Q8_0,
}

impl GgmlBlockType {
    /// Bytes of one block in a GGUF file.
    pub fn block_bytes(self) -> usize {
        match self {
            GgmlBlockType::Q4_0 => 18,
            GgmlBlockType::Q4_1 => 20,
            GgmlBlockType::Q8_0 => 34,
        }
    }
}

impl QMatrix {
    fn check_shape(rows: usize, cols: usize) -> Result<()> {
        if rows == 0 || cols == 0 || !cols.is_multiple_of(BLOCK) {
            return Err(Error::Format(format!(
                "cannot store a [{rows}, {cols}] matrix in blocks of {BLOCK} (columns must be a positive multiple)"
            )));
        }
        Ok(())
    }

    /// Reads ggml blocks (row-major, as in a GGUF tensor's data) of a `[rows, cols]` matrix.
    pub fn from_ggml(kind: GgmlBlockType, rows: usize, cols: usize, bytes: &[u8]) -> Result<Self> {
        Self::check_shape(rows, cols)?;
        let blocks = rows * cols / BLOCK;
        if bytes.len() != blocks * kind.block_bytes() {
            return Err(Error::Format(format!(
                "{kind:?} data of a [{rows}, {cols}] matrix should be {} bytes, got {}",
                blocks * kind.block_bytes(),
                bytes.len()
            )));
        }
        let format = match kind {
            GgmlBlockType::Q4_0 | GgmlBlockType::Q4_1 => BlockFormat::Q4,
            GgmlBlockType::Q8_0 => BlockFormat::Q8,
        };
        let mut qs = Vec::with_capacity(blocks * format.packed_bytes());
        let mut d = Vec::with_capacity(blocks);
        let mut m = Vec::with_capacity(if format == BlockFormat::Q4 { blocks } else { 0 });
        for block in bytes.chunks_exact(kind.block_bytes()) {
            let scale = read_f16(block, 0);
            d.push(scale);
            match kind {
                GgmlBlockType::Q4_0 => {
                    m.push(-8.0 * scale);
                    qs.extend_from_slice(&block[2..18]);
                }
                GgmlBlockType::Q4_1 => {
                    m.push(read_f16(block, 2));
                    qs.extend_from_slice(&block[4..20]);
                }
                GgmlBlockType::Q8_0 => qs.extend_from_slice(&block[2..34]),
            }
        }
        Ok(QMatrix { format, rows, cols, storage: Storage::Rows { qs, d, m } })
    }

    /// Quantizes a row-major `[rows, cols]` f32 matrix to Q8 (one scale per 32 values).
    pub fn quantize_q8(rows: usize, cols: usize, values: &[f32]) -> Result<Self> {
        Self::check_shape(rows, cols)?;
        if values.len() != rows * cols {
            return Err(Error::Format(format!("{} values for a [{rows}, {cols}] matrix", values.len())));
        }
        let blocks = rows * cols / BLOCK;
        let mut qs = vec![0u8; blocks * BLOCK];
        let mut d = Vec::with_capacity(blocks);
        for (block, out) in values.chunks_exact(BLOCK).zip(qs.chunks_exact_mut(BLOCK)) {
            // The scale is rounded to f16 (as GGUF stores it), so packing into panels is exact.
            let amax = block.iter().fold(0.0f32, |a, &x| a.max(x.abs()));
            let scale = half::f16::from_f32(amax / 127.0).to_f32();
            let inv = if scale > 0.0 { 1.0 / scale } else { 0.0 };
            for (o, &x) in out.iter_mut().zip(block) {
                *o = ((x * inv).round() as i32).clamp(-127, 127) as i8 as u8;
            }
            d.push(scale);
        }
        Ok(QMatrix { format: BlockFormat::Q8, rows, cols, storage: Storage::Rows { qs, d, m: Vec::new() } })
    }

    /// The storage format.
    pub fn format(&self) -> BlockFormat {
        self.format
    }

    /// Number of rows (outputs of a matrix-vector product).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of columns (inputs).
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Blocks per row.
    pub fn blocks_per_row(&self) -> usize {
        self.cols / BLOCK
    }

    /// The layout of the blocks.
    pub fn layout(&self) -> Layout {
        match self.storage {
            Storage::Rows { .. } => Layout::Rows,
            Storage::Panels(_) => Layout::Panels,
        }
    }

    pub(crate) fn storage(&self) -> &Storage {
        &self.storage
    }

    /// Packed values, scales and offsets (empty for Q8) of row `r` of a row-major matrix.
    pub(crate) fn row(&self, r: usize) -> Option<(&[u8], &[f32], &[f32])> {
        let Storage::Rows { qs, d, m } = &self.storage else { return None };
        let nb = self.blocks_per_row();
        let n = nb * self.format.packed_bytes();
        let m = if m.is_empty() { &[][..] } else { &m[r * nb..(r + 1) * nb] };
        Some((&qs[r * n..(r + 1) * n], &d[r * nb..(r + 1) * nb], m))
    }

    /// The same matrix in panels of 16 rows (itself if it already is).
    pub fn to_panels(&self) -> QMatrix {
        let panels = match &self.storage {
            Storage::Panels(p) => p.clone(),
            Storage::Rows { .. } => {
                Panels::pack(self.format, self.rows, self.blocks_per_row(), |r| self.row(r).expect("row-major storage"))
            }
        };
        QMatrix { format: self.format, rows: self.rows, cols: self.cols, storage: Storage::Panels(panels) }
    }

    /// The same matrix in `layout` (row-major matrices are packed; panels are kept as they are,
    /// since nothing needs them back in rows).
    pub fn with_layout(self, layout: Layout) -> QMatrix {
        match (layout, &self.storage) {
            (Layout::Panels, Storage::Rows { .. }) => self.to_panels(),
            _ => self,
        }
    }

    /// Writes row `r`, dequantized, into `out` (`cols` values).
    pub fn dequantize_row(&self, r: usize, out: &mut [f32]) {
        let Some((qs, d, m)) = self.row(r) else {
            if let Storage::Panels(p) = &self.storage {
                p.dequantize_row(r, out);
            }
            return;
        };
        for (k, chunk) in out.chunks_exact_mut(BLOCK).enumerate() {
            match self.format {
                BlockFormat::Q4 => {
                    let packed = &qs[k * 16..(k + 1) * 16];
                    for i in 0..16 {
                        chunk[i] = d[k] * f32::from(packed[i] & 0x0f) + m[k];
                        chunk[16 + i] = d[k] * f32::from(packed[i] >> 4) + m[k];
                    }
                }
                BlockFormat::Q8 => {
                    for (x, &q) in chunk.iter_mut().zip(&qs[k * BLOCK..(k + 1) * BLOCK]) {
                        *x = d[k] * f32::from(q as i8);
                    }
                }
            }
        }
    }

    /// The whole matrix, dequantized, row-major.
    pub fn dequantize(&self) -> Vec<f32> {
        let mut out = vec![0.0; self.rows * self.cols];
        for (r, row) in out.chunks_exact_mut(self.cols).enumerate() {
            self.dequantize_row(r, row);
        }
        out
    }

    /// The same matrix with its rows reordered: row `i` of the result is row `order[i]`.
    pub fn permute_rows(&self, order: &[usize]) -> Result<Self> {
        if order.len() != self.rows || order.iter().any(|&r| r >= self.rows) {
            return Err(Error::Format(format!("bad row order for a matrix of {} rows", self.rows)));
        }
        let Storage::Rows { qs, d, m } = &self.storage else {
            return Err(Error::Format("cannot reorder the rows of a matrix packed in panels".into()));
        };
        let (mut qs2, mut d2, mut m2) =
            (Vec::with_capacity(qs.len()), Vec::with_capacity(d.len()), Vec::with_capacity(m.len()));
        for &r in order {
            let (rq, rd, rm) = self.row(r).expect("row-major storage");
            qs2.extend_from_slice(rq);
            d2.extend_from_slice(rd);
            m2.extend_from_slice(rm);
        }
        Ok(QMatrix { storage: Storage::Rows { qs: qs2, d: d2, m: m2 }, ..*self })
    }

    /// Bytes of weight data held.
    pub fn memory_bytes(&self) -> usize {
        match &self.storage {
            Storage::Rows { qs, d, m } => qs.len() + 4 * (d.len() + m.len()),
            Storage::Panels(p) => p.memory_bytes(),
        }
    }

    /// Rows of the panels holding rows `start..end` (`start` rounded down to a panel).
    pub(crate) fn panel_range(start: usize, end: usize) -> std::ops::Range<usize> {
        start / PANEL..end.div_ceil(PANEL)
    }
}

/// Rows of activations quantized to 8 bits per value in blocks of 32: `d * q`, with
/// `s = d * sum(q)` per block (what Q4 weights' offsets multiply).
#[derive(Debug, Clone, Default)]
pub struct QActs {
    /// Blocks per row.
    pub(crate) blocks: usize,
    /// Quantized values, `rows * blocks * 32`.
    pub(crate) qs: Vec<i8>,
    /// Scale per block.
    pub(crate) d: Vec<f32>,
    /// `d * sum(q)` per block.
    pub(crate) s: Vec<f32>,
}

impl QActs {
    /// Quantizes `rows` rows of `cols` values (a multiple of 32), reusing this buffer's memory.
    ///
    /// # Panics
    /// When `cols` is not a positive multiple of 32 or `x` is not whole rows (in release builds
    /// too: the kernels read rows of `cols / 32` blocks without bounds checks).
    pub fn quantize(&mut self, x: &[f32], cols: usize) {
        assert!(
            cols > 0 && cols.is_multiple_of(BLOCK) && x.len().is_multiple_of(cols),
            "QActs::quantize: {} values are not whole rows of {cols} columns (a positive multiple of {BLOCK})",
            x.len()
        );
        let blocks = x.len() / BLOCK;
        self.blocks = cols / BLOCK;
        self.qs.resize(blocks * BLOCK, 0);
        self.d.resize(blocks, 0.0);
        self.s.resize(blocks, 0.0);
        let qs: &mut [u8] = bytemuck_i8(&mut self.qs);
        let (d_out, s_out) = (SendPtr(self.d.as_mut_ptr()), SendPtr(self.s.as_mut_ptr()));
        // Quantizes the blocks held in `out`, the first being block `first`.
        let quantize = |first: usize, out: &mut [u8]| {
            for (i, out) in out.chunks_exact_mut(BLOCK).enumerate() {
                let k = first + i;
                let (d, sum) = quantize_block(&x[k * BLOCK..(k + 1) * BLOCK], out);
                // SAFETY: `k < blocks` (the buffers' length), and block `k` is this call's alone.
                unsafe {
                    *d_out.get().add(k) = d;
                    *s_out.get().add(k) = d * sum as f32;
                }
            }
        };
        // Large inputs (prompts) in parallel, small ones (a decoding step) on this thread.
        const PER_TASK: usize = 128;
        if blocks > 2 * PER_TASK {
            Pool::global().for_each_chunk_mut(qs, PER_TASK * BLOCK, |c, out| quantize(c * PER_TASK, out));
        } else {
            quantize(0, qs);
        }
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.d.len().checked_div(self.blocks).unwrap_or(0)
    }
}

/// Views `i8`s as bytes.
fn bytemuck_i8(x: &mut [i8]) -> &mut [u8] {
    // SAFETY: i8 and u8 have the same size, alignment and validity.
    unsafe { std::slice::from_raw_parts_mut(x.as_mut_ptr().cast::<u8>(), x.len()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_conversion_matches_known_values() {
        let cases = [
            (0x0000u16, 0.0f32),
            (0x3c00, 1.0),
            (0xc000, -2.0),
            (0x3555, 0.333_251_95),
            (0x0001, 5.960_464_5e-8),
            (0x7bff, 65504.0),
        ];
        for (bits, want) in cases {
            assert_eq!(f16_to_f32(bits), want, "{bits:#06x}");
        }
        assert!(f16_to_f32(0x7c00).is_infinite());
        assert!(f16_to_f32(0x7e00).is_nan());
    }

    fn f16_bytes(x: u16) -> [u8; 2] {
        x.to_le_bytes()
    }

    #[test]
    fn ggml_blocks_dequantize_to_their_values() {
        // One Q4_1 block: d = 0.5, m = -1, values q = i % 16 (low nibbles) and 15 - i (high).
        let mut q41 = Vec::new();
        q41.extend_from_slice(&f16_bytes(0x3800));
        q41.extend_from_slice(&f16_bytes(0xbc00));
        q41.extend((0..16u8).map(|i| i | ((15 - i) << 4)));
        let m = QMatrix::from_ggml(GgmlBlockType::Q4_1, 1, 32, &q41).unwrap();
        let v = m.dequantize();
        for i in 0..16 {
            assert_eq!(v[i], 0.5 * i as f32 - 1.0);
            assert_eq!(v[16 + i], 0.5 * (15 - i) as f32 - 1.0);
        }
        // Q4_0 with d = 2: value 2 * (q - 8).
        let mut q40 = f16_bytes(0x4000).to_vec();
        q40.extend((0..16u8).map(|i| i | (i << 4)));
        let v = QMatrix::from_ggml(GgmlBlockType::Q4_0, 1, 32, &q40).unwrap().dequantize();
        assert_eq!(&v[..3], &[-16.0, -14.0, -12.0]);
        assert_eq!(v[31], 14.0);
        // Q8_0 with d = 0.25.
        let mut q80 = f16_bytes(0x3400).to_vec();
        q80.extend((0..32i8).map(|i| (i - 16) as u8));
        let v = QMatrix::from_ggml(GgmlBlockType::Q8_0, 1, 32, &q80).unwrap().dequantize();
        assert_eq!(v[0], -4.0);
        assert_eq!(v[31], 3.75);
        // Wrong sizes are errors.
        assert!(QMatrix::from_ggml(GgmlBlockType::Q8_0, 1, 32, &q80[..33]).is_err());
        assert!(QMatrix::from_ggml(GgmlBlockType::Q8_0, 1, 31, &q80).is_err());
    }

    #[test]
    fn q8_quantization_round_trips_within_half_a_step() {
        let values: Vec<f32> = (0..128).map(|i| ((i * 37 % 101) as f32 - 50.0) / 7.0).collect();
        let m = QMatrix::quantize_q8(2, 64, &values).unwrap();
        let back = m.dequantize();
        for (k, (a, b)) in values.iter().zip(&back).enumerate() {
            let step = m.row(k / 64).unwrap().1[(k % 64) / BLOCK];
            assert!((a - b).abs() <= 0.5 * step + 1e-6, "{k}: {a} vs {b}");
        }
        let rows = m.permute_rows(&[1, 0]).unwrap().dequantize();
        assert_eq!(&rows[..64], &back[64..]);
        assert!(m.permute_rows(&[0, 2]).is_err());
    }
}
