//! The run directory: `config.json` (the resolved config), `metrics.jsonl` (one line per step,
//! plus evaluation lines), `rollouts.jsonl` (sampled responses) and `checkpoints/`.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::config::TrainConfig;
use crate::error::{Error, Result};

/// Paths of a run directory.
#[derive(Debug, Clone)]
pub struct RunDir {
    /// The directory itself.
    pub root: PathBuf,
}

impl RunDir {
    /// Creates the directory (and `checkpoints/`) if needed.
    pub fn create(root: &Path) -> Result<Self> {
        let me = Self { root: root.to_path_buf() };
        std::fs::create_dir_all(me.checkpoints()).map_err(|e| Error::io(me.checkpoints(), e))?;
        Ok(me)
    }

    /// `config.json`.
    pub fn config_path(&self) -> PathBuf {
        self.root.join("config.json")
    }

    /// `metrics.jsonl`.
    pub fn metrics_path(&self) -> PathBuf {
        self.root.join("metrics.jsonl")
    }

    /// `rollouts.jsonl`.
    pub fn rollouts_path(&self) -> PathBuf {
        self.root.join("rollouts.jsonl")
    }

    /// `checkpoints/`.
    pub fn checkpoints(&self) -> PathBuf {
        self.root.join("checkpoints")
    }

    /// Writes the resolved config (pretty JSON), atomically.
    pub fn write_config(&self, cfg: &TrainConfig) -> Result<()> {
        let text = serde_json::to_string_pretty(cfg).map_err(|e| Error::Run(format!("config.json: {e}")))?;
        write_atomic(&self.config_path(), text.as_bytes())
    }

    /// Reads `config.json` of an existing run.
    pub fn read_config(&self) -> Result<TrainConfig> {
        let path = self.config_path();
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
        TrainConfig::from_json(&text)
    }

    /// The newest step `metrics.jsonl` records (0 when it records none, or is not there).
    pub fn last_logged_step(&self) -> Result<u64> {
        let path = self.metrics_path();
        let text = match std::fs::read_to_string(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            other => other.map_err(|e| Error::io(&path, e))?,
        };
        Ok(text.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()?.get("step")?.as_u64()).max().unwrap_or(0))
    }

    /// Before a resumed run that found no checkpoint starts at step 1: refused when
    /// `metrics.jsonl` records trained steps (starting over would replace them), else clears
    /// what an earlier start left.
    pub fn restart_without_checkpoint(&self) -> Result<()> {
        let logged = self.last_logged_step()?;
        if logged > 0 {
            return Err(Error::Run(format!(
                "cannot resume `{}`: it has no checkpoint (`{}` holds no step-N folder), yet `{}` records {logged} \
                 trained steps, which starting over would replace; start a new run with another --out, or delete \
                 `{2}` to train this one again from step 1",
                self.root.display(),
                self.checkpoints().display(),
                self.metrics_path().display(),
            )));
        }
        self.truncate_after(0)
    }

    /// Drops lines of `metrics.jsonl` and `rollouts.jsonl` whose `step` is after `step` (a run
    /// resumed from a checkpoint re-does those steps).
    pub fn truncate_after(&self, step: u64) -> Result<()> {
        for path in [self.metrics_path(), self.rollouts_path()] {
            if !path.exists() {
                continue;
            }
            let file = File::open(&path).map_err(|e| Error::io(&path, e))?;
            let mut kept = String::new();
            for line in BufReader::new(file).lines() {
                let line = line.map_err(|e| Error::io(&path, e))?;
                let s = serde_json::from_str::<Value>(&line).ok().and_then(|v| v.get("step").and_then(Value::as_u64));
                if s.is_some_and(|s| s <= step) {
                    kept.push_str(&line);
                    kept.push('\n');
                }
            }
            write_atomic(&path, kept.as_bytes())?;
        }
        Ok(())
    }
}

/// Writes `bytes` to `path` through a temporary file and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp-write");
    std::fs::write(&tmp, bytes).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
}

/// An append-only JSONL file, flushed after every line.
#[derive(Debug)]
pub struct JsonlWriter {
    path: PathBuf,
    file: File,
}

impl JsonlWriter {
    /// Opens `path` for appending (creating it).
    pub fn append(path: &Path) -> Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path).map_err(|e| Error::io(path, e))?;
        Ok(Self { path: path.to_path_buf(), file })
    }

    /// Writes one line; an error (a full disk) names the file and the line's step.
    pub fn write(&mut self, v: &Value) -> Result<()> {
        let mut line = v.to_string();
        line.push('\n');
        let failed = |e: std::io::Error| match v.get("step").and_then(Value::as_u64) {
            Some(step) => Error::io(&self.path, std::io::Error::new(e.kind(), format!("writing step {step}: {e}"))),
            None => Error::io(&self.path, e),
        };
        self.file.write_all(line.as_bytes()).map_err(failed)?;
        self.file.flush().map_err(failed)
    }
}
