//! The embedded inference engine as a [`Backend`] (`rlbench run --model PATH`).
//!
//! PLACEHOLDER: the engine (`crate::engine`, `Engine::generate(prompts, SamplingParams) ->
//! completions {text, token_ids, logprobs, finish_reason}`) is being written separately. When it
//! lands, [`EmbeddedBackend::load`] builds the engine from `path` and `generate` maps
//! [`SamplingParams`] field by field (same names) and each engine completion to a [`Completion`]
//! (`tokens` = `token_ids.len()`). Until then loading fails with a clear message.

use super::{Backend, BackendError, Completion, SamplingParams};
use crate::prompt::RenderedPrompt;
use std::path::{Path, PathBuf};

/// The embedded engine backend.
#[derive(Debug)]
pub struct EmbeddedBackend {
    path: PathBuf,
}

impl EmbeddedBackend {
    /// Load a model for the embedded engine. Fails until the engine is built in.
    pub fn load(path: &Path) -> Result<EmbeddedBackend, BackendError> {
        Err(BackendError::Fatal(format!(
            "--model {}: the embedded engine is not built yet; use --endpoint URL --served-model NAME",
            path.display()
        )))
    }
}

impl Backend for EmbeddedBackend {
    fn kind(&self) -> String {
        "embedded".into()
    }
    fn model(&self) -> String {
        self.path.display().to_string()
    }
    fn generate(&self, _prompt: &RenderedPrompt, _params: &SamplingParams) -> Result<Vec<Completion>, BackendError> {
        Err(BackendError::Fatal("the embedded engine is not built yet".into()))
    }
}
