//! `rlbench` command line: `run`, `score`, `report`, `compare`, `suites`, `prompts`.
//!
//! Exit status (`rlverify::cli::EXIT_STATUS_HELP`): 0 success; 1 a negative result (malformed
//! input lines in `score`, samples missing from `run` or `report` without `--allow-partial`); 2
//! usage or I/O errors; 130 and 143 when SIGINT or SIGTERM stopped `run`. Errors print as
//! `rlverify`'s do, and a closed output pipe (`rlbench score f | head`) exits 0 quietly.

mod args;
mod commands;

use clap::FromArgMatches;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match args::Cli::from_arg_matches(&args::command().get_matches()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    rlverify::cli::main(|| commands::dispatch(cli))
}
