//! What the three command lines (`rlverify`, `rlbench`, `rltrain`) share, in the style of ruff and
//! uv: `error: what`, one `Caused by:` per link of the chain, `hint:` where there is something to
//! do; colour only on a terminal and never under `NO_COLOR`; a closed output pipe
//! (`rlbench score f | head`) ends the program quietly with status 0; one typed exit status
//! ([`Exit`]); the input-field flags ([`FieldArgs`]) and the device flag ([`DeviceSpec`], parsed
//! without candle). Nothing here needs an async runtime or an HTTP stack (`rlverify serve` has
//! its own feature).
//!
//! ```no_run
//! use rlverify::cli::Exit;
//! fn main() -> std::process::ExitCode {
//!     rlverify::cli::main(|| {
//!         println!("42");
//!         Ok(Exit::Success)
//!     })
//! }
//! ```

use crate::input::{FieldPath, FieldSpec};
use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

pub use rlbase::DeviceSpec;

/// How a command line ends: the exit status of all three binaries, written once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: done (also after a closed output pipe).
    Success,
    /// 1: done, with a negative result: a wrong answer, no answer found, malformed input lines,
    /// samples missing from a run, a server that stopped with requests still running.
    Negative,
    /// 2: a usage, input or I/O error (what [`main`] returns for an `Err`; clap's usage errors too).
    Error,
    /// 130: interrupted (Ctrl-C) after saving what was done.
    Interrupted,
}

impl Exit {
    /// The numeric status.
    pub const fn code(self) -> u8 {
        match self {
            Self::Success => 0,
            Self::Negative => 1,
            Self::Error => 2,
            Self::Interrupted => 130,
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
/// error or as the panic of `println!` into a closed pipe, exits 0 without a word.
pub fn main(run: impl FnOnce() -> anyhow::Result<Exit>) -> ExitCode {
    quiet_broken_pipe_panics();
    match run() {
        Ok(code) => code.into(),
        Err(err) if is_broken_pipe(&err) => Exit::Success.into(),
        Err(err) => {
            print_error(&err);
            Exit::Error.into()
        }
    }
}

/// `println!` panics when standard output is a closed pipe; that panic ends the process with
/// status 0 and no message. Every other panic goes to the default hook.
fn quiet_broken_pipe_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(0);
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

/// Prints an error and its causes.
pub fn print_error(err: &anyhow::Error) {
    let mut out = io::stderr().lock();
    let _ = writeln!(out, "{} {err}", label("error"));
    for cause in err.chain().skip(1) {
        let _ = writeln!(out, "  Caused by: {cause}");
    }
}

/// Prints a warning.
pub fn print_warning(message: &str) {
    let _ = writeln!(io::stderr().lock(), "{}", warning_line(message));
}

/// `warning: message` as [`print_warning`] writes it, for a progress bar's `println`.
pub fn warning_line(message: &str) -> String {
    format!("{} {message}", label("warning"))
}

/// Prints a per-line input error: `FILE:N: error: message`.
pub fn print_line_error(file: &str, line: u64, message: &str) {
    let _ = writeln!(io::stderr().lock(), "{file}:{line}: {} {message}", label("error"));
}

/// Per-line input errors printed in full by `rlverify score` and `rlbench score`; the rest are
/// counted ([`print_more_line_errors`]).
pub const MAX_PRINTED_LINE_ERRORS: u64 = 20;

/// After the printed line errors: how many more there were (nothing when none), then the hint
/// that names the field flags when a line lacked a field.
pub fn print_more_line_errors(errors: u64, missing_field: bool) {
    if errors > MAX_PRINTED_LINE_ERRORS {
        let _ = writeln!(io::stderr().lock(), "... and {} more malformed lines", errors - MAX_PRINTED_LINE_ERRORS);
    }
    if missing_field {
        print_hint(
            "name the fields with `--response-field PATH`, `--gold-field PATH` and `--id-field PATH` (dotted paths)",
        );
    }
}

/// Prints a hint.
pub fn print_hint(message: &str) {
    let _ = writeln!(io::stderr().lock(), "\n{} {message}", label("hint"));
}

/// True when the error comes from writing into a closed pipe.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().filter_map(|e| e.downcast_ref::<io::Error>()).any(|e| e.kind() == io::ErrorKind::BrokenPipe)
}

/// Where the fields are in each JSON line: the same flags for `rlverify score`, `rlverify serve`,
/// `rlverify bench` and `rlbench score` (the defaults are [`crate::input`]'s lists; a test keeps
/// this help in step with them).
#[derive(Debug, clap::Args, Clone, Default)]
#[command(next_help_heading = "Input fields")]
pub struct FieldArgs {
    /// Read the response(s) from this field (a dotted path, e.g. `outputs.0.text`).
    ///
    /// Default: the first of response, responses, completion, completions, generation,
    /// generations, output, outputs, choices, samples, model_output, code, text, prediction,
    /// predictions, pred, preds.
    #[arg(long, value_name = "PATH", value_parser = FieldPath::parse)]
    pub response_field: Option<FieldPath>,
    /// Read the gold answer from this field (a dotted path, e.g. `reward_model.ground_truth`).
    ///
    /// Default: the first of gold, answer, ground_truth, gt, target, reward_model.ground_truth,
    /// solution.
    #[arg(long, value_name = "PATH", value_parser = FieldPath::parse)]
    pub gold_field: Option<FieldPath>,
    /// Read the id from this field (a dotted path, e.g. `extra_info.index`); `rlbench score`
    /// groups the samples of a problem by it.
    ///
    /// Default: the first of id, idx, problem_id, unique_id, question_id, index, uid; rows
    /// without one are grouped by their prompt, problem, question, query or input.
    #[arg(long, value_name = "PATH", value_parser = FieldPath::parse)]
    pub id_field: Option<FieldPath>,
}

impl FieldArgs {
    /// The shared reader's field spec.
    pub fn spec(&self) -> FieldSpec {
        FieldSpec { response: self.response_field.clone(), gold: self.gold_field.clone(), id: self.id_field.clone() }
    }
}

#[cfg(test)]
mod field_args_tests {
    use super::FieldArgs;
    use crate::input::{GOLD_FIELDS, ID_FIELDS, PROMPT_FIELDS, RESPONSE_FIELDS};
    use clap::{Args, Command};

    /// The help lists each lookup order exactly as the reader uses it.
    #[test]
    fn help_lists_the_readers_field_orders() {
        let help = FieldArgs::augment_args(Command::new("t")).render_long_help().to_string();
        let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
        for list in [RESPONSE_FIELDS, GOLD_FIELDS, ID_FIELDS, PROMPT_FIELDS] {
            let (init, last) = list.split_at(list.len() - 1);
            let sep = if list == PROMPT_FIELDS { " or " } else { ", " };
            let written = format!("{}{sep}{}", init.join(", "), last[0]);
            assert!(help.contains(&written), "--help does not list `{written}`:\n{help}");
        }
    }
}
