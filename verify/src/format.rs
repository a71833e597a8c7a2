//! The format reward of CPGD / MM-EUREKA: a bonus for responses shaped as
//! `<think>...</think><answer>...</answer>`.
//!
//! Convention (CPGD paper, arXiv 2505.12504, and its official code, MM-EUREKA `qwen` branch,
//! `examples/scripts/reward_func_qwen.py`): the total reward is the accuracy reward plus a format
//! reward of 0.5 when the response is well formed, reported separately. Here the weight is a
//! parameter, `total = accuracy + weight * format_ok`, with [`CPGD_FORMAT_WEIGHT`] = 0.5.
//!
//! A response is well formed when, after trimming surrounding whitespace, it is exactly
//! `<think>T</think>` followed by optional whitespace and `<answer>A</answer>`, each of the four tags
//! appears once, and neither `T` nor `A` is blank. This is stricter than the MM-EUREKA regex, which
//! also accepts text before `<think>` and after `</answer>`.

/// The format weight used by CPGD and MM-EUREKA.
pub const CPGD_FORMAT_WEIGHT: f64 = 0.5;

const THINK_OPEN: &str = "<think>";
const THINK_CLOSE: &str = "</think>";
const ANSWER_OPEN: &str = "<answer>";
const ANSWER_CLOSE: &str = "</answer>";

/// True when `response` is exactly `<think>...</think>` then `<answer>...</answer>` (see the module doc).
pub fn is_well_formed(response: &str) -> bool {
    // The response ends at its first end-of-turn token, as for the answer (`...</answer><|im_end|>`).
    let response = crate::extract::model_turn(response);
    let tags = [THINK_OPEN, THINK_CLOSE, ANSWER_OPEN, ANSWER_CLOSE];
    if tags.iter().any(|t| response.matches(t).count() != 1) {
        return false;
    }
    let Some(rest) = response.trim().strip_prefix(THINK_OPEN) else {
        return false;
    };
    let Some((think, rest)) = rest.split_once(THINK_CLOSE) else {
        return false;
    };
    let Some(rest) = rest.trim_start().strip_prefix(ANSWER_OPEN) else {
        return false;
    };
    let Some(answer) = rest.strip_suffix(ANSWER_CLOSE) else {
        return false;
    };
    !think.trim().is_empty() && !answer.trim().is_empty()
}

/// The total reward: `accuracy + weight * [format ok]`.
pub fn total_reward(accuracy_reward: f64, format_ok: bool, weight: f64) -> f64 {
    if format_ok {
        accuracy_reward + weight
    } else {
        accuracy_reward
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_formed() {
        for ok in [
            "<think>x</think><answer>1</answer>",
            "  <think>\nlet me see\n</think>\n\n<answer> 42 </answer>\n",
            "<think>a < b</think> <answer>\\boxed{1}</answer>",
            "<think>x</think><answer>1</answer><|im_end|>",
            "<think>x</think><answer>1</answer></s><|im_start|>user <answer>2</answer>",
        ] {
            assert!(is_well_formed(ok), "{ok:?}");
        }
    }

    #[test]
    fn malformed() {
        for bad in [
            "",
            "42",
            "<answer>1</answer>",
            "<think>x</think>",
            "<think>x</think>1",
            "<answer>1</answer><think>x</think>",
            "intro <think>x</think><answer>1</answer>",
            "<think>x</think><answer>1</answer> trailing",
            "<think>x</think> between <answer>1</answer>",
            "<think>x</think><answer>1</answer><answer>2</answer>",
            "<think>x<think>y</think><answer>1</answer>",
            "<think>x</think></think><answer>1</answer>",
            "<think> </think><answer>1</answer>",
            "<think>x</think><answer> </answer>",
            "<think>x</think><answer>1",
        ] {
            assert!(!is_well_formed(bad), "{bad:?}");
        }
    }

    #[test]
    fn totals() {
        assert_eq!(total_reward(1.0, true, CPGD_FORMAT_WEIGHT), 1.5);
        assert_eq!(total_reward(0.0, true, CPGD_FORMAT_WEIGHT), 0.5);
        assert_eq!(total_reward(-1.0, false, 0.5), -1.0);
        assert_eq!(total_reward(1.0, false, 0.5), 1.0);
    }
}
