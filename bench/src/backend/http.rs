//! A small blocking HTTP/1.1 client for plain-`http://` JSON POSTs to inference servers.
//!
//! vLLM and SGLang servers are reached over plain HTTP on a local or cluster network; this client
//! does one request per connection (`Connection: close`) with a hard deadline on the whole
//! exchange (connect, send, receive), handles `Content-Length`, chunked and read-to-close bodies,
//! and caps the response size. It needs no async runtime and no TLS stack; an `https://` endpoint
//! is refused with a hint (put the server behind a local proxy or tunnel).

use super::BackendError;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// Largest response body accepted (bytes).
pub const MAX_RESPONSE_BYTES: usize = 256 << 20;

/// A parsed `http://host:port/base` endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
    /// Path prefix without a trailing slash (`""` or `/proxy`); a trailing `/v1` is removed.
    pub base_path: String,
}

impl Endpoint {
    /// Parse `http://host[:port][/path]`; a trailing `/v1` (or `/v1/completions`,
    /// `/v1/chat/completions`) is dropped so `http://h:8000`, `http://h:8000/v1` and a pasted full
    /// endpoint URL all work.
    pub fn parse(url: &str) -> Result<Endpoint, BackendError> {
        let url = url.trim();
        let rest = if let Some(r) = url.strip_prefix("http://") {
            r
        } else if url.starts_with("https://") {
            return Err(BackendError::Fatal(format!(
                "{url}: https is not supported by rlbench's HTTP client; reach the server over http \
                 (e.g. through an SSH tunnel or a local proxy)"
            )));
        } else {
            return Err(BackendError::Fatal(format!("{url}: expected an http:// URL")));
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => {
                let port = p.parse::<u16>().map_err(|_| BackendError::Fatal(format!("{url}: invalid port `{p}`")))?;
                (h, port)
            }
            _ => (authority, 80),
        };
        if host.is_empty() {
            return Err(BackendError::Fatal(format!("{url}: missing host")));
        }
        let mut base = path.trim_end_matches('/');
        for suffix in ["/chat/completions", "/completions", "/v1"] {
            base = base.strip_suffix(suffix).unwrap_or(base);
        }
        let base = base.to_string();
        Ok(Endpoint { host: host.trim_matches(['[', ']']).to_string(), port, base_path: base })
    }

    /// `http://host:port/base`, for manifests and messages.
    pub fn url(&self) -> String {
        format!("http://{}:{}{}", self.host, self.port, self.base_path)
    }
}

/// A complete HTTP response.
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    pub status: u16,
    pub body: Vec<u8>,
}

/// POST `body` as JSON to `path` (appended to the endpoint's base path), within `timeout` for the
/// whole exchange.
pub fn post_json(
    ep: &Endpoint,
    path: &str,
    body: &[u8],
    bearer: Option<&str>,
    timeout: Duration,
) -> Result<Response, BackendError> {
    let deadline = Instant::now() + timeout;
    let timed_out = || BackendError::Timeout(timeout.as_secs_f64());
    let remaining = || deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero());

    let addrs: Vec<_> = (ep.host.as_str(), ep.port)
        .to_socket_addrs()
        .map_err(|e| BackendError::Io(format!("resolving {}: {e}", ep.host)))?
        .collect();
    let mut stream = None;
    let mut last_err = None;
    for addr in addrs {
        let Some(left) = remaining() else { return Err(timed_out()) };
        match TcpStream::connect_timeout(&addr, left) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => return Err(timed_out()),
            Err(e) => last_err = Some(e),
        }
    }
    let mut stream = stream.ok_or_else(|| {
        BackendError::Io(format!(
            "connecting to {}:{}: {}",
            ep.host,
            ep.port,
            last_err.map_or_else(|| "no address".to_string(), |e| e.to_string())
        ))
    })?;
    let _ = stream.set_nodelay(true);

    let mut head = format!(
        "POST {}{} HTTP/1.1\r\nHost: {}:{}\r\nContent-Type: application/json\r\nAccept: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\nUser-Agent: rlbench/{}\r\n",
        ep.base_path,
        path,
        ep.host,
        ep.port,
        body.len(),
        env!("CARGO_PKG_VERSION")
    );
    if let Some(key) = bearer {
        head.push_str(&format!("Authorization: Bearer {key}\r\n"));
    }
    head.push_str("\r\n");
    let io = |what: &str, e: std::io::Error| {
        if matches!(e.kind(), std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock) {
            timed_out()
        } else {
            BackendError::Io(format!("{what}: {e}"))
        }
    };
    let Some(left) = remaining() else { return Err(timed_out()) };
    stream.set_write_timeout(Some(left)).map_err(|e| io("socket", e))?;
    stream.write_all(head.as_bytes()).map_err(|e| io("sending", e))?;
    stream.write_all(body).map_err(|e| io("sending", e))?;
    stream.flush().map_err(|e| io("sending", e))?;

    let mut buf = Vec::with_capacity(16 << 10);
    let mut chunk = [0u8; 16 << 10];
    loop {
        if let Some(resp) = parse_response(&buf, false)? {
            return Ok(resp);
        }
        let Some(left) = remaining() else { return Err(timed_out()) };
        stream.set_read_timeout(Some(left)).map_err(|e| io("socket", e))?;
        let n = match stream.read(&mut chunk) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io("receiving", e)),
        };
        if n == 0 {
            return parse_response(&buf, true)?.ok_or_else(|| {
                BackendError::Io(format!(
                    "connection closed after {} bytes, before the response was complete",
                    buf.len()
                ))
            });
        }
        if buf.len() + n > MAX_RESPONSE_BYTES {
            return Err(BackendError::Protocol(format!("response larger than {MAX_RESPONSE_BYTES} bytes")));
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// Parse a response from the bytes received so far: `Ok(None)` while incomplete. `eof` says the
/// peer closed, which completes a body that has neither a length nor chunking.
pub fn parse_response(buf: &[u8], eof: bool) -> Result<Option<Response>, BackendError> {
    let Some(head_end) = find(buf, b"\r\n\r\n") else { return Ok(None) };
    let head = std::str::from_utf8(&buf[..head_end])
        .map_err(|_| BackendError::Protocol("response headers are not UTF-8".into()))?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let mut parts = status_line.split_whitespace();
    let (Some(version), Some(code)) = (parts.next(), parts.next()) else {
        return Err(BackendError::Protocol(format!("bad status line `{status_line}`")));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(BackendError::Protocol(format!("bad status line `{status_line}`")));
    }
    let status: u16 = code.parse().map_err(|_| BackendError::Protocol(format!("bad status line `{status_line}`")))?;
    let mut content_length = None;
    let mut chunked = false;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else { continue };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            content_length = Some(
                value.parse::<usize>().map_err(|_| BackendError::Protocol(format!("bad Content-Length `{value}`")))?,
            );
        } else if name.eq_ignore_ascii_case("transfer-encoding") && value.to_ascii_lowercase().contains("chunked") {
            chunked = true;
        }
    }
    let body = &buf[head_end + 4..];
    if chunked {
        return Ok(decode_chunked(body)?.map(|body| Response { status, body }));
    }
    if let Some(len) = content_length {
        if len > MAX_RESPONSE_BYTES {
            return Err(BackendError::Protocol(format!("Content-Length {len} too large")));
        }
        return Ok((body.len() >= len).then(|| Response { status, body: body[..len].to_vec() }));
    }
    Ok(eof.then(|| Response { status, body: body.to_vec() }))
}

/// Decode a chunked body; `Ok(None)` while the final zero-size chunk has not arrived.
fn decode_chunked(mut data: &[u8]) -> Result<Option<Vec<u8>>, BackendError> {
    let mut out = Vec::new();
    loop {
        let Some(line_end) = find(data, b"\r\n") else { return Ok(None) };
        let size_text = std::str::from_utf8(&data[..line_end]).unwrap_or("");
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| BackendError::Protocol(format!("bad chunk size `{size_text}`")))?;
        data = &data[line_end + 2..];
        if size == 0 {
            // Trailers (if any) end with an empty line; accept once its start is there.
            return Ok(Some(out));
        }
        if size > MAX_RESPONSE_BYTES || out.len() + size > MAX_RESPONSE_BYTES {
            return Err(BackendError::Protocol("chunked response too large".into()));
        }
        if data.len() < size + 2 {
            return Ok(None);
        }
        out.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints() {
        let e = Endpoint::parse("http://localhost:8000/v1/").map_err(|e| e.to_string());
        assert_eq!(e, Ok(Endpoint { host: "localhost".into(), port: 8000, base_path: String::new() }));
        let e = Endpoint::parse("http://10.0.0.2/proxy").map_err(|e| e.to_string());
        assert_eq!(e, Ok(Endpoint { host: "10.0.0.2".into(), port: 80, base_path: "/proxy".into() }));
        let e = Endpoint::parse("http://h:1/proxy/v1/chat/completions").map(|e| e.base_path);
        assert_eq!(e.ok().as_deref(), Some("/proxy"));
        assert!(Endpoint::parse("https://api.example.com").is_err());
        assert!(Endpoint::parse("localhost:8000").is_err());
        assert!(Endpoint::parse("http://h:99999").is_err());
        assert!(Endpoint::parse("http://:80").is_err());
    }

    #[test]
    fn content_length_bodies() {
        let full = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        assert_eq!(parse_response(full, false), Ok(Some(Response { status: 200, body: b"hello".to_vec() })));
        assert_eq!(parse_response(&full[..full.len() - 1], false), Ok(None));
        assert_eq!(parse_response(b"HTTP/1.1 500 Oops\r\n", false), Ok(None));
    }

    #[test]
    fn chunked_bodies() {
        let r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;x=y\r\n world\r\n0\r\n\r\n";
        assert_eq!(parse_response(r, false), Ok(Some(Response { status: 200, body: b"hello world".to_vec() })));
        assert_eq!(parse_response(&r[..r.len() - 7], false), Ok(None));
        let bad = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n";
        assert!(parse_response(bad, false).is_err());
    }

    #[test]
    fn read_to_close_bodies() {
        let r = b"HTTP/1.0 200 OK\r\n\r\nabc";
        assert_eq!(parse_response(r, false), Ok(None));
        assert_eq!(parse_response(r, true), Ok(Some(Response { status: 200, body: b"abc".to_vec() })));
        assert!(parse_response(b"garbage\r\n\r\n", true).is_err());
    }
}
