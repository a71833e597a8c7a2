//! A study's report: `report.md` (provenance, settings, findings with their intervals and
//! verdicts, one table per setting), `summary.json` (every seed's numbers and every interval) and
//! `plots/` (per finding, accuracy, entropy and KL over steps: the median over seeds with the
//! middle half of the seeds as a band, one colour per arm; per setting with more than two reuse
//! levels, the last-10 accuracy and entropy against the reuse level, mean ± one standard
//! deviation).
//!
//! Everything below the provenance lines depends only on the runs' metrics, so the same runs give
//! the same report, byte for byte.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rlbench::report::{line_chart_svg, Chart, Series, XAxis, YAxis};
use serde_json::json;

use super::catalog::{Arm, Metric, Setting, Study, METRICS};
use super::stats;
use super::{ArmRuns, FindingResult, StudyOptions};
use crate::error::{Error, Result};

/// The report's file name.
pub const REPORT_FILE: &str = "report.md";

/// The numbers behind the report.
pub const SUMMARY_FILE: &str = "summary.json";

/// The heading under which everything is reproducible (the provenance above it is not).
pub const RESULTS_HEADING: &str = "## Findings";

fn write_file(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| Error::Io { path: dir.to_path_buf(), source })?;
    }
    std::fs::write(path, text).map_err(|source| Error::Io { path: path.to_path_buf(), source })
}

/// Writes the report, the summary and the plots into `opts.report_dir`; returns the report's path.
pub fn write(study: &Study, opts: &StudyOptions, arms: &[ArmRuns], findings: &[FindingResult]) -> Result<PathBuf> {
    let dir = &opts.report_dir;
    let plots = write_plots(study, arms, &dir.join("plots"))?;
    let mut md = String::new();
    let p = &opts.provenance;
    let _ = writeln!(md, "# The {} study\n", study.name.to_uppercase());
    let _ = writeln!(md, "**The paper's finding**: {}.\n", study.claim);
    let _ = writeln!(md, "- Commit: `{}`", p.commit);
    let _ = writeln!(md, "- Command: `{}`", p.command);
    let _ = writeln!(md, "- Machine: {}", p.machine);
    let _ = writeln!(
        md,
        "\nSeeds 0..{seeds} per arm; tiny model (width 64, 2 layers), P = 8 prompts × G = 8 responses per step; \
         every run takes `--paper {}` (reward range, aggregation, advantage, KL, clip widths, temperature). \
         Differences are paired by seed (`a - b`, the same seed in both arms), with the {:.0}% percentile bootstrap \
         interval ({} resamples). A verdict needs the whole interval on one side of zero.\n",
        study.paper.name(),
        100.0 * stats::CONFIDENCE,
        stats::RESAMPLES,
        seeds = opts.seeds,
    );
    let short: Vec<String> = study
        .settings
        .iter()
        .filter_map(|s| {
            opts.steps.filter(|&n| n != s.steps).map(|n| format!("`{}`: {n} steps, not {}", s.name, s.steps))
        })
        .collect();
    if !short.is_empty() {
        let _ = writeln!(
            md,
            "**A quick check, not the study**: the runs trained for other steps than their setting's own ({}), \
             so each verdict below says so.\n",
            short.join("; ")
        );
    }
    let _ = writeln!(md, "{RESULTS_HEADING}\n");
    let _ = writeln!(
        md,
        "| finding | claim | a vs b | Δ acc last 10 | Δ entropy last 10 | max KL a / b | verdict |\n|---|---|---|---|---|---|---|"
    );
    for (f, r) in study.findings.iter().zip(findings) {
        let cells: Vec<String> = METRICS
            .iter()
            .zip(&r.differences)
            .map(|(m, d)| {
                let text = m.render(d);
                if *m == f.metric {
                    format!("**{text}**")
                } else {
                    text
                }
            })
            .collect();
        let verdict = match (&r.untestable_because, &r.caveat) {
            (Some(why), _) => format!("{} ({why})", r.verdict.as_str()),
            (None, Some(caveat)) => format!("**{}** ({}; {caveat})", r.verdict.as_str(), f.prediction()),
            (None, None) => format!("**{}** ({})", r.verdict.as_str(), f.prediction()),
        };
        let _ = writeln!(
            md,
            "| `{}` | {} | {} vs {} | {} | {} | {} | {verdict} |",
            f.id,
            f.claim,
            f.a.label(),
            f.b.label(),
            cells[0],
            cells[1],
            cells[2]
        );
    }
    let _ = writeln!(
        md,
        "\nIn bold: the metric the claim is about, and the verdict it gives. Accuracy and entropy: the mean of \
         `a - b` over n = {} seed pairs (fewer where a run stopped); KL: the geometric mean of `a / b`.\n",
        opts.seeds
    );
    for setting in study.settings {
        write_setting(&mut md, setting, opts, arms);
        let links: Vec<String> = plots
            .iter()
            .filter(|(s, _, _)| s == setting.name)
            .map(|(_, title, path)| {
                let rel = path.strip_prefix(dir).unwrap_or(path);
                format!("[{title}]({})", rel.display())
            })
            .collect();
        let _ = writeln!(
            md,
            "Plots (over steps: the median over seeds, the band holds the middle half of the seeds; against \
             iterations: the mean with ±1 standard deviation): {}\n",
            links.join(", ")
        );
    }
    let report = dir.join(REPORT_FILE);
    write_file(&report, &md)?;
    let summary = summary_json(study, opts, arms, findings);
    write_file(&dir.join(SUMMARY_FILE), &format!("{}\n", serde_json::to_string_pretty(&summary).unwrap_or_default()))?;
    Ok(report)
}

/// The setting's description and its table of arms.
fn write_setting(md: &mut String, setting: &Setting, opts: &StudyOptions, arms: &[ArmRuns]) {
    let steps = opts.steps.unwrap_or(setting.steps);
    let _ = writeln!(
        md,
        "## Setting `{}`: `{}`, {} new token(s), {steps} steps, lr {}, {} mini-batches\n\n{}.\n",
        setting.name, setting.data, setting.max_new_tokens, setting.lr, setting.mini_batches, setting.why
    );
    let _ = writeln!(
        md,
        "| objective | iterations | acc first 10 | acc last 10 | entropy last 10 | max KL | stopped runs |\n\
         |---|---|---|---|---|---|---|"
    );
    for runs in arms.iter().filter(|r| r.setting.name == setting.name) {
        let first: Vec<f64> = runs.runs.iter().map(|r| r.acc_first).collect();
        let cell = |m: Metric, digits: usize| {
            let v = runs.values(m);
            let (mean, std) = stats::mean_std(&v);
            let lo = v.iter().copied().filter(|x| x.is_finite()).fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().filter(|x| x.is_finite()).fold(f64::NEG_INFINITY, f64::max);
            format!("{mean:.digits$} ± {std:.digits$} ({lo:.digits$}-{hi:.digits$})")
        };
        let _ = writeln!(
            md,
            "| {} | {} | {:.2} | {} | {} | {} | {} |",
            runs.arm.objective,
            runs.arm.iterations,
            stats::mean_std(&first).0,
            cell(Metric::Accuracy, 2),
            cell(Metric::Entropy, 3),
            cell(Metric::MaxKl, 2),
            runs.runs.iter().filter(|r| r.stopped.is_some()).count()
        );
    }
    let _ = writeln!(md, "\nEach cell: mean ± standard deviation over the seeds (min-max).\n");
}

/// The report's numbers as JSON: every seed's values and every interval.
fn summary_json(study: &Study, opts: &StudyOptions, arms: &[ArmRuns], findings: &[FindingResult]) -> serde_json::Value {
    let arms: Vec<serde_json::Value> = arms
        .iter()
        .map(|r| {
            let mut per_metric = serde_json::Map::new();
            for m in METRICS {
                per_metric.insert(format!("{m:?}").to_lowercase(), json!(r.values(m)));
            }
            json!({
                "setting": r.setting.name, "objective": r.arm.objective, "iterations": r.arm.iterations,
                "per_seed": per_metric,
                "stopped": r.runs.iter().map(|s| s.stopped.clone()).collect::<Vec<_>>(),
            })
        })
        .collect();
    let findings: Vec<serde_json::Value> = study
        .findings
        .iter()
        .zip(findings)
        .map(|(f, r)| {
            json!({
                "id": f.id, "claim": f.claim, "a": f.a.label(), "b": f.b.label(), "metric": f.metric,
                "direction": f.direction, "differences": {
                    "accuracy": r.differences[0], "entropy": r.differences[1], "max_kl_log_ratio": r.differences[2],
                },
                "verdict": r.verdict, "untestable_because": r.untestable_because, "caveat": r.caveat,
            })
        })
        .collect();
    json!({
        "study": study.name, "provenance": opts.provenance, "seeds": opts.seeds,
        "steps": study.settings.iter().map(|s| (s.name, opts.steps.unwrap_or(s.steps))).collect::<BTreeMap<_, _>>(),
        "arms": arms, "findings": findings,
    })
}

/// Steps a curve of accuracy or entropy is averaged over before the seeds are combined (the same
/// window as the tables' "last 10"): one step's accuracy is 64 samples and too noisy to read.
const SMOOTHING: usize = 10;

/// The trailing mean over [`SMOOTHING`] steps.
fn smooth(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    (0..points.len())
        .map(|i| {
            let window = &points[(i + 1).saturating_sub(SMOOTHING)..=i];
            (points[i].0, window.iter().map(|p| p.1).sum::<f64>() / window.len() as f64)
        })
        .collect()
}

/// Per step over the seeds: the median, and the middle half of the seeds (25th to 75th
/// percentile) as the band. Robust where one seed's KL runs off by orders of magnitude, and never
/// below zero for a metric that cannot be.
fn band(runs: &ArmRuns, metric: Metric) -> Series {
    let index = metric.index();
    let mut by_step: BTreeMap<i64, (f64, Vec<f64>)> = BTreeMap::new();
    for run in &runs.runs {
        let curve = match metric {
            Metric::MaxKl => run.curves[index].clone(),
            _ => smooth(&run.curves[index]),
        };
        for (step, v) in curve.into_iter().filter(|p| p.1.is_finite()) {
            by_step.entry(step as i64).or_insert((step, Vec::new())).1.push(v);
        }
    }
    let mut line = Vec::new();
    let mut edges = Vec::new();
    for (step, mut values) in by_step.into_values() {
        values.sort_by(f64::total_cmp);
        line.push((step, stats::quantile(&values, 0.5)));
        edges.push((step, stats::quantile(&values, 0.25), stats::quantile(&values, 0.75)));
    }
    Series::with_band(runs.arm.label(), line, edges)
}

/// A chart file: (setting, title, path).
type PlotFile = (String, String, PathBuf);

/// Per finding (each pair of arms once), accuracy, entropy and KL over steps; per setting with
/// more than two reuse levels, the last-10 accuracy and entropy against the level.
fn write_plots(study: &Study, arms: &[ArmRuns], dir: &Path) -> Result<Vec<PlotFile>> {
    let mut files = Vec::new();
    let mut drawn: Vec<(&str, Arm, Arm)> = Vec::new();
    for f in study.findings {
        if drawn.contains(&(f.setting, f.a, f.b)) {
            continue;
        }
        drawn.push((f.setting, f.a, f.b));
        let pair: Vec<&ArmRuns> = [f.a, f.b].iter().filter_map(|a| super::find(arms, f.setting, *a)).collect();
        for metric in METRICS {
            let series = pair.iter().map(|r| band(r, metric)).collect();
            let what = match metric {
                Metric::MaxKl => "KL between consecutive policies",
                Metric::Accuracy => "accuracy (10-step mean)",
                Metric::Entropy => "entropy (10-step mean)",
            };
            let title = format!("{what}: {} vs {}", f.a.label(), f.b.label());
            let chart = Chart {
                title: title.clone(),
                x_label: "step".into(),
                x_axis: XAxis::Linear,
                y_axis: y_axis(metric),
                series,
            };
            let path = dir.join(format!("{}-vs-{}-{}.svg", f.a.slug(), f.b.slug(), file_metric(metric)));
            write_file(&path, &line_chart_svg(&chart))?;
            files.push((f.setting.to_string(), title, path));
        }
    }
    for setting in study.settings.iter().filter(|s| s.iterations.len() > 2) {
        for metric in [Metric::Accuracy, Metric::Entropy] {
            let series = setting
                .objectives
                .iter()
                .map(|objective| {
                    let mut line = Vec::new();
                    let mut edges = Vec::new();
                    for &iterations in setting.iterations {
                        if let Some(r) = super::find(arms, setting.name, Arm { objective, iterations }) {
                            let (mean, std) = stats::mean_std(&r.values(metric));
                            line.push((iterations as f64, mean));
                            edges.push((iterations as f64, mean - std, mean + std));
                        }
                    }
                    Series::with_band(*objective, line, edges)
                })
                .collect();
            let title = format!("{} against iterations per rollout", metric.label());
            let chart = Chart {
                title: title.clone(),
                x_label: "iterations per rollout".into(),
                x_axis: XAxis::Log2,
                y_axis: y_axis(metric),
                series,
            };
            let path = dir.join(format!("{}-sweep-{}.svg", setting.name, file_metric(metric)));
            write_file(&path, &line_chart_svg(&chart))?;
            files.push((setting.name.to_string(), title, path));
        }
    }
    Ok(files)
}

fn y_axis(metric: Metric) -> YAxis {
    match metric {
        Metric::Accuracy => YAxis::Percent,
        _ => YAxis::Auto,
    }
}

fn file_metric(metric: Metric) -> &'static str {
    match metric {
        Metric::Accuracy => "acc",
        Metric::Entropy => "entropy",
        Metric::MaxKl => "kl",
    }
}
