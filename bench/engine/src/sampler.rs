//! Choosing the next token from logits: greedy, temperature, top-k, top-p.

use super::cpu::log_sum_exp_parts;
use super::error::{Error, Result};
use super::rng::Rng;

/// How to sample completions.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingParams {
    /// Completions per prompt.
    pub n: usize,
    /// Softmax temperature; 0 means greedy (argmax).
    pub temperature: f64,
    /// Nucleus sampling: keep the most likely tokens whose mass reaches `top_p` (1 = off).
    pub top_p: f64,
    /// Keep only the `top_k` most likely tokens (0 = off).
    pub top_k: usize,
    /// Most tokens to generate per completion.
    pub max_new_tokens: usize,
    /// Strings that end a completion; the text is cut before the first one.
    pub stop: Vec<String>,
    /// Base seed; each completion's stream is derived from (seed, prompt tokens, sample index).
    pub seed: u64,
    /// Keep generating after end-of-sequence tokens (for benchmarks).
    pub ignore_eos: bool,
}

impl Default for SamplingParams {
    fn default() -> Self {
        SamplingParams {
            n: 1,
            temperature: 1.0,
            top_p: 1.0,
            top_k: 0,
            max_new_tokens: 256,
            stop: Vec::new(),
            seed: 0,
            ignore_eos: false,
        }
    }
}

impl SamplingParams {
    /// Greedy decoding of up to `max_new_tokens` tokens.
    pub fn greedy(max_new_tokens: usize) -> Self {
        SamplingParams { temperature: 0.0, max_new_tokens, ..Self::default() }
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Request(m));
        if self.n == 0 {
            return bad("n must be at least 1".into());
        }
        if !(self.temperature.is_finite() && self.temperature >= 0.0) {
            return bad(format!("temperature must be finite and >= 0, got {}", self.temperature));
        }
        if !(self.top_p > 0.0 && self.top_p <= 1.0) {
            return bad(format!("top_p must be in (0, 1], got {}", self.top_p));
        }
        if self.max_new_tokens == 0 {
            return bad("max_new_tokens must be at least 1".into());
        }
        if self.stop.iter().any(String::is_empty) {
            return bad("stop strings must not be empty".into());
        }
        Ok(())
    }

    /// True for greedy decoding.
    pub fn is_greedy(&self) -> bool {
        self.temperature == 0.0
    }
}

/// Picks the next token from one row of logits. Returns the token and its log-prob under
/// `softmax(logits / temperature)` over the whole vocabulary (temperature 1 when greedy), which
/// is what a trainer recomputes with [`super::Model::token_logprobs`]; top-k/top-p only restrict
/// which tokens can be drawn.
pub fn sample_token(logits: &[f32], params: &SamplingParams, rng: &mut Rng) -> Result<(u32, f32)> {
    if logits.is_empty() {
        return Err(Error::Request("empty logits".into()));
    }
    if logits.iter().any(|x| x.is_nan()) {
        return Err(Error::Request("the model produced NaN logits".into()));
    }
    if params.is_greedy() {
        // Temperature 1: the log-prob needs only the log-sum-exp (vectorised, no allocation).
        let token = argmax(logits);
        let (max, rest) = log_sum_exp_parts(logits);
        return Ok((token as u32, (f64::from(logits[token] - max) - rest) as f32));
    }
    let temperature = params.temperature;
    let z = |i: usize| f64::from(logits[i]) / temperature;
    let max = (0..logits.len()).map(z).fold(f64::NEG_INFINITY, f64::max);
    let weights: Vec<f64> = (0..logits.len()).map(|i| (z(i) - max).exp()).collect();
    let total: f64 = weights.iter().sum();
    let log_z = max + total.ln();
    let candidates = candidates(&weights, total, params);
    let mass: f64 = candidates.iter().map(|&i| weights[i]).sum();
    let mut u = rng.uniform() * mass;
    let mut token = candidates[candidates.len() - 1];
    for &i in &candidates {
        u -= weights[i];
        if u < 0.0 {
            token = i;
            break;
        }
    }
    Ok((token as u32, (z(token) - log_z) as f32))
}

/// Index of the largest logit (the first one on ties).
fn argmax(logits: &[f32]) -> usize {
    let mut best = 0;
    for (i, &x) in logits.iter().enumerate() {
        if x > logits[best] {
            best = i;
        }
    }
    best
}

/// Tokens that may be drawn, most likely first when truncation applies.
fn candidates(weights: &[f64], total: f64, params: &SamplingParams) -> Vec<usize> {
    let v = weights.len();
    let by_weight_desc = |a: &usize, b: &usize| weights[*b].total_cmp(&weights[*a]).then(a.cmp(b));
    let top_k = if params.top_k == 0 || params.top_k >= v { v } else { params.top_k };
    if top_k == v && params.top_p >= 1.0 {
        return (0..v).collect();
    }
    // Sort only a prefix when possible: top-k alone, or the likely head for top-p.
    let head = if top_k < v { top_k } else { v.min(512) };
    let mut idx: Vec<usize> = (0..v).collect();
    if head < v {
        idx.select_nth_unstable_by(head - 1, by_weight_desc);
        idx.truncate(head);
    }
    idx.sort_unstable_by(by_weight_desc);
    if params.top_p >= 1.0 {
        return idx;
    }
    // Nucleus over the (top-k renormalised) distribution.
    let mass_total = if top_k < v { idx.iter().map(|&i| weights[i]).sum() } else { total };
    let mut keep = 0;
    let mut cum = 0.0;
    for &i in &idx {
        keep += 1;
        cum += weights[i];
        if cum >= params.top_p * mass_total {
            break;
        }
    }
    if cum < params.top_p * mass_total && idx.len() < v {
        // The sorted head did not hold enough mass: sort everything.
        let mut all: Vec<usize> = (0..v).collect();
        all.sort_unstable_by(by_weight_desc);
        let mut cum = 0.0;
        let mut keep = 0;
        for &i in &all {
            keep += 1;
            cum += weights[i];
            if cum >= params.top_p * mass_total {
                break;
            }
        }
        all.truncate(keep);
        return all;
    }
    idx.truncate(keep);
    idx
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(temperature: f64, top_k: usize, top_p: f64) -> SamplingParams {
        SamplingParams { temperature, top_k, top_p, ..SamplingParams::default() }
    }

    #[test]
    fn greedy_takes_the_argmax_and_reports_its_model_logprob() {
        let logits = [1.0f32, 3.0, 2.0, 3.0];
        let (tok, lp) = sample_token(&logits, &SamplingParams::greedy(1), &mut Rng::new(0)).unwrap();
        assert_eq!(tok, 1);
        let log_z = logits.iter().map(|&x| f64::from(x).exp()).sum::<f64>().ln();
        assert!((f64::from(lp) - (3.0 - log_z)).abs() < 1e-6);
    }

    #[test]
    fn top_k_and_top_p_restrict_the_draws() {
        // probabilities ~ 0.64, 0.24, 0.09, 0.03
        let logits = [3.0f32, 2.0, 1.0, -0.2];
        let cases: [(usize, f64, &[u32]); 4] = [(1, 1.0, &[0]), (2, 1.0, &[0, 1]), (0, 0.5, &[0]), (0, 0.8, &[0, 1])];
        for (top_k, top_p, allowed) in cases {
            let mut rng = Rng::new(3);
            for _ in 0..300 {
                let (tok, _) = sample_token(&logits, &params(1.0, top_k, top_p), &mut rng).unwrap();
                assert!(allowed.contains(&tok), "top_k {top_k} top_p {top_p}: drew {tok}");
            }
        }
    }

    #[test]
    fn sampling_frequencies_follow_the_tempered_distribution() {
        let logits = [0.0f32, 1.0, 2.0];
        for temperature in [0.5, 1.0, 2.0] {
            let mut rng = Rng::new(11);
            let mut counts = [0usize; 3];
            let n = 20_000;
            for _ in 0..n {
                counts[sample_token(&logits, &params(temperature, 0, 1.0), &mut rng).unwrap().0 as usize] += 1;
            }
            let w: Vec<f64> = logits.iter().map(|&x| (f64::from(x) / temperature).exp()).collect();
            let total: f64 = w.iter().sum();
            for i in 0..3 {
                let expected = w[i] / total;
                let got = counts[i] as f64 / n as f64;
                assert!((got - expected).abs() < 0.015, "T={temperature} token {i}: {got} vs {expected}");
            }
        }
    }

    #[test]
    fn top_p_falls_back_to_a_full_sort_on_flat_distributions() {
        let logits = vec![0.0f32; 2000];
        let mut rng = Rng::new(5);
        let drawn: std::collections::HashSet<u32> =
            (0..2000).map(|_| sample_token(&logits, &params(1.0, 0, 0.9), &mut rng).unwrap().0).collect();
        assert!(drawn.len() > 600, "only {} distinct tokens", drawn.len());
        assert!(drawn.iter().all(|&t| t < 1800));
    }

    #[test]
    fn invalid_parameters_are_rejected() {
        let bad = [
            SamplingParams { n: 0, ..SamplingParams::default() },
            SamplingParams { temperature: -1.0, ..SamplingParams::default() },
            SamplingParams { temperature: f64::NAN, ..SamplingParams::default() },
            SamplingParams { top_p: 0.0, ..SamplingParams::default() },
            SamplingParams { top_p: 1.5, ..SamplingParams::default() },
            SamplingParams { max_new_tokens: 0, ..SamplingParams::default() },
            SamplingParams { stop: vec![String::new()], ..SamplingParams::default() },
        ];
        for p in bad {
            assert!(p.validate().is_err(), "{p:?}");
        }
        assert!(SamplingParams::default().validate().is_ok());
        assert!(sample_token(&[f32::NAN, 1.0], &SamplingParams::default(), &mut Rng::new(0)).is_err());
    }
}
