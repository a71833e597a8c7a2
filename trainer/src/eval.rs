//! Periodic evaluation: sample `k` responses per problem with the engine, grade them with
//! `rlverify`, and report Avg@k and unbiased Pass@k (bench's estimator).

use rlbench::suite::Problem;
use rlengine::{Engine, SamplingParams};
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
    let k = cfg.eval_k.max(1);
    let prompts = set.problems.iter().map(|p| prompt_ids(engine, cfg, &p.problem)).collect::<Result<Vec<_>>>()?;
    let params = SamplingParams {
        n: k,
        temperature: cfg.eval_temperature,
        top_p: cfg.top_p,
        max_new_tokens: cfg.max_new_tokens,
        seed: derive_seed(&[cfg.seed, step, 0xE7A1]),
        ..SamplingParams::default()
    };
    let out = engine.generate_ids(&prompts, &params)?;
    let verify = rlverify::Config::default();
    let (mut avg, mut pass) = (0.0, 0.0);
    for (problem, completions) in set.problems.iter().zip(&out) {
        let gold = Gold::new(&problem.answer, &verify);
        let c = completions.iter().filter(|c| gold.score(&c.text, &verify).correct).count();
        let n = completions.len().max(1);
        avg += c as f64 / n as f64;
        pass += rlbench::metrics::pass_at_k(n, c, k.min(n)).unwrap_or(0.0);
    }
    let m = set.problems.len().max(1) as f64;
    Ok(EvalScore { avg_at_k: avg / m, pass_at_k: pass / m })
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
