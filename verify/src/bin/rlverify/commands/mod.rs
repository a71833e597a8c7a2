//! One module per subcommand, plus the input plumbing they share.

mod bench;
mod check;
mod extract;
mod score;
mod serve;
mod stream;

use crate::args::{Cli, Command};
use anyhow::Context;
use rlcli::Exit;
use rlverify::input::{JsonLines, Line};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

/// Run the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<Exit> {
    match cli.command {
        Command::Score(args) => score::run(args),
        Command::Check(args) => check::run(args),
        Command::Extract(args) => extract::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Serve(args) => serve::run(args),
    }
}

/// A rayon pool with the workers `-j` asks for (unset or 0: one per core).
fn thread_pool(threads: rlcli::ThreadsArg) -> anyhow::Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.given().unwrap_or(0))
        .thread_name(|k| format!("rlverify-{k}"))
        .build()
        .context("failed to start the worker threads")
}

/// A text argument, or standard input when it is `-` (invalid UTF-8 is replaced, not rejected).
fn text_arg(arg: &str) -> anyhow::Result<String> {
    if arg != "-" {
        return Ok(arg.to_string());
    }
    let mut bytes = Vec::new();
    io::stdin().lock().read_to_end(&mut bytes).context("failed to read standard input")?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// An opened JSONL input.
struct Input {
    reader: Box<dyn BufRead + Send>,
    /// The name used in diagnostics (`<stdin>` for `-`).
    name: String,
    /// The file size, when known (for the progress bar).
    len: Option<u64>,
}

fn open_input(path: &Path) -> anyhow::Result<Input> {
    if path.as_os_str() == "-" {
        return Ok(Input {
            reader: Box::new(BufReader::with_capacity(1 << 20, io::stdin())),
            name: "<stdin>".to_string(),
            len: None,
        });
    }
    let file = File::open(path).with_context(|| format!("failed to open `{}`", path.display()))?;
    let len = file.metadata().ok().map(|m| m.len());
    Ok(Input { reader: Box::new(BufReader::with_capacity(1 << 20, file)), name: path.display().to_string(), len })
}

/// A JSONL input read in bounded chunks of non-blank lines, by the library's shared reader (so
/// that `rlbench score` reads the same rows).
type LineChunks = JsonLines<Box<dyn BufRead + Send>>;
