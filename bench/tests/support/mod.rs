//! A real OpenAI-compatible HTTP server on 127.0.0.1 for the tests: deterministic completions from
//! the request's seed, `GET /v1/models`, keep-alive connections, optional TLS, and injectable
//! faults (error statuses with `Retry-After`, slow answers, dropped connections, a server that
//! dies mid-run). Every loop is bounded: the server stops when dropped or after a hard time limit,
//! whichever comes first.

#![allow(dead_code)]

use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The models `GET /v1/models` lists unless [`Behaviour::models`] says otherwise: the names the
/// tests pass as `--served-model`.
pub const DEFAULT_MODELS: [&str; 3] = ["fake", "fake-model", "org/fake-7b"];

/// A fault injected in place of a normal answer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fault {
    /// Answer HTTP 500.
    Status(u16),
    /// Wait this long before answering normally (beyond the client's timeout).
    Slow(Duration),
    /// Close the connection without answering.
    Drop,
    /// Send the headers and half the body, then close.
    DropMidBody,
    /// Answer this status with `Retry-After: <seconds>`.
    RetryAfter(u16, u64),
}

/// How the server behaves.
#[derive(Clone, Debug, Default)]
pub struct Behaviour {
    /// Faults for the first requests, in arrival order; later requests are answered normally.
    pub faults: Vec<Fault>,
    /// After this many successful answers, answer 503 to everything (a server that went away).
    pub fail_after: Option<usize>,
    /// Answer every request with this status (e.g. 400) instead.
    pub always_status: Option<u16>,
    /// Answer 503 to every Nth completion request (by arrival: the Nth, the 2Nth, ...).
    pub fail_every: Option<usize>,
    /// Use chunked transfer encoding for successful answers.
    pub chunked: bool,
    /// What `GET /v1/models` lists ([`DEFAULT_MODELS`] when `None`).
    pub models: Option<Vec<String>>,
    /// Answer `GET /v1/models` with this status instead.
    pub models_status: Option<u16>,
    /// Wait this long before each successful answer (so that requests overlap).
    pub latency: Option<Duration>,
    /// After this many successful answers the server dies: it stops listening (connections are
    /// refused) and drops every open connection, in-flight requests included, without answering.
    pub die_after: Option<usize>,
    /// Answer with `Connection: close` and one request per connection (no keep-alive).
    pub close: bool,
    /// Return at most this many choices, whatever `n` asks for.
    pub max_choices: Option<usize>,
}

/// What the server saw.
#[derive(Debug, Default)]
pub struct Log {
    /// Completion requests: (path, body), in arrival order.
    pub requests: Vec<(String, Value)>,
    /// When each completion request arrived.
    pub arrivals: Vec<Instant>,
    /// `GET /v1/models` requests.
    pub model_requests: usize,
}

/// The TLS side of a server: its certificate chain and key (DER).
pub struct TlsIdentity {
    pub cert_der: Vec<u8>,
    pub key_der: Vec<u8>,
}

pub struct FakeServer {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    /// Set when the server died ([`Behaviour::die_after`]) or was killed ([`FakeServer::kill`]).
    dead: Arc<AtomicBool>,
    pub log: Arc<Mutex<Log>>,
    pub served: Arc<AtomicUsize>,
    /// TCP connections accepted.
    pub connections: Arc<AtomicUsize>,
    tls: bool,
    handle: Option<JoinHandle<()>>,
}

/// A connection, plain or TLS.
trait Conn: Read + Write + Send {}
impl<T: Read + Write + Send> Conn for T {}

impl FakeServer {
    pub fn start(behaviour: Behaviour) -> FakeServer {
        Self::start_with(behaviour, None)
    }

    /// An `https://` server presenting `identity`.
    pub fn start_tls(behaviour: Behaviour, identity: TlsIdentity) -> FakeServer {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("protocol versions")
            .with_no_client_auth()
            .with_single_cert(
                vec![rustls::pki_types::CertificateDer::from(identity.cert_der)],
                rustls::pki_types::PrivateKeyDer::Pkcs8(identity.key_der.into()),
            )
            .expect("server certificate");
        Self::start_with(behaviour, Some(Arc::new(config)))
    }

    fn start_with(behaviour: Behaviour, tls: Option<Arc<rustls::ServerConfig>>) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let stop = Arc::new(AtomicBool::new(false));
        let dead = Arc::new(AtomicBool::new(false));
        let log = Arc::new(Mutex::new(Log::default()));
        let served = Arc::new(AtomicUsize::new(0));
        let connections = Arc::new(AtomicUsize::new(0));
        let arrivals = Arc::new(AtomicUsize::new(0));
        let behaviour = Arc::new(behaviour);
        let is_tls = tls.is_some();
        let (stop2, dead2, log2, served2, conns2) =
            (stop.clone(), dead.clone(), log.clone(), served.clone(), connections.clone());
        let handle = std::thread::spawn(move || {
            let hard_limit = Instant::now() + Duration::from_secs(120);
            let mut workers = Vec::new();
            while !stop2.load(Ordering::Relaxed) && !dead2.load(Ordering::SeqCst) && Instant::now() < hard_limit {
                match listener.accept() {
                    Ok((stream, _)) => {
                        conns2.fetch_add(1, Ordering::SeqCst);
                        let _ = stream.set_nonblocking(false);
                        let _ = stream.set_nodelay(true);
                        let server = Shared {
                            b: behaviour.clone(),
                            log: log2.clone(),
                            served: served2.clone(),
                            arrivals: arrivals.clone(),
                            stop: stop2.clone(),
                            dead: dead2.clone(),
                        };
                        let tls = tls.clone();
                        workers.push(std::thread::spawn(move || {
                            let _ = stream.set_read_timeout(Some(Duration::from_millis(50)));
                            match tls {
                                None => serve_conn(Box::new(stream), &server),
                                Some(cfg) => {
                                    let Ok(conn) = rustls::ServerConnection::new(cfg) else { return };
                                    serve_conn(Box::new(rustls::StreamOwned::new(conn, stream)), &server)
                                }
                            }
                        }));
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(2))
                    }
                    Err(_) => break,
                }
            }
            // A dead server refuses connections from now on.
            drop(listener);
            for w in workers {
                let _ = w.join();
            }
        });
        FakeServer { addr, stop, dead, log, served, connections, tls: is_tls, handle: Some(handle) }
    }

    pub fn url(&self) -> String {
        format!("{}://{}", if self.tls { "https" } else { "http" }, self.addr)
    }

    pub fn request_count(&self) -> usize {
        self.log.lock().map(|l| l.requests.len()).unwrap_or(0)
    }

    /// Kill the server now: connections are refused and in-flight requests get no answer.
    pub fn kill(&self) {
        self.dead.store(true, Ordering::SeqCst);
    }

    pub fn is_dead(&self) -> bool {
        self.dead.load(Ordering::SeqCst)
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// A port on 127.0.0.1 where nothing listens (connections are refused).
pub fn refused_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    format!("http://{addr}")
}

/// What every connection of a server shares.
struct Shared {
    b: Arc<Behaviour>,
    log: Arc<Mutex<Log>>,
    served: Arc<AtomicUsize>,
    arrivals: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    dead: Arc<AtomicBool>,
}

impl Shared {
    fn gone(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.dead.load(Ordering::SeqCst)
    }
}

/// The deterministic completion text for (seed, prompt, choice index): the number after
/// "answer is " in the prompt, or that number plus one (a wrong answer), picked by a hash.
pub fn completion_text(seed: u64, prompt: &str, index: usize) -> String {
    let gold: i64 = prompt
        .split("answer is ")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|d| d.parse().ok())
        .unwrap_or(0);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for b in prompt.bytes().chain((index as u64).to_le_bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let right = !(h >> 17).is_multiple_of(3);
    if right {
        gold.to_string()
    } else {
        (gold + 1).to_string()
    }
}

/// Read into `buf` until `done(buf)`; polls so that a stopped or dead server lets go within
/// 50 ms, and gives up on a connection idle for 5 s. `None`: closed, dead, or idle.
fn read_until(stream: &mut dyn Conn, buf: &mut Vec<u8>, server: &Shared, done: &dyn Fn(&[u8]) -> bool) -> Option<()> {
    let mut chunk = [0u8; 8192];
    let idle_limit = Instant::now() + Duration::from_secs(5);
    while !done(buf) {
        if server.gone() || Instant::now() > idle_limit || buf.len() > 64 << 20 {
            return None;
        }
        match stream.read(&mut chunk) {
            Ok(0) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => return None,
        }
    }
    Some(())
}

/// One request of a connection: (method, path, body), leaving any bytes after it in `buf`.
fn read_request(stream: &mut dyn Conn, buf: &mut Vec<u8>, server: &Shared) -> Option<(String, String, Vec<u8>)> {
    let head_end = |b: &[u8]| b.windows(4).position(|w| w == b"\r\n\r\n");
    read_until(stream, buf, server, &|b| head_end(b).is_some())?;
    let end = head_end(buf)?;
    let head = String::from_utf8_lossy(&buf[..end]).to_string();
    let mut words = head.split_whitespace();
    let method = words.next().unwrap_or("").to_string();
    let path = words.next().unwrap_or("").to_string();
    let len: usize = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0)))
        .unwrap_or(0);
    read_until(stream, buf, server, &|b| b.len() >= end + 4 + len)?;
    let body = buf[end + 4..end + 4 + len].to_vec();
    buf.drain(..end + 4 + len);
    Some((method, path, body))
}

/// Serve the requests of one connection until it closes (or must close).
fn serve_conn(mut stream: Box<dyn Conn>, server: &Shared) {
    let mut buf = Vec::new();
    while let Some((method, path, body)) = read_request(stream.as_mut(), &mut buf, server) {
        let keep = handle_request(stream.as_mut(), server, &method, &path, &body);
        if !keep || server.b.close {
            return;
        }
    }
}

/// Answer one request; false when the connection must be dropped.
fn handle_request(stream: &mut dyn Conn, server: &Shared, method: &str, path: &str, body: &[u8]) -> bool {
    let b = &*server.b;
    let close = b.close;
    if method == "GET" && path == "/v1/models" {
        if let Ok(mut l) = server.log.lock() {
            l.model_requests += 1;
        }
        if let Some(status) = b.models_status {
            return respond(stream, status, r#"{"error":"models"}"#, false, close, None);
        }
        let names: Vec<String> =
            b.models.clone().unwrap_or_else(|| DEFAULT_MODELS.iter().map(|m| m.to_string()).collect());
        let data: Vec<Value> = names.iter().map(|m| json!({"id": m, "object": "model"})).collect();
        return respond(stream, 200, &json!({"object": "list", "data": data}).to_string(), false, close, None);
    }
    let req: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let nth = {
        let Ok(mut l) = server.log.lock() else { return false };
        l.requests.push((path.to_string(), req.clone()));
        l.arrivals.push(Instant::now());
        server.arrivals.fetch_add(1, Ordering::SeqCst)
    };
    if let Some(status) = b.always_status {
        return respond(stream, status, &json!({"error": {"message": "rejected"}}).to_string(), false, close, None);
    }
    if b.fail_every.is_some_and(|every| every > 0 && (nth + 1) % every == 0) {
        return respond(stream, 503, r#"{"error":"overloaded"}"#, false, close, None);
    }
    match b.faults.get(nth) {
        Some(Fault::Status(s)) => return respond(stream, *s, r#"{"error":"injected"}"#, false, close, None),
        Some(Fault::RetryAfter(s, secs)) => {
            return respond(stream, *s, r#"{"error":"busy"}"#, false, close, Some(*secs));
        }
        Some(Fault::Drop) => return false,
        Some(Fault::DropMidBody) => {
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{\"choices\": [",
            );
            return false;
        }
        Some(Fault::Slow(d)) => std::thread::sleep(*d),
        None => {}
    }
    // `fail_after`: an answer is reserved atomically, so concurrent requests never both take the
    // last one (a check-then-count race answered one too many under load).
    let reserved = match b.fail_after {
        Some(m) => {
            if server.served.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| (n < m).then_some(n + 1)).is_err() {
                return respond(stream, 503, r#"{"error":"gone"}"#, false, close, None);
            }
            true
        }
        None => false,
    };
    if let Some(d) = b.latency {
        let until = Instant::now() + d;
        while Instant::now() < until {
            if server.gone() {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    if server.gone() {
        return false;
    }
    let n = req.get("n").and_then(Value::as_u64).unwrap_or(1) as usize;
    let n = b.max_choices.map_or(n, |m| n.min(m));
    let seed = req.get("seed").and_then(Value::as_u64).unwrap_or(0);
    let chat = path.ends_with("/chat/completions");
    let prompt = if chat {
        req.get("messages")
            .and_then(Value::as_array)
            .and_then(|m| m.iter().rev().find(|x| x["role"] == "user"))
            .and_then(|m| m["content"].as_str())
            .unwrap_or("")
            .to_string()
    } else {
        req.get("prompt").and_then(Value::as_str).unwrap_or("").to_string()
    };
    if path != "/v1/completions" && path != "/v1/chat/completions" {
        return respond(stream, 404, r#"{"error":"not found"}"#, false, close, None);
    }
    let choices: Vec<Value> = (0..n)
        .map(|i| {
            let text = completion_text(seed, &prompt, i);
            let finish = if i % 4 == 3 { "length" } else { "stop" };
            if chat {
                json!({"index": i, "message": {"role": "assistant", "content": text}, "finish_reason": finish})
            } else {
                json!({"index": i, "text": text, "finish_reason": finish})
            }
        })
        .rev() // servers may list choices in any order; the client sorts by index
        .collect();
    let out = json!({"id": "x", "object": "test", "choices": choices, "usage": {"completion_tokens": 5 * n, "prompt_tokens": 3}});
    // A server that dies drops this answer too: the client never sees it.
    if let Some(limit) = b.die_after {
        if server.served.fetch_add(1, Ordering::SeqCst) >= limit {
            server.dead.store(true, Ordering::SeqCst);
            return false;
        }
    } else if !reserved {
        server.served.fetch_add(1, Ordering::SeqCst);
    }
    respond(stream, 200, &out.to_string(), b.chunked, close, None)
}

/// Write a response; false when the connection must be dropped.
fn respond(
    stream: &mut dyn Conn,
    status: u16,
    body: &str,
    chunked: bool,
    close: bool,
    retry_after: Option<u64>,
) -> bool {
    let reason = if status == 200 { "OK" } else { "Error" };
    let connection = if close { "close" } else { "keep-alive" };
    let mut out =
        format!("HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nConnection: {connection}\r\n")
            .into_bytes();
    if let Some(secs) = retry_after {
        out.extend_from_slice(format!("Retry-After: {secs}\r\n").as_bytes());
    }
    if chunked {
        out.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
        for part in body.as_bytes().chunks(7) {
            out.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
            out.extend_from_slice(part);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"0\r\n\r\n");
    } else {
        out.extend_from_slice(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    }
    stream.write_all(&out).is_ok() && stream.flush().is_ok() && !close
}
