//! Error type of the trainer library.

/// Everything that can go wrong in `rltrain`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A tensor operation failed (shape, dtype, device).
    #[error("tensor error: {0}")]
    Candle(#[from] candle_core::Error),
    /// `Objective::from_name` got a name that is not registered.
    #[error("unknown objective `{name}`; valid names: {valid}")]
    UnknownObjective {
        /// The name asked for.
        name: String,
        /// Every registered name, comma-separated.
        valid: String,
    },
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
    /// Reading a metrics file or writing a plot failed (the message names the file).
    #[error("plot: {0}")]
    Plot(String),
}

/// Result alias of the crate.
pub type Result<T> = std::result::Result<T, Error>;
