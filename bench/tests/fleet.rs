//! `rlbench run` against several servers and against servers that fail: least-loaded routing over
//! a fleet, a server killed mid-run (nothing lost or duplicated), a failing server taken out and
//! back in, `Retry-After` honoured, the start-up check of `/v1/models`, a dead server stopping
//! the run with "re-run the same command to continue", a server that passes its health checks
//! but fails completions ending the run with bounded attempts, and proxies from the environment.

mod support;

use serde_json::Value;
use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;
use support::{refused_url, Behaviour, FakeServer, Fault};

const PROXY_VARS: [&str; 8] =
    ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"];

fn rlbench() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rlbench"));
    c.env_remove("RLVR_DATA_DIR").env_remove("OPENAI_API_KEY");
    for v in PROXY_VARS {
        c.env_remove(v);
    }
    c
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rlbench-fleet-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// A suite file of `n` problems whose gold answer is in the prompt (the fake server's rule).
fn suite(dir: &Path, n: usize) -> PathBuf {
    let rows: String = (0..n)
        .map(|i| format!("{{\"id\":\"q{i}\",\"problem\":\"Compute: the answer is {i}.\",\"answer\":\"{i}\"}}\n"))
        .collect();
    let path = dir.join("mini.jsonl");
    std::fs::write(&path, rows).expect("write suite");
    path
}

/// `rlbench run` on `suite` with K samples against `endpoints`, into `out`.
fn run(suite: &Path, k: usize, out: &Path, endpoints: &[String], extra: &[&str]) -> Output {
    run_command(suite, k, out, endpoints, extra).output().expect("run rlbench")
}

/// [`run`], killed and failed after [`HANG_GUARD`] instead of hanging the test suite.
fn run_guarded(suite: &Path, k: usize, out: &Path, endpoints: &[String], extra: &[&str]) -> Output {
    let mut child = run_command(suite, k, out, endpoints, extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start rlbench");
    let (tx, rx) = mpsc::channel();
    for (name, pipe) in [
        ("stdout", child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>)),
        ("stderr", child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>)),
    ] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            let _ = tx.send((name, bytes));
        });
    }
    drop(tx);
    // Both pipes close when rlbench exits.
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    for _ in 0..2 {
        match rx.recv_timeout(HANG_GUARD) {
            Ok(("stdout", b)) => stdout = b,
            Ok((_, b)) => stderr = b,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("rlbench run did not finish within {HANG_GUARD:?}");
            }
        }
    }
    let status = child.wait().expect("wait for rlbench");
    Output { status, stdout, stderr }
}

/// Far longer than any of these runs takes: a run still going by then hangs.
const HANG_GUARD: Duration = Duration::from_secs(60);

fn run_command(suite: &Path, k: usize, out: &Path, endpoints: &[String], extra: &[&str]) -> Command {
    let mut c = rlbench();
    c.args(["run", "--prompt", "plain", "--api", "completions", "--served-model", "fake", "--retry-delay", "0.05"])
        .args(["-k", &k.to_string(), "--suite"])
        .arg(suite)
        .arg("--out")
        .arg(out);
    for e in endpoints {
        c.args(["--endpoint", e]);
    }
    c.args(extra);
    c
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The (id, sample) pairs of a completions file; fails on a duplicate.
fn records(path: &Path) -> BTreeSet<(String, u64)> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut seen = BTreeSet::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).expect("record");
        let key = (v["id"].as_str().expect("id").to_string(), v["sample"].as_u64().expect("sample"));
        assert!(seen.insert(key.clone()), "duplicate record {key:?}");
    }
    seen
}

fn endpoint_stats(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("endpoints.json")).expect("endpoints.json");
    serde_json::from_str::<Vec<Value>>(&text).expect("endpoints.json is a list")
}

fn stats_of<'a>(stats: &'a [Value], server: &FakeServer) -> &'a Value {
    let port = format!(":{}", server.addr.port());
    stats.iter().find(|s| s["endpoint"].as_str().is_some_and(|e| e.ends_with(&port))).expect("endpoint in stats")
}

#[test]
fn a_fleet_shares_the_work_and_survives_a_server_killed_mid_run() {
    let dir = temp_dir("killed");
    let file = suite(&dir, 12);
    let latency = Some(Duration::from_millis(40));
    let a = FakeServer::start(Behaviour { latency, ..Behaviour::default() });
    let b = FakeServer::start(Behaviour { latency, ..Behaviour::default() });
    // Dies after its 5th answer: its connections drop, in-flight requests included.
    let dying = FakeServer::start(Behaviour { latency, die_after: Some(5), ..Behaviour::default() });
    let out = dir.join("run");
    let urls = [a.url(), b.url(), dying.url()];
    let o = run(&file, 4, &out, &urls, &["--concurrency", "6"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dying.is_dead());

    // Exactly K completions of every problem, none twice, each the one its seed asks for.
    let got = records(&out.join("mini.jsonl"));
    assert_eq!(got.len(), 48);
    let stats = endpoint_stats(&out);
    let (sa, sb, sd) = (stats_of(&stats, &a), stats_of(&stats, &b), stats_of(&stats, &dying));
    let completions: u64 = stats.iter().map(|s| s["completions"].as_u64().unwrap_or(0)).sum();
    assert_eq!(completions, 48, "{stats:?}");
    assert_eq!(sd["completions"], 5, "the dead server answered 5 requests: {sd}");
    assert!(sd["failures"].as_u64() >= Some(1) && sd["taken_out"].as_u64() >= Some(1), "{sd}");
    // The live servers took the rest between them.
    assert!(sa["completions"].as_u64() >= Some(1) && sb["completions"].as_u64() >= Some(1), "{stats:?}");
    assert_eq!(sa["completions"].as_u64().unwrap_or(0) as usize, a.served.load(std::sync::atomic::Ordering::SeqCst));
    assert!(sa["tokens"].as_u64() > Some(0), "{sa}");

    // The printed report and metrics.json show the endpoints.
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("| endpoint | requests | failures |"), "{stdout}");
    assert!(stdout.contains(&dying.url().replace("http://", "")), "{stdout}");
    let metrics: Value =
        serde_json::from_slice(&std::fs::read(out.join("metrics.json")).expect("metrics")).expect("json");
    assert_eq!(metrics["endpoints"].as_array().map(Vec::len), Some(3));
    assert!(metrics["endpoints"][0]["tokens_per_second"].is_number(), "{}", metrics["endpoints"]);

    // Resume stays exact: the same run over the live servers asks for nothing.
    let before = a.request_count() + b.request_count();
    let o = run(&file, 4, &out, &urls[..2], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("0 completions generated, 48 already present"), "{}", stderr(&o));
    assert_eq!(a.request_count() + b.request_count(), before);
    assert_eq!(records(&out.join("mini.jsonl")).len(), 48);
}

#[test]
fn requests_go_to_the_least_loaded_server() {
    let dir = temp_dir("balance");
    let file = suite(&dir, 8);
    // A slow and a fast server: the fast one frees up sooner, so it gets more of the requests.
    let slow = FakeServer::start(Behaviour { latency: Some(Duration::from_millis(400)), ..Behaviour::default() });
    let fast = FakeServer::start(Behaviour { latency: Some(Duration::from_millis(10)), ..Behaviour::default() });
    let out = dir.join("run");
    let o = run(&file, 4, &out, &[slow.url(), fast.url()], &["--concurrency", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(records(&out.join("mini.jsonl")).len(), 32);
    let (s, f) = (slow.request_count(), fast.request_count());
    assert_eq!(s + f, 32);
    assert!(s >= 1 && f > s, "slow {s}, fast {f}");
}

#[test]
fn a_failing_server_is_taken_out_and_back_in_after_a_health_check() {
    let dir = temp_dir("health");
    let file = suite(&dir, 24);
    let faults = vec![Fault::Status(503)];
    // 96 requests of 60 ms over two workers: long enough for the health check after 1 s.
    let latency = Some(Duration::from_millis(60));
    let flaky = FakeServer::start(Behaviour { faults, latency, ..Behaviour::default() });
    let steady = FakeServer::start(Behaviour { latency, ..Behaviour::default() });
    let out = dir.join("run");
    let urls = [flaky.url(), steady.url()];
    let o = run(&file, 4, &out, &urls, &["--concurrency", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(records(&out.join("mini.jsonl")).len(), 96);
    let stats = endpoint_stats(&out);
    let f = stats_of(&stats, &flaky);
    assert!(f["taken_out"].as_u64() >= Some(1) && f["failures"].as_u64() >= Some(1), "{f}");
    // It came back: answers after the failures, and a health check beyond the start-up check.
    assert!(f["completions"].as_u64() >= Some(1), "{f}");
    assert!(flaky.log.lock().map(|l| l.model_requests).unwrap_or(0) >= 2);
}

#[test]
fn retry_after_is_honoured() {
    let dir = temp_dir("retry-after");
    let file = suite(&dir, 1);
    let server = FakeServer::start(Behaviour { faults: vec![Fault::RetryAfter(429, 2)], ..Behaviour::default() });
    let out = dir.join("run");
    let o = run(&file, 1, &out, &[server.url()], &["--concurrency", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let log = server.log.lock().expect("log");
    assert_eq!(log.arrivals.len(), 2);
    let waited = log.arrivals[1] - log.arrivals[0];
    // --retry-delay is 0.05 s: only Retry-After explains a wait of 2 s.
    assert!(waited >= Duration::from_secs(2), "retried after {waited:?}");
}

#[test]
fn a_dead_server_stops_the_run_with_what_to_do() {
    let dir = temp_dir("dead");
    let file = suite(&dir, 64);
    let server = FakeServer::start(Behaviour { die_after: Some(3), ..Behaviour::default() });
    let out = dir.join("run");
    let o = run(&file, 1, &out, &[server.url()], &["--concurrency", "4", "--down-timeout", "1"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(server.is_dead());
    assert!(err.contains("requests failed; re-run the same command to continue"), "{err}");
    assert!(err.contains("stopped answering"), "{err}");
    assert!(err.contains("more"), "failures beyond the first few are counted: {err}");
    assert!(!err.contains("no suite has it"), "{err}");
    // It stopped at its failure budget (16) instead of trying all 64 problems.
    assert!(err.contains("stopped after"), "{err}");
    let failed: usize = err
        .lines()
        .find_map(|l| l.strip_suffix(" requests failed; re-run the same command to continue"))
        .and_then(|n| n.trim().parse().ok())
        .expect("count of failed requests");
    assert!((16..64 - 3).contains(&failed), "{failed} failed: {err}");
    assert_eq!(records(&out.join("mini.jsonl")).len(), 3);

    // The same command once a server is back continues to exactly one completion per problem.
    let back = FakeServer::start(Behaviour::default());
    let o = run(&file, 1, &out, &[back.url()], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(records(&out.join("mini.jsonl")).len(), 64);
    assert_eq!(back.request_count(), 61);
}

/// The count in "N requests failed; re-run the same command to continue".
fn failed_requests(err: &str) -> usize {
    err.lines()
        .find_map(|l| l.strip_suffix(" requests failed; re-run the same command to continue"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no count of failed requests: {err}"))
}

/// A server that lists its models (so every health check passes) but answers 503 to every
/// completion used to be taken out and put back forever, even with `--retries 0`. Each request
/// now makes at most `--retries` + 1 attempts and the run stops at its failure budget.
#[test]
fn a_server_that_passes_health_checks_but_fails_every_completion_ends_the_run() {
    let dir = temp_dir("503-always");
    let file = suite(&dir, 16);
    for retries in [0usize, 1] {
        let server = FakeServer::start(Behaviour { always_status: Some(503), ..Behaviour::default() });
        let out = dir.join(format!("run-{retries}"));
        let args = ["--concurrency", "4", "--max-failures", "4", "--retries", &retries.to_string()];
        let o = run_guarded(&file, 1, &out, &[server.url()], &args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains("HTTP 503"), "{err}");
        assert!(err.contains("stopped after"), "the failure budget stopped it: {err}");
        let failed = failed_requests(&err);
        assert!((4..16).contains(&failed), "{failed} failed: {err}");
        let attempts = server.request_count();
        assert!((failed..=failed * (retries + 1)).contains(&attempts), "{attempts} attempts: {err}");
        if retries > 0 {
            // Retries waited for health checks that passed and put the server back.
            let checks = server.log.lock().map(|l| l.model_requests).unwrap_or(0);
            assert!(checks >= 2, "{checks} model requests: {err}");
        }
        assert!(records(&out.join("mini.jsonl")).is_empty());
    }
}

/// A server that answers 5 completions, then 503 to every other one while its health checks
/// pass: the run ends at its failure budget with the 5 kept, and the same command against a
/// working server completes exactly the rest.
#[test]
fn a_server_that_starts_failing_completions_ends_the_run_and_keeps_what_it_answered() {
    let dir = temp_dir("503-after");
    let file = suite(&dir, 16);
    let server = FakeServer::start(Behaviour { fail_after: Some(5), ..Behaviour::default() });
    let out = dir.join("run");
    let args = ["--concurrency", "4", "--max-failures", "4", "--retries", "0"];
    let o = run_guarded(&file, 1, &out, &[server.url()], &args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("5 completions generated") && err.contains("stopped after"), "{err}");
    let failed = failed_requests(&err);
    assert!((4..16 - 5).contains(&failed), "{failed} failed: {err}");
    assert_eq!(server.request_count(), 5 + failed, "one attempt per request with --retries 0: {err}");
    assert_eq!(records(&out.join("mini.jsonl")).len(), 5);

    let back = FakeServer::start(Behaviour::default());
    let o = run_guarded(&file, 1, &out, &[back.url()], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(back.request_count(), 11);
    assert_eq!(records(&out.join("mini.jsonl")).len(), 16);
}

/// A server that fails every third completion: without retries those requests fail and the run
/// ends with them missing (no failure budget to stop it early); the same command with a retry
/// finishes the run, nothing generated twice.
#[test]
fn a_server_that_fails_some_completions_ends_the_run_and_resume_finishes_it() {
    let dir = temp_dir("503-some");
    let file = suite(&dir, 12);
    let server = FakeServer::start(Behaviour { fail_every: Some(3), ..Behaviour::default() });
    let out = dir.join("run");
    // One request at a time, so the failing arrivals are the 3rd, 6th, 9th and 12th request.
    let args = ["--concurrency", "1", "--retries", "0", "--max-failures", "0"];
    let o = run_guarded(&file, 1, &out, &[server.url()], &args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(failed_requests(&err), 4, "{err}");
    assert!(err.contains("8 completions generated") && !err.contains("stopped after"), "{err}");
    assert_eq!(server.request_count(), 12);
    assert_eq!(records(&out.join("mini.jsonl")).len(), 8);

    // Arrivals 13.. : the 15th fails and its retry succeeds.
    let o = run_guarded(&file, 1, &out, &[server.url()], &["--concurrency", "1", "--retries", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("4 completions generated, 8 already present"), "{}", stderr(&o));
    assert_eq!(server.request_count(), 12 + 5);
    assert_eq!(records(&out.join("mini.jsonl")).len(), 12);
}

#[test]
fn a_dead_server_with_nothing_generated_says_so() {
    let dir = temp_dir("dead-at-once");
    let file = suite(&dir, 8);
    let server = FakeServer::start(Behaviour { die_after: Some(0), ..Behaviour::default() });
    let out = dir.join("run");
    let o = run(&file, 2, &out, &[server.url()], &["--concurrency", "2", "--down-timeout", "0.5"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("requests failed; re-run the same command to continue"), "{err}");
    assert!(!err.contains("--metric"), "{err}");
    assert!(!out.join("mini.jsonl").is_file() || records(&out.join("mini.jsonl")).is_empty());
}

#[test]
fn the_start_up_check_names_the_endpoint() {
    let dir = temp_dir("startup");
    let file = suite(&dir, 2);
    let out = dir.join("run");

    let dead = refused_url();
    let o = run(&file, 1, &out, std::slice::from_ref(&dead), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(&dead) && stderr(&o).contains("cannot reach"), "{}", stderr(&o));

    let other = FakeServer::start(Behaviour { models: Some(vec!["llama-3-8b".into()]), ..Behaviour::default() });
    let o = run(&file, 1, &out, &[other.url()], &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("does not serve `fake`") && err.contains("llama-3-8b"), "{err}");
    assert_eq!(other.request_count(), 0, "no generation before the check passes");

    let locked = FakeServer::start(Behaviour { models_status: Some(401), ..Behaviour::default() });
    let o = run(&file, 1, &out, &[locked.url()], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("HTTP 401") && stderr(&o).contains("--api-key"), "{}", stderr(&o));

    // One bad endpoint of two: the error names it, not the good one.
    let good = FakeServer::start(Behaviour::default());
    let o = run(&file, 1, &out, &[good.url(), dead.clone()], &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("1 of 2 endpoints") && err.contains(&dead) && !err.contains(&good.url()), "{err}");

    // A server without /v1/models is used with a warning.
    let bare = FakeServer::start(Behaviour { models_status: Some(404), ..Behaviour::default() });
    let o = run(&file, 1, &out, &[bare.url()], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("does not list its models"), "{}", stderr(&o));
}

#[test]
fn an_endpoints_file_adds_servers() {
    let dir = temp_dir("file");
    let file = suite(&dir, 6);
    let a = FakeServer::start(Behaviour::default());
    let b = FakeServer::start(Behaviour::default());
    let list = dir.join("servers.txt");
    std::fs::write(&list, format!("# two replicas\n{}/v1\n\n{}  # second\n", a.url(), b.url())).expect("write");
    let out = dir.join("run");
    let o = run(&file, 2, &out, &[], &["--endpoints-file", list.to_str().expect("utf8"), "--concurrency", "4"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(a.request_count() + b.request_count(), 12);
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(out.join("run.json")).expect("run.json")).expect("json");
    let recorded = manifest["endpoint"].as_str().unwrap_or("");
    assert!(recorded.contains(&a.url()) && recorded.contains(&b.url()), "{recorded}");

    std::fs::write(&list, "# nothing\n").expect("write");
    let o = run(&file, 2, &dir.join("run2"), &[], &["--endpoints-file", list.to_str().expect("utf8")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no server URL"), "{}", stderr(&o));
}

#[test]
fn connections_are_kept_alive() {
    let dir = temp_dir("keepalive");
    let file = suite(&dir, 10);
    let server = FakeServer::start(Behaviour::default());
    let out = dir.join("run");
    let o = run(&file, 3, &out, &[server.url()], &["--concurrency", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(server.request_count(), 30);
    let conns = server.connections.load(std::sync::atomic::Ordering::SeqCst);
    assert!(conns <= 10, "{conns} connections for 30 requests and a model check");
}

/// A CONNECT proxy on 127.0.0.1 that records the targets asked for and tunnels every one of them
/// to `upstream` (so that a made-up host name reaches the local fake server).
fn start_proxy(upstream: std::net::SocketAddr) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    std::thread::spawn(move || {
        for mut client in listener.incoming().flatten() {
            let seen = seen2.clone();
            std::thread::spawn(move || {
                let _ = client.set_read_timeout(Some(Duration::from_secs(10)));
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && head.len() < 8192 {
                    match client.read(&mut byte) {
                        Ok(1) => head.push(byte[0]),
                        _ => return,
                    }
                }
                let line = String::from_utf8_lossy(&head).lines().next().unwrap_or("").to_string();
                if let Ok(mut s) = seen.lock() {
                    s.push(line);
                }
                let Ok(server) = std::net::TcpStream::connect(upstream) else { return };
                if client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").is_err() {
                    return;
                }
                let (Ok(mut c2), Ok(mut s2)) = (client.try_clone(), server.try_clone()) else { return };
                let (mut c1, mut s1) = (client, server);
                let up = std::thread::spawn(move || {
                    let _ = std::io::copy(&mut c1, &mut s1);
                    let _ = s1.shutdown(std::net::Shutdown::Write);
                });
                let _ = std::io::copy(&mut s2, &mut c2);
                let _ = c2.shutdown(std::net::Shutdown::Write);
                let _ = up.join();
            });
        }
    });
    (format!("http://{addr}"), seen)
}

#[test]
fn proxies_come_from_the_environment() {
    let dir = temp_dir("proxy");
    let file = suite(&dir, 2);
    let server = FakeServer::start(Behaviour::default());
    let (proxy, seen) = start_proxy(server.addr);
    // A host only the proxy can reach.
    let url = format!("http://gpu-node.invalid:{}", server.addr.port());
    let o = rlbench()
        .env("HTTP_PROXY", &proxy)
        .args(["run", "--prompt", "plain", "--api", "completions", "--served-model", "fake", "-k", "2", "--suite"])
        .arg(&file)
        .args(["--endpoint", &url, "--out"])
        .arg(dir.join("run"))
        .output()
        .expect("run rlbench");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(server.request_count(), 4);
    let lines = seen.lock().map(|s| s.clone()).unwrap_or_default();
    let target = format!("CONNECT gpu-node.invalid:{} HTTP/1.1", server.addr.port());
    assert!(!lines.is_empty() && lines.iter().all(|l| *l == target), "{lines:?}");

    // NO_PROXY sends it directly (where the made-up host cannot be found).
    let o = rlbench()
        .env("HTTP_PROXY", &proxy)
        .env("NO_PROXY", "localhost,.invalid")
        .args(["run", "--prompt", "plain", "--served-model", "fake", "--suite"])
        .arg(&file)
        .args(["--endpoint", &url, "--out"])
        .arg(dir.join("run2"))
        .output()
        .expect("run rlbench");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("gpu-node.invalid"), "{}", stderr(&o));
    assert_eq!(seen.lock().map(|s| s.len()).unwrap_or(0), lines.len());
}
