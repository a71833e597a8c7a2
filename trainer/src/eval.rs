//! Periodic evaluation: sample `k` responses per problem with the engine, grade them with
//! `rlverify`, and report every selectable metric of rlbench's registry (Avg@k, Maj@k) and
//! unbiased Pass@k through rlbench's own tally ([`ProblemTally`], [`SuiteMetrics`]), so an
//! evaluation here and `rlbench score` agree.

use rlbench::metrics::{MetricName, ProblemTally, SuiteMetrics, METRICS};
use rlbench::score::{score_sample, GenSample};
use rlbench::suite::Problem;
use rlengine::{Engine, FinishReason, SamplingParams};
use rlverify::Gold;
use serde_json::{Map, Value};

use crate::config::TrainConfig;
use crate::error::Result;
use crate::policy::prompt_ids;
use crate::rng::derive_seed;

/// One evaluation set.
#[derive(Debug, Clone)]
pub struct EvalSet {
    /// Name used in metric keys (`eval/<name>/avg@k`).
    pub name: String,
    /// Its problems (already limited).
    pub problems: Vec<Problem>,
}

/// The metrics of one set, as rlbench computes them.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalScore {
    /// Its suite metrics (every registry metric, Pass@k up to k).
    pub metrics: SuiteMetrics,
}

/// What an evaluation line reports of each set, named as `--metric` spells them for `k` samples:
/// every selectable metric of rlbench's registry ([`METRICS`]: `avg@k`, `maj@k`), then `pass@k`.
pub fn eval_metrics(k: usize) -> Vec<MetricName> {
    METRICS
        .iter()
        .filter(|m| m.selectable)
        .map(|m| MetricName::Named { name: m.name, k: Some(k) })
        .chain([MetricName::PassAt(k)])
        .collect()
}

impl EvalScore {
    /// The value of `metric` (0 where the set has none: no problems, or fewer than k samples for
    /// `pass@k`). A registry metric's value does not depend on the k it is named for.
    pub fn value(&self, metric: MetricName) -> f64 {
        let any_k = match metric {
            MetricName::Named { name, .. } => MetricName::Named { name, k: None },
            pass => pass,
        };
        any_k.value(&self.metrics).unwrap_or(0.0)
    }
}

/// Evaluates `set` at training step `step` (the seed depends on the step, so evaluations of the
/// same weights are reproducible).
pub fn evaluate(engine: &Engine, cfg: &TrainConfig, set: &EvalSet, step: u64) -> Result<EvalScore> {
    let k = cfg.eval.eval_k.max(1);
    let prompts = set.problems.iter().map(|p| prompt_ids(engine, cfg, &p.problem)).collect::<Result<Vec<_>>>()?;
    let params = SamplingParams {
        n: k,
        temperature: cfg.eval.eval_temperature,
        top_p: cfg.rollout.top_p,
        max_new_tokens: cfg.rollout.max_new_tokens,
        seed: derive_seed(&[cfg.run.seed, step, 0xE7A1]),
        ..SamplingParams::default()
    };
    let out = engine.generate_ids(&prompts, &params)?;
    let verify = cfg.verify_config()?;
    let mut tallies = Vec::with_capacity(set.problems.len());
    for (problem, completions) in set.problems.iter().zip(&out) {
        let gold = Gold::new(&problem.answer, &verify);
        let mut tally = ProblemTally::default();
        for (i, c) in completions.iter().enumerate() {
            let sample = GenSample {
                sample: Some(i),
                response: c.text.clone(),
                finish_reason: Some(if c.finish_reason == FinishReason::Length { "length" } else { "stop" }.into()),
                tokens: Some(c.token_ids.len() as u64),
            };
            tally.add(score_sample(&gold, &sample, i, &verify), &verify.equiv, &verify.limits);
        }
        tallies.push(tally);
    }
    Ok(EvalScore { metrics: SuiteMetrics::from_tallies(&tallies) })
}

/// The metrics line of an evaluation: `step` plus `eval/<name>/<metric>` for each of
/// [`eval_metrics`] (`eval/<name>/avg@k`, `eval/<name>/maj@k`, `eval/<name>/pass@k`).
pub fn metrics_line(step: u64, k: usize, scores: &[(String, EvalScore)]) -> Value {
    let mut m = Map::new();
    m.insert("step".into(), step.into());
    for (name, s) in scores {
        for metric in eval_metrics(k) {
            m.insert(format!("eval/{name}/{metric}"), s.value(metric).into());
        }
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rlbench::metrics::SampleResult;
    use rlverify::{EquivOptions, Limits, Status};

    /// The evaluation line carries every selectable metric of rlbench's registry and pass@k, with
    /// rlbench's values: iterating the registry, naming no metric.
    #[test]
    fn the_line_reports_every_selectable_registry_metric_and_pass_at_k() {
        let k = 2;
        let tally = |right: [bool; 2]| {
            let mut t = ProblemTally::default();
            for (i, ok) in right.into_iter().enumerate() {
                let status = if ok { Status::Correct } else { Status::Wrong };
                let s = SampleResult {
                    sample: i,
                    correct: ok,
                    status,
                    extracted: Some(if ok { "1" } else { "2" }.into()),
                    parsed: None,
                    truncated: Some(false),
                    chars: 5,
                    tokens: Some(2),
                };
                t.add(s, &EquivOptions::default(), &Limits::default());
            }
            t
        };
        let tallies = [tally([true, true]), tally([false, true]), tally([false, false])];
        let metrics = SuiteMetrics::from_tallies(&tallies);
        let line = metrics_line(7, k, &[("set".into(), EvalScore { metrics: metrics.clone() })]);
        let selectable: Vec<_> = METRICS.iter().filter(|m| m.selectable).collect();
        assert!(!selectable.is_empty());
        for m in &selectable {
            let key = format!("eval/set/{}@{k}", m.name);
            assert_eq!(line[&key].as_f64(), metrics.field_value(m.name, 0), "{key}: {line}");
        }
        assert_eq!(line["eval/set/pass@2"].as_f64(), metrics.get("pass@2"), "{line}");
        assert_eq!(line["step"], 7);
        assert_eq!(line.as_object().map(|o| o.len()), Some(selectable.len() + 2), "{line}");
    }
}
