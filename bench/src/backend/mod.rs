//! Generation backends: anything that turns a prompt into K sampled completions.
//!
//! - [`OpenAiBackend`]: an OpenAI-compatible server (`/v1/completions` or `/v1/chat/completions`,
//!   as vLLM and SGLang serve them), over a keep-alive HTTP(S) client ([`client`]); several
//!   data-parallel servers as one backend ([`Fleet`]).
//! - [`embedded`]: the in-process engine (`--model PATH`, default the embedded SmolLM2).
//!
//! Retries live outside the backends ([`retry`]), so every backend gets the same policy.

#[cfg(feature = "http")]
pub mod client;
#[cfg(feature = "embedded")]
pub mod embedded;
#[cfg(feature = "http")]
pub mod fleet;
#[cfg(feature = "http")]
pub mod openai;
pub mod retry;
pub mod stats;
#[cfg(feature = "http")]
pub mod tls;

#[cfg(feature = "http")]
pub use fleet::{Fleet, FleetOptions};
#[cfg(feature = "http")]
pub use openai::OpenAiBackend;
pub use retry::{with_retries, with_retries_until, RetryPolicy};
pub use stats::EndpointStats;

use crate::prompt::RenderedPrompt;
use serde::{Deserialize, Serialize};

/// Rows (prompts x samples) the embedded engine decodes together unless told otherwise (the
/// engine's own `ModelSpec` default).
pub const DEFAULT_ENGINE_BATCH: usize = 16;

/// Which endpoint of the server to call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// `/v1/chat/completions`: the server applies the model's chat template to system + user.
    Chat,
    /// `/v1/completions`: the template's `completion` text is sent as is.
    Completions,
}

/// Sampling settings of one request. Field names follow the embedded engine's `SamplingParams`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SamplingParams {
    /// Completions to return for the prompt.
    pub n: usize,
    /// Kept as f64 from the command line to the request body, so `0.6` is sent as `0.6`.
    pub temperature: f64,
    /// Nucleus sampling mass.
    pub top_p: f64,
    /// Top-k cut-off; `None` leaves the server's default (vLLM/SGLang extension).
    pub top_k: Option<usize>,
    /// `max_tokens` of the OpenAI API.
    pub max_new_tokens: usize,
    /// Stop strings.
    pub stop: Vec<String>,
    /// Sampling seed of this request; `None` sends none.
    pub seed: Option<u64>,
}

/// One generated completion.
#[derive(Clone, Debug, PartialEq)]
pub struct Completion {
    /// The generated text.
    pub text: String,
    /// `stop`, `length`, ... as the server reports it.
    pub finish_reason: Option<String>,
    /// Completion tokens, when known for this completion alone.
    pub tokens: Option<u64>,
}

/// Why a generation request failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BackendError {
    /// The server answered with an error status.
    #[error("HTTP {status}: {body}")]
    Http {
        /// The status code.
        status: u16,
        /// The answer's body (the server's message).
        body: String,
        /// The answer's `Retry-After` (429 and 503), capped.
        retry_after: Option<std::time::Duration>,
    },
    /// The request did not complete within its timeout.
    #[error("timed out after {0:.1}s")]
    Timeout(f64),
    /// Connecting, sending or receiving failed (includes a dropped connection).
    #[error("connection error: {0}")]
    Io(String),
    /// The server's answer was not what the protocol says.
    #[error("unexpected response: {0}")]
    Protocol(String),
    /// The request can never succeed (bad URL, backend not available).
    #[error("{0}")]
    Fatal(String),
}

impl BackendError {
    /// Whether trying again may help: timeouts, connection errors, malformed answers, HTTP 408,
    /// 409, 429 and 5xx. Other 4xx (a prompt too long, an unknown model) are final.
    pub fn is_retryable(&self) -> bool {
        match self {
            BackendError::Http { status, .. } => matches!(status, 408 | 409 | 429) || *status >= 500,
            BackendError::Timeout(_) | BackendError::Io(_) | BackendError::Protocol(_) => true,
            BackendError::Fatal(_) => false,
        }
    }

    /// How long the server asked to wait before trying again (`Retry-After`).
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        match self {
            BackendError::Http { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// A generator of sampled completions. Implementations must be callable from several threads at
/// once (the runner keeps `concurrency` requests in flight).
pub trait Backend: Send + Sync {
    /// Short kind name recorded in the run manifest (`openai-chat`, `openai-completions`, `embedded`).
    fn kind(&self) -> String;
    /// The model name or path recorded in the run manifest.
    fn model(&self) -> String;
    /// True when the backend mixes each prompt's content into its samples' seeds (the embedded
    /// engine does), so that requests for different problems may share a seed. The runner then
    /// derives request seeds from the base seed and the sample index only, which lets a batching
    /// backend merge requests of different problems into one call. Servers get distinct seeds.
    fn seeds_mix_prompt(&self) -> bool {
        false
    }
    /// Generate up to `params.n` completions for one prompt, in order (a server may return fewer;
    /// the runner asks for the rest).
    fn generate(&self, prompt: &RenderedPrompt, params: &SamplingParams) -> Result<Vec<Completion>, BackendError>;
}
