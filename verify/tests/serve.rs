//! `rlverify serve` end to end: the real binary on a free port, real HTTP clients (ureq, and raw
//! sockets for clients that misbehave). No assertion depends on how fast the machine is: waits
//! poll the server's own state (`/health`, the log) with a generous ceiling.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_rlverify");
/// Ceiling for every wait on the server; reaching it is a failure, not a timing measurement.
const PATIENCE: Duration = Duration::from_secs(120);

/// A running `rlverify serve --port 0`, killed when dropped.
struct Server {
    child: Child,
    addr: String,
    log: PathBuf,
}

impl Server {
    fn start(name: &str, args: &[&str]) -> Server {
        let log = std::env::temp_dir().join(format!("rlverify-serve-{}-{name}.log", std::process::id()));
        let stderr = std::fs::File::create(&log).expect("create the log file");
        let mut child = Command::new(BIN)
            .args(["serve", "--port", "0", "-j", "2"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("start rlverify serve");
        let mut first = String::new();
        BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut first).expect("read the first line");
        let addr = first
            .trim()
            .strip_prefix("listening on http://")
            .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
            .to_string();
        Server { child, addr, log }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// A count `/health` reports: `in_flight` (being scored), `queued` (read, waiting for a
    /// scoring slot) or `reading` (body arriving).
    fn health(&self, what: &str) -> u64 {
        let (status, _, body) = get(&self.url("/health"));
        assert_eq!(status, 200, "{body}");
        parse(&body)[what].as_u64().unwrap_or_else(|| panic!("no `{what}` in {body}"))
    }

    /// Requests being scored now.
    fn in_flight(&self) -> u64 {
        self.health("in_flight")
    }

    /// The value of one metric line of `/metrics` (`name` with its labels).
    fn metric(&self, name: &str) -> f64 {
        let (_, _, text) = get(&self.url("/metrics"));
        let line = text.lines().find(|l| l.strip_prefix(name).is_some_and(|v| v.starts_with(' ')));
        let value = line.and_then(|l| l.rsplit(' ').next()).and_then(|v| v.parse().ok());
        value.unwrap_or_else(|| panic!("no metric `{name}` in:\n{text}"))
    }

    fn wait_until(&self, what: &str, mut done: impl FnMut(&Server) -> bool) {
        let start = Instant::now();
        while !done(self) {
            assert!(start.elapsed() < PATIENCE, "gave up waiting for {what}; log:\n{}", self.log_text());
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder().http_status_as_error(false).timeout_global(Some(PATIENCE)).build().into()
}

/// POST a body; returns the status, the `Retry-After` header and the body.
fn post(url: &str, body: &str) -> (u16, Option<String>, String) {
    let mut resp = agent()
        .post(url)
        .header("Content-Type", "application/json")
        .send(body)
        .unwrap_or_else(|e| panic!("POST {url}: {e}"));
    let retry = resp.headers().get("retry-after").and_then(|v| v.to_str().ok()).map(str::to_string);
    let text = resp.body_mut().read_to_string().expect("read the body");
    (resp.status().as_u16(), retry, text)
}

fn get(url: &str) -> (u16, Option<String>, String) {
    let mut resp = agent().get(url).call().unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let text = resp.body_mut().read_to_string().expect("read the body");
    (resp.status().as_u16(), None, text)
}

fn parse(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

/// A 400 whose JSON `error` mentions `needle`.
fn assert_bad_request(server: &Server, path: &str, body: &str, needle: &str) {
    let (status, _, text) = post(&server.url(path), body);
    assert_eq!(status, 400, "{body} -> {text}");
    let reason = parse(&text)["error"].as_str().expect("an error reason").to_string();
    assert!(reason.contains(needle), "{body}: reason {reason:?} should mention {needle:?}");
}

/// `rlverify score` on these rows, with these flags: its stdout.
fn cli_score(rows: &str, flags: &[&str]) -> String {
    let mut child = Command::new(BIN)
        .args(["score", "-", "--quiet", "--no-progress"])
        .args(flags)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run rlverify score");
    child.stdin.take().expect("stdin").write_all(rows.as_bytes()).expect("write rows");
    let out = child.wait_with_output().expect("wait for rlverify score");
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// A raw connection that sends a request's head and part of its body, and the rest later.
struct SlowRequest {
    stream: TcpStream,
    rest: Vec<u8>,
}

impl SlowRequest {
    fn start(server: &Server, path: &str, body: &str, sent: usize) -> SlowRequest {
        let mut stream = TcpStream::connect(&server.addr).expect("connect");
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            server.addr,
            body.len()
        );
        stream.write_all(head.as_bytes()).expect("send the head");
        stream.write_all(&body.as_bytes()[..sent]).expect("send part of the body");
        stream.flush().expect("flush");
        SlowRequest { stream, rest: body.as_bytes()[sent..].to_vec() }
    }

    /// Send the rest of the body and read the whole response: (status, body).
    fn finish(mut self) -> (u16, String) {
        self.stream.write_all(&self.rest).expect("send the rest");
        self.read_response()
    }

    /// Read the whole response without sending the rest: (status, body).
    fn read_response(mut self) -> (u16, String) {
        self.stream.set_read_timeout(Some(PATIENCE)).expect("timeout");
        let mut raw = String::new();
        self.stream.read_to_string(&mut raw).expect("read the response");
        let status = raw.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        let body = raw.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
        (status, body)
    }
}

fn openrlhf_body(prompts: &[&str], responses: &[&str], labels: &[Value]) -> String {
    let query: Vec<String> = prompts.iter().zip(responses).map(|(p, r)| format!("{p}{r}")).collect();
    json!({ "query": query, "prompts": prompts, "labels": labels }).to_string()
}

#[test]
fn openrlhf_request_shape() {
    let server = Server::start("openrlhf", &[]);
    // The prompt shows a boxed example: only the response (the query after the prompt) counts.
    let prompt = "Answer in \\boxed{}, e.g. \\boxed{7}. What is 1/2 + 1/4?\n";
    let body = openrlhf_body(
        &[prompt, prompt, prompt, "Q: 2+2?\n"],
        &["It is \\boxed{\\frac{3}{4}}.", "So \\boxed{0.75}", "I think it is 7", "The answer is $4$."],
        &[json!("\\frac34"), json!("3/4"), json!("0.75"), json!(4)],
    );
    let (status, _, text) = post(&server.url("/get_reward"), &body);
    assert_eq!(status, 200, "{text}");
    let out = parse(&text);
    assert_eq!(out["rewards"], json!([1.0, 1.0, 0.0, 1.0]), "{text}");
    assert_eq!(out["scores"], json!([1.0, 1.0, 0.0, 1.0]), "{text}");
    assert_eq!(out["extra_logs"]["correct"], json!([1.0, 1.0, 0.0, 1.0]), "{text}");
    // Every extra log is one number per sample (OpenRLHF turns them into tensors).
    for (name, values) in out["extra_logs"].as_object().expect("extra_logs") {
        assert_eq!(values.as_array().map(Vec::len), Some(4), "extra_logs.{name}");
    }

    // Without `prompts` the whole query is the response; a prompt that is not a prefix is ignored.
    let body = json!({ "query": ["so \\boxed{5}", "x \\boxed{6}"], "labels": ["5", "5"] }).to_string();
    assert_eq!(parse(&post(&server.url("/get_reward"), &body).2)["rewards"], json!([1.0, 0.0]));
    let body = json!({ "query": ["so \\boxed{5}"], "prompts": ["other"], "labels": ["5"] }).to_string();
    assert_eq!(parse(&post(&server.url("/get_reward"), &body).2)["rewards"], json!([1.0]));
    // An empty batch is an empty answer.
    let body = json!({ "query": [], "prompts": [], "labels": [] }).to_string();
    assert_eq!(parse(&post(&server.url("/get_reward"), &body).2)["rewards"], json!([]));
}

/// An item whose gold cannot be read is `invalid_gold` with reward 0 (or `--invalid-gold-reward`)
/// and the rest of the request is scored: HTTP 200 (issue 20, point 4: one `null` label made the
/// whole request a 400, which slime retries for minutes and then raises).
#[test]
fn unreadable_labels_are_invalid_gold_per_item() {
    let server = Server::start("invalid-gold", &[]);
    let responses = ["\\boxed{5}", "\\boxed{5}", "\\boxed{5}", "\\boxed{5}", "\\boxed{5}"];
    let labels = [json!(null), json!("5"), json!({ "a": 1 }), json!(""), json!(["5"])];
    let (status, _, text) = post(&server.url("/get_reward"), &openrlhf_body(&[""; 5], &responses, &labels));
    assert_eq!(status, 200, "{text}");
    let out = parse(&text);
    assert_eq!(out["rewards"], json!([0.0, 1.0, 0.0, 0.0, 1.0]), "{text}");
    assert_eq!(out["scores"], json!([0.0, 1.0, 0.0, 0.0, 1.0]), "{text}");
    assert_eq!(out["extra_logs"]["invalid_gold"], json!([1.0, 0.0, 1.0, 1.0, 0.0]), "{text}");
    // slime sends `"label": null` for a sample without one.
    for label in [json!(null), json!(true), json!([1, 2])] {
        let body = json!({ "prompt": "p", "response": "\\boxed{5}", "label": label }).to_string();
        let (status, _, text) = post(&server.url("/slime"), &body);
        assert_eq!((status, parse(&text)), (200, json!(0.0)), "{body}");
    }
    assert_eq!(server.metric("rlverify_invalid_gold_total"), 6.0);
    server.wait_until("the access log", |s| s.log_text().contains("3 invalid gold: `labels[0]` is null"));

    // A configured reward, even with signed rewards, where a wrong answer gets -1.
    let server = Server::start("invalid-gold-reward", &["--reward", "signed", "--invalid-gold-reward", "-0.25"]);
    let body =
        openrlhf_body(&["", "", ""], &["\\boxed{5}", "\\boxed{6}", "\\boxed{5}"], &[json!(null), json!(5), json!(5)]);
    let (status, _, text) = post(&server.url("/get_reward"), &body);
    assert_eq!((status, parse(&text)["rewards"].clone()), (200, json!([-0.25, -1.0, 1.0])), "{text}");
}

/// OpenRLHF decodes with special tokens kept: the end-of-turn token and whatever follows it are
/// not the answer, on every route (issue 20, point 6).
#[test]
fn end_of_turn_tokens_on_every_route() {
    let server = Server::start("turn-tokens", &[]);
    let prompt = "<|im_start|>user\nWhat is 3*5? Put it in \\boxed{}.<|im_end|>\n<|im_start|>assistant\n";
    let responses = [
        "A: 15</s>",
        "So \\boxed{15}<|im_end|>\n<|im_start|>user\nAnd 2*4?<|im_end|>\n<|im_start|>assistant\n\\boxed{8}",
        "The answer is 15.<|eot_id|><|end_of_text|>",
        "\\boxed{16}<|im_end|>\n<|im_start|>assistant\n\\boxed{15}",
    ];
    let want = [1.0, 1.0, 1.0, 0.0];
    let body = openrlhf_body(&[prompt; 4], &responses, &vec![json!("15"); 4]);
    let (status, _, text) = post(&server.url("/get_reward"), &body);
    assert_eq!((status, parse(&text)["rewards"].clone()), (200, json!(want)), "{text}");
    let mut rows = String::new();
    for (response, want) in responses.iter().zip(want) {
        let body = json!({ "prompt": prompt, "response": response, "label": "15" }).to_string();
        let (status, _, text) = post(&server.url("/slime"), &body);
        assert_eq!((status, parse(&text)), (200, json!(want)), "{response}");
        rows.push_str(&(json!({ "response": response, "gold": "15" }).to_string() + "\n"));
    }
    let (status, _, text) = post(&server.url("/score"), &rows);
    assert_eq!(status, 200, "{text}");
    let rewards: Vec<f64> = text.lines().map(|l| parse(l)["reward"].as_f64().expect("a reward")).collect();
    assert_eq!(rewards, want, "{text}");
}

/// The format reward is read before the end-of-turn token too.
#[test]
fn format_reward_before_end_of_turn_tokens() {
    let server = Server::start("turn-format", &["--format-reward=0.5"]);
    let body = openrlhf_body(&[""], &["<think>3*5=15</think><answer>\\boxed{15}</answer><|im_end|>"], &[json!("15")]);
    let (status, _, text) = post(&server.url("/get_reward"), &body);
    assert_eq!((status, parse(&text)["rewards"].clone()), (200, json!([1.5])), "{text}");
}

/// `--no-extra-logs` for OpenRLHF 0.8.x, which cannot read list-valued `extra_logs` (point 2).
#[test]
fn extra_logs_can_be_left_out() {
    let server = Server::start("no-extra-logs", &["--no-extra-logs"]);
    let (status, _, text) = post(&server.url("/get_reward"), &openrlhf_body(&[""], &["\\boxed{1}"], &[json!(1)]));
    assert_eq!(status, 200, "{text}");
    assert_eq!(parse(&text), json!({ "rewards": [1.0], "scores": [1.0] }));
}

/// The README's serve example (`--gold-field` for verl-shaped `/score` rows) still answers
/// OpenRLHF's and slime's requests (issue 20, point 9: every one was a 400).
#[test]
fn readme_serve_example_answers_every_protocol() {
    let server = Server::start(
        "readme",
        &["--reward", "signed", "--format-reward=0.2", "--gold-field", "reward_model.ground_truth"],
    );
    let body = openrlhf_body(&["Q: 1/2+1/4? A: "], &["\\boxed{0.75}"], &[json!("3/4")]);
    let (status, _, text) = post(&server.url("/get_reward"), &body);
    assert_eq!((status, parse(&text)["rewards"].clone()), (200, json!([1.0])), "{text}");
    let body = json!({ "prompt": "p", "response": "\\boxed{0.75}", "label": "3/4" }).to_string();
    assert_eq!(parse(&post(&server.url("/slime"), &body).2), json!(1.0));
    let row = json!({ "response": "\\boxed{0.75}", "reward_model": { "ground_truth": "3/4" } }).to_string();
    assert!(post(&server.url("/score"), &row).2.contains("\"correct\":true"));
}

/// The scoring flags are `rlverify score`'s and give its rewards.
#[test]
fn scoring_flags_match_the_cli() {
    let flags = ["--reward", "signed", "--format-reward=0.25"];
    let server = Server::start("flags", &flags);
    let responses = [
        "<think>easy</think>\n<answer>\\boxed{12}</answer>",
        "<think>hmm</think><answer>\\boxed{13}</answer>",
        "no tags, but \\boxed{12}",
        "nothing at all",
    ];
    let rows: String = responses.iter().map(|r| json!({ "response": r, "gold": "12" }).to_string() + "\n").collect();
    let cli: Vec<f64> =
        cli_score(&rows, &flags).lines().map(|l| parse(l)["reward"].as_f64().expect("a reward")).collect();
    assert_eq!(cli.len(), 4);
    let body = openrlhf_body(&["", "", "", ""], &responses, &[json!("12"), json!("12"), json!("12"), json!("12")]);
    let out = parse(&post(&server.url("/get_reward"), &body).2);
    let served: Vec<f64> = out["rewards"].as_array().expect("rewards").iter().filter_map(Value::as_f64).collect();
    assert_eq!(served, cli);
    assert_eq!(out["extra_logs"]["format_ok"], json!([1.0, 1.0, 0.0, 0.0]));
    // Signed: a wrong answer is below zero, unlike the binary default.
    assert!(served[1] < 0.0 && served[3] < 0.0, "{served:?}");
    for (response, want) in responses.iter().zip(&cli) {
        let body = json!({ "prompt": "p", "response": response, "label": "12" }).to_string();
        let (status, _, text) = post(&server.url("/slime"), &body);
        assert_eq!(status, 200, "{text}");
        assert_eq!(parse(&text).as_f64(), Some(*want), "{response}");
    }
}

#[test]
fn slime_request_shape() {
    let server = Server::start("slime", &[]);
    // slime sends the prompt as text or as chat messages; the reward is the whole JSON answer.
    for (prompt, response, label, want) in [
        (json!("What is 3*4?"), "... so the answer is \\boxed{12}", json!("12"), 1.0),
        (json!([{ "role": "user", "content": "half?" }]), "$\\boxed{\\tfrac{1}{2}}$", json!(0.5), 1.0),
        (json!("q"), "\\boxed{13}", json!("12"), 0.0),
    ] {
        let body = json!({ "prompt": prompt, "response": response, "label": label }).to_string();
        let (status, _, text) = post(&server.url("/slime"), &body);
        assert_eq!(status, 200, "{text}");
        assert_eq!(parse(&text), json!(want), "{response}");
    }
    assert_bad_request(&server, "/slime", r#"{"prompt": "p", "response": "\\boxed{1}"}"#, "`label`");
    assert_bad_request(&server, "/slime", r#"{"response": ["a"], "label": "1"}"#, "field `response` must be a string");
}

/// `--gold-field` / `--response-field` for trainers that send their own field names.
#[test]
fn field_mapping() {
    let server = Server::start("fields", &["--gold-field", "metadata.answer", "--response-field", "output.text"]);
    let body = json!({ "prompt": "p", "output": { "text": "\\boxed{9}" }, "metadata": { "answer": 9 }, "label": "1" });
    let (status, _, text) = post(&server.url("/slime"), &body.to_string());
    assert_eq!((status, parse(&text)), (200, json!(1.0)), "{text}");
    // In an OpenRLHF body the fields are lists.
    let body = json!({ "output": { "text": ["\\boxed{9}", "\\boxed{8}"] }, "metadata": { "answer": ["9", "9"] } });
    let (status, _, text) = post(&server.url("/get_reward"), &body.to_string());
    assert_eq!((status, parse(&text)["rewards"].clone()), (200, json!([1.0, 0.0])), "{text}");
    assert_bad_request(&server, "/slime", r#"{"response": "1"}"#, "missing field `metadata.answer` (or `label`)");
    // Where the named field is absent, the protocol's own is read: the flag is for `/score` rows
    // too, and must not break OpenRLHF's and slime's requests (README example, issue 20).
    let (status, _, text) = post(&server.url("/slime"), r#"{"prompt": "p", "response": "\\boxed{3}", "label": 3}"#);
    assert_eq!((status, parse(&text)), (200, json!(1.0)), "{text}");
    // The batch route maps the same way as `rlverify score --gold-field ... --response-field ...`.
    let rows = "{\"id\": 3, \"output\": {\"text\": \"\\\\boxed{9}\"}, \"metadata\": {\"answer\": \"9\"}}\n";
    let (status, _, text) = post(&server.url("/score"), rows);
    assert_eq!(status, 200);
    assert_eq!(text, cli_score(rows, &["--gold-field", "metadata.answer", "--response-field", "output.text"]));
    assert!(text.contains("\"correct\":true"), "{text}");
}

/// `POST /score` answers exactly what `rlverify score` prints, malformed rows included.
#[test]
fn batch_route_matches_the_cli() {
    let server = Server::start("batch", &[]);
    let rows = [
        json!({ "id": 1, "response": "so \\boxed{2}", "gold": "2" }),
        json!({ "idx": "b", "responses": ["\\boxed{x^2}", "\\boxed{x*x}", "no"], "answer": "x^2" }),
        json!({ "problem_id": 3, "completion": [{ "role": "assistant", "content": "\\boxed{(1,2]}" }], "gt": "(1,2]" }),
        json!({ "id": 4, "response": "\\boxed{1}" }),
        json!({ "id": 5, "response": 7, "gold": "7" }),
        json!([1, 2]),
    ];
    let mut jsonl: String = rows.iter().map(|r| r.to_string() + "\n").collect();
    jsonl.push_str("{not json\n\n");
    let (status, _, text) = post(&server.url("/score"), &jsonl);
    assert_eq!(status, 200, "{text}");
    let cli = cli_score(&jsonl, &[]);
    assert_eq!(text, cli);
    assert_eq!(text.lines().count(), 7);
    assert!(text.lines().nth(3).is_some_and(|l| l.contains("no gold field")), "{text}");

    // A JSON list of rows gets a JSON list of the same rows.
    let list = Value::Array(rows[..3].to_vec()).to_string();
    let (status, _, text) = post(&server.url("/score"), &list);
    assert_eq!(status, 200, "{text}");
    let want: Vec<Value> = cli.lines().take(3).map(parse).collect();
    assert_eq!(parse(&text), Value::Array(want));
    assert_bad_request(&server, "/score", "[1, 2", "invalid JSON");
}

#[test]
fn malformed_requests_get_400_with_a_reason() {
    let server = Server::start("malformed", &[]);
    let url = |p: &str| server.url(p);
    assert_bad_request(&server, "/get_reward", "{\"query\": [", "invalid JSON");
    assert_bad_request(&server, "/get_reward", "not json at all", "invalid JSON");
    assert_bad_request(&server, "/get_reward", "", "empty");
    assert_bad_request(&server, "/get_reward", "[1, 2]", "expected an object");
    assert_bad_request(&server, "/get_reward", r#"{"query": "a", "labels": ["1"]}"#, "field `query` must be a list");
    assert_bad_request(&server, "/get_reward", r#"{"query": ["a", 3], "labels": ["1", "2"]}"#, "`query[1]`");
    assert_bad_request(&server, "/get_reward", r#"{"query": ["a"], "labels": null}"#, "field `labels` must be a list");
    assert_bad_request(&server, "/get_reward", r#"{"query": ["a"], "labels": "1"}"#, "field `labels` must be a list");
    assert_bad_request(&server, "/get_reward", r#"{"query": ["a"]}"#, "missing field `labels`");
    assert_bad_request(&server, "/get_reward", r#"{"query": ["a"], "labels": ["1", "2"]}"#, "`labels` has 2 items");
    assert_bad_request(&server, "/get_reward", r#"{"query": ["a"], "prompts": [], "labels": ["1"]}"#, "`prompts`");
    assert_bad_request(&server, "/slime", "{\"response\": \"\\u12\"}", "invalid JSON");
    assert_bad_request(&server, "/slime", r#"{"response": 5, "label": "5"}"#, "field `response` must be a string");
    // Unknown routes and methods are JSON errors too.
    let (status, _, text) = get(&url("/nope"));
    assert_eq!(status, 404);
    assert!(parse(&text)["error"].as_str().is_some_and(|e| e.contains("/get_reward")), "{text}");
    let (status, _, text) = get(&url("/get_reward"));
    assert_eq!(status, 405);
    assert!(parse(&text)["error"].as_str().is_some_and(|e| e.contains("POST")), "{text}");
    // Invalid UTF-8 is named as such, with its byte, not a dropped connection.
    let mut resp = agent().post(&url("/get_reward")).send(&b"{\"query\": [\"\xff\"]}"[..]).expect("answered");
    assert_eq!(resp.status().as_u16(), 400);
    let reason = parse(&resp.body_mut().read_to_string().expect("body"))["error"].clone();
    assert_eq!(reason, json!("the request body is not valid UTF-8 (at byte 13)"));
    // The server is still there and counted the errors.
    assert_eq!(server.in_flight(), 0);
    let (_, _, metrics) = get(&url("/metrics"));
    assert!(metrics.contains("rlverify_requests_total{route=\"/get_reward\",code=\"400\"}"), "{metrics}");
}

/// A queue smaller than one body could never take it: refused at startup, naming both flags.
#[test]
fn a_queue_smaller_than_a_body_is_a_usage_error() {
    let out = Command::new(BIN).args(["serve", "--port", "0", "--max-body", "2K", "--max-queue", "1K"]).output();
    let out = out.expect("run rlverify serve");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--max-queue") && stderr.contains("--max-body"), "{stderr}");
    // A queue of exactly one body, not a whole number of KiB, takes that body.
    let server =
        Server::start("queue-one-body", &["--max-body", "1500", "--max-queue", "1500", "--queue-timeout", "5"]);
    let body = openrlhf_body(&[""], &[&format!("{} \\boxed{{2}}", "x".repeat(1400))], &[json!("2")]);
    assert!(body.len() > 1024 && body.len() <= 1500, "{}", body.len());
    let (status, _, text) = post(&server.url("/get_reward"), &body);
    assert_eq!((status, parse(&text)["rewards"].clone()), (200, json!([1.0])), "{text}");
}

#[test]
fn oversized_bodies_get_413() {
    let server = Server::start("oversized", &["--max-body", "1K"]);
    let big = openrlhf_body(&[""], &[&"x".repeat(4096)], &[json!("1")]);
    let (status, _, text) = post(&server.url("/get_reward"), &big);
    assert_eq!(status, 413, "{text}");
    assert!(parse(&text)["error"].as_str().is_some_and(|e| e.contains("--max-body")), "{text}");
    // A body under the limit is still served.
    let small = openrlhf_body(&[""], &["\\boxed{1}"], &[json!("1")]);
    let (status, _, text) = post(&server.url("/get_reward"), &small);
    assert_eq!((status, parse(&text)["rewards"].clone()), (200, json!([1.0])));
}

/// Clients that trickle their request (head or body) hold only their own connection: no scoring
/// slot while a body is arriving (issue 20, point 5: 64 stalled senders held every slot).
#[test]
fn slow_clients_do_not_block_others() {
    let server = Server::start("slow", &["--max-in-flight", "2"]);
    let body = openrlhf_body(&[""], &["\\boxed{5}"], &[json!("5")]);
    let slow_bodies: Vec<SlowRequest> = (0..4).map(|_| SlowRequest::start(&server, "/get_reward", &body, 3)).collect();
    let mut slow_head = TcpStream::connect(&server.addr).expect("connect");
    slow_head.write_all(b"POST /get_reward HTTP/1.1\r\nHost: x\r\nContent-Le").expect("send part of a head");
    server.wait_until("the slow bodies to be arriving", |s| s.health("reading") == 4);
    assert_eq!(server.in_flight(), 0, "a body still arriving holds no scoring slot");
    let workers: Vec<_> = (0..4)
        .map(|t| {
            let url = server.url("/get_reward");
            thread::spawn(move || {
                for k in 0..10 {
                    let n = t * 100 + k;
                    let body = openrlhf_body(&[""], &[&format!("\\boxed{{{n}}}")], &[json!(n)]);
                    let (status, _, text) = post(&url, &body);
                    assert_eq!((status, parse(&text)["rewards"].clone()), (200, json!([1.0])), "{text}");
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("a fast client failed");
    }
    // The slow ones were waiting all along and are still served once they finish.
    assert_eq!(server.health("reading"), 4);
    for slow in slow_bodies {
        let (status, text) = slow.finish();
        assert_eq!((status, parse(&text)["rewards"].clone()), (200, json!([1.0])), "{text}");
    }
    drop(slow_head);
}

/// A head that never completes closes its connection after `--header-timeout` (issue 20, point
/// 5: one stayed open past 120 s).
#[test]
fn unfinished_heads_are_cut_after_the_header_timeout() {
    let server = Server::start("header-timeout", &["--header-timeout", "0.5"]);
    let mut half_head = TcpStream::connect(&server.addr).expect("connect");
    half_head.write_all(b"POST /get_reward HTTP/1.1\r\nHost: x\r\nContent-Le").expect("send part of a head");
    half_head.set_read_timeout(Some(PATIENCE)).expect("timeout");
    let start = Instant::now();
    let mut rest = Vec::new();
    // EOF (or a reset) ends the read: the server closed the connection.
    let _ = half_head.read_to_end(&mut rest);
    assert!(start.elapsed() < PATIENCE, "the connection stayed open");
    // A connection that sends nothing at all is cut the same way.
    let mut silent = TcpStream::connect(&server.addr).expect("connect");
    silent.set_read_timeout(Some(PATIENCE)).expect("timeout");
    let _ = silent.read_to_end(&mut rest);
    assert!(start.elapsed() < PATIENCE, "the silent connection stayed open");
    let body = openrlhf_body(&[""], &["\\boxed{2}"], &[json!("2")]);
    let (status, _, text) = post(&server.url("/get_reward"), &body);
    assert_eq!((status, parse(&text)["rewards"].clone()), (200, json!([1.0])), "{text}");
}

/// A body that stops arriving gets 408 after `--body-timeout`.
#[test]
fn stalled_bodies_get_408_after_the_body_timeout() {
    let server = Server::start("body-timeout", &["--body-timeout", "0.5"]);
    let body = openrlhf_body(&[""], &["\\boxed{2}"], &[json!("2")]);
    let (status, text) = SlowRequest::start(&server, "/get_reward", &body, 4).read_response();
    assert_eq!(status, 408, "{text}");
    assert!(parse(&text)["error"].as_str().is_some_and(|e| e.contains("--body-timeout")), "{text}");
    server.wait_until("the request to be gone", |s| s.health("reading") == 0);
}

/// Many clients at once: every answer is right and in the order of its request.
#[test]
fn concurrent_load() {
    let server = Server::start("load", &[]);
    let threads: Vec<_> = (0..16)
        .map(|t| {
            let url = server.url("/get_reward");
            thread::spawn(move || {
                for round in 0..15 {
                    // Item k is right when k is even: the rewards must come back in that pattern.
                    let n = 8 + (t + round) % 9;
                    let prompts: Vec<String> = (0..n).map(|k| format!("Problem {t}.{round}.{k}: ")).collect();
                    let responses: Vec<String> = (0..n)
                        .map(|k| {
                            format!("so \\boxed{{\\frac{{{}}}{{{}}}}}", 2 * (k + t), if k % 2 == 0 { 2 } else { 3 })
                        })
                        .collect();
                    let labels: Vec<Value> = (0..n).map(|k| json!(k + t)).collect();
                    let p: Vec<&str> = prompts.iter().map(String::as_str).collect();
                    let r: Vec<&str> = responses.iter().map(String::as_str).collect();
                    let (status, _, text) = post(&url, &openrlhf_body(&p, &r, &labels));
                    assert_eq!(status, 200, "{text}");
                    let want: Vec<f64> = (0..n).map(|k| if k % 2 == 0 { 1.0 } else { 0.0 }).collect();
                    assert_eq!(parse(&text)["rewards"], json!(want), "client {t} round {round}");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a client failed");
    }
    let (_, _, metrics) = get(&server.url("/metrics"));
    assert!(metrics.contains("rlverify_requests_total{route=\"/get_reward\",code=\"200\"} 240"), "{metrics}");
    let items: u64 = (0..16u64).flat_map(|t| (0..15u64).map(move |r| 8 + (t + r) % 9)).sum();
    assert!(metrics.contains(&format!("rlverify_items_total {items}\n")), "{metrics}");
    assert!(metrics.contains("rlverify_request_duration_seconds{quantile=\"0.99\"}"), "{metrics}");
    // One access-log line per request.
    let log = server.log_text();
    assert_eq!(log.lines().filter(|l| l.contains("\"POST /get_reward\" 200")).count(), 240, "{log}");
}

/// A burst far beyond `--max-in-flight` waits in the queue and is answered in full: OpenRLHF
/// ignores `Retry-After` and drops a reward after 5 refusals (issue 20, point 3: 107 of 3,000
/// lost to 503s).
#[test]
fn bursts_wait_in_the_queue_instead_of_503() {
    const CLIENTS: usize = 300;
    let server = Server::start("burst", &["--max-in-flight", "2", "--quiet"]);
    let start = Arc::new(Barrier::new(CLIENTS));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|t| {
            let (url, start) = (server.url("/get_reward"), start.clone());
            thread::spawn(move || {
                let responses: Vec<String> =
                    (0..8).map(|k| format!("so \\boxed{{\\frac{{{}}}{{{}}}}}", 2 * (t + k), 2 + k % 2)).collect();
                let r: Vec<&str> = responses.iter().map(String::as_str).collect();
                let labels: Vec<Value> = (0..8).map(|k| json!(t + k)).collect();
                let body = openrlhf_body(&[""; 8], &r, &labels);
                start.wait();
                let (status, _, text) = post(&url, &body);
                assert_eq!(status, 200, "client {t}: {text}");
                assert_eq!(parse(&text)["rewards"], json!([1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0]), "client {t}");
            })
        })
        .collect();
    for c in clients {
        c.join().expect("a client failed");
    }
    assert_eq!(server.metric("rlverify_rejected_total"), 0.0);
    assert_eq!(server.metric("rlverify_requests_total{route=\"/get_reward\",code=\"200\"}"), CLIENTS as f64);
    assert_eq!(server.metric("rlverify_queue_wait_seconds_count"), CLIENTS as f64);
    assert_eq!((server.metric("rlverify_queued"), server.metric("rlverify_queue_bytes")), (0.0, 0.0));
}

/// Past `--max-queue` bytes the server stops reading (the client waits on its connection), and
/// answers 503 with `Retry-After` only when the wait passes `--queue-timeout`.
#[test]
fn a_full_queue_holds_clients_then_503_past_the_deadline() {
    let body = openrlhf_body(&[""], &[&format!("{} \\boxed{{2}}", "x".repeat(900))], &[json!("2")]);
    let small = openrlhf_body(&[""], &["\\boxed{3}"], &[json!("3")]);
    let bounds = ["--max-body", "1K", "--max-queue", "1K"];

    let server = Server::start("queue-deadline", &[&bounds[..], &["--queue-timeout", "0.5"]].concat());
    let holder = SlowRequest::start(&server, "/get_reward", &body, 900);
    server.wait_until("the first body to fill the queue", |s| s.metric("rlverify_queue_bytes") == 1024.0);
    let (status, retry, text) = post(&server.url("/get_reward"), &small);
    assert_eq!(status, 503, "{text}");
    assert_eq!(retry.as_deref(), Some("1"));
    assert!(parse(&text)["error"].as_str().is_some_and(|e| e.contains("--queue-timeout")), "{text}");
    assert_eq!(server.metric("rlverify_rejected_total"), 1.0);
    let (status, text) = holder.finish();
    assert_eq!((status, parse(&text)["rewards"].clone()), (200, json!([1.0])), "{text}");

    // With time to wait, the second request is read once the first is answered.
    let server = Server::start("queue-wait", &bounds);
    let holder = SlowRequest::start(&server, "/get_reward", &body, 900);
    server.wait_until("the first body to fill the queue", |s| s.metric("rlverify_queue_bytes") == 1024.0);
    let waiter = {
        let url = server.url("/get_reward");
        thread::spawn(move || post(&url, &small))
    };
    server.wait_until("the second request to wait for room", |s| s.health("reading") == 2);
    assert!(!waiter.is_finished());
    let (status, text) = holder.finish();
    assert_eq!((status, parse(&text)["rewards"].clone()), (200, json!([1.0])), "{text}");
    let (status, _, text) = waiter.join().expect("the waiting client");
    assert_eq!((status, parse(&text)["rewards"].clone()), (200, json!([1.0])), "{text}");
    assert_eq!(server.metric("rlverify_rejected_total"), 0.0);
    assert!(server.metric("rlverify_queue_wait_seconds_sum") > 0.0);
}

/// SIGTERM does not wait for bodies still arriving: such a request was not accepted, so it is
/// answered 503 with `Retry-After` (its client sends it again) and the server exits 0 without
/// waiting for `--body-timeout`. Connections with no request under way do not keep it alive.
#[cfg(unix)]
#[test]
fn sigterm_answers_unfinished_uploads_503_and_exits_0() {
    let mut server = Server::start("shutdown", &["--body-timeout", "600", "--request-timeout", "600"]);
    let body = openrlhf_body(&["Q: "], &["\\boxed{42}"], &[json!("42")]);
    let stalled = SlowRequest::start(&server, "/get_reward", &body, 10);
    server.wait_until("the body to be arriving", |s| s.health("reading") == 1);
    let idle = TcpStream::connect(&server.addr).expect("connect");
    let mut half_head = TcpStream::connect(&server.addr).expect("connect");
    half_head.write_all(b"POST /get_reward HTTP/1.1\r\nHost: x\r\nContent-Le").expect("send part of a head");
    let pid = server.child.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().expect("run kill");
    assert!(killed.success());
    let (status, text) = stalled.read_response();
    assert_eq!(status, 503, "{text}");
    assert!(parse(&text)["error"].as_str().is_some_and(|e| e.contains("shutting down")), "{text}");
    let start = Instant::now();
    let exit = loop {
        if let Some(s) = server.child.try_wait().expect("try_wait") {
            break s;
        }
        assert!(start.elapsed() < PATIENCE, "still running after SIGTERM; log:\n{}", server.log_text());
        thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(exit.code(), Some(0), "log:\n{}", server.log_text());
    drop((idle, half_head));
}

/// A body that never arrives is answered 408 once `--request-timeout` passes, and frees its slot.
#[test]
fn request_deadline_covers_the_body() {
    let server = Server::start("deadline", &["--request-timeout", "0.5", "--max-in-flight", "1"]);
    let body = openrlhf_body(&[""], &["\\boxed{2}"], &[json!("2")]);
    let stuck = SlowRequest::start(&server, "/get_reward", &body, 4);
    let (status, text) = stuck.read_response();
    assert_eq!(status, 408, "{text}");
    assert!(parse(&text)["error"].as_str().is_some_and(|e| e.contains("--request-timeout")), "{text}");
    server.wait_until("the request to be gone", |s| s.health("reading") == 0);
    let (status, _, text) = post(&server.url("/get_reward"), &body);
    assert_eq!((status, parse(&text)["rewards"].clone()), (200, json!([1.0])), "{text}");
}
