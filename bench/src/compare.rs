//! `rlbench compare RUN_A RUN_B`: is B really better than A? Per suite and overall (the mean over
//! suites), the difference B - A in every registry metric with a per-problem value (Avg@K; see
//! [`crate::metrics::registry`]) and in Pass@k, over the problems both runs have (paired by suite
//! and id), with a paired bootstrap interval and p-value ([`crate::metrics::paired`]).
//! Problems found in only one run are listed and left out.

use crate::metrics::{ks_up_to, paired_bootstrap, pass_at_k, Bootstrap, PairedDiff, ProblemTally, METRICS};
use crate::report::{RunCurves, ScoredRun};
use serde_json::{json, Value};
use std::fmt::Write;

/// Problems of a suite that only one run has (left out of the comparison).
#[derive(Clone, Debug, PartialEq)]
pub struct Unpaired {
    /// The suite (`overall` for the pooled rows).
    pub suite: String,
    /// Problem ids only run A has.
    pub only_a: Vec<String>,
    /// Problem ids only run B has.
    pub only_b: Vec<String>,
}

/// One metric on one suite, or on `overall`.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The suite (`overall` for the pooled rows).
    pub suite: String,
    /// `NAME@K` of a registry metric with a per-problem value (`avg@K`), or `pass@k`.
    pub metric: String,
    /// B minus A, with its paired interval and p-value.
    pub diff: PairedDiff,
}

/// The comparison of two runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// Per suite (in A's order, then B's), each metric; then `overall` for each metric.
    pub rows: Vec<Row>,
    /// Per suite, the problems only one run has.
    pub unpaired: Vec<Unpaired>,
    /// The k of Pass@k compared: up to the fewest samples of any paired problem in either run.
    pub ks: Vec<usize>,
    /// The bootstrap settings the intervals used.
    pub bootstrap: Bootstrap,
    /// What makes the comparison weaker than it looks: a run is incomplete, the runs asked for
    /// another K or another `--limit`, or too few problems pair for an interval or a p-value to
    /// mean much.
    pub caveats: Vec<String>,
    /// Samples missing from run A and from run B (an incomplete run is compared on the samples
    /// its problems have).
    pub missing_samples: [usize; 2],
}

impl Comparison {
    /// Whether a run lacks samples: the comparison is of partial work.
    pub fn is_incomplete(&self) -> bool {
        self.missing_samples.iter().any(|&n| n > 0)
    }
}

/// Fewest paired problems for which an interval and a p-value are reported; below it they are
/// `n/a` (`null` in JSON): a bootstrap over 2 problems can print p < 0.001.
pub const MIN_PAIRED: usize = 10;

/// A per-problem score from its tally.
type MetricFn = Box<dyn Fn(&ProblemTally) -> f64>;

/// The name of the overall rows.
pub const OVERALL: &str = "overall";

/// Pair the problems of two scored runs and compare them. An error when no problem is in both.
pub fn compare(a: &ScoredRun, b: &ScoredRun, opts: &Bootstrap) -> Result<Comparison, String> {
    let mut names: Vec<&str> = a.suites.iter().map(|s| s.name.as_str()).collect();
    for s in &b.suites {
        if !names.contains(&s.name.as_str()) {
            names.push(&s.name);
        }
    }
    // Per suite: the tallies of problems in both runs.
    let mut paired: Vec<(&str, Vec<(&ProblemTally, &ProblemTally)>)> = Vec::new();
    let mut unpaired = Vec::new();
    let empty = Default::default();
    for name in names {
        let pa = a.suites.iter().find(|s| s.name == name).map_or(&empty, |s| &s.problems);
        let pb = b.suites.iter().find(|s| s.name == name).map_or(&empty, |s| &s.problems);
        let pairs: Vec<_> = pa.iter().filter_map(|(id, ta)| pb.get(id).map(|tb| (ta, tb))).collect();
        let only_a: Vec<String> = pa.keys().filter(|id| !pb.contains_key(*id)).cloned().collect();
        let only_b: Vec<String> = pb.keys().filter(|id| !pa.contains_key(*id)).cloned().collect();
        if !only_a.is_empty() || !only_b.is_empty() {
            unpaired.push(Unpaired { suite: name.to_string(), only_a, only_b });
        }
        if !pairs.is_empty() {
            paired.push((name, pairs));
        }
    }
    if paired.is_empty() {
        return Err("the two runs have no problem in common (problems are paired by suite and id)".into());
    }
    let k_common = paired.iter().flat_map(|(_, ps)| ps.iter().map(|(x, y)| x.n.min(y.n))).min().unwrap_or(0);
    let ks = ks_up_to(k_common);
    let mut metrics: Vec<(String, MetricFn)> = METRICS
        .iter()
        .filter_map(|m| m.per_problem.map(|f| (format!("{}@K", m.name), Box::new(f) as MetricFn)))
        .collect();
    for &k in &ks {
        metrics
            .push((format!("pass@{k}"), Box::new(move |t: &ProblemTally| pass_at_k(t.n, t.correct, k).unwrap_or(0.0))));
    }
    let mut per_suite: Vec<Vec<Row>> = vec![Vec::new(); paired.len()];
    let mut overall = Vec::new();
    for (metric, value) in &metrics {
        let groups: Vec<Vec<(f64, f64)>> =
            paired.iter().map(|(_, ps)| ps.iter().map(|(x, y)| (value(x), value(y))).collect()).collect();
        let (diffs, all) = paired_bootstrap(&groups, opts);
        for (i, d) in diffs.into_iter().enumerate() {
            if let Some(diff) = d {
                per_suite[i].push(Row { suite: paired[i].0.to_string(), metric: metric.clone(), diff });
            }
        }
        if let Some(diff) = all {
            overall.push(Row { suite: OVERALL.into(), metric: metric.clone(), diff });
        }
    }
    let mut rows: Vec<Row> = per_suite.into_iter().flatten().collect();
    rows.extend(overall);
    let missing_samples: [usize; 2] = [a, b].map(|run| run.suites.iter().map(|s| s.metrics.missing_samples).sum());
    let mut caveats = incomplete_caveats(missing_samples);
    caveats.extend(suite_check_caveats(a, b));
    caveats.extend(self::caveats(a, b, &paired.iter().map(|(name, ps)| (*name, ps.len())).collect::<Vec<_>>()));
    Ok(Comparison { rows, unpaired, ks, bootstrap: *opts, caveats, missing_samples })
}

/// What each run's suite checks found (golds or statements changed since generation, rows left
/// out), prefixed with the run.
fn suite_check_caveats(a: &ScoredRun, b: &ScoredRun) -> Vec<String> {
    [("A", a), ("B", b)]
        .into_iter()
        .flat_map(|(run, scored)| {
            scored.suites.iter().flat_map(move |s| s.check.notes(&s.name)).map(move |n| format!("run {run}: {n}"))
        })
        .map(|n| n.trim_end_matches('.').to_string())
        .collect()
}

/// A caveat per run that lacks samples.
fn incomplete_caveats(missing: [usize; 2]) -> Vec<String> {
    ["A", "B"]
        .iter()
        .zip(missing)
        .filter(|(_, n)| *n > 0)
        .map(|(run, n)| {
            format!(
                "run {run} is incomplete ({n} samples missing): its problems are compared on the samples they have; \
                 re-run its `rlbench run` command to complete it"
            )
        })
        .collect()
}

/// What makes two runs hard to compare: another K, another `--limit`, few paired problems.
fn caveats(a: &ScoredRun, b: &ScoredRun, paired: &[(&str, usize)]) -> Vec<String> {
    let mut out = Vec::new();
    if let (Some(ma), Some(mb)) = (&a.manifest, &b.manifest) {
        if ma.sampling.k != mb.sampling.k {
            out.push(format!(
                "the runs asked for different K (A: {}, B: {}): avg@K estimates the same quantity from other sample \
                 counts, and pass@k is compared up to the smaller",
                ma.sampling.k, mb.sampling.k
            ));
        }
        if ma.limit != mb.limit {
            let show = |l: Option<usize>| l.map_or_else(|| "none".to_string(), |l| l.to_string());
            out.push(format!(
                "the runs were made with different --limit (A: {}, B: {}): only the problems both have are compared",
                show(ma.limit),
                show(mb.limit)
            ));
        }
    }
    for (suite, n) in paired {
        if *n < MIN_PAIRED {
            out.push(format!(
                "{suite}: only {n} problem(s) pair; intervals and p-values need at least {MIN_PAIRED} and are n/a"
            ));
        }
    }
    let total: usize = paired.iter().map(|(_, n)| n).sum();
    if paired.len() > 1 && total < MIN_PAIRED {
        out.push(format!("overall: only {total} problem(s) pair; intervals and p-values are n/a"));
    }
    out
}

fn pct(x: f64) -> String {
    format!("{:.1}", 100.0 * x)
}

fn signed_pct(x: f64) -> String {
    let s = format!("{:+.1}", 100.0 * x);
    if s == "-0.0" {
        "+0.0".into()
    } else {
        s
    }
}

fn p_label(p: f64) -> String {
    if p < 0.001 {
        "<0.001".into()
    } else {
        format!("{p:.3}")
    }
}

/// A Markdown table (values in percent): per suite and overall, A, B, B - A, its interval and p.
pub fn markdown(c: &Comparison, a_name: &str, b_name: &str) -> String {
    let mut s = String::new();
    let level = 100.0 * c.bootstrap.level;
    let _ = writeln!(
        s,
        "A = `{a_name}`, B = `{b_name}`: B − A over the problems in both runs (paired by suite and id), in percent; {level:.0}% paired bootstrap interval over problems and two-sided p-value ({} resamples, seed {}); overall is the mean over suites.\n",
        c.bootstrap.resamples, c.bootstrap.seed
    );
    let _ = writeln!(s, "| suite | problems | metric | A | B | B − A | {level:.0}% CI | p |");
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|");
    for r in &c.rows {
        let d = &r.diff;
        let (ci, p) = match d.n >= MIN_PAIRED {
            true => (format!("[{}, {}]", signed_pct(d.ci.0), signed_pct(d.ci.1)), p_label(d.p_value)),
            false => ("n/a".to_string(), "n/a".to_string()),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {ci} | {p} |",
            r.suite,
            d.n,
            r.metric,
            pct(d.a),
            pct(d.b),
            signed_pct(d.diff),
        );
    }
    for caveat in &c.caveats {
        let _ = writeln!(s, "\n**Caveat:** {caveat}.");
    }
    for u in &c.unpaired {
        let list = |ids: &[String]| {
            const SHOWN: usize = 5;
            let mut l = ids.iter().take(SHOWN).map(|i| format!("`{i}`")).collect::<Vec<_>>().join(", ");
            if ids.len() > SHOWN {
                let _ = write!(l, ", ... {} more", ids.len() - SHOWN);
            }
            l
        };
        let mut parts = Vec::new();
        if !u.only_a.is_empty() {
            parts.push(format!("{} only in A ({})", u.only_a.len(), list(&u.only_a)));
        }
        if !u.only_b.is_empty() {
            parts.push(format!("{} only in B ({})", u.only_b.len(), list(&u.only_b)));
        }
        let _ = writeln!(
            s,
            "\n- {}: {} problem(s) left out: {}",
            u.suite,
            u.only_a.len() + u.only_b.len(),
            parts.join("; ")
        );
    }
    s
}

/// The comparison as JSON: `rows` (suite, metric, problems, a, b, diff, ci_low, ci_high,
/// p_value; fractions; the last three `null` below [`MIN_PAIRED`] problems), `unpaired`, `ks`,
/// `resamples`, `seed`, `level`, `caveats`, `missing_samples` (`a`, `b`).
pub fn to_json(c: &Comparison, a_name: &str, b_name: &str) -> Value {
    json!({
        "a": a_name,
        "b": b_name,
        "resamples": c.bootstrap.resamples,
        "seed": c.bootstrap.seed,
        "level": c.bootstrap.level,
        "ks": c.ks,
        "rows": c.rows.iter().map(|r| {
            let enough = r.diff.n >= MIN_PAIRED;
            json!({
                "suite": r.suite,
                "metric": r.metric,
                "problems": r.diff.n,
                "a": r.diff.a,
                "b": r.diff.b,
                "diff": r.diff.diff,
                "ci_low": enough.then_some(r.diff.ci.0),
                "ci_high": enough.then_some(r.diff.ci.1),
                "p_value": enough.then_some(r.diff.p_value),
            })
        }).collect::<Vec<_>>(),
        "caveats": c.caveats,
        "missing_samples": {"a": c.missing_samples[0], "b": c.missing_samples[1]},
        "unpaired": c.unpaired.iter().map(|u| json!({"suite": u.suite, "only_a": u.only_a, "only_b": u.only_b})).collect::<Vec<_>>(),
    })
}

/// Pass@k against k over the paired problems, both runs overlaid: `A suite` and `B suite` per
/// suite.
pub fn passk_overlay_svg(c: &Comparison, a_name: &str, b_name: &str) -> String {
    let mut runs: Vec<RunCurves> = vec![(format!("A {a_name}"), Vec::new()), (format!("B {b_name}"), Vec::new())];
    for r in &c.rows {
        let Some(k) = r.metric.strip_prefix("pass@").and_then(|k| k.parse::<usize>().ok()) else { continue };
        for (run, value) in [(0, r.diff.a), (1, r.diff.b)] {
            let suites = &mut runs[run].1;
            match suites.iter_mut().find(|(s, _)| *s == r.suite) {
                Some((_, pts)) => pts.push((k, value)),
                None => suites.push((r.suite.clone(), vec![(k, value)])),
            }
        }
    }
    crate::report::passk_overlay_svg(&runs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::SuiteMetrics;
    use crate::report::{ProblemCounts, ScoredSuite};

    /// (suite, [(id, samples, correct)]).
    type SuiteSpec<'a> = (&'a str, &'a [(&'a str, usize, usize)]);

    fn run(suites: &[SuiteSpec]) -> ScoredRun {
        ScoredRun {
            manifest: None,
            suites: suites
                .iter()
                .map(|(name, ps)| ScoredSuite {
                    name: name.to_string(),
                    metrics: SuiteMetrics::from_tallies([]),
                    problems: ps.iter().map(|(id, n, c)| (id.to_string(), (*n, *c))).collect::<ProblemCounts>(),
                    check: Default::default(),
                })
                .collect(),
        }
    }

    #[test]
    fn a_run_against_itself_differs_by_nothing() {
        let a = run(&[("s", &[("p1", 4, 1), ("p2", 4, 4), ("p3", 4, 0)]), ("t", &[("q", 4, 2)])]);
        let c = compare(&a, &a, &Bootstrap { resamples: 200, ..Bootstrap::default() });
        let Ok(c) = c else { panic!("{c:?}") };
        assert_eq!(c.ks, vec![1, 2, 4]);
        // 2 suites x (avg + 3 pass@k) + 4 overall rows.
        assert_eq!(c.rows.len(), 12);
        for r in &c.rows {
            assert_eq!((r.diff.diff, r.diff.ci, r.diff.p_value), (0.0, (0.0, 0.0), 1.0), "{r:?}");
        }
        assert!(c.unpaired.is_empty());
        let md = markdown(&c, "a", "a");
        assert!(md.contains("| overall | 4 | avg@K | "), "{md}");
    }

    /// Two paired problems make no p-value: the table says n/a and a caveat says why, as it does
    /// for runs of different K and --limit.
    #[test]
    fn few_pairs_and_other_settings_are_caveats() {
        let mut a = run(&[("s", &[("p1", 4, 0), ("p2", 4, 0)])]);
        let mut b = run(&[("s", &[("p1", 4, 4), ("p2", 4, 4)])]);
        let manifest = |k: usize, limit: Option<usize>| crate::run::RunManifest {
            rlbench_version: "0".into(),
            verifier_version: "0".into(),
            created: String::new(),
            backend: "openai-chat".into(),
            model: "m".into(),
            endpoint: None,
            prompt: crate::run::PromptInfo { name: "boxed".into(), hash: "h".into() },
            sampling: crate::run::SamplingSettings { k, ..Default::default() },
            suites: vec!["s".into()],
            problems: Default::default(),
            suite_files: Default::default(),
            limit,
            complete: true,
        };
        a.manifest = Some(manifest(4, Some(2)));
        b.manifest = Some(manifest(8, None));
        let c = compare(&a, &b, &Bootstrap { resamples: 200, ..Bootstrap::default() }).expect("comparison");
        assert_eq!(c.caveats.len(), 3, "{:?}", c.caveats);
        assert!(c.caveats[0].contains("different K (A: 4, B: 8)") && c.caveats[1].contains("--limit (A: 2, B: none)"));
        assert!(c.caveats[2].contains("only 2 problem(s) pair"));
        let md = markdown(&c, "a", "b");
        assert!(md.contains("| n/a | n/a |") && !md.contains("<0.001"), "{md}");
        let json = to_json(&c, "a", "b");
        assert!(json["rows"][0]["p_value"].is_null() && json["caveats"].as_array().is_some_and(|c| c.len() == 3));
    }

    /// Problems are paired by suite and id; those of one run only are listed and left out, and
    /// Pass@k goes up to the fewest samples of a paired problem.
    #[test]
    fn pairing_by_suite_and_id() {
        let a = run(&[("s", &[("p1", 4, 0), ("p2", 4, 0), ("only-a", 4, 4)]), ("gone", &[("x", 4, 4)])]);
        let b = run(&[("s", &[("p1", 2, 2), ("p2", 2, 1), ("only-b", 2, 0)])]);
        let c = compare(&a, &b, &Bootstrap { resamples: 500, ..Bootstrap::default() });
        let Ok(c) = c else { panic!("{c:?}") };
        assert_eq!(c.ks, vec![1, 2]);
        let row = |suite: &str, metric: &str| c.rows.iter().find(|r| r.suite == suite && r.metric == metric);
        let avg = row("s", "avg@K").map(|r| r.diff.clone());
        // A: 0, 0; B: 1, 1/2: diff 3/4 over 2 problems.
        assert_eq!(avg.as_ref().map(|d| (d.n, d.a, d.b, d.diff)), Some((2, 0.0, 0.75, 0.75)));
        // pass@2 of B: p1 1, p2 1 (2 samples, 1 right).
        assert_eq!(row("s", "pass@2").map(|r| r.diff.b), Some(1.0));
        assert!(row("gone", "avg@K").is_none());
        assert_eq!(
            c.unpaired,
            vec![
                Unpaired { suite: "s".into(), only_a: vec!["only-a".into()], only_b: vec!["only-b".into()] },
                Unpaired { suite: "gone".into(), only_a: vec!["x".into()], only_b: vec![] },
            ]
        );
        let md = markdown(&c, "a", "b");
        assert!(md.contains("- s: 2 problem(s) left out: 1 only in A (`only-a`); 1 only in B (`only-b`)"), "{md}");
        let j = to_json(&c, "a", "b");
        assert_eq!(j["rows"][0]["metric"], "avg@K");
        assert_eq!(j["unpaired"][1]["suite"], "gone");
        let svg = passk_overlay_svg(&c, "a", "b");
        assert_eq!(svg.matches("<polyline").count(), 4, "A and B for suite s and overall");
        let disjoint = run(&[("other", &[("p1", 1, 1)])]);
        assert!(compare(&a, &disjoint, &Bootstrap::default()).is_err());
    }
}
