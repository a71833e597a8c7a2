//! Diagnostics on standard error, in the style of ruff and uv: `error: what`, one `Caused by:`
//! per link of the chain, and a `hint:` where there is something to do.

use std::io::{self, IsTerminal, Write};

/// Colour the `error:`/`warning:`/`hint:` label when standard error is a terminal.
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

/// Print an error and its causes.
pub fn print_error(err: &anyhow::Error) {
    let mut out = io::stderr().lock();
    let _ = writeln!(out, "{} {err}", label("error"));
    for cause in err.chain().skip(1) {
        let _ = writeln!(out, "  Caused by: {cause}");
    }
}

/// Print a per-line input error: `FILE:N: error: message`.
pub fn print_line_error(file: &str, line: u64, message: &str) {
    let _ = writeln!(io::stderr().lock(), "{file}:{line}: {} {message}", label("error"));
}

/// Print a hint.
pub fn print_hint(message: &str) {
    let _ = writeln!(io::stderr().lock(), "\n{} {message}", label("hint"));
}

/// True when the error comes from writing into a closed pipe.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().filter_map(|e| e.downcast_ref::<io::Error>()).any(|e| e.kind() == io::ErrorKind::BrokenPipe)
}
