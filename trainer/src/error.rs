//! Error type of the trainer library.

use std::path::PathBuf;

/// Everything that can go wrong in `rltrain`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The objectives library's errors, shown as they are: a tensor operation failed, an unknown
    /// objective (with the closest name), a hyper-parameter out of range (`invalid config: ...`,
    /// also the runtime's own settings), inputs that disagree.
    #[error(transparent)]
    Objectives(#[from] rlobjectives::Error),
    /// The inference engine failed (loading, sampling, saving a model).
    #[error("engine: {0}")]
    Engine(#[from] rlengine::Error),
    /// A file or folder could not be read or written.
    #[error("`{}`: {source}", path.display())]
    Io {
        /// The file or folder involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Training data could not be used (no usable row, unknown suite or task).
    #[error("data: {0}")]
    Data(String),
    /// A checkpoint or run directory is missing something or holds something unexpected.
    #[error("checkpoint: {0}")]
    Checkpoint(String),
    /// A run cannot start or continue as asked, although every setting is valid: its directory
    /// already holds another run, `--steps` is below the checkpoint's step, the device is not
    /// there. The message says what to do.
    #[error("{0}")]
    Run(String),
    /// Too many consecutive updates had a non-finite loss or gradient.
    #[error("stopping after {count} consecutive non-finite steps (--max-bad-steps {count}); last: {last}")]
    TooManyBadSteps {
        /// Consecutive bad steps.
        count: usize,
        /// The last cause reported.
        last: String,
    },
    /// Reading a metrics file or writing a plot failed (the message names the file).
    #[error("plot: {0}")]
    Plot(String),
}

impl From<candle_core::Error> for Error {
    fn from(e: candle_core::Error) -> Self {
        Error::Objectives(e.into())
    }
}

impl Error {
    /// A setting out of its valid range (`invalid config: ...`).
    pub fn invalid_config(message: impl Into<String>) -> Self {
        Error::Objectives(rlobjectives::Error::InvalidConfig(message.into()))
    }

    /// Inputs that disagree, or one that is missing (`invalid input: ...`).
    pub fn invalid_input(message: impl Into<String>) -> Self {
        Error::Objectives(rlobjectives::Error::InvalidInput(message.into()))
    }

    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
}

/// Result alias of the crate.
pub type Result<T> = std::result::Result<T, Error>;
