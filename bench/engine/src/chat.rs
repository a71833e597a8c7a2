//! Chat templates. A model's Jinja template (GGUF `tokenizer.chat_template`, or a folder's
//! template as [`super::hf_chat_template`] finds it) is rendered with minijinja the way
//! `transformers`' `apply_chat_template(messages, tokenize=False, add_generation_prompt=...)`
//! renders it, so the prompt is the one vLLM's chat endpoint would send: same Jinja options (`trim_blocks`,
//! `lstrip_blocks`, loop controls), Python string and dict methods (`.strip()`, `.split()`,
//! `.items()`, ...), and the same context: `messages`, `add_generation_prompt`, `bos_token` and
//! `eos_token` (undefined when the tokenizer has none), `tools` and `documents` (none),
//! `raise_exception(msg)` (an error carrying `msg`), `strftime_now(fmt)` (see [`FIXED_DATE`]) and a
//! Python-style `tojson`.
//!
//! ChatML (`<|im_start|>{role}\n{content}<|im_end|>\n`) is rendered natively when a model has no
//! template, and for the exact template text [`ChatTemplate::jinja_source`] writes for it (the
//! form SmolLM2 ships); the native output equals the Jinja rendering.

use super::error::{Error, Result};
use minijinja::value::{Kwargs, Value};
use minijinja::{AutoEscape, Environment, ErrorKind};
use serde::Serialize;
use std::sync::Arc;

/// The day `strftime_now` formats: 26 July 2024 (a Friday), 00:00:00. It is the date Llama 3.x
/// templates use when `strftime_now` is absent; `transformers` would give today's date. A fixed
/// date keeps a prompt, and so the samples drawn for it, the same on every day.
pub const FIXED_DATE: &str = "2024-07-26";

/// The name the template is registered under (it shows in error locations).
const TEMPLATE_NAME: &str = "chat_template";

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

/// The special-token strings a template may print as `bos_token` and `eos_token`; `None` leaves
/// the variable undefined (it prints as nothing), as `transformers` does for a missing token.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpecialTokens {
    /// The BOS token's text, e.g. `<|begin_of_text|>`.
    pub bos: Option<String>,
    /// The EOS token's text, e.g. `<|eot_id|>`.
    pub eos: Option<String>,
}

/// A chat template the engine can render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChatTemplate {
    /// `<|im_start|>{role}\n{content}<|im_end|>\n` per message; `default_system` is inserted
    /// when the conversation does not start with a system message (SmolLM2 does this).
    ChatMl {
        /// System prompt used when the messages have none.
        default_system: Option<String>,
    },
    /// Any other Jinja template, rendered with minijinja.
    Jinja(JinjaTemplate),
}

impl ChatTemplate {
    /// The template of a model: `None` (no template) gives plain ChatML; a Jinja source is
    /// compiled once here (a syntax error is kept and returned by [`ChatTemplate::apply`]).
    pub fn from_jinja(template: Option<&str>) -> Self {
        let Some(source) = template else {
            return ChatTemplate::ChatMl { default_system: None };
        };
        for default_system in [None, default_system_prompt(source)] {
            if chatml_jinja(default_system.as_deref()) == source {
                return ChatTemplate::ChatMl { default_system };
            }
        }
        ChatTemplate::Jinja(JinjaTemplate::new(source))
    }

    /// Renders the messages; with `add_generation_prompt` the text ends with the opening of an
    /// assistant turn, ready for generation.
    pub fn apply(
        &self,
        messages: &[ChatMessage],
        add_generation_prompt: bool,
        special: &SpecialTokens,
    ) -> Result<String> {
        match self {
            ChatTemplate::ChatMl { default_system } => {
                let mut out = String::new();
                // As the Jinja form: the default opens a conversation that has no system message.
                let needs_system = messages.first().is_some_and(|m| m.role != "system");
                if let (true, Some(system)) = (needs_system, default_system) {
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
            ChatTemplate::Jinja(template) => template.render(messages, add_generation_prompt, special),
        }
    }

    /// The Jinja source: the model's own, or for ChatML the form SmolLM2 ships (what
    /// `save_pretrained` writes, and what [`ChatTemplate::from_jinja`] reads back as ChatML).
    pub fn jinja_source(&self) -> String {
        match self {
            ChatTemplate::ChatMl { default_system } => chatml_jinja(default_system.as_deref()),
            ChatTemplate::Jinja(template) => template.source().to_string(),
        }
    }
}

/// A compiled Jinja chat template; equal when the sources are.
#[derive(Clone)]
pub struct JinjaTemplate {
    source: Arc<str>,
    /// The environment holding the compiled template, or the syntax error.
    compiled: std::result::Result<Arc<Environment<'static>>, String>,
}

impl JinjaTemplate {
    /// Compiles a template with the settings and helpers `transformers` gives it.
    pub fn new(source: &str) -> Self {
        let mut env = Environment::new();
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_auto_escape_callback(|_| AutoEscape::None);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_filter("tojson", tojson);
        env.add_function("raise_exception", raise_exception);
        env.add_function("strftime_now", strftime_now);
        let compiled =
            env.add_template_owned(TEMPLATE_NAME, source.to_string()).map(|()| Arc::new(env)).map_err(|e| describe(&e));
        JinjaTemplate { source: source.into(), compiled }
    }

    /// The template text, as the model ships it.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The syntax error, if the template does not compile.
    pub fn error(&self) -> Option<&str> {
        self.compiled.as_ref().err().map(String::as_str)
    }

    fn render(&self, messages: &[ChatMessage], add_generation_prompt: bool, special: &SpecialTokens) -> Result<String> {
        let env = self.compiled.as_ref().map_err(|e| Error::ChatTemplate(e.clone()))?;
        let messages: Vec<Value> = messages
            .iter()
            .map(|m| Value::from_iter([("role", m.role.as_str()), ("content", m.content.as_str())]))
            .collect();
        let mut context = vec![
            ("messages", Value::from(messages)),
            ("add_generation_prompt", Value::from(add_generation_prompt)),
            ("tools", Value::from(())),
            ("documents", Value::from(())),
        ];
        context.extend(special.bos.as_deref().map(|t| ("bos_token", Value::from(t))));
        context.extend(special.eos.as_deref().map(|t| ("eos_token", Value::from(t))));
        let template = env.get_template(TEMPLATE_NAME).map_err(|e| Error::ChatTemplate(describe(&e)))?;
        template.render(Value::from_iter(context)).map_err(|e| Error::ChatTemplate(describe(&e)))
    }
}

impl PartialEq for JinjaTemplate {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl Eq for JinjaTemplate {}

impl std::fmt::Debug for JinjaTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JinjaTemplate").field("source", &self.source).field("error", &self.error()).finish()
    }
}

/// A minijinja error as one line: the message (a `raise_exception` text as it is) and the line.
fn describe(e: &minijinja::Error) -> String {
    let mut text = match (e.kind(), e.detail()) {
        (ErrorKind::InvalidOperation, Some(detail)) => detail.to_string(),
        (kind, Some(detail)) => format!("{kind}: {detail}"),
        (kind, None) => kind.to_string(),
    };
    if let Some(line) = e.line() {
        text.push_str(&format!(" (template line {line})"));
    }
    text
}

/// `raise_exception(msg)`: stops rendering with `msg` as the error.
fn raise_exception(message: String) -> std::result::Result<Value, minijinja::Error> {
    Err(minijinja::Error::new(ErrorKind::InvalidOperation, message))
}

/// `strftime_now(fmt)`: [`FIXED_DATE`] formatted with Python's `strftime` codes (`%d %b %Y` and the
/// other date and time codes; `%-d` drops the zero padding). Unknown codes are kept as written.
fn strftime_now(format: &str) -> String {
    let field = |code: char| -> Option<&'static str> {
        Some(match code {
            'd' | 'e' => "26",
            'm' => "07",
            'Y' => "2024",
            'y' => "24",
            'b' | 'h' => "Jul",
            'B' => "July",
            'a' => "Fri",
            'A' => "Friday",
            'u' | 'w' => "5",
            'j' => "208",
            'H' | 'M' | 'S' => "00",
            'I' => "12",
            'p' => "AM",
            'F' => FIXED_DATE,
            'D' => "07/26/24",
            'T' => "00:00:00",
            '%' => "%",
            _ => return None,
        })
    };
    let mut out = String::with_capacity(format.len() + 8);
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let unpadded = chars.next_if_eq(&'-').is_some();
        match chars.next() {
            Some(code) => match field(code) {
                Some(text) if unpadded && text.len() > 1 => {
                    let trimmed = text.trim_start_matches('0');
                    out.push_str(if trimmed.is_empty() { "0" } else { trimmed });
                }
                Some(text) => out.push_str(text),
                None => {
                    out.push('%');
                    if unpadded {
                        out.push('-');
                    }
                    out.push(code);
                }
            },
            None => out.push('%'),
        }
    }
    out
}

/// `tojson` as `transformers` defines it: Python's `json.dumps(value, ensure_ascii=False,
/// indent=indent)`, i.e. `", "`/`": "` separators and no HTML escaping (minijinja's own escapes
/// `<`, `>`, `&` and `'`). Other keyword arguments are ignored.
fn tojson(value: &Value, indent: Option<usize>, kwargs: Kwargs) -> std::result::Result<Value, minijinja::Error> {
    let indent = match indent {
        Some(n) => Some(n),
        None => kwargs.get::<Option<usize>>("indent")?,
    };
    let mut out = Vec::new();
    let written = match indent {
        Some(n) => {
            let pad = " ".repeat(n);
            value.serialize(&mut serde_json::Serializer::with_formatter(
                &mut out,
                serde_json::ser::PrettyFormatter::with_indent(pad.as_bytes()),
            ))
        }
        None => value.serialize(&mut serde_json::Serializer::with_formatter(&mut out, PythonJson)),
    };
    written.map_err(|e| minijinja::Error::new(ErrorKind::InvalidOperation, format!("tojson: {e}")))?;
    Ok(Value::from_safe_string(String::from_utf8_lossy(&out).into_owned()))
}

/// Python's default JSON separators: `", "` between items, `": "` after keys.
struct PythonJson;

impl serde_json::ser::Formatter for PythonJson {
    fn begin_array_value<W: ?Sized + std::io::Write>(&mut self, writer: &mut W, first: bool) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(&mut self, writer: &mut W, first: bool) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, writer: &mut W) -> std::io::Result<()> {
        writer.write_all(b": ")
    }
}

fn push_chatml(out: &mut String, role: &str, content: &str) {
    out.push_str("<|im_start|>");
    out.push_str(role);
    out.push('\n');
    out.push_str(content);
    out.push_str("<|im_end|>\n");
}

/// The Jinja form of ChatML with an optional default system prompt (SmolLM2's template).
fn chatml_jinja(default_system: Option<&str>) -> String {
    let system = default_system
        .map(|s| {
            format!(
                "{{% if loop.first and messages[0]['role'] != 'system' %}}{{{{ '<|im_start|>system\n{}<|im_end|>\n' }}}}{{% endif %}}",
                s.replace('\\', "\\\\").replace('\'', "\\'")
            )
        })
        .unwrap_or_default();
    format!(
        "{{% for message in messages %}}{system}{{{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}}}{{% endfor %}}{{% if add_generation_prompt %}}{{{{ '<|im_start|>assistant\n' }}}}{{% endif %}}"
    )
}

/// Finds a literal default system prompt: `<|im_start|>system` + newline followed by literal
/// text up to `<|im_end|>`, with no Jinja code, quote or backslash in between.
fn default_system_prompt(template: &str) -> Option<String> {
    const OPEN: &str = "<|im_start|>system\n";
    let mut rest = template;
    while let Some(at) = rest.find(OPEN) {
        rest = &rest[at + OPEN.len()..];
        let Some(end) = rest.find("<|im_end|>") else { continue };
        let text = &rest[..end];
        let is_literal =
            !text.is_empty() && !["'", "\"", "\\", "{{", "{%", "}}", "%}"].iter().any(|s| text.contains(s));
        if is_literal {
            return Some(text.to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SmolLM2-135M-Instruct's template (its GGUF `tokenizer.chat_template`).
    const SMOLLM2: &str = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

    fn none() -> SpecialTokens {
        SpecialTokens::default()
    }

    fn jinja(source: &str) -> ChatTemplate {
        ChatTemplate::Jinja(JinjaTemplate::new(source))
    }

    fn conversations() -> Vec<Vec<ChatMessage>> {
        vec![
            vec![],
            vec![ChatMessage::user("What is 2+2?")],
            vec![ChatMessage::system("Be brief."), ChatMessage::user("Hi")],
            vec![
                ChatMessage::system("S"),
                ChatMessage::user("U1"),
                ChatMessage::assistant("A1"),
                ChatMessage::user("U2 with 'quotes', {{ braces }} and \\ backslash"),
            ],
            vec![ChatMessage::assistant("starts with the assistant"), ChatMessage::system("late system")],
        ]
    }

    #[test]
    fn smollm2_renders_its_default_system_prompt() {
        let t = ChatTemplate::from_jinja(Some(SMOLLM2));
        let expected_system = "You are a helpful AI assistant named SmolLM, trained by Hugging Face";
        assert_eq!(t, ChatTemplate::ChatMl { default_system: Some(expected_system.into()) });
        let got = t.apply(&[ChatMessage::user("What is 2+2?")], true, &none()).unwrap();
        assert_eq!(
            got,
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n\
             <|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n"
        );
        let got = t.apply(&[ChatMessage::system("Be brief."), ChatMessage::user("Hi")], false, &none()).unwrap();
        assert_eq!(got, "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n");
    }

    #[test]
    fn native_chatml_equals_its_jinja_rendering() {
        let smollm2_system = "You are a helpful AI assistant named SmolLM, trained by Hugging Face";
        for default_system in [None, Some(smollm2_system), Some("It's a \\ test")] {
            let native = ChatTemplate::ChatMl { default_system: default_system.map(String::from) };
            let source = native.jinja_source();
            let rendered = jinja(&source);
            for messages in conversations() {
                for agp in [false, true] {
                    assert_eq!(
                        native.apply(&messages, agp, &none()).unwrap(),
                        rendered.apply(&messages, agp, &none()).unwrap(),
                        "{default_system:?} {messages:?} {agp}"
                    );
                }
            }
        }
    }

    #[test]
    fn chatml_round_trips_through_its_jinja_source() {
        for default_system in [None, Some("You are Qwen.")] {
            let t = ChatTemplate::ChatMl { default_system: default_system.map(String::from) };
            assert_eq!(ChatTemplate::from_jinja(Some(&t.jinja_source())), t);
        }
        assert_eq!(ChatTemplate::from_jinja(None), ChatTemplate::ChatMl { default_system: None });
        // Other templates stay Jinja and keep their text verbatim.
        let other = "{% for m in messages %}{{ m.content }}{% endfor %}";
        let t = ChatTemplate::from_jinja(Some(other));
        assert!(matches!(t, ChatTemplate::Jinja(_)));
        assert_eq!(t.jinja_source(), other);
    }

    #[test]
    fn any_template_renders_with_bos_and_eos() {
        let t = ChatTemplate::from_jinja(Some(
            "{{ bos_token }}{% for m in messages %}[{{ m['role'] | upper }}] {{ m['content'].strip() }}{% if m.role == 'assistant' %}{{ eos_token }}{% endif %}\n{% endfor %}",
        ));
        let special = SpecialTokens { bos: Some("<s>".into()), eos: Some("</s>".into()) };
        let messages = [ChatMessage::user("  hi "), ChatMessage::assistant("yo")];
        // `trim_blocks`, as in `transformers`: the newline after `{% endif %}` is dropped.
        assert_eq!(t.apply(&messages, false, &special).unwrap(), "<s>[USER] hi[ASSISTANT] yo</s>");
        // Missing special tokens are undefined and print as nothing.
        assert_eq!(t.apply(&messages, false, &none()).unwrap(), "[USER] hi[ASSISTANT] yo");
    }

    #[test]
    fn syntax_errors_are_reported_when_applied() {
        let t = ChatTemplate::from_jinja(Some("{% for m in messages %}{{ m.content }}"));
        let ChatTemplate::Jinja(inner) = &t else { panic!("{t:?}") };
        assert!(inner.error().is_some());
        let err = t.apply(&[ChatMessage::user("x")], true, &none()).unwrap_err().to_string();
        assert!(err.starts_with("chat template: syntax error:"), "{err}");
        assert!(err.contains("line 1"), "{err}");
    }

    #[test]
    fn raise_exception_surfaces_its_message() {
        let t = ChatTemplate::from_jinja(Some(
            "{% for m in messages %}{% if m.role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{{ m.content }}{% endfor %}",
        ));
        assert_eq!(t.apply(&[ChatMessage::user("x")], true, &none()).unwrap(), "x");
        let err = t.apply(&[ChatMessage::system("s")], true, &none()).unwrap_err().to_string();
        assert_eq!(err, "chat template: System role not supported (template line 1)");
    }

    #[test]
    fn strftime_now_formats_the_fixed_date() {
        assert_eq!(strftime_now("%d %b %Y"), "26 Jul 2024");
        assert_eq!(strftime_now("%Y-%m-%d"), "2024-07-26");
        assert_eq!(
            strftime_now("%A, %B %-d, %Y %H:%M (%-m/%j) 100%% %Q"),
            "Friday, July 26, 2024 00:00 (7/208) 100% %Q"
        );
    }

    #[test]
    fn tojson_matches_python_json_dumps() {
        let t = ChatTemplate::from_jinja(Some(
            "{% set x = {'name': 'f', 'args': [1, 2.5, none, true], 'html': '<a & b>', 'u': 'é'} %}{{ x | tojson }}|{{ x.args | tojson(indent=2) }}",
        ));
        assert_eq!(
            t.apply(&[], false, &none()).unwrap(),
            "{\"name\": \"f\", \"args\": [1, 2.5, null, true], \"html\": \"<a & b>\", \"u\": \"é\"}|[\n  1,\n  2.5,\n  null,\n  true\n]"
        );
    }
}
