//! `rlverify`: the command line of the verifier (`score`, `check`, `extract`, `bench`).
//!
//! Exit status: 0 success, 1 a "negative" result (malformed input lines, a wrong answer, no answer
//! found), 2 usage or I/O errors. A closed output pipe (`rlverify score f | head`) exits 0 quietly.

mod args;
mod commands;
mod diag;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    match commands::run(cli) {
        Ok(code) => code,
        Err(err) if diag::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            diag::print_error(&err);
            ExitCode::from(2)
        }
    }
}
