//! `rlobjectives`: the policy objectives of RL with verifiable rewards on candle, apart from any
//! runtime. Every loss of CPGD, CFPO, DGPO and their baselines (PG, PPO, GRPO and its variants,
//! REINFORCE++, RLOO, CISPO, GPPO, CE-GPPO, ASPO, SAPO, DAPO, Dr.GRPO, GPG, GSPO, GMPO, Clip-Cov,
//! KL-Cov) as a registry entry ([`objectives`]), with the pieces a trainer combines them with:
//! advantage estimators ([`advantage`]), KL estimators ([`kl`]), aggregation modes
//! ([`aggregate`]), batch metrics ([`metrics`]) and a fused AdamW with schedules and gradient
//! clipping ([`optim`]). It depends on candle-core only; `rltrain` is one runtime on top.
//!
//! Modules import downwards only: [`ops`] (tensor helpers) and [`names`] (typed names) at the bottom; then [`kl`],
//! [`aggregate`], [`advantage`] and [`optim`]; then [`objectives`]; then [`metrics`].
//!
//! ```
//! use candle_core::{Device, Tensor, Var};
//! use rlobjectives::objectives::{LossInputs, Objective};
//!
//! # fn main() -> rlobjectives::Result<()> {
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

pub mod advantage;
pub mod aggregate;
pub mod error;
pub mod kl;
pub mod metrics;
pub mod names;
pub mod objectives;
pub mod ops;
pub mod optim;

pub use error::{Error, Result};
pub use objectives::{LossConfig, LossInputs, LossOutput, Objective};
