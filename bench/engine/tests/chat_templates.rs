//! Real Hugging Face chat templates rendered by the engine, checked against the text
//! `transformers`' `tokenizer.apply_chat_template(messages, tokenize=False,
//! add_generation_prompt=True)` gives for them (worked out by following each template, with
//! `trim_blocks` and `lstrip_blocks` as `transformers` sets them).
//!
//! The templates in `tests/templates/` are the `chat_template` strings of the models'
//! `tokenizer_config.json` on the Hugging Face Hub, JSON-decoded:
//! - `qwen2.5-instruct.jinja`: Qwen/Qwen2.5-{0.5B..72B}-Instruct (tools branch included);
//! - `qwen2.5-math-instruct.jinja`: Qwen/Qwen2.5-Math-{1.5B,7B,72B}-Instruct (the same template
//!   with "Please reason step by step, and put your final answer within \boxed{}." as default
//!   system prompt);
//! - `deepseek-r1-distill-qwen.jinja`: deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B (the revision
//!   whose generation prompt is `<｜Assistant｜><think>\n`; the first release ended with
//!   `<｜Assistant｜>` only);
//! - `llama-3.2-instruct.jinja`: meta-llama/Llama-3.2-1B-Instruct (`strftime_now` gives the
//!   engine's fixed date, 26 Jul 2024, where `transformers` would print today's).

use rlengine::{
    Arch, ChatMessage, ChatTemplate, DType, Device, Engine, LoadedModel, Model, ModelConfig, ModelSource, ModelSpec,
    SpecialTokens, Tokenizer,
};

const QWEN25: &str = include_str!("templates/qwen2.5-instruct.jinja");
const QWEN25_MATH: &str = include_str!("templates/qwen2.5-math-instruct.jinja");
const DEEPSEEK_R1_DISTILL: &str = include_str!("templates/deepseek-r1-distill-qwen.jinja");
const LLAMA32: &str = include_str!("templates/llama-3.2-instruct.jinja");

fn tokens(bos: Option<&str>, eos: Option<&str>) -> SpecialTokens {
    SpecialTokens { bos: bos.map(String::from), eos: eos.map(String::from) }
}

/// (a) one user message.
fn one_user() -> Vec<ChatMessage> {
    vec![ChatMessage::user("What is 2+2?")]
}

/// (b) system + user + assistant + user; the assistant turn carries a reasoning block.
fn multi_turn(system: &str, answer: &str) -> Vec<ChatMessage> {
    vec![
        ChatMessage::system(system),
        ChatMessage::user("What is 2+2?"),
        ChatMessage::assistant(answer),
        ChatMessage::user("And 3+3?"),
    ]
}

fn render(source: &str, messages: &[ChatMessage], special: &SpecialTokens) -> String {
    let template = ChatTemplate::from_jinja(Some(source));
    assert!(matches!(template, ChatTemplate::Jinja(_)));
    template.apply(messages, true, special).unwrap()
}

#[test]
fn qwen25_instruct() {
    let special = tokens(None, Some("<|im_end|>"));
    assert_eq!(
        render(QWEN25, &one_user(), &special),
        "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n\
         <|im_start|>user\nWhat is 2+2?<|im_end|>\n\
         <|im_start|>assistant\n"
    );
    assert_eq!(
        render(QWEN25, &multi_turn("You are a math tutor.", "4"), &special),
        "<|im_start|>system\nYou are a math tutor.<|im_end|>\n\
         <|im_start|>user\nWhat is 2+2?<|im_end|>\n\
         <|im_start|>assistant\n4<|im_end|>\n\
         <|im_start|>user\nAnd 3+3?<|im_end|>\n\
         <|im_start|>assistant\n"
    );
}

#[test]
fn qwen25_math_instruct() {
    let special = tokens(None, Some("<|im_end|>"));
    assert_eq!(
        render(QWEN25_MATH, &one_user(), &special),
        "<|im_start|>system\nPlease reason step by step, and put your final answer within \\boxed{}.<|im_end|>\n\
         <|im_start|>user\nWhat is 2+2?<|im_end|>\n\
         <|im_start|>assistant\n"
    );
    assert_eq!(
        render(QWEN25_MATH, &multi_turn("Be brief.", "4"), &special),
        "<|im_start|>system\nBe brief.<|im_end|>\n\
         <|im_start|>user\nWhat is 2+2?<|im_end|>\n\
         <|im_start|>assistant\n4<|im_end|>\n\
         <|im_start|>user\nAnd 3+3?<|im_end|>\n\
         <|im_start|>assistant\n"
    );
    // Without a generation prompt (the form a published Qwen2.5-Math notebook prints).
    let t = ChatTemplate::from_jinja(Some(QWEN25_MATH));
    let messages = [ChatMessage::user("hello world"), ChatMessage::assistant("hi!")];
    assert_eq!(
        t.apply(&messages, false, &special).unwrap(),
        "<|im_start|>system\nPlease reason step by step, and put your final answer within \\boxed{}.<|im_end|>\n\
         <|im_start|>user\nhello world<|im_end|>\n\
         <|im_start|>assistant\nhi!<|im_end|>\n"
    );
}

#[test]
fn deepseek_r1_distill_qwen() {
    let special = tokens(Some("<｜begin▁of▁sentence｜>"), Some("<｜end▁of▁sentence｜>"));
    assert_eq!(
        render(DEEPSEEK_R1_DISTILL, &one_user(), &special),
        "<｜begin▁of▁sentence｜><｜User｜>What is 2+2?<｜Assistant｜><think>\n"
    );
    // The system prompt goes first, unwrapped; an earlier answer keeps only what follows `</think>`.
    assert_eq!(
        render(
            DEEPSEEK_R1_DISTILL,
            &multi_turn("You are a math tutor.", "<think>\nTwo and two.\n</think>\n\n4"),
            &special
        ),
        "<｜begin▁of▁sentence｜>You are a math tutor.<｜User｜>What is 2+2?<｜Assistant｜>\n\n4<｜end▁of▁sentence｜>\
         <｜User｜>And 3+3?<｜Assistant｜><think>\n"
    );
}

#[test]
fn llama32_instruct() {
    let special = tokens(Some("<|begin_of_text|>"), Some("<|eot_id|>"));
    assert_eq!(
        render(LLAMA32, &one_user(), &special),
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n\
         Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|>\
         <|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|>\
         <|start_header_id|>assistant<|end_header_id|>\n\n"
    );
    // The system message is trimmed into the system header; every content is trimmed.
    let mut messages = multi_turn(" You are a math tutor.\n", "4");
    messages[3].content = "And 3+3?\n\n".into();
    assert_eq!(
        render(LLAMA32, &messages, &special),
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n\
         Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\nYou are a math tutor.<|eot_id|>\
         <|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|>\
         <|start_header_id|>assistant<|end_header_id|>\n\n4<|eot_id|>\
         <|start_header_id|>user<|end_header_id|>\n\nAnd 3+3?<|eot_id|>\
         <|start_header_id|>assistant<|end_header_id|>\n\n"
    );
}

/// A tiny engine whose tokenizer has a BOS (`<|endoftext|>`, id 0) that it adds, read from a
/// Hugging Face folder, with the given template.
fn engine_with_bos(dir: &std::path::Path, template: &str) -> Engine {
    std::fs::create_dir_all(dir).unwrap();
    Tokenizer::byte_level().unwrap().save(&dir.join("tokenizer.json")).unwrap();
    let config = serde_json::json!({ "bos_token": "<|endoftext|>", "eos_token": "<|im_end|>", "add_bos_token": true });
    std::fs::write(dir.join("tokenizer_config.json"), config.to_string()).unwrap();
    let tokenizer = Tokenizer::from_hf_dir(dir).unwrap();
    let model = Model::random(&ModelConfig::tiny(Arch::Llama, 259), DType::F32, &Device::Cpu, 0).unwrap();
    Engine::from_parts(LoadedModel { model, tokenizer, chat_template: ChatTemplate::from_jinja(Some(template)) }, 2)
}

#[test]
fn the_engine_passes_its_tokens_and_a_template_bos_is_not_doubled() {
    let dir = std::env::temp_dir().join(format!("rlbench-chat-templates-{}", std::process::id()));
    let engine = engine_with_bos(&dir.join("src"), LLAMA32);
    let prompt = engine.apply_chat_template(&one_user(), true).unwrap();
    assert!(prompt.starts_with("<|endoftext|><|start_header_id|>system"), "{prompt}");
    let ids = engine.tokenizer().encode(&prompt).unwrap();
    assert_eq!(ids.iter().filter(|&&id| id == 0).count(), 1, "{ids:?}");
    assert_eq!(ids[0], 0);
    // Plain text still gets its BOS.
    let plain = engine.tokenizer().encode("a").unwrap();
    assert_eq!((plain.len(), plain[0]), (2, 0));

    // A saved folder keeps the template verbatim and loads it back.
    let saved = dir.join("saved");
    engine.save_pretrained(&saved).unwrap();
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(saved.join("tokenizer_config.json")).unwrap()).unwrap();
    assert_eq!(config["chat_template"].as_str(), Some(LLAMA32));
    assert_eq!(config["eos_token"].as_str(), Some("<|im_end|>"));
    let loaded = Engine::load(&ModelSpec::new(ModelSource::HfDir(saved))).unwrap();
    assert_eq!(loaded.chat_template(), engine.chat_template());
    assert_eq!(loaded.apply_chat_template(&one_user(), true).unwrap(), prompt);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn template_errors_are_errors_not_panics() {
    let dir = std::env::temp_dir().join(format!("rlbench-chat-template-errors-{}", std::process::id()));
    let engine = engine_with_bos(&dir, "{% if messages %}{{ messages[0].content }");
    let err = engine.apply_chat_template(&one_user(), true).unwrap_err().to_string();
    assert!(err.starts_with("chat template: syntax error"), "{err}");
    let engine = engine_with_bos(&dir, "{{ raise_exception('Conversation roles must alternate user/assistant') }}");
    let err = engine.apply_chat_template(&one_user(), true).unwrap_err().to_string();
    assert!(err.contains("Conversation roles must alternate user/assistant"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
