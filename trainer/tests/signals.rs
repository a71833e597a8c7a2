//! The binary under the signals and pipes of real jobs: SIGTERM (Slurm, Kubernetes, `timeout`)
//! and SIGINT finish the step, save a checkpoint, say how to continue and exit 143 and 130; a
//! closed log pipe never stops training; a full standard output is an error, not a panic; a
//! damaged checkpoint names its file and the run resumes from the previous complete one, a
//! damaged `latest` pointer from the newest intact one; a run without checkpoints is not started
//! over on top of its metrics; a full disk names the file and the step and keeps what was saved.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_rltrain");

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rltrain-signals-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// A long tiny run (far more steps than the test waits for).
fn long_run(out: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.args(["--model", "tiny", "--data", "task:succ", "--steps", "100000", "--log-every", "1", "--out"]).arg(out);
    c
}

fn metrics_lines(out: &Path) -> usize {
    std::fs::read_to_string(out.join("metrics.jsonl")).map_or(0, |t| t.lines().count())
}

/// Waits (bounded) until the run has written `n` metrics lines.
fn wait_for_steps(child: &mut Child, out: &Path, n: usize) {
    let start = Instant::now();
    while metrics_lines(out) < n {
        assert!(child.try_wait().expect("wait").is_none(), "rltrain ended before step {n}");
        assert!(start.elapsed() < Duration::from_secs(300), "no step {n} within 300 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[cfg(unix)]
fn stopped_by(signal: libc::c_int, code: i32) {
    let out = tmp(&format!("sig{signal}"));
    let mut child = long_run(&out).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("spawn");
    wait_for_steps(&mut child, &out, 2);
    // SAFETY: kill(2) on the pid of a child this test started and has not yet reaped.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
    let o = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "{stderr}");
    let latest = std::fs::read_to_string(out.join("checkpoints/latest")).expect("a checkpoint was saved");
    let step: u64 = latest.trim().trim_start_matches("step-").parse().expect("step-N");
    assert!(step >= 2 && step as usize == metrics_lines(&out), "checkpoint {latest} vs {} steps", metrics_lines(&out));
    assert!(stderr.contains("rltrain --resume"), "{stderr}");
    // And it resumes from there.
    let o =
        Command::new(BIN).arg("--resume").arg(&out).args(["--steps", &(step + 1).to_string()]).output().expect("run");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(metrics_lines(&out), step as usize + 1);
    let _ = std::fs::remove_dir_all(&out);
}

#[cfg(unix)]
#[test]
fn sigterm_saves_a_checkpoint_and_exits_143() {
    stopped_by(libc::SIGTERM, 143);
}

#[cfg(unix)]
#[test]
fn sigint_saves_a_checkpoint_and_exits_130() {
    stopped_by(libc::SIGINT, 130);
}

/// `rltrain ... 2>&1 | head`: once the reader is gone the log is dropped, and the run goes on to
/// its end and its checkpoint.
#[test]
fn a_closed_log_pipe_never_stops_training() {
    let out = tmp("closed-stderr");
    let mut child = Command::new(BIN)
        .args(["--model", "tiny", "--data", "task:succ", "--steps", "6", "--log-every", "1", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stderr.take());
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(0));
    assert_eq!(metrics_lines(&out), 6);
    assert_eq!(std::fs::read_to_string(out.join("checkpoints/latest")).expect("latest").trim(), "step-6");
    let _ = std::fs::remove_dir_all(&out);
}

/// `rltrain tasks ... > /dev/full`: an `error:` line and status 2, not a panic (101).
#[test]
fn a_full_standard_output_is_an_error() {
    rl_tests::assert_error_into_full_stdout(Command::new(BIN).args(["tasks", "succ", "--size", "100000"]));
}

/// A damaged newest checkpoint: the warning names the file, and the run resumes from the
/// previous complete checkpoint instead of failing or starting over.
#[test]
fn a_damaged_checkpoint_names_its_file_and_the_previous_one_is_used() {
    let out = tmp("damaged");
    let o = Command::new(BIN)
        .args(["--model", "tiny", "--data", "task:succ", "--steps", "4", "--save-every", "2", "--out"])
        .arg(&out)
        .output()
        .expect("run");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let damaged = out.join("checkpoints/step-4/model.safetensors");
    std::fs::write(&damaged, b"not a safetensors file").expect("damage");
    let o = Command::new(BIN).arg("--resume").arg(&out).args(["--steps", "5"]).output().expect("run");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains(&damaged.display().to_string()) && stderr.contains("step-2"), "{stderr}");
    assert_eq!(metrics_lines(&out), 5, "steps 3..5 trained again after step 2");
    // With every checkpoint damaged: an error naming the files, no fresh start.
    for step in ["step-2", "step-4", "step-5"] {
        std::fs::write(out.join("checkpoints").join(step).join("optimizer.safetensors"), b"x").expect("damage");
    }
    let o = Command::new(BIN).arg("--resume").arg(&out).args(["--steps", "6"]).output().expect("run");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("optimizer.safetensors") && stderr.starts_with("error: "), "{stderr}");
    let _ = std::fs::remove_dir_all(&out);
}

/// A run directory that holds a run is not a config error: the message says what to do, once.
#[test]
fn errors_say_what_happened_once() {
    let out = tmp("twice");
    let first = Command::new(BIN)
        .args(["--model", "tiny", "--data", "task:succ", "--steps", "1", "--out"])
        .arg(&out)
        .output()
        .expect("run");
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let again = Command::new(BIN)
        .args(["--model", "tiny", "--data", "task:succ", "--steps", "1", "--out"])
        .arg(&out)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("already holds a run") && stderr.contains("--resume"), "{stderr}");
    assert!(!stderr.contains("invalid config"), "{stderr}");
    // A run to resume that is not there: the OS error once, not once per link of the chain.
    let o = Command::new(BIN).args(["--resume", "/nonexistent/run"]).output().expect("run");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.matches("No such file").count(), 1, "{stderr}");
    let _ = std::fs::remove_dir_all(&out);
}

/// A run of `steps` steps with a checkpoint every `save_every` into `out`.
fn trained(out: &Path, steps: u64, save_every: u64) {
    let o = Command::new(BIN)
        .args(["--model", "tiny", "--data", "task:succ", "--log-every", "0"])
        .args(["--steps", &steps.to_string(), "--save-every", &save_every.to_string(), "--out"])
        .arg(out)
        .output()
        .expect("run");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// `latest` cut short (a crash while it was replaced): the run resumes from the newest intact
/// checkpoint, saying so, instead of failing.
#[test]
fn a_damaged_latest_pointer_falls_back_to_the_newest_intact_checkpoint() {
    let out = tmp("pointer");
    trained(&out, 4, 2);
    std::fs::write(out.join("checkpoints/latest"), "ste").expect("damage");
    let o = Command::new(BIN).arg("--resume").arg(&out).args(["--steps", "5"]).output().expect("run");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("`latest`") && stderr.contains("step-4"), "{stderr}");
    assert_eq!(metrics_lines(&out), 5);
    assert_eq!(std::fs::read_to_string(out.join("checkpoints/latest")).expect("latest").trim(), "step-5");
    let _ = std::fs::remove_dir_all(&out);
}

/// Every checkpoint deleted: starting over at step 1 would replace the trained steps' metrics,
/// so the resume is refused, naming what is missing, and the metrics are kept.
#[test]
fn a_resume_without_any_checkpoint_keeps_the_metrics_and_says_what_is_missing() {
    let out = tmp("no-checkpoint");
    trained(&out, 3, 0);
    std::fs::remove_dir_all(out.join("checkpoints")).expect("delete the checkpoints");
    let o = Command::new(BIN).arg("--resume").arg(&out).args(["--steps", "4"]).output().expect("run");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no checkpoint") && stderr.contains("records 3 trained steps"), "{stderr}");
    assert!(stderr.contains("another --out"), "{stderr}");
    assert_eq!(metrics_lines(&out), 3, "the metrics are kept");
    let _ = std::fs::remove_dir_all(&out);
}

/// A full disk while a checkpoint is written (a file-size limit stands in for it: the ~300 KB
/// weights file cannot be written, the metrics lines can): the error names the step and the
/// file, the partial folder is removed, the checkpoint before it is kept, and the run resumes.
#[cfg(unix)]
#[test]
fn a_full_disk_names_the_step_and_the_file_and_keeps_the_checkpoint_before() {
    let out = tmp("full-disk");
    trained(&out, 1, 1);
    let o = Command::new("sh")
        .args(["-c", "trap '' XFSZ; ulimit -f 200; exec \"$0\" \"$@\""])
        .arg(BIN)
        .arg("--resume")
        .arg(&out)
        .args(["--steps", "3"])
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    let weights = out.join("checkpoints/.tmp-step-2/model.safetensors");
    assert!(stderr.contains("step 2") && stderr.contains(&weights.display().to_string()), "{stderr}");
    assert!(stderr.contains("the checkpoint of step 1 is kept"), "{stderr}");
    assert!(!out.join("checkpoints/.tmp-step-2").exists(), "the partial checkpoint is removed");
    assert_eq!(std::fs::read_to_string(out.join("checkpoints/latest")).expect("latest").trim(), "step-1");
    assert_eq!(metrics_lines(&out), 2, "step 2's metrics line was written before the checkpoint");
    let o = Command::new(BIN).arg("--resume").arg(&out).args(["--steps", "3"]).output().expect("run");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(metrics_lines(&out), 3);
    let _ = std::fs::remove_dir_all(&out);
}

/// Training data changed between a checkpoint and its resume (a row fixed, rows added): noticed
/// and refused, naming what changed, instead of drawing the old prompt order over the new rows.
#[test]
fn a_resume_on_changed_data_says_what_changed() {
    let out = tmp("changed-data");
    std::fs::create_dir_all(&out).expect("mkdir");
    let data = out.join("train.jsonl");
    let rows = |answers: &[&str]| {
        let lines: Vec<String> = answers
            .iter()
            .enumerate()
            .map(|(i, a)| format!("{{\"problem\":\"{i}+1=\",\"answer\":\"{a}\"}}\n"))
            .collect();
        std::fs::write(&data, lines.concat()).expect("write the data");
    };
    rows(&["1", "2", "3"]);
    let run = out.join("run");
    let o = Command::new(BIN)
        .args(["--model", "tiny", "--steps", "2", "--log-every", "0", "--data"])
        .arg(&data)
        .arg("--out")
        .arg(&run)
        .output()
        .expect("run");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let resume = || Command::new(BIN).arg("--resume").arg(&run).args(["--steps", "3"]).output().expect("run");
    for (answers, expected) in
        [(&["1", "2", "4"][..], "not those of the checkpoint"), (&["1", "2", "3", "4"][..], "it had 3 problems")]
    {
        rows(answers);
        let o = resume();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(expected) && stderr.contains("--model"), "{stderr}");
        assert_eq!(metrics_lines(&run), 2, "nothing trained");
    }
    rows(&["1", "2", "3"]);
    assert!(resume().status.success(), "the same data resumes");
    assert_eq!(metrics_lines(&run), 3);
    let _ = std::fs::remove_dir_all(&out);
}
