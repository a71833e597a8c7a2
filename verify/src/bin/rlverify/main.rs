//! `rlverify`: the command line of the verifier (`score`, `check`, `extract`, `bench`).
//!
//! Exit status: `rlcli::EXIT_STATUS_HELP` (0 success, 1 a negative result such as
//! malformed input lines, a wrong answer or no answer found, 2 usage or I/O errors). A closed
//! output pipe (`rlverify score f | head`) exits 0 quietly.

mod args;
mod commands;

use std::process::ExitCode;

/// mimalloc instead of the system allocator: a score builds and drops many small ASTs, tokens and
/// strings, and glibc's malloc/free was a seventh of its instructions (BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli: args::Cli = rlcli::parse(args::command());
    rlcli::main(|| commands::run(cli))
}
