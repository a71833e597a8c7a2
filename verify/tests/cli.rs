//! Integration tests of the `rlverify` binary: input shapes, ids, order, malformed lines, exit
//! codes. Inputs are chosen so that the verdict is obvious (`42` vs gold `42` is correct, `41` is
//! wrong) and does not depend on how clever the extractor or the checker is.

use serde_json::{json, Value};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_rlverify");

/// A fresh file under the target's temp dir with these contents.
fn temp_file(name: &str, contents: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("rlverify-cli");
    std::fs::create_dir_all(&dir).expect("create temp dir");
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("write temp file");
    path
}

fn jsonl(lines: &[Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

fn run(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rlverify");
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(stdin.as_bytes()).expect("write stdin");
    drop(input);
    child.wait_with_output().expect("wait")
}

fn stdout_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("output is not JSON ({e}): {l}")))
        .collect()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Score `input` lines given on stdin with extra flags; returns (exit code, output lines).
fn score(input: &[Value], flags: &[&str]) -> (i32, Vec<Value>, String) {
    let mut args = vec!["score", "-"];
    args.extend_from_slice(flags);
    let out = run(&args, &jsonl(input));
    (out.status.code().unwrap_or(-1), stdout_lines(&out), stderr(&out))
}

#[test]
fn flat_shapes_are_scored_and_carry_their_id() {
    let input = [
        json!({"id": "a", "response": "42", "gold": "42"}),
        json!({"idx": 7, "completion": "41", "answer": "42"}),
        json!({"problem_id": "p", "pred": "42", "ground_truth": 42}),
        json!({"unique_id": "u", "prediction": "41", "gt": "42"}),
        json!({"output": "42", "gold": "42"}),
        json!({"generation": "42", "solution": "42"}),
        json!({"response": "42", "reward_model": {"ground_truth": "42"}}),
    ];
    let (code, out, err) = score(&input, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.len(), input.len());
    let expected_correct = [true, false, true, false, true, true, true];
    for (k, (line, want)) in out.iter().zip(expected_correct).enumerate() {
        assert_eq!(line["correct"], json!(want), "line {k}: {line}");
        assert_eq!(line["reward"], json!(if want { 1.0 } else { 0.0 }), "line {k}: {line}");
        assert_eq!(line["status"], json!(if want { "correct" } else { "wrong" }), "line {k}: {line}");
        assert!(line.get("limit").is_none(), "line {k}: {line}");
    }
    assert_eq!(out[0]["id"], json!("a"));
    assert_eq!(out[1]["idx"], json!(7));
    assert_eq!(out[2]["problem_id"], json!("p"));
    assert_eq!(out[3]["unique_id"], json!("u"));
    assert!(out[4].get("id").is_none() && out[4].get("line").is_none());
    // The summary goes to stderr.
    assert!(err.contains("accuracy"), "{err}");
}

#[test]
fn lists_of_responses_give_lists_and_n_correct() {
    let input = [
        json!({"idx": 0, "code": ["42", "41", "42"], "gt": "42"}),
        json!({"idx": 1, "responses": [], "gold": "42"}),
        json!({"idx": 2, "preds": ["41"], "answer": "42"}),
    ];
    let (code, out, err) = score(&input, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out[0]["correct"], json!([true, false, true]));
    assert_eq!(out[0]["reward"], json!([1.0, 0.0, 1.0]));
    assert_eq!(out[0]["status"], json!(["correct", "wrong", "correct"]));
    assert_eq!(out[0]["n_correct"], json!(2));
    assert_eq!(out[0]["extracted"].as_array().map(Vec::len), Some(3));
    assert_eq!(out[1]["correct"], json!([]));
    assert_eq!(out[1]["n_correct"], json!(0));
    assert_eq!(out[2]["n_correct"], json!(0));
}

#[test]
fn trl_chat_completions_use_the_assistant_message() {
    let chat = |text: &str| json!([{"role": "assistant", "content": text}]);
    let input = [
        json!({"prompt": [{"role": "user", "content": "6*7?"}], "completion": chat("42"), "answer": "42"}),
        json!({"completion": [{"role": "user", "content": "42"}, {"role": "assistant", "content": "41"}],
               "answer": "42"}),
        json!({"completions": [chat("42"), chat("41")], "answer": "42"}),
        json!({"completion": [{"role": "user", "content": "42"}], "answer": "42"}),
    ];
    let (code, out, err) = score(&input, &[]);
    assert_eq!(code, 1, "the chat without an assistant message is malformed: {err}");
    assert_eq!(out[0]["correct"], json!(true));
    assert_eq!(out[1]["correct"], json!(false), "the user turn must not be scored");
    assert_eq!(out[2]["correct"], json!([true, false]));
    assert_eq!(out[3]["line"], json!(4));
    assert!(out[3]["error"].as_str().unwrap_or("").contains("assistant"), "{}", out[3]);
}

#[test]
fn forced_fields_take_dotted_paths() {
    let input = [
        json!({"id": 1, "outputs": [{"text": "42"}], "meta": {"target": "42"}, "gold": "0"}),
        json!({"id": 2, "outputs": [{"text": "41"}], "meta": {"target": "42"}, "gold": "41"}),
    ];
    let (code, out, err) = score(&input, &["--response-field", "outputs.0.text", "--gold-field", "meta.target"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!((out[0]["correct"].clone(), out[1]["correct"].clone()), (json!(true), json!(false)));
    // A forced field that is missing is a malformed line naming the path, with a hint.
    let (code, out, err) = score(&input[..1], &["--gold-field", "meta.nope"]);
    assert_eq!(code, 1);
    assert!(out[0]["error"].as_str().unwrap_or("").contains("meta.nope"), "{}", out[0]);
    assert!(err.contains("hint:"), "{err}");
}

#[test]
fn order_is_preserved_with_several_threads() {
    let input: Vec<Value> =
        (0..3000).map(|k| json!({"id": k, "response": if k % 3 == 0 { "42" } else { "41" }, "gold": "42"})).collect();
    let (code, out, err) = score(&input, &["--threads", "2"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.len(), input.len());
    for (k, line) in out.iter().enumerate() {
        assert_eq!(line["id"], json!(k));
        assert_eq!(line["correct"], json!(k % 3 == 0), "{line}");
    }
}

#[test]
fn malformed_lines_are_reported_and_the_rest_is_scored() {
    let text = [
        r#"{"id": 1, "response": "42", "gold": "42"}"#,
        r#"{"id": 2, "response": "42", "gold": "#,
        "",
        r#"{"id": 3, "gold": "42"}"#,
        r#"{"id": 4, "response": 42, "gold": "42"}"#,
        r#"{"id": 5, "response": "42", "gold": ["42", "43"]}"#,
        r#"[1, 2, 3]"#,
        r#"{"id": 6, "response": "41", "gold": "42"}"#,
    ]
    .join("\n");
    let path = temp_file("malformed.jsonl", &text);
    let path_str = path.to_string_lossy().into_owned();
    let out = run(&["score", &path_str], "");
    assert_eq!(out.status.code(), Some(1));
    let lines = stdout_lines(&out);
    // Blank line 3 is skipped; every other line has one output line, in order.
    assert_eq!(lines.len(), 7);
    assert_eq!(lines[0]["correct"], json!(true));
    assert_eq!(lines[6]["correct"], json!(false));
    let errors: Vec<(u64, String)> = lines[1..6]
        .iter()
        .map(|l| (l["line"].as_u64().unwrap_or(0), l["error"].as_str().unwrap_or("").to_string()))
        .collect();
    let want = [(2, "invalid JSON"), (4, "response"), (5, "`response`"), (6, "`gold`"), (7, "expected an object")];
    for ((line, message), (want_line, want_text)) in errors.iter().zip(want) {
        assert_eq!(*line, want_line, "{message}");
        assert!(message.contains(want_text), "line {line}: {message:?} should mention {want_text:?}");
    }
    // Ids of malformed lines are kept when the JSON could be read.
    assert_eq!(lines[2]["id"], json!(3));
    let err = stderr(&out);
    for n in [2, 4, 5, 6, 7] {
        assert!(err.contains(&format!("{path_str}:{n}: error:")), "line {n} missing from stderr:\n{err}");
    }
    assert!(!err.contains(&format!("{path_str}:1:")), "{err}");
}

#[test]
fn output_file_and_signed_reward() {
    let input =
        jsonl(&[json!({"id": 1, "response": "41", "gold": "42"}), json!({"id": 2, "response": "42", "gold": "42"})]);
    let path = temp_file("signed.jsonl", &input);
    let out_path = temp_file("signed.out.jsonl", "stale contents\n");
    let out =
        run(&["score", &path.to_string_lossy(), "-o", &out_path.to_string_lossy(), "--reward", "signed", "-q"], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    assert!(stderr(&out).is_empty(), "--quiet prints no summary: {}", stderr(&out));
    let written = std::fs::read_to_string(&out_path).expect("output file");
    let lines: Vec<Value> = written.lines().map(|l| serde_json::from_str(l).expect("json")).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["reward"], json!(-1.0));
    assert_eq!(lines[1]["reward"], json!(1.0));
}

#[test]
fn format_reward_adds_the_weighted_bonus() {
    let input = [
        json!({"response": "<think>6*7</think>\n<answer>41</answer>", "gold": "42"}),
        json!({"response": "42", "gold": "42"}),
        json!({"responses": ["<think>a</think><answer>41</answer>", "41"], "gold": "42"}),
    ];
    let (code, out, err) = score(&input, &["--format-reward"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!((out[0]["format_ok"].clone(), out[0]["reward"].clone()), (json!(true), json!(0.5)));
    assert_eq!((out[1]["format_ok"].clone(), out[1]["reward"].clone()), (json!(false), json!(1.0)));
    assert_eq!(out[2]["format_ok"], json!([true, false]));
    assert_eq!(out[2]["reward"], json!([0.5, 0.0]));
    let (_, out, _) = score(&input[..1], &["--format-reward=0.25", "--reward", "signed"]);
    assert_eq!(out[0]["reward"], json!(-0.75));
    // Without the flag there is no format field.
    let (_, out, _) = score(&input[..1], &[]);
    assert!(out[0].get("format_ok").is_none());
}

#[test]
fn check_exit_codes() {
    let ok = run(&["check", "42", "42"], "");
    assert_eq!(ok.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&ok.stdout).starts_with("correct"));
    let wrong = run(&["check", "42", "41"], "");
    assert_eq!(wrong.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&wrong.stdout).starts_with("wrong (status: wrong"));
    let explained = run(&["check", "42", "-", "--explain"], "41\n");
    assert_eq!(explained.status.code(), Some(1));
    let text = String::from_utf8_lossy(&explained.stdout);
    for want in ["gold", "prediction", "extracted:", "parsed:", "rule:"] {
        assert!(text.contains(want), "{want:?} missing from:\n{text}");
    }
    let usage = run(&["check", "42"], "");
    assert_eq!(usage.status.code(), Some(2));
}

/// A response cut off mid-derivation has no answer by default, as in `score`; `--truncated lenient`
/// reads its last formula, as `score --truncated lenient` does.
#[test]
fn extract_follows_the_truncation_policy() {
    let steps: String =
        (1..=40).map(|k| format!("Step {k}: we now have $m = {k}$ and we continue with the next case, so\n")).collect();
    let cut = format!("{steps}Step 41: then the sum of the first");
    let default = run(&["extract", "-"], &cut);
    assert_eq!(default.status.code(), Some(1), "{}", String::from_utf8_lossy(&default.stdout));
    let lenient = run(&["extract", "-", "--truncated", "lenient", "--extract", "lenient"], &cut);
    assert_eq!(lenient.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&lenient.stdout).trim(), "m = 40");
    let scored = run(&["check", "40", "-", "--truncated", "lenient", "--extract", "lenient"], &cut);
    assert_eq!(scored.status.code(), Some(0), "{}", String::from_utf8_lossy(&scored.stdout));
    assert_eq!(run(&["check", "40", "-"], &cut).status.code(), Some(1));
}

#[test]
fn extract_reads_stdin() {
    let out = run(&["extract", "-"], "42\n");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "42");
    let verbose = run(&["extract", "-", "--verbose"], "42");
    assert!(String::from_utf8_lossy(&verbose.stdout).contains("source:"));
    let none = run(&["extract", "-"], "   \n");
    assert_eq!(none.status.code(), Some(1));
    assert!(none.stdout.is_empty());
}

#[test]
fn io_errors_exit_2() {
    let out = run(&["score", "/nonexistent/dir/file.jsonl"], "");
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.starts_with("error: failed to open `/nonexistent/dir/file.jsonl`"), "{err}");
    assert!(err.contains("Caused by:"), "{err}");
    let out = run(&["score", "-", "--reward", "ternary"], "");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn broken_pipe_exits_quietly() {
    let input: Vec<Value> = (0..30_000).map(|k| json!({"id": k, "response": "42", "gold": "42"})).collect();
    let path = temp_file("pipe.jsonl", &jsonl(&input));
    let err = rl_tests::assert_quiet_into_closed_pipe(Command::new(BIN).args(["score", &path.to_string_lossy(), "-q"]));
    assert!(err.is_empty(), "{err}");
}

#[test]
fn output_over_the_input_is_refused() {
    let text = jsonl(&[json!({"id": 1, "response": "42", "gold": "42"})]);
    let path = temp_file("same.jsonl", &text);
    let p = path.to_string_lossy().into_owned();
    let out = run(&["score", &p, "-o", &p], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("the same file"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&path).expect("input"), text, "the input was modified");

    // A hard link to the input is the input.
    let link = path.with_file_name("same-link.jsonl");
    let _ = std::fs::remove_file(&link);
    std::fs::hard_link(&path, &link).expect("hard link");
    let out = run(&["score", &p, "-o", &link.to_string_lossy()], "");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("the same file"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&path).expect("input"), text, "the input was emptied through its link");

    // `score - -o f < f`: standard input is the output file.
    let out = Command::new(BIN)
        .args(["score", "-", "-o", &p])
        .stdin(std::fs::File::open(&path).expect("open"))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("standard input"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&path).expect("input"), text, "stdin's file was emptied");
}

/// `-o FILE` appears whole or not at all: a run that fails leaves the old file as it was and no
/// temporary file beside it.
#[test]
fn output_is_replaced_only_when_complete() {
    let good = temp_file("replace-in.jsonl", &jsonl(&[json!({"id": 1, "response": "42", "gold": "42"})]));
    let dest = temp_file("replace-out.jsonl", "old contents\n");
    let d = dest.to_string_lossy().into_owned();
    let out = run(&["score", &good.to_string_lossy(), "-o", &d], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(std::fs::read_to_string(&dest).expect("output").contains("\"correct\":true"));
    // A directory as input fails while reading: the previous output stays.
    std::fs::write(&dest, "old contents\n").expect("write");
    let dir = good.parent().expect("dir").to_string_lossy().into_owned();
    let out = run(&["score", &dir, "-o", &d], "");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&dest).expect("output"), "old contents\n");
    let leftovers: Vec<_> = std::fs::read_dir(good.parent().expect("dir"))
        .expect("list")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// A full disk on standard output is an `error:` line and status 2, not a panic.
#[test]
fn a_full_standard_output_is_an_error() {
    let input: Vec<Value> = (0..2_000).map(|k| json!({"id": k, "response": "42", "gold": "42"})).collect();
    let path = temp_file("full.jsonl", &jsonl(&input));
    rl_tests::assert_error_into_full_stdout(Command::new(BIN).args(["score", &path.to_string_lossy(), "-q"]));
}

/// `-j` is bounded: a huge count is refused where it is typed, before any thread starts.
#[test]
fn thread_counts_are_bounded() {
    let out = run(&["score", "-", "-j", "100000"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("at most 256 threads"), "{}", stderr(&out));
    let (code, lines, _) = score(&[json!({"id": 1, "response": "42", "gold": "42"})], &["-j", "3"]);
    assert_eq!((code, lines.len()), (0, 1));
}

/// Negative answers are values, not flags.
#[test]
fn negative_answers_are_checked() {
    let out = run(&["check", "-5", "\\boxed{-5}"], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run(&["check", "-\\frac12", "-0.5"], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run(&["check", "-5", "5"], "");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

/// Ceiling for every wait on a running `rlverify`; reaching it is a failure, not a timing.
const PATIENCE: std::time::Duration = std::time::Duration::from_secs(120);

/// `rlverify score -` with its standard input and output as pipes the test holds.
struct Streaming {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Streaming {
    fn start(flags: &[&str]) -> Streaming {
        let mut child = Command::new(BIN)
            .args(["score", "-", "--no-progress"])
            .args(flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn rlverify");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Streaming { child, stdin, lines }
    }

    fn send(&mut self, row: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{row}").and_then(|()| stdin.flush()).expect("write a row");
    }

    /// The next output line, while standard input stays open.
    fn receive(&self) -> Value {
        let line = self.lines.recv_timeout(PATIENCE).expect("an output line while the input stays open");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    fn signal(&self, name: &str) {
        let killed = Command::new("kill").args([&format!("-{name}"), &self.child.id().to_string()]).status();
        assert!(killed.expect("run kill").success());
    }

    /// Waits for the exit (standard input still open); the status and standard error.
    fn wait(mut self) -> (Option<i32>, String) {
        let start = std::time::Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().expect("try_wait") {
                break s;
            }
            assert!(start.elapsed() < PATIENCE, "still running");
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let mut err = String::new();
        use std::io::Read;
        self.child.stderr.take().expect("stderr").read_to_string(&mut err).expect("read stderr");
        (status.code(), err)
    }
}

impl Drop for Streaming {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `producer | rlverify score - | consumer`: each row is answered while the input stays open, in
/// order; SIGINT then stops it with status 130 after what was scored.
#[cfg(unix)]
#[test]
fn standard_input_is_scored_as_it_arrives_and_sigint_exits_130() {
    let mut score = Streaming::start(&[]);
    for k in 0..3 {
        score.send(&json!({"id": k, "response": format!("\\boxed{{{k}}}"), "gold": "1"}));
        let row = score.receive();
        assert_eq!((row["id"].clone(), row["correct"].clone()), (json!(k), json!(k == 1)), "{row}");
    }
    score.signal("INT");
    let (code, err) = score.wait();
    assert_eq!(code, Some(130), "{err}");
    assert!(err.contains("stopped by SIGINT: the first 3 rows of `<stdin>` are scored in standard output"), "{err}");
}

/// SIGTERM with `-o FILE`: the rows scored are in FILE, no temporary file is left, status 143.
#[cfg(unix)]
#[test]
fn sigterm_saves_the_rows_scored_to_the_output_file() {
    let dest = temp_file("sigterm-out.jsonl", "old contents\n");
    let d = dest.to_string_lossy().into_owned();
    let mut score = Streaming::start(&["-o", &d]);
    let tmp = dest.with_file_name(format!(".sigterm-out.jsonl.tmp-{}", score.child.id()));
    for k in 0..2 {
        score.send(&json!({"id": k, "response": "42", "gold": "42"}));
    }
    // The rows reach the temporary file while the input stays open.
    let start = std::time::Instant::now();
    while std::fs::read_to_string(&tmp).unwrap_or_default().lines().count() < 2 {
        assert!(start.elapsed() < PATIENCE, "the rows were not written while the input stayed open");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    score.signal("TERM");
    let (code, err) = score.wait();
    assert_eq!(code, Some(143), "{err}");
    let saved = std::fs::read_to_string(&dest).expect("the output");
    assert_eq!(saved.lines().count(), 2, "{saved}");
    assert!(saved.lines().all(|l| l.contains("\"correct\":true")), "{saved}");
    assert!(!tmp.exists(), "the temporary file {} was left", tmp.display());
}

/// An input without rows is an error that names it (status 2), and `-o FILE` is left alone.
#[test]
fn an_input_without_rows_is_an_error() {
    for (name, text) in [("empty.jsonl", ""), ("blank.jsonl", "\n  \n\n")] {
        let path = temp_file(name, text);
        let dest = temp_file(&format!("{name}.out"), "old contents\n");
        let out = run(&["score", &path.to_string_lossy(), "-o", &dest.to_string_lossy()], "");
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(&format!("`{}` has no rows", path.display())), "{err}");
        assert_eq!(std::fs::read_to_string(&dest).expect("output"), "old contents\n");
    }
    let out = run(&["score", "-"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("`<stdin>` has no rows"), "{}", stderr(&out));
}

/// Every help page, the tool's and each command's, ends with the exit-status table and shows no
/// rustdoc link syntax.
#[test]
fn every_help_page_ends_with_the_exit_status_table() {
    let last = "143  stopped by SIGTERM after saving what was done";
    for sub in [&[][..], &["score"], &["check"], &["extract"], &["bench"], &["serve"]] {
        let mut args = sub.to_vec();
        args.push("--help");
        let out = run(&args, "");
        let help = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(help.trim_end().ends_with(last), "{args:?}:\n{help}");
        assert!(!help.contains("[`"), "{args:?}:\n{help}");
    }
}

/// `--format-reward 0.2` (with a space) is refused with a tip that names `--format-reward=0.2`.
#[test]
fn a_format_weight_after_a_space_gets_a_tip() {
    let path = temp_file("weight.jsonl", &jsonl(&[json!({"id": 1, "response": "42", "gold": "42"})]));
    let out = run(&["score", &path.to_string_lossy(), "--format-reward", "0.2"], "");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("write `--format-reward=0.2`"), "{}", stderr(&out));
}
