//! The device a command line names, parsed without candle (`rlbench`'s argument parser builds
//! without the engine); `rlengine::open_device` opens it.

use std::fmt;
use std::str::FromStr;

/// `--device` of `rlbench` and `rltrain`: `auto`, `cpu`, `cuda` (GPU 0) or `cuda:N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DeviceSpec {
    /// The first GPU of a `cuda` build when one can be opened, else the CPU.
    #[default]
    Auto,
    /// The CPU.
    Cpu,
    /// GPU `N` (`cuda` is GPU 0).
    Cuda(usize),
}

impl DeviceSpec {
    /// The spellings, for help texts and errors.
    pub const SPELLINGS: &'static str = "auto, cpu, cuda or cuda:N";
}

impl FromStr for DeviceSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        match s {
            "auto" => Ok(Self::Auto),
            "cpu" => Ok(Self::Cpu),
            "cuda" => Ok(Self::Cuda(0)),
            _ => s
                .strip_prefix("cuda:")
                .and_then(|n| n.parse().ok())
                .map(Self::Cuda)
                .ok_or_else(|| format!("unknown device `{s}`: {}", Self::SPELLINGS)),
        }
    }
}

impl fmt::Display for DeviceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Auto => f.write_str("auto"),
            Self::Cpu => f.write_str("cpu"),
            Self::Cuda(0) => f.write_str("cuda"),
            Self::Cuda(n) => write!(f, "cuda:{n}"),
        }
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for DeviceSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for DeviceSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::DeviceSpec;

    #[test]
    fn every_spelling_round_trips_and_typos_list_the_valid_ones() {
        for (text, spec) in [
            ("auto", DeviceSpec::Auto),
            ("cpu", DeviceSpec::Cpu),
            ("cuda", DeviceSpec::Cuda(0)),
            ("cuda:3", DeviceSpec::Cuda(3)),
        ] {
            assert_eq!(text.parse::<DeviceSpec>(), Ok(spec));
            assert_eq!(spec.to_string(), text);
        }
        assert_eq!(" cpu ".parse::<DeviceSpec>(), Ok(DeviceSpec::Cpu));
        assert_eq!("cuda:0".parse::<DeviceSpec>(), Ok(DeviceSpec::Cuda(0)));
        for bad in ["gpu0", "cuda:", "cuda:x", "CPU", ""] {
            let err = bad.parse::<DeviceSpec>().unwrap_err();
            assert!(err.contains("auto, cpu, cuda or cuda:N"), "{bad}: {err}");
        }
    }
}
