//! SplitMix64 (Steele, Lea and Flood 2014): its finaliser mixes 64 bits well, its stream's whole
//! state is one `u64` (a checkpoint stores it), and both are a few lines that never change with a
//! dependency's version.

/// The stream's increment (the golden ratio in 64-bit fixed point).
pub const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// The SplitMix64 finaliser: a bijective mix of 64 bits.
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One SplitMix64 step from `x`: `mix64(x + GOLDEN_GAMMA)`, a well-mixed hash of a 64-bit value.
pub const fn splitmix64(x: u64) -> u64 {
    mix64(x.wrapping_add(GOLDEN_GAMMA))
}

/// Derives one seed from several values (order matters), starting from `salt`:
/// `fold(salt, |acc, p| splitmix64(acc ^ splitmix64(p)))`.
pub fn derive_seed(salt: u64, parts: &[u64]) -> u64 {
    parts.iter().fold(salt, |acc, &p| splitmix64(acc ^ splitmix64(p)))
}

/// The SplitMix64 generator; its state is public so it can be saved and restored exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitMix64 {
    /// The generator state.
    pub state: u64,
}

impl SplitMix64 {
    /// A generator whose first output is `mix64(state + GOLDEN_GAMMA)`.
    pub const fn new(state: u64) -> Self {
        Self { state }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        mix64(self.state)
    }

    /// A number in `0..n` (`n > 0`; the modulo bias is below 2^-40 for any `n` under 2^24).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// One item of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_hash_and_seeds() {
        // The reference stream of SplitMix64 seeded with 0.
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(splitmix64(0), 0xE220_A839_7B1D_CDAF);
        assert_ne!(derive_seed(1, &[1, 2]), derive_seed(1, &[2, 1]));
        assert_ne!(derive_seed(1, &[1]), derive_seed(2, &[1]));
    }
}
