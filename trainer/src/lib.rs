//! `rltrain`: RL with verifiable rewards on math (see the workspace README).
//!
//! This crate currently holds the pure-math library of policy objectives (spec
//! `shared/spec/objectives.md`): [`objectives`] (per-token losses and the registry),
//! [`advantage`] (estimators), [`kl`] (KL estimators), [`aggregate`] (aggregation modes) and
//! [`metrics`].
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
//! let out = dgpo.defaults().loss(&inp, None)?;
//! let grads = out.total.backward()?;
//! assert!(grads.get(&logp).is_some());
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

pub mod advantage;
pub mod aggregate;
pub mod error;
pub mod kl;
pub mod metrics;
pub mod objectives;
pub mod plot;

pub use error::{Error, Result};
