//! `rlbench` into a closed pipe (`rlbench score f | head`) ends quietly with status 0, as
//! `rlverify` and `rltrain` do (`rlverify::cli::main`), instead of panicking in `println!`.

use std::io::{Read, Write};
use std::process::{Command, Stdio};

#[test]
fn printing_into_a_closed_pipe_exits_quietly() {
    // One row per suite: the report's table is far larger than a pipe buffer.
    let path = std::env::temp_dir().join(format!("rlbench-pipe-{}.jsonl", std::process::id()));
    let mut file = std::fs::File::create(&path).expect("create");
    for k in 0..20_000 {
        writeln!(file, r#"{{"id": "p{k}", "suite": "suite-{k}", "response": "\\boxed{{1}}", "answer": "1"}}"#)
            .expect("write");
    }
    drop(file);
    let mut child = Command::new(env!("CARGO_BIN_EXE_rlbench"))
        .arg("score")
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = [0u8; 16];
    stdout.read_exact(&mut first).expect("some output");
    drop(stdout);
    let out = child.wait_with_output().expect("wait");
    let _ = std::fs::remove_file(&path);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
