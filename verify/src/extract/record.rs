//! Structured output (a JSON object, a YAML mapping) whose answer field has siblings: another
//! field that holds a value offers a second candidate (`{"answer": 3, "alternative": 4}`,
//! `answer: 3` then `backup: 4`), unless its key names something that describes the answer
//! rather than offering one (the lexicon's `Metadata` class: `confidence`, `steps`,
//! `explanation`, ...). A field's value counts when it holds a digit; an equation counts by its
//! right side.
//!
//! Cost: one pass over the record around the answer, at most [`MAX_RECORD_BYTES`] on each side.

use super::scan::floor_boundary;
use crate::lexicon::{self, Class};

/// How far the record around an answer is read on each side (bytes).
const MAX_RECORD_BYTES: usize = 2000;
/// Most fields read.
const MAX_FIELDS: usize = 32;

/// The values of the other fields of the record whose answer field ends at byte `end` of `text`.
pub(crate) fn second_fields(text: &str, end: usize) -> Vec<String> {
    let end = floor_boundary(text, end);
    // Only an answer whose line is a field (`"answer": 3`, `answer: 3`) is read further.
    let line_start = memchr::memrchr(b'\n', &text.as_bytes()[..end]).map_or(0, |k| k + 1);
    let line = &text[line_start..end];
    if line.contains("\":") {
        if let Some((open, close)) = json_object(text, end) {
            return fields(&text[open + 1..close], end - open - 1, true);
        }
    }
    if machine_key(line).is_some() {
        if let Some((from, to)) = yaml_block(text, end) {
            return fields(&text[from..to], end - from, false);
        }
    }
    Vec::new()
}

/// The key of a `key: value` line when it is machine-style (lower-case ASCII, digits, `_`).
fn machine_key(line: &str) -> Option<&str> {
    let t = line.trim_start_matches([' ', '-']);
    let (k, _) = t.split_once(':')?;
    let k = k.trim_matches('"');
    let machine = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_';
    (!k.is_empty() && k.len() <= 40 && k.bytes().all(machine)).then_some(k)
}

/// The span of the innermost JSON object around byte `at`: its `{` and its `}`.
fn json_object(text: &str, at: usize) -> Option<(usize, usize)> {
    let b = text.as_bytes();
    let from = floor_boundary(text, at.saturating_sub(MAX_RECORD_BYTES));
    let mut depth = 0i32;
    let mut open = None;
    for k in memchr::memrchr2_iter(b'{', b'}', &b[from..at]).map(|k| from + k) {
        match b[k] {
            b'}' => depth += 1,
            _ if depth > 0 => depth -= 1,
            _ if k > 0 && b[k - 1] == b'\\' => {}
            _ => {
                open = Some(k);
                break;
            }
        }
    }
    let open = open?;
    // A JSON object opens with a quoted key.
    if !text[open + 1..].trim_start().starts_with('"') {
        return None;
    }
    let to = floor_boundary(text, (at + MAX_RECORD_BYTES).min(text.len()));
    let mut depth = 0i32;
    for k in memchr::memchr2_iter(b'{', b'}', &b[at..to]).map(|k| at + k) {
        match b[k] {
            b'{' => depth += 1,
            _ if depth > 0 => depth -= 1,
            _ => return Some((open, k)),
        }
    }
    None
}

/// The lines around byte `at` that form a YAML mapping (`key: value` lines with machine-style
/// keys, lower-case with `_`, no blank line between) whose answer line is keyed by an answer word:
/// their span, when there are at least two.
fn yaml_block(text: &str, at: usize) -> Option<(usize, usize)> {
    let is_field = |line: &str| machine_key(line).is_some();
    let line_start = text[..at].rfind('\n').map_or(0, |k| k + 1);
    let line_end = text[at..].find('\n').map_or(text.len(), |k| at + k);
    // The answer's own line is a field whose key names the answer (`answer:`, `final_answer:`).
    let answer_key = machine_key(&text[line_start..line_end])?;
    if !answer_key.split('_').any(|part| lexicon::is(part, Class::AnswerTagName)) {
        return None;
    }
    let (mut from, mut to, mut count) = (line_start, line_end, 1);
    while from > 0 && count < MAX_FIELDS {
        let prev_start = text[..from - 1].rfind('\n').map_or(0, |k| k + 1);
        if !is_field(&text[prev_start..from - 1]) {
            break;
        }
        (from, count) = (prev_start, count + 1);
    }
    while to < text.len() && count < MAX_FIELDS {
        let next_end = text[to + 1..].find('\n').map_or(text.len(), |k| to + 1 + k);
        if !is_field(&text[to + 1..next_end]) {
            break;
        }
        (to, count) = (next_end, count + 1);
    }
    (count >= 2).then_some((from, to))
}

/// The values of the fields of `body` other than the one that holds byte `answer_at`.
fn fields(body: &str, answer_at: usize, json: bool) -> Vec<String> {
    let mut out = Vec::new();
    let separator = if json { b',' } else { b'\n' };
    let mut offset = 0;
    for field in split_top_level(body, separator).take(MAX_FIELDS) {
        let (start, stop) = (offset, offset + field.len());
        offset = stop + 1;
        if (start..=stop).contains(&answer_at) {
            continue;
        }
        let Some((key, value)) = field.split_once(':') else { continue };
        let key = key.trim().trim_matches(['"', '-', ' ']);
        if describes(key) {
            continue;
        }
        let value = value.trim().trim_matches(['"', ' ']).trim();
        if !value.bytes().any(|c| c.is_ascii_digit()) {
            continue;
        }
        let value = value.rsplit('=').next().unwrap_or(value).trim();
        if !value.is_empty() {
            out.push(value.to_string());
        }
    }
    out
}

/// The parts of `s` between top-level `sep` (outside braces, brackets and strings). Every byte
/// looked at is ASCII, so each cut is at a `char` boundary.
fn split_top_level(s: &str, sep: u8) -> impl Iterator<Item = &str> {
    let mut parts = Vec::new();
    let (mut depth, mut in_string, mut escaped, mut start) = (0i32, false, false, 0);
    let b = s.as_bytes();
    let mut k = 0;
    while k < b.len() {
        if in_string && !escaped {
            // Jump over the string's plain bytes (a long `"reasoning"` value) to its next quote
            // or escape.
            match memchr::memchr2(b'"', b'\\', &b[k..]) {
                Some(off) => k += off,
                None => break,
            }
        }
        let c = b[k];
        k += 1;
        match c {
            _ if escaped => escaped = false,
            b'\\' => escaped = true,
            b'"' => in_string = !in_string,
            b'{' | b'[' if !in_string => depth += 1,
            b'}' | b']' if !in_string => depth -= 1,
            c if c == sep && depth == 0 && !in_string => {
                parts.push(&s[start..k - 1]);
                start = k;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts.into_iter()
}

/// Whether a key names something that describes the answer (`confidence`, `num_steps`).
fn describes(key: &str) -> bool {
    key.split(|c: char| !c.is_ascii_alphabetic()).any(|w| lexicon::is(w, Class::Metadata))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn after(text: &str, value: &str) -> Vec<String> {
        let at = text.find(value).unwrap() + value.len();
        second_fields(text, at)
    }

    #[test]
    fn sibling_values_are_candidates() {
        assert_eq!(after(r#"{"answer": 3, "alternative": 4}"#, "3"), vec!["4"]);
        assert_eq!(after(r#"{"fallback": "7", "final_answer": "3"}"#, "\"3"), vec!["7"]);
        assert_eq!(after("answer: 3\nbackup: 4\n", "3"), vec!["4"]);
    }

    #[test]
    fn descriptions_are_not() {
        assert!(after(r#"{"answer": 3, "confidence": 0.9, "steps": 4}"#, "3").is_empty());
        assert!(after(r#"{"answer": 12, "explanation": "3 * 4 = 12"}"#, "12").is_empty());
        assert!(after("answer: 3\nreasoning: we add 1 and 2\n", "3").is_empty());
        assert!(after("The answer: 3.\n\nSo we are done.", "3").is_empty());
        assert!(after("Weekly: 100 + 20 = 120\nA: 120", "A: 120").is_empty());
    }
}
