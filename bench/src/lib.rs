//! `rlbench`: evaluate models on math suites (see the workspace README).
pub use rlverify;
pub mod engine;
