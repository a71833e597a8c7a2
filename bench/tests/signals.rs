//! `rlbench` under the signals, pipes and logs of real jobs: SIGTERM and SIGINT stop a run, say
//! how many completions are kept and how to continue, and exit 143 and 130; the same command then
//! completes the run without asking twice; a log file gets progress lines; a closed standard error
//! or a full standard output never panics; `--data-dir` must exist; `rlbench suites` counts what
//! the files hold.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use support::{Behaviour, FakeServer};

fn rlbench() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rlbench"));
    for v in ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "RLVR_DATA_DIR"] {
        c.env_remove(v);
    }
    c
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rlbench-signals-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn write_suite(dir: &Path, n: usize) -> PathBuf {
    let rows: String =
        (0..n).map(|i| format!("{{\"id\":\"q{i}\",\"problem\":\"Compute {i}.\",\"answer\":\"{i}\"}}\n")).collect();
    let path = dir.join("mini.jsonl");
    std::fs::write(&path, rows).expect("write");
    path
}

fn run_cmd(server: &FakeServer, suite: &Path, out: &Path) -> Command {
    let mut c = rlbench();
    c.args(["run", "--prompt", "plain", "--concurrency", "1", "-k", "2", "--served-model", "fake"])
        .args(["--endpoint", &server.url(), "--progress-every", "0"])
        .arg("--suite")
        .arg(suite)
        .arg("--out")
        .arg(out);
    c
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

fn wait_for_lines(child: &mut Child, path: &Path, n: usize) {
    let start = Instant::now();
    while lines(path) < n {
        assert!(child.try_wait().expect("wait").is_none(), "rlbench ended early");
        assert!(start.elapsed() < Duration::from_secs(60), "no {n} completions within 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(unix)]
fn stopped_by(signal: libc::c_int, code: i32) {
    let dir = temp_dir(&format!("sig{signal}"));
    let suite = write_suite(&dir, 20);
    let server = FakeServer::start(Behaviour { latency: Some(Duration::from_millis(100)), ..Behaviour::default() });
    let out = dir.join("out");
    let mut child = run_cmd(&server, &suite, &out).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("spawn");
    wait_for_lines(&mut child, &out.join("mini.jsonl"), 3);
    // SAFETY: kill(2) on the pid of a child this test started and has not yet reaped.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
    let o = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "{stderr}");
    let kept = lines(&out.join("mini.jsonl"));
    assert!(stderr.contains(&format!("{kept} completions are kept in {}", out.display())), "{stderr}");
    assert!(stderr.contains("run the same command again to continue"), "{stderr}");
    // A graceful stop removes the lock file, as the end of a run does.
    assert!(!out.join("run.lock").exists(), "run.lock left after {signal}");
    // The same command completes it, asking only for what is missing.
    let before = server.request_count();
    let o = run_cmd(&server, &suite, &out).output().expect("resume");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(lines(&out.join("mini.jsonl")), 40);
    assert_eq!(server.request_count() - before, 40 - kept, "only the missing samples are asked for");
}

#[cfg(unix)]
#[test]
fn sigterm_stops_a_run_keeping_its_completions() {
    stopped_by(libc::SIGTERM, 143);
}

#[cfg(unix)]
#[test]
fn sigint_stops_a_run_keeping_its_completions() {
    stopped_by(libc::SIGINT, 130);
}

/// Standard error to a file (a Slurm log): progress lines, not silence.
#[test]
fn a_log_file_gets_progress_lines() {
    let dir = temp_dir("log");
    let suite = write_suite(&dir, 3);
    let server = FakeServer::start(Behaviour::default());
    let o = run_cmd(&server, &suite, &dir.join("out")).output().expect("run");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("progress: 6/6 completions (100%"), "{stderr}");
    assert!(stderr.lines().filter(|l| l.starts_with("progress: ")).count() >= 2, "{stderr}");
}

/// `rlbench run ... 2>&1 | head`: the reader goes away, the run still finishes whole.
#[test]
fn a_closed_standard_error_never_stops_a_run() {
    let dir = temp_dir("closed-stderr");
    let suite = write_suite(&dir, 5);
    let server = FakeServer::start(Behaviour::default());
    let out = dir.join("out");
    let mut child = run_cmd(&server, &suite, &out).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("spawn");
    drop(child.stderr.take());
    assert_eq!(child.wait().expect("wait").code(), Some(0));
    assert_eq!(lines(&out.join("mini.jsonl")), 10);
    assert!(out.join("report.md").is_file());
}

/// A full disk on standard output: an `error:` line and status 2, not a panic.
#[test]
fn a_full_standard_output_is_an_error() {
    let dir = temp_dir("full");
    let rows: String = (0..200)
        .map(|k| format!("{{\"id\":\"p{k}\",\"suite\":\"s{k}\",\"response\":\"1\",\"answer\":\"1\"}}\n"))
        .collect();
    std::fs::write(dir.join("g.jsonl"), rows).expect("write");
    let err = rl_tests::assert_error_into_full_stdout(rlbench().arg("score").arg(dir.join("g.jsonl")));
    assert!(err.is_none_or(|e| e.contains("failed to write to standard output")));
}

/// `--data-dir` that does not exist is an error, never a silent fall-back to the defaults; and
/// `rlbench suites` counts the problems a file holds, not the manifest's number.
#[test]
fn data_dirs_must_exist_and_suites_are_counted_from_their_files() {
    for args in [
        &["suites", "--data-dir", "/nonexistent/benchmarks"][..],
        &["run", "--suite", "aime24", "--data-dir", "/nonexistent/benchmarks"],
    ] {
        let o = rlbench().args(args).output().expect("run");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("`/nonexistent/benchmarks` does not exist"), "{stderr}");
    }
    let dir = temp_dir("suites");
    let rows: String =
        (0..5).map(|i| format!("{{\"id\":\"a{i}\",\"problem\":\"P{i}\",\"answer\":\"{i}\"}}\n")).collect();
    std::fs::write(dir.join("aime24.jsonl"), rows).expect("write");
    let o = rlbench().args(["suites", "--data-dir"]).arg(&dir).output().expect("suites");
    let stdout = String::from_utf8_lossy(&o.stdout);
    let line = stdout.lines().find(|l| l.starts_with("aime24 ")).unwrap_or_default();
    assert!(line.contains("5 (manifest: 30) problems"), "{stdout}");
}
