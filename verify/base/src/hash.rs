//! 64-bit FNV-1a (Fowler-Noll-Vo): a stable hash for seeds and content hashes that must be the
//! same on every platform and Rust version.

const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a of `bytes`.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h = Fnv1a::new();
    h.write(bytes);
    h.finish()
}

/// An FNV-1a hasher fed in pieces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fnv1a(u64);

impl Fnv1a {
    /// A fresh hasher (the offset basis).
    pub const fn new() -> Self {
        Fnv1a(OFFSET_BASIS)
    }

    /// Feeds bytes, one round per byte.
    #[inline]
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_word(u64::from(b));
        }
    }

    /// Feeds one whole word in a single round (xor, then multiply), as the engine hashes token
    /// ids: not the same value as feeding the word's bytes.
    #[inline]
    pub fn write_word(&mut self, word: u64) {
        self.0 = (self.0 ^ word).wrapping_mul(PRIME);
    }

    /// The hash so far.
    #[inline]
    pub const fn finish(&self) -> u64 {
        self.0
    }
}

/// As a [`std::hash::Hasher`] (`BuildHasherDefault<Fnv1a>`), for hash maps of short keys that
/// are not adversarial to the table (a lexicon, a unit registry): far cheaper than SipHash, and
/// a collision costs one more comparison.
impl std::hash::Hasher for Fnv1a {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        Fnv1a::write(self, bytes);
    }
}

impl Default for Fnv1a {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // Reference values of 64-bit FNV-1a.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
        let mut h = Fnv1a::new();
        h.write(b"foo");
        h.write(b"bar");
        assert_eq!(h.finish(), fnv1a(b"foobar"));
        let mut w = Fnv1a::new();
        w.write_word(u64::from(b'a'));
        assert_eq!(w.finish(), fnv1a(b"a"));
    }
}
