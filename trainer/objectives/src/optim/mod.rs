//! Optimisation: a fused AdamW ([`adamw`]), learning-rate schedules ([`schedule`]) and the
//! gradient's global norm ([`clip`]).

pub mod adamw;
pub mod clip;
pub mod schedule;

pub use adamw::{AdamW, AdamWConfig};
pub use clip::{clip_scale, global_norm, GradNorm};
pub use schedule::{LrSchedule, ScheduleKind};
