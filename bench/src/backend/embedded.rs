//! The embedded inference engine as a [`Backend`] (`rlbench run --model PATH`, default SmolLM2).
//!
//! Each request renders the prompt (the template's system and user messages through the model's
//! chat template for `--api chat`, the template's completion text for `--api completions`), maps
//! [`SamplingParams`] field by field onto the engine's, and maps each engine completion to a
//! [`Completion`] (`tokens` = generated token ids, `finish_reason` `length` when truncated, `stop`
//! otherwise).
//!
//! Seeds: the engine draws sample `i` of a request from `(seed, prompt tokens, i)`, and the runner
//! gives every request its own seed derived from (suite, problem, first sample), so a resumed run
//! draws the same samples as an uninterrupted one. A request without a seed (`--no-seed`) gets a
//! fresh one from the clock and a counter.
//!
//! [`Engine::generate`] takes `&self` and the engine is `Send + Sync`, so requests from the
//! runner's threads share one engine without a lock.

use super::{Api, Backend, BackendError, Completion, SamplingParams};
use crate::engine::{self, ChatMessage, Engine, FinishReason, ModelSource, ModelSpec, Prompt};
use crate::prompt::RenderedPrompt;
use std::sync::atomic::{AtomicU64, Ordering};

/// The embedded engine backend.
#[derive(Debug)]
pub struct EmbeddedBackend {
    engine: Engine,
    name: String,
    api: Api,
    /// Counter mixed into the seeds of unseeded requests.
    unseeded: AtomicU64,
}

impl EmbeddedBackend {
    /// Loads the model of `spec` (fetching the default model on first use) for requests rendered
    /// as `api` says. Loading errors are [`BackendError::Fatal`] with the engine's message and hint.
    pub fn load(spec: &ModelSpec, api: Api) -> Result<EmbeddedBackend, BackendError> {
        let engine = Engine::load(spec).map_err(|e| BackendError::Fatal(format!("cannot load the model: {e}")))?;
        Ok(EmbeddedBackend::from_engine(engine, model_name(&spec.source), api))
    }

    /// A backend over an already loaded engine, recorded in run manifests as `name`.
    pub fn from_engine(engine: Engine, name: impl Into<String>, api: Api) -> EmbeddedBackend {
        EmbeddedBackend { engine, name: name.into(), api, unseeded: AtomicU64::new(0) }
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The text the engine continues for a prompt.
    pub fn render(&self, prompt: &RenderedPrompt) -> Result<String, BackendError> {
        match self.api {
            Api::Completions => Ok(prompt.completion.clone()),
            Api::Chat => {
                let mut messages = Vec::with_capacity(2);
                if let Some(system) = &prompt.system {
                    messages.push(ChatMessage::system(system.clone()));
                }
                messages.push(ChatMessage::user(prompt.user.clone()));
                self.engine.apply_chat_template(&messages, true).map_err(|e| {
                    BackendError::Fatal(format!("{e} (the model's chat template; `--api completions` sends plain text)"))
                })
            }
        }
    }

    /// The engine's sampling parameters for a request.
    pub fn engine_params(&self, params: &SamplingParams) -> engine::SamplingParams {
        engine::SamplingParams {
            n: params.n,
            temperature: f64::from(params.temperature),
            top_p: f64::from(params.top_p),
            top_k: params.top_k.unwrap_or(0),
            max_new_tokens: params.max_new_tokens,
            stop: params.stop.clone(),
            seed: params.seed.unwrap_or_else(|| self.fresh_seed()),
            ignore_eos: false,
        }
    }

    /// A seed for a request that brought none: the clock mixed with a per-backend counter.
    fn fresh_seed(&self) -> u64 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        let count = self.unseeded.fetch_add(1, Ordering::Relaxed);
        super::retry::splitmix64(nanos ^ super::retry::splitmix64(count))
    }
}

/// The name recorded for a model source: the default model's file stem, else the path.
pub fn model_name(source: &ModelSource) -> String {
    match source {
        ModelSource::Default => engine::DEFAULT_MODEL_FILE.trim_end_matches(".gguf").to_string(),
        ModelSource::Gguf(path) | ModelSource::HfDir(path) => path.display().to_string(),
    }
}

/// The backend's view of an engine completion.
pub fn to_completion(c: engine::Completion) -> Completion {
    let finish_reason = match c.finish_reason {
        FinishReason::Length => "length",
        FinishReason::Eos | FinishReason::Stop => "stop",
    };
    Completion { text: c.text, finish_reason: Some(finish_reason.to_string()), tokens: Some(c.token_ids.len() as u64) }
}

impl Backend for EmbeddedBackend {
    fn kind(&self) -> String {
        match self.api {
            Api::Chat => "embedded-chat".into(),
            Api::Completions => "embedded-completions".into(),
        }
    }

    fn model(&self) -> String {
        self.name.clone()
    }

    fn generate(&self, prompt: &RenderedPrompt, params: &SamplingParams) -> Result<Vec<Completion>, BackendError> {
        let text = self.render(prompt)?;
        let params = self.engine_params(params);
        // Engine errors (a bad request, a prompt outside the model, a tensor error) are
        // deterministic: retrying cannot help.
        let mut out = self.engine.generate(&[Prompt::Text(text)], &params).map_err(|e| BackendError::Fatal(e.to_string()))?;
        let completions = out.pop().filter(|_| out.is_empty()).ok_or_else(|| {
            BackendError::Protocol("the engine did not return one list of completions for the prompt".into())
        })?;
        if completions.len() != params.n {
            return Err(BackendError::Protocol(format!("asked for {} completions, got {}", params.n, completions.len())));
        }
        Ok(completions.into_iter().map(to_completion).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Arch, DType, Device, LoadedModel, Model, ModelConfig, Tokenizer};

    #[test]
    fn finish_reasons_and_token_counts() {
        let cases = [(FinishReason::Eos, "stop"), (FinishReason::Stop, "stop"), (FinishReason::Length, "length")];
        for (reason, expected) in cases {
            let c = engine::Completion { text: "x = 2".into(), token_ids: vec![5, 6, 7], logprobs: vec![-0.1; 3], finish_reason: reason };
            let got = to_completion(c);
            assert_eq!(got.finish_reason.as_deref(), Some(expected), "{reason:?}");
            assert_eq!(got.tokens, Some(3));
            assert_eq!(got.text, "x = 2");
        }
    }

    #[test]
    fn model_names() {
        assert_eq!(model_name(&ModelSource::Default), "SmolLM2-135M-Instruct.Q4_1");
        assert_eq!(model_name(&ModelSource::Gguf("/m/qwen.gguf".into())), "/m/qwen.gguf");
        assert_eq!(model_name(&ModelSource::HfDir("ckpt/step-100".into())), "ckpt/step-100");
    }

    #[test]
    fn a_missing_model_file_is_a_fatal_error_not_a_panic() {
        let spec = ModelSpec::new(ModelSource::Gguf("/nonexistent/model.gguf".into()));
        let err = EmbeddedBackend::load(&spec, Api::Chat).map(|_| ()).unwrap_err();
        assert!(matches!(err, BackendError::Fatal(_)), "{err:?}");
        assert!(!err.is_retryable());
    }

    fn tiny_backend(api: Api) -> Option<EmbeddedBackend> {
        // Vocabulary 259: `Tokenizer::byte_level`'s three special tokens and 256 bytes.
        let model = Model::random(&ModelConfig::tiny(Arch::Llama, 259), DType::F32, &Device::Cpu, 7).ok()?;
        let tokenizer = Tokenizer::byte_level().ok()?;
        let loaded = LoadedModel { model, tokenizer, chat_template: engine::ChatTemplate::ChatMl { default_system: None } };
        Some(EmbeddedBackend::from_engine(Engine::from_parts(loaded, 8), "tiny", api))
    }

    #[test]
    fn prompts_render_per_api() {
        let prompt = RenderedPrompt { system: Some("Reason.".into()), user: "1+1?".into(), completion: "Reason.\n\n1+1?".into() };
        let Some(chat) = tiny_backend(Api::Chat) else { panic!("tiny engine") };
        assert_eq!(
            chat.render(&prompt).ok().as_deref(),
            Some("<|im_start|>system\nReason.<|im_end|>\n<|im_start|>user\n1+1?<|im_end|>\n<|im_start|>assistant\n")
        );
        let no_system = RenderedPrompt { system: None, ..prompt.clone() };
        assert_eq!(chat.render(&no_system).ok().as_deref(), Some("<|im_start|>user\n1+1?<|im_end|>\n<|im_start|>assistant\n"));
        assert_eq!(chat.kind(), "embedded-chat");
        let Some(plain) = tiny_backend(Api::Completions) else { panic!("tiny engine") };
        assert_eq!(plain.render(&prompt).ok().as_deref(), Some("Reason.\n\n1+1?"));
        assert_eq!(plain.kind(), "embedded-completions");
    }

    #[test]
    fn sampling_params_map_field_by_field() {
        let Some(b) = tiny_backend(Api::Chat) else { panic!("tiny engine") };
        let p = SamplingParams {
            n: 3,
            temperature: 0.5,
            top_p: 0.75,
            top_k: Some(20),
            max_new_tokens: 9,
            stop: vec!["</answer>".into()],
            seed: Some(41),
        };
        let e = b.engine_params(&p);
        assert_eq!((e.n, e.temperature, e.top_p, e.top_k, e.max_new_tokens, e.seed), (3, 0.5, 0.75, 20, 9, 41));
        assert_eq!(e.stop, vec!["</answer>".to_string()]);
        assert!(!e.ignore_eos);
        let unset = b.engine_params(&SamplingParams { top_k: None, seed: None, ..p.clone() });
        assert_eq!(unset.top_k, 0);
        // Unseeded requests get distinct seeds.
        assert_ne!(unset.seed, b.engine_params(&SamplingParams { seed: None, ..p }).seed);
    }

    #[test]
    fn generation_is_deterministic_per_seed_and_returns_n_completions() {
        let Some(b) = tiny_backend(Api::Completions) else { panic!("tiny engine") };
        let prompt = RenderedPrompt { system: None, user: "abc".into(), completion: "abc".into() };
        let params = SamplingParams { n: 2, temperature: 1.0, top_p: 1.0, top_k: None, max_new_tokens: 4, stop: vec![], seed: Some(5) };
        let first = b.generate(&prompt, &params).map_err(|e| e.to_string());
        let Ok(first) = first else { panic!("{first:?}") };
        assert_eq!(first.len(), 2);
        assert!(first.iter().all(|c| c.tokens.is_some_and(|t| (1..=4).contains(&t))));
        assert!(first.iter().all(|c| c.finish_reason.as_deref() == Some(if c.tokens == Some(4) { "length" } else { "stop" })));
        assert_eq!(b.generate(&prompt, &params).ok(), Some(first.clone()));
        let bad = SamplingParams { n: 0, ..params };
        assert!(matches!(b.generate(&prompt, &bad), Err(BackendError::Fatal(_))));
    }
}
