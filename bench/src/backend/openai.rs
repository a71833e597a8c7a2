//! An OpenAI-compatible server as a [`Backend`] (vLLM, SGLang, TGI, llama.cpp server, ...).

use super::client::{ClientOptions, Endpoint, HttpClient};
use super::{Api, Backend, BackendError, Completion, SamplingParams};
use crate::prompt::RenderedPrompt;
use serde_json::{json, Value};
use std::time::Duration;

/// A client for one served model on one server.
#[derive(Clone, Debug)]
pub struct OpenAiBackend {
    client: HttpClient,
    model: String,
    api: Api,
}

/// What `GET /v1/models` said about the served model.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelCheck {
    /// The model is listed.
    Listed,
    /// The server does not serve `/v1/models` (HTTP 404): nothing to check against.
    Unlisted,
}

impl OpenAiBackend {
    /// A backend for `model` served at `url` (`http(s)://host:port`, with or without `/v1`), with
    /// a per-request timeout, proxies from the environment and Mozilla's root certificates.
    pub fn new(
        url: &str,
        model: &str,
        api: Api,
        timeout: Duration,
        api_key: Option<String>,
    ) -> Result<Self, BackendError> {
        let mut opts = ClientOptions::new(timeout);
        opts.api_key = api_key;
        Self::with_options(url, model, api, &opts)
    }

    /// A backend for `model` served at `url`, reached with `opts`.
    pub fn with_options(url: &str, model: &str, api: Api, opts: &ClientOptions) -> Result<Self, BackendError> {
        if model.trim().is_empty() {
            return Err(BackendError::Fatal("--served-model must name the model the server serves".into()));
        }
        let client = HttpClient::new(Endpoint::parse(url)?, opts)?;
        Ok(OpenAiBackend { client, model: model.to_string(), api })
    }

    /// The endpoint URL (without `/v1`).
    pub fn url(&self) -> String {
        self.client.endpoint().url()
    }

    /// The model ids of `GET /v1/models`.
    pub fn list_models(&self, timeout: Duration) -> Result<Vec<String>, BackendError> {
        let resp = self.client.get("/v1/models", timeout)?;
        if !(200..300).contains(&resp.status) {
            return Err(http_error(resp.status, &resp.body, resp.retry_after));
        }
        let v: Value = serde_json::from_slice(&resp.body)
            .map_err(|e| BackendError::Protocol(format!("/v1/models: response is not JSON: {e}")))?;
        let data = v
            .get("data")
            .and_then(Value::as_array)
            .ok_or_else(|| BackendError::Protocol("/v1/models: response has no `data` array".into()))?;
        Ok(data.iter().filter_map(|m| m.get("id").and_then(Value::as_str)).map(str::to_string).collect())
    }

    /// The start-up check: the server answers `GET /v1/models` and lists the served model. An
    /// error names the endpoint.
    pub fn check(&self, timeout: Duration) -> Result<ModelCheck, BackendError> {
        let url = self.url();
        match self.list_models(timeout) {
            Ok(models) if models.contains(&self.model) => Ok(ModelCheck::Listed),
            Ok(models) => Err(BackendError::Fatal(format!(
                "{url} does not serve `{}` (--served-model); it serves: {}",
                self.model,
                if models.is_empty() { "nothing".to_string() } else { models.join(", ") }
            ))),
            Err(BackendError::Http { status: 404, .. }) => Ok(ModelCheck::Unlisted),
            Err(BackendError::Http { status, body, .. }) => {
                let hint = if matches!(status, 401 | 403) { " (check --api-key / OPENAI_API_KEY)" } else { "" };
                Err(BackendError::Fatal(format!("{url}: GET /v1/models answered HTTP {status}{hint}: {body}")))
            }
            Err(BackendError::Timeout(s)) => {
                Err(BackendError::Fatal(format!("{url}: GET /v1/models timed out after {s:.1}s")))
            }
            Err(BackendError::Io(m) | BackendError::Protocol(m) | BackendError::Fatal(m)) => {
                let m = if m.starts_with(&url) { m } else { format!("{url}: {m}") };
                Err(BackendError::Fatal(format!("cannot reach the server: {m}")))
            }
        }
    }

    /// Whether the server is up: it answers `GET /v1/models` with any status below 500.
    pub fn alive(&self, timeout: Duration) -> Result<(), BackendError> {
        let resp = self.client.get("/v1/models", timeout)?;
        if resp.status >= 500 {
            return Err(http_error(resp.status, &resp.body, resp.retry_after));
        }
        Ok(())
    }

    /// [`Backend::generate`], also returning the response's total completion tokens when the
    /// server reports them.
    pub fn generate_counted(
        &self,
        prompt: &RenderedPrompt,
        params: &SamplingParams,
    ) -> Result<(Vec<Completion>, Option<u64>), BackendError> {
        let path = match self.api {
            Api::Chat => "/v1/chat/completions",
            Api::Completions => "/v1/completions",
        };
        let body = self.request_body(prompt, params).to_string();
        let resp = self.client.post_json(path, body.as_bytes())?;
        if !(200..300).contains(&resp.status) {
            return Err(http_error(resp.status, &resp.body, resp.retry_after));
        }
        let completions = parse_choices(&resp.body, self.api, params.n)?;
        let tokens = serde_json::from_slice::<Value>(&resp.body)
            .ok()
            .and_then(|v| v.get("usage")?.get("completion_tokens")?.as_u64());
        Ok((completions, tokens))
    }

    /// The JSON request body for one prompt.
    pub fn request_body(&self, prompt: &RenderedPrompt, p: &SamplingParams) -> Value {
        let mut body = json!({
            "model": self.model,
            "n": p.n,
            "temperature": p.temperature,
            "top_p": p.top_p,
            "max_tokens": p.max_new_tokens,
        });
        match self.api {
            Api::Completions => body["prompt"] = json!(prompt.completion),
            Api::Chat => {
                let mut messages = Vec::new();
                if let Some(s) = &prompt.system {
                    messages.push(json!({"role": "system", "content": s}));
                }
                messages.push(json!({"role": "user", "content": prompt.user}));
                body["messages"] = json!(messages);
            }
        }
        if let Some(k) = p.top_k {
            body["top_k"] = json!(k);
        }
        if let Some(seed) = p.seed {
            body["seed"] = json!(seed);
        }
        if !p.stop.is_empty() {
            body["stop"] = json!(p.stop);
        }
        body
    }
}

impl Backend for OpenAiBackend {
    fn kind(&self) -> String {
        match self.api {
            Api::Chat => "openai-chat".into(),
            Api::Completions => "openai-completions".into(),
        }
    }

    fn model(&self) -> String {
        self.model.clone()
    }

    fn generate(&self, prompt: &RenderedPrompt, params: &SamplingParams) -> Result<Vec<Completion>, BackendError> {
        self.generate_counted(prompt, params).map(|(c, _)| c)
    }
}

/// An error status as a [`BackendError`], with the start of the body.
fn http_error(status: u16, body: &[u8], retry_after: Option<Duration>) -> BackendError {
    let text = String::from_utf8_lossy(body);
    let snippet: String = text.chars().take(500).collect();
    BackendError::Http { status, body: snippet, retry_after }
}

/// Read up to `n` completions from a response body, ordered by their `index`. Fewer than `n` is
/// not an error (the runner asks for the rest); none is.
pub fn parse_choices(body: &[u8], api: Api, n: usize) -> Result<Vec<Completion>, BackendError> {
    let v: Value =
        serde_json::from_slice(body).map_err(|e| BackendError::Protocol(format!("response is not JSON: {e}")))?;
    let choices = v
        .get("choices")
        .and_then(Value::as_array)
        .ok_or_else(|| BackendError::Protocol("response has no `choices` array".into()))?;
    let mut out: Vec<(u64, Completion)> = Vec::with_capacity(choices.len());
    for (pos, c) in choices.iter().enumerate() {
        let text = match api {
            Api::Completions => c.get("text").and_then(Value::as_str),
            Api::Chat => {
                c.get("message").and_then(|m| m.get("content")).and_then(|t| t.as_str().or(t.is_null().then_some("")))
            }
        }
        .ok_or_else(|| BackendError::Protocol(format!("choice {pos} has no text")))?;
        let index = c.get("index").and_then(Value::as_u64).unwrap_or(pos as u64);
        let finish_reason = c.get("finish_reason").and_then(Value::as_str).map(str::to_string);
        out.push((index, Completion { text: text.to_string(), finish_reason, tokens: None }));
    }
    if out.is_empty() && n > 0 {
        return Err(BackendError::Protocol(format!("asked for {n} completions, got none")));
    }
    out.sort_by_key(|(i, _)| *i);
    out.truncate(n);
    // Usage counts cover all choices together; they are per completion only for one choice.
    if out.len() == 1 {
        let tokens = v.get("usage").and_then(|u| u.get("completion_tokens")).and_then(Value::as_u64);
        if let Some((_, c)) = out.first_mut() {
            c.tokens = tokens;
        }
    }
    Ok(out.into_iter().map(|(_, c)| c).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(n: usize) -> SamplingParams {
        SamplingParams {
            n,
            temperature: 0.6,
            top_p: 0.95,
            top_k: None,
            max_new_tokens: 100,
            stop: vec![],
            seed: Some(7),
        }
    }

    #[test]
    fn request_bodies() {
        let prompt = RenderedPrompt { system: Some("S".into()), user: "U".into(), completion: "C".into() };
        let b = OpenAiBackend::new("http://127.0.0.1:1", "m", Api::Chat, Duration::from_secs(1), None);
        let Ok(b) = b else { panic!("backend") };
        let body = b.request_body(&prompt, &params(2));
        assert_eq!(body["messages"][0]["role"], "system");
        assert_eq!(body["messages"][1]["content"], "U");
        assert_eq!(body["n"], 2);
        assert_eq!(body["seed"], 7);
        assert_eq!(body["max_tokens"], 100);
        assert!(body.get("stop").is_none() && body.get("top_k").is_none() && body.get("prompt").is_none());
        let b = OpenAiBackend::new("http://127.0.0.1:1", "m", Api::Completions, Duration::from_secs(1), None);
        let Ok(b) = b else { panic!("backend") };
        let mut p = params(1);
        p.stop = vec!["</answer>".into()];
        p.top_k = Some(20);
        let body = b.request_body(&prompt, &p);
        assert_eq!(body["prompt"], "C");
        assert_eq!(body["stop"][0], "</answer>");
        assert_eq!(body["top_k"], 20);
    }

    #[test]
    fn choices_are_ordered_by_index() {
        let body = br#"{"choices":[{"index":1,"text":"b","finish_reason":"length"},{"index":0,"text":"a","finish_reason":"stop"}],"usage":{"completion_tokens":9}}"#;
        let c = parse_choices(body, Api::Completions, 2).map_err(|e| e.to_string());
        let Ok(c) = c else { panic!("{c:?}") };
        assert_eq!(c[0].text, "a");
        assert_eq!(c[1].finish_reason.as_deref(), Some("length"));
        assert_eq!(c[0].tokens, None);
        let chat = br#"{"choices":[{"index":0,"message":{"role":"assistant","content":"x"},"finish_reason":"stop"}],"usage":{"completion_tokens":3}}"#;
        let c = parse_choices(chat, Api::Chat, 1).map_err(|e| e.to_string());
        assert_eq!(c.map(|c| (c[0].text.clone(), c[0].tokens)), Ok(("x".to_string(), Some(3))));
    }

    #[test]
    fn empty_or_malformed_answers_are_protocol_errors_short_ones_are_kept() {
        assert!(matches!(parse_choices(b"{}", Api::Chat, 1), Err(BackendError::Protocol(_))));
        assert!(matches!(parse_choices(b"not json", Api::Chat, 1), Err(BackendError::Protocol(_))));
        let none = br#"{"choices":[]}"#;
        assert!(matches!(parse_choices(none, Api::Completions, 2), Err(BackendError::Protocol(_))));
        // Fewer choices than asked for are kept (the runner requests the rest).
        let one = br#"{"choices":[{"index":0,"text":"a"}],"usage":{"completion_tokens":4}}"#;
        let c = parse_choices(one, Api::Completions, 2).map_err(|e| e.to_string());
        assert_eq!(
            c.map(|c| c.iter().map(|c| (c.text.clone(), c.tokens)).collect::<Vec<_>>()),
            Ok(vec![("a".to_string(), Some(4))])
        );
    }
}
