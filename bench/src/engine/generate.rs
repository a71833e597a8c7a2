//! Batched generation with a KV cache over prompts of different lengths.
//!
//! Rows (prompt x sample) are processed in chunks of at most `max_batch`. Each distinct prompt
//! of a chunk is prefilled once (left-padded), its cache rows are repeated for its samples, and
//! rows that finish are dropped from the batch.

use super::batch::{PadSide, PaddedBatch};
use super::error::{Error, Result};
use super::network::{KvCache, Network, StepInput};
use super::rng::{derive_seed, Rng};
use super::sampler::{sample_token, SamplingParams};
use super::tokenizer::Tokenizer;
use candle_core::{DType, Tensor};

/// Why a completion ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishReason {
    /// The model emitted an end-of-sequence token (kept as the last token id).
    Eos,
    /// A stop string appeared (the text is cut before it; the token ids include the token that
    /// completed it).
    Stop,
    /// `max_new_tokens` was reached: the completion is truncated.
    Length,
}

/// One sampled completion.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// Decoded text, special tokens skipped, cut before a stop string.
    pub text: String,
    /// Generated token ids.
    pub token_ids: Vec<u32>,
    /// Per-token log-probs under the sampling distribution (`softmax(logits / temperature)`, or
    /// the model itself when greedy): the `pi_old` a trainer stores.
    pub logprobs: Vec<f32>,
    /// Why generation stopped.
    pub finish_reason: FinishReason,
}

impl Completion {
    /// True when the completion hit `max_new_tokens`.
    pub fn truncated(&self) -> bool {
        self.finish_reason == FinishReason::Length
    }
}

/// FNV-1a over token ids: ties a sample's seed to its prompt's content, not its position.
fn prompt_hash(tokens: &[u32]) -> u64 {
    tokens.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &t| (h ^ u64::from(t)).wrapping_mul(0x0100_0000_01b3))
}

/// The seed of sample `sample_index` of `prompt`.
pub fn sample_seed(seed: u64, prompt: &[u32], sample_index: usize) -> u64 {
    derive_seed(&[seed, prompt_hash(prompt), sample_index as u64])
}

struct Row {
    prompt: usize,
    rng: Rng,
    tokens: Vec<u32>,
    logprobs: Vec<f32>,
    finish: Option<FinishReason>,
}

/// Generates `params.n` completions for each prompt (token ids), `max_batch` rows at a time.
pub fn generate(
    net: &Network,
    tokenizer: &Tokenizer,
    prompts: &[Vec<u32>],
    params: &SamplingParams,
    max_batch: usize,
) -> Result<Vec<Vec<Completion>>> {
    params.validate()?;
    let vocab = net.config().vocab_size;
    for (i, p) in prompts.iter().enumerate() {
        if p.is_empty() {
            return Err(Error::Request(format!("prompt {i} is empty")));
        }
        if let Some(&bad) = p.iter().find(|&&t| t as usize >= vocab) {
            return Err(Error::Request(format!("prompt {i} holds token id {bad}, outside the vocabulary of {vocab}")));
        }
    }
    let mut rows: Vec<Row> = prompts
        .iter()
        .enumerate()
        .flat_map(|(p, tokens)| {
            (0..params.n).map(move |s| Row {
                prompt: p,
                rng: Rng::new(sample_seed(params.seed, tokens, s)),
                tokens: Vec::new(),
                logprobs: Vec::new(),
                finish: None,
            })
        })
        .collect();
    for chunk in rows.chunks_mut(max_batch.max(1)) {
        run_chunk(net, tokenizer, prompts, params, chunk)?;
    }
    let mut out: Vec<Vec<Completion>> = prompts.iter().map(|_| Vec::with_capacity(params.n)).collect();
    for row in rows {
        let finish = row.finish.unwrap_or(FinishReason::Length);
        let mut text = tokenizer.decode(&row.tokens, true)?;
        if finish == FinishReason::Stop {
            if let Some(cut) = params.stop.iter().filter_map(|s| text.find(s.as_str())).min() {
                text.truncate(cut);
            }
        }
        out[row.prompt].push(Completion { text, token_ids: row.tokens, logprobs: row.logprobs, finish_reason: finish });
    }
    Ok(out)
}

fn run_chunk(net: &Network, tokenizer: &Tokenizer, prompts: &[Vec<u32>], params: &SamplingParams, rows: &mut [Row]) -> Result<()> {
    let device = net.device().clone();
    // Prefill each distinct prompt once.
    let mut unique: Vec<usize> = rows.iter().map(|r| r.prompt).collect();
    unique.dedup();
    let seqs: Vec<Vec<u32>> = unique.iter().map(|&p| prompts[p].clone()).collect();
    let batch = PaddedBatch::new(&seqs, PadSide::Left, tokenizer.pad_id(), &device)?;
    let mut cache = KvCache::new(net.config().num_layers);
    let input = StepInput { ids: &batch.ids, positions: &batch.positions, key_valid: &batch.valid };
    let hidden = net.hidden_states(&input, Some(&mut cache))?;
    let width = batch.width();
    let last = hidden.narrow(1, width - 1, 1)?.squeeze(1)?;
    let mut logits = net.logits(&last)?;
    // Expand to one cache row per sample.
    let row_of: Vec<u32> = rows.iter().map(|r| unique.iter().position(|&p| p == r.prompt).unwrap_or(0) as u32).collect();
    let select = Tensor::new(row_of.as_slice(), &device)?;
    cache.select_rows(&select)?;
    logits = logits.index_select(&select, 0)?;
    let mut key_valid: Vec<Vec<bool>> = row_of.iter().map(|&u| batch.valid[u as usize].clone()).collect();
    let mut active: Vec<usize> = (0..rows.len()).collect();
    let max_stop = params.stop.iter().map(String::len).max().unwrap_or(0);
    let eos = tokenizer.eos_ids();
    for _ in 0..params.max_new_tokens {
        let host: Vec<Vec<f32>> = logits.to_dtype(DType::F32)?.to_vec2()?;
        for (a, &r) in active.iter().enumerate() {
            let row = &mut rows[r];
            let (token, logprob) = sample_token(&host[a], params, &mut row.rng)?;
            row.tokens.push(token);
            row.logprobs.push(logprob);
            if !params.ignore_eos && eos.contains(&token) {
                row.finish = Some(FinishReason::Eos);
            } else if max_stop > 0 && ends_with_stop(tokenizer, &row.tokens, &params.stop, max_stop)? {
                row.finish = Some(FinishReason::Stop);
            } else if row.tokens.len() >= params.max_new_tokens {
                row.finish = Some(FinishReason::Length);
            }
        }
        let keep: Vec<usize> = (0..active.len()).filter(|&a| rows[active[a]].finish.is_none()).collect();
        if keep.is_empty() {
            break;
        }
        if keep.len() < active.len() {
            let idx: Vec<u32> = keep.iter().map(|&a| a as u32).collect();
            cache.select_rows(&Tensor::new(idx.as_slice(), &device)?)?;
            key_valid = keep.iter().map(|&a| key_valid[a].clone()).collect();
            active = keep.iter().map(|&a| active[a]).collect();
        }
        let ids: Vec<u32> = active.iter().map(|&r| *rows[r].tokens.last().unwrap_or(&0)).collect();
        let positions: Vec<u32> = active
            .iter()
            .map(|&r| (prompts[rows[r].prompt].len() + rows[r].tokens.len() - 1) as u32)
            .collect();
        for kv in key_valid.iter_mut() {
            kv.push(true);
        }
        let n = active.len();
        let ids = Tensor::from_vec(ids, (n, 1), &device)?;
        let positions = Tensor::from_vec(positions, (n, 1), &device)?;
        let input = StepInput { ids: &ids, positions: &positions, key_valid: &key_valid };
        let hidden = net.hidden_states(&input, Some(&mut cache))?;
        logits = net.logits(&hidden.squeeze(1)?)?;
    }
    Ok(())
}

/// True when the text of the last tokens contains a stop string. Checked after every token, so
/// a match must involve the newest token and lies within the last `max_stop` tokens (each
/// token decodes to at least one byte); two more tokens give room for split UTF-8 sequences.
fn ends_with_stop(tokenizer: &Tokenizer, tokens: &[u32], stop: &[String], max_stop: usize) -> Result<bool> {
    let window = &tokens[tokens.len().saturating_sub(max_stop + 2)..];
    let text = tokenizer.decode(window, true)?;
    Ok(stop.iter().any(|s| text.contains(s.as_str())))
}
