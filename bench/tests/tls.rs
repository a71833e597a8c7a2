//! `https://` endpoints: a local TLS server with a self-signed certificate made by the test is
//! trusted with `--ca-cert FILE`, and refused without it with a hint.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::{Behaviour, FakeServer, TlsIdentity};

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rlbench-tls-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn run(dir: &Path, url: &str, out: &str, extra: &[&str]) -> Output {
    let rows: String = (0..3)
        .map(|i| format!("{{\"id\":\"q{i}\",\"problem\":\"Compute: the answer is {i}.\",\"answer\":\"{i}\"}}\n"))
        .collect();
    std::fs::write(dir.join("mini.jsonl"), rows).expect("write suite");
    let mut c = Command::new(env!("CARGO_BIN_EXE_rlbench"));
    for v in ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "OPENAI_API_KEY"] {
        c.env_remove(v);
    }
    c.current_dir(dir)
        .args(["run", "--suite", "mini.jsonl", "-k", "2", "--prompt", "plain", "--served-model", "fake"])
        .args(["--endpoint", url, "--out", out, "--retry-delay", "0.01"])
        .args(extra)
        .output()
        .expect("run rlbench")
}

#[test]
fn a_self_signed_server_is_trusted_with_ca_cert() {
    let dir = temp_dir("ca");
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()])
        .expect("self-signed certificate");
    let pem = dir.join("server.pem");
    std::fs::write(&pem, certified.cert.pem()).expect("write pem");
    let server = FakeServer::start_tls(
        Behaviour::default(),
        TlsIdentity { cert_der: certified.cert.der().to_vec(), key_der: certified.key_pair.serialize_der() },
    );
    let port = server.addr.port();

    // By name and by address, both in the certificate.
    for (url, out) in [(format!("https://localhost:{port}/v1"), "by-name"), (server.url(), "by-address")] {
        let o = run(&dir, &url, out, &["--ca-cert", "server.pem"]);
        assert!(o.status.success(), "{url}: {}", String::from_utf8_lossy(&o.stderr));
        let lines = std::fs::read_to_string(dir.join(out).join("mini.jsonl")).expect("completions");
        assert_eq!(lines.lines().count(), 6);
        assert!(String::from_utf8_lossy(&o.stdout).contains("| mini | 3 | 2 |"));
    }
    assert_eq!(server.request_count(), 12);

    // Without --ca-cert the certificate is not trusted: a clear error before any generation.
    let o = run(&dir, &server.url(), "untrusted", &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&server.url()) && err.contains("--ca-cert"), "{err}");
    assert_eq!(server.request_count(), 12);

    // Another certificate does not vouch for this server.
    let other = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).expect("certificate");
    std::fs::write(dir.join("other.pem"), other.cert.pem()).expect("write pem");
    let o = run(&dir, &server.url(), "other", &["--ca-cert", "other.pem"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not signed by other.pem"));

    // A file that holds no certificate is refused up front.
    std::fs::write(dir.join("junk.pem"), "not a certificate\n").expect("write");
    let o = run(&dir, &server.url(), "junk", &["--ca-cert", "junk.pem"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--ca-cert junk.pem"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
