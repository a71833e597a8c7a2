//! SVG training curves from a run's `metrics.jsonl` (`rltrain plot RUN_DIR`), and several runs
//! overlaid per metric (`rltrain plot A B ...`).
//!
//! `metrics.jsonl` holds one JSON object per step: `step` plus numeric keys such as
//! `reward/mean`, `entropy`, `clip_frac/total`, `kl/old_k3`, `grad_norm`, `eval/<suite>/avg@k`.
//! Lines may lack keys (evaluation runs every few steps); non-numeric values are ignored; a line
//! that is not a JSON object with a numeric `step` is reported as `file:line: why` and skipped.
//!
//! [`plot_run`] writes one chart per key group into `RUN_DIR/plots/`: keys group by the part
//! before the first `/` (`reward/mean` and `reward/std` in `reward.svg`), evaluation keys by suite
//! (`eval/aime24/avg@8` in `eval-aime24.svg`), a key without `/` alone (`entropy.svg`).
//! [`plot_compare`] writes one chart per key with one line per run. The charts are drawn by
//! rlbench's SVG writer ([`rlbench::report::line_chart_svg`]).

use crate::error::{Error, Result};
use rlbench::report::{line_chart_svg, Chart, Series, XAxis, YAxis};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The metrics file of a run directory.
pub const METRICS_FILE: &str = "metrics.jsonl";

/// A run's metrics: for each key, its `(step, value)` points in file order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MetricLog {
    /// Points per key (keys sorted).
    pub series: BTreeMap<String, Vec<(f64, f64)>>,
    /// Lines that were skipped, as `file:line: why`.
    pub skipped: Vec<String>,
}

impl MetricLog {
    /// Parses metrics text; `name` labels the skipped-line messages (usually the file path).
    pub fn parse(text: &str, name: &str) -> MetricLog {
        let mut log = MetricLog::default();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let mut skip = |why: String| log.skipped.push(format!("{name}:{}: {why}", i + 1));
            let value: serde_json::Value = match serde_json::from_str(line) {
                Ok(v) => v,
                Err(e) => {
                    skip(format!("not JSON ({e})"));
                    continue;
                }
            };
            let Some(object) = value.as_object() else {
                skip("not a JSON object".into());
                continue;
            };
            let Some(step) = object.get("step").and_then(serde_json::Value::as_f64) else {
                skip("no numeric `step`".into());
                continue;
            };
            for (key, v) in object {
                if key == "step" {
                    continue;
                }
                if let Some(x) = v.as_f64() {
                    log.series.entry(key.clone()).or_default().push((step, x));
                }
            }
        }
        log
    }

    /// Reads a metrics file.
    pub fn read(path: &Path) -> Result<MetricLog> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Plot(format!("{}: {e}", path.display())))?;
        Ok(MetricLog::parse(&text, &path.display().to_string()))
    }
}

/// The chart a key belongs to: `eval-<suite>` for `eval/<suite>/...`, else the part before the
/// first `/` (the whole key when it has none).
pub fn key_group(key: &str) -> String {
    let mut parts = key.split('/');
    let first = parts.next().unwrap_or(key);
    match (first, parts.next(), parts.next()) {
        ("eval", Some(suite), Some(_)) => format!("eval-{suite}"),
        _ => first.to_string(),
    }
}

/// A file name for a key or group: `[A-Za-z0-9._-]` kept, anything else becomes `_`.
pub fn file_stem(name: &str) -> String {
    let s: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-') { c } else { '_' }).collect();
    if s.is_empty() || s.starts_with('.') {
        format!("_{s}")
    } else {
        s
    }
}

/// Writes `path`, creating its folder.
fn write(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::Plot(format!("{}: {e}", dir.display())))?;
    }
    std::fs::write(path, text).map_err(|e| Error::Plot(format!("{}: {e}", path.display())))
}

/// What a plot command wrote, and the metrics lines it skipped (the caller reports them).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plotted {
    /// The SVG files written.
    pub files: Vec<PathBuf>,
    /// Lines of the metrics files that were not used, as `file:line: why`.
    pub skipped: Vec<String>,
}

/// Writes one SVG chart per key group of `RUN_DIR/metrics.jsonl` into `RUN_DIR/plots/` (see the
/// module docs); returns their paths and the skipped lines.
pub fn plot_run(run_dir: &Path) -> Result<Plotted> {
    let log = MetricLog::read(&run_dir.join(METRICS_FILE))?;
    let files = write_run_plots(&log, &run_dir.join("plots"))?;
    Ok(Plotted { files, skipped: log.skipped })
}

/// The charts of [`plot_run`] for an already read log, into `out_dir`.
pub fn write_run_plots(log: &MetricLog, out_dir: &Path) -> Result<Vec<PathBuf>> {
    let mut groups: BTreeMap<String, Vec<Series>> = BTreeMap::new();
    for (key, points) in &log.series {
        groups.entry(key_group(key)).or_default().push(Series::line(key.clone(), points.clone()));
    }
    let mut files = Vec::new();
    for (group, series) in groups {
        let chart =
            Chart { title: group.clone(), x_label: "step".into(), x_axis: XAxis::Linear, y_axis: YAxis::Auto, series };
        let path = out_dir.join(format!("{}.svg", file_stem(&group)));
        write(&path, &line_chart_svg(&chart))?;
        files.push(path);
    }
    Ok(files)
}

/// Overlays runs: for each key, `out_dir/<key>.svg` with one line per run (named by the run's
/// label) that has the key. `runs` are `(label, run directory)`; keys no run has are skipped.
/// Returns the files written and the skipped lines of every run.
pub fn plot_compare(runs: &[(String, PathBuf)], keys: &[&str], out_dir: &Path) -> Result<Plotted> {
    let mut logs = Vec::with_capacity(runs.len());
    let mut skipped = Vec::new();
    for (label, dir) in runs {
        let log = MetricLog::read(&dir.join(METRICS_FILE))?;
        skipped.extend(log.skipped.iter().cloned());
        logs.push((label.clone(), log));
    }
    let files = write_compare_plots(&logs, keys, out_dir)?;
    Ok(Plotted { files, skipped })
}

/// The charts of [`plot_compare`] for already read logs.
pub fn write_compare_plots(logs: &[(String, MetricLog)], keys: &[&str], out_dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for key in keys {
        let series: Vec<Series> = logs
            .iter()
            .filter_map(|(label, log)| log.series.get(*key).map(|points| Series::line(label.clone(), points.clone())))
            .collect();
        if series.is_empty() {
            continue;
        }
        let chart = Chart {
            title: key.to_string(),
            x_label: "step".into(),
            x_axis: XAxis::Linear,
            y_axis: YAxis::Auto,
            series,
        };
        let path = out_dir.join(format!("{}.svg", file_stem(key)));
        write(&path, &line_chart_svg(&chart))?;
        files.push(path);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    const METRICS: &str = r#"{"step": 0, "reward/mean": 0.25, "reward/std": 0.4, "entropy": 1.5, "kl/old_k3": 0.0}
{"step": 1, "reward/mean": 0.5, "entropy": 1.25, "grad_norm": 2.0, "lr": "1e-5"}
this is not json
{"step": 2, "reward/mean": 0.75, "reward/std": 0.3, "eval/aime24/avg@8": 0.1, "eval/gsm8k/avg@1": 0.4}
[1, 2]
{"reward/mean": 1.0}

{"step": 3, "reward/mean": 0.8, "entropy": 1.0, "clip_frac/total": 0.05}
"#;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("rltrain-plot-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn metrics_parse_with_missing_keys_and_bad_lines_reported_by_line() {
        let log = MetricLog::parse(METRICS, "run/metrics.jsonl");
        assert_eq!(log.series["reward/mean"], vec![(0.0, 0.25), (1.0, 0.5), (2.0, 0.75), (3.0, 0.8)]);
        assert_eq!(log.series["reward/std"], vec![(0.0, 0.4), (2.0, 0.3)]);
        assert_eq!(log.series["eval/aime24/avg@8"], vec![(2.0, 0.1)]);
        assert!(!log.series.contains_key("lr"), "strings are not plotted");
        assert_eq!(log.skipped.len(), 3, "{:?}", log.skipped);
        assert!(log.skipped[0].starts_with("run/metrics.jsonl:3: not JSON"), "{}", log.skipped[0]);
        assert_eq!(log.skipped[1], "run/metrics.jsonl:5: not a JSON object");
        assert_eq!(log.skipped[2], "run/metrics.jsonl:6: no numeric `step`");
    }

    #[test]
    fn keys_group_by_prefix_and_eval_suite() {
        let cases = [
            ("reward/mean", "reward"),
            ("entropy", "entropy"),
            ("clip_frac/total", "clip_frac"),
            ("kl/old_k3", "kl"),
            ("eval/aime24/avg@8", "eval-aime24"),
            ("eval/score", "eval"),
        ];
        for (key, group) in cases {
            assert_eq!(key_group(key), group, "{key}");
        }
        assert_eq!(file_stem("eval/aime24/avg@8"), "eval_aime24_avg_8");
        assert_eq!(file_stem("../x"), "_.._x");
        assert_eq!(file_stem(""), "_");
    }

    #[test]
    fn run_plots_one_file_per_group_one_polyline_per_series() -> Result<()> {
        let dir = temp_dir("run");
        write(&dir.join(METRICS_FILE), METRICS)?;
        let files = plot_run(&dir)?.files;
        let names: Vec<String> =
            files.iter().filter_map(|f| f.file_name()).map(|n| n.to_string_lossy().into_owned()).collect();
        assert_eq!(
            names,
            [
                "clip_frac.svg",
                "entropy.svg",
                "eval-aime24.svg",
                "eval-gsm8k.svg",
                "grad_norm.svg",
                "kl.svg",
                "reward.svg"
            ]
        );
        assert!(files.iter().all(|f| f.parent() == Some(dir.join("plots").as_path())));
        let reward = std::fs::read_to_string(dir.join("plots/reward.svg")).map_err(|e| Error::Plot(e.to_string()))?;
        assert!(reward.starts_with("<svg") && reward.trim_end().ends_with("</svg>"));
        assert_eq!(reward.matches("<polyline").count(), 2, "reward/mean and reward/std");
        assert!(reward.contains(">reward/mean<") && reward.contains(">reward/std<"));
        let entropy = std::fs::read_to_string(dir.join("plots/entropy.svg")).map_err(|e| Error::Plot(e.to_string()))?;
        assert_eq!(entropy.matches("<polyline").count(), 1);
        // The single evaluation point draws no line, but the file and its legend exist.
        let eval =
            std::fs::read_to_string(dir.join("plots/eval-aime24.svg")).map_err(|e| Error::Plot(e.to_string()))?;
        assert!(eval.contains("eval/aime24/avg@8") && !eval.contains("<polyline"));
        let _ = std::fs::remove_dir_all(&dir);
        Ok(())
    }

    #[test]
    fn compare_overlays_runs_per_key() -> Result<()> {
        let dir = temp_dir("compare");
        let run = |name: &str, text: &str| -> Result<(String, PathBuf)> {
            write(&dir.join(name).join(METRICS_FILE), text)?;
            Ok((name.to_string(), dir.join(name)))
        };
        let runs = vec![
            run(
                "grpo",
                "{\"step\":0,\"entropy\":1.0,\"reward/mean\":0.1}\n{\"step\":1,\"entropy\":0.2,\"reward/mean\":0.3}\n",
            )?,
            run("cpgd", "{\"step\":0,\"entropy\":1.0}\n{\"step\":1,\"entropy\":0.9}\n{\"step\":2,\"entropy\":0.8}\n")?,
            run("dgpo", "{\"step\":0,\"entropy\":1.1}\nbroken\n{\"step\":1,\"entropy\":1.0}\n")?,
        ];
        let out = dir.join("report");
        let plotted = plot_compare(&runs, &["entropy", "reward/mean", "kl/old_k3"], &out)?;
        assert_eq!(plotted.skipped.len(), 1, "the broken line of dgpo: {:?}", plotted.skipped);
        let files = plotted.files;
        assert_eq!(files, vec![out.join("entropy.svg"), out.join("reward_mean.svg")], "a key no run has is skipped");
        let entropy = std::fs::read_to_string(&files[0]).map_err(|e| Error::Plot(e.to_string()))?;
        assert_eq!(entropy.matches("<polyline").count(), 3);
        for label in ["grpo", "cpgd", "dgpo"] {
            assert!(entropy.contains(&format!(">{label}<")), "legend {label}");
        }
        let reward = std::fs::read_to_string(&files[1]).map_err(|e| Error::Plot(e.to_string()))?;
        assert_eq!(reward.matches("<polyline").count(), 1);
        assert!(matches!(plot_compare(&[("x".into(), dir.join("missing"))], &["entropy"], &out), Err(Error::Plot(_))));
        let _ = std::fs::remove_dir_all(&dir);
        Ok(())
    }
}
