//! LaTeX / plain-text answer parser (STUB: replaced by the pest grammar module).

use crate::ast::Expr;
use crate::limits::{LimitKind, Limits};

/// Why an answer string could not be parsed.
#[derive(Clone, Debug, PartialEq)]
pub enum ParseError {
    /// The grammar rejected the input; `position` is a byte offset into the input.
    Syntax { message: String, position: usize },
    /// A cost cap was hit before or during parsing.
    Limit(LimitKind),
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParseError::Syntax { message, position } => write!(f, "at byte {position}: {message}"),
            ParseError::Limit(k) => write!(f, "limit hit: {k}"),
        }
    }
}

impl std::error::Error for ParseError {}

/// Parse one answer string. STUB: everything is text.
pub fn parse(input: &str, limits: &Limits) -> Result<Expr, ParseError> {
    if input.len() > limits.max_answer_bytes {
        return Err(ParseError::Limit(LimitKind::AnswerTooLong));
    }
    Ok(Expr::Text(input.trim().to_lowercase()))
}
