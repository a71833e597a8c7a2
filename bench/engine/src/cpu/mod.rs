//! CPU inference on quantized weights, the way llama.cpp does it: weights stay in 32-value
//! blocks (GGUF Q4_0 / Q4_1 / Q8_0 as stored in the file; anything else, safetensors included,
//! re-quantized to Q8_0), repacked at load into panels of 16 interleaved rows where the CPU has
//! AVX-512 VNNI or AVX2 (`panels.rs`); activations are quantized to 8 bits per block before each
//! matrix product, and the products run as integer dot products (`kernels.rs`) over a persistent
//! pool of spinning threads (`pool.rs`), each weight block reused across the rows of a batch.
//! Attention, norms and activations are vectorised f32 loops (`vector.rs`).
//!
//! Logits differ from the dense f32 network by quantization error (0.1-0.5 on average), so the
//! sampler's log-probs are not the trainer's; [`super::Engine`] uses this path only when asked
//! ([`super::CpuDecode::Quantized`]) and drops it when the model's weights may change.

mod blocks;
mod decoder;
mod kernels;
mod panels;
mod pool;
mod vector;

pub use blocks::{f16_to_f32, BlockFormat, GgmlBlockType, Layout, QActs, QMatrix, BLOCK};
pub use decoder::{QuantModel, QuantState};
pub use kernels::{matmul, Simd};
pub use pool::Pool;
pub(crate) use vector::{exp, log_sum_exp_parts, multiversion, sum_lanes};

use super::config::{Arch, ModelConfig};
use super::error::{Error, Result};
use super::model::Model;
use super::weights::{hf_name_of_gguf, read_gguf_content};
use candle_core::quantized::{gguf_file, GgmlDType};
use candle_core::{DType, Device, Tensor};
use decoder::QuantLayer;
use std::collections::HashMap;
use std::path::Path;

/// Row order that undoes llama.cpp's q/k permutation (row `i` of the result is row `order[i]`
/// of the GGUF matrix): GGUF interleaves the two rotary halves of each head.
fn unpermute_order(rows: usize, n_heads: usize) -> Result<Vec<usize>> {
    if n_heads == 0 || !rows.is_multiple_of(2 * n_heads) {
        return Err(Error::Format(format!("cannot un-permute {rows} rows into {n_heads} heads")));
    }
    let hd = rows / n_heads;
    let half = hd / 2;
    Ok((0..rows)
        .map(|n| {
            let (h, rem) = (n / hd, n % hd);
            let (j, i) = (rem / half, rem % half);
            h * hd + 2 * i + j
        })
        .collect())
}

fn tensor_values(t: &Tensor) -> Result<Vec<f32>> {
    Ok(t.to_dtype(DType::F32)?.flatten_all()?.to_vec1::<f32>()?)
}

fn matrix_of_tensor(t: &Tensor) -> Result<QMatrix> {
    let (rows, cols) = t.dims2()?;
    QMatrix::quantize_q8(rows, cols, &tensor_values(t)?)
}

impl QuantModel {
    /// Quantizes a dense model's current weights to Q8_0 (for Hugging Face checkpoints, or a
    /// trainer's updated weights).
    pub fn from_model(model: &Model) -> Result<Self> {
        let tensors: HashMap<&str, Tensor> =
            model.vars().iter().map(|(n, v)| (n.as_str(), v.as_tensor().detach())).collect();
        let config = model.config().clone();
        let get = |name: &str| tensors.get(name).ok_or_else(|| Error::Format(format!("missing parameter `{name}`")));
        let built = Self::assemble(config, |name, is_matrix| {
            let t = get(name)?;
            Ok(if is_matrix { Part::Matrix(matrix_of_tensor(t)?) } else { Part::Vector(tensor_values(t)?) })
        })?;
        Ok(built)
    }

    /// Reads a GGUF model's weights, keeping Q4_0, Q4_1 and Q8_0 blocks as stored and
    /// re-quantizing other types to Q8_0. `config` is the model's (as the dense loader read it).
    pub fn from_gguf(path: &Path, config: &ModelConfig) -> Result<Self> {
        let (content, mut file) = read_gguf_content(path)?;
        let config = config.clone();
        let by_hf: HashMap<String, String> =
            content.tensor_infos.keys().filter_map(|n| hf_name_of_gguf(n).map(|hf| (hf, n.clone()))).collect();
        let arch = config.arch;
        let (heads, kv_heads) = (config.num_heads, config.num_kv_heads);
        Self::assemble(config, |name, is_matrix| {
            let gguf = by_hf.get(name).ok_or_else(|| Error::Format(format!("GGUF lacks the tensor for `{name}`")))?;
            let part = read_part(&content, &mut file, gguf, is_matrix)?;
            let heads = if name.ends_with("q_proj.weight") {
                Some(heads)
            } else if name.ends_with("k_proj.weight") {
                Some(kv_heads)
            } else {
                None
            };
            match (part, heads) {
                (Part::Matrix(m), Some(h)) if arch == Arch::Llama => {
                    Ok(Part::Matrix(m.permute_rows(&unpermute_order(m.rows(), h)?)?))
                }
                (part, _) => Ok(part),
            }
        })
    }

    /// Builds the model from a source of named parts (Hugging Face names).
    fn assemble(config: ModelConfig, mut part: impl FnMut(&str, bool) -> Result<Part>) -> Result<Self> {
        config.validate()?;
        let mut matrix = |name: &str| -> Result<QMatrix> {
            match part(name, true)? {
                Part::Matrix(m) => Ok(m),
                Part::Vector(_) => Err(Error::Format(format!("`{name}` is not a matrix"))),
            }
        };
        let mut layers = Vec::with_capacity(config.num_layers);
        let embed = matrix("model.embed_tokens.weight")?;
        let lm_head = if config.tie_word_embeddings { None } else { Some(matrix("lm_head.weight")?) };
        for i in 0..config.num_layers {
            let p = format!("model.layers.{i}");
            let proj = |m: &mut dyn FnMut(&str) -> Result<QMatrix>, name: &str| m(&format!("{p}.{name}.weight"));
            layers.push(QuantLayer {
                attn_norm: Vec::new(),
                wq: proj(&mut matrix, "self_attn.q_proj")?,
                wk: proj(&mut matrix, "self_attn.k_proj")?,
                wv: proj(&mut matrix, "self_attn.v_proj")?,
                bq: None,
                bk: None,
                bv: None,
                wo: proj(&mut matrix, "self_attn.o_proj")?,
                mlp_norm: Vec::new(),
                w_gate: proj(&mut matrix, "mlp.gate_proj")?,
                w_up: proj(&mut matrix, "mlp.up_proj")?,
                w_down: proj(&mut matrix, "mlp.down_proj")?,
            });
        }
        let mut vector = |name: String| -> Result<Vec<f32>> {
            match part(&name, false)? {
                Part::Vector(v) => Ok(v),
                Part::Matrix(_) => Err(Error::Format(format!("`{name}` is not a vector"))),
            }
        };
        for (i, layer) in layers.iter_mut().enumerate() {
            let p = format!("model.layers.{i}");
            layer.attn_norm = vector(format!("{p}.input_layernorm.weight"))?;
            layer.mlp_norm = vector(format!("{p}.post_attention_layernorm.weight"))?;
            if config.attention_bias() {
                layer.bq = Some(vector(format!("{p}.self_attn.q_proj.bias"))?);
                layer.bk = Some(vector(format!("{p}.self_attn.k_proj.bias"))?);
                layer.bv = Some(vector(format!("{p}.self_attn.v_proj.bias"))?);
            }
        }
        let norm = vector("model.norm.weight".to_string())?;
        let model = QuantModel { config, embed, layers, norm, lm_head };
        model.validate()?;
        Ok(model.with_layout(Simd::detect().layout()))
    }

    /// The same model with every matrix in `layout` (models are built in the layout the CPU's
    /// best kernels use: panels of 16 rows where AVX-512 VNNI is available, rows elsewhere).
    pub fn with_layout(self, layout: Layout) -> Self {
        let QuantModel { config, embed, layers, norm, lm_head } = self;
        let re = |m: QMatrix| m.with_layout(layout);
        let layers = layers
            .into_iter()
            .map(|l| QuantLayer {
                wq: re(l.wq),
                wk: re(l.wk),
                wv: re(l.wv),
                wo: re(l.wo),
                w_gate: re(l.w_gate),
                w_up: re(l.w_up),
                w_down: re(l.w_down),
                ..l
            })
            .collect();
        QuantModel { config, embed: re(embed), layers, norm, lm_head: lm_head.map(re) }
    }
}

/// A weight as the quantized model holds it.
enum Part {
    Matrix(QMatrix),
    Vector(Vec<f32>),
}

fn read_part(content: &gguf_file::Content, file: &mut std::fs::File, name: &str, is_matrix: bool) -> Result<Part> {
    let q =
        content.tensor(file, name, &Device::Cpu).map_err(|e| Error::Format(format!("GGUF tensor `{name}`: {e}")))?;
    if !is_matrix {
        return Ok(Part::Vector(tensor_values(&q.dequantize(&Device::Cpu)?)?));
    }
    let (rows, cols) = q.shape().dims2()?;
    let kind = match q.dtype() {
        GgmlDType::Q4_0 => Some(GgmlBlockType::Q4_0),
        GgmlDType::Q4_1 => Some(GgmlBlockType::Q4_1),
        GgmlDType::Q8_0 => Some(GgmlBlockType::Q8_0),
        _ => None,
    };
    let matrix = match kind {
        Some(kind) => QMatrix::from_ggml(kind, rows, cols, &q.data()?)?,
        None => matrix_of_tensor(&q.dequantize(&Device::Cpu)?)?,
    };
    Ok(Part::Matrix(matrix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unpermute_order_matches_the_tensor_unpermute() {
        let (heads, hd, cols) = (3, 8, 2);
        let rows = heads * hd;
        let w = Tensor::arange(0f32, (rows * cols) as f32, &Device::Cpu).unwrap().reshape((rows, cols)).unwrap();
        let want = super::super::weights::unpermute_qk(&w, heads).unwrap().to_vec2::<f32>().unwrap();
        let order = unpermute_order(rows, heads).unwrap();
        let got: Vec<Vec<f32>> = order.iter().map(|&r| vec![(r * cols) as f32, (r * cols + 1) as f32]).collect();
        assert_eq!(got, want);
        assert!(unpermute_order(10, 3).is_err());
    }

    fn tiny(arch: Arch, seed: u64) -> Model {
        let config = ModelConfig { tie_word_embeddings: arch == Arch::Llama, ..ModelConfig::tiny(arch, 96) };
        Model::random(&config, DType::F32, &Device::Cpu, seed).unwrap()
    }

    fn dense_last_logits(model: &Model, ids: &[u32]) -> Vec<f32> {
        use super::super::batch::{PadSide, PaddedBatch};
        let batch = PaddedBatch::new(&[ids.to_vec()], PadSide::Right, 0, &Device::Cpu).unwrap();
        let logits = model.forward(&batch).unwrap();
        logits.narrow(1, ids.len() - 1, 1).unwrap().flatten_all().unwrap().to_vec1().unwrap()
    }

    #[test]
    fn prefill_equals_token_by_token_decoding_whatever_the_batch() {
        let q = QuantModel::from_model(&tiny(Arch::Qwen2, 1)).unwrap();
        let vocab = q.config().vocab_size;
        let (a, b): (&[u32], &[u32]) = (&[5, 9, 13, 2, 77, 40], &[8, 1]);
        let mut both = q.new_state(16);
        let logits = q.prefill(&mut both, &[a, b]).unwrap();
        // Row `a` alone, fed one token per step.
        let mut alone = q.new_state(16);
        let mut last = q.prefill(&mut alone, &[&a[..1]]).unwrap();
        for &id in &a[1..] {
            last = q.step(&mut alone, &[id]).unwrap();
        }
        assert_eq!(last, logits[..vocab].to_vec());
        assert_eq!(alone.row_len(0), a.len());
        // Continuing both rows, after repeating row 1 and dropping row 0.
        both.keep_rows(&[1, 1]).unwrap();
        let next = q.step(&mut both, &[3, 4]).unwrap();
        let mut single = q.new_state(4);
        q.prefill(&mut single, &[b]).unwrap();
        assert_eq!(q.step(&mut single, &[4]).unwrap(), next[vocab..].to_vec());
        assert!(both.keep_rows(&[2]).is_err());
        assert!(q.step(&mut both, &[1]).is_err(), "one token per row");
        assert!(q.step(&mut both, &[1, vocab as u32]).is_err(), "token outside the vocabulary");
    }

    #[test]
    fn long_rows_do_not_depend_on_their_batch_mates() {
        // Long enough for attention to split positions into spans.
        let q = QuantModel::from_model(&tiny(Arch::Llama, 3)).unwrap();
        let vocab = q.config().vocab_size;
        let long: Vec<u32> = (0..150).map(|i| (i * 7 % 90) as u32).collect();
        let short: Vec<u32> = vec![4, 8, 15];
        let mut alone = q.new_state(160);
        let mut want = vec![q.prefill(&mut alone, &[&long]).unwrap()];
        let mut both = q.new_state(160);
        let first = q.prefill(&mut both, &[&short, &long, &short]).unwrap();
        let mut got = vec![first[vocab..2 * vocab].to_vec()];
        for id in [3u32, 60, 9] {
            want.push(q.step(&mut alone, &[id]).unwrap());
            got.push(q.step(&mut both, &[id, id, id]).unwrap()[vocab..2 * vocab].to_vec());
        }
        assert_eq!(got, want);
    }

    #[test]
    fn quantized_logits_track_the_dense_network() {
        for arch in [Arch::Llama, Arch::Qwen2] {
            let model = tiny(arch, 7);
            let q = QuantModel::from_model(&model).unwrap();
            let ids = [3u32, 50, 21, 90, 4, 4, 17, 60];
            let dense = dense_last_logits(&model, &ids);
            let mut state = q.new_state(8);
            let ours = q.prefill(&mut state, &[&ids]).unwrap();
            let scale = dense.iter().fold(0.0f32, |m, x| m.max(x.abs()));
            let diff = dense.iter().zip(&ours).fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
            assert!(diff < 0.02 * scale, "{arch:?}: max |difference| {diff} for logits up to {scale}");
        }
    }
}
