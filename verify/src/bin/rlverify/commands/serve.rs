//! `rlverify serve`: an HTTP reward server (axum on tokio) for RL trainers.
//!
//! Routes: `POST /get_reward` (OpenRLHF's remote reward model), `POST /slime` (slime's `remote_rm`),
//! `POST /score` (the rows `rlverify score` reads, answered with its output rows), `GET /health`,
//! `GET /metrics` (Prometheus text).
//!
//! The async threads only move bytes: parsing the JSON and verifying run on the verifier's rayon
//! pool, and the handler awaits the result. Each scoring request holds one of `--max-in-flight`
//! slots from before its body is read (503 + `Retry-After` when none is free) and must finish
//! within `--request-timeout` (its body included); a request that runs out of time stops its
//! remaining items. SIGINT/SIGTERM stop accepting and wait for the requests already accepted.

use super::score::{score_line, Ctx as LineCtx};
use super::{thread_pool, Line, LineChunks};
use crate::args::ServeArgs;
use anyhow::Context;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use rayon::prelude::*;
use rlverify::cli::Exit;
use rlverify::format::{is_well_formed, total_reward};
use rlverify::input::{type_name, FieldPath, FieldSpec};
use rlverify::{Config, Gold, Status};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, VecDeque};
use std::future::IntoFuture;
use std::io::Write;
use std::net::SocketAddr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::{oneshot, Notify, Semaphore};

/// Latencies kept for the percentiles at `/metrics` (the most recent ones).
const LATENCY_WINDOW: usize = 10_000;
/// Seconds a client is told to wait when every slot is taken.
const RETRY_AFTER_SECS: u64 = 1;
/// Extra seconds given to accepted requests after a signal, beyond `--request-timeout`.
const SHUTDOWN_SLACK: Duration = Duration::from_secs(5);
/// Time given to the last answers to be written after the last request in flight ended.
const DRAIN_SLACK: Duration = Duration::from_secs(2);

/// The routes with their own metrics label (anything else is `other`).
const ROUTES: [&str; 5] = ["/get_reward", "/slime", "/score", "/health", "/metrics"];

/// What every handler shares.
struct App {
    pool: rayon::ThreadPool,
    /// Scoring options and field mapping of the batch route (exactly `rlverify score`'s).
    lines: LineCtx,
    /// The response and gold fields of the OpenRLHF and slime routes, when remapped.
    fields: FieldSpec,
    slots: Arc<Semaphore>,
    max_in_flight: usize,
    max_body: usize,
    timeout: Duration,
    quiet: bool,
    metrics: Metrics,
}

pub fn run(args: ServeArgs) -> anyhow::Result<Exit> {
    let pool = thread_pool(args.threads)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("rlverify-http")
        .enable_all()
        .build()
        .context("failed to start the HTTP runtime")?;
    let max_in_flight = args.max_in_flight as usize;
    let app = Arc::new(App {
        pool,
        lines: LineCtx {
            cfg: args.scoring.config(),
            fields: args.fields.spec(),
            format_weight: args.format.format_reward,
        },
        fields: args.fields.spec(),
        slots: Arc::new(Semaphore::new(max_in_flight)),
        max_in_flight,
        max_body: args.max_body,
        timeout: Duration::from_secs_f64(args.request_timeout),
        quiet: args.quiet,
        metrics: Metrics::new(),
    });
    runtime.block_on(serve(app, &args.host, args.port))
}

async fn serve(app: Arc<App>, host: &str, port: u16) -> anyhow::Result<Exit> {
    let listener = tokio::net::TcpListener::bind((host, port))
        .await
        .with_context(|| format!("failed to listen on {host}:{port}"))?;
    let addr = listener.local_addr().context("failed to read the bound address")?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on http://{addr}").and_then(|()| out.flush()).context("failed to write stdout")?;
    }
    eprintln!(
        "rlverify serve: {} verifier threads, at most {} requests in flight, bodies up to {} bytes, {}s per request",
        app.pool.current_num_threads(),
        app.max_in_flight,
        app.max_body,
        app.timeout.as_secs_f64()
    );
    let router = router(app.clone());
    let stop = Arc::new(Notify::new());
    let signalled = {
        let stop = stop.clone();
        async move {
            let which = shutdown_signal().await;
            eprintln!("rlverify serve: {which}: no new connections; finishing the requests in flight");
            stop.notify_waiters();
        }
    };
    let server = axum::serve(listener, router.into_make_service_with_connect_info::<SocketAddr>())
        .with_graceful_shutdown(signalled)
        .into_future();
    // After a signal the server stops once every connection is closed. A connection with no
    // request under way (idle keep-alive, a head still arriving) may never close by itself: once
    // no scoring request is in flight (a request holds its slot from its head to its answer) and
    // answers had time to go out, the rest are cut. Nothing waits longer than a request's deadline.
    let grace = app.timeout + SHUTDOWN_SLACK;
    let drained = async {
        stop.notified().await;
        let start = Instant::now();
        while app.slots.available_permits() < app.max_in_flight && start.elapsed() < grace {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tokio::time::sleep(DRAIN_SLACK).await;
        app.slots.available_permits() == app.max_in_flight
    };
    tokio::select! {
        result = server => {
            result.context("the server failed")?;
            eprintln!("rlverify serve: stopped");
            Ok(Exit::Success)
        }
        finished = drained => {
            if finished {
                eprintln!("rlverify serve: stopped (closed the connections with no request under way)");
                Ok(Exit::Success)
            } else {
                eprintln!("rlverify serve: requests still running {}s after the signal; stopping anyway", grace.as_secs());
                Ok(Exit::Negative)
            }
        }
    }
}

/// Waits for SIGINT or SIGTERM and names it.
async fn shutdown_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => tokio::select! {
                _ = tokio::signal::ctrl_c() => "SIGINT",
                _ = term.recv() => "SIGTERM",
            },
            Err(e) => {
                eprintln!("rlverify serve: cannot watch SIGTERM ({e}); SIGINT still stops the server");
                let _ = tokio::signal::ctrl_c().await;
                "SIGINT"
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "Ctrl-C"
    }
}

fn router(app: Arc<App>) -> Router {
    let scoring = Router::new()
        .route("/get_reward", post(get_reward))
        .route("/slime", post(slime))
        .route("/score", post(batch))
        // Inner: the deadline (body and scoring); outer: a slot before anything is read.
        .route_layer(middleware::from_fn_with_state(app.clone(), deadline))
        .route_layer(middleware::from_fn_with_state(app.clone(), admit))
        .layer(DefaultBodyLimit::max(app.max_body));
    Router::new()
        .route("/health", get(health))
        .route("/metrics", get(metrics))
        .merge(scoring)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(app.clone(), access_log))
        .with_state(app)
}

// ---------------------------------------------------------------------------------------------
// Errors and small responses

/// A JSON error response: `{"error": reason}`.
fn error(status: StatusCode, reason: impl Into<String>) -> Response {
    let body = json!({ "error": reason.into() }).to_string();
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// Why a request failed (kept small: it travels back from the verifier threads in `Result`s).
struct Fail(StatusCode, String);

fn fail(status: StatusCode, reason: impl Into<String>) -> Fail {
    Fail(status, reason.into())
}

impl IntoResponse for Fail {
    fn into_response(self) -> Response {
        error(self.0, self.1)
    }
}

fn json_response(body: String, items: usize) -> Response {
    let mut resp = ([(header::CONTENT_TYPE, "application/json")], body).into_response();
    resp.extensions_mut().insert(Items(items));
    resp
}

/// The number of items a response scored, for the access log and the counters.
#[derive(Clone, Copy)]
struct Items(usize);

async fn not_found(req: Request) -> Response {
    error(
        StatusCode::NOT_FOUND,
        format!(
            "no route `{}`: use POST /get_reward (OpenRLHF), POST /slime, POST /score, GET /health, GET /metrics",
            req.uri().path()
        ),
    )
}

async fn method_not_allowed(method: Method, req: Request) -> Response {
    let allowed = if matches!(req.uri().path(), "/health" | "/metrics") { "GET" } else { "POST" };
    let mut resp =
        error(StatusCode::METHOD_NOT_ALLOWED, format!("`{method} {}` is not served: use {allowed}", req.uri().path()));
    resp.headers_mut().insert(header::ALLOW, HeaderValue::from_static(allowed));
    resp
}

async fn health(State(app): State<Arc<App>>) -> Response {
    let in_flight = app.max_in_flight - app.slots.available_permits();
    json_response(json!({ "status": "ok", "in_flight": in_flight }).to_string(), 0)
}

// ---------------------------------------------------------------------------------------------
// Middleware

/// Takes a slot for a scoring request, or answers 503 with `Retry-After` when none is free.
async fn admit(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let Ok(_slot) = app.slots.clone().try_acquire_owned() else {
        app.metrics.rejected.fetch_add(1, Ordering::Relaxed);
        let mut resp = error(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("busy: {} requests in flight (--max-in-flight); retry later", app.max_in_flight),
        );
        resp.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
        return resp;
    };
    next.run(req).await
}

/// Where a request is, for the status of a late answer.
#[derive(Clone)]
struct Phase(Arc<AtomicU8>);
const READING: u8 = 0;
const SCORING: u8 = 1;

/// Bounds a scoring request (reading its body included) by `--request-timeout`.
async fn deadline(State(app): State<Arc<App>>, mut req: Request, next: Next) -> Response {
    let phase = Phase(Arc::new(AtomicU8::new(READING)));
    req.extensions_mut().insert(phase.clone());
    match tokio::time::timeout(app.timeout, next.run(req)).await {
        Ok(resp) => resp,
        Err(_) => {
            let secs = app.timeout.as_secs_f64();
            if phase.0.load(Ordering::Relaxed) == READING {
                error(
                    StatusCode::REQUEST_TIMEOUT,
                    format!("the request body did not arrive within {secs}s (--request-timeout)"),
                )
            } else {
                let mut resp = error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!("scoring did not finish within {secs}s (--request-timeout); send smaller batches"),
                );
                resp.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
                resp
            }
        }
    }
}

/// One access-log line per request on stderr, and the counters.
async fn access_log(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let start = Instant::now();
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let peer = req.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.to_string()).unwrap_or_else(|| "-".into());
    let resp = next.run(req).await;
    let secs = start.elapsed().as_secs_f64();
    let items = resp.extensions().get::<Items>().map_or(0, |i| i.0);
    let status = resp.status().as_u16();
    let route = ROUTES.iter().copied().find(|r| *r == path).unwrap_or("other");
    app.metrics.record(route, status, items, secs);
    if !app.quiet {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs_f64();
        eprintln!("{now:.3} {peer} \"{method} {path}\" {status} {items} items {:.1}ms", secs * 1e3);
    }
    resp
}

// ---------------------------------------------------------------------------------------------
// Running work on the verifier's pool

/// Set when the request is dropped (its deadline passed, or the client went away): the items not
/// yet started are skipped.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Runs `work` on the verifier's rayon pool and waits for it without blocking the async threads.
async fn on_pool<T: Send + 'static>(
    app: &Arc<App>,
    work: impl FnOnce(&App, &AtomicBool) -> Result<T, Fail> + Send + 'static,
) -> Result<T, Response> {
    let cancel = Arc::new(AtomicBool::new(false));
    let _guard = CancelOnDrop(cancel.clone());
    let (tx, rx) = oneshot::channel();
    let shared = app.clone();
    app.pool.spawn(move || {
        let result = catch_unwind(AssertUnwindSafe(|| work(&shared, &cancel)));
        let _ = tx.send(result);
    });
    match rx.await {
        Ok(Ok(result)) => result.map_err(IntoResponse::into_response),
        Ok(Err(_)) => Err(error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal error: the verifier panicked on this request (please report it)",
        )),
        Err(_) => {
            Err(error(StatusCode::INTERNAL_SERVER_ERROR, "internal error: the verifier pool dropped the request"))
        }
    }
}

/// Reads the body (its size and time bounded), then marks the request as scoring.
fn body_bytes(body: Result<Bytes, BytesRejection>, phase: Option<&Phase>, app: &App) -> Result<Bytes, Fail> {
    let bytes = body.map_err(|rejection| {
        let status = rejection.status();
        if status == StatusCode::PAYLOAD_TOO_LARGE {
            fail(status, format!("the request body is larger than {} bytes (--max-body)", app.max_body))
        } else {
            fail(status, format!("could not read the request body: {}", rejection.body_text()))
        }
    })?;
    if let Some(p) = phase {
        p.0.store(SCORING, Ordering::Relaxed);
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(fail(StatusCode::BAD_REQUEST, "the request body is empty"));
    }
    Ok(bytes)
}

fn parse_json(bytes: &[u8]) -> Result<Value, Fail> {
    serde_json::from_slice(bytes).map_err(|e| fail(StatusCode::BAD_REQUEST, format!("invalid JSON: {e}")))
}

// ---------------------------------------------------------------------------------------------
// Grading one (gold, response) pair

/// One graded response.
struct Graded {
    correct: bool,
    reward: f64,
    status: Status,
    format_ok: Option<bool>,
}

fn grade(gold: &str, response: &str, cfg: &Config, format_weight: Option<f64>) -> Graded {
    let score = Gold::new(gold, cfg).score(response, cfg);
    let format_ok = format_weight.map(|_| is_well_formed(response));
    let reward = match (format_ok, format_weight) {
        (Some(ok), Some(w)) => total_reward(score.reward, ok, w),
        _ => score.reward,
    };
    Graded { correct: score.correct, reward, status: score.status, format_ok }
}

/// Grades pairs in parallel, in order; `None` for the ones skipped after a cancel.
fn grade_all(pairs: &[(String, String)], app: &App, cancel: &AtomicBool) -> Result<Vec<Graded>, Fail> {
    let graded: Vec<Option<Graded>> = pairs
        .par_iter()
        .map(|(gold, response)| {
            (!cancel.load(Ordering::Relaxed)).then(|| grade(gold, response, &app.lines.cfg, app.lines.format_weight))
        })
        .collect();
    graded.into_iter().collect::<Option<Vec<_>>>().ok_or_else(|| fail(StatusCode::SERVICE_UNAVAILABLE, "cancelled"))
}

/// A gold answer: a string or a number (as its decimal text).
fn gold_text(field: &str, v: &Value) -> Result<String, Fail> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        other => Err(wrong_type(field, "a string or a number", other)),
    }
}

fn wrong_type(field: &str, expected: &str, found: &Value) -> Fail {
    fail(StatusCode::BAD_REQUEST, format!("field `{field}` must be {expected}, found {}", type_name(found)))
}

fn as_object<'a>(v: &'a Value, expected: &str) -> Result<&'a Map<String, Value>, Fail> {
    v.as_object().ok_or_else(|| {
        fail(StatusCode::BAD_REQUEST, format!("the body is {}, expected an object with {expected}", type_name(v)))
    })
}

/// The field at `path` (or the default name), or a 400 naming it.
fn field<'a>(body: &'a Value, path: Option<&FieldPath>, default: &str) -> Result<(String, &'a Value), Fail> {
    let (name, found) = match path {
        Some(p) => (p.to_string(), p.get(body)),
        None => (default.to_string(), body.get(default)),
    };
    match found {
        Some(v) => Ok((name, v)),
        None => Err(fail(StatusCode::BAD_REQUEST, format!("missing field `{name}`"))),
    }
}

fn string_list(name: &str, v: &Value) -> Result<Vec<String>, Fail> {
    let Value::Array(items) = v else {
        return Err(wrong_type(name, "a list of strings", v));
    };
    items
        .iter()
        .enumerate()
        .map(|(k, item)| match item {
            Value::String(s) => Ok(s.clone()),
            other => Err(wrong_type(&format!("{name}[{k}]"), "a string", other)),
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Routes

/// OpenRLHF: `{"query": [...], "prompts": [...], "labels": [...]}` ->
/// `{"rewards": [...], "scores": [...], "extra_logs": {...}}`.
async fn get_reward(
    State(app): State<Arc<App>>,
    phase: Option<axum::Extension<Phase>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let bytes = match body_bytes(body, phase.as_ref().map(|p| &p.0), &app) {
        Ok(b) => b,
        Err(f) => return f.into_response(),
    };
    let result = on_pool(&app, move |app, cancel| {
        let body = parse_json(&bytes)?;
        let pairs = openrlhf_pairs(&body, &app.fields)?;
        let graded = grade_all(&pairs, app, cancel)?;
        let list = |f: &dyn Fn(&Graded) -> f64| -> Value { graded.iter().map(f).collect() };
        let flag = |b: bool| if b { 1.0 } else { 0.0 };
        let mut logs = Map::new();
        logs.insert("correct".into(), list(&|g| flag(g.correct)));
        logs.insert("no_answer".into(), list(&|g| flag(g.status == Status::NoAnswer)));
        logs.insert("limit".into(), list(&|g| flag(g.status == Status::Limit)));
        logs.insert("ambiguous".into(), list(&|g| flag(g.status == Status::Ambiguous)));
        logs.insert("invalid_gold".into(), list(&|g| flag(g.status == Status::InvalidGold)));
        if app.lines.format_weight.is_some() {
            logs.insert("format_ok".into(), list(&|g| flag(g.format_ok == Some(true))));
        }
        let out = json!({
            "rewards": list(&|g| g.reward),
            "scores": list(&|g| flag(g.correct)),
            "extra_logs": logs,
        });
        Ok((out.to_string(), graded.len()))
    })
    .await;
    match result {
        Ok((body, n)) => json_response(body, n),
        Err(resp) => resp,
    }
}

/// The (gold, response) pairs of an OpenRLHF body: each response is its query after its prompt
/// (the whole query when the prompt is not a prefix of it).
fn openrlhf_pairs(body: &Value, fields: &FieldSpec) -> Result<Vec<(String, String)>, Fail> {
    as_object(body, "`query`, `prompts` and `labels` (OpenRLHF)")?;
    let (gold_name, gold_value) = field(body, fields.gold.as_ref(), "labels")?;
    let Value::Array(labels) = gold_value else {
        return Err(wrong_type(&gold_name, "a list of strings or numbers", gold_value));
    };
    let golds: Vec<String> =
        labels.iter().enumerate().map(|(k, v)| gold_text(&format!("{gold_name}[{k}]"), v)).collect::<Result<_, _>>()?;
    let (resp_name, responses) = match &fields.response {
        Some(path) => {
            let (name, v) = field(body, Some(path), "")?;
            let list = string_list(&name, v)?;
            (name, list)
        }
        None => {
            let (_, q) = field(body, None, "query")?;
            let queries = string_list("query", q)?;
            let responses = match body.get("prompts") {
                None | Some(Value::Null) => queries,
                Some(p) => {
                    let prompts = string_list("prompts", p)?;
                    if prompts.len() != queries.len() {
                        return Err(fail(
                            StatusCode::BAD_REQUEST,
                            format!("`prompts` has {} items but `query` has {}", prompts.len(), queries.len()),
                        ));
                    }
                    queries
                        .into_iter()
                        .zip(&prompts)
                        .map(|(q, p)| match q.strip_prefix(p.as_str()) {
                            Some(rest) => rest.to_string(),
                            None => q,
                        })
                        .collect()
                }
            };
            ("query".to_string(), responses)
        }
    };
    if golds.len() != responses.len() {
        return Err(fail(
            StatusCode::BAD_REQUEST,
            format!("`{gold_name}` has {} items but `{resp_name}` has {}", golds.len(), responses.len()),
        ));
    }
    Ok(golds.into_iter().zip(responses).collect())
}

/// slime: `{"prompt", "response", "label"}` -> the reward, a bare JSON number.
async fn slime(
    State(app): State<Arc<App>>,
    phase: Option<axum::Extension<Phase>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let bytes = match body_bytes(body, phase.as_ref().map(|p| &p.0), &app) {
        Ok(b) => b,
        Err(f) => return f.into_response(),
    };
    let result = on_pool(&app, move |app, _cancel| {
        let body = parse_json(&bytes)?;
        as_object(&body, "`response` and `label` (slime)")?;
        let (gold_name, gold_value) = field(&body, app.fields.gold.as_ref(), "label")?;
        let gold = gold_text(&gold_name, gold_value)?;
        let (resp_name, resp_value) = field(&body, app.fields.response.as_ref(), "response")?;
        let Value::String(response) = resp_value else {
            return Err(wrong_type(&resp_name, "a string", resp_value));
        };
        let g = grade(&gold, response, &app.lines.cfg, app.lines.format_weight);
        Ok(Value::from(g.reward).to_string())
    })
    .await;
    match result {
        Ok(body) => json_response(body, 1),
        Err(resp) => resp,
    }
}

/// `rlverify score`'s rows: JSONL in, JSONL out; or a JSON list in, a JSON list out. A malformed
/// row gets `score`'s error row (`{"line": N, "error": ...}`) and the others are still scored.
async fn batch(
    State(app): State<Arc<App>>,
    phase: Option<axum::Extension<Phase>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let bytes = match body_bytes(body, phase.as_ref().map(|p| &p.0), &app) {
        Ok(b) => b,
        Err(f) => return f.into_response(),
    };
    let as_list = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
    let result = on_pool(&app, move |app, cancel| {
        let lines: Vec<Line> = if as_list {
            let Value::Array(rows) = parse_json(&bytes)? else {
                return Err(fail(StatusCode::BAD_REQUEST, "the body is not a JSON list of rows"));
            };
            rows.iter()
                .enumerate()
                .map(|(k, row)| Line { number: k as u64 + 1, bytes: serde_json::to_vec(row).unwrap_or_default() })
                .collect()
        } else {
            let mut chunks = LineChunks::new(Box::new(std::io::Cursor::new(bytes)));
            chunks
                .next_chunk(usize::MAX, usize::MAX)
                .map_err(|e| fail(StatusCode::BAD_REQUEST, format!("could not read the rows: {e}")))?
        };
        let scored: Vec<Option<(String, usize)>> = lines
            .par_iter()
            .map(|line| {
                (!cancel.load(Ordering::Relaxed)).then(|| {
                    let s = score_line(line, &app.lines);
                    (s.json, s.items.len())
                })
            })
            .collect();
        let scored: Vec<(String, usize)> = scored
            .into_iter()
            .collect::<Option<_>>()
            .ok_or_else(|| fail(StatusCode::SERVICE_UNAVAILABLE, "cancelled"))?;
        let items = scored.iter().map(|(_, n)| n).sum::<usize>();
        let rows: Vec<&str> = scored.iter().map(|(j, _)| j.as_str()).collect();
        let text = if as_list { format!("[{}]", rows.join(",")) } else { rows.join("\n") + "\n" };
        Ok((text, items))
    })
    .await;
    match result {
        Ok((text, items)) => {
            let mut resp = json_response(text, items);
            if !as_list {
                resp.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/x-ndjson"));
            }
            resp
        }
        Err(resp) => resp,
    }
}

// ---------------------------------------------------------------------------------------------
// Metrics

struct Metrics {
    start: Instant,
    /// Requests by route and status code.
    requests: Mutex<BTreeMap<(&'static str, u16), u64>>,
    items: AtomicU64,
    rejected: AtomicU64,
    latency: Mutex<Latency>,
}

#[derive(Default)]
struct Latency {
    recent: VecDeque<f64>,
    sum: f64,
    count: u64,
}

impl Metrics {
    fn new() -> Self {
        Metrics {
            start: Instant::now(),
            requests: Mutex::new(BTreeMap::new()),
            items: AtomicU64::new(0),
            rejected: AtomicU64::new(0),
            latency: Mutex::new(Latency::default()),
        }
    }

    fn record(&self, route: &'static str, status: u16, items: usize, secs: f64) {
        if let Ok(mut m) = self.requests.lock() {
            *m.entry((route, status)).or_insert(0) += 1;
        }
        self.items.fetch_add(items as u64, Ordering::Relaxed);
        if matches!(route, "/get_reward" | "/slime" | "/score") {
            if let Ok(mut l) = self.latency.lock() {
                if l.recent.len() == LATENCY_WINDOW {
                    l.recent.pop_front();
                }
                l.recent.push_back(secs);
                l.sum += secs;
                l.count += 1;
            }
        }
    }
}

async fn metrics(State(app): State<Arc<App>>) -> Response {
    let m = &app.metrics;
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    line("# HELP rlverify_requests_total HTTP requests answered, by route and status code.".into());
    line("# TYPE rlverify_requests_total counter".into());
    let (mut errors, requests) = (0u64, m.requests.lock().map(|r| r.clone()).unwrap_or_default());
    for ((route, code), n) in &requests {
        line(format!("rlverify_requests_total{{route=\"{route}\",code=\"{code}\"}} {n}"));
        if *code >= 400 {
            errors += n;
        }
    }
    line("# HELP rlverify_errors_total Requests answered with a 4xx or 5xx status.".into());
    line("# TYPE rlverify_errors_total counter".into());
    line(format!("rlverify_errors_total {errors}"));
    line("# HELP rlverify_rejected_total Requests refused with 503 because every slot was taken.".into());
    line("# TYPE rlverify_rejected_total counter".into());
    line(format!("rlverify_rejected_total {}", m.rejected.load(Ordering::Relaxed)));
    line("# HELP rlverify_items_total Responses scored.".into());
    line("# TYPE rlverify_items_total counter".into());
    line(format!("rlverify_items_total {}", m.items.load(Ordering::Relaxed)));
    line("# HELP rlverify_in_flight Scoring requests being handled now.".into());
    line("# TYPE rlverify_in_flight gauge".into());
    line(format!("rlverify_in_flight {}", app.max_in_flight - app.slots.available_permits()));
    line(format!(
        "# HELP rlverify_request_duration_seconds Scoring request latency (quantiles over the last {LATENCY_WINDOW})."
    ));
    line("# TYPE rlverify_request_duration_seconds summary".into());
    let (mut recent, sum, count) = match m.latency.lock() {
        Ok(l) => (l.recent.iter().copied().collect::<Vec<f64>>(), l.sum, l.count),
        Err(_) => (Vec::new(), 0.0, 0),
    };
    recent.sort_by(f64::total_cmp);
    for q in [0.5, 0.9, 0.99] {
        let v = if recent.is_empty() {
            f64::NAN
        } else {
            recent[((q * recent.len() as f64).ceil() as usize).clamp(1, recent.len()) - 1]
        };
        line(format!("rlverify_request_duration_seconds{{quantile=\"{q}\"}} {v}"));
    }
    line(format!("rlverify_request_duration_seconds_sum {sum}"));
    line(format!("rlverify_request_duration_seconds_count {count}"));
    line("# HELP rlverify_uptime_seconds Seconds since the server started.".into());
    line("# TYPE rlverify_uptime_seconds gauge".into());
    line(format!("rlverify_uptime_seconds {:.3}", m.start.elapsed().as_secs_f64()));
    let mut resp = out.into_response();
    resp.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4"));
    resp
}
