//! A small seeded random number generator (xoshiro256++), so samples and random weights depend
//! only on the seed and never on a dependency's version.

use rlbase::{SplitMix64, GOLDEN_GAMMA};

/// Derives one seed from several values (order matters): [`rlbase::derive_seed`] with the
/// engine's salt.
pub fn derive_seed(parts: &[u64]) -> u64 {
    rlbase::derive_seed(0x5EED, parts)
}

/// xoshiro256++ generator.
#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator whose whole stream is determined by `seed`.
    pub fn new(seed: u64) -> Self {
        // The state is four outputs of SplitMix64 started one step past `seed`.
        let mut sm = SplitMix64::new(seed.wrapping_add(GOLDEN_GAMMA));
        Rng { s: [sm.next_u64(), sm.next_u64(), sm.next_u64(), sm.next_u64()] }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 bits of precision.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Standard normal (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform(); // in (0, 1]
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_different_seeds_differ() {
        let a: Vec<u64> = {
            let mut r = Rng::new(7);
            (0..5).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = Rng::new(7);
            (0..5).map(|_| r.next_u64()).collect()
        };
        let c: Vec<u64> = {
            let mut r = Rng::new(8);
            (0..5).map(|_| r.next_u64()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(derive_seed(&[1, 2]), derive_seed(&[2, 1]));
    }

    /// The values of the engine's own SplitMix64 copy before it moved to `rlbase` (so every
    /// recorded sample keeps its seed).
    #[test]
    fn seeds_and_streams_keep_their_values() {
        assert_eq!(derive_seed(&[1, 2]), 0x1d26_2ac5_ef24_35c1);
        assert_eq!(Rng::new(7).next_u64(), 0x237b_6a1b_ef78_75d8);
    }

    #[test]
    fn uniform_and_normal_have_the_right_moments() {
        let mut r = Rng::new(1);
        let n = 100_000;
        let u: Vec<f64> = (0..n).map(|_| r.uniform()).collect();
        assert!(u.iter().all(|&x| (0.0..1.0).contains(&x)));
        let mean_u = u.iter().sum::<f64>() / n as f64;
        assert!((mean_u - 0.5).abs() < 0.01, "{mean_u}");
        let z: Vec<f64> = (0..n).map(|_| r.normal()).collect();
        let mean = z.iter().sum::<f64>() / n as f64;
        let var = z.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.02 && (var - 1.0).abs() < 0.02, "{mean} {var}");
    }
}
