//! Error type of the objectives library.

/// Everything that can go wrong in `rlobjectives`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A tensor operation failed (shape, dtype, device).
    #[error("tensor error: {0}")]
    Candle(#[from] candle_core::Error),
    /// `Objective::from_name` got a name that is not registered.
    #[error("unknown objective `{name}`{}; valid names: {valid}", did_you_mean(.suggestion.as_deref()))]
    UnknownObjective {
        /// The name asked for.
        name: String,
        /// The registered name closest to it, when one is close.
        suggestion: Option<&'static str>,
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
    /// Saved optimizer state does not fit the parameters (a missing or misshapen moment).
    #[error("optimizer state: {0}")]
    State(String),
}

fn did_you_mean(suggestion: Option<&str>) -> String {
    suggestion.map_or_else(String::new, |s| format!(" (did you mean `{s}`?)"))
}

/// Result alias of the crate.
pub type Result<T> = std::result::Result<T, Error>;
