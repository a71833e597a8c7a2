//! A real OpenAI-compatible HTTP server on 127.0.0.1 for the tests: deterministic completions from
//! the request's seed, and injectable faults. Every loop is bounded: the server stops when dropped
//! or after a hard time limit, whichever comes first.

#![allow(dead_code)]

use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

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
    /// Use chunked transfer encoding for successful answers.
    pub chunked: bool,
}

/// What the server saw.
#[derive(Debug, Default)]
pub struct Log {
    pub requests: Vec<(String, Value)>,
}

pub struct FakeServer {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    pub log: Arc<Mutex<Log>>,
    pub served: Arc<AtomicUsize>,
    handle: Option<JoinHandle<()>>,
}

impl FakeServer {
    pub fn start(behaviour: Behaviour) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let stop = Arc::new(AtomicBool::new(false));
        let log = Arc::new(Mutex::new(Log::default()));
        let served = Arc::new(AtomicUsize::new(0));
        let arrivals = Arc::new(AtomicUsize::new(0));
        let behaviour = Arc::new(behaviour);
        let (stop2, log2, served2) = (stop.clone(), log.clone(), served.clone());
        let handle = std::thread::spawn(move || {
            let hard_limit = Instant::now() + Duration::from_secs(120);
            let mut workers = Vec::new();
            while !stop2.load(Ordering::Relaxed) && Instant::now() < hard_limit {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let (b, l, s, a) = (behaviour.clone(), log2.clone(), served2.clone(), arrivals.clone());
                        workers.push(std::thread::spawn(move || handle_conn(stream, &b, &l, &s, &a)));
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(2))
                    }
                    Err(_) => break,
                }
            }
            for w in workers {
                let _ = w.join();
            }
        });
        FakeServer { addr, stop, log, served, handle: Some(handle) }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn request_count(&self) -> usize {
        self.log.lock().map(|l| l.requests.len()).unwrap_or(0)
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

fn read_request(stream: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        if buf.len() > 1 << 20 {
            return None;
        }
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
    let len: usize = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0)))
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some((path, body))
}

fn handle_conn(mut stream: TcpStream, b: &Behaviour, log: &Mutex<Log>, served: &AtomicUsize, arrivals: &AtomicUsize) {
    let Some((path, body)) = read_request(&mut stream) else { return };
    let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if let Ok(mut l) = log.lock() {
        l.requests.push((path.clone(), req.clone()));
    }
    let nth = arrivals.fetch_add(1, Ordering::SeqCst);
    if let Some(status) = b.always_status {
        return respond(&mut stream, status, &json!({"error": {"message": "rejected"}}).to_string(), false);
    }
    match b.faults.get(nth) {
        Some(Fault::Status(s)) => return respond(&mut stream, *s, r#"{"error":"injected"}"#, false),
        Some(Fault::Drop) => return,
        Some(Fault::DropMidBody) => {
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{\"choices\": [",
            );
            return;
        }
        Some(Fault::Slow(d)) => std::thread::sleep(*d),
        None => {}
    }
    if let Some(m) = b.fail_after {
        if served.load(Ordering::SeqCst) >= m {
            return respond(&mut stream, 503, r#"{"error":"gone"}"#, false);
        }
    }
    let n = req.get("n").and_then(Value::as_u64).unwrap_or(1) as usize;
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
        return respond(&mut stream, 404, r#"{"error":"not found"}"#, false);
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
    served.fetch_add(1, Ordering::SeqCst);
    respond(&mut stream, 200, &out.to_string(), b.chunked);
}

fn respond(stream: &mut TcpStream, status: u16, body: &str, chunked: bool) {
    let reason = if status == 200 { "OK" } else { "Error" };
    let mut out =
        format!("HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nConnection: close\r\n").into_bytes();
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
    let _ = stream.write_all(&out);
    let _ = stream.flush();
}
