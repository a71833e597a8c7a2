//! `rlverify extract TEXT|-`.

use super::text_arg;
use crate::args::ExtractArgs;
use rlverify::cli::Exit;
use rlverify::{extract, ExtractOptions, Extraction, Truncated};
use std::io::{self, Write};

pub fn run(args: ExtractArgs) -> anyhow::Result<Exit> {
    let text = text_arg(&args.text)?;
    let opts = ExtractOptions {
        lenient: args.extract == Extraction::Lenient,
        last_number_fallback: args.last_number,
        truncated_fallback: args.truncated == Truncated::Lenient,
        ..ExtractOptions::default()
    };
    let Some(answer) = extract(&text, &opts) else {
        eprintln!("no answer found");
        return Ok(Exit::Negative);
    };
    let mut out = io::stdout().lock();
    writeln!(out, "{}", answer.text)?;
    if args.verbose {
        writeln!(out, "source: {}", answer.source.as_str())?;
        for (k, part) in answer.parts.iter().enumerate() {
            writeln!(out, "candidate {}: {part}", k + 1)?;
        }
    }
    Ok(Exit::Success)
}
