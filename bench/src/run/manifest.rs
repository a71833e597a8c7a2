//! The run manifest (`run.json`): what produced the completions of a run directory.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// File name of the manifest inside a run directory.
pub const MANIFEST_FILE: &str = "run.json";

/// Sampling settings of a run (K samples per problem).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SamplingSettings {
    /// Samples per problem.
    pub k: usize,
    pub temperature: f32,
    pub top_p: f32,
    pub top_k: Option<usize>,
    pub max_tokens: usize,
    pub stop: Vec<String>,
    /// Base seed; each request's seed is derived from it, the suite, the problem id and the first
    /// sample index of the request.
    pub seed: Option<u64>,
    /// Completions asked for per request (seeds depend on it).
    pub samples_per_request: usize,
}

/// The prompt template used.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptInfo {
    pub name: String,
    /// [`crate::prompt::PromptTemplate::hash`].
    pub hash: String,
}

/// Everything that identifies a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunManifest {
    pub rlbench_version: String,
    /// `rlverify::VERSION` when the run was created (scores are always recomputed with the current
    /// verifier; see `verifier_version_scored` in reports).
    pub verifier_version: String,
    /// Creation time, UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub created: String,
    /// Backend kind (`openai-chat`, `openai-completions`, `embedded`).
    pub backend: String,
    /// Served model name or model path.
    pub model: String,
    /// Server URL, for OpenAI-compatible backends (may change between resumes).
    pub endpoint: Option<String>,
    pub prompt: PromptInfo,
    pub sampling: SamplingSettings,
    /// Suites generated so far (a resume may add suites).
    pub suites: Vec<String>,
    /// `--limit` of the latest invocation.
    pub limit: Option<usize>,
    /// True once every requested completion of the latest invocation was written.
    #[serde(default)]
    pub complete: bool,
}

impl RunManifest {
    /// Read `run.json` from a run directory; `Ok(None)` when there is none.
    pub fn read(dir: &Path) -> Result<Option<RunManifest>, String> {
        let path = dir.join(MANIFEST_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| format!("{}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }

    /// Write `run.json` atomically (temp file + rename).
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        let path = dir.join(MANIFEST_FILE);
        let tmp = dir.join(format!("{MANIFEST_FILE}.tmp"));
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        std::fs::write(&tmp, text + "\n").map_err(|e| format!("{}: {e}", tmp.display()))?;
        std::fs::rename(&tmp, &path).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The settings that differ between an existing run and a new invocation, as
    /// `field: run has X, this command has Y`. Empty means the run may be resumed. Endpoint,
    /// suites, limit, versions and creation time may differ.
    pub fn conflicts(&self, new: &RunManifest) -> Vec<String> {
        let mut out = Vec::new();
        let mut cmp = |field: &str, old: String, new: String| {
            if old != new {
                out.push(format!("{field}: run has {old}, this command has {new}"));
            }
        };
        cmp("backend", self.backend.clone(), new.backend.clone());
        cmp("model", self.model.clone(), new.model.clone());
        cmp(
            "prompt",
            format!("{} ({})", self.prompt.name, self.prompt.hash),
            format!("{} ({})", new.prompt.name, new.prompt.hash),
        );
        let (a, b) = (&self.sampling, &new.sampling);
        cmp("samples per problem (k)", a.k.to_string(), b.k.to_string());
        cmp("temperature", a.temperature.to_string(), b.temperature.to_string());
        cmp("top_p", a.top_p.to_string(), b.top_p.to_string());
        cmp("top_k", format!("{:?}", a.top_k), format!("{:?}", b.top_k));
        cmp("max_tokens", a.max_tokens.to_string(), b.max_tokens.to_string());
        cmp("stop", format!("{:?}", a.stop), format!("{:?}", b.stop));
        cmp("seed", format!("{:?}", a.seed), format!("{:?}", b.seed));
        cmp("samples_per_request", a.samples_per_request.to_string(), b.samples_per_request.to_string());
        out
    }
}

/// Current UTC time as `YYYY-MM-DDTHH:MM:SSZ` (no time-zone database needed).
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    format_utc(secs)
}

/// Format seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn format_utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_formatting() {
        assert_eq!(format_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(format_utc(1_763_757_000), "2025-11-21T20:30:00Z");
    }
}
