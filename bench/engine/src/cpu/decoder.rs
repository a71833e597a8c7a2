//! The decoder forward pass on quantized weights: per-row KV caches without padding, fused
//! RMS norm / rotary embedding / softmax, batched quantized matrix products.

use super::super::config::ModelConfig;
use super::super::error::{Error, Result};
use super::blocks::{QActs, QMatrix};
use super::kernels::matmul;
use super::pool::Pool;
use super::vector::{add_assign, attend_span, merge_spans, rms_norm, silu_mul};
use std::cell::RefCell;

thread_local! {
    /// Attention scores of one span of positions, reused across calls on this thread.
    static SCORES: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// Weights of one decoder layer.
#[derive(Debug, Clone)]
pub struct QuantLayer {
    pub(crate) attn_norm: Vec<f32>,
    pub(crate) wq: QMatrix,
    pub(crate) wk: QMatrix,
    pub(crate) wv: QMatrix,
    pub(crate) bq: Option<Vec<f32>>,
    pub(crate) bk: Option<Vec<f32>>,
    pub(crate) bv: Option<Vec<f32>>,
    pub(crate) wo: QMatrix,
    pub(crate) mlp_norm: Vec<f32>,
    pub(crate) w_gate: QMatrix,
    pub(crate) w_up: QMatrix,
    pub(crate) w_down: QMatrix,
}

/// A decoder (Llama / Qwen2) on quantized weights, for CPU inference. Query and key
/// projections use the Hugging Face (rotate-half) row order.
#[derive(Debug, Clone)]
pub struct QuantModel {
    pub(crate) config: ModelConfig,
    pub(crate) embed: QMatrix,
    pub(crate) layers: Vec<QuantLayer>,
    pub(crate) norm: Vec<f32>,
    /// The output projection; `None` when tied to the embedding.
    pub(crate) lm_head: Option<QMatrix>,
}

/// One sequence's cached keys and values: per layer, `[position][kv_heads * head_dim]`.
#[derive(Debug, Clone, Default)]
struct RowCache {
    len: usize,
    k: Vec<Vec<f32>>,
    v: Vec<Vec<f32>>,
}

/// Decoding state: one KV cache per row (sequence), plus reusable buffers.
#[derive(Debug, Default)]
pub struct QuantState {
    rows: Vec<RowCache>,
    capacity: usize,
    scratch: Scratch,
}

#[derive(Debug, Default)]
struct Scratch {
    x: Vec<f32>,
    h: Vec<f32>,
    qkv: Vec<f32>,
    attn: Vec<f32>,
    proj: Vec<f32>,
    gate_up: Vec<f32>,
    act: Vec<f32>,
    acts: QActs,
    partial: Vec<f32>,
    cos: Vec<f32>,
    sin: Vec<f32>,
}

/// Positions per attention span. Fixed, so a token's result depends on its own positions only,
/// never on its batch mates or the thread count.
const SPAN: usize = 64;

/// Tokens fed to one forward call at most (longer prompts are fed in pieces).
const MAX_TOKENS_PER_CALL: usize = 512;

impl QuantState {
    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows.len()
    }

    /// Cached positions of row `r`.
    pub fn row_len(&self, r: usize) -> usize {
        self.rows.get(r).map_or(0, |c| c.len)
    }

    /// Keeps (reorders, repeats) rows: row `i` becomes old row `keep[i]`.
    pub fn keep_rows(&mut self, keep: &[usize]) -> Result<()> {
        if let Some(&bad) = keep.iter().find(|&&r| r >= self.rows.len()) {
            return Err(Error::Request(format!("no decoding row {bad} (have {})", self.rows.len())));
        }
        let mut uses = vec![0usize; self.rows.len()];
        for &r in keep {
            uses[r] += 1;
        }
        let mut old: Vec<Option<RowCache>> = std::mem::take(&mut self.rows).into_iter().map(Some).collect();
        for &r in keep {
            uses[r] -= 1;
            let row = if uses[r] == 0 { old[r].take() } else { old[r].clone() };
            self.rows.push(row.unwrap_or_default());
        }
        Ok(())
    }
}

/// Rotate-half rotary embedding of one head in place.
fn rope(head: &mut [f32], cos: &[f32], sin: &[f32]) {
    let half = head.len() / 2;
    let (a, b) = head.split_at_mut(half);
    for i in 0..half {
        let (x1, x2) = (a[i], b[i]);
        a[i] = x1 * cos[i] - x2 * sin[i];
        b[i] = x2 * cos[i] + x1 * sin[i];
    }
}

impl QuantModel {
    /// The model's hyper-parameters.
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// Bytes of weights held.
    pub fn memory_bytes(&self) -> usize {
        let l: usize = self
            .layers
            .iter()
            .map(|l| {
                [&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down]
                    .iter()
                    .map(|m| m.memory_bytes())
                    .sum::<usize>()
            })
            .sum();
        l + self.embed.memory_bytes() + self.lm_head.as_ref().map_or(0, QMatrix::memory_bytes)
    }

    /// Checks that every matrix has the shape the config implies.
    pub(crate) fn validate(&self) -> Result<()> {
        let c = &self.config;
        let (d, q, kv, i) = (c.hidden_size, c.num_heads * c.head_dim, c.num_kv_heads * c.head_dim, c.intermediate_size);
        let check = |name: &str, m: &QMatrix, rows: usize, cols: usize| -> Result<()> {
            if m.rows() != rows || m.cols() != cols {
                return Err(Error::Format(format!(
                    "{name} is [{}, {}], expected [{rows}, {cols}]",
                    m.rows(),
                    m.cols()
                )));
            }
            Ok(())
        };
        check("embedding", &self.embed, c.vocab_size, d)?;
        if let Some(head) = &self.lm_head {
            check("lm_head", head, c.vocab_size, d)?;
        }
        let vec_len = |name: &str, v: &[f32], n: usize| -> Result<()> {
            if v.len() != n {
                return Err(Error::Format(format!("{name} has {} values, expected {n}", v.len())));
            }
            Ok(())
        };
        vec_len("final norm", &self.norm, d)?;
        if self.layers.len() != c.num_layers {
            return Err(Error::Format(format!("{} layers, expected {}", self.layers.len(), c.num_layers)));
        }
        for l in &self.layers {
            check("q_proj", &l.wq, q, d)?;
            check("k_proj", &l.wk, kv, d)?;
            check("v_proj", &l.wv, kv, d)?;
            check("o_proj", &l.wo, d, q)?;
            check("gate_proj", &l.w_gate, i, d)?;
            check("up_proj", &l.w_up, i, d)?;
            check("down_proj", &l.w_down, d, i)?;
            vec_len("input_layernorm", &l.attn_norm, d)?;
            vec_len("post_attention_layernorm", &l.mlp_norm, d)?;
            for (b, n) in [(&l.bq, q), (&l.bk, kv), (&l.bv, kv)] {
                if let Some(b) = b {
                    vec_len("attention bias", b, n)?;
                }
            }
        }
        Ok(())
    }

    /// A fresh state whose rows will hold about `capacity` positions each.
    pub fn new_state(&self, capacity: usize) -> QuantState {
        QuantState { rows: Vec::new(), capacity, scratch: Scratch::default() }
    }

    /// Starts one row per prompt in `state` (dropping its old rows), feeds the prompts, and
    /// returns each row's next-token logits (`[prompts][vocab]`, flattened).
    pub fn prefill(&self, state: &mut QuantState, prompts: &[&[u32]]) -> Result<Vec<f32>> {
        let layers = self.config.num_layers;
        state.rows = prompts
            .iter()
            .map(|p| {
                let kv = self.config.num_kv_heads * self.config.head_dim * state.capacity.max(p.len());
                RowCache {
                    len: 0,
                    k: (0..layers).map(|_| Vec::with_capacity(kv)).collect(),
                    v: (0..layers).map(|_| Vec::with_capacity(kv)).collect(),
                }
            })
            .collect();
        let vocab = self.config.vocab_size;
        let mut logits = vec![0.0; prompts.len() * vocab];
        // Feed in pieces of at most MAX_TOKENS_PER_CALL tokens; a row's logits come from the
        // piece that holds its last token.
        let mut pending: Vec<(usize, usize)> = prompts.iter().enumerate().map(|(r, _)| (r, 0)).collect();
        while !pending.is_empty() {
            let mut feeds: Vec<(usize, &[u32])> = Vec::new();
            let mut budget = MAX_TOKENS_PER_CALL;
            for (r, done) in pending.iter_mut() {
                if budget == 0 {
                    break;
                }
                let take = (prompts[*r].len() - *done).min(budget);
                feeds.push((*r, &prompts[*r][*done..*done + take]));
                *done += take;
                budget -= take;
            }
            let finished: Vec<bool> =
                feeds.iter().map(|&(r, s)| state.row_len(r) + s.len() == prompts[r].len()).collect();
            let out = self.forward(state, &feeds)?;
            for (i, (r, _)) in feeds.iter().enumerate() {
                if finished[i] {
                    logits[r * vocab..(r + 1) * vocab].copy_from_slice(&out[i * vocab..(i + 1) * vocab]);
                }
            }
            pending.retain(|&(r, done)| done < prompts[r].len());
        }
        Ok(logits)
    }

    /// Feeds one token to each row (`ids[r]` to row `r`) and returns the next-token logits,
    /// `[rows][vocab]` flattened.
    pub fn step(&self, state: &mut QuantState, ids: &[u32]) -> Result<Vec<f32>> {
        if ids.len() != state.rows.len() {
            return Err(Error::Request(format!("{} tokens for {} decoding rows", ids.len(), state.rows.len())));
        }
        let feeds: Vec<(usize, &[u32])> = ids.iter().enumerate().map(|(r, id)| (r, std::slice::from_ref(id))).collect();
        self.forward(state, &feeds)
    }

    /// Appends each feed's tokens to its row and returns the logits after each feed's last
    /// token, `[feeds][vocab]` flattened (zeros for an empty feed).
    fn forward(&self, state: &mut QuantState, feeds: &[(usize, &[u32])]) -> Result<Vec<f32>> {
        let c = &self.config;
        let (d, hd, nh, nkv) = (c.hidden_size, c.head_dim, c.num_heads, c.num_kv_heads);
        let (qd, kvd, inter) = (nh * hd, nkv * hd, c.intermediate_size);
        let eps = c.rms_norm_eps as f32;
        // Flatten the tokens: (row, position, id).
        let mut tokens: Vec<(usize, usize, u32)> = Vec::new();
        for &(r, ids) in feeds {
            let base = state.rows.get(r).ok_or_else(|| Error::Request(format!("no decoding row {r}")))?.len;
            for (i, &id) in ids.iter().enumerate() {
                if id as usize >= c.vocab_size {
                    return Err(Error::Request(format!("token id {id} is outside the vocabulary of {}", c.vocab_size)));
                }
                tokens.push((r, base + i, id));
            }
        }
        let m = tokens.len();
        let vocab = c.vocab_size;
        let mut logits = vec![0.0; feeds.len() * vocab];
        if m == 0 {
            return Ok(logits);
        }
        let s = &mut state.scratch;
        let rows = &mut state.rows;
        s.x.resize(m * d, 0.0);
        s.h.resize(m * d, 0.0);
        s.qkv.resize(m * (qd + 2 * kvd), 0.0);
        s.attn.resize(m * qd, 0.0);
        s.proj.resize(m * d, 0.0);
        s.gate_up.resize(m * 2 * inter, 0.0);
        s.act.resize(m * inter, 0.0);
        for (t, &(_, _, id)) in tokens.iter().enumerate() {
            self.embed.dequantize_row(id as usize, &mut s.x[t * d..(t + 1) * d]);
        }
        // Rotary tables per token.
        let half = hd / 2;
        let inv_freq = c.inv_freq();
        s.cos.resize(m * half, 0.0);
        s.sin.resize(m * half, 0.0);
        for (t, &(_, pos, _)) in tokens.iter().enumerate() {
            for (i, inv_freq) in inv_freq.iter().enumerate() {
                let angle = pos as f64 * inv_freq;
                s.cos[t * half + i] = angle.cos() as f32;
                s.sin[t * half + i] = angle.sin() as f32;
            }
        }
        let width = qd + 2 * kvd;
        let scale = 1.0 / (hd as f32).sqrt();
        for (li, layer) in self.layers.iter().enumerate() {
            rms_norm(&s.x, &layer.attn_norm, eps, &mut s.h);
            s.acts.quantize(&s.h, d);
            matmul(&[&layer.wq, &layer.wk, &layer.wv], &s.acts, &mut s.qkv);
            for (t, row) in s.qkv.chunks_exact_mut(width).enumerate() {
                let (q, kv) = row.split_at_mut(qd);
                let (k, v) = kv.split_at_mut(kvd);
                for (part, bias) in [(&mut *q, &layer.bq), (&mut *k, &layer.bk), (&mut *v, &layer.bv)] {
                    if let Some(b) = bias {
                        part.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                    }
                }
                let (cos, sin) = (&s.cos[t * half..(t + 1) * half], &s.sin[t * half..(t + 1) * half]);
                q.chunks_exact_mut(hd).for_each(|h| rope(h, cos, sin));
                k.chunks_exact_mut(hd).for_each(|h| rope(h, cos, sin));
                let cache = &mut rows[tokens[t].0];
                cache.k[li].extend_from_slice(k);
                cache.v[li].extend_from_slice(v);
            }
            // Attention: one task per (token, key/value head, span of SPAN positions) computes
            // that head's `rep` query heads over the span (keys and values are read once for all
            // of them); spans split long contexts across threads and are merged afterwards.
            let rep = nh / nkv;
            let part = hd + 2;
            let (qkv, rows_ref, tokens_ref) = (&s.qkv, &*rows, &tokens);
            let spans = tokens.iter().map(|t| (t.1 + 1).div_ceil(SPAN)).max().unwrap_or(1);
            s.partial.resize(m * nh * spans * part, 0.0);
            Pool::global().for_each_chunk_mut(&mut s.partial, rep * part, |i, out| {
                let (t, g, span) = (i / (nkv * spans), i / spans % nkv, i % spans);
                let (r, pos, _) = tokens_ref[t];
                let (start, end) = (span * SPAN, ((span + 1) * SPAN).min(pos + 1));
                if start >= end {
                    // Past this token's positions (a longer token sets the span count): empty.
                    for p in out.chunks_exact_mut(part) {
                        p[0] = f32::NEG_INFINITY;
                        p[1..].fill(0.0);
                    }
                    return;
                }
                let (keys, values) = (&rows_ref[r].k[li], &rows_ref[r].v[li]);
                let (keys, values) = (&keys[start * kvd + g * hd..], &values[start * kvd + g * hd..]);
                SCORES.with_borrow_mut(|scores| {
                    scores.resize(end - start, 0.0);
                    for (j, out) in out.chunks_exact_mut(part).enumerate() {
                        let h = g * rep + j;
                        let q = &qkv[t * width + h * hd..t * width + (h + 1) * hd];
                        let (max, total) = attend_span(q, keys, values, kvd, scale, scores, &mut out[2..]);
                        out[0] = max;
                        out[1] = total;
                    }
                });
            });
            // Merge: partial results are laid out [token][kv head][span][query head in group].
            for (t, attn) in s.attn.chunks_exact_mut(qd).enumerate() {
                for (h, out) in attn.chunks_exact_mut(hd).enumerate() {
                    let (g, j) = (h / rep, h % rep);
                    let base = (t * nkv + g) * spans * rep * part;
                    let of_span =
                        |span: usize| &s.partial[base + (span * rep + j) * part..base + (span * rep + j + 1) * part];
                    merge_spans((0..spans).map(of_span).filter(|p| p[1] > 0.0), out);
                }
            }
            s.acts.quantize(&s.attn, qd);
            matmul(&[&layer.wo], &s.acts, &mut s.proj);
            add_assign(&mut s.x, &s.proj);
            rms_norm(&s.x, &layer.mlp_norm, eps, &mut s.h);
            s.acts.quantize(&s.h, d);
            matmul(&[&layer.w_gate, &layer.w_up], &s.acts, &mut s.gate_up);
            let gate_up = &s.gate_up;
            let gate = |t: usize, a: &mut [f32]| {
                let (g, u) = gate_up[t * 2 * inter..(t + 1) * 2 * inter].split_at(inter);
                silu_mul(g, u, a);
            };
            if m >= 8 {
                Pool::global().for_each_chunk_mut(&mut s.act, inter, gate);
            } else {
                s.act.chunks_exact_mut(inter).enumerate().for_each(|(t, a)| gate(t, a));
            }
            s.acts.quantize(&s.act, inter);
            matmul(&[&layer.w_down], &s.acts, &mut s.proj);
            add_assign(&mut s.x, &s.proj);
        }
        for &(r, ids) in feeds {
            rows[r].len += ids.len();
        }
        // Logits after each feed's last token.
        let mut last = Vec::with_capacity(feeds.len());
        let mut t = 0;
        for &(_, ids) in feeds {
            t += ids.len();
            last.push(if ids.is_empty() { None } else { Some(t - 1) });
        }
        let picked: Vec<usize> = last.iter().flatten().copied().collect();
        let mut hidden = vec![0.0; picked.len() * d];
        for (i, &t) in picked.iter().enumerate() {
            rms_norm(&s.x[t * d..(t + 1) * d], &self.norm, eps, &mut hidden[i * d..(i + 1) * d]);
        }
        s.acts.quantize(&hidden, d);
        let head = self.lm_head.as_ref().unwrap_or(&self.embed);
        if picked.len() == feeds.len() {
            matmul(&[head], &s.acts, &mut logits);
            return Ok(logits);
        }
        let mut out = vec![0.0; picked.len() * vocab];
        matmul(&[head], &s.acts, &mut out);
        let mut next = 0;
        for (f, slot) in last.iter().enumerate() {
            if slot.is_some() {
                logits[f * vocab..(f + 1) * vocab].copy_from_slice(&out[next * vocab..(next + 1) * vocab]);
                next += 1;
            }
        }
        Ok(logits)
    }
}
