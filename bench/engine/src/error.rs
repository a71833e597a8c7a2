//! The engine's error type.

use std::path::PathBuf;

/// Everything that can go wrong while fetching, loading or running a model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The default model could not be fetched into the cache.
    #[error("cannot fetch the default model: {message}\nhint: {hint}")]
    Fetch {
        /// What failed.
        message: String,
        /// What the user can do about it.
        hint: String,
    },
    /// A file could not be read or written.
    #[error("`{}`: {source}", path.display())]
    Io {
        /// The file or folder involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A model file (GGUF, config.json, safetensors) is missing something or holds something unsupported.
    #[error("model format: {0}")]
    Format(String),
    /// The tokenizer could not be built or failed on an input.
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    /// A request (sampling parameters, token ids, batch) is invalid.
    #[error("invalid request: {0}")]
    Request(String),
    /// The model's chat template does not compile, or failed (or refused the messages) when rendered.
    #[error("chat template: {0}")]
    ChatTemplate(String),
    /// A tensor operation failed.
    #[error(transparent)]
    Candle(#[from] candle_core::Error),
}

/// The engine's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
}
