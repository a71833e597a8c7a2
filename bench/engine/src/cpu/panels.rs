//! Weights interleaved in panels of 16 rows, for AVX-512 VNNI (and AVX2, in halves of 8 rows): one `vpdpbusd` multiplies four
//! activation bytes (broadcast) with four weight bytes of each of the 16 rows, so a block of 32
//! inputs takes 8 instructions for 16 outputs and no horizontal sums.
//!
//! Layout, per panel (rows `16p..16p + 16`), per block `k` of 32 inputs, contiguous:
//! - Q4 (320 bytes): 4 chunks of 64 bytes; byte `64 L + 4 r + j` holds value `4 L + j` of row
//!   `r` in its low nibble and value `16 + 4 L + j` in its high nibble; then 16 scales and 16
//!   offsets (f16). Value = `d * q + m`.
//! - U8 (544 bytes): 8 chunks of 64 bytes; byte `64 g + 4 r + j` holds value `4 g + j` of row `r`
//!   plus 128 (Q8's signed values made unsigned); then 16 scales (f16). Value = `d * q - 128 d`.
//!
//! Rows past the matrix's last row (the last panel's padding) are zeros.

use super::blocks::{f16_to_f32, BlockFormat, QActs, BLOCK};
use half::f16;

/// Rows per panel.
pub const PANEL: usize = 16;

/// Packed values of one panel-block, per format.
const fn packed_bytes(format: BlockFormat) -> usize {
    match format {
        BlockFormat::Q4 => PANEL * BLOCK / 2,
        BlockFormat::Q8 => PANEL * BLOCK,
    }
}

/// Bytes of one panel-block (values and f16 scales/offsets), per format.
const fn block_bytes(format: BlockFormat) -> usize {
    match format {
        BlockFormat::Q4 => packed_bytes(format) + 2 * PANEL * 2,
        BlockFormat::Q8 => packed_bytes(format) + PANEL * 2,
    }
}

/// One panel as the SIMD kernels read it: blocks per row, bytes per panel-block, bytes of packed
/// values per panel-block (the scales follow), and the first byte.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
struct PanelView {
    nb: usize,
    bb: usize,
    packed: usize,
    base: *const u8,
}

/// A matrix stored in panels of 16 rows (see the module docs).
#[derive(Debug, Clone)]
pub struct Panels {
    format: BlockFormat,
    /// Blocks per row.
    blocks: usize,
    /// Number of panels (`ceil(rows / 16)`).
    panels: usize,
    data: Vec<u8>,
}

impl Panels {
    /// Packs a matrix given row by row: `row(r)` returns row `r`'s packed values (ggml layout:
    /// 16 bytes per Q4 block, 32 signed bytes per Q8 block), scales and offsets (empty for Q8).
    /// Scales and offsets are stored as f16 (exact for values read from GGUF).
    pub fn pack<'a>(
        format: BlockFormat,
        rows: usize,
        blocks: usize,
        row: impl Fn(usize) -> (&'a [u8], &'a [f32], &'a [f32]),
    ) -> Self {
        let panels = rows.div_ceil(PANEL);
        let bb = block_bytes(format);
        let mut data = vec![0u8; panels * blocks * bb];
        for r in 0..rows {
            let (p, lane) = (r / PANEL, r % PANEL);
            let (qs, d, m) = row(r);
            for k in 0..blocks {
                let out = &mut data[(p * blocks + k) * bb..(p * blocks + k + 1) * bb];
                let scales = packed_bytes(format);
                out[scales + 2 * lane..scales + 2 * lane + 2].copy_from_slice(&f16::from_f32(d[k]).to_le_bytes());
                match format {
                    BlockFormat::Q4 => {
                        let src = &qs[k * 16..(k + 1) * 16];
                        for l in 0..4 {
                            out[64 * l + 4 * lane..64 * l + 4 * lane + 4].copy_from_slice(&src[4 * l..4 * l + 4]);
                        }
                        let at = scales + 2 * PANEL + 2 * lane;
                        out[at..at + 2].copy_from_slice(&f16::from_f32(m[k]).to_le_bytes());
                    }
                    BlockFormat::Q8 => {
                        let src = &qs[k * BLOCK..(k + 1) * BLOCK];
                        for g in 0..8 {
                            for j in 0..4 {
                                out[64 * g + 4 * lane + j] = (src[4 * g + j] as i8 as i16 + 128) as u8;
                            }
                        }
                    }
                }
            }
        }
        Panels { format, blocks, panels, data }
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.data.len()
    }

    /// Panel-block `k` of panel `p`.
    fn block(&self, p: usize, k: usize) -> &[u8] {
        let bb = block_bytes(self.format);
        &self.data[(p * self.blocks + k) * bb..(p * self.blocks + k + 1) * bb]
    }

    /// Scale and offset of lane `lane` in a panel-block.
    fn scale_offset(&self, block: &[u8], lane: usize) -> (f32, f32) {
        let at = packed_bytes(self.format) + 2 * lane;
        let d = f16_to_f32(u16::from_le_bytes([block[at], block[at + 1]]));
        let m = match self.format {
            BlockFormat::Q4 => {
                let at = at + 2 * PANEL;
                f16_to_f32(u16::from_le_bytes([block[at], block[at + 1]]))
            }
            BlockFormat::Q8 => -128.0 * d,
        };
        (d, m)
    }

    /// Unsigned value `i` (0..32) of lane `lane` in a panel-block.
    fn value(&self, block: &[u8], lane: usize, i: usize) -> u8 {
        match self.format {
            BlockFormat::Q4 => {
                let (half, i) = (i / 16, i % 16);
                let byte = block[64 * (i / 4) + 4 * lane + i % 4];
                if half == 0 {
                    byte & 0x0f
                } else {
                    byte >> 4
                }
            }
            BlockFormat::Q8 => block[64 * (i / 4) + 4 * lane + i % 4],
        }
    }

    /// Writes row `r`, dequantized, into `out` (`blocks * 32` values).
    pub fn dequantize_row(&self, r: usize, out: &mut [f32]) {
        let (p, lane) = (r / PANEL, r % PANEL);
        for (k, chunk) in out.chunks_exact_mut(BLOCK).enumerate() {
            let block = self.block(p, k);
            let (d, m) = self.scale_offset(block, lane);
            for (i, x) in chunk.iter_mut().enumerate() {
                *x = d * f32::from(self.value(block, lane, i)) + m;
            }
        }
    }

    /// Where panel `p`'s blocks start, for the SIMD kernels (which read activation rows
    /// `..rows`; checked in debug builds).
    #[inline(always)]
    fn view(&self, p: usize, acts: &QActs, rows: usize) -> PanelView {
        debug_assert!(p < self.panels && acts.blocks == self.blocks && rows * self.blocks <= acts.d.len());
        let bb = block_bytes(self.format);
        let base = self.data[p * self.blocks * bb..].as_ptr();
        PanelView { nb: self.blocks, bb, packed: packed_bytes(self.format), base }
    }

    /// Dot products of panel `p`'s 16 rows with activation row `b`, in portable code.
    pub fn portable_dot(&self, p: usize, acts: &QActs, b: usize, out: &mut [f32; PANEL]) {
        let nb = self.blocks;
        for (lane, slot) in out.iter_mut().enumerate() {
            let mut sum = 0.0f32;
            for k in 0..nb {
                let at = b * nb + k;
                let a = &acts.qs[at * BLOCK..(at + 1) * BLOCK];
                let block = self.block(p, k);
                let isum: i32 = (0..BLOCK).map(|i| i32::from(self.value(block, lane, i)) * i32::from(a[i])).sum();
                let (d, m) = self.scale_offset(block, lane);
                sum += isum as f32 * (d * acts.d[at]) + m * acts.s[at];
            }
            *slot = sum;
        }
    }
}

#[cfg(target_arch = "x86_64")]
pub mod avx512 {
    //! The AVX-512 VNNI kernel.
    use super::super::blocks::{BlockFormat, QActs, BLOCK};
    use super::super::kernels::TILE;
    use super::{PanelView, Panels, PANEL};
    use std::arch::x86_64::*;

    /// Whether this CPU runs [`tile`].
    pub fn available() -> bool {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vnni")
    }

    /// Dot products of panel `p`'s 16 rows with activation rows `b..b + N` into `out[..N]`.
    ///
    /// # Safety
    /// The CPU must support AVX-512 F, BW and VNNI ([`available`]); `acts` must hold rows
    /// `b..b + N` of the matrix's column count and `p` must be a panel of `w`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub unsafe fn tile<const N: usize>(w: &Panels, p: usize, acts: &QActs, b: usize, out: &mut [[f32; PANEL]; TILE]) {
        let PanelView { nb, bb, packed, base } = w.view(p, acts, b + N);
        let low = _mm512_set1_epi8(0x0f);
        let mut acc = [_mm512_setzero_ps(); N];
        let mut vb = [_mm512_setzero_si512(); 8];
        for k in 0..nb {
            // SAFETY: k < nb: block k lies in panel p's nb * bb bytes (`view` checked p).
            let block = unsafe { base.add(k * bb) };
            // SAFETY: the 16 f16 scales sit at `packed` inside the block's `bb` bytes.
            let d = _mm512_cvtph_ps(unsafe { _mm256_loadu_si256(block.add(packed).cast()) });
            let m = match w.format {
                BlockFormat::Q4 => {
                    for l in 0..4 {
                        // SAFETY: l < 4: 64-byte chunk l of the block's 256 packed bytes.
                        let chunk = unsafe { _mm512_loadu_si512(block.add(64 * l).cast()) };
                        vb[l] = _mm512_and_si512(chunk, low);
                        vb[l + 4] = _mm512_and_si512(_mm512_srli_epi16::<4>(chunk), low);
                    }
                    // SAFETY: Q4 blocks carry 16 f16 offsets after the 16 scales, inside `bb` bytes.
                    _mm512_cvtph_ps(unsafe { _mm256_loadu_si256(block.add(packed + 2 * PANEL).cast()) })
                }
                BlockFormat::Q8 => {
                    for (g, v) in vb.iter_mut().enumerate() {
                        // SAFETY: g < 8: 64-byte group g of the block's 512 packed bytes.
                        *v = unsafe { _mm512_loadu_si512(block.add(64 * g).cast()) };
                    }
                    _mm512_mul_ps(d, _mm512_set1_ps(-128.0))
                }
            };
            for (j, acc) in acc.iter_mut().enumerate() {
                let at = (b + j) * nb + k;
                // SAFETY: at < (b + N) * nb, and `view` checked that `acts` holds rows ..b + N.
                let a = unsafe { acts.qs.as_ptr().add(at * BLOCK).cast::<i32>() };
                // SAFETY: g < 8 groups of 4 bytes in the activation block's 32 bytes.
                let group = |g: usize| _mm512_set1_epi32(unsafe { a.add(g).read_unaligned() });
                let mut s0 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), vb[0], group(0));
                let mut s1 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), vb[1], group(1));
                for g in (2..8).step_by(2) {
                    s0 = _mm512_dpbusd_epi32(s0, vb[g], group(g));
                    s1 = _mm512_dpbusd_epi32(s1, vb[g + 1], group(g + 1));
                }
                let isum = _mm512_cvtepi32_ps(_mm512_add_epi32(s0, s1));
                // SAFETY: at < (b + N) * nb <= acts.d.len() == acts.s.len() (checked by `view`).
                let (ad, asum) = unsafe { (*acts.d.get_unchecked(at), *acts.s.get_unchecked(at)) };
                *acc = _mm512_fmadd_ps(isum, _mm512_mul_ps(d, _mm512_set1_ps(ad)), *acc);
                *acc = _mm512_fmadd_ps(m, _mm512_set1_ps(asum), *acc);
            }
        }
        for (j, acc) in acc.iter().enumerate() {
            // SAFETY: out[j] holds PANEL = 16 floats, one 512-bit store.
            unsafe { _mm512_storeu_ps(out[j].as_mut_ptr(), *acc) };
        }
    }
}

#[cfg(target_arch = "x86_64")]
pub mod avx2 {
    //! The AVX2 kernel: each panel as two halves of 8 rows (one 256-bit register of 4 bytes per
    //! row), `vpmaddubsw` + `vpmaddwd` in place of `vpdpbusd`.
    use super::super::blocks::{BlockFormat, QActs, BLOCK};
    use super::super::kernels::TILE;
    use super::{PanelView, Panels, PANEL};
    use std::arch::x86_64::*;

    /// Whether this CPU runs [`tile`].
    pub fn available() -> bool {
        std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
            && std::arch::is_x86_feature_detected!("f16c")
    }

    /// Dot products of panel `p`'s 16 rows with activation rows `b..b + N` into `out[..N]`.
    ///
    /// # Safety
    /// The CPU must support AVX2, FMA and F16C ([`available`]); `acts` must hold rows
    /// `b..b + N` of the matrix's column count and `p` must be a panel of `w`.
    #[target_feature(enable = "avx2,fma,f16c")]
    pub unsafe fn tile<const N: usize>(w: &Panels, p: usize, acts: &QActs, b: usize, out: &mut [[f32; PANEL]; TILE]) {
        let PanelView { nb, bb, packed, base } = w.view(p, acts, b + N);
        let low = _mm256_set1_epi8(0x0f);
        let ones = _mm256_set1_epi16(1);
        for half in 0..2 {
            let mut acc = [_mm256_setzero_ps(); N];
            let mut vb = [_mm256_setzero_si256(); 8];
            for k in 0..nb {
                // SAFETY: k < nb: block k lies in panel p's nb * bb bytes (`view` checked p).
                let block = unsafe { base.add(k * bb) };
                // SAFETY: half < 2: 8 of the 16 f16 scales at `packed`, inside the block's `bb` bytes.
                let d = _mm256_cvtph_ps(unsafe { _mm_loadu_si128(block.add(packed + 16 * half).cast()) });
                match w.format {
                    BlockFormat::Q4 => {
                        for l in 0..4 {
                            // SAFETY: l < 4, half < 2: 32 bytes inside the block's 256 packed bytes.
                            let chunk = unsafe { _mm256_loadu_si256(block.add(64 * l + 32 * half).cast()) };
                            vb[l] = _mm256_and_si256(chunk, low);
                            vb[l + 4] = _mm256_and_si256(_mm256_srli_epi16::<4>(chunk), low);
                        }
                        // SAFETY: 8 of the 16 f16 offsets that follow the scales, inside `bb` bytes.
                        let m = _mm256_cvtph_ps(unsafe {
                            _mm_loadu_si128(block.add(packed + 2 * PANEL + 16 * half).cast())
                        });
                        for (j, acc) in acc.iter_mut().enumerate() {
                            let at = (b + j) * nb + k;
                            // SAFETY: at < (b + N) * nb, and `view` checked that `acts` holds rows ..b + N.
                            let a = unsafe { acts.qs.as_ptr().add(at * BLOCK).cast::<i32>() };
                            // Nibbles times |a| <= 127: each 16-bit pair sum is at most 3810,
                            // so the eight groups add up in 16 bits without overflow.
                            let mut sum = _mm256_setzero_si256();
                            for (g, v) in vb.iter().enumerate() {
                                // SAFETY: g < 8 groups of 4 bytes in the activation block's 32 bytes.
                                let group = _mm256_set1_epi32(unsafe { a.add(g).read_unaligned() });
                                sum = _mm256_add_epi16(sum, _mm256_maddubs_epi16(*v, group));
                            }
                            let isum = _mm256_cvtepi32_ps(_mm256_madd_epi16(sum, ones));
                            // SAFETY: at < (b + N) * nb <= acts.d.len() == acts.s.len() (checked by `view`).
                            let (ad, asum) = unsafe { (*acts.d.get_unchecked(at), *acts.s.get_unchecked(at)) };
                            *acc = _mm256_fmadd_ps(isum, _mm256_mul_ps(d, _mm256_set1_ps(ad)), *acc);
                            *acc = _mm256_fmadd_ps(m, _mm256_set1_ps(asum), *acc);
                        }
                    }
                    BlockFormat::Q8 => {
                        // Stored as q + 128: flip the top bit back to signed q, then multiply
                        // |q| by a carrying q's sign (no 16-bit overflow: 2 * 128 * 127).
                        let top = _mm256_set1_epi8(-128);
                        for (g, v) in vb.iter_mut().enumerate() {
                            // SAFETY: g < 8, half < 2: 32 bytes inside the block's 512 packed bytes.
                            *v = _mm256_xor_si256(
                                unsafe { _mm256_loadu_si256(block.add(64 * g + 32 * half).cast()) },
                                top,
                            );
                        }
                        for (j, acc) in acc.iter_mut().enumerate() {
                            let at = (b + j) * nb + k;
                            // SAFETY: at < (b + N) * nb, and `view` checked that `acts` holds rows ..b + N.
                            let a = unsafe { acts.qs.as_ptr().add(at * BLOCK).cast::<i32>() };
                            let mut isum = _mm256_setzero_si256();
                            for (g, v) in vb.iter().enumerate() {
                                // SAFETY: g < 8 groups of 4 bytes in the activation block's 32 bytes.
                                let group = _mm256_set1_epi32(unsafe { a.add(g).read_unaligned() });
                                let prod = _mm256_maddubs_epi16(_mm256_sign_epi8(*v, *v), _mm256_sign_epi8(group, *v));
                                isum = _mm256_add_epi32(isum, _mm256_madd_epi16(prod, ones));
                            }
                            // SAFETY: at < (b + N) * nb <= acts.d.len() (checked by `view`).
                            let ad = unsafe { *acts.d.get_unchecked(at) };
                            *acc =
                                _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(d, _mm256_set1_ps(ad)), *acc);
                        }
                    }
                }
            }
            for (j, acc) in acc.iter().enumerate() {
                // SAFETY: half < 2: floats 8 * half.. + 8 of out[j]'s 16.
                unsafe { _mm256_storeu_ps(out[j].as_mut_ptr().add(8 * half), *acc) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::blocks::{GgmlBlockType, QMatrix};
    use super::*;

    #[test]
    fn packed_rows_dequantize_to_the_original_rows() {
        // 37 rows: the last panel is padded.
        let (rows, cols) = (37, 64);
        let values: Vec<f32> = (0..rows * cols).map(|i| ((i * 7919 % 211) as f32 - 105.0) / 13.0).collect();
        let q8 = QMatrix::quantize_q8(rows, cols, &values).unwrap();
        let mut q41 = Vec::new();
        for i in 0..rows * cols / 32 {
            q41.extend_from_slice(&f16::from_f32(0.25 + i as f32 / 64.0).to_le_bytes());
            q41.extend_from_slice(&f16::from_f32(-1.5).to_le_bytes());
            q41.extend((0..16u8).map(|j| (j * 5 + i as u8) ^ 0x5a));
        }
        let q4 = QMatrix::from_ggml(GgmlBlockType::Q4_1, rows, cols, &q41).unwrap();
        for m in [q8, q4] {
            let packed = m.to_panels();
            assert_eq!(packed.dequantize(), m.dequantize(), "{:?}", m.format());
            assert_eq!(packed.rows(), rows);
        }
    }
}
