//! `rlverify`: the command line of the verifier (`score`, `check`, `extract`, `bench`).
//!
//! Exit status: 0 success, 1 a "negative" result (malformed input lines, a wrong answer, no answer
//! found), 2 usage or I/O errors. A closed output pipe (`rlverify score f | head`) exits 0 quietly.

mod args;
mod commands;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    rlverify::cli::main(|| commands::run(cli))
}
