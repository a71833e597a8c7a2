//! Structured output (a JSON object, a YAML mapping) whose answer field has siblings: another
//! field that holds a value offers a second candidate (`{"answer": 3, "alternative": 4}`,
//! `answer: 3` then `backup: 4`), unless its key names something that describes the answer
//! rather than offering one (the lexicon's `Metadata` class: `confidence`, `steps`,
//! `explanation`, ...). A field's value counts when it holds a digit; an equation counts by its
//! right side. A record after the answer that restates it (a JSON object, YAML lines or XML with
//! a field named for the answer, after `\boxed{3}`) offers each of its values the same way.
//!
//! Cost: one pass over the record around the answer, at most [`MAX_RECORD_BYTES`] on each side.

use super::scan::{cap, floor_boundary};
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
    records_after(cap(&text[end..], MAX_AFTER_BYTES))
}

/// How far after the answer a record that restates it is looked for (bytes).
const MAX_AFTER_BYTES: usize = 4000;

/// The values of the first structured record in `rest` (the text after an answer) that has a
/// field named for the answer (`answer`, `final_answer`, `result`, `value`, `<answers>`): a JSON
/// object, a run of YAML `key: value` lines or XML elements and attributes. The record restates
/// the answer, so each of its values is a candidate (`{"answer": 3, "alternative": 4}` offers 3
/// and 4; the scorer calls the same value a restatement), except those whose key describes it.
fn records_after(rest: &str) -> Vec<String> {
    let b = rest.as_bytes();
    let mut out = Vec::new();
    let mut line_start = 0;
    while line_start < b.len() && out.is_empty() {
        let line_end = memchr::memchr(b'\n', &b[line_start..]).map_or(b.len(), |k| line_start + k);
        let line = &rest[line_start..line_end];
        let t = line.trim_start();
        if t.starts_with('{') && t[1..].trim_start().starts_with('"') {
            let open = line_start + (line.len() - t.len());
            if let Some(close) = closing_brace(rest, open) {
                out = answer_record(fields_of(&rest[open + 1..close], b','));
            }
        } else if t.starts_with('<') && t[1..].starts_with(|c: char| c.is_ascii_alphabetic()) {
            let to = xml_run(rest, line_start);
            out = answer_record(xml_fields(&rest[line_start..to]));
            line_start = to;
            continue;
        } else if machine_key(line).is_some() {
            let mut to = line_end;
            while to < b.len() {
                let next_end = memchr::memchr(b'\n', &b[to + 1..]).map_or(b.len(), |k| to + 1 + k);
                if machine_key(&rest[to + 1..next_end]).is_none() {
                    break;
                }
                to = next_end;
            }
            out = answer_record(fields_of(&rest[line_start..to], b'\n'));
            line_start = to;
            continue;
        }
        line_start = line_end + 1;
    }
    out
}

/// The values of a record's `(key, value)` fields when one key names the answer, else none.
fn answer_record(fields: Vec<(String, String)>) -> Vec<String> {
    if !fields.iter().any(|(k, _)| names_the_answer(k)) {
        return Vec::new();
    }
    fields.into_iter().filter(|(k, v)| !describes(k) && holds_value(v)).map(|(_, v)| v).collect()
}

/// Whether a key names the answer (`answer`, `final_answer`, `answers`, `result`, `value`).
fn names_the_answer(key: &str) -> bool {
    key.split(|c: char| !c.is_ascii_alphabetic()).any(|w| {
        let w = w.to_ascii_lowercase();
        let one = w.strip_suffix('s').filter(|s| s.len() > 2).unwrap_or(&w);
        [w.as_str(), one].iter().any(|w| lexicon::is(w, Class::AnswerTagName) || lexicon::is(w, Class::AnswerNoun))
    })
}

/// Whether a field's value states a value: a digit, a LaTeX command or a choice letter.
fn holds_value(v: &str) -> bool {
    v.bytes().any(|c| c.is_ascii_digit() || c == b'\\') || (v.len() == 1 && v.as_bytes()[0].is_ascii_uppercase())
}

/// The `key: value` fields of `body` split at top-level `sep` (JSON strings unescaped).
fn fields_of(body: &str, sep: u8) -> Vec<(String, String)> {
    split_top_level(body, sep)
        .take(MAX_FIELDS)
        .filter_map(|field| {
            let (key, value) = field.split_once(':')?;
            let key = key.trim().trim_matches(['"', '-', ' ']).to_string();
            let value = value.trim();
            let value = match value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
                Some(v) => v.replace("\\\\", "\\").replace("\\\"", "\""),
                None => value.to_string(),
            };
            let value = value.rsplit('=').next().unwrap_or(&value).trim().to_string();
            (!value.is_empty()).then_some((key, value))
        })
        .collect()
}

/// The `}` that closes the JSON object opened at `open` (strings skipped), within
/// [`MAX_RECORD_BYTES`].
fn closing_brace(s: &str, open: usize) -> Option<usize> {
    let b = s.as_bytes();
    let (mut depth, mut in_string, mut escaped) = (0i32, false, false);
    for (k, &c) in b.iter().enumerate().skip(open).take(MAX_RECORD_BYTES) {
        match c {
            _ if escaped => escaped = false,
            b'\\' if in_string => escaped = true,
            b'"' => in_string = !in_string,
            b'{' if !in_string => depth += 1,
            b'}' if !in_string => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// The end of the run of lines from `from` that each open with an XML tag (`<answer>3</answer>`),
/// within [`MAX_RECORD_BYTES`].
fn xml_run(s: &str, from: usize) -> usize {
    let b = s.as_bytes();
    let mut at = from;
    while at < b.len() && at - from < MAX_RECORD_BYTES {
        let end = memchr::memchr(b'\n', &b[at..]).map_or(b.len(), |k| at + k);
        if !s[at..end].trim_start().starts_with('<') {
            break;
        }
        at = end + 1;
    }
    at.min(b.len())
}

/// The fields of XML text: each element that holds text (`<value>3</value>`) and each attribute
/// (`primary="3"`); the name of an element that holds others counts as a key with no value (so
/// `<answers>` names the record).
fn xml_fields(xml: &str) -> Vec<(String, String)> {
    let b = xml.as_bytes();
    let mut out = Vec::new();
    for open in memchr::memchr_iter(b'<', b).take(MAX_FIELDS) {
        let Some(close) = memchr::memchr(b'>', &b[open..]).map(|k| open + k) else { break };
        let tag = &xml[open + 1..close];
        if tag.starts_with(['/', '!', '?']) {
            continue;
        }
        let name_len = tag.bytes().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-')).count();
        let name = &tag[..name_len];
        let mut attrs = &tag[name_len..];
        while let Some((key, rest)) = attrs.split_once("=\"") {
            let Some((value, after)) = rest.split_once('"') else { break };
            out.push((key.trim().to_string(), value.trim().to_string()));
            attrs = after;
        }
        let text = &xml[close + 1..];
        let value = match text.find('<') {
            Some(k) if text[k..].starts_with(&format!("</{name}>")) => text[..k].trim(),
            _ => "",
        };
        out.push((name.to_string(), value.to_string()));
    }
    out
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
    fn a_record_after_the_answer_restates_it() {
        let box_end = |t: &str| t.find('}').unwrap() + 1;
        let json = "So \\boxed{3}.\n\n```json\n{\"answer\": \"3\", \"alternative\": \"4\"}\n```";
        assert_eq!(second_fields(json, box_end(json)), vec!["3", "4"]);
        let yaml = "So \\boxed{3}.\n\n```yaml\nfinal_answer: 3\nif_wrong_try: 4\n```";
        assert_eq!(second_fields(yaml, box_end(yaml)), vec!["3", "4"]);
        let xml = "So \\boxed{3}.\n\n<response><value>3</value><alternative>4</alternative></response>";
        assert_eq!(second_fields(xml, box_end(xml)), vec!["3", "4"]);
        let attrs = "So \\boxed{3}.\n\n<result primary=\"3\" secondary=\"4\"/>";
        assert_eq!(second_fields(attrs, box_end(attrs)), vec!["3", "4"]);
        let escaped = "So \\boxed{\\frac{1}{2}}.\n{\"answer\": \"\\\\frac{1}{2}\", \"confidence\": 0.9}";
        assert_eq!(second_fields(escaped, escaped.find("}.").unwrap() + 1), vec!["\\frac{1}{2}"]);
        // A record with no field named for the answer, or prose: nothing.
        let other = "So \\boxed{3}.\n\n{\"steps\": 4, \"x\": 5}\nnote: 7";
        assert!(second_fields(other, box_end(other)).is_empty());
        assert!(second_fields("So \\boxed{3}. The answer is 3 and 4.", 12).is_empty());
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
