//! Byte-level BPE tokenizers, built from GGUF metadata or read from `tokenizer.json`.
//!
//! candle's own GGUF tokenizer adds a prefix space for SmolLM2 (`"system"` becomes `"Ġsystem"`), so
//! this module builds the pipeline itself from `tokenizer.ggml.pre`: SmolLM2 splits digits
//! individually and then applies ByteLevel without a prefix space; Qwen2 and Llama 3 split with their
//! regexes. Token type 3 (control) marks special tokens.

use super::config::gguf_usize;
use super::error::{Error, Result};
use candle_core::quantized::gguf_file;
use std::path::Path;
use tokenizers::decoders::byte_level::ByteLevel as ByteLevelDecoder;
use tokenizers::models::bpe::{Vocab, BPE};
use tokenizers::normalizers::unicode::NFC;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::{AddedToken, SplitDelimiterBehavior};

const REGEX_QWEN2: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const REGEX_LLAMA3: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// GGUF token type of control (special) tokens.
const TOKEN_TYPE_CONTROL: usize = 3;
/// GGUF token type of user-defined (added, not special) tokens.
const TOKEN_TYPE_USER_DEFINED: usize = 4;

/// Special tokens that end a completion when the model emits them.
const END_TOKENS: [&str; 3] = ["<|im_end|>", "<|endoftext|>", "<|eot_id|>"];

/// A text tokenizer plus the ids the engine needs (BOS, end-of-sequence set, padding).
#[derive(Clone)]
pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
    bos_id: Option<u32>,
    /// The BOS token's text (a prompt starting with it already has its BOS).
    bos_text: Option<String>,
    add_bos: bool,
    /// The model's own end-of-sequence token (`eos_token`), first of the ids it was built with.
    eos_id: Option<u32>,
    eos_ids: Vec<u32>,
    pad_id: u32,
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer")
            .field("vocab_size", &self.vocab_size())
            .field("bos_id", &self.bos_id)
            .field("add_bos", &self.add_bos)
            .field("eos_ids", &self.eos_ids)
            .finish()
    }
}

fn tok_err(e: impl std::fmt::Display) -> Error {
    Error::Tokenizer(e.to_string())
}

fn gguf_strings(content: &gguf_file::Content, key: &str) -> Result<Vec<String>> {
    let value = content.metadata.get(key).ok_or_else(|| Error::Format(format!("GGUF lacks `{key}`")))?;
    let items = value.to_vec().map_err(|_| Error::Format(format!("GGUF `{key}` is not an array")))?;
    items
        .iter()
        .map(|v| v.to_string().cloned().map_err(|_| Error::Format(format!("GGUF `{key}` holds a non-string"))))
        .collect()
}

fn gguf_id(content: &gguf_file::Content, key: &str) -> Option<u32> {
    content.metadata.get(key).and_then(gguf_usize).and_then(|v| u32::try_from(v).ok())
}

/// The pre-tokenizer for a GGUF `tokenizer.ggml.pre` name.
fn pre_tokenizer(pre: &str) -> Result<PreTokenizerWrapper> {
    let split = |regex: &str| -> Result<PreTokenizerWrapper> {
        let split = Split::new(SplitPattern::Regex(regex.to_string()), SplitDelimiterBehavior::Isolated, false)
            .map_err(tok_err)?;
        Ok(Sequence::new(vec![split.into(), ByteLevel::new(false, false, false).into()]).into())
    };
    Ok(match pre {
        "smollm" => Sequence::new(vec![Digits::new(true).into(), ByteLevel::new(false, true, true).into()]).into(),
        "qwen2" => split(REGEX_QWEN2)?,
        "llama3" | "llama-bpe" | "smaug-bpe" => split(REGEX_LLAMA3)?,
        _ => ByteLevel::new(false, true, true).into(),
    })
}

impl Tokenizer {
    /// Builds the tokenizer from GGUF metadata (`tokenizer.ggml.*`; only the `gpt2` BPE model).
    pub fn from_gguf(content: &gguf_file::Content) -> Result<Self> {
        let model = content
            .metadata
            .get("tokenizer.ggml.model")
            .and_then(|v| v.to_string().ok())
            .map(String::as_str)
            .unwrap_or("");
        if model != "gpt2" {
            return Err(Error::Tokenizer(format!(
                "unsupported GGUF tokenizer model `{model}` (supported: gpt2 byte-level BPE)"
            )));
        }
        let tokens = gguf_strings(content, "tokenizer.ggml.tokens")?;
        let merges = gguf_strings(content, "tokenizer.ggml.merges")?
            .into_iter()
            .map(|m| {
                m.split_once(' ')
                    .map(|(a, b)| (a.to_string(), b.to_string()))
                    .ok_or_else(|| Error::Tokenizer(format!("invalid merge `{m}`")))
            })
            .collect::<Result<Vec<_>>>()?;
        let token_types: Vec<usize> = match content.metadata.get("tokenizer.ggml.token_type") {
            Some(v) => v
                .to_vec()
                .map_err(|_| Error::Format("GGUF `tokenizer.ggml.token_type` is not an array".into()))?
                .iter()
                .map(|t| gguf_usize(t).unwrap_or(1))
                .collect(),
            None => Vec::new(),
        };
        let vocab: Vocab = tokens.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect();
        let bpe = BPE::builder().vocab_and_merges(vocab, merges).build().map_err(tok_err)?;
        let mut inner = tokenizers::Tokenizer::new(bpe);
        let pre =
            content.metadata.get("tokenizer.ggml.pre").and_then(|v| v.to_string().ok()).cloned().unwrap_or_default();
        if pre == "qwen2" {
            inner.with_normalizer(Some(NFC)).map_err(tok_err)?;
        }
        inner.with_pre_tokenizer(Some(pre_tokenizer(&pre)?));
        inner.with_decoder(Some(ByteLevelDecoder::new(false, true, true)));
        let specials: Vec<AddedToken> = tokens
            .iter()
            .zip(&token_types)
            .filter(|(_, &ty)| ty == TOKEN_TYPE_CONTROL)
            .map(|(t, _)| AddedToken::from(t.clone(), true))
            .collect();
        let user: Vec<AddedToken> = tokens
            .iter()
            .zip(&token_types)
            .filter(|(_, &ty)| ty == TOKEN_TYPE_USER_DEFINED)
            .map(|(t, _)| AddedToken::from(t.clone(), false))
            .collect();
        inner.add_special_tokens(specials).map_err(tok_err)?;
        inner.add_tokens(user).map_err(tok_err)?;
        let add_bos =
            content.metadata.get("tokenizer.ggml.add_bos_token").and_then(|v| v.to_bool().ok()).unwrap_or(false);
        let bos_id = gguf_id(content, "tokenizer.ggml.bos_token_id");
        let eos_id = gguf_id(content, "tokenizer.ggml.eos_token_id");
        let pad_id = gguf_id(content, "tokenizer.ggml.padding_token_id");
        Ok(Self::assemble(inner, bos_id, add_bos, eos_id.into_iter().collect(), pad_id))
    }

    /// Reads `tokenizer.json` from a Hugging Face model folder, with BOS/EOS settings from
    /// `tokenizer_config.json` and `generation_config.json` where present.
    pub fn from_hf_dir(dir: &Path) -> Result<Self> {
        let path = dir.join("tokenizer.json");
        let inner = tokenizers::Tokenizer::from_file(&path)
            .map_err(|e| Error::Tokenizer(format!("`{}`: {e}", path.display())))?;
        let read_json = |name: &str| -> Option<serde_json::Value> {
            let text = std::fs::read_to_string(dir.join(name)).ok()?;
            serde_json::from_str(&text).ok()
        };
        let token_field = |v: &serde_json::Value, key: &str| -> Option<u32> {
            let field = v.get(key)?;
            let content = field.as_str().or_else(|| field.get("content").and_then(|c| c.as_str()))?;
            inner.token_to_id(content)
        };
        let mut eos_ids = Vec::new();
        let (mut bos_id, mut add_bos) = (None, false);
        if let Some(cfg) = read_json("tokenizer_config.json") {
            eos_ids.extend(token_field(&cfg, "eos_token"));
            bos_id = token_field(&cfg, "bos_token");
            add_bos = match cfg.get("add_bos_token").and_then(|v| v.as_bool()) {
                Some(add) => add,
                // Llama 3 folders add BOS through tokenizer.json's post-processor instead.
                None => post_processor_adds(&inner, bos_id),
            };
        }
        if let Some(gen) = read_json("generation_config.json") {
            match gen.get("eos_token_id") {
                Some(serde_json::Value::Array(ids)) => {
                    eos_ids.extend(ids.iter().filter_map(|i| i.as_u64()).map(|i| i as u32))
                }
                Some(v) => eos_ids.extend(v.as_u64().map(|i| i as u32)),
                None => {}
            }
        }
        let pad_id = read_json("tokenizer_config.json").and_then(|cfg| token_field(&cfg, "pad_token"));
        Ok(Self::assemble(inner, bos_id, add_bos, eos_ids, pad_id))
    }

    /// A byte-level tokenizer without merges: ids 0..3 are `<|endoftext|>`, `<|im_start|>`,
    /// `<|im_end|>`, ids 3..259 are the 256 bytes. For tests and tiny models (vocabulary 259).
    pub fn byte_level() -> Result<Self> {
        let mut tokens = vec!["<|endoftext|>".to_string(), "<|im_start|>".to_string(), "<|im_end|>".to_string()];
        let mut alphabet: Vec<char> = ByteLevel::alphabet().into_iter().collect();
        alphabet.sort_unstable();
        tokens.extend(alphabet.into_iter().map(String::from));
        let vocab: Vocab = tokens.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect();
        let bpe = BPE::builder().vocab_and_merges(vocab, Vec::new()).build().map_err(tok_err)?;
        let mut inner = tokenizers::Tokenizer::new(bpe);
        inner.with_pre_tokenizer(Some(ByteLevel::new(false, true, true)));
        inner.with_decoder(Some(ByteLevelDecoder::new(false, true, true)));
        inner.add_special_tokens(tokens[..3].iter().map(|t| AddedToken::from(t.clone(), true))).map_err(tok_err)?;
        Ok(Self::assemble(inner, None, false, vec![0], Some(0)))
    }

    fn assemble(
        inner: tokenizers::Tokenizer,
        bos_id: Option<u32>,
        add_bos: bool,
        mut eos_ids: Vec<u32>,
        pad_id: Option<u32>,
    ) -> Self {
        let eos_id = eos_ids.first().copied();
        eos_ids.extend(END_TOKENS.iter().filter_map(|t| inner.token_to_id(t)));
        eos_ids.sort_unstable();
        eos_ids.dedup();
        let pad_id = pad_id.or(eos_ids.first().copied()).unwrap_or(0);
        let bos_text = bos_id.and_then(|id| inner.id_to_token(id));
        Tokenizer { inner, bos_id, bos_text, add_bos: add_bos && bos_id.is_some(), eos_id, eos_ids, pad_id }
    }

    /// Encodes text; special tokens written in the text (`<|im_start|>`) become their ids, and BOS
    /// is prepended when the model asks for it and the text does not already start with the BOS
    /// token (chat templates such as Llama 3's write it themselves).
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        let encoding = self.inner.encode(text, false).map_err(tok_err)?;
        let mut ids = Vec::with_capacity(encoding.len() + 1);
        let has_bos = self.bos_text.as_deref().is_some_and(|bos| text.starts_with(bos));
        if let (true, false, Some(bos)) = (self.add_bos, has_bos, self.bos_id) {
            ids.push(bos);
        }
        ids.extend_from_slice(encoding.get_ids());
        Ok(ids)
    }

    /// Decodes ids to text, dropping special tokens when `skip_special` is set.
    pub fn decode(&self, ids: &[u32], skip_special: bool) -> Result<String> {
        self.inner.decode(ids, skip_special).map_err(tok_err)
    }

    /// Ids that end a completion (EOS and the chat end markers present in the vocabulary).
    pub fn eos_ids(&self) -> &[u32] {
        &self.eos_ids
    }

    /// The id used to pad batches (never attended to).
    pub fn pad_id(&self) -> u32 {
        self.pad_id
    }

    /// The id of a token string, special tokens included.
    pub fn token_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    /// Number of ids, added tokens included.
    pub fn vocab_size(&self) -> usize {
        self.inner.get_vocab_size(true)
    }

    /// The underlying `tokenizers` tokenizer.
    pub fn inner(&self) -> &tokenizers::Tokenizer {
        &self.inner
    }

    /// Writes `tokenizer.json` (readable by [`Tokenizer::from_hf_dir`] and Hugging Face).
    pub fn save(&self, path: &Path) -> Result<()> {
        self.inner.save(path, false).map_err(tok_err)
    }

    /// The BOS id and whether [`Tokenizer::encode`] prepends it.
    pub fn bos(&self) -> (Option<u32>, bool) {
        (self.bos_id, self.add_bos)
    }

    /// The BOS token's text (`bos_token` in chat templates).
    pub fn bos_token(&self) -> Option<&str> {
        self.bos_text.as_deref()
    }

    /// The model's end-of-sequence id (`eos_token` of `tokenizer_config.json`, or the GGUF's),
    /// one of [`Tokenizer::eos_ids`].
    pub fn eos_id(&self) -> Option<u32> {
        self.eos_id
    }

    /// The EOS token's text (`eos_token` in chat templates).
    pub fn eos_token(&self) -> Option<String> {
        self.eos_id.and_then(|id| self.inner.id_to_token(id))
    }
}

/// Whether the tokenizer's post-processor puts `bos_id` first when special tokens are added.
fn post_processor_adds(inner: &tokenizers::Tokenizer, bos_id: Option<u32>) -> bool {
    let first = inner.encode("a", true).ok().and_then(|e| e.get_ids().first().copied());
    first.is_some() && first == bos_id
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokenizers::processors::template::TemplateProcessing;

    /// The byte-level tokenizer with `<|im_start|>` (id 1) as its BOS.
    fn with_bos(add_bos: bool) -> Tokenizer {
        let inner = Tokenizer::byte_level().unwrap().inner;
        Tokenizer::assemble(inner, Some(1), add_bos, vec![0], Some(0))
    }

    #[test]
    fn bos_is_prepended_once() {
        let tok = with_bos(true);
        assert_eq!(tok.bos_token(), Some("<|im_start|>"));
        let plain = tok.encode("hi").unwrap();
        assert_eq!(plain[0], 1);
        assert_eq!(plain.len(), 3);
        // A chat template that writes BOS itself: no second one.
        assert_eq!(tok.encode("<|im_start|>hi").unwrap(), plain);
        // BOS later in the text is not the template's BOS.
        assert_eq!(tok.encode("hi<|im_start|>").unwrap(), [1, plain[1], plain[2], 1]);
        assert_eq!(with_bos(false).encode("hi").unwrap(), plain[1..]);
    }

    #[test]
    fn add_bos_follows_the_post_processor_when_the_config_is_silent() {
        let dir = std::env::temp_dir().join(format!("rlbench-tokenizer-bos-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let processor = TemplateProcessing::builder()
            .try_single("<|im_start|> $A")
            .unwrap()
            .special_tokens(vec![("<|im_start|>", 1)])
            .build()
            .unwrap();
        let cases = [
            (true, r#"{"bos_token": "<|im_start|>"}"#, true),
            (false, r#"{"bos_token": "<|im_start|>"}"#, false),
            (true, r#"{"bos_token": "<|im_start|>", "add_bos_token": false}"#, false),
            (false, r#"{"bos_token": "<|im_start|>", "add_bos_token": true}"#, true),
        ];
        for (post_processor, config, expected) in cases {
            let mut inner = Tokenizer::byte_level().unwrap().inner;
            if post_processor {
                inner.with_post_processor(Some(processor.clone()));
            }
            inner.save(dir.join("tokenizer.json"), false).unwrap();
            std::fs::write(dir.join("tokenizer_config.json"), config).unwrap();
            let tok = Tokenizer::from_hf_dir(&dir).unwrap();
            assert_eq!(tok.bos(), (Some(1), expected), "{post_processor} {config}");
            assert_eq!(tok.encode("<|im_start|>a").unwrap().len(), 2, "{post_processor} {config}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
