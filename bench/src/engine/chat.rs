//! Chat templates. The engine renders ChatML (SmolLM2, Qwen2/2.5) natively; a model's Jinja
//! template is recognised as ChatML and its default system prompt, if any, is kept.

use super::error::{Error, Result};

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// The message text.
    pub content: String,
}

impl ChatMessage {
    /// A message with the given role.
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> Self {
        ChatMessage { role: role.into(), content: content.into() }
    }

    /// A `system` message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::new("system", content)
    }

    /// A `user` message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::new("user", content)
    }

    /// An `assistant` message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new("assistant", content)
    }
}

/// A chat template the engine can render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChatTemplate {
    /// `<|im_start|>{role}\n{content}<|im_end|>\n` per message; `default_system` is inserted
    /// when the conversation does not start with a system message (SmolLM2 and Qwen2.5 do this).
    ChatMl {
        /// System prompt used when the messages have none.
        default_system: Option<String>,
    },
    /// A template the engine cannot render (kept so the error can show it).
    Unsupported(String),
}

impl ChatTemplate {
    /// Recognises a Jinja chat template (from GGUF `tokenizer.chat_template` or
    /// `tokenizer_config.json`). `None` (no template) gives plain ChatML.
    pub fn from_jinja(template: Option<&str>) -> Self {
        let Some(template) = template else {
            return ChatTemplate::ChatMl { default_system: None };
        };
        if !template.contains("<|im_start|>") {
            return ChatTemplate::Unsupported(template.to_string());
        }
        ChatTemplate::ChatMl { default_system: default_system_prompt(template) }
    }

    /// Renders the messages; with `add_generation_prompt` the text ends with the opening of an
    /// assistant turn, ready for generation.
    pub fn apply(&self, messages: &[ChatMessage], add_generation_prompt: bool) -> Result<String> {
        match self {
            ChatTemplate::ChatMl { default_system } => {
                let mut out = String::new();
                let starts_with_system = messages.first().is_some_and(|m| m.role == "system");
                if let (false, Some(system)) = (starts_with_system, default_system) {
                    push_chatml(&mut out, "system", system);
                }
                for m in messages {
                    push_chatml(&mut out, &m.role, &m.content);
                }
                if add_generation_prompt {
                    out.push_str("<|im_start|>assistant\n");
                }
                Ok(out)
            }
            ChatTemplate::Unsupported(template) => {
                let head: String = template.chars().take(120).collect();
                Err(Error::Request(format!(
                    "the model's chat template is not ChatML and cannot be rendered by the engine \
                     (template starts `{head}`); pass token ids or pre-formatted prompts instead"
                )))
            }
        }
    }
}

fn push_chatml(out: &mut String, role: &str, content: &str) {
    out.push_str("<|im_start|>");
    out.push_str(role);
    out.push('\n');
    out.push_str(content);
    out.push_str("<|im_end|>\n");
}

/// Finds a literal default system prompt: `<|im_start|>system` + newline (real or `\n` escape)
/// followed by literal text up to `<|im_end|>`, with no Jinja code in between.
fn default_system_prompt(template: &str) -> Option<String> {
    const OPEN: &str = "<|im_start|>system";
    let mut rest = template;
    while let Some(at) = rest.find(OPEN) {
        rest = &rest[at + OPEN.len()..];
        let body = if let Some(b) = rest.strip_prefix('\n') {
            b
        } else if let Some(b) = rest.strip_prefix("\\n") {
            b
        } else {
            continue;
        };
        let Some(end) = body.find("<|im_end|>") else { continue };
        let text = &body[..end];
        let is_literal = !text.is_empty() && !["'", "\"", "{{", "{%", "}}", "%}"].iter().any(|s| text.contains(s));
        if is_literal {
            return Some(text.replace("\\n", "\n"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMOLLM2: &str = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";
    const QWEN25: &str = "{%- if tools %}\n    {{- '<|im_start|>system\\n' }}\n    {%- if messages[0]['role'] == 'system' %}\n        {{- messages[0]['content'] }}\n    {%- else %}\n        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}\n    {%- endif %}\n{%- else %}\n    {%- if messages[0]['role'] == 'system' %}\n        {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}\n    {%- else %}\n        {{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}\n    {%- endif %}\n{%- endif %}";

    #[test]
    fn default_system_prompts_are_extracted() {
        let cases: [(Option<&str>, Option<&str>); 4] = [
            (Some(SMOLLM2), Some("You are a helpful AI assistant named SmolLM, trained by Hugging Face")),
            (Some(QWEN25), Some("You are Qwen, created by Alibaba Cloud. You are a helpful assistant.")),
            (Some("{% for m in messages %}{{'<|im_start|>' + m['role'] + '\n' + m['content'] + '<|im_end|>\n'}}{% endfor %}"), None),
            (None, None),
        ];
        for (template, expected) in cases {
            let expected = ChatTemplate::ChatMl { default_system: expected.map(String::from) };
            assert_eq!(ChatTemplate::from_jinja(template), expected, "{template:?}");
        }
    }

    #[test]
    fn chatml_renders_like_the_jinja_template() {
        let t = ChatTemplate::from_jinja(Some(SMOLLM2));
        let got = t.apply(&[ChatMessage::user("What is 2+2?")], true).unwrap();
        assert_eq!(
            got,
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n\
             <|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n"
        );
        let got = t.apply(&[ChatMessage::system("Be brief."), ChatMessage::user("Hi")], false).unwrap();
        assert_eq!(got, "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n");
    }

    #[test]
    fn non_chatml_templates_are_refused_when_applied() {
        let t = ChatTemplate::from_jinja(Some("{{ bos_token }}{% for m in messages %}[INST] {{ m['content'] }} [/INST]{% endfor %}"));
        assert!(matches!(t, ChatTemplate::Unsupported(_)));
        assert!(t.apply(&[ChatMessage::user("x")], true).is_err());
    }
}
