//! End-to-end tests of generation runs against a real local OpenAI-compatible server: protocol,
//! retries through injected faults, and resume after an interrupted run.

mod support;

use rlbench::backend::{Api, Backend, BackendError, OpenAiBackend, RetryPolicy, SamplingParams};
use rlbench::prompt::PromptTemplate;
use rlbench::run::{self, read_records, suite_file, RunError, RunSpec, SamplingSettings};
use rlbench::suite::{load_suite, LoadedSuite, Manifest, SuiteQuery};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use support::{completion_text, Behaviour, FakeServer, Fault};

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rlbench-it-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// A suite file of `n` problems whose gold answers are 10, 11, ...
fn make_suite(dir: &Path, name: &str, n: usize) -> LoadedSuite {
    let path = dir.join(format!("{name}.jsonl"));
    let text: String = (0..n)
        .map(|i| {
            format!(
                "{{\"id\":\"{name}-{i}\",\"problem\":\"Compute: the answer is {}.\",\"answer\":\"{}\"}}\n",
                10 + i,
                10 + i
            )
        })
        .collect();
    std::fs::write(&path, text).expect("write suite");
    let manifest = Manifest::builtin().expect("manifest");
    load_suite(&manifest, path.to_str().expect("utf8 path"), &SuiteQuery::default()).expect("load suite")
}

fn spec(out: &Path, suites: Vec<LoadedSuite>, k: usize, per_request: usize) -> RunSpec {
    RunSpec {
        out: out.to_path_buf(),
        suites,
        prompt: PromptTemplate::load("plain").expect("prompt"),
        sampling: SamplingSettings {
            k,
            temperature: 0.6,
            top_p: 0.95,
            top_k: None,
            max_tokens: 64,
            stop: vec![],
            seed: Some(1234),
            samples_per_request: per_request,
        },
        concurrency: 3,
        retry: RetryPolicy {
            max_retries: 8,
            base_delay: Duration::from_millis(5),
            max_delay: Duration::from_millis(20),
        },
        max_failures: 0,
        endpoint: None,
        limit: None,
    }
}

fn backend(server: &FakeServer, api: Api, timeout: Duration) -> OpenAiBackend {
    OpenAiBackend::new(&server.url(), "fake-model", api, timeout, None).expect("backend")
}

/// (id, sample) -> response of every record of a suite file, failing on duplicates.
fn contents(dir: &Path, suite: &str) -> BTreeMap<(String, usize), String> {
    let text = std::fs::read_to_string(suite_file(dir, suite)).unwrap_or_default();
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("complete JSON lines only");
        let key = (v["id"].as_str().unwrap_or("").to_string(), v["sample"].as_u64().unwrap_or(0) as usize);
        let prev = out.insert(key.clone(), v["response"].as_str().unwrap_or("").to_string());
        assert!(prev.is_none(), "{key:?} written twice");
    }
    out
}

fn assert_exactly_k(dir: &Path, suite: &LoadedSuite, k: usize) {
    let c = contents(dir, &suite.name);
    assert_eq!(c.len(), suite.problems.len() * k, "total completions of {}", suite.name);
    for p in &suite.problems {
        for s in 0..k {
            assert!(c.contains_key(&(p.id.clone(), s)), "missing {} sample {s}", p.id);
        }
    }
}

#[test]
fn both_apis_return_n_ordered_deterministic_completions() {
    let server = FakeServer::start(Behaviour { chunked: true, ..Behaviour::default() });
    let prompt = PromptTemplate::load("boxed").expect("prompt").render("Compute: the answer is 42.");
    let params = SamplingParams {
        n: 3,
        temperature: 1.0,
        top_p: 1.0,
        top_k: Some(5),
        max_new_tokens: 8,
        stop: vec!["</s>".into()],
        seed: Some(9),
    };
    for api in [Api::Completions, Api::Chat] {
        let b = backend(&server, api, Duration::from_secs(5));
        let got = b.generate(&prompt, &params).expect("generate");
        let sent = if api == Api::Chat { &prompt.user } else { &prompt.completion };
        let want: Vec<String> = (0..3).map(|i| completion_text(9, sent, i)).collect();
        assert_eq!(got.iter().map(|c| c.text.clone()).collect::<Vec<_>>(), want);
        assert_eq!(got[0].finish_reason.as_deref(), Some("stop"));
    }
    let log = server.log.lock().expect("log");
    let (path, chat) = &log.requests[1];
    assert_eq!(path, "/v1/chat/completions");
    assert_eq!(chat["messages"][0]["role"], "system");
    assert_eq!(chat["model"], "fake-model");
    assert_eq!(chat["seed"], 9);
    assert_eq!(chat["top_k"], 5);
    assert_eq!(chat["stop"][0], "</s>");
    assert_eq!(log.requests[0].0, "/v1/completions");
}

#[test]
fn timeouts_and_dropped_connections_are_reported_as_retryable() {
    let slow =
        FakeServer::start(Behaviour { faults: vec![Fault::Slow(Duration::from_millis(1500))], ..Behaviour::default() });
    let prompt = PromptTemplate::load("plain").expect("prompt").render("answer is 1");
    let params =
        SamplingParams { n: 1, temperature: 0.0, top_p: 1.0, top_k: None, max_new_tokens: 8, stop: vec![], seed: None };
    let err = backend(&slow, Api::Completions, Duration::from_millis(200)).generate(&prompt, &params);
    assert!(matches!(err, Err(BackendError::Timeout(_))), "{err:?}");
    let dropped =
        FakeServer::start(Behaviour { faults: vec![Fault::Drop, Fault::DropMidBody], ..Behaviour::default() });
    let b = backend(&dropped, Api::Completions, Duration::from_secs(5));
    for _ in 0..2 {
        let err = b.generate(&prompt, &params);
        assert!(matches!(&err, Err(e @ BackendError::Io(_)) if e.is_retryable()), "{err:?}");
    }
    assert!(b.generate(&prompt, &params).is_ok());
    let rejecting = FakeServer::start(Behaviour { always_status: Some(400), ..Behaviour::default() });
    let err = backend(&rejecting, Api::Chat, Duration::from_secs(5)).generate(&prompt, &params);
    assert!(matches!(&err, Err(e @ BackendError::Http { status: 400, .. }) if !e.is_retryable()), "{err:?}");
}

#[test]
fn a_run_retries_through_faults_and_matches_a_clean_run() {
    let dir = temp_dir("faults");
    let suites = vec![make_suite(&dir, "alpha", 5), make_suite(&dir, "beta", 3)];
    let k = 4;

    let clean_server = FakeServer::start(Behaviour::default());
    let clean_dir = dir.join("clean");
    let s = spec(&clean_dir, suites.clone(), k, 1);
    let out = run::run(&s, &backend(&clean_server, Api::Completions, Duration::from_secs(5)), &mut |_, _| {})
        .expect("clean run");
    assert_eq!((out.generated, out.already_present, out.failures.len()), (32, 0, 0));

    let faults = vec![
        Fault::Status(500),
        Fault::Slow(Duration::from_millis(3000)),
        Fault::Drop,
        Fault::Status(503),
        Fault::DropMidBody,
        Fault::Status(429),
    ];
    let flaky = FakeServer::start(Behaviour { faults, chunked: true, ..Behaviour::default() });
    let flaky_dir = dir.join("flaky");
    let s = spec(&flaky_dir, suites.clone(), k, 1);
    let mut calls = 0;
    let out = run::run(&s, &backend(&flaky, Api::Completions, Duration::from_millis(1000)), &mut |_, _| calls += 1)
        .expect("flaky run");
    assert_eq!((out.generated, out.failures.len()), (32, 0), "{:?}", out.failures);
    assert!(calls > 1);
    // Every fault costs one retry (more only if a loaded machine made a normal answer time out).
    assert!(flaky.request_count() >= 32 + 6);
    for s in &suites {
        assert_exactly_k(&flaky_dir, s, k);
        assert_eq!(contents(&flaky_dir, &s.name), contents(&clean_dir, &s.name), "same seeds, same completions");
    }
}

#[test]
fn an_interrupted_run_resumes_to_exactly_k_per_problem() {
    let dir = temp_dir("resume");
    let suites = vec![make_suite(&dir, "gamma", 6), make_suite(&dir, "delta", 2)];
    let k = 5;
    let clean_server = FakeServer::start(Behaviour::default());
    let clean_dir = dir.join("clean");
    run::run(
        &spec(&clean_dir, suites.clone(), k, 1),
        &backend(&clean_server, Api::Chat, Duration::from_secs(5)),
        &mut |_, _| {},
    )
    .expect("clean run");

    // First attempt: the server dies after 13 answers; the run ends with failures.
    let run_dir = dir.join("run");
    let dying = FakeServer::start(Behaviour { fail_after: Some(13), ..Behaviour::default() });
    let mut s = spec(&run_dir, suites.clone(), k, 1);
    s.retry.max_retries = 1;
    let out = run::run(&s, &backend(&dying, Api::Chat, Duration::from_secs(5)), &mut |_, _| {}).expect("partial run");
    // The fake server stops after about 13 answers (requests in flight when it stops may still be
    // answered, so the exact count can vary by one or two); what matters is what the resume does.
    let first = out.generated;
    assert!((13..40).contains(&first), "partial run generated {first}");
    assert_eq!(out.missing, 40 - first);
    assert!(!out.failures.is_empty());
    assert_eq!(run::RunManifest::read(&run_dir).ok().flatten().map(|m| m.complete), Some(false));

    // Simulate a kill in the middle of writing a record: cut the last line of one file in half.
    let path = suite_file(&run_dir, "gamma");
    let bytes = std::fs::read(&path).expect("read");
    let before = contents(&run_dir, "gamma").len();
    assert!(before > 0);
    std::fs::write(&path, &bytes[..bytes.len() - 20]).expect("truncate");

    // Second attempt, same settings, a healthy server on another port.
    let healthy = FakeServer::start(Behaviour::default());
    let out = run::run(&s, &backend(&healthy, Api::Chat, Duration::from_secs(5)), &mut |_, _| {}).expect("resumed run");
    assert!(out.failures.is_empty(), "{:?}", out.failures);
    assert!(out.cut_bytes > 0, "the partial line was detected");
    assert_eq!(out.already_present, first - 1, "{first} written, one cut");
    assert_eq!(out.generated, 40 - (first - 1));
    assert_eq!(healthy.request_count(), 40 - (first - 1), "nothing generated twice");
    for suite in &suites {
        assert_exactly_k(&run_dir, suite, k);
        assert_eq!(contents(&run_dir, &suite.name), contents(&clean_dir, &suite.name));
    }
    assert_eq!(run::RunManifest::read(&run_dir).ok().flatten().map(|m| m.complete), Some(true));

    // A third run has nothing left to do.
    let out = run::run(&s, &backend(&healthy, Api::Chat, Duration::from_secs(5)), &mut |_, _| {}).expect("no-op run");
    assert_eq!((out.generated, out.already_present), (0, 40));
    assert_eq!(read_records(&suite_file(&run_dir, "gamma")).map(|r| r.len()).ok(), Some(30));
}

#[test]
fn multi_sample_requests_also_resume_to_exactly_k() {
    let dir = temp_dir("chunks");
    let suites = vec![make_suite(&dir, "eps", 4)];
    let k = 6;
    let run_dir = dir.join("run");
    let dying = FakeServer::start(Behaviour { fail_after: Some(2), ..Behaviour::default() });
    let mut s = spec(&run_dir, suites.clone(), k, 4);
    s.concurrency = 1;
    s.retry.max_retries = 0;
    let out =
        run::run(&s, &backend(&dying, Api::Completions, Duration::from_secs(5)), &mut |_, _| {}).expect("partial");
    assert_eq!(out.generated, 6, "two requests: 4 + 2 samples of the first problem");
    let healthy = FakeServer::start(Behaviour::default());
    let out =
        run::run(&s, &backend(&healthy, Api::Completions, Duration::from_secs(5)), &mut |_, _| {}).expect("resume");
    assert_eq!((out.generated, out.failures.len()), (18, 0));
    assert_exactly_k(&run_dir, &suites[0], k);
}

#[test]
fn resuming_with_other_settings_is_refused() {
    let dir = temp_dir("conflict");
    let suites = vec![make_suite(&dir, "zeta", 2)];
    let server = FakeServer::start(Behaviour::default());
    let b = backend(&server, Api::Completions, Duration::from_secs(5));
    let s = spec(&dir.join("run"), suites.clone(), 2, 1);
    run::run(&s, &b, &mut |_, _| {}).expect("first run");
    let mut other = s.clone();
    other.sampling.temperature = 1.0;
    other.prompt = PromptTemplate::load("boxed").expect("prompt");
    let err = run::run(&other, &b, &mut |_, _| {});
    let Err(RunError::Conflict { conflicts, .. }) = err else { panic!("expected a conflict, got {err:?}") };
    assert_eq!(conflicts.len(), 2, "{conflicts:?}");
    assert!(conflicts.iter().any(|c| c.starts_with("temperature: run has 0.6, this command has 1")));
    assert!(conflicts.iter().any(|c| c.starts_with("prompt:")));
    // The endpoint and the suite list may change.
    let mut more = s.clone();
    more.suites.push(make_suite(&dir, "eta", 1));
    more.endpoint = Some("http://elsewhere:1".into());
    let out = run::run(&more, &b, &mut |_, _| {}).expect("resume with an extra suite");
    assert_eq!((out.generated, out.already_present), (2, 4));
}

#[test]
fn a_rejected_request_is_not_retried_and_is_reported() {
    let dir = temp_dir("rejected");
    let suites = vec![make_suite(&dir, "theta", 2)];
    let server = FakeServer::start(Behaviour { always_status: Some(400), ..Behaviour::default() });
    let s = spec(&dir.join("run"), suites, 1, 1);
    let out = run::run(&s, &backend(&server, Api::Completions, Duration::from_secs(5)), &mut |_, _| {}).expect("run");
    assert_eq!((out.generated, out.failures.len(), out.missing), (0, 2, 2));
    assert_eq!(server.request_count(), 2);
    assert!(out.failures[0].error.contains("HTTP 400"), "{}", out.failures[0].error);
}

/// A server that returns fewer choices than `n`: what came back is kept and the rest is asked for
/// in follow-up requests (seeded as a resume from that sample would be), so every problem still
/// gets exactly K completions and nothing is thrown away.
#[test]
fn short_answers_are_kept_and_the_rest_is_requested() {
    let dir = temp_dir("short-n");
    let suites = vec![make_suite(&dir, "iota", 3)];
    let k = 5;
    let server = FakeServer::start(Behaviour { max_choices: Some(2), ..Behaviour::default() });
    let mut s = spec(&dir.join("run"), suites.clone(), k, 5);
    s.concurrency = 1;
    let out = run::run(&s, &backend(&server, Api::Completions, Duration::from_secs(5)), &mut |_, _| {}).expect("run");
    assert_eq!((out.generated, out.missing, out.failures.len()), (15, 0, 0), "{:?}", out.failures);
    assert_exactly_k(&dir.join("run"), &suites[0], k);
    // Per problem: n = 5 (2 come back), n = 3 (2), n = 1 (1).
    let log = server.log.lock().expect("log");
    let ns: Vec<u64> = log.requests.iter().map(|(_, r)| r["n"].as_u64().unwrap_or(0)).collect();
    assert_eq!(ns, [5, 3, 1].repeat(3));
    // Each follow-up carries the seed of its first sample, as a resume would send.
    let seeds: Vec<u64> = log.requests.iter().take(3).map(|(_, r)| r["seed"].as_u64().unwrap_or(0)).collect();
    let want: Vec<u64> = [0, 2, 4].iter().map(|&first| run::request_seed(1234, "iota", "iota-0", first)).collect();
    assert_eq!(seeds, want);
    let records = read_records(&suite_file(&dir.join("run"), "iota")).expect("records");
    assert!(records.iter().filter(|r| r.id == "iota-0").all(|r| r.seed == Some(want[r.sample / 2])));
}

/// A second run on a directory in use is refused at once, naming the directory and the holder's
/// pid, and nothing is requested; once the first lets go, the run proceeds.
#[test]
fn a_locked_run_directory_is_refused_with_its_owner() {
    let dir = temp_dir("lock");
    let suites = vec![make_suite(&dir, "kappa", 2)];
    let run_dir = dir.join("run");
    std::fs::create_dir_all(&run_dir).expect("mkdir");
    let server = FakeServer::start(Behaviour::default());
    let b = backend(&server, Api::Completions, Duration::from_secs(5));
    let s = spec(&run_dir, suites, 2, 1);
    let held = run::RunLock::acquire(&run_dir).expect("first lock");
    let err = run::run(&s, &b, &mut |_, _| {}).map(|_| ()).map_err(|e| e.to_string());
    let Err(message) = err else { panic!("a second run on a locked directory went ahead") };
    assert!(message.contains(&run_dir.display().to_string()), "{message}");
    assert!(message.contains(&format!("pid {}", std::process::id())), "{message}");
    assert_eq!(server.request_count(), 0);
    drop(held);
    let out = run::run(&s, &b, &mut |_, _| {}).expect("run after release");
    assert_eq!(out.generated, 4);
}
