//! Learning-rate schedules, indexed by training step: linear warm-up, then constant, linear decay
//! or cosine decay to `min_ratio · lr`.

use crate::error::{Error, Result};

/// Shape of the schedule after warm-up (`--lr-schedule`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScheduleKind {
    /// Constant at the peak.
    Constant,
    /// Linear decay to `min_ratio · lr` at the last step.
    Linear,
    /// Half-cosine decay to `min_ratio · lr` at the last step.
    Cosine,
}

impl ScheduleKind {
    /// Every kind, by its name.
    pub const NAMES: [&'static str; 3] = ["constant", "linear", "cosine"];

    /// Parses `constant`, `linear` or `cosine`.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "constant" => Ok(Self::Constant),
            "linear" => Ok(Self::Linear),
            "cosine" => Ok(Self::Cosine),
            other => {
                Err(Error::InvalidConfig(format!("unknown LR schedule `{other}`; valid: constant, linear, cosine")))
            }
        }
    }
}

impl std::str::FromStr for ScheduleKind {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self> {
        Self::parse(name)
    }
}

/// A learning-rate schedule over `total` training steps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LrSchedule {
    /// Shape after warm-up.
    pub kind: ScheduleKind,
    /// Peak learning rate.
    pub peak: f64,
    /// Warm-up steps (linear from `peak / warmup` at step 0 to the peak).
    pub warmup: u64,
    /// Total training steps.
    pub total: u64,
    /// Final rate as a fraction of the peak.
    pub min_ratio: f64,
}

impl LrSchedule {
    /// The learning rate of training step `step` (0-based).
    pub fn lr(&self, step: u64) -> f64 {
        if step < self.warmup {
            return self.peak * (step + 1) as f64 / self.warmup as f64;
        }
        let span = self.total.saturating_sub(self.warmup).saturating_sub(1);
        let progress = if span == 0 { 0.0 } else { ((step - self.warmup) as f64 / span as f64).min(1.0) };
        let floor = self.peak * self.min_ratio;
        match self.kind {
            ScheduleKind::Constant => self.peak,
            ScheduleKind::Linear => self.peak + (floor - self.peak) * progress,
            ScheduleKind::Cosine => floor + (self.peak - floor) * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_table() {
        let s = |kind, warmup| LrSchedule { kind, peak: 1.0, warmup, total: 11, min_ratio: 0.1 };
        let cases: [(LrSchedule, u64, f64); 9] = [
            (s(ScheduleKind::Constant, 0), 0, 1.0),
            (s(ScheduleKind::Constant, 0), 10, 1.0),
            (s(ScheduleKind::Constant, 4), 0, 0.25),
            (s(ScheduleKind::Constant, 4), 3, 1.0),
            (s(ScheduleKind::Linear, 0), 0, 1.0),
            (s(ScheduleKind::Linear, 0), 5, 0.55),
            (s(ScheduleKind::Linear, 0), 10, 0.1),
            (s(ScheduleKind::Cosine, 0), 5, 0.55),
            (s(ScheduleKind::Cosine, 1), 10, 0.1),
        ];
        for (sched, step, want) in cases {
            assert!((sched.lr(step) - want).abs() < 1e-12, "{sched:?} step {step}: {} vs {want}", sched.lr(step));
        }
        assert!(ScheduleKind::parse("cosin").is_err());
    }
}
