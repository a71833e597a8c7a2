//! `rltrain` into a closed pipe (`rltrain tasks arith | head`) ends quietly with status 0, as
//! `rlverify` and `rlbench` do (`rlcli::main`), instead of panicking in `println!`.

use std::process::Command;

#[test]
fn printing_into_a_closed_pipe_exits_quietly() {
    let task =
        String::from_utf8(Command::new(env!("CARGO_BIN_EXE_rltrain")).arg("tasks").output().expect("run").stdout)
            .expect("utf-8");
    let name = task.split_whitespace().next().expect("at least one task");
    // Far more than a pipe buffer holds, so the writes after the reader is gone fail.
    rl_tests::assert_quiet_into_closed_pipe(
        Command::new(env!("CARGO_BIN_EXE_rltrain")).args(["tasks", name, "--size", "200000"]),
    );
}
