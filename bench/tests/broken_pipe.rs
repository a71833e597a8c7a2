//! `rlbench` into a closed pipe (`rlbench score f | head`) ends quietly with status 0, as
//! `rlverify` and `rltrain` do (`rlcli::main`), instead of panicking in `println!`.

use std::io::Write;
use std::process::Command;

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
    rl_tests::assert_quiet_into_closed_pipe(Command::new(env!("CARGO_BIN_EXE_rlbench")).arg("score").arg(&path));
    let _ = std::fs::remove_file(&path);
}
