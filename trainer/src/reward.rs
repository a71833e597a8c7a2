//! Verified rewards and their shaping, in one place: `rlverify` decides correctness and encodes
//! it (its one reward enum, [`RewardKind`]: {0,1} or {-1,+1}); this module adds the optional
//! CPGD/MM-EUREKA format reward, DAPO's soft overlong punishment and DAPO's dynamic-sampling
//! filter.

use std::collections::BTreeMap;

use rlverify::{Config, Gold, RewardKind};

/// How responses are rewarded.
#[derive(Debug, Clone)]
pub struct Rewarder {
    /// The verifier's settings (the same defaults bench uses); `verify.reward` encodes the
    /// verdict.
    pub verify: Config,
    /// Weight of the format reward (0 = off).
    pub format_weight: f64,
    /// `(L_max, L_cache)` of the overlong punishment; `None` = off.
    pub overlong: Option<(usize, usize)>,
}

/// The reward of one response.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reward {
    /// Whether `rlverify` judged the answer right.
    pub correct: bool,
    /// The correctness reward (encoded), before format and length terms.
    pub accuracy: f64,
    /// Whether the response is `<think>..</think><answer>..</answer>`.
    pub format_ok: bool,
    /// Accuracy plus format reward, before length shaping (what `reward/mean` reports).
    pub score: f64,
    /// The reward the advantages see: accuracy + format + overlong terms.
    pub total: f64,
}

impl Rewarder {
    /// The verifier's default settings with the verdict encoded as `kind`.
    pub fn new(kind: RewardKind, format_weight: f64, overlong: Option<(usize, usize)>) -> Self {
        Self { verify: Config { reward: kind, ..Config::default() }, format_weight, overlong }
    }

    /// Scores `response` (of `len` tokens) against a parsed gold answer.
    pub fn score(&self, gold: &Gold, response: &str, len: usize) -> Reward {
        let verdict = gold.score(response, &self.verify);
        let accuracy = verdict.reward;
        let format_ok = self.format_weight != 0.0 && rlverify::format::is_well_formed(response);
        let score = rlverify::format::total_reward(accuracy, format_ok, self.format_weight);
        let total = match self.overlong {
            Some((l_max, l_cache)) => score + overlong_penalty(len, l_max, l_cache),
            None => score,
        };
        Reward { correct: verdict.correct, accuracy, format_ok, score, total }
    }
}

/// DAPO soft overlong punishment (arXiv:2503.14476 §3.4): 0 up to `L_max - L_cache`, linear to −1 at `L_max`,
/// −1 beyond.
pub fn overlong_penalty(len: usize, l_max: usize, l_cache: usize) -> f64 {
    let free = l_max.saturating_sub(l_cache);
    if len <= free {
        0.0
    } else if len <= l_max && l_cache > 0 {
        (free as f64 - len as f64) / l_cache as f64
    } else {
        -1.0
    }
}

/// DAPO dynamic sampling (arXiv:2503.14476 §3.2): `true` for responses of groups whose rewards
/// are not all equal.
pub fn dynamic_sampling_keep(rewards: &[f64], groups: &[usize]) -> Vec<bool> {
    let mut first: BTreeMap<usize, (f64, bool)> = BTreeMap::new();
    for (&g, &r) in groups.iter().zip(rewards) {
        first.entry(g).and_modify(|e| e.1 |= e.0 != r).or_insert((r, false));
    }
    groups.iter().map(|g| first.get(g).is_some_and(|e| e.1)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewards_follow_the_verdict_and_the_extra_terms() {
        let cfg = Config::default();
        let gold = Gold::new("7", &cfg);
        let plain = Rewarder::new(RewardKind::Binary, 0.0, None);
        let cases = [("7", 1.0), ("07", 1.0), ("8", 0.0), ("", 0.0), ("The answer is \\boxed{7}", 1.0)];
        for (resp, want) in cases {
            assert_eq!(plain.score(&gold, resp, 1).total, want, "{resp:?}");
        }
        let signed = Rewarder::new(RewardKind::Signed, 0.0, None);
        assert_eq!(signed.score(&gold, "8", 1).total, -1.0);
        assert_eq!(signed.score(&gold, "7", 1).total, 1.0);
        let fmt = Rewarder { format_weight: 0.5, ..plain.clone() };
        let r = fmt.score(&gold, "<think>3+4</think><answer>7</answer>", 10);
        assert_eq!((r.correct, r.format_ok, r.total), (true, true, 1.5));
        let long = Rewarder { overlong: Some((8, 4)), ..plain };
        assert_eq!(long.score(&gold, "7", 6).total, 0.5);
        assert_eq!(long.score(&gold, "7", 4).total, 1.0);
        assert_eq!((long.score(&gold, "7", 6).accuracy, long.score(&gold, "7", 6).score), (1.0, 1.0));
    }

    /// Spec vector T11: DAPO's soft overlong punishment with L_max = 20480, L_cache = 4096.
    #[test]
    fn t11_dapo_overlong_shaping() {
        let cases = [(16000, 0.0), (16384, 0.0), (18432, -0.5), (20480, -1.0), (20481, -1.0)];
        for (len, want) in cases {
            assert_eq!(overlong_penalty(len, 20480, 4096), want, "len {len}");
        }
    }

    #[test]
    fn dynamic_sampling_keeps_groups_with_different_rewards() {
        assert!(dynamic_sampling_keep(&[1.0, 1.0, 0.0, 0.0], &[0, 0, 1, 1]).iter().all(|k| !k));
        let keep = dynamic_sampling_keep(&[1.0, 0.0, 1.0, 1.0], &[0, 0, 1, 1]);
        assert_eq!(keep, vec![true, true, false, false]);
    }
}
