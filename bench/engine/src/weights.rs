//! Loading weights: GGUF files (dequantized to f32, q/k un-permuted) and Hugging Face folders
//! (`config.json`, `tokenizer.json`, one or more `*.safetensors`).

use super::chat::ChatTemplate;
use super::config::{Arch, ModelConfig, RopeScaling};
use super::error::{Error, Result};
use super::model::Model;
use super::tokenizer::Tokenizer;
use candle_core::quantized::gguf_file;
use candle_core::{DType, Device, Tensor};
use std::collections::HashMap;
use std::path::Path;

/// A model with its tokenizer and chat template.
#[derive(Debug, Clone)]
pub struct LoadedModel {
    /// The trainable model.
    pub model: Model,
    /// Its tokenizer.
    pub tokenizer: Tokenizer,
    /// Its chat template.
    pub chat_template: ChatTemplate,
}

/// Reads a GGUF file's metadata and tensor index (not the tensor data).
pub fn read_gguf_content(path: &Path) -> Result<(gguf_file::Content, std::fs::File)> {
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let content = gguf_file::Content::read(&mut file)
        .map_err(|e| Error::Format(format!("`{}` is not a readable GGUF file: {e}", path.display())))?;
    Ok((content, file))
}

/// The Hugging Face name of a GGUF tensor name (`blk.3.attn_q.weight` ->
/// `model.layers.3.self_attn.q_proj.weight`).
pub fn hf_name_of_gguf(name: &str) -> Option<String> {
    match name {
        "token_embd.weight" => return Some("model.embed_tokens.weight".into()),
        "output_norm.weight" => return Some("model.norm.weight".into()),
        "output.weight" => return Some("lm_head.weight".into()),
        _ => {}
    }
    let rest = name.strip_prefix("blk.")?;
    let (layer, part) = rest.split_once('.')?;
    let layer: usize = layer.parse().ok()?;
    let hf = match part {
        "attn_norm.weight" => "input_layernorm.weight",
        "attn_q.weight" => "self_attn.q_proj.weight",
        "attn_k.weight" => "self_attn.k_proj.weight",
        "attn_v.weight" => "self_attn.v_proj.weight",
        "attn_q.bias" => "self_attn.q_proj.bias",
        "attn_k.bias" => "self_attn.k_proj.bias",
        "attn_v.bias" => "self_attn.v_proj.bias",
        "attn_output.weight" => "self_attn.o_proj.weight",
        "ffn_norm.weight" => "post_attention_layernorm.weight",
        "ffn_gate.weight" => "mlp.gate_proj.weight",
        "ffn_up.weight" => "mlp.up_proj.weight",
        "ffn_down.weight" => "mlp.down_proj.weight",
        _ => return None,
    };
    Some(format!("model.layers.{layer}.{hf}"))
}

/// Undoes llama.cpp's q/k permutation (GGUF stores them for interleaved rotary embeddings; the
/// engine uses the Hugging Face rotate-half layout).
pub fn unpermute_qk(w: &Tensor, n_heads: usize) -> Result<Tensor> {
    let (out, inp) = w.dims2()?;
    if n_heads == 0 || out % (2 * n_heads) != 0 {
        return Err(Error::Format(format!("cannot un-permute a [{out}, {inp}] projection into {n_heads} heads")));
    }
    Ok(w.reshape((n_heads, out / n_heads / 2, 2, inp))?.transpose(1, 2)?.reshape((out, inp))?)
}

/// The GGUF tensor of per-frequency rope divisors (Llama 3.1+ converted by llama.cpp).
const ROPE_FREQS: &str = "rope_freqs.weight";

/// Loads a GGUF model (llama or qwen2), dequantizing every tensor to f32 and then to `dtype`
/// (`None`: keep f32).
pub fn load_gguf(path: &Path, dtype: Option<DType>, device: &Device) -> Result<LoadedModel> {
    let (content, mut file) = read_gguf_content(path)?;
    let tokenizer = Tokenizer::from_gguf(&content)?;
    let chat_template = ChatTemplate::from_jinja(
        content.metadata.get("tokenizer.chat_template").and_then(|v| v.to_string().ok()).map(String::as_str),
    );
    let mut config = ModelConfig::from_gguf(&content, Some(tokenizer.vocab_size()))?;
    if content.tensor_infos.contains_key(ROPE_FREQS) {
        // llama.cpp's form of `llama3` rope scaling: one divisor per rotary frequency.
        let factors = content
            .tensor(&mut file, ROPE_FREQS, device)
            .and_then(|q| q.dequantize(device)?.flatten_all()?.to_dtype(DType::F64)?.to_vec1::<f64>())
            .map_err(|e| Error::Format(format!("GGUF tensor `{ROPE_FREQS}`: {e}")))?;
        config.rope_scaling = Some(RopeScaling::FreqFactors(factors));
        config.validate()?;
    }
    let mut tensors = HashMap::new();
    for name in content.tensor_infos.keys() {
        let Some(hf) = hf_name_of_gguf(name) else { continue };
        let q =
            content.tensor(&mut file, name, device).map_err(|e| Error::Format(format!("GGUF tensor `{name}`: {e}")))?;
        let mut t = q.dequantize(device)?;
        if config.arch == Arch::Llama {
            if hf.ends_with("q_proj.weight") {
                t = unpermute_qk(&t, config.num_heads)?;
            } else if hf.ends_with("k_proj.weight") {
                t = unpermute_qk(&t, config.num_kv_heads)?;
            }
        }
        tensors.insert(hf, t);
    }
    let model = Model::from_tensors(config, tensors, dtype.unwrap_or(DType::F32))?;
    Ok(LoadedModel { model, tokenizer, chat_template })
}

/// Loads a Hugging Face folder: `config.json`, `tokenizer.json` (+ `tokenizer_config.json`) and
/// every `*.safetensors` file in it (sharded checkpoints included), converted to `dtype`
/// (`None`: keep the checkpoint's dtype, that of its embedding).
pub fn load_hf_dir(dir: &Path, dtype: Option<DType>, device: &Device) -> Result<LoadedModel> {
    let config_path = dir.join("config.json");
    let text = std::fs::read_to_string(&config_path).map_err(|e| Error::io(&config_path, e))?;
    let config = ModelConfig::from_hf_json(&text)?;
    let tokenizer = Tokenizer::from_hf_dir(dir)?;
    let chat_template = ChatTemplate::from_jinja(hf_chat_template(dir)?.as_deref());
    let mut shards: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "safetensors"))
        .collect();
    shards.sort();
    if shards.is_empty() {
        return Err(Error::Format(format!("no `*.safetensors` file in `{}`", dir.display())));
    }
    let mut tensors = HashMap::new();
    for shard in &shards {
        for (name, t) in candle_core::safetensors::load(shard, device)? {
            tensors.insert(name, t);
        }
    }
    let dtype = dtype.or_else(|| tensors.get("model.embed_tokens.weight").map(Tensor::dtype)).unwrap_or(DType::F32);
    let model = Model::from_tensors(config, tensors, dtype)?;
    Ok(LoadedModel { model, tokenizer, chat_template })
}

/// A folder's chat template, where `transformers` keeps it: `chat_template.jinja` (newer
/// versions), else `chat_template` in `tokenizer_config.json` (a string, or a list of named
/// templates of which `default` is used), else `chat_template.json`.
pub fn hf_chat_template(dir: &Path) -> Result<Option<String>> {
    let jinja = dir.join("chat_template.jinja");
    if jinja.is_file() {
        return std::fs::read_to_string(&jinja).map(Some).map_err(|e| Error::io(&jinja, e));
    }
    for name in ["tokenizer_config.json", "chat_template.json"] {
        let path = dir.join(name);
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| Error::Format(format!("`{}`: {e}", path.display())))?;
        let template = match v.get("chat_template") {
            None | Some(serde_json::Value::Null) => continue,
            Some(serde_json::Value::String(t)) => t.clone(),
            Some(serde_json::Value::Array(named)) => {
                let pick = named
                    .iter()
                    .find(|t| t.get("name").and_then(|n| n.as_str()) == Some("default"))
                    .or_else(|| named.first());
                match pick.and_then(|t| t.get("template")).and_then(|t| t.as_str()) {
                    Some(t) => t.to_string(),
                    None => {
                        return Err(Error::Format(format!(
                            "`{}`: `chat_template` list has no `default` template",
                            path.display()
                        )))
                    }
                }
            }
            Some(other) => {
                return Err(Error::Format(format!(
                    "`{}`: `chat_template` is neither a string nor a list: {other}",
                    path.display()
                )))
            }
        };
        return Ok(Some(template));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gguf_names_map_to_hf_names() {
        let cases = [
            ("token_embd.weight", Some("model.embed_tokens.weight")),
            ("blk.12.attn_k.weight", Some("model.layers.12.self_attn.k_proj.weight")),
            ("blk.0.attn_q.bias", Some("model.layers.0.self_attn.q_proj.bias")),
            ("blk.0.ffn_norm.weight", Some("model.layers.0.post_attention_layernorm.weight")),
            ("output.weight", Some("lm_head.weight")),
            ("rope_freqs.weight", None),
            ("blk.x.attn_q.weight", None),
        ];
        for (gguf, hf) in cases {
            assert_eq!(hf_name_of_gguf(gguf).as_deref(), hf, "{gguf}");
        }
    }

    #[test]
    fn chat_templates_are_found_where_transformers_keeps_them() {
        let dir = std::env::temp_dir().join(format!("rlbench-chat-template-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
        assert_eq!(hf_chat_template(&dir).unwrap(), None);
        write("tokenizer_config.json", r#"{"chat_template": null}"#);
        assert_eq!(hf_chat_template(&dir).unwrap(), None);
        write("chat_template.json", r#"{"chat_template": "from chat_template.json"}"#);
        assert_eq!(hf_chat_template(&dir).unwrap().as_deref(), Some("from chat_template.json"));
        write(
            "tokenizer_config.json",
            r#"{"chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]}"#,
        );
        assert_eq!(hf_chat_template(&dir).unwrap().as_deref(), Some("D"));
        write("tokenizer_config.json", r#"{"chat_template": "S"}"#);
        assert_eq!(hf_chat_template(&dir).unwrap().as_deref(), Some("S"));
        write("chat_template.jinja", "J");
        assert_eq!(hf_chat_template(&dir).unwrap().as_deref(), Some("J"));
        std::fs::remove_file(dir.join("chat_template.jinja")).unwrap();
        write("tokenizer_config.json", "{not json");
        let err = hf_chat_template(&dir).unwrap_err().to_string();
        assert!(err.contains("tokenizer_config.json"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn unpermute_inverts_the_llama_cpp_permutation() {
        // llama.cpp: reshape(n_head, 2, hd/2, in).swapaxes(1, 2).reshape(out, in).
        let (heads, hd, inp) = (2, 4, 3);
        let w =
            Tensor::arange(0f32, (heads * hd * inp) as f32, &Device::Cpu).unwrap().reshape((heads * hd, inp)).unwrap();
        let permuted =
            w.reshape((heads, 2, hd / 2, inp)).unwrap().transpose(1, 2).unwrap().reshape((heads * hd, inp)).unwrap();
        let back = unpermute_qk(&permuted, heads).unwrap();
        assert_eq!(back.to_vec2::<f32>().unwrap(), w.to_vec2::<f32>().unwrap());
        assert!(unpermute_qk(&w, 5).is_err());
    }
}
