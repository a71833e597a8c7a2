//! `rlbench`: evaluate models on math suites with unbiased Pass@k, Avg@K (with its standard
//! error), Maj@K, and CPGD's Overall.
//!
//! - [`suite`]: the suite manifest (`data/suites.json`) and JSONL problem files;
//! - [`prompt`]: prompt templates (`data/prompts/`);
//! - [`backend`]: the [`Backend`] trait, the OpenAI-compatible client, retries, the embedded-engine
//!   slot;
//! - [`run`]: resumable generation into a run directory;
//! - [`score`]: parallel, streaming scoring with `rlverify`;
//! - [`metrics`]: the estimators; [`report`]: Markdown, CSV, JSON and SVG output;
//! - [`compare`]: two runs side by side, with paired bootstrap intervals and p-values.
//!
//! ```
//! use rlbench::metrics::pass_at_k;
//! // 16 samples, 4 correct: the chance that 4 random samples hold a correct one.
//! let p = pass_at_k(16, 4, 4).unwrap();
//! assert!((p - (1.0 - 495.0 / 1820.0)).abs() < 1e-12);
//! ```

// A library returns values; its binaries print.
#![cfg_attr(not(test), warn(clippy::print_stdout, clippy::print_stderr))]

pub mod backend;
pub mod compare;
pub mod metrics;
pub mod prompt;
pub mod report;
pub mod run;
pub mod score;
pub mod suite;

pub use backend::{Backend, BackendError, Completion, SamplingParams};
pub use metrics::SuiteMetrics;
pub use rlverify;
