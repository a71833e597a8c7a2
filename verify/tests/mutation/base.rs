//! The inputs of the engine: right responses of the dev corpora with their final answer located.
//!
//! A base is a row that the verifier scores right today *and* whose label says right (`label:
//! true` in `real_generations_dev.jsonl`, `expected: true` in `verifier_cases_dev.jsonl`), whose
//! final answer is a last box or a plain value followed by at most a short closing remark, and
//! which holds no chat-template token (the operators add their own). A base also has reasoning
//! before its final statement: a row that is nothing but an answer (`$\frac13$`, most of
//! `verifier_cases_dev`) tests equivalence, not the shape of a response, and is left out.

use super::Variant;
use rlverify::{check, score, Config};
use serde_json::Value;
use std::path::PathBuf;

/// A right response with its final answer located.
#[derive(Clone, Debug)]
pub struct Base {
    /// `real_generations_dev:LINE` or `verifier_cases_dev:LINE`.
    pub origin: String,
    pub gold: String,
    pub response: String,
    /// The final answer as written: the content of the last box, or the plain value.
    pub answer: String,
    /// The byte span of the whole answer (`\boxed{...}`, or the plain value).
    pub span: (usize, usize),
    /// Whether the answer is in a box.
    pub boxed: bool,
    /// Where the final statement (the line or sentence that states the answer, with the lines of
    /// math delimiters and the lead-in above it) begins.
    pub statement: usize,
    /// The answer's value when it is an integer (`27`, `\$27.00`, `1,000`).
    pub integer: Option<i64>,
    /// A value the verifier finds different from the gold, boxed and bare.
    pub alternative: String,
}

impl Base {
    /// The base of a right response, or `None` when the row does not qualify (see the module doc).
    pub fn new(origin: &str, gold: &str, response: &str) -> Option<Base> {
        let special = ["<|", "<｜", "</s>", "<eos>", "<end_of_turn>", "<pad>"];
        if response.len() > 8000 || special.iter().any(|s| response.contains(s)) {
            return None;
        }
        let s = score(response, gold, &Config::default());
        if !s.correct {
            return None;
        }
        let (span, answer, boxed) = match last_box(response) {
            Some((start, end)) if closing_tail(&response[end..]) => {
                ((start, end), response[start + "\\boxed{".len()..end - 1].trim().to_string(), true)
            }
            _ => {
                let x = s.extracted?.trim().to_string();
                let (start, end) = last_plain(response, &x)?;
                ((start, end), x, false)
            }
        };
        if answer.is_empty() {
            return None;
        }
        let statement = statement_start(response, span.0);
        if response[..statement].trim().is_empty() {
            return None;
        }
        let integer = integer_value(&answer).filter(|n| check(gold, &n.to_string()));
        let alternative = alternative(gold, &answer, integer)?;
        Some(Base {
            origin: origin.to_string(),
            gold: gold.to_string(),
            response: response.to_string(),
            statement,
            answer,
            span,
            boxed,
            integer,
            alternative,
        })
    }

    /// The response before the final statement (the reasoning), without trailing space.
    pub fn head(&self) -> &str {
        self.response[..self.statement].trim_end()
    }

    /// The answer in inline math (`$x$`).
    pub fn math(&self) -> String {
        format!("${}$", self.answer)
    }

    /// The alternative value in inline math.
    pub fn alt_math(&self) -> String {
        format!("${}$", self.alternative)
    }

    /// A variant scored against the base's gold.
    pub fn variant(&self, response: String) -> Option<Variant> {
        Some(Variant { gold: self.gold.clone(), response })
    }

    /// The reasoning followed by a new final statement (in place of the base's).
    pub fn with_statement(&self, statement: &str) -> Option<Variant> {
        self.variant(format!("{}\n\n{statement}", self.head()))
    }

    /// The whole response followed by `text` (on a new paragraph when `paragraph`, else after a space).
    pub fn append(&self, text: &str, paragraph: bool) -> Option<Variant> {
        let sep = if paragraph { "\n\n" } else { " " };
        self.variant(format!("{}{sep}{text}", self.response.trim_end()))
    }

    /// The response with the whole answer (`\boxed{x}` or the plain value) replaced by `new`.
    pub fn replace_answer(&self, new: &str) -> Option<Variant> {
        let (s, e) = self.span;
        self.variant(format!("{}{new}{}", &self.response[..s], &self.response[e..]))
    }

    /// The response with the content of the final box replaced by `content` (boxed answers only).
    pub fn with_box_content(&self, content: &str) -> Option<Variant> {
        self.boxed.then(|| self.replace_answer(&format!("\\boxed{{{content}}}")))?
    }

    /// The response with `text` inserted right after the answer and the math block around it
    /// (`$\boxed{x}$`, `\[ \boxed{x} \]`), before the rest of its sentence.
    pub fn insert_after_answer(&self, text: &str) -> Option<Variant> {
        let after = self.after();
        let rest = after.trim_start();
        let at = match ["$$", "$", "\\)", "\\]"].iter().find(|c| rest.starts_with(**c)) {
            Some(close) => self.response.len() - rest.len() + close.len(),
            None => self.span.1,
        };
        let r = &self.response;
        self.variant(format!("{}{text}{}", &r[..at], &r[at..]))
    }

    /// The text after the answer, to the end of the response.
    pub fn after(&self) -> &str {
        &self.response[self.span.1..]
    }
}

/// The span of the last `\boxed{...}` of `text` (from the backslash to the closing brace
/// included), when its braces balance.
fn last_box(text: &str) -> Option<(usize, usize)> {
    let start = text.rfind("\\boxed{")?;
    let mut depth = 0usize;
    for (i, b) in text.bytes().enumerate().skip(start + "\\boxed".len()) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some((start, i + 1));
                }
            }
            _ => {}
        }
    }
    None
}

/// True when what follows the answer is a short closing remark: at most 200 bytes, no digit, no box.
fn closing_tail(tail: &str) -> bool {
    tail.len() <= 200 && !tail.bytes().any(|b| b.is_ascii_digit()) && !tail.contains("\\boxed")
}

/// The last occurrence of `x` in `text` between non-word characters, when only a closing remark follows.
fn last_plain(text: &str, x: &str) -> Option<(usize, usize)> {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'.';
    let bytes = text.as_bytes();
    let (start, _) = text.rmatch_indices(x).find(|(i, _)| {
        let j = i + x.len();
        let before = *i == 0 || !word(bytes[i - 1]);
        let after = j == bytes.len()
            || !word(bytes[j])
            || (bytes[j] == b'.' && bytes.get(j + 1).is_none_or(|b| !b.is_ascii_digit()));
        before && after
    })?;
    let end = start + x.len();
    closing_tail(&text[end..]).then_some((start, end))
}

/// The start of the final statement: the line of the answer (from its last sentence start),
/// extended upwards over lines that hold only math delimiters or nothing, and the first line with
/// text above them (`Therefore, the answer is:` before `\[ \boxed{x} \]`).
fn statement_start(text: &str, answer: usize) -> usize {
    let delimiters_only = |s: &str| s.split_whitespace().all(|t| ["$", "$$", "\\[", "\\("].contains(&t));
    let mut start = text[..answer].rfind('\n').map_or(0, |i| i + 1);
    while start > 0 && delimiters_only(&text[start..answer]) {
        start = text[..start - 1].rfind('\n').map_or(0, |i| i + 1);
    }
    // Within a line of several sentences, the last sentence before the answer.
    let line = &text[start..answer];
    let sentence = line
        .match_indices(". ")
        .filter(|(i, _)| line[i + 2..].starts_with(|c: char| c.is_ascii_uppercase()))
        .last()
        .map_or(0, |(i, _)| i + 2);
    start + sentence
}

/// The integer an answer writes (`27`, `-4`, `\$27.00`, `1,000`, `1{,}000`), if any.
pub fn integer_value(answer: &str) -> Option<i64> {
    let mut t = answer.trim().replace("{,}", "").replace(',', "").replace("\\!", "");
    for prefix in ["\\$", "$"] {
        if let Some(rest) = t.strip_prefix(prefix) {
            t = rest.trim().to_string();
        }
    }
    let t = t.strip_suffix(".00").or_else(|| t.strip_suffix(".0")).unwrap_or(&t);
    t.parse::<i64>().ok().filter(|n| n.abs() < 1_000_000_000_000)
}

/// A value the verifier finds different from the gold (boxed and bare): the integer's neighbour,
/// else the first fixed value that differs.
fn alternative(gold: &str, answer: &str, integer: Option<i64>) -> Option<String> {
    let mut candidates = Vec::new();
    if let Some(n) = integer {
        candidates.push((n + 1).to_string());
        candidates.push((n - 1).to_string());
    }
    candidates.extend(["7", "13", "\\frac{2}{9}", "2\\sqrt{5}", "-4", "0.25"].map(String::from));
    candidates.into_iter().find(|y| y != answer && differs(gold, y))
}

/// True when `value` is wrong for `gold` under the verifier's own equivalence, boxed and bare.
pub fn differs(gold: &str, value: &str) -> bool {
    !check(gold, value) && !check(gold, &format!("\\boxed{{{value}}}"))
}

/// The bases of both dev corpora, in corpus order, or `None` (with the shared-data guard's notice)
/// when the read-only shared folder is missing.
pub fn load() -> Option<Vec<Base>> {
    let mut bases = Vec::new();
    for (name, response_field, label_field) in
        [("real_generations_dev", "response", "label"), ("verifier_cases_dev", "pred", "expected")]
    {
        let path = corpus_path(name)?;
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        for (k, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let row: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{name}:{}: {e}", k + 1));
            let field = |f: &str| row.get(f).and_then(Value::as_str);
            if row.get(label_field) != Some(&Value::Bool(true)) {
                continue;
            }
            let (Some(gold), Some(response)) = (field("gold"), field(response_field)) else { continue };
            bases.extend(Base::new(&format!("{name}:{}", k + 1), gold, response));
        }
    }
    Some(bases)
}

/// A corpus of `$RLVERIFY_CORPORA_DIR`, else of `../shared/corpora` (the shared-data guard).
fn corpus_path(name: &str) -> Option<PathBuf> {
    let file = format!("{name}.jsonl");
    match std::env::var_os("RLVERIFY_CORPORA_DIR") {
        Some(dir) => Some(PathBuf::from(dir).join(file)),
        None => rl_tests::shared_file(&format!("corpora/{file}")),
    }
}
