//! Periodic evaluation: sample `k` responses per problem with the engine, grade them with
//! `rlverify`, and report Avg@k and unbiased Pass@k through rlbench's own tally
//! ([`ProblemTally`], [`SuiteMetrics`]), so an evaluation here and `rlbench score` agree.

use rlbench::metrics::{MetricName, ProblemTally, SuiteMetrics};
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

/// Avg@k and Pass@k of one set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EvalScore {
    /// Mean fraction of correct samples per problem.
    pub avg_at_k: f64,
    /// Mean unbiased Pass@k per problem.
    pub pass_at_k: f64,
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
    let metrics = SuiteMetrics::from_tallies(&tallies);
    let pass_at_k = MetricName::PassAt(k).value(&metrics).unwrap_or(0.0);
    Ok(EvalScore { avg_at_k: metrics.avg, pass_at_k })
}

/// The metrics line of an evaluation: `step` plus `eval/<name>/avg@k` and `eval/<name>/pass@k`.
pub fn metrics_line(step: u64, k: usize, scores: &[(String, EvalScore)]) -> Value {
    let mut m = Map::new();
    m.insert("step".into(), step.into());
    for (name, s) in scores {
        m.insert(format!("eval/{name}/avg@{k}"), s.avg_at_k.into());
        m.insert(format!("eval/{name}/pass@{k}"), s.pass_at_k.into());
    }
    Value::Object(m)
}
