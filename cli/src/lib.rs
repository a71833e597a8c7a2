//! `rlcli`: what the command lines of `rlverify`, `rlbench` and `rltrain` share, in the style of
//! ruff and uv, and nothing of the verifier:
//!
//! - the printer: `error: what`, one `Caused by:` per link of the chain, `hint:` where there is
//!   something to do; colour only on a terminal and never under `NO_COLOR` ([`print_error`],
//!   [`print_warning`], [`print_hint`], [`info`]); a library's backtrace kept short
//!   ([`format_error`]);
//! - one exit-status table ([`Exit`], [`EXIT_STATUS_HELP`]) and [`main`], which ends a closed
//!   output pipe (`rlbench score f | head`) quietly with status 0 and a full disk with an
//!   `error:` line and status 2; a closed standard error never panics;
//! - SIGINT and SIGTERM that stop work where it can be saved ([`signals`]);
//! - the number parsers that refuse a value where it is typed ([`parse_f64_in`],
//!   [`parse_positive`], [`parse_threads`]) and the one `-j N`/`--threads N` argument every
//!   command flattens ([`ThreadsArg`]);
//! - the help every command ends with and the checks that keep the three command lines alike
//!   ([`finish_help`], [`parse`], [`shared_flag_problems`]).
//!
//! The verifier's own flags (`--reward`, `--extract`, the field paths) are `rlverify::cli`'s,
//! built on this crate.
//!
//! ```no_run
//! use rlcli::Exit;
//! fn main() -> std::process::ExitCode {
//!     rlcli::main(|| {
//!         println!("42");
//!         Ok(Exit::Success)
//!     })
//! }
//! ```

// A library returns values; its binaries print.
#![cfg_attr(not(test), warn(clippy::print_stdout, clippy::print_stderr))]

mod args;
mod help;
pub mod signals;

pub use args::{fill_default_notes, parse_f64_in, parse_positive, parse_threads, ThreadsArg, MAX_THREADS};
pub use help::{finish_help, parse, shared_flag_problems};

use std::fmt::Display;
use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

/// How a command line ends: the exit status of all three binaries, written once (the table of
/// [`EXIT_STATUS_HELP`], which every `--help` ends with, and of the workspace README).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: done (also after a closed output pipe).
    Success,
    /// 1: done, with a negative result: a wrong answer, no answer found, malformed input lines
    /// (rltrain's skipped data lines), samples missing from a run, requests that failed, study
    /// runs that stopped early.
    Negative,
    /// 2: a usage, input or I/O error (what [`main`] returns for an `Err`; clap's usage errors too).
    Error,
    /// 130: stopped by SIGINT (Ctrl-C) after saving what was done.
    Interrupted,
    /// 143: stopped by SIGTERM (Slurm, Kubernetes, `timeout`) after saving what was done.
    Terminated,
}

/// The exit-status table, as every command's `--help` ends with it (`after_long_help`).
pub const EXIT_STATUS_HELP: &str = "Exit status (the same for rlverify, rlbench and rltrain):
  0    success
  1    done, with a negative result: a wrong answer, no answer, malformed input lines, missing samples or failed requests
  2    error: bad usage, unreadable input, I/O, network or TLS failure
  130  stopped by SIGINT (Ctrl-C) after saving what was done
  143  stopped by SIGTERM after saving what was done";

impl Exit {
    /// Every status, in the order of the table.
    pub const ALL: [Exit; 5] = [Exit::Success, Exit::Negative, Exit::Error, Exit::Interrupted, Exit::Terminated];

    /// The numeric status.
    pub const fn code(self) -> u8 {
        match self {
            Self::Success => 0,
            Self::Negative => 1,
            Self::Error => 2,
            Self::Interrupted => 130,
            Self::Terminated => 143,
        }
    }

    /// [`Exit::Success`] when `ok`, else [`Exit::Negative`].
    pub const fn negative_unless(ok: bool) -> Self {
        if ok {
            Self::Success
        } else {
            Self::Negative
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e.code())
    }
}

/// Runs a command line's body: errors print as [`print_error`] and exit 2; a broken pipe, as an
/// error or as the panic of `println!` into a closed pipe, exits 0 without a word; any other
/// failed write to standard output (a full disk) is an `error:` line and status 2.
pub fn main(run: impl FnOnce() -> anyhow::Result<Exit>) -> ExitCode {
    output_failures_end_quietly();
    match run() {
        Ok(code) => code.into(),
        Err(err) if is_broken_pipe(&err) => Exit::Success.into(),
        Err(err) => {
            print_error(&err);
            Exit::Error.into()
        }
    }
}

/// `println!` panics when standard output cannot be written: into a closed pipe the process
/// ends with status 0 and no message, on any other failure (a full disk) with an `error:` line
/// and status 2. `eprintln!` into a closed standard error ends with status 2 (the binaries write
/// their messages with [`info`] and the printers here, which never panic). Every other panic goes
/// to the default hook.
fn output_failures_end_quietly() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if let Some(cause) = message.strip_prefix("failed printing to stdout: ") {
            if cause.contains("Broken pipe") {
                std::process::exit(0);
            }
            let _ = writeln!(io::stderr().lock(), "{} failed to write to standard output: {cause}", label("error"));
            std::process::exit(i32::from(Exit::Error.code()));
        }
        if message.starts_with("failed printing to stderr") {
            std::process::exit(i32::from(Exit::Error.code()));
        }
        default(info);
    }));
}

/// The `error:`/`warning:`/`hint:` label, coloured when standard error is a terminal and
/// `NO_COLOR` is unset.
fn label(kind: &str) -> String {
    if !io::stderr().is_terminal() || std::env::var_os("NO_COLOR").is_some() {
        return format!("{kind}:");
    }
    let code = match kind {
        "error" => "1;31",
        "warning" => "1;33",
        _ => "1;36",
    };
    format!("\x1b[{code}m{kind}\x1b[0m:")
}

/// Prints an error and its causes ([`format_error`]).
pub fn print_error(err: &anyhow::Error) {
    let _ = write!(io::stderr().lock(), "{}", format_error(err, &label("error")));
}

/// An error and its causes as [`print_error`] writes them after `label` (`error:`): one
/// `Caused by:` line per link that says something the lines before it have not said (a link
/// whose text is already part of the message above is skipped). A backtrace that a library
/// appends to its message (candle under `RUST_BACKTRACE=1`) is written once, after the chain,
/// and short ([`backtrace_section`]).
pub fn format_error(err: &anyhow::Error, label: &str) -> String {
    let mut out = String::new();
    let whole = err.to_string();
    let (first, mut backtrace) = split_backtrace(&whole);
    let mut said = first.to_string();
    out.push_str(&format!("{label} {said}\n"));
    for cause in err.chain().skip(1) {
        let whole = cause.to_string();
        let (text, trace) = split_backtrace(&whole);
        if backtrace.is_empty() {
            backtrace = trace;
        }
        if text.is_empty() || said.contains(text) {
            continue;
        }
        out.push_str(&format!("  Caused by: {text}\n"));
        said.push('\n');
        said.push_str(text);
    }
    if !backtrace.is_empty() {
        let full = std::env::var("RUST_BACKTRACE").is_ok_and(|v| v == "full");
        out.push_str(&backtrace_section(&backtrace, full));
    }
    out
}

/// Crates whose frames a short backtrace keeps: the workspace's.
const OWN_CRATES: [&str; 7] = ["rlverify", "rlbench", "rltrain", "rlengine", "rlobjectives", "rlbase", "rlcli"];

/// What follows the error chain when a library put a backtrace into its message: with `full`
/// (`RUST_BACKTRACE=full`) the whole trace; otherwise only the frames of the workspace's own
/// crates, each with its `at file:line`, and how many were left out. An error is about the
/// input or the setup, and its chain says what went wrong; under `RUST_BACKTRACE=1`, often set
/// for a whole shell or job to debug panics, the sixty frames of candle's internals and the
/// runtime would bury it, while our frames still say which step failed.
pub fn backtrace_section(trace: &str, full: bool) -> String {
    if full {
        return format!("\n{trace}\n");
    }
    let mut frames: Vec<Vec<&str>> = Vec::new();
    for line in trace.lines() {
        let t = line.trim_start();
        let is_frame = t.split_once(": ").is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        match frames.last_mut() {
            Some(frame) if !is_frame => frame.push(line),
            _ if is_frame => frames.push(vec![line]),
            _ => {}
        }
    }
    let own = |frame: &&Vec<&str>| {
        let name = frame[0].trim_start().split_once(": ").map_or("", |(_, n)| n).trim_start_matches('<');
        OWN_CRATES.iter().any(|c| name.strip_prefix(c).is_some_and(|rest| rest.starts_with("::")))
    };
    let kept: Vec<&Vec<&str>> = frames.iter().filter(own).collect();
    let total = frames.len();
    if kept.is_empty() {
        let frames = if total == 1 { "frame" } else { "frames" };
        return format!(
            "\nA backtrace of {total} {frames} was captured, none in rlvr-rs; `RUST_BACKTRACE=full` prints it.\n"
        );
    }
    let mut out = format!(
        "\nBacktrace, the rlvr-rs frames ({} of {total}; `RUST_BACKTRACE=full` prints them all):\n",
        kept.len()
    );
    for line in kept.into_iter().flatten() {
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// A message and the backtrace some libraries (candle under `RUST_BACKTRACE=1`) append to it.
fn split_backtrace(message: &str) -> (&str, String) {
    let cut = ["\nstack backtrace:", "\n   0: ", "\n  0: "].iter().filter_map(|m| message.find(m)).min();
    match cut {
        Some(k) => (message[..k].trim_end(), message[k..].trim_matches('\n').to_string()),
        None => (message.trim_end(), String::new()),
    }
}

/// Prints a warning.
pub fn print_warning(message: &str) {
    info(warning_line(message));
}

/// `warning: message` as [`print_warning`] writes it, for a progress bar's `println`.
pub fn warning_line(message: &str) -> String {
    format!("{} {message}", label("warning"))
}

/// Prints a per-line input error: `FILE:N: error: message`.
pub fn print_line_error(file: &str, line: u64, message: &str) {
    info(format_args!("{file}:{line}: {} {message}", label("error")));
}

/// Writes one line of progress or information to standard error. A write that fails (standard
/// error is a closed pipe: `2>&1 | head` after `head` left) is ignored: a log reader that goes
/// away never stops the work.
pub fn info(message: impl Display) {
    let _ = writeln!(io::stderr().lock(), "{message}");
}

/// Prints a hint.
pub fn print_hint(message: &str) {
    info(format_args!("\n{} {message}", label("hint")));
}

/// True when the error comes from writing into a closed pipe.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().filter_map(|e| e.downcast_ref::<io::Error>()).any(|e| e.kind() == io::ErrorKind::BrokenPipe)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The help's table lists every status once, with its code, in order.
    #[test]
    fn the_exit_table_lists_every_status() {
        let codes: Vec<u8> = EXIT_STATUS_HELP
            .lines()
            .skip(1)
            .map(|l| l.split_whitespace().next().and_then(|c| c.parse().ok()).expect("a code"))
            .collect();
        assert_eq!(codes, Exit::ALL.map(Exit::code).to_vec());
    }

    /// A cause already said by the message above is not repeated; a backtrace inside messages is
    /// written once, at the end.
    #[test]
    fn causes_and_backtraces_are_written_once() {
        // An error that shows its source in its own message (thiserror's `{path}: {source}`).
        #[derive(Debug)]
        struct WithPath(io::Error);
        impl std::fmt::Display for WithPath {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "`cfg.json`: {}", self.0)
            }
        }
        impl std::error::Error for WithPath {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let io = io::Error::new(io::ErrorKind::NotFound, "No such file or directory (os error 2)");
        let err = anyhow::Error::new(WithPath(io)).context("cannot read the config");
        let text = format_error(&err, "error:");
        assert_eq!(
            text,
            "error: cannot read the config\n  Caused by: `cfg.json`: No such file or directory (os error 2)\n"
        );
        let inner = anyhow::anyhow!("shape mismatch\nstack backtrace:\n   0: candle_core::error");
        let outer = inner.context("engine: shape mismatch\nstack backtrace:\n   0: candle_core::error");
        let text = format_error(&outer, "error:");
        assert_eq!(text.matches("A backtrace of 1 frame was captured").count(), 1, "{text}");
        assert_eq!(text.matches("shape mismatch").count(), 1, "{text}");
    }

    /// Under `RUST_BACKTRACE=1` a library's backtrace of sixty frames shrinks to the workspace's
    /// own frames; `RUST_BACKTRACE=full` keeps it whole.
    #[test]
    fn library_backtraces_keep_our_frames() {
        let mut trace = String::from("stack backtrace:\n");
        for k in 0..60 {
            let name = match k {
                7 => "rlengine::model::Llama::forward".to_string(),
                9 => "<rltrain::train::Session as core::ops::Drop>::drop".to_string(),
                _ => format!("candle_core::tensor::Tensor::op{k}"),
            };
            trace.push_str(&format!("  {k:>2}: {name}\n             at src/file{k}.rs:{k}:5\n"));
        }
        let short = backtrace_section(&trace, false);
        assert_eq!(short.lines().filter(|l| !l.is_empty()).count(), 5, "{short}");
        assert!(short.contains("2 of 60") && short.contains("RUST_BACKTRACE=full"), "{short}");
        assert!(short.contains("rlengine::model::Llama::forward\n             at src/file7.rs:7:5"), "{short}");
        assert!(short.contains("<rltrain::train::Session") && !short.contains("candle_core"), "{short}");
        assert_eq!(backtrace_section(&trace, true).matches("candle_core").count(), 58);
    }

    #[test]
    fn backtraces_are_not_messages() {
        let (text, trace) = split_backtrace("no such file\nstack backtrace:\n   0: main");
        assert_eq!((text, trace.as_str()), ("no such file", "stack backtrace:\n   0: main"));
        assert_eq!(split_backtrace("shape mismatch\n   0: candle_core::error").0, "shape mismatch");
        assert_eq!(split_backtrace("plain"), ("plain", String::new()));
    }
}
