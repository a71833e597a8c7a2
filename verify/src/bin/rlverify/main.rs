//! `rlverify`: the command line of the verifier (`score`, `check`, `extract`, `bench`).
//!
//! Exit status: `rlverify::cli::EXIT_STATUS_HELP` (0 success, 1 a negative result such as
//! malformed input lines, a wrong answer or no answer found, 2 usage or I/O errors). A closed
//! output pipe (`rlverify score f | head`) exits 0 quietly.

mod args;
mod commands;

use clap::FromArgMatches;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match args::Cli::from_arg_matches(&args::command().get_matches()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    rlverify::cli::main(|| commands::run(cli))
}
