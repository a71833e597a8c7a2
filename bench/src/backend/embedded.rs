//! The embedded inference engine as a [`Backend`] (`rlbench run --model PATH`, default SmolLM2).
//!
//! Each request renders the prompt (the template's system and user messages through the model's
//! chat template for `--api chat`, the template's completion text for `--api completions`), maps
//! [`SamplingParams`] field by field onto the engine's, and maps each engine completion to a
//! [`Completion`] (`tokens` = generated token ids, `finish_reason` `length` when truncated, `stop`
//! otherwise).
//!
//! Batching: requests from the runner's threads meet in a queue. Whichever thread finds the
//! engine idle takes the oldest waiting request plus every other waiting request with the same
//! engine parameters (seed included) while their rows (prompts x samples) fit in the engine's
//! batch, runs them as one [`Engine::generate_ids`] call, and hands each thread its own
//! completions. Requests that arrive while the engine is busy go into the next call, so
//! `--concurrency N` fills the batch. A thread that finds the engine idle with a batch that is not
//! full waits a few milliseconds first, so that the requests the runner sends right after a call
//! finishes join the next one.
//!
//! Seeds: the engine draws sample `i` of a prompt from `(seed, prompt tokens, i)` with one seed
//! per call, so only requests with equal seeds are merged, and a merged request gets exactly the
//! completions it would get alone. The prompt's tokens already tell problems apart, so the
//! runner gives requests of different problems the same seed when the backend says so
//! ([`Backend::seeds_mix_prompt`]): the seed then depends on the base seed and the first sample
//! index only, and requests of one sample index merge. A request without a seed (`--no-seed`)
//! gets a fresh one from the clock and a counter (and is never merged).

use super::{Api, Backend, BackendError, Completion, SamplingParams};
use crate::prompt::RenderedPrompt;
use rlengine::{self as engine, ChatMessage, Engine, FinishReason, ModelSource, ModelSpec, Prompt};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

/// The embedded engine backend.
#[derive(Debug)]
pub struct EmbeddedBackend {
    engine: Engine,
    name: String,
    api: Api,
    /// Most rows (prompts x samples) merged into one engine call.
    max_rows: usize,
    /// Counter mixed into the seeds of unseeded requests.
    unseeded: AtomicU64,
    /// Engine calls made so far.
    calls: AtomicU64,
    queue: Mutex<Queue>,
    /// Signalled when a batch finishes.
    finished: Condvar,
}

/// A request waiting for the engine.
#[derive(Debug, Clone)]
struct Pending {
    ticket: u64,
    ids: Vec<u32>,
    params: engine::SamplingParams,
}

/// What one request gets back.
type Outcome = Result<Vec<engine::Completion>, BackendError>;

/// Requests waiting, results not yet collected, and whether a thread is running the engine.
#[derive(Debug, Default)]
struct Queue {
    pending: VecDeque<Pending>,
    done: HashMap<u64, Outcome>,
    busy: bool,
    next_ticket: u64,
}

/// How long a thread that finds the engine idle waits for more requests before a call that is
/// not full.
const LINGER: std::time::Duration = std::time::Duration::from_millis(5);

/// Rows of the oldest waiting request plus those that would merge with it.
fn mergeable_rows(pending: &VecDeque<Pending>) -> usize {
    let Some(first) = pending.front() else { return 0 };
    pending.iter().filter(|p| p.params == first.params).map(|p| p.params.n).sum()
}

/// Takes the next engine call out of `pending`: the oldest request plus, in arrival order, every
/// other request with equal parameters while the rows stay within `max_rows` (a request larger
/// than `max_rows` goes alone; the engine splits it into chunks).
fn take_batch(pending: &mut VecDeque<Pending>, max_rows: usize) -> Vec<Pending> {
    let Some(first) = pending.pop_front() else { return Vec::new() };
    let mut rows = first.params.n;
    let mut batch = vec![first];
    let mut i = 0;
    while i < pending.len() {
        if pending[i].params == batch[0].params && rows + pending[i].params.n <= max_rows {
            rows += pending[i].params.n;
            if let Some(p) = pending.remove(i) {
                batch.push(p);
            }
        } else {
            i += 1;
        }
    }
    batch
}

/// Releases the engine when a batch ends, even by a panic: requests of the batch without a
/// result get an error, and waiting threads wake up.
struct BusyGuard<'a> {
    backend: &'a EmbeddedBackend,
    tickets: Vec<u64>,
}

impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        let mut q = self.backend.lock();
        for t in &self.tickets {
            q.done
                .entry(*t)
                .or_insert_with(|| Err(BackendError::Fatal("the engine stopped while running this request".into())));
        }
        q.busy = false;
        drop(q);
        self.backend.finished.notify_all();
    }
}

impl EmbeddedBackend {
    /// Loads the model of `spec` (fetching the default model on first use) for requests rendered
    /// as `api` says; up to `spec.max_batch` rows are merged per engine call. Loading errors are
    /// [`BackendError::Fatal`] with the engine's message and hint.
    pub fn load(spec: &ModelSpec, api: Api) -> Result<EmbeddedBackend, BackendError> {
        let engine = Engine::load(spec).map_err(|e| BackendError::Fatal(format!("cannot load the model: {e}")))?;
        Ok(EmbeddedBackend::from_engine(engine, model_name(&spec.source), api, spec.max_batch))
    }

    /// A backend over an already loaded engine, recorded in run manifests as `name`, merging up
    /// to `max_rows` rows (prompts x samples) per engine call (at least 1).
    pub fn from_engine(engine: Engine, name: impl Into<String>, api: Api, max_rows: usize) -> EmbeddedBackend {
        EmbeddedBackend {
            engine,
            name: name.into(),
            api,
            max_rows: max_rows.max(1),
            unseeded: AtomicU64::new(0),
            calls: AtomicU64::new(0),
            queue: Mutex::new(Queue::default()),
            finished: Condvar::new(),
        }
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Most rows (prompts x samples) merged into one engine call.
    pub fn max_rows(&self) -> usize {
        self.max_rows
    }

    /// Engine calls made so far (a merged batch counts once).
    pub fn engine_calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    /// The run concurrency that fills the batch: enough requests of `samples_per_request`
    /// completions each to make up [`EmbeddedBackend::max_rows`] rows (at least 1).
    pub fn default_concurrency(&self, samples_per_request: usize) -> usize {
        self.max_rows.div_ceil(samples_per_request.max(1)).max(1)
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
                    BackendError::Fatal(format!(
                        "{e} (the model's chat template; `--api completions` sends plain text)"
                    ))
                })
            }
        }
    }

    /// The engine's sampling parameters for a request.
    pub fn engine_params(&self, params: &SamplingParams) -> engine::SamplingParams {
        engine::SamplingParams {
            n: params.n,
            temperature: params.temperature,
            top_p: params.top_p,
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
        rlbase::splitmix64(nanos ^ rlbase::splitmix64(count))
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Completions for prompt token ids, through the batching queue: blocks until the request's
    /// engine call is done (this thread may run it, and others' requests with it).
    pub fn generate_tokens(&self, ids: Vec<u32>, params: engine::SamplingParams) -> Outcome {
        let mut q = self.lock();
        let ticket = q.next_ticket;
        q.next_ticket += 1;
        q.pending.push_back(Pending { ticket, ids, params });
        let mut lingered = false;
        loop {
            if let Some(outcome) = q.done.remove(&ticket) {
                return outcome;
            }
            if q.busy {
                q = self.finished.wait(q).unwrap_or_else(|e| e.into_inner());
                continue;
            }
            if !lingered && mergeable_rows(&q.pending) < self.max_rows {
                // The threads whose requests just finished are about to send their next ones:
                // give them a moment (nothing next to an engine call) to join this call.
                lingered = true;
                q = self.finished.wait_timeout(q, LINGER).map(|(q, _)| q).unwrap_or_else(|e| e.into_inner().0);
                continue;
            }
            let batch = take_batch(&mut q.pending, self.max_rows);
            q.busy = true;
            drop(q);
            let guard = BusyGuard { backend: self, tickets: batch.iter().map(|p| p.ticket).collect() };
            let outcomes = self.run_batch(&batch);
            q = self.lock();
            q.done.extend(batch.iter().map(|p| p.ticket).zip(outcomes));
            drop(q);
            drop(guard);
            q = self.lock();
        }
    }

    /// One engine call for requests with equal parameters; if it fails, each request runs alone
    /// so that one bad request (an empty prompt, say) fails only itself.
    fn run_batch(&self, batch: &[Pending]) -> Vec<Outcome> {
        let Some(first) = batch.first() else { return Vec::new() };
        if batch.len() > 1 {
            let ids: Vec<Vec<u32>> = batch.iter().map(|p| p.ids.clone()).collect();
            self.calls.fetch_add(1, Ordering::Relaxed);
            if let Ok(out) = self.engine.generate_ids(&ids, &first.params) {
                if out.len() == batch.len() {
                    return out.into_iter().zip(batch).map(|(c, p)| check_count(c, p.params.n)).collect();
                }
            }
        }
        batch
            .iter()
            .map(|p| {
                self.calls.fetch_add(1, Ordering::Relaxed);
                // Engine errors (a bad request, a prompt outside the model, a tensor error) are
                // deterministic: retrying cannot help.
                let mut out = self
                    .engine
                    .generate_ids(std::slice::from_ref(&p.ids), &p.params)
                    .map_err(|e| BackendError::Fatal(e.to_string()))?;
                let completions = out.pop().filter(|_| out.is_empty()).ok_or_else(|| {
                    BackendError::Protocol("the engine did not return one list of completions for the prompt".into())
                })?;
                check_count(completions, p.params.n)
            })
            .collect()
    }
}

/// The completions when there are as many as asked for.
fn check_count(completions: Vec<engine::Completion>, n: usize) -> Outcome {
    if completions.len() == n {
        Ok(completions)
    } else {
        Err(BackendError::Protocol(format!("asked for {n} completions, got {}", completions.len())))
    }
}

/// The name recorded for a model source: the default model's file stem, else the path.
pub fn model_name(source: &ModelSource) -> String {
    match source {
        ModelSource::Default => engine::DEFAULT_MODEL_FILE.trim_end_matches(".gguf").to_string(),
        ModelSource::Gguf(path) | ModelSource::HfDir(path) => path.display().to_string(),
        ModelSource::Random(preset) => format!("random:{preset}"),
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
    /// `embedded-chat` / `embedded-completions`, with `-quantized` when the CPU decodes quantized
    /// weights and `-bf16` / `-f16` for half-precision weights (their samples differ from the
    /// f32 dense path's, so a run records which one drew them).
    fn kind(&self) -> String {
        let api = match self.api {
            Api::Chat => "embedded-chat",
            Api::Completions => "embedded-completions",
        };
        let dtype = match self.engine.model().dtype() {
            engine::DType::BF16 => "-bf16",
            engine::DType::F16 => "-f16",
            _ => "",
        };
        match self.engine.cpu_decode() {
            engine::CpuDecode::Quantized => format!("{api}-quantized"),
            engine::CpuDecode::Dense => format!("{api}{dtype}"),
        }
    }

    fn model(&self) -> String {
        self.name.clone()
    }

    fn seeds_mix_prompt(&self) -> bool {
        true
    }

    fn generate(&self, prompt: &RenderedPrompt, params: &SamplingParams) -> Result<Vec<Completion>, BackendError> {
        let text = self.render(prompt)?;
        let ids = self.engine.encode_prompt(&Prompt::Text(text)).map_err(|e| BackendError::Fatal(e.to_string()))?;
        let params = self.engine_params(params);
        params.validate().map_err(|e| BackendError::Fatal(e.to_string()))?;
        Ok(self.generate_tokens(ids, params)?.into_iter().map(to_completion).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rlengine::{Arch, DType, Device, LoadedModel, Model, ModelConfig, Tokenizer};

    #[test]
    fn the_default_batch_is_the_engines() {
        assert_eq!(super::super::DEFAULT_ENGINE_BATCH, ModelSpec::new(ModelSource::Default).max_batch);
    }

    #[test]
    fn finish_reasons_and_token_counts() {
        let cases = [(FinishReason::Eos, "stop"), (FinishReason::Stop, "stop"), (FinishReason::Length, "length")];
        for (reason, expected) in cases {
            let c = engine::Completion {
                text: "x = 2".into(),
                token_ids: vec![5, 6, 7],
                logprobs: vec![-0.1; 3],
                finish_reason: reason,
            };
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
        tiny_backend_in(api, DType::F32)
    }

    fn tiny_backend_in(api: Api, dtype: DType) -> Option<EmbeddedBackend> {
        // Vocabulary 259: `Tokenizer::byte_level`'s three special tokens and 256 bytes.
        let model = Model::random(&ModelConfig::tiny(Arch::Llama, 259), dtype, &Device::Cpu, 7).ok()?;
        let tokenizer = Tokenizer::byte_level().ok()?;
        let loaded =
            LoadedModel { model, tokenizer, chat_template: engine::ChatTemplate::ChatMl { default_system: None } };
        Some(EmbeddedBackend::from_engine(Engine::from_parts(loaded, 8), "tiny", api, 8))
    }

    #[test]
    fn prompts_render_per_api() {
        let prompt = RenderedPrompt {
            system: Some("Reason.".into()),
            user: "1+1?".into(),
            completion: "Reason.\n\n1+1?".into(),
        };
        let Some(chat) = tiny_backend(Api::Chat) else { panic!("tiny engine") };
        assert_eq!(
            chat.render(&prompt).ok().as_deref(),
            Some("<|im_start|>system\nReason.<|im_end|>\n<|im_start|>user\n1+1?<|im_end|>\n<|im_start|>assistant\n")
        );
        let no_system = RenderedPrompt { system: None, ..prompt.clone() };
        assert_eq!(
            chat.render(&no_system).ok().as_deref(),
            Some("<|im_start|>user\n1+1?<|im_end|>\n<|im_start|>assistant\n")
        );
        assert_eq!(chat.kind(), "embedded-chat");
        let Some(plain) = tiny_backend(Api::Completions) else { panic!("tiny engine") };
        assert_eq!(plain.render(&prompt).ok().as_deref(), Some("Reason.\n\n1+1?"));
        assert_eq!(plain.kind(), "embedded-completions");
        // Half-precision weights draw other samples: the kind says so, and a resume checks it.
        let Some(bf16) = tiny_backend_in(Api::Chat, DType::BF16) else { panic!("tiny engine") };
        assert_eq!(bf16.kind(), "embedded-chat-bf16");
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
        let params = SamplingParams {
            n: 2,
            temperature: 1.0,
            top_p: 1.0,
            top_k: None,
            max_new_tokens: 4,
            stop: vec![],
            seed: Some(5),
        };
        let first = b.generate(&prompt, &params).map_err(|e| e.to_string());
        let Ok(first) = first else { panic!("{first:?}") };
        assert_eq!(first.len(), 2);
        assert!(first.iter().all(|c| c.tokens.is_some_and(|t| (1..=4).contains(&t))));
        assert!(first
            .iter()
            .all(|c| c.finish_reason.as_deref() == Some(if c.tokens == Some(4) { "length" } else { "stop" })));
        assert_eq!(b.generate(&prompt, &params).ok(), Some(first.clone()));
        let bad = SamplingParams { n: 0, ..params };
        assert!(matches!(b.generate(&prompt, &bad), Err(BackendError::Fatal(_))));
    }
    fn pending(ticket: u64, n: usize, seed: u64) -> Pending {
        Pending { ticket, ids: vec![1, 2, 3], params: engine::SamplingParams { n, seed, ..Default::default() } }
    }

    #[test]
    fn batches_take_the_oldest_request_and_equal_parameters_up_to_the_row_limit() {
        // (requests as (n, seed), max rows) -> tickets of the first batch, tickets left
        type Case<'a> = (&'a [(usize, u64)], usize, &'a [u64], &'a [u64]);
        let cases: &[Case] = &[
            (&[], 4, &[], &[]),
            (&[(1, 7), (1, 7), (1, 7)], 16, &[0, 1, 2], &[]),
            (&[(1, 7), (1, 8), (1, 7)], 16, &[0, 2], &[1]),
            (&[(2, 7), (2, 7), (2, 7)], 4, &[0, 1], &[2]),
            (&[(2, 7), (3, 7), (2, 7)], 4, &[0, 2], &[1]),
            (&[(9, 7), (1, 7)], 4, &[0], &[1]),
            (&[(1, 8), (9, 8), (1, 8)], 4, &[0, 2], &[1]),
        ];
        for &(requests, max_rows, batch, left) in cases {
            let mut q: VecDeque<Pending> =
                requests.iter().enumerate().map(|(i, &(n, seed))| pending(i as u64, n, seed)).collect();
            let got: Vec<u64> = take_batch(&mut q, max_rows).iter().map(|p| p.ticket).collect();
            let rest: Vec<u64> = q.iter().map(|p| p.ticket).collect();
            assert_eq!((got.as_slice(), rest.as_slice()), (batch, left), "{requests:?} max {max_rows}");
        }
    }

    fn sampled(seed: u64) -> SamplingParams {
        SamplingParams {
            n: 2,
            temperature: 1.0,
            top_p: 0.9,
            top_k: None,
            max_new_tokens: 6,
            stop: vec![],
            seed: Some(seed),
        }
    }

    fn problems() -> Vec<RenderedPrompt> {
        ["1+1?", "What is the sum of the first ten odd numbers?", "x", "Solve 3x = 12 for x."]
            .iter()
            .map(|q| RenderedPrompt { system: None, user: q.to_string(), completion: q.to_string() })
            .collect()
    }

    #[test]
    fn merged_requests_get_exactly_their_unbatched_completions() {
        let Some(b) = tiny_backend(Api::Completions) else { panic!("tiny engine") };
        let prompts = problems();
        // One engine call per request (each call has the engine to itself).
        let alone: Vec<_> = prompts.iter().map(|p| b.generate(p, &sampled(3)).map_err(|e| e.to_string())).collect();
        assert_eq!(b.engine_calls(), prompts.len() as u64);
        // Hold the engine busy until every request waits in the queue, then release it: one
        // thread runs all of them in one call (4 requests x 2 samples = the 8 rows of the batch).
        b.lock().busy = true;
        let backend = &b;
        let merged = std::thread::scope(|s| {
            let handles: Vec<_> = prompts
                .iter()
                .map(|p| s.spawn(move || backend.generate(p, &sampled(3)).map_err(|e| e.to_string())))
                .collect();
            while b.lock().pending.len() < prompts.len() {
                std::thread::yield_now();
            }
            b.lock().busy = false;
            b.finished.notify_all();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("panicked".into()))).collect::<Vec<_>>()
        });
        assert_eq!(b.engine_calls(), prompts.len() as u64 + 1, "the four requests ran as one call");
        assert_eq!(merged, alone);
        assert!(alone.iter().all(|r| r.as_ref().is_ok_and(|c| c.len() == 2)));
        // Another seed gives other samples.
        assert_ne!(b.generate(&prompts[1], &sampled(4)).map_err(|e| e.to_string()), alone[1]);
    }

    #[test]
    fn concurrent_requests_of_several_seeds_match_sequential_ones() {
        let Some(b) = tiny_backend(Api::Chat) else { panic!("tiny engine") };
        let jobs: Vec<(RenderedPrompt, SamplingParams)> = problems()
            .into_iter()
            .cycle()
            .take(12)
            .enumerate()
            .map(|(i, p)| (p, SamplingParams { n: 1 + i % 3, ..sampled(i as u64 % 2) }))
            .collect();
        let sequential: Vec<_> = jobs.iter().map(|(p, s)| b.generate(p, s).map_err(|e| e.to_string())).collect();
        let backend = &b;
        let concurrent = std::thread::scope(|s| {
            let handles: Vec<_> = jobs
                .iter()
                .map(|(p, sp)| s.spawn(move || backend.generate(p, sp).map_err(|e| e.to_string())))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("panicked".into()))).collect::<Vec<_>>()
        });
        assert_eq!(concurrent, sequential);
        let q = b.lock();
        assert!(q.pending.is_empty() && q.done.is_empty() && !q.busy, "{q:?}");
    }

    #[test]
    fn a_bad_request_in_a_merged_batch_fails_alone() {
        let Some(b) = tiny_backend(Api::Completions) else { panic!("tiny engine") };
        let params = b.engine_params(&sampled(1));
        let good = Pending { ticket: 0, ids: vec![10, 11, 12], params: params.clone() };
        let bad = Pending { ticket: 1, ids: vec![10, 100_000], params: params.clone() };
        let out = b.run_batch(&[good.clone(), bad]);
        assert_eq!(out.len(), 2);
        assert!(matches!(&out[1], Err(BackendError::Fatal(m)) if m.contains("vocabulary")), "{:?}", out[1]);
        assert_eq!(out[0].as_ref().ok(), b.run_batch(&[good]).first().and_then(|r| r.as_ref().ok()));
    }

    #[test]
    fn default_concurrency_fills_the_batch() {
        let Some(b) = tiny_backend(Api::Chat) else { panic!("tiny engine") };
        assert_eq!(b.max_rows(), 8);
        for (per_request, expected) in [(0, 8), (1, 8), (2, 4), (3, 3), (8, 1), (32, 1)] {
            assert_eq!(b.default_concurrency(per_request), expected, "{per_request}");
        }
        assert!(b.seeds_mix_prompt());
    }
}
