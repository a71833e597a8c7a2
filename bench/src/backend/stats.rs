//! What each endpoint of a run did ([`EndpointStats`]), kept in the run directory's
//! `endpoints.json` across resumed invocations; reports read it without the HTTP client.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The file of per-endpoint statistics in a run directory.
pub const ENDPOINTS_FILE: &str = "endpoints.json";

/// What one endpoint did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EndpointStats {
    /// The endpoint's URL.
    pub endpoint: String,
    /// Requests sent (each attempt counts).
    pub requests: u64,
    /// Requests that failed (connection errors, timeouts, error statuses, malformed answers).
    pub failures: u64,
    /// Completions received.
    pub completions: u64,
    /// Completion tokens, as the server reported them (`usage.completion_tokens`).
    pub tokens: u64,
    /// Times it was taken out of rotation.
    pub taken_out: u64,
    /// Wall time these counts cover: from the first request of the fleet to the last answer.
    pub seconds: f64,
}

impl EndpointStats {
    /// Completion tokens per second of wall time.
    pub fn tokens_per_second(&self) -> Option<f64> {
        (self.seconds > 0.0 && self.tokens > 0).then(|| self.tokens as f64 / self.seconds)
    }

    /// Add the counts of a later invocation.
    pub fn add(&mut self, other: &EndpointStats) {
        self.requests += other.requests;
        self.failures += other.failures;
        self.completions += other.completions;
        self.tokens += other.tokens;
        self.taken_out += other.taken_out;
        self.seconds += other.seconds;
    }
}

/// The per-endpoint statistics saved in `dir` (empty when there are none or the file is unreadable).
pub fn load_stats(dir: &Path) -> Vec<EndpointStats> {
    std::fs::read(dir.join(ENDPOINTS_FILE))
        .ok()
        .and_then(|b| serde_json::from_slice::<Vec<EndpointStats>>(&b).ok())
        .unwrap_or_default()
}

/// Add `stats` to those saved in `dir` (by endpoint URL) and write the file; returns its path.
pub fn save_stats(dir: &Path, stats: &[EndpointStats]) -> Result<PathBuf, String> {
    let mut all = load_stats(dir);
    for s in stats.iter().filter(|s| s.requests > 0) {
        match all.iter_mut().find(|a| a.endpoint == s.endpoint) {
            Some(a) => a.add(s),
            None => all.push(s.clone()),
        }
    }
    let path = dir.join(ENDPOINTS_FILE);
    let tmp = dir.join(format!(".{ENDPOINTS_FILE}.tmp"));
    let text = serde_json::to_string_pretty(&all).map_err(|e| e.to_string())?;
    std::fs::write(&tmp, text + "\n").map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}
