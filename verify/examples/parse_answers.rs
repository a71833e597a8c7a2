//! Parse every `answer` (or `gold`) field of JSONL files and print how each parsed.
//!
//! `cargo run -p rlverify --example parse_answers -- ../shared/data/benchmarks/math500.jsonl`
//! Prints `OK <tree>` / `ERR <error>` per distinct answer and a summary line.

use rlverify::{latex, Limits};
use std::collections::BTreeSet;

fn main() -> anyhow::Result<()> {
    let limits = Limits::default();
    let mut answers = BTreeSet::new();
    for path in std::env::args().skip(1) {
        for line in std::fs::read_to_string(&path)?.lines() {
            let v: serde_json::Value = serde_json::from_str(line)?;
            for key in ["answer", "gold"] {
                if let Some(s) = v.get(key).and_then(|a| a.as_str()) {
                    answers.insert(s.to_string());
                }
            }
        }
    }
    let (mut ok, mut text, mut err) = (0, 0, 0);
    for a in &answers {
        match latex::parse(a, &limits) {
            Ok(rlverify::Expr::Text(t)) => {
                text += 1;
                println!("TEXT {a:?} => {t:?}");
            }
            Ok(e) => {
                ok += 1;
                println!("OK   {a:?} => {e}");
            }
            Err(e) => {
                err += 1;
                println!("ERR  {a:?} => {e}   [norm: {}]", latex::normalized(a));
            }
        }
    }
    println!("# {} distinct answers: {ok} parsed, {text} text, {err} errors", answers.len());
    Ok(())
}
