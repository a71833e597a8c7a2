//! Verified rewards: `rlverify` decides correctness ({0,1} or {-1,+1}), plus the optional
//! CPGD/MM-EUREKA format reward and DAPO's soft overlong punishment.

use rlverify::{Config, Gold};

use crate::advantage::{overlong_penalty, RewardEncoding};

/// How responses are rewarded.
#[derive(Debug, Clone)]
pub struct Rewarder {
    /// The verifier's settings (the same defaults bench uses).
    pub verify: Config,
    /// Encoding of the correctness verdict.
    pub encoding: RewardEncoding,
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
    /// Scores `response` (of `len` tokens) against a parsed gold answer.
    pub fn score(&self, gold: &Gold, response: &str, len: usize) -> Reward {
        let correct = gold.score(response, &self.verify).correct;
        let accuracy = self.encoding.reward(correct);
        let format_ok = self.format_weight != 0.0 && rlverify::format::is_well_formed(response);
        let score = rlverify::format::total_reward(accuracy, format_ok, self.format_weight);
        let total = match self.overlong {
            Some((l_max, l_cache)) => score + overlong_penalty(len, l_max, l_cache),
            None => score,
        };
        Reward { correct, accuracy, format_ok, score, total }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewards_follow_the_verdict_and_the_extra_terms() {
        let cfg = Config::default();
        let gold = Gold::new("7", &cfg);
        let plain =
            Rewarder { verify: cfg.clone(), encoding: RewardEncoding::ZeroOne, format_weight: 0.0, overlong: None };
        let cases = [("7", 1.0), ("07", 1.0), ("8", 0.0), ("", 0.0), ("The answer is \\boxed{7}", 1.0)];
        for (resp, want) in cases {
            assert_eq!(plain.score(&gold, resp, 1).total, want, "{resp:?}");
        }
        let signed = Rewarder { encoding: RewardEncoding::PlusMinusOne, ..plain.clone() };
        assert_eq!(signed.score(&gold, "8", 1).total, -1.0);
        let fmt = Rewarder { format_weight: 0.5, ..plain.clone() };
        let r = fmt.score(&gold, "<think>3+4</think><answer>7</answer>", 10);
        assert_eq!((r.correct, r.format_ok, r.total), (true, true, 1.5));
        let long = Rewarder { overlong: Some((8, 4)), ..plain };
        assert_eq!(long.score(&gold, "7", 6).total, 0.5);
        assert_eq!(long.score(&gold, "7", 4).total, 1.0);
        assert_eq!((long.score(&gold, "7", 6).accuracy, long.score(&gold, "7", 6).score), (1.0, 1.0));
    }
}
