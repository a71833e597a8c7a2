//! Checkpoints: `RUN_DIR/checkpoints/step-N/` holds the engine's `save_pretrained` output
//! (safetensors + config + tokenizer: loadable by `Engine::load` and Hugging Face tools), the
//! optimizer moments (`optimizer.safetensors`) and `trainer_state.json` (step, RNG, data
//! position, metrics tail). Each is written into a temporary folder and renamed; the `latest`
//! file names the newest complete checkpoint and is replaced atomically. Every file gets the
//! permissions of the rest of the run directory (the safetensors writer creates its files
//! owner-only), and [`prune`] keeps the newest N.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use candle_core::Tensor;
use rlengine::Engine;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::data::PromptOrder;
use crate::error::{Error, Result};
use crate::optim::AdamW;
use crate::rng::TrainRng;
use crate::run_dir::write_atomic;

/// Everything besides weights and moments that a resumed run needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainerState {
    /// Training steps completed.
    pub step: u64,
    /// Optimizer steps taken.
    pub optimizer_steps: u64,
    /// The trainer's random stream (mini-batch shuffles).
    pub rng: TrainRng,
    /// Position in the prompt order.
    pub data: PromptOrder,
    /// Consecutive skipped (non-finite) updates.
    pub bad_streak: usize,
    /// Skipped updates over the whole run.
    pub skipped_total: u64,
    /// The last metrics line written.
    pub metrics_tail: Option<Value>,
    /// [`Dataset::fingerprint`](crate::data::Dataset::fingerprint) of the training data (absent
    /// in checkpoints written before it was kept: then only the number of problems is compared).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_fingerprint: Option<u64>,
}

impl TrainerState {
    /// Checks that a restored state was trained on the data a fresh start reads now (`fresh`):
    /// problems added, removed or changed since would be drawn by the saved prompt order
    /// unnoticed (or past its end). The error says what changed and what to do. A checkpoint from
    /// before fingerprints takes the current one.
    pub fn check_same_data(&mut self, fresh: &TrainerState, data: &str, checkpoint: &Path) -> Result<()> {
        let (then, now) = (self.data.len, fresh.data.len);
        let changed = match (self.data_fingerprint, fresh.data_fingerprint) {
            _ if then != now => format!("it had {then} problems, it has {now} now"),
            (Some(a), Some(b)) if a != b => {
                format!("its {now} problems are not those of the checkpoint (a row changed)")
            }
            _ => {
                self.data_fingerprint = fresh.data_fingerprint;
                return Ok(());
            }
        };
        Err(Error::Run(format!(
            "the training data `{data}` changed since the checkpoint `{}` was saved: {changed}; resume with the \
             data the run was trained on, or start a new run from the checkpoint's weights on the new data \
             (--model {0} --out NEW_DIR)",
            checkpoint.display()
        )))
    }
}

/// Name of the folder of step `step`.
pub fn step_dir_name(step: u64) -> String {
    format!("step-{step}")
}

/// Saves a checkpoint of `step` under `checkpoints` and points `latest` at it. When a file cannot
/// be written (a full disk), the error names the step and the file, the partial folder is
/// removed, and the checkpoints saved before are left as they were.
pub fn save(checkpoints: &Path, engine: &Engine, opt: &AdamW, state: &TrainerState) -> Result<PathBuf> {
    let name = step_dir_name(state.step);
    let tmp = checkpoints.join(format!(".tmp-{name}"));
    let dest = checkpoints.join(&name);
    let saved = write_files(&tmp, engine, opt, state).and_then(|()| {
        if dest.exists() {
            std::fs::remove_dir_all(&dest).map_err(|e| Error::io(&dest, e))?;
        }
        std::fs::rename(&tmp, &dest).map_err(|e| Error::io(&dest, e))
    });
    if let Err(e) = saved {
        let _ = std::fs::remove_dir_all(&tmp);
        let kept = match latest_step(checkpoints) {
            Ok(Some(step)) => {
                format!("the checkpoint of step {step} is kept; make room, then `rltrain --resume` continues from it")
            }
            _ => "no earlier checkpoint was saved".to_string(),
        };
        let why = match e {
            Error::Checkpoint(message) => message,
            other => other.to_string(),
        };
        return Err(Error::Checkpoint(format!("step {}: not saved: {why}; {kept}", state.step)));
    }
    write_atomic(&checkpoints.join("latest"), name.as_bytes())?;
    Ok(dest)
}

/// Writes a checkpoint's files into the new folder `tmp`, every error naming its file.
fn write_files(tmp: &Path, engine: &Engine, opt: &AdamW, state: &TrainerState) -> Result<()> {
    if tmp.exists() {
        std::fs::remove_dir_all(tmp).map_err(|e| Error::io(tmp, e))?;
    }
    std::fs::create_dir_all(tmp).map_err(|e| Error::io(tmp, e))?;
    engine.save_pretrained(tmp).map_err(|e| match e {
        // The engine's one tensor write is the weights file.
        rlengine::Error::Candle(e) => in_file(&tmp.join("model.safetensors"))(e),
        other => other.into(),
    })?;
    let path = tmp.join("optimizer.safetensors");
    candle_core::safetensors::save(&opt.state_tensors()?, &path).map_err(in_file(&path))?;
    let json = serde_json::to_string_pretty(state).map_err(|e| Error::Checkpoint(e.to_string()))?;
    let path = tmp.join("trainer_state.json");
    std::fs::write(&path, json).map_err(|e| Error::io(&path, e))?;
    // Files written with the process umask (trainer_state.json) set the mode for all of them.
    let mode = std::fs::metadata(&path).map_err(|e| Error::io(&path, e))?.permissions();
    for entry in std::fs::read_dir(tmp).map_err(|e| Error::io(tmp, e))? {
        let file = entry.map_err(|e| Error::io(tmp, e))?.path();
        std::fs::set_permissions(&file, mode.clone()).map_err(|e| Error::io(&file, e))?;
    }
    Ok(())
}

/// The step of every `step-N` folder under `checkpoints`, ascending.
pub fn steps(checkpoints: &Path) -> Result<Vec<u64>> {
    let mut out = Vec::new();
    if !checkpoints.is_dir() {
        return Ok(out);
    }
    for entry in std::fs::read_dir(checkpoints).map_err(|e| Error::io(checkpoints, e))? {
        let name = entry.map_err(|e| Error::io(checkpoints, e))?.file_name();
        if let Some(n) = name.to_str().and_then(|n| n.strip_prefix("step-")).and_then(|n| n.parse().ok()) {
            out.push(n);
        }
    }
    out.sort_unstable();
    Ok(out)
}

/// Deletes all but the newest `keep` checkpoints (0 = keep all); the one `latest` names is always
/// kept. Returns the folders removed.
pub fn prune(checkpoints: &Path, keep: usize) -> Result<Vec<PathBuf>> {
    if keep == 0 {
        return Ok(Vec::new());
    }
    let latest = latest(checkpoints)?;
    let all = steps(checkpoints)?;
    let mut removed = Vec::new();
    for step in &all[..all.len().saturating_sub(keep)] {
        let dir = checkpoints.join(step_dir_name(*step));
        if Some(&dir) == latest.as_ref() {
            continue;
        }
        std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        removed.push(dir);
    }
    Ok(removed)
}

/// The step a resume starts from: that of the checkpoint `latest` names, else (the pointer is
/// damaged, or names a folder that is gone) that of the newest `step-N` folder whose trainer
/// state reads; `None` when there is none.
pub fn latest_step(checkpoints: &Path) -> Result<Option<u64>> {
    let named = latest(checkpoints).ok().flatten();
    let newest_first = steps(checkpoints)?.into_iter().rev().map(|s| checkpoints.join(step_dir_name(s)));
    Ok(named.into_iter().chain(newest_first).find_map(|dir| {
        let text = std::fs::read_to_string(dir.join("trainer_state.json")).ok()?;
        serde_json::from_str::<Value>(&text).ok()?.get("step")?.as_u64()
    }))
}

/// The newest complete checkpoint folder, if any.
pub fn latest(checkpoints: &Path) -> Result<Option<PathBuf>> {
    let pointer = checkpoints.join("latest");
    if !pointer.exists() {
        return Ok(None);
    }
    let name = std::fs::read_to_string(&pointer).map_err(|e| Error::io(&pointer, e))?;
    let dir = checkpoints.join(name.trim());
    if !dir.join("trainer_state.json").is_file() {
        return Err(Error::Checkpoint(format!("`latest` names `{}`, which is incomplete or missing", dir.display())));
    }
    Ok(Some(dir))
}

/// Loads weights (into the engine's existing parameters), optimizer moments and trainer state.
/// Every error names the file it comes from.
pub fn restore(dir: &Path, engine: &Engine, opt: &mut AdamW) -> Result<TrainerState> {
    let path = dir.join("trainer_state.json");
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    let state: TrainerState =
        serde_json::from_str(&text).map_err(|e| Error::Checkpoint(format!("`{}`: {e}", path.display())))?;
    let model = engine.model();
    let device = model.device();
    let path = dir.join("model.safetensors");
    let weights: HashMap<String, Tensor> = candle_core::safetensors::load(&path, &device).map_err(in_file(&path))?;
    for (name, var) in model.vars() {
        let t = weights.get(name).ok_or_else(|| Error::Checkpoint(format!("`{}` lacks `{name}`", path.display())))?;
        if t.dims() != var.dims() {
            return Err(Error::Checkpoint(format!(
                "`{}`: `{name}` has shape {:?}, the model {:?}",
                path.display(),
                t.dims(),
                var.dims()
            )));
        }
        var.set(&t.to_dtype(var.dtype()).map_err(in_file(&path))?).map_err(in_file(&path))?;
    }
    let path = dir.join("optimizer.safetensors");
    let moments = candle_core::safetensors::load(&path, &device).map_err(in_file(&path))?;
    opt.load_state(&moments, state.optimizer_steps)
        .map_err(|e| Error::Checkpoint(format!("`{}`: {e}", path.display())))?;
    Ok(state)
}

/// A candle error while reading `path`, naming it.
fn in_file(path: &Path) -> impl Fn(candle_core::Error) -> Error + '_ {
    move |e| Error::Checkpoint(format!("`{}`: {e}", path.display()))
}

/// Restores the newest checkpoint that reads back whole: the one `latest` names, else (it is
/// damaged, or `latest` is damaged, missing or names a missing folder) the newest `step-N` folder
/// that reads, after a `warn`ing that names what is damaged and the checkpoint used instead. `Ok(None)`
/// when there is no checkpoint at all; an error naming every damaged checkpoint when none reads.
pub fn restore_newest(
    checkpoints: &Path,
    engine: &Engine,
    opt: &mut AdamW,
    warn: &mut dyn FnMut(&str),
) -> Result<Option<(PathBuf, TrainerState)>> {
    let named = latest(checkpoints);
    let mut candidates: Vec<PathBuf> =
        steps(checkpoints)?.into_iter().rev().map(|s| checkpoints.join(step_dir_name(s))).collect();
    if let Ok(Some(dir)) = &named {
        // `latest` first, then the older ones (a newer folder than `latest` was never completed).
        let newest = candidates.iter().position(|c| c == dir).unwrap_or(0);
        candidates.drain(..newest);
    }
    let mut failed: Vec<String> = Vec::new();
    if let Err(e) = &named {
        failed.push(e.to_string());
    }
    for dir in candidates {
        match restore(&dir, engine, opt) {
            Ok(state) => {
                if !failed.is_empty() {
                    warn(&format!(
                        "{}; resuming from the newest complete checkpoint, `{}` (step {}), instead",
                        failed.join("; "),
                        dir.display(),
                        state.step
                    ));
                }
                return Ok(Some((dir, state)));
            }
            Err(e) => failed.push(format!("checkpoint `{}` cannot be restored: {e}", dir.display())),
        }
    }
    match failed.is_empty() {
        true => Ok(None),
        false => Err(Error::Checkpoint(format!(
            "no checkpoint of `{}` can be restored: {}; start a new run with another --out",
            checkpoints.display(),
            failed.join("; ")
        ))),
    }
}
