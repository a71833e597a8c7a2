//! JSONL input shapes: where the response(s), the gold answer and the id sit in one JSON line.
//!
//! Accepted shapes (fields are looked up in the order listed; the first present wins):
//! - flat: `{"response": "...", "gold": "..."}`, one response per line;
//! - Qwen-eval style: a list of K responses per line (`{"code": ["...", "..."], "gt": "..."}`);
//! - verl style: the gold nested in `reward_model.ground_truth`;
//! - TRL style: a completion that is a list of chat messages `[{"role": "assistant", "content": ...}]`
//!   (the last assistant message is the response; `content` may be a string or a list of
//!   `{"type": "text", "text": ...}` parts).
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

/// Response fields in lookup order: full texts first, already-extracted predictions last.
pub const RESPONSE_FIELDS: &[&str] = &[
    "response",
    "responses",
    "completion",
    "completions",
    "generation",
    "generations",
    "output",
    "outputs",
    "code",
    "prediction",
    "predictions",
    "pred",
    "preds",
];

/// Gold fields in lookup order (`solution`, a whole reference solution, comes last).
pub const GOLD_FIELDS: &[&str] = &["gold", "answer", "ground_truth", "gt", "reward_model.ground_truth", "solution"];

/// Id fields in lookup order; the first one present is copied to the output under its own name.
pub const ID_FIELDS: &[&str] = &["id", "idx", "problem_id", "unique_id"];

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
}

/// One response, or a list of K responses for the same gold.
#[derive(Clone, Debug, PartialEq)]
pub enum Responses {
    One(String),
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

/// One input line, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// The id field's name and value (`("idx", 7)`), if the line has one.
    pub id: Option<(String, Value)>,
    /// The gold answer (a JSON number is turned into its decimal text).
    pub gold: String,
    pub responses: Responses,
}

/// Why a line could not be read. `Display` names the field involved.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InputError {
    #[error("invalid JSON: {0}")]
    Json(String),
    #[error("the line is a JSON {0}, expected an object")]
    NotObject(&'static str),
    #[error("no response field: looked for {}", quoted_list(.0))]
    NoResponseField(Vec<String>),
    #[error("no gold field: looked for {}", quoted_list(.0))]
    NoGoldField(Vec<String>),
    #[error("field `{field}` must be {expected}, found {found}")]
    WrongType { field: String, expected: &'static str, found: String },
    #[error("field `{0}` is a chat without an assistant message")]
    NoAssistantMessage(String),
}

impl InputError {
    /// True when the error is a missing field (the fix is usually `--response-field`/`--gold-field`).
    pub fn is_missing_field(&self) -> bool {
        matches!(self, InputError::NoResponseField(_) | InputError::NoGoldField(_))
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
    let value: Value = serde_json::from_slice(line).map_err(|e| InputError::Json(e.to_string()))?;
    resolve(&value, fields)
}

/// Resolve an already-parsed JSON line into a [`Record`].
pub fn resolve(value: &Value, fields: &FieldSpec) -> Result<Record, InputError> {
    let Value::Object(obj) = value else {
        return Err(InputError::NotObject(type_name(value).trim_start_matches("a ").trim_start_matches("an ")));
    };
    let id = find_id(obj);
    let (gold_name, gold_value) = find_field(value, fields.gold.as_ref(), GOLD_FIELDS)
        .ok_or_else(|| InputError::NoGoldField(looked_for(fields.gold.as_ref(), GOLD_FIELDS)))?;
    let gold = gold_text(&gold_name, gold_value)?;
    let (resp_name, resp_value) = find_field(value, fields.response.as_ref(), RESPONSE_FIELDS)
        .ok_or_else(|| InputError::NoResponseField(looked_for(fields.response.as_ref(), RESPONSE_FIELDS)))?;
    let responses = responses_of(&resp_name, resp_value)?;
    Ok(Record { id, gold, responses })
}

/// The first id field present, with its value (any JSON value but null).
pub fn find_id(obj: &Map<String, Value>) -> Option<(String, Value)> {
    ID_FIELDS.iter().find_map(|name| match obj.get(*name) {
        Some(Value::Null) | None => None,
        Some(v) => Some((name.to_string(), v.clone())),
    })
}

fn looked_for(forced: Option<&FieldPath>, defaults: &[&str]) -> Vec<String> {
    match forced {
        Some(p) => vec![p.to_string()],
        None => defaults.iter().map(|s| s.to_string()).collect(),
    }
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

fn responses_of(field: &str, v: &Value) -> Result<Responses, InputError> {
    match v {
        Value::String(s) => Ok(Responses::One(s.clone())),
        Value::Array(items) if is_chat(items) => Ok(Responses::One(assistant_text(field, items)?)),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(k, item)| {
                let name = format!("{field}[{k}]");
                match item {
                    Value::String(s) => Ok(s.clone()),
                    Value::Array(msgs) if is_chat(msgs) => assistant_text(&name, msgs),
                    other => Err(InputError::WrongType {
                        field: name,
                        expected: "a string or a list of chat messages",
                        found: type_name(other).to_string(),
                    }),
                }
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Responses::Many),
        other => Err(InputError::WrongType {
            field: field.to_string(),
            expected: RESPONSE_TYPES,
            found: type_name(other).to_string(),
        }),
    }
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
    let name = format!("{field}[{k}].content");
    match msg.get("content") {
        Some(Value::String(s)) => Ok(s.clone()),
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
    }

    #[test]
    fn forced_fields_and_paths() {
        let fields = FieldSpec {
            response: Some(FieldPath::parse("out.texts.1").unwrap()),
            gold: Some(FieldPath::parse("meta.target").unwrap()),
        };
        let rec =
            parse_line(br#"{"out": {"texts": ["x", "y"]}, "meta": {"target": "t"}, "gold": "no"}"#, &fields).unwrap();
        assert_eq!((rec.responses, rec.gold.as_str()), (one("y"), "t"));
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
}
