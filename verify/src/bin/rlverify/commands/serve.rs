//! `rlverify serve`: an HTTP reward server (axum on hyper and tokio) for RL trainers.
//!
//! Routes: `POST /get_reward` (OpenRLHF's remote reward model), `POST /slime` (slime's `remote_rm`),
//! `POST /score` (the rows `rlverify score` reads, answered with its output rows), `GET /health`,
//! `GET /metrics` (Prometheus text).
//!
//! What a scoring request goes through ([`admit`]): its head must arrive within
//! `--header-timeout` (hyper closes the connection otherwise) and its body within
//! `--body-timeout` (408). Bodies are held within `--max-queue` bytes: beyond it the server stops
//! reading, so a burst waits on its connections (TCP backpressure) instead of being refused. A
//! read request then waits, in arrival order, for one of `--max-in-flight` scoring slots; no slot
//! is held while a body is still arriving. A request that cannot start within `--queue-timeout`
//! gets 503 with `Retry-After`; everything, scoring included, is bounded by `--request-timeout`.
//!
//! The async threads only move bytes: parsing the JSON and verifying run on the verifier's rayon
//! pool ([`routes`]), and the handler awaits the result. An item whose gold cannot be read is
//! scored `invalid_gold` and the rest of its request goes on. SIGINT/SIGTERM stop accepting, answer
//! 503 to the requests whose body has not fully arrived (their clients retry) and wait for the
//! requests accepted, those with a whole body ([`listen`]).

mod admit;
mod listen;
mod metrics;
mod routes;

use super::score::Ctx as LineCtx;
use super::thread_pool;
use crate::args::ServeArgs;
use anyhow::Context;
use rlcli::Exit;
use rlverify::input::FieldSpec;
use std::sync::Arc;
use std::time::Duration;

/// What every handler shares.
struct App {
    pool: rayon::ThreadPool,
    /// Scoring options and field mapping of the batch route (exactly `rlverify score`'s).
    lines: LineCtx,
    /// The response and gold fields of the OpenRLHF and slime routes, when remapped.
    fields: FieldSpec,
    /// The reward of an `invalid_gold` item.
    invalid_gold_reward: f64,
    /// Whether `/get_reward` answers carry `extra_logs`.
    extra_logs: bool,
    limits: Limits,
    queue: admit::Queue,
    quiet: bool,
    metrics: metrics::Metrics,
    /// Turned true by SIGINT/SIGTERM: bodies still arriving are not waited for ([`admit`]).
    shutdown: tokio::sync::watch::Sender<bool>,
}

/// The size and time bounds of a request.
struct Limits {
    max_body: usize,
    header: Duration,
    body: Duration,
    queue: Duration,
    request: Duration,
}

pub fn run(args: ServeArgs) -> anyhow::Result<Exit> {
    if args.max_queue < args.max_body {
        anyhow::bail!(
            "`--max-queue` ({} bytes) must be at least `--max-body` ({} bytes): a body that fits no queue would wait forever",
            args.max_queue,
            args.max_body
        );
    }
    let pool = thread_pool(args.threads)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("rlverify-http")
        .enable_all()
        .build()
        .context("failed to start the HTTP runtime")?;
    let app = Arc::new(App {
        pool,
        lines: LineCtx {
            cfg: args.scoring.config(),
            fields: args.fields.spec(),
            format_weight: args.format.format_reward,
        },
        fields: args.fields.spec(),
        invalid_gold_reward: args.invalid_gold_reward,
        extra_logs: !args.no_extra_logs,
        limits: Limits {
            max_body: args.max_body,
            header: Duration::from_secs_f64(args.header_timeout),
            body: Duration::from_secs_f64(args.body_timeout),
            queue: Duration::from_secs_f64(args.queue_timeout),
            request: Duration::from_secs_f64(args.request_timeout),
        },
        queue: admit::Queue::new(args.max_queue, args.max_in_flight as usize),
        quiet: args.quiet,
        metrics: metrics::Metrics::new(),
        shutdown: tokio::sync::watch::Sender::new(false),
    });
    runtime.block_on(listen::serve(app, &args.host, args.port))
}
