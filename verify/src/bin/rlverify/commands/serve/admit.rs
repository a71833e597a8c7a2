//! The queue in front of the scorer: reading a body within its time and the memory bound, then
//! waiting, in arrival order, for a scoring slot.
//!
//! Memory is counted in KiB permits of one semaphore (`--max-queue`), taken as body bytes arrive
//! and given back when the answer is ready: when it runs out the server stops polling bodies, so
//! the clients' data waits in TCP buffers and their sends block (backpressure through the
//! connection). Scoring slots (`--max-in-flight`) are a second, fair semaphore taken only once a
//! body is complete. Waiting for either counts against `--queue-timeout` (then 503); waiting for
//! the client's bytes counts against `--body-timeout` (then 408).

use super::metrics::Window;
use super::App;
use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{header, StatusCode};
use http_body::Body as _;
use std::future::poll_fn;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Why a request failed (kept small: it travels back from the verifier threads in `Result`s).
/// A 503 is answered with `Retry-After`.
pub(super) struct Fail(pub StatusCode, pub String);

pub(super) fn fail(status: StatusCode, reason: impl Into<String>) -> Fail {
    Fail(status, reason.into())
}

/// Seconds a client is told to wait after a 503.
pub(super) const RETRY_AFTER_SECS: u64 = 1;

/// The queue's bounds and what it holds now.
pub(super) struct Queue {
    /// Body memory, in KiB permits.
    memory: Arc<Semaphore>,
    memory_kib: usize,
    slots: Arc<Semaphore>,
    max_in_flight: usize,
    /// Scoring requests not answered yet (reading, queued or scoring): shutdown waits for them.
    active: AtomicUsize,
    /// Bodies arriving.
    reading: AtomicUsize,
    /// Bodies read, waiting for a scoring slot.
    queued: AtomicUsize,
    /// Requests answered 503 because they could not start within `--queue-timeout`.
    pub timeouts: AtomicU64,
    /// Seconds each request waited for memory and a slot.
    pub waits: Mutex<Window>,
}

impl Queue {
    pub fn new(max_bytes: usize, max_in_flight: usize) -> Queue {
        // Rounded up, as each body is: a body of `--max-body` <= `--max-queue` bytes always fits.
        let memory_kib = max_bytes.div_ceil(1024).clamp(1, (u32::MAX as usize).min(Semaphore::MAX_PERMITS));
        Queue {
            memory: Arc::new(Semaphore::new(memory_kib)),
            memory_kib,
            slots: Arc::new(Semaphore::new(max_in_flight)),
            max_in_flight,
            active: AtomicUsize::new(0),
            reading: AtomicUsize::new(0),
            queued: AtomicUsize::new(0),
            timeouts: AtomicU64::new(0),
            waits: Mutex::new(Window::default()),
        }
    }

    pub fn max_in_flight(&self) -> usize {
        self.max_in_flight
    }

    /// Requests being scored now.
    pub fn scoring(&self) -> usize {
        self.max_in_flight - self.slots.available_permits()
    }

    pub fn reading(&self) -> usize {
        self.reading.load(Ordering::Relaxed)
    }

    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }

    pub fn active(&self) -> usize {
        self.active.load(Ordering::Relaxed)
    }

    /// Body bytes held now (rounded up to KiB per request), and the bound.
    pub fn held_bytes(&self) -> (usize, usize) {
        ((self.memory_kib - self.memory.available_permits()) * 1024, self.memory_kib * 1024)
    }

    /// Counts a scoring request as active until the guard is dropped.
    pub fn enter(&self) -> Gauge<'_> {
        Gauge::enter(&self.active)
    }
}

/// A gauge incremented for the guard's lifetime.
pub(super) struct Gauge<'a>(&'a AtomicUsize);

impl<'a> Gauge<'a> {
    fn enter(n: &'a AtomicUsize) -> Gauge<'a> {
        n.fetch_add(1, Ordering::Relaxed);
        Gauge(n)
    }
}

impl Drop for Gauge<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A request with its whole body, holding its memory and a scoring slot until dropped.
pub(super) struct Admitted {
    pub body: Bytes,
    _memory: Option<OwnedSemaphorePermit>,
    _slot: OwnedSemaphorePermit,
}

/// Time spent waiting in the queue, against `--queue-timeout` and the request's deadline.
struct Wait<'a> {
    app: &'a App,
    waited: Duration,
    deadline: Instant,
}

impl Wait<'_> {
    /// Takes `permits` from `sem`, waiting as long as the queue allows.
    async fn take(&mut self, sem: &Arc<Semaphore>, permits: u32, what: &str) -> Result<OwnedSemaphorePermit, Fail> {
        if let Ok(p) = sem.clone().try_acquire_many_owned(permits) {
            return Ok(p);
        }
        let start = Instant::now();
        let limit = self.app.limits.queue.saturating_sub(self.waited);
        let until = (start + limit).min(self.deadline);
        let got = tokio::time::timeout_at(until.into(), sem.clone().acquire_many_owned(permits)).await;
        self.waited += start.elapsed();
        match got {
            Ok(Ok(p)) => Ok(p),
            // The semaphores are never closed.
            Ok(Err(_)) => Err(fail(StatusCode::SERVICE_UNAVAILABLE, "the server is shutting down")),
            Err(_) => {
                self.app.queue.timeouts.fetch_add(1, Ordering::Relaxed);
                let (flag, secs) = if until == self.deadline {
                    ("--request-timeout", self.app.limits.request)
                } else {
                    ("--queue-timeout", self.app.limits.queue)
                };
                Err(fail(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!("busy: no {what} within {}s ({flag}); retry later", secs.as_secs_f64()),
                ))
            }
        }
    }
}

/// Reads the body of `req` within its bounds, then waits for a scoring slot. A request whose
/// body has not fully arrived when the server shuts down is answered 503 (not accepted: its
/// client retries); one with its whole body is accepted and waits for its slot.
pub(super) async fn admit(app: &App, req: Request, deadline: Instant) -> Result<Admitted, Fail> {
    let mut shutdown = app.shutdown.subscribe();
    let mut wait = Wait { app, waited: Duration::ZERO, deadline };
    let (data, memory) = tokio::select! {
        biased;
        read = read_body(&mut wait, req) => read?,
        _ = shutdown.wait_for(|stop| *stop) => {
            return Err(fail(StatusCode::SERVICE_UNAVAILABLE, "the server is shutting down; send the request again"));
        }
    };
    if data.iter().all(u8::is_ascii_whitespace) {
        return Err(fail(StatusCode::BAD_REQUEST, "the request body is empty"));
    }
    let queued = Gauge::enter(&app.queue.queued);
    let slot = wait.take(&app.queue.slots, 1, "scoring slot").await;
    drop(queued);
    if let Ok(mut w) = app.queue.waits.lock() {
        w.push(wait.waited.as_secs_f64());
    }
    Ok(Admitted { body: Bytes::from(data), _memory: memory, _slot: slot? })
}

/// The whole body of `req`, within `--max-body`, `--body-timeout` and the queue's memory, with
/// the memory it holds.
async fn read_body(wait: &mut Wait<'_>, req: Request) -> Result<(Vec<u8>, Option<OwnedSemaphorePermit>), Fail> {
    let app = wait.app;
    let max_body = app.limits.max_body;
    let too_large = || {
        fail(StatusCode::PAYLOAD_TOO_LARGE, format!("the request body is larger than {max_body} bytes (--max-body)"))
    };
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > max_body as u64) {
        return Err(too_large());
    }
    let mut body: Body = req.into_body();
    let mut data = Vec::with_capacity(declared.map_or(0, |n| n as usize));
    let mut memory: Option<OwnedSemaphorePermit> = None;
    let _reading = Gauge::enter(&app.queue.reading);
    let body_start = Instant::now();
    loop {
        // Time spent waiting for memory is the server's, not the client's.
        let body_deadline = (body_start + app.limits.body + wait.waited).min(wait.deadline);
        let frame = tokio::time::timeout_at(body_deadline.into(), poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)));
        let chunk = match frame.await {
            Err(_) => {
                let (flag, secs) = if body_deadline == wait.deadline {
                    ("--request-timeout", app.limits.request)
                } else {
                    ("--body-timeout", app.limits.body)
                };
                return Err(fail(
                    StatusCode::REQUEST_TIMEOUT,
                    format!("the request body did not arrive within {}s ({flag})", secs.as_secs_f64()),
                ));
            }
            Ok(None) => return Ok((data, memory)),
            Ok(Some(Err(e))) => {
                return Err(fail(StatusCode::BAD_REQUEST, format!("could not read the request body: {e}")));
            }
            Ok(Some(Ok(frame))) => match frame.into_data() {
                Ok(chunk) => chunk,
                Err(_) => continue, // trailers
            },
        };
        if data.len() + chunk.len() > max_body {
            return Err(too_large());
        }
        data.extend_from_slice(&chunk);
        let held = memory.as_ref().map_or(0, OwnedSemaphorePermit::num_permits);
        let need = data.len().div_ceil(1024).saturating_sub(held);
        if need > 0 {
            // `need` fits: a body is at most `--max-body`, which is at most `--max-queue`.
            let more = wait.take(&app.queue.memory, need as u32, "room in the queue").await?;
            match memory.as_mut() {
                Some(m) => m.merge(more),
                None => memory = Some(more),
            }
        }
    }
}
