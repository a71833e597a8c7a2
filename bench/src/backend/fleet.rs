//! Several data-parallel servers of one model (vLLM, SGLang, llama.cpp, ... each at its own URL) as
//! one [`Backend`]; one URL (a single server or a router in front of many) is a fleet of one.
//!
//! - Each request goes to the endpoint in rotation with the fewest requests outstanding (ties
//!   rotate).
//! - A connection error, a timeout, HTTP 429 or 502-504, or three failures in a row take an
//!   endpoint out of rotation; the request is sent at once to another endpoint. An endpoint out of
//!   rotation is checked with `GET /v1/models` after 1 s (or its `Retry-After`), then after
//!   doubling waits up to 5 s, and comes back when it answers.
//! - One call of [`Backend::generate`] sends its request at most once to each endpoint; once every
//!   endpoint has failed it, the last error goes back to the caller, whose retries
//!   ([`super::with_retries`]) decide whether to try again. So a request makes at most
//!   (retries + 1) x endpoints attempts, even against a server that passes its health checks but
//!   fails every completion.
//! - While every endpoint it has not tried is out, a request waits for one to come back, at most
//!   [`FleetOptions::down_timeout`] + [`FleetOptions::check_timeout`]; once every endpoint has
//!   been out for `down_timeout` and has failed a health check, requests fail at once
//!   ([`BackendError::Fatal`]) so the run stops within seconds instead of retrying for an hour.
//! - Per endpoint: requests sent, failures, completions and tokens ([`EndpointStats`]), kept in the
//!   run directory's `endpoints.json` across resumed invocations.

use super::openai::{ModelCheck, OpenAiBackend};
pub use super::stats::{load_stats, save_stats, EndpointStats, ENDPOINTS_FILE};
use super::{Backend, BackendError, Completion, SamplingParams};
use crate::prompt::RenderedPrompt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// How a fleet watches its endpoints.
#[derive(Clone, Debug, PartialEq)]
pub struct FleetOptions {
    /// Deadline of the start-up check and of each health check (`GET /v1/models`).
    pub check_timeout: Duration,
    /// Wait before the first health check of an endpoint taken out; doubles after each failed
    /// check, up to `max_check_interval`.
    pub check_interval: Duration,
    /// Longest wait between two health checks of an endpoint that is out.
    pub max_check_interval: Duration,
    /// Once every endpoint has been out this long (each having failed a health check), requests
    /// fail at once.
    pub down_timeout: Duration,
    /// Failures in a row (other than connection errors, timeouts, 429 and 502-504, which count at
    /// once) that take an endpoint out.
    pub max_consecutive_failures: u32,
}

impl Default for FleetOptions {
    fn default() -> Self {
        FleetOptions {
            check_timeout: Duration::from_secs(10),
            check_interval: Duration::from_secs(1),
            max_check_interval: Duration::from_secs(5),
            down_timeout: Duration::from_secs(20),
            max_consecutive_failures: 3,
        }
    }
}

/// Why an endpoint is out of rotation, and when to look again.
#[derive(Debug)]
struct Out {
    reason: String,
    since: Instant,
    next_check: Instant,
    failed_checks: u32,
    /// A health check is under way (by some request's thread).
    checking: bool,
}

#[derive(Debug, Default)]
struct Health {
    out: Option<Out>,
    consecutive_failures: u32,
}

#[derive(Debug)]
struct Member {
    backend: OpenAiBackend,
    outstanding: AtomicUsize,
    health: Mutex<Health>,
    stats: Mutex<EndpointStats>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Servers of one model behind one [`Backend`].
#[derive(Debug)]
pub struct Fleet {
    members: Vec<Member>,
    opts: FleetOptions,
    rotation: AtomicUsize,
    first_request: OnceLock<Instant>,
    last_answer: Mutex<Option<Instant>>,
}

enum Pick {
    Use(usize),
    /// Every endpoint is out, and some of them this request has not tried: wait for one.
    Wait,
    /// Every endpoint in rotation has failed this request.
    Exhausted,
    Gone(String),
}

impl Fleet {
    /// A fleet of `backends` (one per endpoint, all serving the same model with the same API).
    pub fn new(backends: Vec<OpenAiBackend>, opts: FleetOptions) -> Result<Fleet, BackendError> {
        if backends.is_empty() {
            return Err(BackendError::Fatal("no endpoint given".into()));
        }
        let mut seen = Vec::new();
        for b in &backends {
            if seen.contains(&b.url()) {
                return Err(BackendError::Fatal(format!("endpoint {} is given twice", b.url())));
            }
            seen.push(b.url());
        }
        let members = backends
            .into_iter()
            .map(|b| Member {
                stats: Mutex::new(EndpointStats { endpoint: b.url(), ..Default::default() }),
                backend: b,
                outstanding: AtomicUsize::new(0),
                health: Mutex::new(Health::default()),
            })
            .collect();
        Ok(Fleet {
            members,
            opts,
            rotation: AtomicUsize::new(0),
            first_request: OnceLock::new(),
            last_answer: Mutex::new(None),
        })
    }

    /// The endpoints' URLs, in the order given.
    pub fn urls(&self) -> Vec<String> {
        self.members.iter().map(|m| m.backend.url()).collect()
    }

    /// The start-up check of every endpoint at once ([`OpenAiBackend::check`]): the endpoints
    /// that do not list their models, or one error naming every endpoint that failed.
    pub fn check(&self) -> Result<Vec<String>, BackendError> {
        let results: Vec<Result<ModelCheck, BackendError>> = std::thread::scope(|s| {
            let handles: Vec<_> =
                self.members.iter().map(|m| s.spawn(|| m.backend.check(self.opts.check_timeout))).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(BackendError::Fatal("the check panicked".into()))))
                .collect()
        });
        let mut unlisted = Vec::new();
        let mut errors = Vec::new();
        for (m, r) in self.members.iter().zip(results) {
            match r {
                Ok(ModelCheck::Listed) => {}
                Ok(ModelCheck::Unlisted) => unlisted.push(m.backend.url()),
                Err(e) => errors.push(e.to_string()),
            }
        }
        if errors.is_empty() {
            return Ok(unlisted);
        }
        let n = self.members.len();
        let head = if n == 1 {
            "the endpoint failed its start-up check".to_string()
        } else {
            format!("{} of {n} endpoints failed their start-up check", errors.len())
        };
        Err(BackendError::Fatal(format!("{head}:\n  {}", errors.join("\n  "))))
    }

    /// What each endpoint did so far, in the order given.
    pub fn stats(&self) -> Vec<EndpointStats> {
        let seconds = match (self.first_request.get(), *lock(&self.last_answer)) {
            (Some(a), Some(b)) => b.saturating_duration_since(*a).as_secs_f64(),
            _ => 0.0,
        };
        self.members
            .iter()
            .map(|m| {
                let mut s = lock(&m.stats).clone();
                s.seconds = seconds;
                s
            })
            .collect()
    }

    /// The endpoint for the next request among those not `tried`: the least loaded one in
    /// rotation, after a health check of one endpoint whose check is due. At most one health check
    /// per endpoint and call, so the call ends however other requests move endpoints in and out.
    fn pick(&self, tried: &[bool]) -> Pick {
        let n = self.members.len();
        let mut checks_left = n;
        loop {
            let now = Instant::now();
            let start = self.rotation.fetch_add(1, Ordering::Relaxed) % n;
            let mut best: Option<(usize, usize)> = None;
            let mut to_check = None;
            let (mut all_out, mut untried_out) = (true, false);
            for off in 0..n {
                let i = (start + off) % n;
                let m = &self.members[i];
                let mut h = lock(&m.health);
                match &mut h.out {
                    None => {
                        all_out = false;
                        if tried[i] {
                            continue;
                        }
                        let load = m.outstanding.load(Ordering::SeqCst);
                        if best.is_none_or(|(b, _)| load < b) {
                            best = Some((load, i));
                        }
                    }
                    Some(out) => {
                        untried_out |= !tried[i];
                        if checks_left > 0 && to_check.is_none() && !out.checking && now >= out.next_check {
                            out.checking = true;
                            to_check = Some(i);
                        }
                    }
                }
            }
            if let Some(i) = to_check {
                checks_left -= 1;
                let result = self.members[i].backend.alive(self.opts.check_timeout);
                let back = result.is_ok();
                self.after_check(i, result);
                if back || best.is_none() {
                    continue;
                }
            }
            if let Some((_, i)) = best {
                return Pick::Use(i);
            }
            if !all_out {
                return Pick::Exhausted;
            }
            if let Some(why) = self.gone(now) {
                return Pick::Gone(why);
            }
            return if untried_out { Pick::Wait } else { Pick::Exhausted };
        }
    }

    /// Why the fleet is gone: every endpoint out for `down_timeout`, each with a failed check.
    fn gone(&self, now: Instant) -> Option<String> {
        let mut reasons = Vec::new();
        for m in &self.members {
            let h = lock(&m.health);
            let out = h.out.as_ref()?;
            if out.failed_checks == 0 || now.saturating_duration_since(out.since) < self.opts.down_timeout {
                return None;
            }
            // The last health check's error; the client's messages name the endpoint.
            reasons.push(out.reason.clone());
        }
        let what = if reasons.len() == 1 { "the server".to_string() } else { format!("all {} servers", reasons.len()) };
        Some(format!(
            "{what} stopped answering for {:.0}s (last health check: {})",
            self.opts.down_timeout.as_secs_f64(),
            reasons.join("; ")
        ))
    }

    fn after_check(&self, i: usize, result: Result<(), BackendError>) {
        let now = Instant::now();
        let mut h = lock(&self.members[i].health);
        match result {
            Ok(()) => {
                h.out = None;
                h.consecutive_failures = 0;
            }
            Err(e) => {
                if let Some(out) = &mut h.out {
                    out.checking = false;
                    out.failed_checks += 1;
                    let wait = self
                        .opts
                        .check_interval
                        .saturating_mul(1 << out.failed_checks.min(16))
                        .min(self.opts.max_check_interval)
                        .max(Duration::from_millis(10));
                    out.next_check = now + wait;
                    let (msg, url) = (e.to_string(), self.members[i].backend.url());
                    out.reason = if msg.contains(&url) { msg } else { format!("{url}: {msg}") };
                }
            }
        }
    }

    /// Count a failed request against endpoint `i`, taking it out of rotation when it looks down.
    fn failed(&self, i: usize, e: &BackendError) {
        let now = Instant::now();
        let m = &self.members[i];
        let mut h = lock(&m.health);
        h.consecutive_failures += 1;
        let looks_down = match e {
            BackendError::Io(_) | BackendError::Timeout(_) => true,
            BackendError::Http { status, .. } => matches!(status, 429 | 502..=504),
            _ => false,
        };
        if h.out.is_none() && (looks_down || h.consecutive_failures >= self.opts.max_consecutive_failures) {
            let wait = e.retry_after().unwrap_or(self.opts.check_interval);
            h.out = Some(Out {
                reason: e.to_string(),
                since: now,
                next_check: now + wait,
                failed_checks: 0,
                checking: false,
            });
            lock(&m.stats).taken_out += 1;
        }
    }

    fn succeeded(&self, i: usize, completions: usize, tokens: Option<u64>) {
        let m = &self.members[i];
        {
            let mut h = lock(&m.health);
            h.consecutive_failures = 0;
            // An answer proves the server is up, whatever another request saw.
            if h.out.as_ref().is_some_and(|o| !o.checking) {
                h.out = None;
            }
        }
        let mut s = lock(&m.stats);
        s.completions += completions as u64;
        s.tokens += tokens.unwrap_or(0);
    }
}

impl Backend for Fleet {
    fn kind(&self) -> String {
        self.members[0].backend.kind()
    }

    fn model(&self) -> String {
        self.members[0].backend.model()
    }

    fn generate(&self, prompt: &RenderedPrompt, params: &SamplingParams) -> Result<Vec<Completion>, BackendError> {
        self.first_request.get_or_init(Instant::now);
        // Each endpoint is tried at most once: the caller's retries bound the attempts.
        let mut tried = vec![false; self.members.len()];
        let mut last: Option<BackendError> = None;
        let mut waiting_since: Option<Instant> = None;
        let max_wait = self.opts.down_timeout.saturating_add(self.opts.check_timeout);
        loop {
            match self.pick(&tried) {
                Pick::Use(i) => {
                    let m = &self.members[i];
                    m.outstanding.fetch_add(1, Ordering::SeqCst);
                    lock(&m.stats).requests += 1;
                    let result = m.backend.generate_counted(prompt, params);
                    m.outstanding.fetch_sub(1, Ordering::SeqCst);
                    *lock(&self.last_answer) = Some(Instant::now());
                    match result {
                        Ok((completions, tokens)) => {
                            self.succeeded(i, completions.len(), tokens);
                            return Ok(completions);
                        }
                        Err(e) => {
                            lock(&m.stats).failures += 1;
                            if !e.is_retryable() {
                                // The request itself is at fault (or it can never succeed).
                                return Err(e);
                            }
                            self.failed(i, &e);
                            tried[i] = true;
                            last = Some(e);
                        }
                    }
                }
                Pick::Gone(why) => return Err(BackendError::Fatal(why)),
                Pick::Wait => {
                    // Wait for an endpoint to come back, the fleet to be given up, or the wait
                    // to run out (one total per call).
                    let since = *waiting_since.get_or_insert_with(Instant::now);
                    if since.elapsed() >= max_wait {
                        return Err(last.unwrap_or_else(|| {
                            BackendError::Io(format!(
                                "no server came back into rotation within {:.0}s",
                                max_wait.as_secs_f64()
                            ))
                        }));
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                Pick::Exhausted => {
                    // Every endpoint failed this request: the caller backs off and retries.
                    return Err(last.unwrap_or_else(|| BackendError::Io("no endpoint available".into())));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_add_up_across_invocations() {
        let dir = std::env::temp_dir().join(format!("rlbench-fleet-stats-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("mkdir");
        assert!(load_stats(&dir).is_empty());
        let a = EndpointStats {
            endpoint: "http://a:1".into(),
            requests: 3,
            failures: 1,
            completions: 2,
            tokens: 40,
            taken_out: 1,
            seconds: 2.0,
        };
        let b = EndpointStats { endpoint: "http://b:1".into(), requests: 0, ..Default::default() };
        save_stats(&dir, &[a.clone(), b]).expect("save");
        save_stats(&dir, std::slice::from_ref(&a)).expect("save");
        let all = load_stats(&dir);
        assert_eq!(all.len(), 1, "{all:?}");
        assert_eq!((all[0].requests, all[0].tokens, all[0].seconds), (6, 80, 4.0));
        assert_eq!(all[0].tokens_per_second(), Some(20.0));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_fleet_needs_distinct_endpoints() {
        let b = |u: &str| OpenAiBackend::new(u, "m", super::super::Api::Chat, Duration::from_secs(1), None);
        let (Ok(x), Ok(y)) = (b("http://127.0.0.1:1"), b("http://127.0.0.1:1/v1")) else { panic!("backends") };
        assert!(matches!(Fleet::new(vec![x, y], FleetOptions::default()), Err(BackendError::Fatal(_))));
        assert!(matches!(Fleet::new(vec![], FleetOptions::default()), Err(BackendError::Fatal(_))));
    }
}
