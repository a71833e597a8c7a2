//! TLS for `https://` endpoints, on rustls, with what `curl --cacert` and Python accept:
//!
//! - trust: the certificates of `--ca-cert FILE`, else those of `SSL_CERT_FILE` / `SSL_CERT_DIR`
//!   (as curl, Python and OpenSSL read them), else Mozilla's roots;
//! - pinning: a server whose own certificate is one of the certificates given is trusted as is.
//!   `openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -addext
//!   subjectAltName=IP:127.0.0.1` makes a CA certificate (basicConstraints CA:TRUE), which the
//!   WebPKI rules refuse as a server's certificate (`CaUsedAsEndEntity`); given with
//!   `--ca-cert`, it is that server's identity, and the handshake still proves the server holds
//!   its key;
//! - errors that name their cause and fix ([`explain`]): a CA certificate as the server's, a name
//!   that is not the certificate's, an expired or not yet valid certificate, an unknown issuer,
//!   `https://` to a plain HTTP server and `http://` to a TLS server ([`speaks_tls`],
//!   [`speaks_http`]).
//!
//! The connector replaces ureq's own rustls connector in the agent's chain (proxy, TCP, TLS), so
//! that the verifier above decides.

use std::fmt;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore, StreamOwned};
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, Either, LazyBuffers, NextTimeout, Transport, TransportAdapter,
};

/// Certificates to trust, and where they came from (for messages).
#[derive(Clone, Debug)]
pub struct CaCerts {
    /// The file or directory they were read from, as the user named it (`--ca-cert FILE`,
    /// `SSL_CERT_FILE=...`).
    pub source: String,
    /// The PEM file, when one file was given.
    pub path: PathBuf,
    certs: Arc<Vec<CertificateDer<'static>>>,
}

impl CaCerts {
    /// Every certificate of a PEM file (a bundle may hold several).
    pub fn load(path: &Path) -> Result<CaCerts, String> {
        let certs = read_pem(path)?;
        if certs.is_empty() {
            return Err(format!("{}: no certificate (-----BEGIN CERTIFICATE-----) in the file", path.display()));
        }
        Ok(CaCerts { source: path.display().to_string(), path: path.to_path_buf(), certs: Arc::new(certs) })
    }

    /// The certificates `SSL_CERT_FILE` and `SSL_CERT_DIR` name (`var` looks the variables up), as
    /// curl and Python read them: `None` when neither is set.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Option<CaCerts>, String> {
        let file = var("SSL_CERT_FILE").filter(|v| !v.is_empty());
        let dir = var("SSL_CERT_DIR").filter(|v| !v.is_empty());
        let mut certs = Vec::new();
        let mut sources = Vec::new();
        if let Some(f) = &file {
            certs.extend(read_pem(Path::new(f)).map_err(|e| format!("SSL_CERT_FILE: {e}"))?);
            sources.push(format!("SSL_CERT_FILE={f}"));
        }
        if let Some(d) = &dir {
            // OpenSSL's list separator; each directory holds PEM files (`*.pem`, `*.crt`, hashed names).
            for part in d.split(':').filter(|p| !p.is_empty()) {
                let entries = std::fs::read_dir(part).map_err(|e| format!("SSL_CERT_DIR: {part}: {e}"))?;
                let mut files: Vec<PathBuf> =
                    entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_file()).collect();
                files.sort();
                for f in files {
                    // Files that hold no certificate (a README, a CRL) are not an error.
                    certs.extend(read_pem(&f).unwrap_or_default());
                }
            }
            sources.push(format!("SSL_CERT_DIR={d}"));
        }
        if sources.is_empty() {
            return Ok(None);
        }
        if certs.is_empty() {
            return Err(format!("{}: no certificate found", sources.join(", ")));
        }
        let path = PathBuf::from(file.or(dir).unwrap_or_default());
        Ok(Some(CaCerts { source: sources.join(", "), path, certs: Arc::new(certs) }))
    }
}

fn read_pem(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let pem = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        match item {
            Ok(ureq::tls::PemItem::Certificate(c)) => certs.push(CertificateDer::from(c.der().to_vec())),
            Ok(_) => {}
            Err(e) => return Err(format!("{}: not a PEM certificate file: {e}", path.display())),
        }
    }
    Ok(certs)
}

/// The client configuration of every `https://` connection: trust `ca` (else Mozilla's roots),
/// and pin the certificates of `ca`.
pub fn client_config(ca: Option<&CaCerts>) -> Result<Arc<ClientConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = RootCertStore::empty();
    let pinned = match ca {
        Some(ca) => {
            let (added, _) = roots.add_parsable_certificates(ca.certs.iter().cloned());
            if added == 0 {
                return Err(format!("{}: no usable certificate", ca.source));
            }
            ca.certs.clone()
        }
        None => {
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            Arc::new(Vec::new())
        }
    };
    let inner = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| format!("certificate verifier: {e}"))?;
    let verifier = Arc::new(PinningVerifier { inner, pinned });
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// The WebPKI verifier, except that a server presenting exactly one of the given certificates is
/// trusted (its signature over the handshake still has to verify with that certificate's key).
#[derive(Debug)]
struct PinningVerifier {
    inner: Arc<WebPkiServerVerifier>,
    pinned: Arc<Vec<CertificateDer<'static>>>,
}

impl ServerCertVerifier for PinningVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if self.pinned.iter().any(|c| c.as_ref() == end_entity.as_ref()) {
            return Ok(ServerCertVerified::assertion());
        }
        self.inner.verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// The TLS step of the agent's connector chain: wraps the TCP (or proxy) transport of an
/// `https://` request in a rustls connection made with [`client_config`].
pub struct TlsConnector {
    config: Arc<ClientConfig>,
}

impl TlsConnector {
    /// A connector with this client configuration.
    pub fn new(config: Arc<ClientConfig>) -> TlsConnector {
        TlsConnector { config }
    }
}

impl fmt::Debug for TlsConnector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsConnector").finish()
    }
}

impl<In: Transport> Connector<In> for TlsConnector {
    type Out = Either<In, TlsTransport>;

    fn connect(&self, details: &ConnectionDetails, chained: Option<In>) -> Result<Option<Self::Out>, ureq::Error> {
        let Some(transport) = chained else { return Ok(None) };
        if !details.needs_tls() || transport.is_tls() {
            return Ok(Some(Either::A(transport)));
        }
        let host = details.uri.host().unwrap_or_default().trim_start_matches('[').trim_end_matches(']');
        let name = ServerName::try_from(host.to_string()).map_err(|_| ureq::Error::Tls("invalid server name"))?;
        let mut conn = ClientConnection::new(self.config.clone(), name).map_err(ureq::Error::Rustls)?;
        let mut sock = TransportAdapter::new(transport.boxed(), details.current_time.clone());
        sock.set_timeout(details.timeout);
        if let Err(e) = conn.complete_io(&mut sock) {
            // A rustls error travels inside the I/O error; give it back as itself, so that
            // [`explain`] can tell a certificate from a network problem.
            let rustls_error = e.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()).cloned();
            return Err(rustls_error.map_or(ureq::Error::Io(e), ureq::Error::Rustls));
        }
        let buffers = LazyBuffers::new(details.config.input_buffer_size(), details.config.output_buffer_size());
        Ok(Some(Either::B(TlsTransport { buffers, stream: StreamOwned::new(conn, sock) })))
    }
}

/// A transport wrapped in TLS.
pub struct TlsTransport {
    buffers: LazyBuffers,
    stream: StreamOwned<ClientConnection, TransportAdapter>,
}

impl fmt::Debug for TlsTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsTransport").finish()
    }
}

impl Transport for TlsTransport {
    fn buffers(&mut self) -> &mut dyn Buffers {
        &mut self.buffers
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        self.stream.get_mut().set_timeout(timeout);
        let output = &self.buffers.output()[..amount];
        self.stream.write_all(output)?;
        Ok(())
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        self.stream.get_mut().set_timeout(timeout);
        let input = self.buffers.input_append_buf();
        let amount = self.stream.read(input)?;
        self.buffers.input_appended(amount);
        Ok(amount > 0)
    }

    fn is_open(&mut self) -> bool {
        self.stream.get_mut().get_mut().is_open()
    }

    fn is_tls(&self) -> bool {
        true
    }
}

/// The rustls error inside a ureq error, if any.
pub fn rustls_error(e: &ureq::Error) -> Option<&rustls::Error> {
    match e {
        ureq::Error::Rustls(r) => Some(r),
        ureq::Error::Io(io) => io.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()),
        _ => None,
    }
}

/// What a TLS failure means and what to do about it, for an endpoint on `host` trusting
/// `trusted` (`--ca-cert` or the environment; `None`: Mozilla's roots). `None` when the error is
/// not a certificate or protocol mismatch (a network failure, worth retrying).
pub fn explain(e: &rustls::Error, host: &str, trusted: Option<&str>) -> Option<String> {
    use rustls::Error as E;
    let give = "give the server's certificate (or its CA) with --ca-cert FILE, or set SSL_CERT_FILE";
    let text = match e {
        E::InvalidCertificate(c) => match c {
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                format!("the server's certificate has expired ({e}); renew it on the server")
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                format!("the server's certificate is not valid yet ({e}); check the clocks of both machines")
            }
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => format!(
                "the server's certificate is not for `{host}` ({e}); use a URL with a name the certificate lists, \
                 or reissue it with subjectAltName for {host}"
            ),
            CertificateError::UnknownIssuer => match trusted {
                Some(t) => format!(
                    "the server's certificate is not signed by a certificate of {t}, nor is it one of them; \
                     give the server's own certificate or the CA that signed it with --ca-cert FILE"
                ),
                None => {
                    format!("the server's certificate is signed by an authority Mozilla's roots do not hold; {give}")
                }
            },
            CertificateError::BadSignature if trusted.is_some() => format!(
                "the server's certificate is not signed by a certificate of {}, nor is it one of them (one there has \
                 the issuer's name but another key: {e}); give the server's own certificate or the CA that signed \
                 it with --ca-cert FILE",
                trusted.unwrap_or_default()
            ),
            CertificateError::Other(other) if format!("{other:?}").contains("CaUsedAsEndEntity") => {
                "the server's certificate is a CA certificate (basicConstraints CA:TRUE, what `openssl req -x509` \
                 makes by default), which is refused as a server's own certificate unless pinned; give that \
                 very certificate with --ca-cert FILE (then it is trusted as the server's identity), or issue \
                 the server a certificate without CA:TRUE"
                    .to_string()
            }
            _ => format!("the server's certificate is not trusted ({e}); {give}"),
        },
        E::InvalidMessage(_) | E::InappropriateMessage { .. } | E::InappropriateHandshakeMessage { .. } => {
            format!("the server does not speak TLS ({e}): it answers plain HTTP; use http:// instead of https://")
        }
        _ => return None,
    };
    Some(text)
}

/// Whether a TLS server listens on `host:port` (it answers a TLS ClientHello with a handshake
/// record): the cause of an `http://` request that gets garbage back.
pub fn speaks_tls(host: &str, port: u16) -> bool {
    let Some(mut stream) = probe_connect(host, port) else { return false };
    let Ok(config) = client_config(None) else { return false };
    let name = ServerName::try_from(host.trim_start_matches('[').trim_end_matches(']').to_string())
        .unwrap_or_else(|_| ServerName::try_from("localhost").expect("a valid name"));
    let Ok(mut conn) = ClientConnection::new(config, name) else { return false };
    if conn.write_tls(&mut stream).is_err() {
        return false;
    }
    let mut first = [0u8; 3];
    // A handshake (22) or alert (21) record of TLS 1.x (major version 3).
    stream.read_exact(&mut first).is_ok() && matches!(first, [22 | 21, 3, _])
}

/// Whether a plain HTTP server listens on `host:port`: the cause of an `https://` request whose
/// handshake the server drops.
pub fn speaks_http(host: &str, port: u16) -> bool {
    let Some(mut stream) = probe_connect(host, port) else { return false };
    let request = format!("GET /v1/models HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut first = [0u8; 5];
    stream.read_exact(&mut first).is_ok() && &first == b"HTTP/"
}

fn probe_connect(host: &str, port: u16) -> Option<TcpStream> {
    let addr = (host.trim_start_matches('[').trim_end_matches(']'), port).to_socket_addrs().ok()?.next()?;
    let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    stream.set_write_timeout(Some(Duration::from_secs(2))).ok()?;
    Some(stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_names_certificates_as_curl_reads_it() {
        let none = |_: &str| None;
        assert!(matches!(CaCerts::from_env(none), Ok(None)));
        let missing = |k: &str| (k == "SSL_CERT_FILE").then(|| "/nonexistent/ca.pem".to_string());
        assert!(CaCerts::from_env(missing).is_err_and(|e| e.starts_with("SSL_CERT_FILE: /nonexistent/ca.pem")));
        let dir = std::env::temp_dir().join(format!("rlbench-certdir-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).expect("certificate");
        assert!(std::fs::write(dir.join("a.pem"), cert.cert.pem()).is_ok());
        assert!(std::fs::write(dir.join("README"), "not a certificate").is_ok());
        let d = dir.display().to_string();
        let by_dir = move |k: &str| (k == "SSL_CERT_DIR").then(|| d.clone());
        let ca = CaCerts::from_env(by_dir).expect("readable").expect("set");
        assert_eq!(ca.certs.len(), 1);
        assert!(ca.source.starts_with("SSL_CERT_DIR="));
    }
}
