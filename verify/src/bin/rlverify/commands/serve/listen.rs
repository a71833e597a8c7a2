//! The listening socket, the connections and the shutdown.
//!
//! The connections are hyper's HTTP/1 with a header read timeout (`--header-timeout`), which
//! axum's own `serve` does not set. The socket's backlog is deep enough for a burst of thousands
//! of connections, and the open-file limit is raised to its hard limit, so a burst waits in the
//! kernel instead of failing to connect.

use super::routes::router;
use super::App;
use anyhow::Context;
use axum::body::Body;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use rlcli::Exit;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::watch;
use tower_service::Service;

/// Connections the kernel queues before the server accepts them (capped by `somaxconn`).
const LISTEN_BACKLOG: u32 = 4096;
/// Extra seconds given to accepted requests after a signal, beyond `--request-timeout`.
const SHUTDOWN_SLACK: Duration = Duration::from_secs(5);
/// Time given to the last answers to be written after the last request in flight ended.
const DRAIN_SLACK: Duration = Duration::from_secs(2);
/// Pause after an `accept` that failed for lack of resources (too many open files).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

pub(super) async fn serve(app: Arc<App>, host: &str, port: u16) -> anyhow::Result<Exit> {
    let open_files = raise_open_file_limit();
    let listener = bind(host, port).await?;
    let addr = listener.local_addr().context("failed to read the bound address")?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on http://{addr}").and_then(|()| out.flush()).context("failed to write stdout")?;
    }
    let (_, queue_bytes) = app.queue.held_bytes();
    let l = &app.limits;
    eprintln!(
        "rlverify serve: {} verifier threads, {} requests scored at once, queue {queue_bytes} bytes, bodies up to {} bytes; \
         timeouts: head {}s, body {}s, queue {}s, request {}s{}",
        app.pool.current_num_threads(),
        app.queue.max_in_flight(),
        l.max_body,
        l.header.as_secs_f64(),
        l.body.as_secs_f64(),
        l.queue.as_secs_f64(),
        l.request.as_secs_f64(),
        open_files.map(|n| format!("; {n} open files")).unwrap_or_default(),
    );
    let router = router(app.clone());
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(app.limits.header);
    // Connections hold `done_rx` clones; `done_tx.closed()` resolves when the last one ends.
    let (stop_tx, stop_rx) = watch::channel(false);
    let (done_tx, done_rx) = watch::channel(());
    let signal = shutdown_signal();
    tokio::pin!(signal);
    let mut last_accept_error: Option<Instant> = None;
    let which = loop {
        tokio::select! {
            which = &mut signal => break which,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    connection(stream, peer, router.clone(), builder.clone(), stop_rx.clone(), done_rx.clone());
                }
                Err(e) => {
                    // Too many open files and the like: say so (once a minute) and let the
                    // kernel hold the connections a moment; a reset connection is the client's.
                    if last_accept_error.is_none_or(|t| t.elapsed() > Duration::from_secs(60)) {
                        eprintln!("rlverify serve: accepting a connection failed: {e}");
                        last_accept_error = Some(Instant::now());
                    }
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                }
            }
        }
    };
    drop(listener);
    eprintln!(
        "rlverify serve: {which}: no new connections; bodies still arriving get 503 (their clients retry); \
         finishing the requests accepted"
    );
    app.shutdown.send_replace(true);
    let _ = stop_tx.send(true);
    drop(done_rx);
    // The server stops once every connection is closed. A connection with no request under way
    // (a head still arriving) may not close at once: when no scoring request is left and answers
    // had time to go out, the rest are cut. Nothing waits longer than a request's deadline.
    let grace = app.limits.request + SHUTDOWN_SLACK;
    let drained = async {
        let start = Instant::now();
        while app.queue.active() > 0 && start.elapsed() < grace {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tokio::time::sleep(DRAIN_SLACK).await;
        app.queue.active() == 0
    };
    tokio::select! {
        () = done_tx.closed() => {
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

/// Serves one connection until it closes; a signal lets its current request finish, then closes it.
fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    router: axum::Router,
    builder: http1::Builder,
    mut stop: watch::Receiver<bool>,
    done: watch::Receiver<()>,
) {
    tokio::spawn(async move {
        let _ = stream.set_nodelay(true);
        let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
            let mut req = req.map(Body::new);
            req.extensions_mut().insert(ConnectInfo(peer));
            // A router is always ready: no `poll_ready` is needed before `call`.
            router.clone().call(req)
        });
        let conn = builder.serve_connection(TokioIo::new(stream), service);
        tokio::pin!(conn);
        tokio::select! {
            _ = conn.as_mut() => return drop(done),
            _ = stop.wait_for(|stop| *stop) => {}
        }
        conn.as_mut().graceful_shutdown();
        let _ = conn.await;
        drop(done);
    });
}

/// A listening socket on the first address `host` resolves to that takes one.
async fn bind(host: &str, port: u16) -> anyhow::Result<TcpListener> {
    let addrs: Vec<SocketAddr> =
        tokio::net::lookup_host((host, port)).await.with_context(|| format!("cannot resolve `{host}`"))?.collect();
    let mut last = None;
    for addr in &addrs {
        let socket = if addr.is_ipv4() { TcpSocket::new_v4() } else { TcpSocket::new_v6() };
        let listener = socket.and_then(|s| {
            #[cfg(unix)]
            s.set_reuseaddr(true)?;
            s.bind(*addr)?;
            s.listen(LISTEN_BACKLOG)
        });
        match listener {
            Ok(l) => return Ok(l),
            Err(e) => last = Some(e),
        }
    }
    match last {
        Some(e) => Err(e).with_context(|| format!("failed to listen on {host}:{port}")),
        None => anyhow::bail!("`{host}` resolves to no address"),
    }
}

/// Raises the soft limit on open files to the hard limit (a burst of requests is a burst of
/// sockets; many systems start processes at 1024). Returns the limit in force.
#[cfg(unix)]
fn raise_open_file_limit() -> Option<libc::rlim_t> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `getrlimit` writes one `rlimit` through a pointer to a live local of that type.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return None;
    }
    if lim.rlim_cur < lim.rlim_max {
        let raised = libc::rlimit { rlim_cur: lim.rlim_max, rlim_max: lim.rlim_max };
        // SAFETY: `setrlimit` reads one `rlimit` through a pointer to a live local of that type.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            return Some(raised.rlim_cur);
        }
    }
    Some(lim.rlim_cur)
}

#[cfg(not(unix))]
fn raise_open_file_limit() -> Option<u64> {
    None
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
