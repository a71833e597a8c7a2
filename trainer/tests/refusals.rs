//! Bad input is refused before anything is created or trained: an error naming the flag and
//! what it takes, exit status 2, no run directory, no panic.

use std::path::PathBuf;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_rltrain");

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rltrain-refusals-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Runs `rltrain ARGS --out OUT` and checks it is refused with `expected` in the message,
/// leaving no `OUT`.
fn refused(name: &str, args: &[&str], expected: &str) {
    let out = tmp(name);
    let o = Command::new(BIN)
        .args(["--model", "tiny", "--data", "task:succ"])
        .args(args)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("run rltrain");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(stderr.starts_with("error: ") && stderr.contains(expected), "{args:?}: {stderr}");
    assert!(!stderr.contains("ModelConfig") && !stderr.contains("panicked"), "{args:?}: {stderr}");
    assert!(!out.exists(), "{args:?}: `{}` was created", out.display());
}

#[test]
fn sizes_of_zero_are_refused_before_a_run_directory_exists() {
    refused("task-size", &["--task-size", "0"], "--task-size must be at least 1");
    refused("steps", &["--steps", "0"], "--steps must be at least 1");
    refused("layers", &["--tiny-layers", "0"], "--tiny-layers must be at least 1");
    refused("hidden", &["--tiny-hidden", "12"], "--tiny-hidden must be a positive multiple of 8");
}

#[test]
fn a_study_takes_at_most_256_threads() {
    let out = tmp("study-threads");
    let o = Command::new(BIN)
        .args(["study", "dgpo", "--seeds", "1", "--steps", "1", "-j", "100000", "--out"])
        .arg(&out)
        .output()
        .expect("run rltrain");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--threads") && stderr.contains("at most 256"), "{stderr}");
    assert!(!out.exists());
}
