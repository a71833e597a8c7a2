//! How much memory a run may plan with: `MemAvailable` of `/proc/meminfo` (bounded by the
//! cgroup's limit, when there is one) on the CPU, the free memory of the device on CUDA; and the
//! share of it a plan uses ([`Available::budget`]).

use candle_core::Device;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Memory the machine has for this run, and where the figure came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Available {
    /// Bytes available.
    pub bytes: u64,
    /// Where it was read (`MemAvailable`, `cgroup memory.max`, `cuMemGetInfo`).
    pub from: String,
    /// The share of it a plan may use, in percent ([`CPU_SHARE_PERCENT`], [`GPU_SHARE_PERCENT`]).
    pub share_percent: u64,
}

/// The share of the CPU's available memory a run plans to use: the model's error (within 15%
/// of measured peaks), memory the allocator holds after freeing it, other processes of a shared
/// machine, and the kernel's page cache all need room, and a killed run loses everything.
pub const CPU_SHARE_PERCENT: u64 = 50;

/// The share of a GPU's free memory a run plans to use (the device is the run's own; the
/// allocator's caching and fragmentation need the rest).
pub const GPU_SHARE_PERCENT: u64 = 85;

impl Available {
    /// What `device` has now.
    pub fn of(device: &Device) -> Result<Self> {
        match device {
            Device::Cpu => host(),
            #[cfg(feature = "cuda")]
            Device::Cuda(d) => {
                use candle_core::cuda_backend::cudarc::driver::result::mem_get_info;
                let failed = |e: &dyn std::fmt::Display| Error::Run(format!("cannot read the GPU's free memory: {e}"));
                d.cuda_stream().context().bind_to_thread().map_err(|e| failed(&e))?;
                let (free, _total) = mem_get_info().map_err(|e| failed(&e))?;
                Ok(Self { bytes: free as u64, from: "cuMemGetInfo".into(), share_percent: GPU_SHARE_PERCENT })
            }
            #[allow(unreachable_patterns)]
            other => Err(Error::Run(format!("cannot read the free memory of {other:?}"))),
        }
    }

    /// The bytes a plan may use.
    pub fn budget(&self) -> u64 {
        self.bytes / 100 * self.share_percent
    }
}

/// `MemAvailable`, or the cgroup's remaining room when that is smaller.
fn host() -> Result<Available> {
    let path = "/proc/meminfo";
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let mut best = Available {
        bytes: meminfo_bytes(&text, "MemAvailable:")
            .ok_or_else(|| Error::Run(format!("`{path}` has no MemAvailable line")))?,
        from: "MemAvailable".into(),
        share_percent: CPU_SHARE_PERCENT,
    };
    if let Some(room) = cgroup_room() {
        if room < best.bytes {
            best = Available { bytes: room, from: "cgroup memory.max".into(), ..best };
        }
    }
    Ok(best)
}

/// The value of a `Name:   123 kB` line of `/proc/meminfo`, in bytes.
fn meminfo_bytes(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// `memory.max - memory.current` of this process's cgroup (v2), when it has a limit.
fn cgroup_room() -> Option<u64> {
    let read = |f: &str| std::fs::read_to_string(format!("/sys/fs/cgroup/{f}")).ok();
    let max: u64 = read("memory.max")?.trim().parse().ok()?; // "max" (no limit) does not parse
    let current: u64 = read("memory.current")?.trim().parse().ok()?;
    Some(max.saturating_sub(current))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_lines_are_read_in_bytes() {
        let text = "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   20000000 kB\n";
        assert_eq!(meminfo_bytes(text, "MemAvailable:"), Some(20_000_000 * 1024));
        assert_eq!(meminfo_bytes(text, "Cached:"), None);
    }

    #[test]
    fn the_cpu_has_some_memory_and_a_plan_uses_its_share() {
        let a = Available::of(&Device::Cpu).unwrap();
        assert!(a.bytes > 0, "{a:?}");
        assert_eq!(a.budget(), a.bytes / 100 * CPU_SHARE_PERCENT);
    }
}
