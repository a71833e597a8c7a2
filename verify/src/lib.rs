//! `rlverify`: decide whether a model's final answer to a math problem is right.
//!
//! The pipeline is extract -> parse -> compare:
//! - [`extract()`] finds the final answer in a full response (`\boxed{}`, `<answer>` tags,
//!   "final answer is", `#### 42`, math delimiters, multiple-choice letters, ...);
//! - [`parse()`] turns the answer's LaTeX or plain text into a typed [`Expr`] with a pest grammar;
//! - [`equivalent`] decides equality with exact rational arithmetic and canonical forms, falling back
//!   to high-precision evaluation at random points (with a relative test) for free variables.
//!
//! Every call has a bounded cost ([`Limits`], [`Budget`]): no input makes it hang, overflow the
//! stack or allocate without bound, and no signals or global state are involved, so it is safe to
//! call from any thread.
//!
//! Why the scanners are hand-written and not `nom` combinators: answer extraction scans whole
//! responses (often 10-30 kB) for a few markers (`\boxed`, `</answer>`, "final answer") with
//! `memchr` and then walks balanced braces byte by byte; that scan is the hot path of
//! `rlverify bench` (about 100k responses per second on one core). The grammar proper (numbers,
//! operators, LaTeX commands) is pest's (`latex/latex.pest`), with a fast path for plain numbers.
//! A combinator library would add a third way to write a parser without replacing either.
//!
//! ```
//! use rlverify::{score, Config, Status};
//! let s = score("So the answer is $\\boxed{\\frac{1}{2}}$.", "0.5", &Config::default());
//! assert!(s.correct);
//! assert_eq!(s.status, Status::Correct);
//! ```

// A library returns values; its binaries print.
#![cfg_attr(not(test), warn(clippy::print_stdout, clippy::print_stderr))]

pub mod ast;
#[cfg(feature = "cli")]
pub mod cli;

pub mod equiv;
#[allow(rustdoc::private_intra_doc_links)]
pub mod extract;
pub mod format;
#[cfg(feature = "input")]
pub mod input;

pub mod latex;
mod lexicon;
pub mod limits;
mod number_words;
mod numerals;
pub mod options;

pub mod score;
pub mod units;

pub use ast::Expr;
pub use equiv::{equivalent, Decision, EquivOptions, Verdict};
pub use extract::{extract, Answer, ExtractOptions, Source};
pub use latex::{parse, ParseError};
pub use limits::{Budget, LimitKind, Limits};
pub use options::VerifierOption;
pub use score::{check, score, Config, Explained, Extraction, Gold, LastNumber, RewardKind, Score, Status, Truncated};

/// The verifier's version, recorded in run manifests so scores stay comparable.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
