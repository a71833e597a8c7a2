//! `rlbase`: the few things every crate of the workspace shares, written once and free of
//! dependencies, so that the verifier, the engine, the evaluator and the trainer agree on them:
//!
//! - [`fnv1a`] and [`Fnv1a`]: stable 64-bit hashes (FNV-1a) of names, prompts and templates, which
//!   never change with the Rust version (std's `Hasher`s may);
//! - [`mix64`], [`splitmix64`], [`SplitMix64`] and [`derive_seed`]: SplitMix64 finaliser, hash and
//!   stream, and seeds derived from several values;
//! - [`DeviceSpec`]: the device a command line names (`auto`, `cpu`, `cuda`, `cuda:N`), parsed
//!   without candle, so `rlbench` builds its argument parser without the engine.
//!
//! ```
//! use rlbase::{derive_seed, fnv1a, DeviceSpec, SplitMix64};
//! let seed = derive_seed(0x5EED, &[7, fnv1a(b"aime24")]);
//! let mut rng = SplitMix64::new(seed);
//! assert_ne!(rng.next_u64(), rng.next_u64());
//! assert_eq!("cuda:1".parse::<DeviceSpec>(), Ok(DeviceSpec::Cuda(1)));
//! ```

// A library returns values; its binaries print.
#![cfg_attr(not(test), warn(clippy::print_stdout, clippy::print_stderr))]

mod device;
mod hash;
mod seed;

pub use device::DeviceSpec;
pub use hash::{fnv1a, Fnv1a};
pub use seed::{derive_seed, mix64, splitmix64, SplitMix64, GOLDEN_GAMMA};
