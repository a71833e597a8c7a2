//! Batched generation with a KV cache over prompts of different lengths.
//!
//! Rows (prompt x sample) are processed in chunks of at most `max_batch`. Each distinct prompt
//! of a chunk is prefilled once (left-padded), its cache rows are repeated for its samples, and
//! rows that finish are dropped from the batch.

use super::batch::{PadSide, PaddedBatch};
use super::cpu::{QuantModel, QuantState};
use super::error::{Error, Result};
use super::network::{KvCache, Network, StepInput};
use super::rng::{derive_seed, Rng};
use super::sampler::{sample_token, SamplingParams};
use super::tokenizer::Tokenizer;
use candle_core::{DType, Tensor};
use rayon::prelude::*;

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
    let mut h = rlbase::Fnv1a::new();
    for &t in tokens {
        h.write_word(u64::from(t));
    }
    h.finish()
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

/// What generation needs from a model: prefill prompts into fresh rows (one KV cache row each),
/// keep or repeat rows, and feed one token per row. Logits come back on the host, `[rows][vocab]`
/// flattened.
pub(crate) trait Decoder {
    /// Vocabulary size (the width of a logits row).
    fn vocab_size(&self) -> usize;
    /// Replaces all rows with one per prompt, feeds the prompts, and returns each row's
    /// next-token logits. `capacity` is how many positions a row will hold at most.
    fn prefill(&mut self, prompts: &[&[u32]], capacity: usize) -> Result<Vec<f32>>;
    /// Keeps rows: row `i` becomes old row `rows[i]` (rows may repeat).
    fn keep_rows(&mut self, rows: &[usize]) -> Result<()>;
    /// Feeds `ids[r]` to row `r` and returns the next-token logits of every row.
    fn step(&mut self, ids: &[u32]) -> Result<Vec<f32>>;
}

/// The dense network (candle ops, any device) with a padded KV cache.
pub(crate) struct DenseDecoder<'a> {
    net: &'a Network,
    pad_id: u32,
    cache: KvCache,
    key_valid: Vec<Vec<bool>>,
    /// Real tokens per row so far (the next token's rotary position).
    lens: Vec<u32>,
}

impl<'a> DenseDecoder<'a> {
    /// A decoder over `net`; prompts are left-padded with `pad_id`.
    pub(crate) fn new(net: &'a Network, pad_id: u32) -> Self {
        DenseDecoder { net, pad_id, cache: KvCache::new(0), key_valid: Vec::new(), lens: Vec::new() }
    }

    fn host_logits(&self, hidden: &Tensor) -> Result<Vec<f32>> {
        Ok(self.net.logits(hidden)?.to_dtype(DType::F32)?.flatten_all()?.to_vec1()?)
    }
}

impl Decoder for DenseDecoder<'_> {
    fn vocab_size(&self) -> usize {
        self.net.config().vocab_size
    }

    fn prefill(&mut self, prompts: &[&[u32]], capacity: usize) -> Result<Vec<f32>> {
        let device = self.net.device().clone();
        let seqs: Vec<Vec<u32>> = prompts.iter().map(|p| p.to_vec()).collect();
        let batch = PaddedBatch::new(&seqs, PadSide::Left, self.pad_id, &device)?;
        self.cache = KvCache::with_capacity(self.net.config().num_layers, capacity.max(batch.width()));
        let input = StepInput { ids: &batch.ids, positions: &batch.positions, key_valid: &batch.valid };
        let hidden = self.net.hidden_states(&input, Some(&mut self.cache))?;
        let last = hidden.narrow(1, batch.width() - 1, 1)?.squeeze(1)?;
        self.key_valid = batch.valid;
        self.lens = prompts.iter().map(|p| p.len() as u32).collect();
        self.host_logits(&last)
    }

    fn keep_rows(&mut self, rows: &[usize]) -> Result<()> {
        if let Some(&bad) = rows.iter().find(|&&r| r >= self.lens.len()) {
            return Err(Error::Request(format!("no decoding row {bad}")));
        }
        let idx: Vec<u32> = rows.iter().map(|&r| r as u32).collect();
        self.cache.select_rows(&Tensor::new(idx.as_slice(), self.net.device())?)?;
        self.key_valid = rows.iter().map(|&r| self.key_valid[r].clone()).collect();
        self.lens = rows.iter().map(|&r| self.lens[r]).collect();
        Ok(())
    }

    fn step(&mut self, ids: &[u32]) -> Result<Vec<f32>> {
        let device = self.net.device().clone();
        let n = ids.len();
        for kv in self.key_valid.iter_mut() {
            kv.push(true);
        }
        let ids = Tensor::from_vec(ids.to_vec(), (n, 1), &device)?;
        let positions = Tensor::from_vec(self.lens.clone(), (n, 1), &device)?;
        let input = StepInput { ids: &ids, positions: &positions, key_valid: &self.key_valid };
        let hidden = self.net.hidden_states(&input, Some(&mut self.cache))?;
        self.lens.iter_mut().for_each(|l| *l += 1);
        self.host_logits(&hidden.squeeze(1)?)
    }
}

/// The quantized CPU model with per-row caches.
pub(crate) struct QuantDecoder<'a> {
    model: &'a QuantModel,
    state: QuantState,
}

impl<'a> QuantDecoder<'a> {
    /// A decoder over `model`.
    pub(crate) fn new(model: &'a QuantModel) -> Self {
        QuantDecoder { model, state: model.new_state(0) }
    }
}

impl Decoder for QuantDecoder<'_> {
    fn vocab_size(&self) -> usize {
        self.model.config().vocab_size
    }

    fn prefill(&mut self, prompts: &[&[u32]], capacity: usize) -> Result<Vec<f32>> {
        self.state = self.model.new_state(capacity);
        self.model.prefill(&mut self.state, prompts)
    }

    fn keep_rows(&mut self, rows: &[usize]) -> Result<()> {
        self.state.keep_rows(rows)
    }

    fn step(&mut self, ids: &[u32]) -> Result<Vec<f32>> {
        self.model.step(&mut self.state, ids)
    }
}

/// Generates `params.n` completions for each prompt (token ids), `max_batch` rows at a time.
pub(crate) fn generate(
    decoder: &mut dyn Decoder,
    tokenizer: &Tokenizer,
    prompts: &[Vec<u32>],
    params: &SamplingParams,
    max_batch: usize,
) -> Result<Vec<Vec<Completion>>> {
    params.validate()?;
    let vocab = decoder.vocab_size();
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
        run_chunk(decoder, tokenizer, prompts, params, chunk)?;
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

fn run_chunk(
    decoder: &mut dyn Decoder,
    tokenizer: &Tokenizer,
    prompts: &[Vec<u32>],
    params: &SamplingParams,
    rows: &mut [Row],
) -> Result<()> {
    let vocab = decoder.vocab_size();
    // Prefill each distinct prompt once, then give each sample its own copy of the cache row.
    let mut unique: Vec<usize> = rows.iter().map(|r| r.prompt).collect();
    unique.dedup();
    let seqs: Vec<&[u32]> = unique.iter().map(|&p| prompts[p].as_slice()).collect();
    let width = seqs.iter().map(|s| s.len()).max().unwrap_or(0);
    let first = decoder.prefill(&seqs, width + params.max_new_tokens)?;
    let row_of: Vec<usize> = rows.iter().map(|r| unique.iter().position(|&p| p == r.prompt).unwrap_or(0)).collect();
    decoder.keep_rows(&row_of)?;
    let mut logits: Vec<f32> = row_of.iter().flat_map(|&u| first[u * vocab..(u + 1) * vocab].iter().copied()).collect();
    let mut active: Vec<usize> = (0..rows.len()).collect();
    let max_stop = params.stop.iter().map(String::len).max().unwrap_or(0);
    let eos = tokenizer.eos_ids();
    for _ in 0..params.max_new_tokens {
        // Sample every active row (in parallel: each row has its own random stream).
        let mut picked: Vec<(usize, &mut Row)> = Vec::with_capacity(active.len());
        let mut next_active = active.iter().copied().enumerate().peekable();
        for (r, row) in rows.iter_mut().enumerate() {
            if let Some(&(a, _)) = next_active.peek().filter(|&&(_, ar)| ar == r) {
                picked.push((a, row));
                next_active.next();
            }
        }
        picked.par_iter_mut().try_for_each(|(a, row)| -> Result<()> {
            let (token, logprob) = sample_token(&logits[*a * vocab..(*a + 1) * vocab], params, &mut row.rng)?;
            row.tokens.push(token);
            row.logprobs.push(logprob);
            if !params.ignore_eos && eos.contains(&token) {
                row.finish = Some(FinishReason::Eos);
            } else if max_stop > 0 && ends_with_stop(tokenizer, &row.tokens, &params.stop, max_stop)? {
                row.finish = Some(FinishReason::Stop);
            } else if row.tokens.len() >= params.max_new_tokens {
                row.finish = Some(FinishReason::Length);
            }
            Ok(())
        })?;
        let keep: Vec<usize> = (0..active.len()).filter(|&a| rows[active[a]].finish.is_none()).collect();
        if keep.is_empty() {
            break;
        }
        if keep.len() < active.len() {
            decoder.keep_rows(&keep)?;
            active = keep.iter().map(|&a| active[a]).collect();
        }
        let ids: Vec<u32> = active.iter().map(|&r| *rows[r].tokens.last().unwrap_or(&0)).collect();
        logits = decoder.step(&ids)?;
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

#[cfg(test)]
mod tests {
    /// The prompt hash keeps the value of the engine's own FNV-1a copy (one round per token id).
    #[test]
    fn prompt_hash_keeps_its_value() {
        assert_eq!(super::prompt_hash(&[1, 2, 3]), 0xd0aa_6218_672c_f5ab);
    }
}
