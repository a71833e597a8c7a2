//! The run manifest (`run.json`): what produced the completions of a run directory.

use crate::suite::Fields;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// File name of the manifest inside a run directory.
pub const MANIFEST_FILE: &str = "run.json";

/// Sampling settings of a run (K samples per problem).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SamplingSettings {
    /// Samples per problem.
    pub k: usize,
    /// f64 as typed, so run.json records `0.6`, not `0.6000000238418579`.
    pub temperature: f64,
    /// Nucleus sampling mass.
    pub top_p: f64,
    /// Top-k cut-off (`None`: the server's default).
    pub top_k: Option<usize>,
    /// Most new tokens per completion.
    pub max_tokens: usize,
    /// Stop strings.
    pub stop: Vec<String>,
    /// Base seed; each request's seed is derived from it, the suite, the problem id and the first
    /// sample index of the request.
    pub seed: Option<u64>,
    /// Completions asked for per request (seeds depend on it).
    pub samples_per_request: usize,
}

impl Default for SamplingSettings {
    /// `rlbench run`'s defaults: one sample at temperature 0.6, top-p 0.95, 4096 new tokens, base
    /// seed 0, one completion per request.
    fn default() -> Self {
        SamplingSettings {
            k: 1,
            temperature: 0.6,
            top_p: 0.95,
            top_k: None,
            max_tokens: 4096,
            stop: Vec::new(),
            seed: Some(0),
            samples_per_request: 1,
        }
    }
}

/// The prompt template used.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptInfo {
    /// The template's name.
    pub name: String,
    /// [`crate::prompt::PromptTemplate::hash`].
    pub hash: String,
}

/// Where a suite's problems were read from, so that a report scores against the file as it is now.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SuiteSource {
    /// The suite file (absolute when it could be resolved).
    pub file: PathBuf,
    /// The field names it was read with.
    pub fields: Fields,
    /// [`crate::suite::rows_hash`] of its rows when the run last generated.
    pub rows_hash: String,
}

/// Everything that identifies a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunManifest {
    /// The rlbench version that created the run.
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
    /// The prompt template.
    pub prompt: PromptInfo,
    /// The sampling settings.
    pub sampling: SamplingSettings,
    /// Suites generated so far (a resume may add suites).
    pub suites: Vec<String>,
    /// Problems asked for per suite (after `--limit`), so a report can tell how many samples are
    /// missing, problems without any completion included.
    #[serde(default)]
    pub problems: BTreeMap<String, usize>,
    /// Where each suite was read from (absent in runs of older rlbench versions: those are scored
    /// against the golds stored with their completions until a run command records it).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub suite_files: BTreeMap<String, SuiteSource>,
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

    /// Write `run.json` atomically (temp file + rename). A manifest that would not read back as
    /// itself (a non-finite sampling value becomes `null` in JSON) is refused and nothing is written.
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        let path = dir.join(MANIFEST_FILE);
        let tmp = dir.join(format!("{MANIFEST_FILE}.tmp"));
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        match serde_json::from_str::<RunManifest>(&text) {
            Ok(back) if back == *self => {}
            _ => {
                return Err(format!(
                "{}: not written: the run settings do not survive a round trip through JSON (temperature {}, top-p {})",
                path.display(),
                self.sampling.temperature,
                self.sampling.top_p
            ))
            }
        }
        std::fs::write(&tmp, text + "\n").map_err(|e| format!("{}: {e}", tmp.display()))?;
        std::fs::rename(&tmp, &path).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// A short hash of what makes a run: the settings [`RunManifest::conflicts`] compares, the
    /// suites and the hash of their rows ([`SuiteSource::rows_hash`]). Runs of the same command
    /// on the same suite files share it; runs of other settings, or of a changed or other copy of
    /// a suite file, never do, so it names default run directories (`rlbench run` without `--out`).
    pub fn settings_hash(&self) -> String {
        let rows: Vec<&str> =
            self.suites.iter().filter_map(|s| self.suite_files.get(s)).map(|s| s.rows_hash.as_str()).collect();
        if rows.is_empty() {
            return self.legacy_settings_hash();
        }
        let mut h = rlbase::Fnv1a::new();
        h.write(self.legacy_settings_hash().as_bytes());
        for r in rows {
            h.write(&[0]);
            h.write(r.as_bytes());
        }
        format!("{:08x}", h.finish() >> 32)
    }

    /// The hash that named run directories before the suite rows were part of it (the settings and
    /// the suite names only): how the runs of older rlbench versions are found again.
    pub fn legacy_settings_hash(&self) -> String {
        let s = &self.sampling;
        let text = format!(
            "{}\0{}\0{}\0{}\0{}\0{}\0{}\0{:?}\0{}\0{:?}\0{:?}\0{}\0{}",
            self.backend,
            self.model,
            self.prompt.name,
            self.prompt.hash,
            s.k,
            s.temperature,
            s.top_p,
            s.top_k,
            s.max_tokens,
            s.stop,
            s.seed,
            s.samples_per_request,
            self.suites.join("\0")
        );
        let mut h = rlbase::Fnv1a::new();
        h.write(text.as_bytes());
        format!("{:08x}", h.finish() >> 32)
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
        let value = |old: f64, new: f64| if same_value(old, new) { new.to_string() } else { old.to_string() };
        cmp("temperature", value(a.temperature, b.temperature), b.temperature.to_string());
        cmp("top_p", value(a.top_p, b.top_p), b.top_p.to_string());
        cmp("top_k", format!("{:?}", a.top_k), format!("{:?}", b.top_k));
        cmp("max_tokens", a.max_tokens.to_string(), b.max_tokens.to_string());
        cmp("stop", format!("{:?}", a.stop), format!("{:?}", b.stop));
        cmp("seed", format!("{:?}", a.seed), format!("{:?}", b.seed));
        cmp("samples_per_request", a.samples_per_request.to_string(), b.samples_per_request.to_string());
        out
    }
}

/// Whether two sampling values are the same setting: equal, or one is the other widened from f32
/// (run.json files written before values were kept as f64 hold `0.6000000238418579` for `0.6`).
fn same_value(a: f64, b: f64) -> bool {
    a == b || a == f64::from(b as f32) || b == f64::from(a as f32)
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

    fn manifest(temperature: f64) -> RunManifest {
        RunManifest {
            rlbench_version: "0".into(),
            verifier_version: "0".into(),
            created: format_utc(0),
            backend: "openai-chat".into(),
            model: "m".into(),
            endpoint: None,
            prompt: PromptInfo { name: "boxed".into(), hash: "h".into() },
            sampling: SamplingSettings {
                k: 4,
                temperature,
                top_p: 0.95,
                top_k: None,
                max_tokens: 16,
                stop: vec![],
                seed: Some(1),
                samples_per_request: 1,
            },
            suites: vec!["aime24".into()],
            problems: [("aime24".to_string(), 30)].into_iter().collect(),
            suite_files: BTreeMap::new(),
            limit: None,
            complete: false,
        }
    }

    /// `0.6` is written as `0.6` (not the f32 widening `0.6000000238418579`) and reads back equal;
    /// a value JSON cannot hold is refused before anything is written.
    #[test]
    fn manifest_round_trips_and_refuses_what_it_cannot_read_back() {
        let dir = std::env::temp_dir().join(format!("rlbench-manifest-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert!(std::fs::create_dir_all(&dir).is_ok());
        let m = manifest(0.6);
        assert_eq!(m.write(&dir), Ok(()));
        let text = std::fs::read_to_string(dir.join(MANIFEST_FILE)).unwrap_or_default();
        assert!(text.contains("\"temperature\": 0.6,"), "{text}");
        assert!(text.contains("\"top_p\": 0.95,"), "{text}");
        assert_eq!(RunManifest::read(&dir), Ok(Some(m.clone())));
        for bad in [f64::NAN, f64::INFINITY] {
            let err = manifest(bad).write(&dir);
            assert!(matches!(&err, Err(e) if e.contains("round trip")), "{err:?}");
            assert_eq!(RunManifest::read(&dir), Ok(Some(m.clone())), "the good manifest is left as it was");
        }
    }

    /// A run.json of an older rlbench holds f32-widened values; resuming it with the same flags
    /// is no conflict, another value still is.
    #[test]
    fn f32_widened_values_of_older_runs_are_the_same_setting() {
        let old = manifest(f64::from(0.6f32));
        assert_eq!(old.sampling.temperature, 0.6000000238418579);
        assert!(old.conflicts(&manifest(0.6)).is_empty());
        let c = old.conflicts(&manifest(0.7));
        assert_eq!(c, vec!["temperature: run has 0.6000000238418579, this command has 0.7".to_string()]);
    }

    /// The same settings give the same hash; any setting that makes another run, another hash.
    #[test]
    fn settings_hashes_name_runs() {
        let a = manifest(0.6);
        let mut later = a.clone();
        later.created = format_utc(99);
        later.endpoint = Some("http://elsewhere:8000".into());
        assert_eq!(a.settings_hash(), later.settings_hash());
        let mut other_seed = a.clone();
        other_seed.sampling.seed = Some(2);
        let mut other_suites = a.clone();
        other_suites.suites.push("gsm8k".into());
        for other in [manifest(0.7), other_seed, other_suites] {
            assert_ne!(a.settings_hash(), other.settings_hash());
        }
        assert_eq!(a.settings_hash().len(), 8);
    }

    /// Another version of a suite file (a changed problem, another `--data-dir` copy) makes another
    /// run; a manifest without suite files (an older run) keeps the hash that named it.
    #[test]
    fn suite_rows_are_part_of_the_hash() {
        let old = manifest(0.6);
        assert_eq!(old.settings_hash(), old.legacy_settings_hash());
        let with_rows = |rows: &str| {
            let mut m = old.clone();
            let source = SuiteSource { file: "a.jsonl".into(), fields: Fields::default(), rows_hash: rows.into() };
            m.suite_files.insert("aime24".into(), source);
            m
        };
        let (a, b) = (with_rows("1111"), with_rows("2222"));
        assert_ne!(a.settings_hash(), b.settings_hash());
        assert_ne!(a.settings_hash(), old.settings_hash());
        assert_eq!(a.legacy_settings_hash(), old.settings_hash());
        assert!(a.conflicts(&b).is_empty(), "a changed suite file is reported when scored, not refused");
    }

    #[test]
    fn utc_formatting() {
        assert_eq!(format_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(format_utc(1_763_757_000), "2025-11-21T20:30:00Z");
    }
}
