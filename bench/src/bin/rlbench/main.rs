//! `rlbench` command line: `run`, `score`, `report`, `compare`, `suites`, `prompts`.
//!
//! Exit status (`rlcli::EXIT_STATUS_HELP`): 0 success; 1 a negative result (malformed
//! input lines in `score`, samples missing from `run` or `report` without `--allow-partial`); 2
//! usage or I/O errors; 130 and 143 when SIGINT or SIGTERM stopped `run`. Errors print as
//! `rlverify`'s do, and a closed output pipe (`rlbench score f | head`) exits 0 quietly.

mod args;
mod commands;

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli: args::Cli = rlcli::parse(args::command());
    rlcli::main(|| commands::dispatch(cli))
}
