//! The trainer's random stream: SplitMix64 ([`rlbase::SplitMix64`]), whose whole state is one
//! `u64`, so a checkpoint can store it and a resumed run draws exactly the same prompt orders and
//! mini-batch shuffles.

use rlbase::{mix64, splitmix64, SplitMix64};
use serde::{Deserialize, Serialize};

/// SplitMix64 generator (serialisable state).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrainRng {
    /// The generator state.
    pub state: u64,
}

/// Derives one seed from several values (order matters). The trainer's own fold (its salt, and
/// the plain finaliser outside), kept so every recorded run draws the same streams.
pub fn derive_seed(parts: &[u64]) -> u64 {
    parts.iter().fold(0x7254_7261_696E_u64, |acc, &p| mix64(acc ^ splitmix64(p)))
}

impl TrainRng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: derive_seed(&[seed]) }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut stream = SplitMix64::new(self.state);
        let bits = stream.next_u64();
        self.state = stream.state;
        bits
    }

    /// Uniform integer in `0..n` (`n > 0`; 0 when `n == 0`).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        // Multiply-shift: unbiased enough for shuffling (bias < n / 2^64).
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Fisher-Yates shuffle in place.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values of the trainer's own SplitMix64 copy before it moved to `rlbase` (so resumed and
    /// recorded runs draw the same streams).
    #[test]
    fn seeds_and_streams_keep_their_values() {
        assert_eq!(derive_seed(&[3, 4]), 0x5b96_c13e_d4c7_093a);
        let mut r = TrainRng::new(3);
        assert_eq!((r.next_u64(), r.next_u64()), (0x282c_bca2_b8c2_1693, 0xa6b9_7d63_7bfc_7dbe));
    }

    #[test]
    fn same_seed_same_stream_and_shuffles_are_permutations() {
        let mut a = TrainRng::new(3);
        let mut b = TrainRng::new(3);
        assert_eq!((0..4).map(|_| a.next_u64()).collect::<Vec<_>>(), (0..4).map(|_| b.next_u64()).collect::<Vec<_>>());
        assert_ne!(TrainRng::new(3), TrainRng::new(4));
        let mut v: Vec<usize> = (0..50).collect();
        a.shuffle(&mut v);
        assert_ne!(v, (0..50).collect::<Vec<_>>());
        v.sort_unstable();
        assert_eq!(v, (0..50).collect::<Vec<_>>());
        assert_ne!(derive_seed(&[1, 2]), derive_seed(&[2, 1]));
    }
}
