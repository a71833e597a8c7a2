//! Error type of the trainer library.

use std::path::PathBuf;

/// Everything that can go wrong in `rltrain`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A tensor operation failed (shape, dtype, device).
    #[error("tensor error: {0}")]
    Candle(#[from] candle_core::Error),
    /// `Objective::from_name` got a name that is not registered (the message names the closest
    /// registered name and lists them all).
    #[error("{0}")]
    UnknownObjective(String),
    /// A config variant was passed to an objective of another family.
    #[error("objective `{objective}` expects a {expected} config, got {got}")]
    ConfigMismatch {
        /// Objective name.
        objective: &'static str,
        /// Config kind it accepts.
        expected: &'static str,
        /// Config kind it got.
        got: &'static str,
    },
    /// A hyper-parameter is out of its valid range.
    #[error("invalid config: {0}")]
    InvalidConfig(String),
    /// Inputs disagree in shape, or a required input is missing.
    #[error("invalid input: {0}")]
    InvalidInput(String),
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

/// The objectives library's errors, kind for kind (the messages are the same).
impl From<rlobjectives::Error> for Error {
    fn from(e: rlobjectives::Error) -> Self {
        use rlobjectives::Error as E;
        match e {
            E::Candle(c) => Error::Candle(c),
            unknown @ E::UnknownObjective { .. } => Error::UnknownObjective(unknown.to_string()),
            E::ConfigMismatch { objective, expected, got } => Error::ConfigMismatch { objective, expected, got },
            E::InvalidConfig(m) => Error::InvalidConfig(m),
            E::InvalidInput(m) => Error::InvalidInput(m),
            E::State(m) => Error::Checkpoint(m),
        }
    }
}

impl Error {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
}

/// Result alias of the crate.
pub type Result<T> = std::result::Result<T, Error>;
