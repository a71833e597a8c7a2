//! `rlbench` command line: `run`, `score`, `report`, `compare`, `suites`, `prompts`.
//!
//! Exit status ([`rlverify::cli::Exit`]): 0 success; 1 a negative result (malformed input lines
//! in `score`, samples missing from `run` or `report` without `--allow-partial`); 2 usage or I/O
//! errors. Errors print as `rlverify`'s do, and a closed output pipe (`rlbench score f | head`)
//! exits 0 quietly.

mod args;
mod commands;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    rlverify::cli::main(|| commands::dispatch(cli))
}
