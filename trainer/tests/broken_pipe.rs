//! `rltrain` into a closed pipe (`rltrain tasks arith | head`) ends quietly with status 0, as
//! `rlverify` and `rlbench` do (`rlverify::cli::main`), instead of panicking in `println!`.

use std::io::Read;
use std::process::{Command, Stdio};

#[test]
fn printing_into_a_closed_pipe_exits_quietly() {
    let task =
        String::from_utf8(Command::new(env!("CARGO_BIN_EXE_rltrain")).arg("tasks").output().expect("run").stdout)
            .expect("utf-8");
    let name = task.split_whitespace().next().expect("at least one task");
    // Far more than a pipe buffer holds, so the writes after the reader is gone fail.
    let mut child = Command::new(env!("CARGO_BIN_EXE_rltrain"))
        .args(["tasks", name, "--size", "200000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = [0u8; 16];
    stdout.read_exact(&mut first).expect("some output");
    drop(stdout);
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
