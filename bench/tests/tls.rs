//! `https://` endpoints against local TLS servers with certificates made by the test: a
//! self-signed certificate or the CA certificate `openssl req -x509` makes, given with
//! `--ca-cert` or `SSL_CERT_FILE`, is trusted; every refusal names its true cause and fix (an
//! unknown issuer, a CA certificate as the server's, a name mismatch, an expired certificate,
//! `https://` to a plain HTTP server and `http://` to a TLS one).

mod support;

use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::{Behaviour, FakeServer, TlsIdentity};

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rlbench-tls-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// `rlbench run` of a 3-problem suite against `url`, with the machine's certificate settings
/// removed (`env` adds some back).
fn run_env(dir: &Path, url: &str, out: &str, extra: &[&str], env: &[(&str, &Path)]) -> Output {
    let rows: String = (0..3)
        .map(|i| format!("{{\"id\":\"q{i}\",\"problem\":\"Compute: the answer is {i}.\",\"answer\":\"{i}\"}}\n"))
        .collect();
    std::fs::write(dir.join("mini.jsonl"), rows).expect("write suite");
    let mut c = Command::new(env!("CARGO_BIN_EXE_rlbench"));
    for v in ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "OPENAI_API_KEY"] {
        c.env_remove(v);
    }
    c.env_remove("SSL_CERT_FILE").env_remove("SSL_CERT_DIR");
    for (k, v) in env {
        c.env(k, v);
    }
    c.current_dir(dir)
        .args(["run", "--suite", "mini.jsonl", "-k", "2", "--prompt", "plain", "--served-model", "fake"])
        .args(["--endpoint", url, "--out", out, "--retry-delay", "0.01"])
        .args(extra)
        .output()
        .expect("run rlbench")
}

fn run(dir: &Path, url: &str, out: &str, extra: &[&str]) -> Output {
    run_env(dir, url, out, extra, &[])
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Refused with status 2 and a message holding every `needle`.
fn refused(o: &Output, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    for n in needles {
        assert!(err.contains(n), "`{n}` missing from:\n{err}");
    }
}

fn identity(cert: &rcgen::Certificate, key: &KeyPair) -> TlsIdentity {
    TlsIdentity { cert_der: cert.der().to_vec(), key_der: key.serialize_der() }
}

/// A CA, and a certificate it signs for `names` (`ca_flag`: the leaf claims CA:TRUE too;
/// `expired`: valid in 2000 only).
fn ca_and_leaf(names: &[&str], ca_flag: bool, expired: bool) -> (rcgen::Certificate, rcgen::Certificate, KeyPair) {
    let ca_key = KeyPair::generate().expect("key");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).expect("CA");
    let key = KeyPair::generate().expect("key");
    let mut params = CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).expect("params");
    if ca_flag {
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    }
    if expired {
        params.not_before = rcgen::date_time_ymd(2000, 1, 1);
        params.not_after = rcgen::date_time_ymd(2000, 12, 31);
    }
    let leaf = params.signed_by(&key, &ca, &ca_key).expect("leaf");
    (ca, leaf, key)
}

#[test]
fn a_self_signed_server_is_trusted_with_ca_cert() {
    let dir = temp_dir("ca");
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()])
        .expect("self-signed certificate");
    let pem = dir.join("server.pem");
    std::fs::write(&pem, certified.cert.pem()).expect("write pem");
    let server = FakeServer::start_tls(Behaviour::default(), identity(&certified.cert, &certified.key_pair));
    let port = server.addr.port();

    // By name and by address, both in the certificate.
    for (url, out) in [(format!("https://localhost:{port}/v1"), "by-name"), (server.url(), "by-address")] {
        let o = run(&dir, &url, out, &["--ca-cert", "server.pem"]);
        assert!(o.status.success(), "{url}: {}", stderr(&o));
        let lines = std::fs::read_to_string(dir.join(out).join("mini.jsonl")).expect("completions");
        assert_eq!(lines.lines().count(), 6);
        assert!(String::from_utf8_lossy(&o.stdout).contains("| mini | 3 | 2 |"));
    }
    assert_eq!(server.request_count(), 12);

    // SSL_CERT_FILE, as curl and Python read it.
    let o = run_env(&dir, &server.url(), "by-env", &[], &[("SSL_CERT_FILE", &pem)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run_env(&dir, &server.url(), "by-env-dir", &[], &[("SSL_CERT_DIR", &dir)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(server.request_count(), 12 + 6 + 6);

    // Without it the certificate is not trusted: a clear error before any generation.
    let o = run(&dir, &server.url(), "untrusted", &[]);
    refused(&o, &[&server.url(), "Mozilla's roots", "--ca-cert"]);

    // Another certificate does not vouch for this server.
    let other = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).expect("certificate");
    std::fs::write(dir.join("other.pem"), other.cert.pem()).expect("write pem");
    let o = run(&dir, &server.url(), "other", &["--ca-cert", "other.pem"]);
    refused(&o, &["not signed by a certificate of other.pem", "nor is it one of them"]);
    assert_eq!(server.request_count(), 24);

    // A file that holds no certificate is refused up front.
    std::fs::write(dir.join("junk.pem"), "not a certificate\n").expect("write");
    let o = run(&dir, &server.url(), "junk", &["--ca-cert", "junk.pem"]);
    refused(&o, &["--ca-cert junk.pem"]);
}

/// The certificate everybody makes (`openssl req -x509`: basicConstraints CA:TRUE), as the
/// server's own: trusted when given, since it is that server's identity.
#[test]
fn the_ca_certificate_openssl_makes_is_pinned() {
    let dir = temp_dir("openssl");
    let key = KeyPair::generate().expect("key");
    let mut params = CertificateParams::new(vec!["127.0.0.1".to_string()]).expect("params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let cert = params.self_signed(&key).expect("certificate");
    std::fs::write(dir.join("self.pem"), cert.pem()).expect("write");
    let server = FakeServer::start_tls(Behaviour::default(), identity(&cert, &key));
    let o = run(&dir, &server.url(), "rcgen", &["--ca-cert", "self.pem"]);
    assert!(o.status.success(), "{}", stderr(&o));

    // The very command of the report, when openssl is installed.
    let made = Command::new("openssl")
        .current_dir(&dir)
        .args(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1"])
        .args(["-addext", "subjectAltName=IP:127.0.0.1", "-days", "2", "-keyout", "key.pem", "-out", "cert.pem"])
        .output();
    let Ok(made) = made.map_err(|e| rl_tests::skip(&format!("openssl: {e}"))) else { return };
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let der = |args: &[&str]| {
        let o = Command::new("openssl").current_dir(&dir).args(args).output().expect("openssl");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o.stdout
    };
    let cert_der = der(&["x509", "-in", "cert.pem", "-outform", "DER"]);
    let key_der = der(&["pkcs8", "-topk8", "-nocrypt", "-in", "key.pem", "-outform", "DER"]);
    let server = FakeServer::start_tls(Behaviour::default(), TlsIdentity { cert_der, key_der });
    let o = run(&dir, &server.url(), "openssl", &["--ca-cert", "cert.pem"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Each refusal names its cause: a CA certificate as a server's (signed by the CA given), a name
/// the certificate does not hold, an expired certificate.
#[test]
fn tls_failures_name_their_cause() {
    let dir = temp_dir("causes");
    let cases: [(&[&str], bool, bool, &[&str]); 3] = [
        (&["127.0.0.1"], true, false, &["is a CA certificate", "--ca-cert FILE"]),
        (&["example.com"], false, false, &["not for `127.0.0.1`", "subjectAltName"]),
        (&["127.0.0.1"], false, true, &["has expired", "renew"]),
    ];
    for (k, (names, ca_flag, expired, needles)) in cases.into_iter().enumerate() {
        let (ca, leaf, key) = ca_and_leaf(names, ca_flag, expired);
        std::fs::write(dir.join("ca.pem"), ca.pem()).expect("write");
        let server = FakeServer::start_tls(Behaviour::default(), identity(&leaf, &key));
        let o = run(&dir, &server.url(), &format!("case{k}"), &["--ca-cert", "ca.pem"]);
        refused(&o, needles);
        assert!(!stderr(&o).contains("not signed by"), "{}", stderr(&o));
        assert_eq!(server.request_count(), 0);
    }
    // And a good leaf of the same CA is trusted.
    let (ca, leaf, key) = ca_and_leaf(&["127.0.0.1"], false, false);
    std::fs::write(dir.join("ca.pem"), ca.pem()).expect("write");
    let server = FakeServer::start_tls(Behaviour::default(), identity(&leaf, &key));
    assert!(run(&dir, &server.url(), "good", &["--ca-cert", "ca.pem"]).status.success());
}

/// `https://` to a plain HTTP server and `http://` to a TLS server: the error names the scheme.
#[test]
fn the_wrong_scheme_is_named() {
    let dir = temp_dir("scheme");
    let plain = FakeServer::start(Behaviour::default());
    let https_url = plain.url().replacen("http://", "https://", 1);
    refused(&run(&dir, &https_url, "to-plain", &[]), &["speaks plain HTTP", "use http://"]);
    let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).expect("certificate");
    let tls = FakeServer::start_tls(Behaviour::default(), identity(&certified.cert, &certified.key_pair));
    let http_url = tls.url().replacen("https://", "http://", 1);
    refused(&run(&dir, &http_url, "to-tls", &[]), &["speaks TLS", "use https://"]);
}
