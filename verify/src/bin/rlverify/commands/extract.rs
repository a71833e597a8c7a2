//! `rlverify extract TEXT|-`.

use super::text_arg;
use crate::args::ExtractArgs;
use rlcli::Exit;
use rlverify::{extract, ExtractOptions, Extraction, LastNumber, Truncated};
use std::io::{self, Write};

pub fn run(args: ExtractArgs) -> anyhow::Result<Exit> {
    let text = text_arg(&args.text)?;
    // The options as `score` reads them; `--last-number auto` needs a gold to decide, so it never
    // takes the last number here.
    let cfg = args.answer.config();
    let opts = ExtractOptions {
        lenient: cfg.extract == Extraction::Lenient,
        last_number_fallback: cfg.last_number == LastNumber::Always,
        truncated_fallback: cfg.truncated == Truncated::Lenient,
        ..ExtractOptions::default()
    };
    let Some(answer) = extract(&text, &opts) else {
        rlcli::info("no answer found");
        return Ok(Exit::Negative);
    };
    let mut out = io::stdout().lock();
    writeln!(out, "{}", answer.text)?;
    if args.verbose {
        writeln!(out, "source: {}", answer.source.as_str())?;
        for (k, part) in answer.parts().iter().enumerate() {
            writeln!(out, "candidate {}: {part}", k + 1)?;
        }
    }
    Ok(Exit::Success)
}
