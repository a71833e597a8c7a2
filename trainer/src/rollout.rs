//! Rollouts: draw P prompts in the seeded order, sample G responses each with the engine (the
//! sampler's log-probs are `π_old`), and score them with `rlverify`. With DAPO dynamic sampling,
//! groups whose rewards are all equal are dropped and more prompts are drawn to refill the batch.

use rlengine::{Engine, FinishReason, SamplingParams};
use rlverify::Gold;

use crate::config::TrainConfig;
use crate::data::{Dataset, PromptOrder};
use crate::error::Result;
use crate::policy::prompt_ids;
use crate::reward::{dynamic_sampling_keep, Reward, Rewarder};
use crate::rng::derive_seed;

/// One sampled response with everything training needs.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Prompt-group id (0..number of groups).
    pub group: usize,
    /// Index of the problem in the dataset.
    pub problem: usize,
    /// Prompt token ids.
    pub prompt: Vec<u32>,
    /// Response token ids (the end-of-sequence token included when emitted).
    pub response: Vec<u32>,
    /// Decoded response text.
    pub text: String,
    /// Sampler log-probs of the response tokens (`π_old`).
    pub old_logp: Vec<f32>,
    /// Whether generation hit the token limit.
    pub truncated: bool,
    /// The reward.
    pub reward: Reward,
}

/// The samples of one training step.
#[derive(Debug, Clone, Default)]
pub struct RolloutBatch {
    /// Samples, grouped: group `g` holds rows `g*G .. (g+1)*G`.
    pub samples: Vec<Sample>,
    /// Groups kept.
    pub groups: usize,
    /// Generation rounds used (1 without dynamic sampling).
    pub rounds: usize,
    /// Groups dropped by dynamic sampling.
    pub dropped_groups: usize,
    /// Every sample generated this step, dropped ones included (for reward metrics).
    pub generated: Vec<Reward>,
    /// Response lengths and truncation of every sample generated.
    pub generated_lengths: Vec<(usize, bool)>,
}

/// Samples the rollout batch of training step `step`.
pub fn collect(
    engine: &Engine,
    cfg: &TrainConfig,
    data: &Dataset,
    order: &mut PromptOrder,
    rewarder: &Rewarder,
    step: u64,
) -> Result<RolloutBatch> {
    let g = cfg.rollout.group_size;
    let dynamic = cfg.dynamic_sampling_on();
    let max_rounds = if dynamic { 1 + cfg.rollout.dynamic_sampling_rounds } else { 1 };
    let mut out = RolloutBatch::default();
    for round in 0..max_rounds {
        let need = cfg.rollout.prompts_per_step.saturating_sub(out.groups);
        if need == 0 {
            break;
        }
        out.rounds += 1;
        let picks: Vec<usize> = (0..cfg.rollout.prompts_per_step).map(|_| order.next_index()).collect();
        let prompts =
            picks.iter().map(|&i| prompt_ids(engine, cfg, &data.problems[i].problem)).collect::<Result<Vec<_>>>()?;
        let params = SamplingParams {
            n: g,
            temperature: cfg.rollout.temperature,
            top_p: cfg.rollout.top_p,
            max_new_tokens: cfg.rollout.max_new_tokens,
            seed: derive_seed(&[cfg.run.seed, step, round as u64]),
            ..SamplingParams::default()
        };
        let completions = engine.generate_ids(&prompts, &params)?;
        let mut round_samples = Vec::with_capacity(picks.len() * g);
        for (k, (&pi, group)) in picks.iter().zip(&completions).enumerate() {
            let gold = Gold::new(&data.problems[pi].answer, &rewarder.verify);
            for c in group {
                let reward = rewarder.score(&gold, &c.text, c.token_ids.len());
                out.generated.push(reward);
                out.generated_lengths.push((c.token_ids.len(), c.finish_reason == FinishReason::Length));
                round_samples.push(Sample {
                    group: k,
                    problem: pi,
                    prompt: prompts[k].clone(),
                    response: c.token_ids.clone(),
                    text: c.text.clone(),
                    old_logp: c.logprobs.clone(),
                    truncated: c.finish_reason == FinishReason::Length,
                    reward,
                });
            }
        }
        let keep = if dynamic {
            let rewards: Vec<f64> = round_samples.iter().map(|s| s.reward.total).collect();
            let groups: Vec<usize> = round_samples.iter().map(|s| s.group).collect();
            dynamic_sampling_keep(&rewards, &groups)
        } else {
            vec![true; round_samples.len()]
        };
        let mut kept_groups: Vec<usize> = Vec::new();
        for (s, k) in round_samples.into_iter().zip(keep) {
            if !k {
                continue;
            }
            if !kept_groups.contains(&s.group) {
                if kept_groups.len() >= need {
                    continue;
                }
                kept_groups.push(s.group);
            }
            let local = kept_groups.iter().position(|&x| x == s.group).unwrap_or(0);
            out.samples.push(Sample { group: out.groups + local, ..s });
        }
        out.dropped_groups += picks.len() - kept_groups.len().min(picks.len());
        out.groups += kept_groups.len();
    }
    Ok(out)
}
