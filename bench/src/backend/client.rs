//! The HTTP side of the OpenAI-compatible backend, on [`ureq`] (blocking, rustls):
//!
//! - keep-alive: one [`ureq::Agent`] per endpoint keeps its connections open between requests;
//! - `http://` and `https://` ([`super::tls`]: Mozilla's roots, or the certificates of
//!   `--ca-cert FILE` or `SSL_CERT_FILE`/`SSL_CERT_DIR` alone, a server's own certificate pinned;
//!   each TLS failure names its cause and fix);
//! - proxies from the environment, as curl reads them: `HTTPS_PROXY` for `https://` endpoints,
//!   `HTTP_PROXY` for `http://` ones, `ALL_PROXY` for both (lower-case names too), and hosts
//!   listed in `NO_PROXY` reached directly;
//! - a deadline on the whole exchange (connect, send, receive), a cap on the response size, and
//!   `Retry-After` (seconds or HTTP-date) read from 429 and 503 answers.

pub use super::tls::CaCerts;
use super::tls::{self, TlsConnector};
use super::BackendError;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};
use ureq::unversioned::resolver::DefaultResolver;
use ureq::unversioned::transport::{ConnectProxyConnector, Connector, TcpConnector};
use ureq::Agent;

/// Largest response body accepted (bytes).
pub const MAX_RESPONSE_BYTES: u64 = 256 << 20;

/// Longest `Retry-After` honoured; a server asking for more is retried after this long.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(300);

/// A parsed `http(s)://host[:port][/base]` endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// `http` or `https`.
    pub scheme: String,
    /// Host name or address.
    pub host: String,
    /// Port (80 or 443 when the URL names none).
    pub port: u16,
    /// Path prefix without a trailing slash (`""` or `/proxy`); a trailing `/v1` is removed.
    pub base_path: String,
}

impl Endpoint {
    /// Parse `http(s)://host[:port][/path]`; a trailing `/v1` (or `/v1/completions`,
    /// `/v1/chat/completions`) is dropped so `http://h:8000`, `http://h:8000/v1` and a pasted full
    /// endpoint URL all work. A URL without a scheme is taken as `http://`.
    pub fn parse(url: &str) -> Result<Endpoint, BackendError> {
        let url = url.trim();
        let (scheme, rest) = match url.split_once("://") {
            Some((s, r)) if s.eq_ignore_ascii_case("http") => ("http", r),
            Some((s, r)) if s.eq_ignore_ascii_case("https") => ("https", r),
            Some((s, _)) => {
                return Err(BackendError::Fatal(format!("{url}: unsupported scheme `{s}` (use http:// or https://)")))
            }
            None => ("http", url),
        };
        let (authority, path) = match rest.find(['/', '?', '#']) {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        if authority.contains('@') {
            return Err(BackendError::Fatal(format!(
                "{url}: credentials in the URL are not supported; pass the token with --api-key or OPENAI_API_KEY"
            )));
        }
        if path.contains(['?', '#']) {
            return Err(BackendError::Fatal(format!("{url}: a query or fragment has no place in a server URL")));
        }
        let default_port = if scheme == "https" { 443 } else { 80 };
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (h, after) =
                v6.split_once(']').ok_or_else(|| BackendError::Fatal(format!("{url}: unclosed `[` in the host")))?;
            let port = match after.strip_prefix(':') {
                Some(p) => parse_port(url, p)?,
                None if after.is_empty() => default_port,
                None => return Err(BackendError::Fatal(format!("{url}: unexpected `{after}` after the host"))),
            };
            (h.to_string(), port)
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h.to_string(), parse_port(url, p)?),
                None => (authority.to_string(), default_port),
            }
        };
        if host.is_empty() {
            return Err(BackendError::Fatal(format!("{url}: missing host")));
        }
        let mut base = path.trim_end_matches('/');
        for suffix in ["/chat/completions", "/completions", "/models", "/v1"] {
            base = base.strip_suffix(suffix).unwrap_or(base);
        }
        Ok(Endpoint { scheme: scheme.to_string(), host, port, base_path: base.trim_end_matches('/').to_string() })
    }

    /// `scheme://host:port/base`, for manifests and messages.
    pub fn url(&self) -> String {
        let host = if self.host.contains(':') { format!("[{}]", self.host) } else { self.host.clone() };
        format!("{}://{}:{}{}", self.scheme, host, self.port, self.base_path)
    }

    /// The full URL of `path` (e.g. `/v1/models`) on this endpoint.
    pub fn join(&self, path: &str) -> String {
        format!("{}{}", self.url(), path)
    }
}

fn parse_port(url: &str, p: &str) -> Result<u16, BackendError> {
    p.parse::<u16>().ok().filter(|&p| p > 0).ok_or_else(|| BackendError::Fatal(format!("{url}: invalid port `{p}`")))
}

/// Where the proxy settings come from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ProxyConfig {
    /// `HTTP(S)_PROXY`, `ALL_PROXY` and `NO_PROXY` from the environment.
    #[default]
    FromEnv,
    /// Always connect directly.
    None,
    /// This proxy (`http://host:port`, `socks5://...` needs ureq's socks feature) for every
    /// endpoint.
    Url(String),
}

/// The proxy URL for `ep` given environment lookups `var` (curl's rules): `NO_PROXY` (a
/// comma-separated list of hosts, `.suffix`es or `*`) wins, then `HTTPS_PROXY`/`HTTP_PROXY` by
/// scheme, then `ALL_PROXY`; lower-case names are read too, and empty values are unset. Loopback
/// hosts (`localhost`, `127.x.x.x`, `::1`) are always reached directly, as Go's and Python's
/// clients do: a proxy cannot reach this machine's local servers.
pub fn proxy_from_env(ep: &Endpoint, var: impl Fn(&str) -> Option<String>) -> Option<String> {
    let get = |name: &str| {
        var(name).or_else(|| var(&name.to_ascii_lowercase())).map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
    };
    let loopback = ep.host.eq_ignore_ascii_case("localhost")
        || ep.host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    if loopback {
        return None;
    }
    if let Some(no) = get("NO_PROXY") {
        let host = ep.host.to_ascii_lowercase();
        for entry in no.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let entry = entry.to_ascii_lowercase();
            if entry == "*" {
                return None;
            }
            // `host:port` entries apply to that port only.
            let (name, port) = match entry.rsplit_once(':') {
                Some((h, p)) if !h.contains(':') && p.parse::<u16>().is_ok() => (h.to_string(), p.parse::<u16>().ok()),
                _ => (entry.clone(), None),
            };
            if port.is_some_and(|p| p != ep.port) {
                continue;
            }
            let name = name.trim_matches(['[', ']']).trim_start_matches("*.");
            let bare = name.trim_start_matches('.');
            if host == bare || host.ends_with(&format!(".{bare}")) {
                return None;
            }
        }
    }
    let by_scheme = if ep.scheme == "https" { "HTTPS_PROXY" } else { "HTTP_PROXY" };
    get(by_scheme).or_else(|| get("ALL_PROXY"))
}

/// How to reach a server.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// Deadline of one request (connect, send, receive).
    pub timeout: Duration,
    /// Bearer token.
    pub api_key: Option<String>,
    /// Trust only these certificates (from `--ca-cert`), and pin them; `None` reads
    /// `SSL_CERT_FILE`/`SSL_CERT_DIR`, else trusts Mozilla's roots.
    pub ca_certs: Option<CaCerts>,
    /// Which proxy to use, if any.
    pub proxy: ProxyConfig,
    /// Connections kept open per endpoint (at least the requests in flight at once).
    pub max_idle_connections: usize,
}

impl ClientOptions {
    /// Options with this timeout, no token, Mozilla's roots and proxies from the environment.
    pub fn new(timeout: Duration) -> ClientOptions {
        ClientOptions { timeout, api_key: None, ca_certs: None, proxy: ProxyConfig::FromEnv, max_idle_connections: 64 }
    }
}

/// A complete HTTP response.
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    /// HTTP status code.
    pub status: u16,
    /// The whole body.
    pub body: Vec<u8>,
    /// `Retry-After` of the answer, capped at [`MAX_RETRY_AFTER`].
    pub retry_after: Option<Duration>,
}

/// A keep-alive client for one endpoint.
#[derive(Clone)]
pub struct HttpClient {
    endpoint: Endpoint,
    agent: Agent,
    timeout: Duration,
    api_key: Option<String>,
    /// The proxy in use, for messages.
    proxy: Option<String>,
    /// Where the trusted certificates come from (`None`: Mozilla's roots), for messages.
    trusted: Option<String>,
    /// Whether the other protocol answers on this endpoint's port (probed once, on a failure).
    other_protocol: Arc<OnceLock<bool>>,
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClient").field("endpoint", &self.endpoint.url()).field("proxy", &self.proxy).finish()
    }
}

impl HttpClient {
    /// A client of `endpoint` (keep-alive connections, TLS roots and proxy from `opts`).
    pub fn new(endpoint: Endpoint, opts: &ClientOptions) -> Result<HttpClient, BackendError> {
        let proxy_url = match &opts.proxy {
            ProxyConfig::FromEnv => proxy_from_env(&endpoint, |k| std::env::var(k).ok()),
            ProxyConfig::None => None,
            ProxyConfig::Url(u) => Some(u.clone()),
        };
        let proxy = match &proxy_url {
            Some(u) => Some(
                ureq::Proxy::new(u)
                    .map_err(|e| BackendError::Fatal(format!("proxy `{u}` (from the environment): {e}")))?,
            ),
            None => None,
        };
        let ca = match &opts.ca_certs {
            Some(ca) => Some(ca.clone()),
            None => CaCerts::from_env(|k| std::env::var(k).ok()).map_err(BackendError::Fatal)?,
        };
        let tls_config = tls::client_config(ca.as_ref()).map_err(BackendError::Fatal)?;
        let config = Agent::config_builder()
            .timeout_global(Some(opts.timeout))
            .http_status_as_error(false)
            .proxy(proxy)
            .user_agent(format!("rlbench/{}", env!("CARGO_PKG_VERSION")))
            .max_idle_connections(opts.max_idle_connections.max(1))
            .max_idle_connections_per_host(opts.max_idle_connections.max(1))
            .max_redirects(0)
            // Servers close idle connections after 5 s (uvicorn, cpp-httplib); do not reuse older ones.
            .max_idle_age(Duration::from_secs(4))
            .build();
        // ureq's chain (a CONNECT proxy, TCP), with our TLS step: trust and pinning as above.
        let connector =
            ().chain(ConnectProxyConnector::default())
                .chain(TcpConnector::default())
                .chain(TlsConnector::new(tls_config));
        Ok(HttpClient {
            endpoint,
            agent: Agent::with_parts(config, connector, DefaultResolver::default()),
            timeout: opts.timeout,
            api_key: opts.api_key.clone(),
            proxy: proxy_url,
            trusted: ca.map(|c| c.source),
            other_protocol: Arc::new(OnceLock::new()),
        })
    }

    /// The endpoint this client talks to.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// POST `body` as JSON to `path` (e.g. `/v1/completions`).
    pub fn post_json(&self, path: &str, body: &[u8]) -> Result<Response, BackendError> {
        let mut req = self.agent.post(self.endpoint.join(path)).header("Accept", "application/json");
        if let Some(k) = &self.api_key {
            req = req.header("Authorization", format!("Bearer {k}"));
        }
        let result = req.content_type("application/json").send(body);
        self.finish(result, self.timeout)
    }

    /// GET `path` within `timeout` (shorter than a generation's, for health checks).
    pub fn get(&self, path: &str, timeout: Duration) -> Result<Response, BackendError> {
        let mut req = self.agent.get(self.endpoint.join(path)).header("Accept", "application/json");
        if let Some(k) = &self.api_key {
            req = req.header("Authorization", format!("Bearer {k}"));
        }
        let result = req.config().timeout_global(Some(timeout)).build().call();
        self.finish(result, timeout)
    }

    fn finish(
        &self,
        result: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
        timeout: Duration,
    ) -> Result<Response, BackendError> {
        let mut resp = result.map_err(|e| self.error(e, timeout))?;
        let status = resp.status().as_u16();
        let retry_after = if matches!(status, 429 | 503) {
            resp.headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| parse_retry_after(v, SystemTime::now()))
        } else {
            None
        };
        let body = resp
            .body_mut()
            .with_config()
            .limit(MAX_RESPONSE_BYTES)
            .read_to_vec()
            .map_err(|e| self.error(e, timeout))?;
        Ok(Response { status, body, retry_after })
    }

    /// A ureq error as a [`BackendError`], naming the endpoint (and the proxy when one is used).
    fn error(&self, e: ureq::Error, timeout: Duration) -> BackendError {
        let via = self.proxy.as_ref().map(|p| format!(" via proxy {p}")).unwrap_or_default();
        let url = self.endpoint.url();
        match e {
            ureq::Error::Timeout(_) => BackendError::Timeout(timeout.as_secs_f64()),
            ureq::Error::BodyExceedsLimit(n) => {
                BackendError::Protocol(format!("{url}: response larger than {n} bytes"))
            }
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
                BackendError::Timeout(timeout.as_secs_f64())
            }
            ureq::Error::InvalidProxyUrl | ureq::Error::BadUri(_) => BackendError::Fatal(format!("{url}{via}: {e}")),
            e => {
                let host = &self.endpoint.host;
                if let Some(why) = tls::rustls_error(&e).and_then(|r| tls::explain(r, host, self.trusted.as_deref())) {
                    return BackendError::Fatal(format!("{url}{via}: TLS: {why}"));
                }
                if let Some(why) = self.protocol_mismatch(&e) {
                    return BackendError::Fatal(format!("{url}{via}: {why}"));
                }
                BackendError::Io(format!("{url}{via}: {e}"))
            }
        }
    }

    /// `http://` to a TLS server, or `https://` to a plain HTTP one: the error names the scheme to
    /// use. Probed once per client, and only for errors a scheme mismatch causes (a protocol
    /// error, a connection closed before or during the handshake), never through a proxy.
    fn protocol_mismatch(&self, e: &ureq::Error) -> Option<String> {
        let suspicious = match e {
            ureq::Error::Protocol(_) | ureq::Error::ConnectionFailed => true,
            ureq::Error::Io(io) => matches!(
                io.kind(),
                std::io::ErrorKind::UnexpectedEof
                    | std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::InvalidData
            ),
            ureq::Error::Rustls(_) => true,
            _ => false,
        };
        if !suspicious || self.proxy.is_some() {
            return None;
        }
        let (host, port) = (self.endpoint.host.clone(), self.endpoint.port);
        let https = self.endpoint.scheme == "https";
        let other = *self.other_protocol.get_or_init(|| {
            if https {
                tls::speaks_http(&host, port)
            } else {
                tls::speaks_tls(&host, port)
            }
        });
        match (other, https) {
            (true, true) => {
                Some(format!("the server speaks plain HTTP, not TLS ({e}): use http:// instead of https://"))
            }
            (true, false) => Some(format!("the server speaks TLS ({e}): use https:// instead of http://")),
            (false, _) => None,
        }
    }
}

/// `Retry-After` as a delay from `now`: delay-seconds or an HTTP-date, capped at
/// [`MAX_RETRY_AFTER`]; a date in the past is no delay; anything else is `None`.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let v = value.trim();
    let delay = if let Ok(secs) = v.parse::<u64>() {
        Duration::from_secs(secs)
    } else if let Ok(secs) = v.parse::<f64>() {
        // Not in the standard, but some servers send fractions.
        Duration::try_from_secs_f64(secs).ok()?
    } else {
        let at = httpdate::parse_http_date(v).ok()?;
        at.duration_since(now).unwrap_or(Duration::ZERO)
    };
    Some(delay.min(MAX_RETRY_AFTER))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(url: &str) -> Endpoint {
        Endpoint::parse(url).unwrap_or_else(|e| panic!("{url}: {e}"))
    }

    #[test]
    fn endpoints_parse() {
        assert_eq!(ep("http://h:8000/v1").url(), "http://h:8000");
        assert_eq!(ep("https://api.example.com/v1/chat/completions").url(), "https://api.example.com:443");
        assert_eq!(ep("https://api.example.com/proxy/v1/").base_path, "/proxy");
        assert_eq!(ep("localhost:9000").url(), "http://localhost:9000");
        assert_eq!(ep("http://[::1]:8000").url(), "http://[::1]:8000");
        assert_eq!(ep("http://[::1]").port, 80);
        assert_eq!(ep("http://h:1/v1/models").join("/v1/models"), "http://h:1/v1/models");
        for bad in
            ["ftp://h", "http://:80", "http://h:0", "http://h:x", "http://u:p@h", "http://h/v1?x=1", "http://[::1"]
        {
            assert!(matches!(Endpoint::parse(bad), Err(BackendError::Fatal(_))), "{bad}");
        }
    }

    #[test]
    fn proxies_follow_curls_rules() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
        };
        let http = ep("http://gpu1.cluster:8000");
        let https = ep("https://api.example.com");
        let e = env(&[("HTTP_PROXY", "http://p:3128"), ("https_proxy", "http://s:3128")]);
        assert_eq!(proxy_from_env(&http, e).as_deref(), Some("http://p:3128"));
        assert_eq!(proxy_from_env(&https, e).as_deref(), Some("http://s:3128"));
        let e = env(&[("ALL_PROXY", "http://a:1"), ("NO_PROXY", "localhost, .cluster")]);
        assert_eq!(proxy_from_env(&http, e), None);
        assert_eq!(proxy_from_env(&https, e).as_deref(), Some("http://a:1"));
        let e = env(&[("HTTP_PROXY", "http://p:1"), ("no_proxy", "gpu1.cluster:9999,example.com")]);
        assert_eq!(proxy_from_env(&http, e).as_deref(), Some("http://p:1"), "other port");
        let e = env(&[("HTTP_PROXY", "http://p:1"), ("NO_PROXY", "cluster")]);
        assert_eq!(proxy_from_env(&http, e), None, "domain suffix");
        let e = env(&[("HTTP_PROXY", "http://p:1"), ("NO_PROXY", "*")]);
        assert_eq!(proxy_from_env(&http, e), None);
        let e = env(&[("HTTP_PROXY", "http://p:1"), ("NO_PROXY", "uster")]);
        assert_eq!(proxy_from_env(&http, e).as_deref(), Some("http://p:1"), "not a label boundary");
        let e = env(&[("HTTP_PROXY", "")]);
        assert_eq!(proxy_from_env(&http, e), None);
        let e = env(&[("HTTP_PROXY", "http://p:1"), ("HTTPS_PROXY", "http://p:1")]);
        for local in ["http://localhost:8000", "http://127.0.0.1:8000", "https://[::1]:8000"] {
            assert_eq!(proxy_from_env(&ep(local), e), None, "{local}");
        }
    }

    #[test]
    fn retry_after_in_seconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(parse_retry_after("30", now), Some(Duration::from_secs(30)));
        assert_eq!(parse_retry_after(" 1.5 ", now), Some(Duration::from_millis(1500)));
        assert_eq!(parse_retry_after("99999", now), Some(MAX_RETRY_AFTER));
        let later = httpdate::fmt_http_date(now + Duration::from_secs(42));
        assert_eq!(parse_retry_after(&later, now), Some(Duration::from_secs(42)));
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(42));
        assert_eq!(parse_retry_after(&earlier, now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-3", now), None);
    }
}
