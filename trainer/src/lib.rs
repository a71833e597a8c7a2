//! `rltrain`: RL with verifiable rewards on math (see the workspace README).
//!
//! The objectives library is its own crate, `rlobjectives` (candle-core only), re-exported here
//! under the same paths: [`objectives`] (per-token losses and the registry), [`advantage`]
//! (estimators), [`kl`] (KL estimators), [`aggregate`] (aggregation modes), [`metrics`] and
//! [`optim`]. This crate is the runtime on top. The training loop: [`train::train`] reads top to bottom, from
//! [`rollout`] (engine sampling, [`reward`] from `rlverify`) to [`optim`] (fused AdamW,
//! schedules, clipping), with [`checkpoint`]s that resume bit for bit; [`config`] holds every
//! setting, declared once with its flag (`config_values`: the checks of the flags, with the `cli`
//! feature), [`data`] and [`tasks`] the problems, [`policy`] the model, [`memory`] the memory a
//! step needs and the micro-batches that fit, [`eval`] the periodic evaluation, and [`presets`]
//! each seed paper's own settings (`--paper`).
//!
//! The library has no command line: `clap` (the settings' flags), `anyhow` and `indicatif` are
//! the binary's, behind the `cli` feature (on by default); the loop reports its progress through
//! [`Event`]s.
//!
//! ```
//! use candle_core::{Device, Tensor, Var};
//! use rltrain::objectives::{LossInputs, Objective};
//!
//! # fn main() -> rltrain::Result<()> {
//! let dev = Device::Cpu;
//! let logp = Var::from_vec(vec![-1.0f64, -0.5, -2.0, -0.7], (2, 2), &dev)?;
//! let old = Tensor::new(&[[-1.0f64, -0.6], [-2.0, -0.7]], &dev)?;
//! let adv = Tensor::new(&[[1.0f64, 1.0], [-1.0, -1.0]], &dev)?;
//! let mask = Tensor::new(&[[1.0f64, 1.0], [1.0, 0.0]], &dev)?;
//! let inp = LossInputs::new(logp.as_tensor().clone(), old, adv, mask)?;
//! let dgpo = Objective::from_name("dgpo")?;
//! let out = dgpo.defaults().loss(&inp, Some(&[0, 0]))?; // both responses answer prompt 0
//! let grads = out.total.backward()?;
//! assert!(grads.get(&logp).is_some());
//! # Ok(())
//! # }
//! ```

// A library returns values; its binaries print.
#![cfg_attr(not(test), warn(clippy::print_stdout, clippy::print_stderr))]

pub use rlobjectives::{advantage, aggregate, kl, metrics, objectives, optim};

pub mod checkpoint;
pub mod config;
#[cfg(feature = "cli")]
pub mod config_values;
pub mod data;
pub mod error;
pub mod eval;
pub mod memory;
pub mod plot;
pub mod policy;
pub mod reward;
pub mod rng;
pub mod rollout;
pub mod run_dir;
pub mod studies;
pub mod tasks;
pub mod train;

pub use config::{presets, TrainConfig};
pub use error::{Error, Result};
pub use train::{train, train_until, Event, Outcome};
