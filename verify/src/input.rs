//! JSONL input shapes: where the response(s), the gold answer, the id and the prompt sit in one
//! JSON line. This is the one reader of generation rows: `rlverify score` and `rlbench score` (and
//! `rlverify serve`'s `/score` route) read rows through it, with the same field names, order and
//! error messages.
//!
//! Accepted shapes (fields are looked up in the order of [`RESPONSE_FIELDS`], [`GOLD_FIELDS`],
//! [`ID_FIELDS`], [`PROMPT_FIELDS`]; the first present and not null wins):
//! - flat: `{"response": "...", "gold": "..."}`, one response per line;
//! - a list of K responses per line (Qwen-eval's `{"code": ["...", "..."], "gt": "..."}`, or a
//!   list-valued `pred`);
//! - vLLM's `RequestOutput`: `{"outputs": [{"text": ..., "finish_reason": ...}]}`;
//! - OpenAI's responses: `{"choices": [{"text": ...}]}` or `{"choices": [{"message": {"content": ...}}]}`;
//! - verl style: the gold nested in `reward_model.ground_truth`, `uid` as the id;
//! - TRL style: a completion that is a list of chat messages `[{"role": "assistant", "content": ...}]`
//!   (the last assistant message is the response; `content` may be a string or a list of
//!   `{"type": "text", "text": ...}` parts); a list of such chats is K responses.
//!
//! Lines are bytes: invalid UTF-8 and Python's `NaN`/`Infinity` (what `json.dumps` writes by
//! default) are handled per line ([`parse_json`]), so one bad line never stops a file.
//!
//! Field names can be forced with dotted paths ([`FieldPath`]); a numeric segment indexes a list
//! (`messages.2.content`).
//!
//! ```
//! use rlverify::input::{parse_line, FieldSpec, Responses};
//! let rec = parse_line(br#"{"idx": 7, "completion": "42", "answer": 42}"#, &FieldSpec::default()).unwrap();
//! assert_eq!(rec.gold, "42");
//! assert_eq!(rec.responses, Responses::One("42".to_string()));
//! assert_eq!(rec.id.unwrap().0, "idx");
//! ```

use serde_json::{Map, Value};
use std::fmt;
use std::io::{self, BufRead};

/// Response fields in lookup order: full texts first, already-extracted predictions, then a whole
/// conversation (`messages`: its last assistant message).
pub const RESPONSE_FIELDS: &[&str] = &[
    "response",
    "responses",
    "completion",
    "completions",
    "generation",
    "generations",
    "output",
    "outputs",
    "choices",
    "samples",
    "model_output",
    "code",
    "text",
    "prediction",
    "predictions",
    "pred",
    "preds",
    "messages",
];

/// Gold fields in lookup order (`solution`, a whole reference solution, comes last).
pub const GOLD_FIELDS: &[&str] =
    &["gold", "answer", "ground_truth", "gt", "target", "reward_model.ground_truth", "solution"];

/// Id fields in lookup order; the first one present is copied to the output under its own name
/// and groups the samples of one problem (`uid` is verl's).
pub const ID_FIELDS: &[&str] = &["id", "idx", "problem_id", "unique_id", "question_id", "index", "uid"];

/// Prompt fields in lookup order: rows without an id are grouped by their prompt.
pub const PROMPT_FIELDS: &[&str] = &["prompt", "problem", "question", "query", "input"];

/// Suite fields in lookup order (`data_source` is verl's).
pub const SUITE_FIELDS: &[&str] = &["suite", "data_source"];

/// Fields of a one-response row holding its sample index within the problem.
pub const SAMPLE_FIELDS: &[&str] = &["sample", "sample_idx", "sample_index"];

/// A dotted path into a JSON object (`reward_model.ground_truth`, `messages.2.content`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldPath {
    text: String,
    segments: Vec<String>,
}

impl FieldPath {
    /// Parse a dotted path; errors on an empty path or an empty segment (`a..b`).
    pub fn parse(path: &str) -> Result<FieldPath, String> {
        if path.is_empty() {
            return Err("the field path is empty".to_string());
        }
        let segments: Vec<String> = path.split('.').map(str::to_string).collect();
        if segments.iter().any(String::is_empty) {
            return Err(format!("the field path `{path}` has an empty segment"));
        }
        Ok(FieldPath { text: path.to_string(), segments })
    }

    /// The path as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The value at this path, if every segment exists.
    pub fn get<'a>(&self, root: &'a Value) -> Option<&'a Value> {
        self.segments.iter().try_fold(root, |v, seg| match v {
            Value::Object(m) => m.get(seg),
            Value::Array(items) => seg.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        })
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Which fields to read; `None` means "look up the default names".
#[derive(Clone, Debug, Default)]
pub struct FieldSpec {
    /// Forced response field (`--response-field`).
    pub response: Option<FieldPath>,
    /// Forced gold field (`--gold-field`).
    pub gold: Option<FieldPath>,
    /// Forced id field (`--id-field`); a row without it has no id.
    pub id: Option<FieldPath>,
}

impl FieldSpec {
    /// The id of a parsed line: the forced id field, or the first of [`ID_FIELDS`] present (any
    /// JSON value but null), with the name it was found under.
    pub fn find_id(&self, value: &Value) -> Option<(String, Value)> {
        let (name, v) = find_field(value, self.id.as_ref(), ID_FIELDS)?;
        (!v.is_null()).then(|| (name, v.clone()))
    }
}

/// One response, or a list of K responses for the same gold.
#[derive(Clone, Debug, PartialEq)]
pub enum Responses {
    /// A single response (a string field).
    One(String),
    /// K responses (a list field), scored against the same gold.
    Many(Vec<String>),
}

impl Responses {
    /// The responses as a slice (one element for `One`).
    pub fn as_slice(&self) -> &[String] {
        match self {
            Responses::One(r) => std::slice::from_ref(r),
            Responses::Many(rs) => rs,
        }
    }
}

/// What a row says about one of its responses besides its text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResponseInfo {
    /// Why generation stopped (`stop`, `length`, ...): the response's own `finish_reason`, the
    /// row's `finish_reasons[k]`, or the row's `finish_reason` for a one-response row.
    pub finish_reason: Option<String>,
    /// Generated tokens: `tokens`, `completion_tokens`, `usage.completion_tokens` (one response),
    /// or the length of a response's `token_ids`.
    pub tokens: Option<u64>,
}

/// One input line, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// The id field's name and value (`("idx", 7)`), if the line has one.
    pub id: Option<(String, Value)>,
    /// The gold answer (a JSON number is turned into its decimal text).
    pub gold: String,
    /// The response(s) to score.
    pub responses: Responses,
    /// One entry per response, in order.
    pub info: Vec<ResponseInfo>,
    /// The prompt field's name and text (a chat prompt is its messages' contents, one per line),
    /// if the line has one: what groups rows without an id.
    pub prompt: Option<(String, String)>,
    /// The suite the row belongs to (`suite`, `data_source`), if it says.
    pub suite: Option<String>,
    /// The sample index of a one-response row (`sample`, `sample_idx`, `sample_index`).
    pub sample: Option<u64>,
}

/// What groups a row with the other samples of its problem.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GroupKey {
    /// The id's text (a string as is, a number in decimal, anything else as JSON).
    Id(String),
    /// The prompt's text, for rows without an id.
    Prompt(String),
}

impl Record {
    /// The id, else the prompt; `None` when the row has neither.
    pub fn group_key(&self) -> Option<GroupKey> {
        if let Some((_, v)) = &self.id {
            return Some(GroupKey::Id(match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }));
        }
        self.prompt.as_ref().map(|(_, p)| GroupKey::Prompt(p.clone()))
    }
}

/// Why a line could not be read. `Display` names the field involved.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InputError {
    /// The line is not JSON (serde_json's message).
    #[error("invalid JSON: {0}")]
    Json(String),
    /// The line is not UTF-8 (the byte offset of the first bad byte).
    #[error("invalid UTF-8 at byte {0} of the line")]
    Utf8(usize),
    /// The line is JSON but not an object (the kind it is).
    #[error("the line is a JSON {0}, expected an object")]
    NotObject(&'static str),
    /// None of the response fields looked for (their names).
    #[error("no response field: looked for {}", quoted_list(.0))]
    NoResponseField(Vec<String>),
    /// None of the gold fields looked for (their names).
    #[error("no gold field: looked for {}", quoted_list(.0))]
    NoGoldField(Vec<String>),
    /// A field holds the wrong kind of value.
    #[error("field `{field}` must be {expected}, found {found}")]
    WrongType {
        /// The field's (dotted) name.
        field: String,
        /// What it must hold.
        expected: &'static str,
        /// What it holds.
        found: String,
    },
    /// The field looked for is there, but null (its name).
    #[error("field `{0}` is null")]
    Null(String),
    /// A chat field (a list of messages) has no assistant message (the field's name).
    #[error("field `{0}` is a chat without an assistant message")]
    NoAssistantMessage(String),
    /// A one-response row that cannot be told apart from other problems' rows.
    #[error("no id or prompt field to group this response with the other samples of its problem: looked for {}", quoted_list(.0))]
    NoGroup(Vec<String>),
}

impl InputError {
    /// True when the error is a missing field (the fix is usually `--response-field`/`--gold-field`/`--id-field`).
    pub fn is_missing_field(&self) -> bool {
        matches!(self, InputError::NoResponseField(_) | InputError::NoGoldField(_) | InputError::NoGroup(_))
    }

    /// The [`InputError::NoGroup`] error of a row read with `fields`.
    pub fn no_group(fields: &FieldSpec) -> InputError {
        let mut names = looked_for(fields.id.as_ref(), ID_FIELDS);
        names.extend(PROMPT_FIELDS.iter().map(|s| s.to_string()));
        InputError::NoGroup(names)
    }
}

fn quoted_list(names: &[String]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

/// The JSON type name of a value, for error messages.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Parse one JSONL line (bytes without the trailing newline) into a [`Record`].
pub fn parse_line(line: &[u8], fields: &FieldSpec) -> Result<Record, InputError> {
    resolve(&parse_json(line)?, fields)
}

/// Parse one line's JSON. Invalid UTF-8 is an error naming its byte; Python's `NaN`, `Infinity`
/// and `-Infinity` outside strings (what `json.dumps` writes by default) read as null.
pub fn parse_json(line: &[u8]) -> Result<Value, InputError> {
    let text = std::str::from_utf8(line).map_err(|e| InputError::Utf8(e.valid_up_to() + 1))?;
    match serde_json::from_str(text) {
        Ok(v) => Ok(v),
        Err(e) => match python_specials_as_null(text) {
            Some(fixed) => serde_json::from_str(&fixed).map_err(|_| InputError::Json(e.to_string())),
            None => Err(InputError::Json(e.to_string())),
        },
    }
}

/// `text` with every `NaN`, `Infinity` and `-Infinity` outside strings replaced by `null`, or
/// `None` when it has none.
fn python_specials_as_null(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut i, mut last, mut in_string, mut found) = (0, 0, false, false);
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_string = true;
            i += 1;
            continue;
        }
        let word = ["-Infinity", "Infinity", "NaN"].into_iter().find(|w| bytes[i..].starts_with(w.as_bytes()));
        match word {
            Some(w) => {
                out.push_str(&text[last..i]);
                out.push_str("null");
                i += w.len();
                last = i;
                found = true;
            }
            None => i += 1,
        }
    }
    found.then(|| {
        out.push_str(&text[last..]);
        out
    })
}

/// Resolve an already-parsed JSON line into a [`Record`].
pub fn resolve(value: &Value, fields: &FieldSpec) -> Result<Record, InputError> {
    let Value::Object(obj) = value else {
        return Err(InputError::NotObject(type_name(value).trim_start_matches("a ").trim_start_matches("an ")));
    };
    let id = fields.find_id(value);
    let (gold_name, gold_value) = find_field(value, fields.gold.as_ref(), GOLD_FIELDS).ok_or_else(|| {
        null_field(value, fields.gold.as_ref(), GOLD_FIELDS)
            .unwrap_or_else(|| InputError::NoGoldField(looked_for(fields.gold.as_ref(), GOLD_FIELDS)))
    })?;
    let gold = gold_text(&gold_name, gold_value)?;
    let (resp_name, resp_value) = find_field(value, fields.response.as_ref(), RESPONSE_FIELDS).ok_or_else(|| {
        null_field(value, fields.response.as_ref(), RESPONSE_FIELDS)
            .unwrap_or_else(|| InputError::NoResponseField(looked_for(fields.response.as_ref(), RESPONSE_FIELDS)))
    })?;
    let (responses, mut info) = responses_of(&resp_name, resp_value)?;
    if let Responses::One(_) = responses {
        let row = &mut info[0];
        row.finish_reason = row.finish_reason.take().or_else(|| str_field(obj.get("finish_reason")));
        row.tokens = row.tokens.or_else(|| {
            ["tokens", "completion_tokens"]
                .iter()
                .find_map(|f| obj.get(*f).and_then(Value::as_u64))
                .or_else(|| value.pointer("/usage/completion_tokens").and_then(Value::as_u64))
        });
    } else if let Some(Value::Array(reasons)) = obj.get("finish_reasons") {
        for (k, row) in info.iter_mut().enumerate() {
            row.finish_reason = row.finish_reason.take().or_else(|| str_field(reasons.get(k)));
        }
    }
    let prompt = PROMPT_FIELDS.iter().find_map(|name| prompt_text(obj.get(*name)?).map(|p| (name.to_string(), p)));
    let suite = SUITE_FIELDS.iter().find_map(|f| str_field(obj.get(*f)));
    let sample = SAMPLE_FIELDS.iter().find_map(|f| obj.get(*f).and_then(Value::as_u64));
    Ok(Record { id, gold, responses, info, prompt, suite, sample })
}

fn str_field(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).map(str::to_string)
}

/// A prompt as text: a string, or a chat's message contents one per line; an empty prompt is none.
fn prompt_text(v: &Value) -> Option<String> {
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Array(items) if is_chat(items) => items
            .iter()
            .map(|m| match m.get("content") {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => String::new(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return None,
    };
    (!text.trim().is_empty()).then_some(text)
}

fn looked_for(forced: Option<&FieldPath>, defaults: &[&str]) -> Vec<String> {
    match forced {
        Some(p) => vec![p.to_string()],
        None => defaults.iter().map(|s| s.to_string()).collect(),
    }
}

/// [`InputError::Null`] for the first of the fields looked for that is there but null: a row whose
/// response is `null` says so, instead of "no response field".
fn null_field(root: &Value, forced: Option<&FieldPath>, defaults: &[&str]) -> Option<InputError> {
    let names = looked_for(forced, defaults);
    names
        .into_iter()
        .find(|name| FieldPath::parse(name).ok().and_then(|p| p.get(root).cloned()) == Some(Value::Null))
        .map(InputError::Null)
}

/// The forced path, or the first default name present (null counts as absent).
fn find_field<'a>(root: &'a Value, forced: Option<&FieldPath>, defaults: &[&str]) -> Option<(String, &'a Value)> {
    if let Some(path) = forced {
        return path.get(root).map(|v| (path.to_string(), v));
    }
    defaults.iter().find_map(|name| {
        let path = FieldPath::parse(name).ok()?;
        match path.get(root) {
            Some(Value::Null) | None => None,
            Some(v) => Some((name.to_string(), v)),
        }
    })
}

/// A gold string or number; a list of exactly one of them (OlympiadBench's `final_answer`) is
/// that element. Longer lists are refused: whether they mean "all of" or "any of" is not ours to
/// guess.
fn gold_text(field: &str, v: &Value) -> Result<String, InputError> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Array(items) if items.len() == 1 && (items[0].is_string() || items[0].is_number()) => {
            gold_text(field, &items[0])
        }
        other => Err(InputError::WrongType {
            field: field.to_string(),
            expected: "a string, a number or a list of one of them",
            found: type_name(other).to_string(),
        }),
    }
}

const RESPONSE_TYPES: &str = "a string, a list of strings or a list of chat messages";
const ITEM_TYPES: &str = "a string, a list of chat messages, or an object with `text` or `message.content`";

fn responses_of(field: &str, v: &Value) -> Result<(Responses, Vec<ResponseInfo>), InputError> {
    match v {
        Value::String(s) => Ok((Responses::One(s.clone()), vec![ResponseInfo::default()])),
        Value::Array(items) if is_chat(items) => {
            Ok((Responses::One(assistant_text(field, items)?), vec![ResponseInfo::default()]))
        }
        Value::Array(items) => {
            let mut texts = Vec::with_capacity(items.len());
            let mut info = Vec::with_capacity(items.len());
            for (k, item) in items.iter().enumerate() {
                let name = format!("{field}[{k}]");
                let (text, i) = match item {
                    Value::String(s) => (s.clone(), ResponseInfo::default()),
                    Value::Array(msgs) if is_chat(msgs) => (assistant_text(&name, msgs)?, ResponseInfo::default()),
                    Value::Object(o) => object_response(&name, o)?,
                    other => {
                        return Err(InputError::WrongType {
                            field: name,
                            expected: ITEM_TYPES,
                            found: type_name(other).to_string(),
                        })
                    }
                };
                texts.push(text);
                info.push(i);
            }
            Ok((Responses::Many(texts), info))
        }
        other => Err(InputError::WrongType {
            field: field.to_string(),
            expected: RESPONSE_TYPES,
            found: type_name(other).to_string(),
        }),
    }
}

/// One response object: vLLM's `{"text", "finish_reason", "token_ids"}`, OpenAI's completion
/// choice `{"text", "finish_reason"}` or chat choice `{"message": {"content"}}`, or
/// `{"response"|"content"}`.
fn object_response(name: &str, o: &Map<String, Value>) -> Result<(String, ResponseInfo), InputError> {
    let info = ResponseInfo {
        finish_reason: str_field(o.get("finish_reason")),
        tokens: o
            .get("tokens")
            .and_then(Value::as_u64)
            .or_else(|| o.get("token_ids").and_then(Value::as_array).map(|t| t.len() as u64)),
    };
    for key in ["text", "response", "content"] {
        match o.get(key) {
            Some(Value::String(s)) => return Ok((s.clone(), info)),
            Some(Value::Null) | None => {}
            Some(other) => {
                return Err(InputError::WrongType {
                    field: format!("{name}.{key}"),
                    expected: "a string",
                    found: type_name(other).to_string(),
                })
            }
        }
    }
    if let Some(msg) = o.get("message") {
        let text = message_content(&format!("{name}.message"), msg)?;
        return Ok((text, info));
    }
    Err(InputError::WrongType { field: name.to_string(), expected: ITEM_TYPES, found: "an object without them".into() })
}

/// A non-empty list whose elements are all objects with a `role`.
fn is_chat(items: &[Value]) -> bool {
    !items.is_empty() && items.iter().all(|m| m.get("role").is_some())
}

/// The content of the last assistant message of a chat.
fn assistant_text(field: &str, msgs: &[Value]) -> Result<String, InputError> {
    let (k, msg) = msgs
        .iter()
        .enumerate()
        .rev()
        .find(|(_, m)| m.get("role").and_then(Value::as_str) == Some("assistant"))
        .ok_or_else(|| InputError::NoAssistantMessage(field.to_string()))?;
    message_content(&format!("{field}[{k}]"), msg)
}

/// A chat message's `content`: a string, or the concatenated text of its content parts (a null
/// content, as a message with only tool calls has, is empty).
fn message_content(field: &str, msg: &Value) -> Result<String, InputError> {
    let name = format!("{field}.content");
    match msg.get("content") {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Null) => Ok(String::new()),
        Some(Value::Array(parts)) => parts
            .iter()
            .enumerate()
            .map(|(j, p)| match p {
                Value::String(s) => Ok(s.as_str()),
                Value::Object(o) => match o.get("text") {
                    Some(Value::String(s)) => Ok(s.as_str()),
                    // Non-text parts (images, tool calls) carry no answer.
                    _ => Ok(""),
                },
                other => Err(InputError::WrongType {
                    field: format!("{name}[{j}]"),
                    expected: "a string or a content part object",
                    found: type_name(other).to_string(),
                }),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(|texts| texts.concat()),
        Some(other) => Err(InputError::WrongType {
            field: name,
            expected: "a string or a list of content parts",
            found: type_name(other).to_string(),
        }),
        None => Err(InputError::WrongType { field: name, expected: "a string", found: "nothing".to_string() }),
    }
}

/// One non-blank line of a JSONL stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// 1-based line number in the stream.
    pub number: u64,
    /// The line without its line ending (and, on line 1, without a UTF-8 byte-order mark).
    pub bytes: Vec<u8>,
}

/// Reads a JSONL stream as bytes, line by line or in bounded chunks, skipping blank lines and
/// keeping line numbers. Bytes, so that invalid UTF-8 is one line's error ([`parse_json`]).
pub struct JsonLines<R> {
    reader: R,
    next_number: u64,
    /// Bytes read so far (for progress bars).
    pub bytes_read: u64,
    done: bool,
}

impl<R: BufRead> JsonLines<R> {
    /// Reads lines from `reader`, numbering them from 1.
    pub fn new(reader: R) -> Self {
        JsonLines { reader, next_number: 1, bytes_read: 0, done: false }
    }

    /// The next non-blank line, or `None` at the end of the stream.
    pub fn next_line(&mut self) -> io::Result<Option<Line>> {
        while !self.done {
            let mut bytes = Vec::new();
            let n = self.reader.read_until(b'\n', &mut bytes)?;
            if n == 0 {
                self.done = true;
                break;
            }
            self.bytes_read += n as u64;
            let number = self.next_number;
            self.next_number += 1;
            if bytes.last() == Some(&b'\n') {
                bytes.pop();
            }
            if bytes.last() == Some(&b'\r') {
                bytes.pop();
            }
            if number == 1 && bytes.starts_with(b"\xEF\xBB\xBF") {
                bytes.drain(..3);
            }
            if !bytes.iter().all(u8::is_ascii_whitespace) {
                return Ok(Some(Line { number, bytes }));
            }
        }
        Ok(None)
    }

    /// The next chunk of at most `max_lines` lines, stopping early once `max_bytes` are held.
    /// Returns an empty chunk at the end of the stream.
    pub fn next_chunk(&mut self, max_lines: usize, max_bytes: usize) -> io::Result<Vec<Line>> {
        let mut chunk = Vec::new();
        let mut held = 0usize;
        while chunk.len() < max_lines && held < max_bytes {
            match self.next_line()? {
                Some(line) => {
                    held += line.bytes.len();
                    chunk.push(line);
                }
                None => break,
            }
        }
        Ok(chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Record, InputError> {
        parse_line(line.as_bytes(), &FieldSpec::default())
    }

    fn one(s: &str) -> Responses {
        Responses::One(s.to_string())
    }

    #[test]
    fn flat_shapes() {
        let cases = [
            (r#"{"response": "r", "gold": "g"}"#, "r", "g"),
            (r#"{"completion": "r", "answer": "g"}"#, "r", "g"),
            (r#"{"pred": "r", "ground_truth": "g"}"#, "r", "g"),
            (r#"{"prediction": "r", "gt": "g"}"#, "r", "g"),
            (r#"{"output": "r", "solution": "g"}"#, "r", "g"),
            (r#"{"generation": "r", "gold": 12.5}"#, "r", "12.5"),
            (r#"{"generation": "r", "gold": ["g"]}"#, "r", "g"),
            (r#"{"response": "r", "reward_model": {"ground_truth": "g"}}"#, "r", "g"),
        ];
        for (line, resp, gold) in cases {
            let rec = parse(line).unwrap_or_else(|e| panic!("{line}: {e}"));
            assert_eq!(rec.responses, one(resp), "{line}");
            assert_eq!(rec.gold, gold, "{line}");
        }
    }

    #[test]
    fn field_priority() {
        // Full texts win over extracted predictions; `gold` wins over `solution`.
        let rec = parse(r#"{"pred": ["p"], "code": ["full"], "solution": "s", "gt": "g"}"#).unwrap();
        assert_eq!(rec.responses, Responses::Many(vec!["full".into()]));
        assert_eq!(rec.gold, "g");
        // A null field counts as absent.
        let rec = parse(r#"{"response": null, "completion": "c", "gold": null, "answer": "a"}"#).unwrap();
        assert_eq!((rec.responses, rec.gold.as_str()), (one("c"), "a"));
    }

    #[test]
    fn qwen_eval_lists() {
        let rec = parse(r#"{"idx": 3, "code": ["a", "b", "c"], "gt": "1"}"#).unwrap();
        assert_eq!(rec.responses, Responses::Many(vec!["a".into(), "b".into(), "c".into()]));
        assert_eq!(rec.id, Some(("idx".to_string(), Value::from(3))));
    }

    #[test]
    fn trl_chat_messages() {
        let rec = parse(
            r#"{"completion": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "first"},
                {"role": "assistant", "content": [{"type": "text", "text": "4"}, {"type": "text", "text": "2"}]}],
                "answer": "42"}"#,
        )
        .unwrap();
        assert_eq!(rec.responses, one("42"));
        // A list of chats is K responses.
        let rec = parse(
            r#"{"completions": [[{"role": "assistant", "content": "a"}], [{"role": "assistant", "content": "b"}]],
                "answer": "1"}"#,
        )
        .unwrap();
        assert_eq!(rec.responses, Responses::Many(vec!["a".into(), "b".into()]));
        let err = parse(r#"{"completion": [{"role": "user", "content": "q"}], "answer": "1"}"#).unwrap_err();
        assert_eq!(err, InputError::NoAssistantMessage("completion".into()));
        // A whole conversation answers with its last assistant message.
        let rec = parse(
            r#"{"messages": [{"role": "user", "content": "1+1?"}, {"role": "assistant", "content": "\\boxed{2}"}],
                "answer": "2"}"#,
        )
        .unwrap();
        assert_eq!(rec.responses, one("\\boxed{2}"));
    }

    /// A field that is there but null says so (the same error in every tool that reads rows).
    #[test]
    fn null_fields_are_named() {
        assert_eq!(parse(r#"{"response": null, "answer": "1"}"#).unwrap_err(), InputError::Null("response".into()));
        assert_eq!(parse(r#"{"response": "1", "gold": null}"#).unwrap_err(), InputError::Null("gold".into()));
        assert!(matches!(parse(r#"{"answer": "1"}"#), Err(InputError::NoResponseField(_))));
    }

    #[test]
    fn forced_fields_and_paths() {
        let fields = FieldSpec {
            response: Some(FieldPath::parse("out.texts.1").unwrap()),
            gold: Some(FieldPath::parse("meta.target").unwrap()),
            id: Some(FieldPath::parse("meta.key").unwrap()),
        };
        let rec =
            parse_line(br#"{"out": {"texts": ["x", "y"]}, "meta": {"target": "t"}, "gold": "no"}"#, &fields).unwrap();
        assert_eq!((rec.responses, rec.gold.as_str(), rec.id), (one("y"), "t", None));
        let rec = parse_line(br#"{"out": {"texts": ["x", "y"]}, "meta": {"target": "t", "key": 4}, "id": 1}"#, &fields)
            .unwrap();
        assert_eq!(rec.id, Some(("meta.key".to_string(), Value::from(4))));
        let err = parse_line(br#"{"response": "r", "gold": "g"}"#, &fields).unwrap_err();
        assert_eq!(err, InputError::NoGoldField(vec!["meta.target".into()]));
        assert!(FieldPath::parse("a..b").is_err());
        assert!(FieldPath::parse("").is_err());
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            (r#"{"response": 5, "gold": "g"}"#, "field `response` must be"),
            (
                r#"{"response": "r", "gold": [1, 2]}"#,
                "field `gold` must be a string, a number or a list of one of them, found a list",
            ),
            (r#"{"response": "r", "gold": {"a": 1}}"#, "found an object"),
            (r#"{"responses": ["a", 3], "gold": "g"}"#, "field `responses[1]` must be"),
            (r#"{"response": "r"}"#, "no gold field: looked for `gold`"),
            (r#"{"gold": "g"}"#, "no response field: looked for `response`"),
            (r#"[1, 2]"#, "the line is a JSON list, expected an object"),
            (r#"{"response": "r", "#, "invalid JSON"),
        ];
        for (line, want) in cases {
            let err = parse(line).expect_err(line).to_string();
            assert!(err.contains(want), "{line}: got {err:?}, want {want:?}");
        }
    }

    #[test]
    fn ids() {
        for (line, key) in [
            (r#"{"id": "a", "idx": 1, "response": "r", "gold": "g"}"#, "id"),
            (r#"{"unique_id": "u", "response": "r", "gold": "g"}"#, "unique_id"),
            (r#"{"problem_id": 9, "response": "r", "gold": "g"}"#, "problem_id"),
        ] {
            assert_eq!(parse(line).unwrap().id.map(|(k, _)| k).as_deref(), Some(key), "{line}");
        }
        assert_eq!(parse(r#"{"response": "r", "gold": "g"}"#).unwrap().id, None);
    }

    #[test]
    fn vllm_and_openai_shapes() {
        // vLLM's RequestOutput: K outputs with their finish reasons and token ids.
        let rec = parse(
            r#"{"prompt": "q", "outputs": [{"text": "a", "finish_reason": "stop", "token_ids": [1, 2, 3]},
                {"text": "b", "finish_reason": "length", "token_ids": [4]}], "answer": "1"}"#,
        )
        .unwrap();
        assert_eq!(rec.responses, Responses::Many(vec!["a".into(), "b".into()]));
        assert_eq!(rec.info[0], ResponseInfo { finish_reason: Some("stop".into()), tokens: Some(3) });
        assert_eq!(rec.info[1], ResponseInfo { finish_reason: Some("length".into()), tokens: Some(1) });
        assert_eq!(rec.prompt, Some(("prompt".to_string(), "q".to_string())));
        // OpenAI completions and chat choices.
        let rec = parse(r#"{"choices": [{"index": 0, "text": "x", "finish_reason": "stop"}], "gold": "1"}"#).unwrap();
        assert_eq!(
            (rec.responses, rec.info[0].finish_reason.as_deref()),
            (Responses::Many(vec!["x".into()]), Some("stop"))
        );
        let rec = parse(
            r#"{"choices": [{"message": {"role": "assistant", "content": "y"}}, {"message": {"content": null}}], "gold": "1"}"#,
        )
        .unwrap();
        assert_eq!(rec.responses, Responses::Many(vec!["y".into(), String::new()]));
        let err = parse(r#"{"choices": [{"index": 0}], "gold": "1"}"#).unwrap_err().to_string();
        assert!(err.starts_with("field `choices[0]` must be"), "{err}");
        // One-response rows: finish reason and token counts of the row.
        let rec =
            parse(r#"{"response": "r", "gold": "g", "finish_reason": "length", "usage": {"completion_tokens": 9}}"#)
                .unwrap();
        assert_eq!(rec.info, vec![ResponseInfo { finish_reason: Some("length".into()), tokens: Some(9) }]);
        let rec = parse(r#"{"responses": ["a", "b"], "finish_reasons": ["stop", "length"], "gold": "g"}"#).unwrap();
        assert_eq!(rec.info[1].finish_reason.as_deref(), Some("length"));
    }

    #[test]
    fn list_valued_predictions_and_verl_rows() {
        let rec = parse(r#"{"idx": 0, "pred": ["1", "2"], "gt": "5"}"#).unwrap();
        assert_eq!(rec.responses, Responses::Many(vec!["1".into(), "2".into()]));
        let rec = parse(
            r#"{"uid": "u-7", "data_source": "aime", "input": "q", "output": "r", "reward_model": {"ground_truth": "3"}}"#,
        )
        .unwrap();
        assert_eq!(rec.id, Some(("uid".to_string(), Value::from("u-7"))));
        assert_eq!(rec.group_key(), Some(GroupKey::Id("u-7".into())));
        assert_eq!((rec.suite.as_deref(), rec.gold.as_str()), (Some("aime"), "3"));
    }

    #[test]
    fn group_keys() {
        let key = |line: &str| parse(line).unwrap().group_key();
        assert_eq!(key(r#"{"id": 12, "response": "r", "gold": "g"}"#), Some(GroupKey::Id("12".into())));
        assert_eq!(key(r#"{"id": "12", "response": "r", "gold": "g"}"#), Some(GroupKey::Id("12".into())));
        assert_eq!(key(r#"{"prompt": "p", "response": "r", "gold": "g"}"#), Some(GroupKey::Prompt("p".into())));
        // TRL: a chat prompt is its contents.
        assert_eq!(
            key(r#"{"prompt": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
                "completion": [{"role": "assistant", "content": "r"}], "solution": "g"}"#),
            Some(GroupKey::Prompt("s\nu".into()))
        );
        assert_eq!(key(r#"{"response": "r", "gold": "g"}"#), None);
        assert_eq!(
            InputError::no_group(&FieldSpec::default()).to_string(),
            "no id or prompt field to group this response with the other samples of its problem: looked for \
             `id`, `idx`, `problem_id`, `unique_id`, `question_id`, `index`, `uid`, `prompt`, `problem`, `question`, \
             `query`, `input`"
        );
    }

    #[test]
    fn python_nan_and_invalid_utf8_are_per_line() {
        // json.dumps writes NaN and Infinity bare; they read as null, strings are left alone.
        let rec =
            parse(r#"{"response": "NaN is \"Infinity\"", "gold": "1", "score": NaN, "x": [-Infinity, Infinity]}"#)
                .unwrap();
        assert_eq!(rec.responses, one("NaN is \"Infinity\""));
        assert_eq!(parse_json(b"[NaN]"), Ok(Value::Array(vec![Value::Null])));
        let err = parse_line(b"{\"response\": \"\xff\", \"gold\": \"1\"}", &FieldSpec::default()).unwrap_err();
        assert_eq!(err.to_string(), "invalid UTF-8 at byte 15 of the line");
        // Still invalid after the rewrite: the original error.
        assert!(matches!(parse(r#"{"a": NaN,}"#), Err(InputError::Json(_))));
    }

    #[test]
    fn lines_skip_blanks_and_keep_numbers() {
        let data = b"\xEF\xBB\xBF{\"a\":1}\r\n\n  \n{\"b\":\xff}\n{\"c\":3}";
        let mut lines = JsonLines::new(io::Cursor::new(data.to_vec()));
        let first = lines.next_chunk(2, usize::MAX).unwrap();
        assert_eq!(first.iter().map(|l| l.number).collect::<Vec<_>>(), vec![1, 4]);
        assert_eq!(first[0].bytes, b"{\"a\":1}");
        assert_eq!(first[1].bytes, b"{\"b\":\xff}");
        let rest = lines.next_line().unwrap();
        assert_eq!(rest, Some(Line { number: 5, bytes: b"{\"c\":3}".to_vec() }));
        assert_eq!(lines.next_line().unwrap(), None);
        assert_eq!(lines.bytes_read, data.len() as u64);
    }

    #[test]
    fn chunks_respect_the_byte_bound() {
        let mut lines = JsonLines::new(io::Cursor::new(b"{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n".to_vec()));
        assert_eq!(lines.next_chunk(100, 1).unwrap().len(), 1);
        assert_eq!(lines.next_chunk(100, 1000).unwrap().len(), 2);
        assert!(lines.next_chunk(100, 1000).unwrap().is_empty());
    }
}
