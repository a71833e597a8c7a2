//! `rlverify check GOLD PRED [--explain]`.

use super::text_arg;
use crate::args::CheckArgs;
use rlcli::Exit;
use rlverify::{Gold, ParseError, Verdict};
use std::io::{self, Write};

pub fn run(args: CheckArgs) -> anyhow::Result<Exit> {
    let cfg = args.scoring.config();
    let pred = text_arg(&args.pred)?;
    let gold = Gold::new(&args.gold, &cfg);
    let explained = gold.score_explained(&pred, &cfg);
    let score = &explained.score;
    let mut out = io::stdout().lock();
    if args.explain {
        writeln!(out, "gold")?;
        writeln!(out, "  extracted:  {}", gold.answer)?;
        writeln!(out, "  parsed:     {}", parse_text(&gold.parsed))?;
        writeln!(out, "prediction")?;
        match &explained.answer {
            Some(answer) => {
                writeln!(out, "  extracted:  {} (from {})", answer.text, answer.source.as_str())?;
                if answer.candidates.len() > 1 {
                    // Each candidate with the contract rule that produced it.
                    let parts: Vec<String> =
                        answer.candidates.iter().map(|c| format!("{} ({})", c.text, c.rule.as_str())).collect();
                    writeln!(out, "  parts:      {}", parts.join(" | "))?;
                }
                if let Some(void) = answer.void {
                    writeln!(out, "  not asserted: {}", void.as_str())?;
                }
            }
            None => writeln!(out, "  extracted:  (no answer found)")?,
        }
        if let Some(parsed) = &explained.parsed {
            writeln!(out, "  parsed:     {}", parse_text(parsed))?;
        }
        if let Some(decision) = &explained.decision {
            let verdict = match decision.verdict {
                Verdict::Equal => "equal".to_string(),
                Verdict::NotEqual => "not equal".to_string(),
                Verdict::Limit(k) => format!("undecided, limit hit: {k}"),
            };
            writeln!(out, "comparison:   {verdict} (rule: {})", decision.rule)?;
        }
    }
    let verdict = if score.correct { "correct" } else { "wrong" };
    let mut detail = format!("status: {}", score.status.as_str());
    if args.explain {
        detail.push_str(&format!(", rule: {}", score.rule));
    }
    if let Some(limit) = score.limit {
        detail.push_str(&format!(", limit: {limit}"));
    }
    writeln!(out, "{verdict} ({detail})")?;
    Ok(if score.correct { Exit::Success } else { Exit::Negative })
}

fn parse_text(parsed: &Result<rlverify::Expr, ParseError>) -> String {
    match parsed {
        Ok(expr) => expr.to_string(),
        Err(e) => format!("(does not parse: {e})"),
    }
}
