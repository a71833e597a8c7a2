//! The routes: request shapes in, rewards out. Parsing and scoring run on the verifier's pool.

use super::admit::{admit, fail, Admitted, Fail, RETRY_AFTER_SECS};
use super::metrics::{self, ROUTES};
use super::App;
use crate::commands::score::score_line;
use crate::commands::{Line, LineChunks};
use axum::body::Bytes;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use rayon::prelude::*;
use rlverify::format::{is_well_formed, total_reward};
use rlverify::input::{type_name, FieldPath};
use rlverify::{Gold, Status};
use serde_json::{json, Map, Value};
use std::net::SocketAddr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::oneshot;

/// Invalid golds named in the access log of one request (the count is always given).
const NAMED_INVALID: usize = 3;

pub(super) fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/get_reward", post(get_reward))
        .route("/slime", post(slime))
        .route("/score", post(batch))
        .route("/health", get(health))
        .route("/metrics", get(metrics_text))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(app.clone(), access_log))
        .with_state(app)
}

// ---------------------------------------------------------------------------------------------
// Errors and small responses

/// A JSON error response: `{"error": reason}`; a 503 says when to retry.
fn error(status: StatusCode, reason: impl Into<String>) -> Response {
    let body = json!({ "error": reason.into() }).to_string();
    let mut resp = (status, [(header::CONTENT_TYPE, "application/json")], body).into_response();
    if status == StatusCode::SERVICE_UNAVAILABLE {
        resp.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
    }
    resp
}

impl IntoResponse for Fail {
    fn into_response(self) -> Response {
        error(self.0, self.1)
    }
}

/// What a scoring route answers: its body, and what the access log and the counters say.
#[derive(Clone, Default)]
struct Answer {
    body: String,
    ndjson: bool,
    items: usize,
    /// Items scored `invalid_gold`, and the first few reasons.
    invalid: Vec<String>,
}

/// The summary of an answer, for the access log and the counters.
#[derive(Clone)]
struct Summary {
    items: usize,
    invalid: Vec<String>,
}

impl IntoResponse for Answer {
    fn into_response(self) -> Response {
        let kind = if self.ndjson { "application/x-ndjson" } else { "application/json" };
        let mut resp = ([(header::CONTENT_TYPE, kind)], self.body).into_response();
        resp.extensions_mut().insert(Summary { items: self.items, invalid: self.invalid });
        resp
    }
}

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
    let q = &app.queue;
    let body = json!({ "status": "ok", "in_flight": q.scoring(), "queued": q.queued(), "reading": q.reading() });
    Answer { body: body.to_string(), ..Answer::default() }.into_response()
}

async fn metrics_text(State(app): State<Arc<App>>) -> Response {
    let mut resp = metrics::render(&app).into_response();
    resp.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4"));
    resp
}

/// One access-log line per request on stderr, and the counters.
async fn access_log(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let start = Instant::now();
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let peer = req.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.to_string()).unwrap_or_else(|| "-".into());
    let resp = next.run(req).await;
    let secs = start.elapsed().as_secs_f64();
    let (items, invalid) = match resp.extensions().get::<Summary>() {
        Some(s) => (s.items, s.invalid.as_slice()),
        None => (0, &[][..]),
    };
    let status = resp.status().as_u16();
    let route = ROUTES.iter().copied().find(|r| *r == path).unwrap_or("other");
    app.metrics.record(route, status, items, invalid.len(), secs);
    if !app.quiet {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs_f64();
        let mut note = String::new();
        if !invalid.is_empty() {
            let named: Vec<&str> = invalid.iter().take(NAMED_INVALID).map(String::as_str).collect();
            let more = if invalid.len() > NAMED_INVALID { ", ..." } else { "" };
            note = format!(" ({} invalid gold: {}{more})", invalid.len(), named.join(", "));
        }
        eprintln!("{now:.3} {peer} \"{method} {path}\" {status} {items} items{note} {:.1}ms", secs * 1e3);
    }
    resp
}

// ---------------------------------------------------------------------------------------------
// A scoring request: admitted through the queue, then parsed and scored on the verifier's pool

/// Set when the request is dropped (its deadline passed, or the client went away): the items not
/// yet started are skipped.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

type Work = fn(&App, Bytes, &AtomicBool) -> Result<Answer, Fail>;

/// Admits `req` ([`admit`]), runs `work` on its body on the verifier's pool, and bounds the whole
/// by `--request-timeout`. The slot and the memory are given back when `work` returns.
async fn scoring(app: Arc<App>, req: Request, work: Work) -> Response {
    let _active = app.queue.enter();
    let deadline = Instant::now() + app.limits.request;
    let admitted = match admit(&app, req, deadline).await {
        Ok(a) => a,
        Err(f) => return f.into_response(),
    };
    let cancel = Arc::new(AtomicBool::new(false));
    let _guard = CancelOnDrop(cancel.clone());
    let (tx, rx) = oneshot::channel();
    let shared = app.clone();
    app.pool.spawn(move || {
        let admitted: Admitted = admitted;
        let result = catch_unwind(AssertUnwindSafe(|| work(&shared, admitted.body.clone(), &cancel)));
        drop(admitted);
        let _ = tx.send(result);
    });
    match tokio::time::timeout_at(deadline.into(), rx).await {
        Ok(Ok(Ok(Ok(answer)))) => answer.into_response(),
        Ok(Ok(Ok(Err(f)))) => f.into_response(),
        Ok(Ok(Err(_))) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal error: the verifier panicked on this request (please report it)",
        ),
        Ok(Err(_)) => error(StatusCode::INTERNAL_SERVER_ERROR, "internal error: the verifier pool dropped the request"),
        Err(_) => error(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "scoring did not finish within {}s (--request-timeout); send smaller batches",
                app.limits.request.as_secs_f64()
            ),
        ),
    }
}

/// The body as JSON; a body that is not UTF-8 is named as such, with the first bad byte
/// (counted from 1), instead of serde's "invalid unicode code point".
fn parse_json(bytes: &[u8]) -> Result<Value, Fail> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        fail(StatusCode::BAD_REQUEST, format!("the request body is not valid UTF-8 (at byte {})", e.valid_up_to() + 1))
    })?;
    serde_json::from_str(text).map_err(|e| fail(StatusCode::BAD_REQUEST, format!("invalid JSON: {e}")))
}

// ---------------------------------------------------------------------------------------------
// Reading the fields of a request

/// A gold answer, or why the item has none: a string or a number (as its decimal text), or a
/// list of exactly one of them, as `rlverify score` reads golds.
type GoldText = Result<String, String>;

fn gold_text(field: &str, v: &Value) -> GoldText {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Array(items) if items.len() == 1 && (items[0].is_string() || items[0].is_number()) => {
            gold_text(field, &items[0])
        }
        other => Err(format!("`{field}` is {}", type_name(other))),
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

/// The field at `path` when given and present, else the protocol's own `default` field; `None`
/// when neither is there. The name says which one was read.
fn field<'a>(body: &'a Value, path: Option<&FieldPath>, default: &str) -> Option<(String, &'a Value)> {
    if let Some(v) = path.and_then(|p| p.get(body)) {
        return path.map(|p| (p.to_string(), v));
    }
    body.get(default).map(|v| (default.to_string(), v))
}

/// The field, or a 400 naming what was looked for.
fn required<'a>(body: &'a Value, path: Option<&FieldPath>, default: &str) -> Result<(String, &'a Value), Fail> {
    field(body, path, default).ok_or_else(|| {
        let wanted = match path {
            Some(p) => format!("`{p}` (or `{default}`)"),
            None => format!("`{default}`"),
        };
        fail(StatusCode::BAD_REQUEST, format!("missing field {wanted}"))
    })
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

/// The response in an OpenRLHF query: the text after the prompt (after its last occurrence when
/// decoding changed what precedes it), or the whole query when the prompt is not in it.
pub(super) fn response_part<'a>(query: &'a str, prompt: &str) -> &'a str {
    if prompt.is_empty() {
        return query;
    }
    if let Some(rest) = query.strip_prefix(prompt) {
        return rest;
    }
    match query.rfind(prompt) {
        Some(at) => &query[at + prompt.len()..],
        None => query,
    }
}

// ---------------------------------------------------------------------------------------------
// Grading

/// One graded response.
struct Graded {
    correct: bool,
    reward: f64,
    status: Status,
    format_ok: Option<bool>,
}

/// Grades one response; an unreadable gold is `invalid_gold` with `--invalid-gold-reward`.
fn grade(gold: Result<&str, &str>, response: &str, app: &App) -> Graded {
    let (cfg, weight) = (&app.lines.cfg, app.lines.format_weight);
    let format_ok = weight.map(|_| is_well_formed(response));
    let invalid = Graded { correct: false, reward: app.invalid_gold_reward, status: Status::InvalidGold, format_ok };
    let Ok(gold) = gold else { return invalid };
    let score = Gold::new(gold, cfg).score(response, cfg);
    if score.status == Status::InvalidGold {
        return invalid;
    }
    let reward = match (format_ok, weight) {
        (Some(ok), Some(w)) => total_reward(score.reward, ok, w),
        _ => score.reward,
    };
    Graded { correct: score.correct, reward, status: score.status, format_ok }
}

/// Grades the items in parallel, in order; a cancel skips the rest and fails the request.
fn grade_all(items: &[(GoldText, String)], app: &App, cancel: &AtomicBool) -> Result<Vec<Graded>, Fail> {
    let graded: Vec<Option<Graded>> = items
        .par_iter()
        .map(|(gold, response)| {
            (!cancel.load(Ordering::Relaxed)).then(|| grade(gold.as_deref().map_err(String::as_str), response, app))
        })
        .collect();
    graded.into_iter().collect::<Option<Vec<_>>>().ok_or_else(|| fail(StatusCode::SERVICE_UNAVAILABLE, "cancelled"))
}

/// The reasons of the unreadable golds, for the access log.
fn invalid_reasons(items: &[(GoldText, String)], graded: &[Graded]) -> Vec<String> {
    items
        .iter()
        .zip(graded)
        .filter(|(_, g)| g.status == Status::InvalidGold)
        .map(|((gold, _), _)| match gold {
            Err(why) => why.clone(),
            Ok(text) => format!("{text:?} cannot be read"),
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Routes

/// OpenRLHF: `{"query": [...], "prompts": [...], "labels": [...]}` ->
/// `{"rewards": [...], "scores": [...], "extra_logs": {...}}`.
async fn get_reward(State(app): State<Arc<App>>, req: Request) -> Response {
    scoring(app, req, |app, bytes, cancel| {
        let items = openrlhf_items(&parse_json(&bytes)?, app)?;
        let graded = grade_all(&items, app, cancel)?;
        let list = |f: &dyn Fn(&Graded) -> f64| -> Value { graded.iter().map(f).collect() };
        let flag = |b: bool| if b { 1.0 } else { 0.0 };
        let mut out = Map::new();
        out.insert("rewards".into(), list(&|g| g.reward));
        out.insert("scores".into(), list(&|g| flag(g.correct)));
        if app.extra_logs {
            let mut logs = Map::new();
            logs.insert("correct".into(), list(&|g| flag(g.correct)));
            for status in [Status::NoAnswer, Status::Limit, Status::Ambiguous, Status::InvalidGold] {
                logs.insert(status.as_str().into(), list(&|g| flag(g.status == status)));
            }
            if app.lines.format_weight.is_some() {
                logs.insert("format_ok".into(), list(&|g| flag(g.format_ok == Some(true))));
            }
            out.insert("extra_logs".into(), Value::Object(logs));
        }
        let invalid = invalid_reasons(&items, &graded);
        Ok(Answer { body: Value::Object(out).to_string(), ndjson: false, items: graded.len(), invalid })
    })
    .await
}

/// The (gold, response) items of an OpenRLHF body: each response is its query after its prompt.
fn openrlhf_items(body: &Value, app: &App) -> Result<Vec<(GoldText, String)>, Fail> {
    as_object(body, "`query`, `prompts` and `labels` (OpenRLHF)")?;
    let (gold_name, gold_value) = required(body, app.fields.gold.as_ref(), "labels")?;
    let Value::Array(labels) = gold_value else {
        return Err(wrong_type(&gold_name, "a list", gold_value));
    };
    let golds = labels.iter().enumerate().map(|(k, v)| gold_text(&format!("{gold_name}[{k}]"), v));
    let mapped = app.fields.response.as_ref().and_then(|p| p.get(body).map(|v| (p.to_string(), v)));
    let (resp_name, responses) = match mapped {
        // A remapped response field holds the responses themselves.
        Some((name, v)) => {
            let list = string_list(&name, v)?;
            (name, list)
        }
        None => {
            let (_, q) = required(body, None, "query")?;
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
                    queries.iter().zip(&prompts).map(|(q, p)| response_part(q, p).to_string()).collect()
                }
            };
            ("query".to_string(), responses)
        }
    };
    if labels.len() != responses.len() {
        return Err(fail(
            StatusCode::BAD_REQUEST,
            format!("`{gold_name}` has {} items but `{resp_name}` has {}", labels.len(), responses.len()),
        ));
    }
    Ok(golds.zip(responses).collect())
}

/// slime: `{"prompt", "response", "label"}` -> the reward, a bare JSON number.
async fn slime(State(app): State<Arc<App>>, req: Request) -> Response {
    scoring(app, req, |app, bytes, _cancel| {
        let body = parse_json(&bytes)?;
        as_object(&body, "`response` and `label` (slime)")?;
        let (gold_name, gold_value) = required(&body, app.fields.gold.as_ref(), "label")?;
        let gold = gold_text(&gold_name, gold_value);
        let (resp_name, resp_value) = required(&body, app.fields.response.as_ref(), "response")?;
        let Value::String(response) = resp_value else {
            return Err(wrong_type(&resp_name, "a string", resp_value));
        };
        let item = [(gold, response.clone())];
        let graded = [grade(item[0].0.as_deref().map_err(String::as_str), response, app)];
        let invalid = invalid_reasons(&item, &graded);
        Ok(Answer { body: Value::from(graded[0].reward).to_string(), ndjson: false, items: 1, invalid })
    })
    .await
}

/// `rlverify score`'s rows: JSONL in, JSONL out; or a JSON list in, a JSON list out. A malformed
/// row gets `score`'s error row (`{"line": N, "error": ...}`) and the others are still scored.
async fn batch(State(app): State<Arc<App>>, req: Request) -> Response {
    scoring(app, req, |app, bytes, cancel| {
        let as_list = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
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
        let body = if as_list { format!("[{}]", rows.join(",")) } else { rows.join("\n") + "\n" };
        Ok(Answer { body, ndjson: !as_list, items, invalid: Vec::new() })
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_response_is_the_query_after_its_prompt() {
        assert_eq!(response_part("Q: 1+1?\nA: 2</s>", "Q: 1+1?\n"), "A: 2</s>");
        // Decoding added a BOS token before the prompt: the text after the prompt still counts.
        assert_eq!(response_part("<s> Q: \\boxed{7}?\nA: 2", "Q: \\boxed{7}?\n"), "A: 2");
        assert_eq!(response_part("no prompt here", "Q:"), "no prompt here");
        assert_eq!(response_part("text", ""), "text");
    }

    #[test]
    fn golds_are_read_as_score_reads_them() {
        assert_eq!(gold_text("labels[0]", &json!("1/2")), Ok("1/2".to_string()));
        assert_eq!(gold_text("labels[0]", &json!(7)), Ok("7".to_string()));
        assert_eq!(gold_text("labels[0]", &json!(["5"])), Ok("5".to_string()));
        assert_eq!(gold_text("labels[3]", &json!(null)), Err("`labels[3]` is null".to_string()));
        assert_eq!(gold_text("label", &json!({"a": 1})), Err("`label` is an object".to_string()));
        assert_eq!(gold_text("label", &json!(["1", "2"])), Err("`label` is a list".to_string()));
    }
}
