//! Markdown, CSV and JSON renderings of a [`Report`].

use super::Report;
use crate::metrics::registry::pct;
use crate::metrics::{SuiteMetrics, METRICS};
use serde_json::{json, Value};
use std::fmt::Write;

/// The union of the k values of Pass@k over suites (up to each suite's K, computed or not),
/// ascending.
fn all_ks(suites: &[(String, SuiteMetrics)]) -> Vec<usize> {
    let mut ks: Vec<usize> = suites
        .iter()
        .flat_map(|(_, m)| m.pass_at.iter().map(|(k, _)| *k).chain(crate::metrics::ks_up_to(m.k)))
        .collect();
    ks.sort_unstable();
    ks.dedup();
    ks
}

/// A Markdown table (values in percent), followed by the macro average and Overall.
pub fn markdown(r: &Report) -> String {
    let ks = all_ks(&r.suites);
    let mut s = String::new();
    if let Some(m) = &r.manifest {
        let _ = writeln!(
            s,
            "Model `{}` ({}), prompt `{}` ({}), K = {}, temperature {}, top-p {}, max tokens {}, seed {}; verifier {}.\n",
            m.model,
            m.backend,
            m.prompt.name,
            m.prompt.hash,
            m.sampling.k,
            m.sampling.temperature,
            m.sampling.top_p,
            m.sampling.max_tokens,
            m.sampling.seed.map_or_else(|| "none".to_string(), |s| s.to_string()),
            r.verifier_version
        );
    }
    let modes: Vec<String> = r.scoring.iter().map(|(flag, value)| format!("--{flag} {value}")).collect();
    let _ = writeln!(s, "Answers read with {}.\n", modes.join(", "));
    let mut head = vec!["suite".to_string(), "problems".into(), "K".into()];
    head.extend(ks.iter().map(|k| format!("pass@{k}")));
    head.extend(METRICS.iter().map(|metric| metric.markdown.to_string()));
    let _ = writeln!(s, "| {} |", head.join(" | "));
    let _ = writeln!(s, "|{}", "---|".repeat(head.len()));
    for (name, m) in &r.suites {
        let mut row = vec![name.clone(), m.n_problems.to_string(), k_label(m)];
        for k in &ks {
            let blank = if *k <= m.k { "n/a" } else { "" };
            row.push(m.pass_at.iter().find(|(kk, _)| kk == k).map_or(blank.into(), |(_, v)| pct(*v)));
        }
        // A suite without samples has no rate or mean to show.
        row.extend(METRICS.iter().map(|metric| {
            if m.n_samples == 0 {
                "n/a".into()
            } else {
                (metric.cell)(m.metric_values(metric))
            }
        }));
        let _ = writeln!(s, "| {} |", row.join(" | "));
    }
    let _ = writeln!(s);
    for note in &r.notes {
        let _ = writeln!(s, "**{note}**\n");
    }
    if let Some(v) = r.macro_avg {
        let counted = r.suites.iter().filter(|(_, m)| m.get(&r.metric).is_some()).count();
        let _ = writeln!(s, "Macro average of {} over {counted} suite(s): **{}**", r.metric, pct(v));
    }
    if let Some(o) = &r.overall {
        let base = r.baseline_path.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
        match o.value {
            Some(v) => {
                let _ = writeln!(
                    s,
                    "\nOverall (CPGD: mean over suites of {} / baseline, baseline `{base}`): **{v:.3}** over {} suite(s)",
                    r.metric,
                    o.ratios.len()
                );
            }
            None => {
                let _ = writeln!(s, "\nOverall: no suite has a usable baseline in `{base}`");
            }
        }
        for (suite, why) in &o.skipped {
            let _ = writeln!(s, "- {suite} left out of Overall: {why}");
        }
    }
    s.push_str(&endpoints_markdown(r));
    s
}

/// K, with the range of samples present when problems differ (`4 (1-4 present)`).
fn k_label(m: &SuiteMetrics) -> String {
    if m.k_min == m.k_max && m.k_min == m.k {
        m.k.to_string()
    } else if m.k_min == m.k_max {
        format!("{} ({} present)", m.k, m.k_min)
    } else {
        format!("{} ({}-{} present)", m.k, m.k_min, m.k_max)
    }
}

/// CSV, one row per suite, values as fractions.
pub fn csv(r: &Report) -> String {
    let ks = all_ks(&r.suites);
    let mut head = vec!["suite".to_string(), "n_problems".into(), "n_samples".into(), "k".into()];
    head.extend(ks.iter().map(|k| format!("pass@{k}")));
    head.extend(METRICS.iter().flat_map(|metric| metric.fields).map(|f| f.csv.to_string()));
    head.push("missing_samples".into());
    let mut s = head.join(",") + "\n";
    let opt = |x: Option<f64>| x.map_or(String::new(), |v| v.to_string());
    for (name, m) in &r.suites {
        let mut row = vec![csv_field(name), m.n_problems.to_string(), m.n_samples.to_string(), m.k.to_string()];
        for k in &ks {
            row.push(opt(m.pass_at.iter().find(|(kk, _)| kk == k).map(|(_, v)| *v)));
        }
        row.extend(
            METRICS.iter().flat_map(|metric| (0..metric.fields.len()).map(|i| opt(m.field_value(metric.name, i)))),
        );
        row.push(m.missing_samples.to_string());
        s.push_str(&(row.join(",") + "\n"));
    }
    s
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The report as JSON: `{"suites": {name: metrics}, "metric", "macro_average", "overall", ...}`.
pub fn to_json(r: &Report) -> Value {
    let suites: serde_json::Map<String, Value> =
        r.suites.iter().map(|(n, m)| (n.clone(), Value::Object(m.to_json()))).collect();
    json!({
        "suites": suites,
        "metric": r.metric,
        "macro_average": r.macro_avg,
        "overall": r.overall.as_ref().map(|o| json!({
            "value": o.value,
            "baseline": r.baseline_path.as_ref().map(|p| p.display().to_string()),
            "ratios": o.ratios,
            "skipped": o.skipped,
        })),
        "verifier_version": r.verifier_version,
        "scoring": r.scoring.iter().map(|(flag, value)| (flag.to_string(), json!(value))).collect::<serde_json::Map<_, _>>(),
        "suite_checks": r.checks.iter().map(|(name, c)| (name.clone(), c.to_json())).collect::<serde_json::Map<_, _>>(),
        "notes": r.notes,
        "run": r.manifest,
        "endpoints": r.endpoints.iter().map(|e| {
            let mut v = json!(e);
            v["tokens_per_second"] = json!(e.tokens_per_second());
            v
        }).collect::<Vec<_>>(),
    })
}

/// The per-endpoint table of a run against servers (empty without one).
fn endpoints_markdown(r: &Report) -> String {
    let mut s = String::new();
    if r.endpoints.is_empty() {
        return s;
    }
    let _ = writeln!(s, "\n| endpoint | requests | failures | taken out | completions | tokens | tokens/s |");
    let _ = writeln!(s, "|---|---|---|---|---|---|---|");
    for e in &r.endpoints {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} |",
            e.endpoint,
            e.requests,
            e.failures,
            e.taken_out,
            e.completions,
            e.tokens,
            e.tokens_per_second().map_or("n/a".to_string(), |t| format!("{t:.1}"))
        );
    }
    s
}
