//! The seed papers `--paper` names, and which objectives each ran (their settings are
//! [`super::presets`]).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A seed paper whose settings `--paper` applies (named in any case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Paper {
    /// CPGD, Liu et al. 2025, arXiv:2505.12504.
    Cpgd,
    /// CFPO, Çağatan et al. 2026, arXiv:2601.22801.
    Cfpo,
    /// DGPO, Fu et al. 2026, arXiv:2603.14389.
    Dgpo,
}

/// Every paper, in table order.
pub const PAPERS: [Paper; 3] = [Paper::Cpgd, Paper::Cfpo, Paper::Dgpo];

impl Paper {
    /// Flag value.
    pub fn name(self) -> &'static str {
        match self {
            Self::Cpgd => "cpgd",
            Self::Cfpo => "cfpo",
            Self::Dgpo => "dgpo",
        }
    }

    /// Citation.
    pub fn citation(self) -> &'static str {
        match self {
            Self::Cpgd => "Liu et al. 2025 (CPGD), arXiv:2505.12504 §5.1, eq. 2",
            Self::Cfpo => "Çağatan et al. 2026 (CFPO), arXiv:2601.22801 §5, eq. 8",
            Self::Dgpo => "Fu et al. 2026 (DGPO), arXiv:2603.14389 §5.1, eq. 10",
        }
    }

    /// The objectives the paper ran.
    pub fn objectives(self) -> &'static [&'static str] {
        match self {
            Self::Cpgd => &[
                "grpo",
                "grpo-dual-clip",
                "grpo-no-clip",
                "grpo-drift",
                "reinforce-pp",
                "rloo-ppo",
                "cpgd-pg",
                "pgd",
                "cpg",
                "cpgd",
                "cpgd-official",
            ],
            Self::Cfpo => &["grpo", "cfpo"],
            Self::Dgpo => &["grpo", "cispo", "gppo", "ce-gppo", "aspo", "dgpo"],
        }
    }
}

/// A config file names the paper in any case, as `--paper` takes it.
impl<'de> Deserialize<'de> for Paper {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        let key = name.trim().to_lowercase();
        PAPERS.into_iter().find(|p| p.name() == key).ok_or_else(|| {
            let valid: Vec<&str> = PAPERS.iter().map(|p| p.name()).collect();
            serde::de::Error::custom(format!("unknown paper `{name}`; expected one of {}", valid.join(", ")))
        })
    }
}

/// Fails unless `paper` ran `objective`, naming the ones it did.
pub fn check(paper: Paper, objective: &str) -> Result<()> {
    if paper.objectives().contains(&objective) {
        return Ok(());
    }
    Err(Error::invalid_config(format!(
        "--paper {}: the paper ran {}; `{objective}` is not one of them",
        paper.name(),
        paper.objectives().join(", ")
    )))
}
