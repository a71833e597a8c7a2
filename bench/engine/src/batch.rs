//! Padding token sequences of different lengths into one batch.

use super::error::{Error, Result};
use candle_core::{Device, Tensor};

/// Where padding goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PadSide {
    /// Pads before the tokens (sequences end together; used for generation).
    Left,
    /// Pads after the tokens (sequences start together; usual for training).
    Right,
}

/// A padded batch: ids `[B, T]`, rotary positions `[B, T]` (counting real tokens only, so left
/// padding does not shift positions) and which entries are real tokens.
#[derive(Debug, Clone)]
pub struct PaddedBatch {
    /// Token ids, `[B, T]` u32; padding holds `pad_id`.
    pub ids: Tensor,
    /// Positions, `[B, T]` u32.
    pub positions: Tensor,
    /// `valid[b][t]` is true where a real token sits.
    pub valid: Vec<Vec<bool>>,
    /// The unpadded length of each sequence.
    pub lengths: Vec<usize>,
    /// Padding side.
    pub side: PadSide,
    /// Token ids on the host, `[B][T]`.
    pub host_ids: Vec<Vec<u32>>,
}

impl PaddedBatch {
    /// Pads `sequences` to the longest one.
    pub fn new(sequences: &[Vec<u32>], side: PadSide, pad_id: u32, device: &Device) -> Result<Self> {
        if sequences.is_empty() {
            return Err(Error::Request("empty batch".into()));
        }
        let width = sequences.iter().map(Vec::len).max().unwrap_or(0);
        if width == 0 {
            return Err(Error::Request("every sequence in the batch is empty".into()));
        }
        let mut host_ids = Vec::with_capacity(sequences.len());
        let mut positions = Vec::with_capacity(sequences.len() * width);
        let mut valid = Vec::with_capacity(sequences.len());
        for seq in sequences {
            let pad = width - seq.len();
            let (row, row_valid): (Vec<u32>, Vec<bool>) = match side {
                PadSide::Left => (
                    std::iter::repeat_n(pad_id, pad).chain(seq.iter().copied()).collect(),
                    (0..width).map(|t| t >= pad).collect(),
                ),
                PadSide::Right => (
                    seq.iter().copied().chain(std::iter::repeat_n(pad_id, pad)).collect(),
                    (0..width).map(|t| t < seq.len()).collect(),
                ),
            };
            let mut seen = 0u32;
            for &ok in &row_valid {
                positions.push(if ok { seen } else { 0 });
                seen += u32::from(ok);
            }
            host_ids.push(row);
            valid.push(row_valid);
        }
        let flat: Vec<u32> = host_ids.iter().flatten().copied().collect();
        let b = sequences.len();
        Ok(PaddedBatch {
            ids: Tensor::from_vec(flat, (b, width), device)?,
            positions: Tensor::from_vec(positions, (b, width), device)?,
            valid,
            lengths: sequences.iter().map(Vec::len).collect(),
            side,
            host_ids,
        })
    }

    /// Batch size.
    pub fn batch_size(&self) -> usize {
        self.valid.len()
    }

    /// Padded length.
    pub fn width(&self) -> usize {
        self.valid.first().map(Vec::len).unwrap_or(0)
    }

    /// Where sequence `b`'s tokens start in the padded row.
    pub fn start(&self, b: usize) -> usize {
        match self.side {
            PadSide::Left => self.width() - self.lengths[b],
            PadSide::Right => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn left_and_right_padding_keep_positions_of_real_tokens() {
        let seqs = vec![vec![5, 6, 7], vec![8]];
        let left = PaddedBatch::new(&seqs, PadSide::Left, 0, &Device::Cpu).unwrap();
        assert_eq!(left.host_ids, vec![vec![5, 6, 7], vec![0, 0, 8]]);
        assert_eq!(left.positions.to_vec2::<u32>().unwrap(), vec![vec![0, 1, 2], vec![0, 0, 0]]);
        assert_eq!(left.valid[1], vec![false, false, true]);
        assert_eq!(left.start(1), 2);
        let right = PaddedBatch::new(&seqs, PadSide::Right, 9, &Device::Cpu).unwrap();
        assert_eq!(right.host_ids, vec![vec![5, 6, 7], vec![8, 9, 9]]);
        assert_eq!(right.valid[1], vec![true, false, false]);
        assert_eq!(right.start(1), 0);
        assert!(PaddedBatch::new(&[], PadSide::Left, 0, &Device::Cpu).is_err());
        assert!(PaddedBatch::new(&[vec![]], PadSide::Left, 0, &Device::Cpu).is_err());
    }
}
