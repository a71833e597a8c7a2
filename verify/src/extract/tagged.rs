//! Answers marked by words or markup: `<answer>` tags, "final answer is" / "Answer:" phrases,
//! GSM8K `#### 42`, bold (`**42**`, `<b>42</b>`), and the concluding last sentence (with
//! `concluding`).
//!
//! Each function returns the raw answer span (a slice of the input) and which marker found it; the
//! caller cleans it. All searches go backwards from the end with `memmem` and stop at the first
//! (that is, last in the text) marker that yields an answer, so the cost is linear. A marker
//! inside code (a fenced block or inline code: `answer = solve()`) is mentioned, not used, and
//! skipped. What follows a value on an answer phrase's line is judged by
//! `alternatives::tail_after_value`.

use memchr::memmem;

use super::alternatives::{tail_after_value, Tail};
use super::concluding::{asserts, introduces_result, stated_value};
use super::delimited::{block_at, last_block};
use super::scan::{
    cap, contains_ci, floor_boundary, is_word_byte, last_line, matching_brace, starts_with_ci, words, Code, Needle,
};
use super::tokens::phrase_at;
use crate::lexicon::{self, Class};

/// Longest answer taken after a phrase when it is not delimited (bytes).
const MAX_PHRASE_SPAN: usize = 300;
/// How far after a phrase its answer is looked for (bytes); bounds the work per phrase.
const MAX_LOOKAHEAD: usize = 8192;

/// The content of the last closed `<answer>...</answer>` pair (tags are ASCII case-insensitive
/// only in their common spellings `<answer>` / `<Answer>`).
pub(crate) fn answer_tag(text: &str) -> Option<&str> {
    // One pass finds both tags in both spellings: `<answer>`, `</answer>`, `<Answer>`, `</Answer>`.
    static TAIL: Needle = Needle::new(b"nswer>");
    let b = text.as_bytes();
    let is_tag = |p: usize, closing: bool| {
        let lead: &[u8] = if closing { b"</" } else { b"<" };
        p > lead.len() && matches!(b[p - 1], b'a' | b'A') && &b[p - 1 - lead.len()..p - 1] == lead
    };
    let hits: Vec<usize> = TAIL.all(b).collect();
    if hits.is_empty() {
        return None;
    }
    // A tag inside code is mentioned, not used (the code is read only when a tag is there).
    let code = Code::of(text);
    let hits: Vec<usize> = hits.into_iter().filter(|&p| !code.holds(text, p)).collect();
    let close_at = hits.iter().rposition(|&p| is_tag(p, true))?;
    let open = hits[..close_at].iter().rev().find(|&&p| is_tag(p, false))? - 2;
    let close = hits[close_at] - 3;
    Some(&text[open + "<answer>".len()..close])
}

/// The content of the last closed tag pair whose name names an answer (`<final_answer>`,
/// `<result>`, `<ans>`: a part of the name, split at `_` and `-`, of the lexicon's `AnswerTagName`
/// class), the `<answer>` tag first.
pub(crate) fn answer_tag_named(text: &str) -> Option<&str> {
    // Every tag opens with `<`: a text without one (most) is read in one vectorized pass.
    memchr::memchr(b'<', text.as_bytes())?;
    if let Some(content) = answer_tag(text) {
        return Some(content);
    }
    static CLOSE: Needle = Needle::new(b"</");
    let b = text.as_bytes();
    let closes: Vec<usize> = CLOSE.all(b).collect();
    // The code is read once, and only when a closing tag is there.
    let mut code: Option<Code> = None;
    for &p in closes.iter().rev().take(MAX_TAGS_TRIED) {
        if code.get_or_insert_with(|| Code::of(text)).holds(text, p) {
            continue;
        }
        let name_len = b[p + 2..]
            .iter()
            .take(MAX_TAG_NAME)
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-'))
            .count();
        if name_len == 0 || b.get(p + 2 + name_len) != Some(&b'>') {
            continue;
        }
        let name = &text[p + 2..p + 2 + name_len];
        if !name.split(['_', '-']).any(|part| lexicon::is(part, Class::AnswerTagName)) {
            continue;
        }
        let open = format!("<{name}>");
        if let Some(o) = memmem::rfind(&b[..p], open.as_bytes()) {
            return Some(&text[o + open.len()..p]);
        }
    }
    None
}

/// How many closing tags are tried, from the last, for a named answer tag.
const MAX_TAGS_TRIED: usize = 16;
/// Longest tag name read (bytes).
const MAX_TAG_NAME: usize = 40;

/// Which phrase marked an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phrase {
    /// "final answer is", "the answer is", "Final Answer:".
    Final,
    /// "Answer:", `"answer": "..."`, GSM8K-style `A: 42` at the start of a line.
    Colon,
}

/// The answer after the last answer phrase of `text` ("The final answer is $5$.", "Answer: D",
/// `**Answer:** 42`, `"answer": "13"`, a line `A: 45`): the math right after it (`$..$` content,
/// a box) or the rest of the sentence. Case-insensitive. Also returns the phrase kind and the
/// byte offset in `text` where the answer's span ends (the statement goes on from there).
pub(crate) fn phrase(text: &str) -> Option<(String, Phrase, usize)> {
    // Answer phrases inside code (`answer = solve()`) are mentioned, not used.
    // The code is read once, and only when a phrase is there.
    let code = std::cell::OnceCell::new();
    let in_code = |p: usize| code.get_or_init(|| Code::of(text)).holds(text, p);
    let word_hit = last_answer_word(text, &in_code);
    let a_colon = last_a_colon_line(text, &in_code);
    match (word_hit, a_colon) {
        (Some((pos, ans, kind, end)), Some(a)) if a < pos => Some((ans, kind, end)),
        (Some((_, ans, kind, end)), None) => Some((ans, kind, end)),
        (_, Some(a)) => after_phrase(text, a + 2, false).map(|(s, end)| (s, Phrase::Colon, end)),
        (None, None) => None,
    }
}

/// The last occurrence of the word "answer" that forms an answer phrase and yields an answer:
/// (its position, the answer, the phrase kind, where the answer ends).
fn last_answer_word(text: &str, in_code: &dyn Fn(usize) -> bool) -> Option<(usize, String, Phrase, usize)> {
    let b = text.as_bytes();
    // Both spellings' hits in one ascending list, walked from the end.
    static LOWER: Needle = Needle::new(b"nswer");
    static UPPER: Needle = Needle::new(b"NSWER");
    let mut hits: Vec<usize> = LOWER.all(b).collect();
    if memchr::memchr(b'N', b).is_some() {
        hits.extend(UPPER.all(b));
        hits.sort_unstable();
    }
    for &p in hits.iter().rev() {
        if p == 0 || !matches!(b[p - 1], b'a' | b'A') {
            continue;
        }
        let start = p - 1;
        if start > 0 && is_word_byte(b[start - 1]) {
            continue;
        }
        if !word_at(text, start, "answer") || called_wrong(text, start) || in_code(start) {
            continue;
        }
        let Some((content_at, kind, json)) = phrase_tail(text, start, p + 5) else {
            continue;
        };
        if let Some((ans, end)) = after_phrase(text, content_at, json) {
            return Some((start, ans, kind, end));
        }
    }
    None
}

/// Whether the word right before byte `at` calls what follows wrong (`A common wrong answer is
/// $28$`, `the incorrect answer:`): the phrase names someone's mistake, not the response's answer.
fn called_wrong(text: &str, at: usize) -> bool {
    let before = text[..at].trim_end_matches(' ');
    let word = &before[before.len() - before.bytes().rev().take_while(u8::is_ascii_alphabetic).count()..];
    !word.is_empty() && lexicon::is(word, Class::Denial)
}

/// Given "answer" at `start..after`, decide whether it starts an answer phrase; if so, where the
/// answer starts, which kind of phrase it is, and whether it is a JSON string value.
fn phrase_tail(text: &str, start: usize, after: usize) -> Option<(usize, Phrase, bool)> {
    let b = text.as_bytes();
    let final_before = start >= 6 && starts_with_ci(b, start - 6, b"final ");
    let colon_kind = if final_before { Phrase::Final } else { Phrase::Colon };
    let mut i = after;
    if b.get(i) == Some(&b'"') {
        // JSON key: "answer": "..."
        i += 1;
        while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
            i += 1;
        }
        return (b.get(i) == Some(&b':')).then_some((i + 1, colon_kind, true));
    }
    i = skip_markup(b, i);
    match b.get(i)? {
        b':' => Some((skip_markup(b, i + 1), colon_kind, false)),
        b'=' => Some((i + 1, colon_kind, false)),
        b'$' => Some((i, colon_kind, false)),
        b'\\' if matches!(b.get(i + 1), Some(b'[' | b'(')) || starts_with_ci(b, i, br"\boxed") => {
            Some((i, colon_kind, false))
        }
        _ if word_at(text, i, "is") => {
            let mut j = skip_markup(b, i + 2);
            if b.get(j) == Some(&b':') {
                j += 1;
            }
            Some((j, Phrase::Final, false))
        }
        _ => None,
    }
}

/// Whether the word token at byte `at` of `text` is `word` (ASCII case aside) and ends there (no
/// letter, digit or `_` after it: "answers" is not "answer").
fn word_at(text: &str, at: usize, word: &str) -> bool {
    let mut lexer = super::tokens::Lexer::new(text);
    lexer.seek(at);
    lexer.next().is_some_and(|t| {
        t.range.start == at
            && t.is_ascii_word(text)
            && t.text(text).eq_ignore_ascii_case(word)
            && !text.as_bytes().get(t.range.end).is_some_and(|c| is_word_byte(*c))
    })
}

/// Skip spaces, newlines and markdown emphasis (`*`, `_` is not skipped: it is math).
fn skip_markup(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|c| c.is_ascii_whitespace() || *c == b'*') {
        i += 1;
    }
    i
}

/// The answer text starting at byte `at` (right after a phrase): a math block or box if one starts
/// there, a JSON string, or the rest of the sentence; and the offset in `text` where it ends.
fn after_phrase(text: &str, at: usize, json: bool) -> Option<(String, usize)> {
    let b = text.as_bytes();
    let mut i = skip_markup(b, at);
    if json {
        let (v, len) = json_string(cap(&text[i..], MAX_LOOKAHEAD))?;
        return Some((v, i + len));
    }
    loop {
        let before = i;
        if let Some(len) = phrase_at(text, i, Class::PhraseFiller).filter(|&len| b.get(i + len) == Some(&b' ')) {
            i = skip_markup(b, i + len + 1);
        }
        if i == before {
            break;
        }
    }
    if b.get(i) == Some(&b'_') {
        // `Final answer: _27_`: an underscore run that opens emphasis (elsewhere `_` is math).
        i += super::tokens::emphasis_at(text, i).unwrap_or(0);
    }
    let rest = cap(&text[i..], MAX_LOOKAHEAD);
    if let Some((inner, close)) = emphasized_value(text, i, rest) {
        // `The answer is *27* (maybe 28)`, `***-i***`: the emphasis that opened right before the
        // value closes it; the statement goes on after the closing run.
        return value_in(text, i, inner).map(|(v, _)| (v, close));
    }
    value_in(text, i, rest)
}

/// When markdown emphasis opens right before byte `i` (`*`, `**`, `_`, `***`: `tokens`) and
/// closes on the line of `rest` (the text from `i`), the text inside it and where the closing run
/// ends in `text`.
fn emphasized_value<'t>(text: &'t str, i: usize, rest: &'t str) -> Option<(&'t str, usize)> {
    use super::tokens::{closing_emphasis, emphasis_at};
    let n = (1..=3).find(|&n| i >= n && emphasis_at(text, i - n) == Some(n))?;
    let mark = text.as_bytes()[i - n];
    let line = &rest.as_bytes()[..memchr::memchr(b'\n', rest.as_bytes()).unwrap_or(rest.len())];
    let k = (1..line.len()).find(|&k| line[k] == mark && closing_emphasis(rest, k) == Some(n))?;
    Some((&rest[..k], i + k + n))
}

/// The answer in `rest` (the text from byte `i` of `text`, right after a phrase and its markup):
/// see [`after_phrase`].
fn value_in(text: &str, i: usize, rest: &str) -> Option<(String, usize)> {
    if rest.is_empty() {
        return None;
    }
    if let Some((inner, len)) = leading_math(rest) {
        return Some((inner.to_string(), i + len));
    }
    // `The answer is the same if ...`, `... is unchanged`: a word of sameness names no value; the
    // phrase restates the answer before it.
    let first = rest.split_whitespace().find(|w| !lexicon::is(w, Class::Determiner));
    if first.is_some_and(|w| lexicon::is(w.trim_end_matches(['.', ',', ';']), Class::Sameness)) {
        return None;
    }
    // The rest of the sentence: up to a newline or a period followed by a space or the end.
    let line_end = memchr::memchr(b'\n', rest.as_bytes()).unwrap_or(rest.len());
    let mut span = cap(&rest[..line_end], MAX_PHRASE_SPAN);
    if let Some((value, len)) = value_then_tail(span) {
        return Some((value.to_string(), i + len));
    }
    if let Some(k) = sentence_end(span) {
        span = &span[..k];
    }
    let span_end = i + span.len();
    // "The largest $n$ is 34": the answer is what follows the last " is ", unless that names
    // the answer itself ("$x \le 2$ is our answer": the value comes before).
    let verb = [b" is ".as_slice(), b" are "]
        .iter()
        .filter_map(|v| memmem::rfind(span.as_bytes(), v).map(|k| (k, v.len())))
        .max();
    if let Some((k, verb_len)) = verb {
        let tail = &span[k + verb_len..];
        let value_first = span.trim_start().starts_with(|c: char| c.is_ascii_digit() || matches!(c, '$' | '\\' | '-'))
            || super::choice::split_choice_label(span).is_some()
            || span.trim_start().starts_with('(');
        if is_answer_noun(tail) {
            span = &span[..k];
        } else if !tail.trim().is_empty() && !value_first {
            span = tail.trim_start();
            if let Some((inner, len)) = leading_math(span) {
                return Some((inner.to_string(), offset_in(text, span) + len));
            }
        }
    }
    if let Some(k) = clause_start(span) {
        span = &span[..k];
    }
    if let Some(bl) = last_block(span) {
        // Prose around a math block ("the value $5$ found above"): the block is the answer,
        // unless the words change it (`less than $\frac34$`): then the whole span is.
        if super::wording::qualifies_prose(&span[..bl.start]) {
            return Some((span.trim().to_string(), offset_in(text, span) + span.len()));
        }
        if words(span).count > 0 {
            return Some((span[bl.start..bl.end].to_string(), offset_in(text, span) + bl.end + 1));
        }
    }
    let span = span.trim();
    if let Some(n) = lone_number_in_sentence(span) {
        return Some((n.to_string(), span_end));
    }
    (!span.is_empty()).then(|| (span.to_string(), offset_in(text, span) + span.len()))
}

/// A line that opens with a plain number (`14 (that is, fourteen)`, `6 Good luck!`, `6 I
/// think`): what follows the number is judged where every tail of an answer is
/// ([`tail_after_value`]). The answer and its length in `line`: the number alone when the tail
/// stands apart from it, the line's sentence when the tail qualifies it; `None` when the tail
/// continues it (`6 dozen`, `6 or 7`: the sentence is read as usual).
fn value_then_tail(line: &str) -> Option<(&str, usize)> {
    let b = line.as_bytes();
    let sign = usize::from(b.first() == Some(&b'-'));
    let mut n = sign;
    while n < b.len()
        && (b[n].is_ascii_digit()
            || (matches!(b[n], b'.' | b',') && n > sign && b.get(n + 1).is_some_and(u8::is_ascii_digit)))
    {
        n += 1;
    }
    // `twelve (12)`: a number in words before its aside is a value too.
    let n = if n > sign { n } else { number_words_prefix(line)? };
    if n == b.len() {
        return None;
    }
    // `**11** apples`: the emphasis that closes around the number ends the value; the statement
    // after it is read as after a box (units, hedges, later values).
    let close = bold_close(line, n) - n;
    match tail_after_value(&line[n + close..]) {
        Tail::Apart => Some((&line[..n], n + close)),
        Tail::Continues if close > 0 => Some((&line[..n], n + close)),
        Tail::Qualifies => {
            let whole = line[..sentence_end(line).unwrap_or(line.len())].trim_end();
            Some((whole, whole.len()))
        }
        Tail::Continues => None,
    }
}

/// Longest number in words read before an aside (bytes).
const MAX_WORDS_VALUE: usize = 60;

/// The length of a number in words that opens `line` and ends where an aside or a clause begins
/// (`twelve (12)`, `forty-two — in digits, 42`, `dreizehn, also 13`): `None` when the words before
/// it are not one number (`twelve apples`, `the same`).
fn number_words_prefix(line: &str) -> Option<usize> {
    let window = &line[..floor_boundary(line, MAX_WORDS_VALUE.min(line.len()))];
    let end = window.find(['(', '[', ',', ';', ':', '—', '–']).unwrap_or(window.len());
    let words = window[..end].trim_end();
    (!words.is_empty() && end < line.len() && crate::number_words::value(words).is_some()).then_some(words.len())
}

/// The offset of `part` (a subslice of `text`) in `text`.
fn offset_in(text: &str, part: &str) -> usize {
    (part.as_ptr() as usize).saturating_sub(text.as_ptr() as usize).min(text.len())
}

/// "our answer", "the solution", "the final answer": a phrase that names the answer itself.
fn is_answer_noun(s: &str) -> bool {
    let t = s.trim().trim_end_matches(['.', '!']).trim();
    let t = t.strip_prefix("our ").or_else(|| t.strip_prefix("the ")).or_else(|| t.strip_prefix("my "));
    t.is_some_and(|t| {
        let t = t.strip_prefix("final ").unwrap_or(t);
        matches!(t, "answer" | "solution" | "result" | "solution set")
    })
}

/// The answer after the last answer phrase of another language (`Die Antwort ist 42.`, `La
/// respuesta final es $7$`, `Ответ: 5`, `答案是 12`, `答えは12です`): a word of the lexicon's
/// `AnswerWord` class, one optional word between (`final`, `finale`), then a separator (`:`,
/// `=`, `是`, `は`, ...) or a copula of the lexicon (`ist`, `est`, `es`). Returns the answer and
/// where it ends.
pub(crate) fn foreign_phrase(text: &str) -> Option<(String, usize)> {
    /// Searchers for the answer words, in two sets: ASCII words, and words with other letters.
    type Finders = (Vec<memmem::Finder<'static>>, Vec<memmem::Finder<'static>>);
    static FINDERS: std::sync::OnceLock<Finders> = std::sync::OnceLock::new();
    let (ascii, other) = FINDERS.get_or_init(|| {
        let (mut ascii, mut other) = (Vec::new(), Vec::new());
        for w in lexicon::words_of(Class::AnswerWord) {
            let mut chars = w.chars();
            let first: String = chars.next().map(|c| c.to_uppercase().collect()).unwrap_or_default();
            let capitalised = format!("{first}{}", chars.as_str());
            let set = if w.is_ascii() { &mut ascii } else { &mut other };
            set.push(memmem::Finder::new(w.as_bytes()).into_owned());
            if capitalised != w {
                set.push(memmem::Finder::new(capitalised.as_bytes()).into_owned());
            }
        }
        (ascii, other)
    });
    // An answer phrase ends a response: only its last [`MAX_FOREIGN_TAIL`] bytes are searched,
    // and only when they hold a phrase at all (a space, or letters of another script).
    let from = floor_boundary(text, text.len().saturating_sub(MAX_FOREIGN_TAIL));
    let b = text.as_bytes();
    let tail = &b[from..];
    let non_ascii = !tail.is_ascii();
    if !non_ascii && !tail.contains(&b' ') {
        return None;
    }
    let finders = ascii.iter().chain(other.iter().filter(|_| non_ascii));
    let mut best: Option<(usize, usize)> = None;
    // The code is read once, and only when a phrase is there.
    let code = std::cell::OnceCell::new();
    let outside_code = |p: usize| !code.get_or_init(|| Code::of(text)).holds(text, p);
    for f in finders {
        if let Some(p) = f.find_iter(tail).map(|p| from + p).filter(|&p| outside_code(p)).last() {
            let end = p + f.needle().len();
            // The last phrase wins; at one place, the longest (`đáp án` over `đáp`).
            let later = best.is_none_or(|(q, e)| p > q || (p == q && end > e));
            if later && (p == 0 || !b[p - 1].is_ascii_alphabetic()) {
                best = Some((p, end));
            }
        }
    }
    let (_, mut i) = best?;
    let mut seen_word = false;
    loop {
        i = skip_markup(b, i);
        let rest = &text[i..];
        let sep = [":", "：", "=", "是", "为", "為", "は", "—"].iter().find(|s| rest.starts_with(**s));
        if let Some(sep) = sep {
            i = skip_markup(b, i + sep.len());
            // `答案为：42`: a colon may follow the copula.
            for colon in [":", "："] {
                if text[i..].starts_with(colon) {
                    i = skip_markup(b, i + colon.len());
                }
            }
            break;
        }
        let len = rest.find(|c: char| !c.is_alphabetic()).unwrap_or(rest.len());
        if len == 0 {
            return None;
        }
        let word = &rest[..len];
        if lexicon::is(word, Class::Copula) {
            i = skip_markup(b, i + len);
            if b.get(i) == Some(&b':') {
                i = skip_markup(b, i + 1);
            }
            break;
        }
        if seen_word || !lexicon::is(word, Class::FinalWord) {
            return None;
        }
        seen_word = true;
        i += len;
    }
    let rest = cap(&text[i..], MAX_PHRASE_SPAN);
    // `12です`, `42。`: a number right after the separator ends at the first character that
    // cannot continue it.
    let number = rest
        .char_indices()
        .find(|&(_, c)| !(c.is_numeric() || matches!(c, '.' | ',' | '-' | '/')))
        .map_or(rest.len(), |(k, _)| k);
    let next = rest[number..].chars().next();
    if number > 0 && next.is_none_or(|c| !c.is_ascii() || c.is_whitespace()) {
        let value = rest[..number].trim_end_matches(['.', ',']);
        if !value.is_empty() {
            return Some((value.to_string(), i + value.len()));
        }
    }
    after_phrase(text, i, false)
}

/// How much of the end of a response is searched for an answer phrase of another language (bytes).
const MAX_FOREIGN_TAIL: usize = 1000;

/// A display formula that ends the text, introduced by a sentence that concludes and ends with
/// `:` or a stating word (`Putting everything together:`, `So the total is:`, `Collecting the
/// results, the quantity asked for is`: `concluding::introduces_result`): its content and where
/// it ends.
pub(crate) fn introduced_display(text: &str) -> Option<(String, usize)> {
    let t = text.trim_end();
    let (open, close) = if let Some(body) = t.strip_suffix("\\]") {
        (memmem::rfind(body.as_bytes(), b"\\[")?, body.len())
    } else if let Some(body) = t.strip_suffix("$$") {
        (memmem::rfind(body.as_bytes(), b"$$")?, body.len())
    } else {
        return None;
    };
    let content = &t[open + 2..close];
    let intro = t[..open].trim_end().trim_end_matches('*').trim_end();
    let (intro, colon) = match intro.strip_suffix(':') {
        Some(i) => (i.trim_end_matches('*'), true),
        None => (intro, false),
    };
    let line = cap_back(intro.rsplit(['\n', '.']).next().unwrap_or(intro), MAX_CONCLUSION_BYTES);
    (introduces_result(line, colon) && !content.trim().is_empty()).then(|| (content.to_string(), t.len()))
}

/// How much of the last line is read for a concluding sentence (bytes).
const MAX_CONCLUSION_BYTES: usize = 400;

/// The last `max` bytes of `s`, cut forward to a `char` boundary.
fn cap_back(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut k = s.len() - max;
    while !s.is_char_boundary(k) {
        k += 1;
    }
    &s[k..]
}

/// The value stated by the concluding last sentence of `text`: a sentence that opens with a
/// conclusion word (`Therefore`, `Thus`, `So`, ...) or names the solution (`The solution is`,
/// `... is our answer`), read like an answer phrase. Only the last sentence counts: a conclusion
/// earlier in the text is a step. Returns the answer and where it ends.
pub(crate) fn conclusion(text: &str) -> Option<(String, usize)> {
    let t = text.trim_end();
    let (line_start, line) = last_line(t);
    // Cut off inside a formula (`... so \( m = 1`): the last sentence never ended. (A finished
    // last line whose own formulas close is read on its own: currency signs before it, `$3 each`,
    // leave the text's `$` unpaired.)
    let finished_line = line.trim_end_matches('*').ends_with(['.', '!']) && !super::delimited::ends_inside_block(line);
    if !finished_line && super::delimited::ends_inside_block(text) {
        return None;
    }
    // A concluding sentence is short: only the end of a long last line is read (linear cost).
    let skip = line.len() - cap_back(line, MAX_CONCLUSION_BYTES).len();
    let (line_start, line) = (line_start + skip, &line[skip..]);
    // The last sentence of the last line: after the last `. `, `! `, `? ` before its end, or at
    // the last capitalised conclusion word (`... = 6$ So, the ordered pair is $(7, 6)$.`).
    let body = line.trim_end_matches(['.', '!']);
    let b = body.as_bytes();
    let mut start = 0;
    for k in 0..b.len() {
        if matches!(b[k], b'.' | b'!' | b'?') && b.get(k + 1).is_some_and(u8::is_ascii_whitespace) {
            start = k + 1;
        }
    }
    let lead = |from: usize| {
        let s = &line[from..];
        from + s.len() - s.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '*' | '#' | '-')).len()
    };
    let mut at = lead(start);
    for k in (start + 1)..b.len() {
        if b[k].is_ascii_uppercase() && b[k - 1].is_ascii_whitespace() && opener_at(line, k).is_some() {
            at = k;
        }
    }
    let sentence = &line[at..];
    if !sentence.trim().contains(' ') {
        // One word is no sentence (a bare answer such as `42` is read whole).
        return None;
    }
    if let Some(len) = opener_at(line, at) {
        let lb = line.as_bytes();
        let mut from = at + len;
        while lb.get(from).is_some_and(|c| matches!(c, b',' | b' ' | b':')) {
            from += 1;
        }
        let found = after_phrase(text, line_start + from, false);
        // `So the total comes to forty-nine.`: a sentence taken whole states its one value.
        let prose = found.as_ref().is_none_or(|(a, _)| words(a).count >= 3);
        if let Some(r) = stated_value(sentence).filter(|_| prose) {
            return Some((sentence[r].to_string(), line_start + at + sentence.len()));
        }
        return found;
    }
    let lower = sentence.to_ascii_lowercase();
    // A conclusion inside the last sentence: `The error was 50 and is now 100, so the error grows
    // by 100%.`
    let inner = [", so ", ", therefore ", ", thus ", ", hence ", "; so "]
        .iter()
        .filter_map(|w| lower.rfind(w).map(|k| k + w.len()))
        .max();
    if let Some(k) = inner {
        if let Some(found) = after_phrase(text, line_start + at + k, false) {
            // `..., so that is our answer`: the pronoun refers back to the value the clause
            // before states, picked from the list that sentence gives (`Among $0.15$, $7$ and
            // $13$, the smallest that works is $0.15$`); a pronoun is never the answer.
            if !lexicon::is(found.0.trim(), Class::Pronoun) {
                return Some(found);
            }
            let before = sentence[..k].trim_end();
            let before = before.rfind(',').map_or(before, |c| &before[..c]);
            return super::concluding::picked_value(before)
                .map(|r| (before[r].to_string(), line_start + at + sentence.len()));
        }
    }
    // `This leaves $42$, $44$ or $45$; taking the greatest, we get $45$.`: a last clause that
    // picks one value from the list the sentence gave (`concluding::picked_value`).
    if sentence.trim_end().ends_with(['.', '!']) {
        let body = sentence.trim_end().trim_end_matches(['.', '!']);
        if let Some(r) = super::concluding::picked_value(body) {
            return Some((body[r].to_string(), line_start + at + sentence.len()));
        }
    }
    for p in lexicon::words_of(Class::ConclusionPhrase) {
        if let Some(k) = lower.find(p) {
            let from = if p.starts_with("is ") { at } else { at + k + p.len() };
            return after_phrase(text, line_start + from, false);
        }
    }
    // A short closing statement of a value: `The area is $36$.`, `The sum equals 12.` (the value
    // ends the sentence, a math block or a number).
    let closing = sentence.trim_end_matches(['.', '!', ' ']);
    let ends_in_value = closing.ends_with('$')
        || closing.ends_with("\\)")
        || closing.ends_with("\\]")
        || closing.ends_with(|c: char| c.is_ascii_digit());
    // `Altogether, the farmer has 86 animals.`: a short, finished last sentence that states one
    // number, with only words that leave it as stated (the allow-lists of `wording`).
    // (A finished sentence only: `Checking the divisors of $6$` was cut off.)
    // The unmarked readings below take a sentence that asserts what it says (`Suppose the area
    // is $36$.`, `My friend says the total is 7.` state nothing of the response's own).
    if !asserts(sentence) {
        return None;
    }
    if sentence.len() <= MAX_PLAIN_STATEMENT_BYTES && sentence.trim_end().ends_with(['.', '!']) {
        let plain = without_number_delimiters(sentence.trim().trim_end_matches(['.', '!']));
        if let Some(n) = lone_number_in_sentence(&plain) {
            let end = line_start + at + sentence.len();
            return Some((n.to_string(), end));
        }
    }
    if sentence.len() <= 200 && ends_in_value {
        let verb = [" is ", " are ", " equals ", " was ", " equal to "]
            .iter()
            .filter_map(|v| lower.rfind(v).map(|k| k + v.len()))
            .max();
        if let Some(k) = verb {
            // The value must end the text (`The area is $36$.`), not open a further clause
            // (`The probability is $\frac{1}{115}$, so $m = 1` was cut off).
            return after_phrase(text, line_start + at + k, false);
        }
    }
    // `This gives $7$ as the final count.`, `The total comes to forty-nine.`: one value stated
    // with a conclusive word (`concluding`).
    stated_value(sentence).map(|r| (sentence[r].to_string(), line_start + at + sentence.len()))
}

/// `has $86$ animals` -> `has 86 animals`: the `$` around math blocks that hold only a plain
/// number dropped (any other math is kept, so the sentence is no plain statement).
fn without_number_delimiters(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains('$') {
        return std::borrow::Cow::Borrowed(s);
    }
    let pieces: Vec<&str> = s.split('$').collect();
    let plain_number = |p: &str| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit() || matches!(c, b'.' | b','));
    if pieces.len().is_multiple_of(2) || !pieces.iter().skip(1).step_by(2).all(|p| plain_number(p)) {
        return std::borrow::Cow::Borrowed(s);
    }
    std::borrow::Cow::Owned(pieces.concat())
}

/// Longest last sentence read as a plain statement of one number (bytes).
const MAX_PLAIN_STATEMENT_BYTES: usize = 200;

/// The length of the conclusion word that starts at `at`, if one does.
fn opener_at(text: &str, at: usize) -> Option<usize> {
    phrase_at(text, at, Class::ConclusionOpener)
}

/// A sentence after a phrase that states its answer in words around one number ("Final Answer:
/// Jane started growing Sphere 3 hours ago."): that number. Only for a sentence of three or more
/// words with no math in it and exactly one number (`-2`, `1,234`, `3.5`).
fn lone_number_in_sentence(span: &str) -> Option<&str> {
    if span.contains(['$', '\\', '/', '^', '=', '(']) || words(span).count < 3 {
        return None;
    }
    if super::wording::wording(span) != super::wording::Wording::Plain {
        // `Jane cannot have 3 spheres`: the words change what the number says.
        return None;
    }
    let b = span.as_bytes();
    let is_num_byte = |k: usize| {
        b[k].is_ascii_digit()
            || (matches!(b[k], b'.' | b',')
                && k > 0
                && b[k - 1].is_ascii_digit()
                && b.get(k + 1).is_some_and(u8::is_ascii_digit))
    };
    let mut found: Option<(usize, usize)> = None;
    let mut k = 0;
    while k < b.len() {
        if b[k].is_ascii_digit() {
            let start = if k > 0 && b[k - 1] == b'-' { k - 1 } else { k };
            let mut end = k;
            while end < b.len() && is_num_byte(end) {
                end += 1;
            }
            // `1 - i`, `2 + x`: a number an operator joins to more is part of an expression.
            let operator = |c: Option<&u8>| c.is_some_and(|c| matches!(c, b'+' | b'-' | b'*'));
            let next = b[end..].iter().find(|c| **c != b' ');
            let prev = b[..start].iter().rev().find(|c| **c != b' ');
            if found.is_some()
                || (start > 0 && is_word_byte(b[start - 1]))
                || b.get(end).is_some_and(|c| is_word_byte(*c))
                || operator(next)
                || operator(prev)
            {
                return None;
            }
            found = Some((start, end));
            k = end;
        } else {
            k += 1;
        }
    }
    found.map(|(s, e)| &span[s..e])
}

/// If `s` starts with a math block or a box, its content and the length of the whole block.
fn leading_math(s: &str) -> Option<(&str, usize)> {
    let b = s.as_bytes();
    if starts_with_ci(b, 0, br"\boxed") || starts_with_ci(b, 0, br"\fbox") {
        let open = memchr::memchr(b'{', b)?;
        if s[..open].bytes().skip(1).all(|c| c.is_ascii_alphabetic() || c == b' ') {
            let close = matching_brace(b, open)?;
            return Some((&s[open + 1..close], close + 1));
        }
        return None;
    }
    let bl = block_at(s, 0)?;
    let closer = if s[bl.end..].starts_with("$$") || s[bl.end..].starts_with('\\') { 2 } else { 1 };
    Some((&s[bl.start..bl.end], bl.end + closer))
}

/// The end of the first sentence of `s`: a `.` followed by whitespace or the end of `s`, outside
/// parentheses (`14 (i.e. fourteen)` is one sentence).
fn sentence_end(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut depth = 0usize;
    (0..b.len()).find(|&k| {
        match b[k] {
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        depth == 0 && b[k] == b'.' && b.get(k + 1).is_none_or(|c| c.is_ascii_whitespace())
    })
}

/// Where a new clause starts in `s`: a clause word after a space, or `, ` followed by a plain
/// word other than `and` / `or`.
fn clause_start(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    // Never inside a parenthesis: `14 (that is, fourteen)` is not cut at its comma.
    let mut depth = 0usize;
    let mut last = 0;
    for i in memchr::memchr2_iter(b' ', b',', b) {
        for &c in &b[last..i] {
            match c {
                b'(' => depth += 1,
                b')' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        last = i;
        if depth > 0 {
            continue;
        }
        let (cut, word_at) = match b[i] {
            b',' if b.get(i + 1) == Some(&b' ') => (i, i + 2),
            // A word an operator joins (`1 - i`) is a term, not a clause.
            b' ' if i > 0 && !matches!(b[i - 1], b',' | b'-' | b'+' | b'*' | b'/' | b'=') => (i, i + 1),
            _ => continue,
        };
        let len = b[word_at..].iter().take_while(|c| c.is_ascii_alphabetic()).count();
        if len == 0 || b.get(word_at + len).is_some_and(|c| is_word_byte(*c) || *c == b'{') {
            continue;
        }
        let w = &b[word_at..word_at + len];
        let clause = lexicon::is_bytes(w, Class::ClauseWord);
        let comma_word = b[i] == b',' && len >= 2 && !w.eq_ignore_ascii_case(b"and") && !w.eq_ignore_ascii_case(b"or");
        if clause || comma_word {
            return Some(cut);
        }
    }
    None
}

/// The JSON value at the start of `text`: a string, unescaped, or a bare value (a number) that
/// runs to the next `,`, `}` or newline; and the bytes it takes.
fn json_string(text: &str) -> Option<(String, usize)> {
    if !text.starts_with('"') {
        let end = text.find([',', '}', '\n']).unwrap_or(text.len());
        let v = text[..end].trim();
        return (!v.is_empty()).then(|| (v.to_string(), end));
    }
    let mut out = String::new();
    let mut escaped = false;
    for (k, c) in text[1..].char_indices() {
        if escaped {
            // `\frac` in a JSON string is a LaTeX command (a JSON escape is one letter).
            let command = c.is_ascii_alphabetic() && text[1 + k + 1..].starts_with(|n: char| n.is_ascii_alphabetic());
            if command {
                out.push('\\');
                out.push(c);
            } else {
                out.push(if matches!(c, 'n' | 't') { ' ' } else { c });
            }
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '"' {
            return (!out.trim().is_empty()).then_some((out, k + 2));
        } else {
            out.push(c);
        }
        if out.len() > MAX_PHRASE_SPAN {
            return None;
        }
    }
    None
}

/// Position of the last `A:` label that gives an answer, outside code: a line that starts with
/// `A:` (the GSM8K "A: 42" format), or the answer of a Q/A drill a model writes to itself, after
/// markup or on its question's line (`**A:** 42` under a `**Q:**` line, `- Q: final result? A: 42`).
/// An `A:` after other words (`Choice A: 5`, `- A: 3` in a list of options) labels nothing.
fn last_a_colon_line(text: &str, in_code: &dyn Fn(usize) -> bool) -> Option<usize> {
    static A_COLON: Needle = Needle::new(b"A:");
    let b = text.as_bytes();
    let hits: Vec<usize> = A_COLON.all(b).filter(|&p| answer_label_at(b, p)).collect();
    hits.into_iter().rev().take(MAX_TAGS_TRIED).find(|&p| !in_code(p))
}

/// Whether the `A:` at byte `p` of `b` labels an answer (see [`last_a_colon_line`]).
fn answer_label_at(b: &[u8], p: usize) -> bool {
    let line_start = memchr::memrchr(b'\n', &b[..p]).map_or(0, |k| k + 1);
    if p == line_start {
        return true;
    }
    if is_word_byte(b[p - 1]) {
        return false;
    }
    let markup = |c: &u8| matches!(c, b' ' | b'\t' | b'*' | b'_' | b'-' | b'+' | b'>');
    let lead = b[line_start..p].iter().take_while(|c| markup(c)).count();
    let question_at = |at: usize| {
        let rest = &b[at..];
        let k = rest.iter().take_while(|c| markup(c)).count();
        rest[k..].starts_with(b"Q:")
    };
    if line_start + lead == p {
        // `**A:**`, `- A:`: in a drill, the line before opens with a `Q:` label.
        let Some(prev_end) = line_start.checked_sub(1) else { return false };
        let prev_start = memchr::memrchr(b'\n', &b[..prev_end]).map_or(0, |k| k + 1);
        return question_at(prev_start);
    }
    // `- Q: final result? A: 42`: the question and its answer on one line.
    question_at(line_start) && b[line_start..p].contains(&b'?')
}

/// GSM8K `#### 42`: the rest of the last `####` line, when it looks like an answer (not a markdown
/// heading such as `#### Step 2`).
pub(crate) fn gsm8k(text: &str) -> Option<&str> {
    let b = text.as_bytes();
    static HASHES: Needle = Needle::new(b"####");
    let hits: Vec<usize> = HASHES.all(b).collect();
    let mut limit = b.len();
    for &p in hits.iter().rev() {
        if p >= limit {
            continue;
        }
        // The whole run of `#` around the hit is one marker; never look at it again.
        let mut run_start = p;
        while run_start > 0 && b[run_start - 1] == b'#' {
            run_start -= 1;
        }
        limit = run_start;
        let mut s = p + 4;
        while b.get(s) == Some(&b'#') {
            s += 1;
        }
        let rest = &text[s..];
        let line = rest[..rest.find('\n').unwrap_or(rest.len())].trim();
        if line.is_empty() {
            continue;
        }
        let w = words(line);
        if w.count <= 1 && !w.prose && !line.starts_with(|c: char| c.is_ascii_alphabetic()) {
            return Some(line);
        }
    }
    None
}

/// Bold used as the answer marker: the last bold span that lies in the last line of the text, or
/// right after the word "answer", and looks like an answer (short, one line, not a heading like
/// `**Final Answer**` or `**Step 2:**`). Bold is markdown's `**..**` or `__..__`, or HTML's
/// `<b>..</b>` or `<strong>..</strong>`. A span that an earlier bold span of its line offers an
/// alternative to (`**12** or **13**`) marks nothing.
pub(crate) fn bold(text: &str) -> Option<&str> {
    static STARS: Needle = Needle::new(b"**");
    static UNDERSCORES: Needle = Needle::new(b"__");
    let b = text.as_bytes();
    let markdown = |marker: &'static Needle| {
        let hits: Vec<usize> = marker.all(b).collect();
        let spans: Vec<Span> = hits
            .rchunks_exact(2)
            .take(MAX_BOLD_SPANS)
            .map(|p| {
                // `***140***`: bold italics, the third delimiter on each side is markup too.
                let triple = b.get(p[0] + 2) == Some(&b[p[0]]) && b.get(p[1] + 2) == Some(&b[p[1]]);
                let n = if triple && p[1] > p[0] + 3 { 3 } else { 2 };
                Span::new(p[0], n, p[1], n)
            })
            .collect();
        bold_of(text, &spans)
    };
    markdown(&STARS)
        .or_else(|| markdown(&UNDERSCORES))
        .or_else(|| bold_of(text, &html_bold_spans(text)))
        .or_else(|| bold_of(text, &last_line_emphasis(text)))
}

/// How much of the last line is read for italic and LaTeX emphasis spans (bytes).
const MAX_EMPHASIS_LINE: usize = 600;

/// The italic spans (`*27*`, `_27_`: markdown emphasis of one delimiter, `tokens`) and the LaTeX
/// emphasis spans around a value (`\underline{27}`, `\mathbf{1210}`, `\textbf{5}`:
/// `crate::latex::emphasis_holds_value`) of the last line of `text`, last first.
///
/// Decision: emphasis other than bold marks an answer where bold does, on the last line only
/// (italics after the word "answer" elsewhere are read by the answer phrase). A model that sets
/// its last value in italics or `\underline{}` commits to it as it does with bold: it is the
/// answer, and the statement after it is read as after a box (`*27* (maybe 28)` is two
/// candidates, `$\underline{27}$. Not sure.` a qualified one). A span that holds words or a
/// symbol name (`*Note*`, `$\mathbf{v}$`) marks nothing, as with bold.
fn last_line_emphasis(text: &str) -> Vec<Span> {
    use super::tokens::{closing_emphasis, emphasis_at};
    let (line_start, line) = last_line(text);
    let from = floor_boundary(text, (line_start + line.len()).saturating_sub(MAX_EMPHASIS_LINE)).max(line_start);
    let b = text.as_bytes();
    let end = line_start + line.len();
    let mut spans = Vec::new();
    let mut open: Option<(usize, usize)> = None;
    let mut i = from;
    while i < end {
        match b[i] {
            b'*' | b'_' => {
                let n = emphasis_at(text, i).unwrap_or(0);
                if n == 0 {
                    i += 1;
                    continue;
                }
                match open {
                    Some((o, on)) if on == n && b[o] == b[i] && closing_emphasis(text, i) == Some(n) => {
                        if n == 1 {
                            spans.push(Span::new(o, 1, i, 1));
                        }
                        open = None;
                    }
                    _ => open = Some((i, n)),
                }
                i += n;
            }
            b'\\' => {
                let name_len = b[i + 1..end].iter().take_while(|c| c.is_ascii_alphabetic()).count();
                let name = &text[i + 1..i + 1 + name_len];
                let brace = i + 1 + name_len;
                if name_len > 0 && b.get(brace) == Some(&b'{') && crate::latex::EMPHASIS_COMMANDS.contains(&name) {
                    if let Some(close) = matching_brace(&b[..end], brace) {
                        if crate::latex::emphasis_holds_value(&text[brace + 1..close]) {
                            spans.push(Span::new(i, name_len + 2, close, 1));
                            i = close + 1;
                            continue;
                        }
                    }
                }
                i += 1 + name_len.max(1);
            }
            _ => i += 1,
        }
    }
    spans.reverse();
    spans.truncate(MAX_BOLD_SPANS);
    spans
}

/// The end of the emphasis marker that closes an emphasised answer whose content ends at
/// `inner_end` (`**`, `__`, `*`, `_`, `***`, `</b>`, `</strong>`, the `}` of `\\underline{..}`):
/// where the statement after it begins.
pub(crate) fn bold_close(text: &str, inner_end: usize) -> usize {
    let rest = &text[inner_end..];
    if let Some(n) = super::tokens::closing_emphasis(text, inner_end) {
        // `**`, `*`, `_`, `***`: a markdown emphasis run that closes (`tokens`).
        return inner_end + n;
    }
    if rest.starts_with("**") || rest.starts_with("__") {
        return inner_end + 2;
    }
    if rest.starts_with('}') {
        // The brace that closes `\underline{27}`.
        return inner_end + 1;
    }
    if rest.starts_with("</") {
        if let Some(k) = rest.bytes().take(10).position(|c| c == b'>') {
            return inner_end + k + 1;
        }
    }
    inner_end
}

/// How many bold spans are tried, from the last.
const MAX_BOLD_SPANS: usize = 8;
/// Longest content of an HTML bold span read (bytes).
const MAX_HTML_BOLD: usize = 160;

/// One bold span: where it opens, where its content starts and ends, where it closes.
#[derive(Clone, Copy)]
struct Span {
    open: usize,
    inner_start: usize,
    inner_end: usize,
    end: usize,
}

impl Span {
    fn new(open: usize, open_len: usize, close: usize, close_len: usize) -> Span {
        Span { open, inner_start: open + open_len, inner_end: close, end: close + close_len }
    }
}

/// The HTML bold spans of `text` (`<b>11</b>`, `<strong>12</strong>`, either case), last first:
/// each closing tag from the end, its opening tag looked for within [`MAX_HTML_BOLD`] bytes.
fn html_bold_spans(text: &str) -> Vec<Span> {
    let b = text.as_bytes();
    let mut spans = Vec::new();
    // `memrchr` over `<` (vectorized) rather than a reverse substring search for `</`.
    let closes = memchr::memrchr_iter(b'<', b).filter(|&k| b.get(k + 1) == Some(&b'/'));
    for close in closes.take(2 * MAX_BOLD_SPANS) {
        let tag = b[close + 2..].iter().take(8).take_while(|c| c.is_ascii_alphabetic()).count();
        let name = &b[close + 2..close + 2 + tag];
        let bold = name.eq_ignore_ascii_case(b"b") || name.eq_ignore_ascii_case(b"strong");
        if !bold || b.get(close + 2 + tag) != Some(&b'>') {
            continue;
        }
        let from = floor_boundary(text, close.saturating_sub(MAX_HTML_BOLD + tag + 2));
        let open = (from..close).rev().find(|&o| {
            b[o] == b'<' && b.get(o + 1 + tag) == Some(&b'>') && b[o + 1..o + 1 + tag].eq_ignore_ascii_case(name)
        });
        if let Some(o) = open {
            spans.push(Span::new(o, tag + 2, close, tag + 3));
            if spans.len() == MAX_BOLD_SPANS {
                break;
            }
        }
    }
    spans
}

/// The answer among bold `spans` (last first): see [`bold`].
fn bold_of<'t>(text: &'t str, spans: &[Span]) -> Option<&'t str> {
    let b = text.as_bytes();
    let (line_start, _) = last_line(text);
    for (k, span) in spans.iter().enumerate() {
        let inner = &text[span.inner_start..span.inner_end];
        let t = inner.trim();
        if t.is_empty() || t.len() > 100 || t.contains('\n') || t.ends_with(':') {
            continue;
        }
        let w = words(t);
        if contains_ci(t.as_bytes(), b"answer") || w.prose || w.count > 4 {
            continue;
        }
        // A heading (`**Result**:`) or a bold phrase with no math in it is not an answer.
        let heading = text[span.end..].trim_start().starts_with(':');
        let mathy = t.bytes().any(|c| c.is_ascii_digit() || matches!(c, b'\\' | b'^' | b'/' | b'$' | b'=' | b'('));
        if heading || !(mathy || t.chars().count() <= 2) {
            continue;
        }
        let ctx_start = floor_boundary(text, span.open.saturating_sub(48));
        let after_answer = contains_ci(&b[ctx_start..span.open], b"answer");
        if span.open >= line_start || after_answer {
            // `**12** or **13**`: an earlier bold span of the line offered with a hedge.
            let offered = spans.get(k + 1).is_some_and(|prev| {
                prev.open >= line_start
                    && prev.end <= span.open
                    && super::tokens::Lexer::new(&text[prev.end..span.open])
                        .any(|t| matches!(t.kind, super::tokens::Kind::Word(c) if super::statement::hedges(c)))
            });
            return (!offered).then_some(inner);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags() {
        assert_eq!(answer_tag("<think>x</think><answer> 42 </answer>"), Some(" 42 "));
        assert_eq!(answer_tag("<answer>5"), None);
        assert_eq!(answer_tag("<answer>1</answer> <answer>2</answer>"), Some("2"));
    }

    #[test]
    fn phrases() {
        let p = |s: &str| phrase(s).map(|(a, _, _)| a);
        assert_eq!(p("The final answer is $5$. I hope it is correct."), Some("5".into()));
        assert_eq!(p("So the answer is 42."), Some("42".into()));
        assert_eq!(p("**Answer:** 7"), Some("7".into()));
        assert_eq!(p("Final Answer: The largest $n$ is 34."), Some("34".into()));
        assert_eq!(p("{\"answer\": \"13\"}"), Some("13".into()));
        assert_eq!(p("reasoning\nA: 45"), Some("45".into()));
        assert_eq!(p("To answer this we compute."), None);
        assert_eq!(p("The answers are 2 and 3."), None);
        assert_eq!(p("The answer is 7, so we stop"), Some("7".into()));
        assert_eq!(p("The answer is 5 because it works"), Some("5".into()));
        assert_eq!(p("The answer is 1, 2, and 3"), Some("1, 2, and 3".into()));
        assert_eq!(p("The answer is x, y"), Some("x, y".into()));
        assert_eq!(p("Final Answer: The number of points that fit is 19. <|im_start|>"), Some("19".into()));
        // The words around the number are not a plain statement of it (`ago`, a name before it): the
        // sentence is the answer, and the scorer's allow-lists reject it.
        assert_eq!(
            p("Final Answer: Jane started growing Sphere 3 hours ago. I hope it is correct."),
            Some("Jane started growing Sphere 3 hours ago".into())
        );
        assert_eq!(p("Final Answer: There are 12 eggs in total. I hope it is correct."), Some("12".into()));
        assert_eq!(p("The answer: there are 1,234 ways in all"), Some("1,234".into()));
        assert_eq!(p("Final answer: half of 10"), Some("half of 10".into()));
        assert_eq!(p("Final answer: after 3 days it has 12 cells"), Some("after 3 days it has 12 cells".into()));
        assert_eq!(p("Final answer: the x2 term vanishes in the end"), Some("the x2 term vanishes in the end".into()));
    }

    #[test]
    fn a_value_then_what_follows_it_on_the_line() {
        let p = |s: &str| phrase(s).map(|(a, _, end)| (a, s[end..].to_string()));
        // The value alone; the aside or remark after it is the statement's to read.
        let apart = |a: &str, rest: &str| Some((a.to_string(), rest.to_string()));
        assert_eq!(p("x\nA: 14 (that is, fourteen)"), apart("14", " (that is, fourteen)"));
        assert_eq!(p("x\nA: 800 — in words, eight hundred"), apart("800", " — in words, eight hundred"));
        assert_eq!(p("x\nA: 6 Good luck with your studies!"), apart("6", " Good luck with your studies!"));
        assert_eq!(p("The answer is 6 Have a great day!"), apart("6", " Have a great day!"));
        // A qualifier is part of the answer; words that continue it are read as before.
        assert_eq!(p("x\nA: 6 I think").map(|(a, _)| a), Some("6 I think".into()));
        assert_eq!(p("x\nA: 6 (approximately)").map(|(a, _)| a), Some("6 (approximately)".into()));
        assert_eq!(p("x\nA: 6 dozen").map(|(a, _)| a), Some("6 dozen".into()));
        assert_eq!(p("x\nA: 6 or 7").map(|(a, _)| a), Some("6 or 7".into()));
        // Never cut inside a parenthesis.
        assert_eq!(
            p("Final answer: the sum (that is, x + y)").map(|(a, _)| a),
            Some("the sum (that is, x + y)".into())
        );
    }

    #[test]
    fn phrases_and_tags_in_code_are_mentioned() {
        let p = |s: &str| phrase(s).map(|(a, _, _)| a);
        let checked = "x\nA: 3\n\nRunning a check:\n```python\nanswer = solve()\nprint(answer)\n```\nOutput: 3";
        assert_eq!(p(checked), Some("3".into()));
        assert_eq!(p("We print `answer = 5` first.\nThe answer is 6."), Some("6".into()));
        assert_eq!(p("Use `answer: 5` as the format."), None);
        assert_eq!(answer_tag("<answer>4</answer>\n```\n<answer>5</answer>\n```"), Some("4"));
    }

    #[test]
    fn a_q_and_a_drill_answers_with_its_last_a_label() {
        let answer = |t: &str| phrase(t).map(|(a, ..)| a);
        let bold = "So 27.\n\n**Q:** What did the first pass give?\n**A:** $26$\n**Q:** And the answer?\n**A:** $27$";
        assert_eq!(answer(bold).as_deref(), Some("27"));
        let listed = "So 27.\n\n- Q: first estimate? A: $26$\n- Q: final result? A: $27$";
        assert_eq!(answer(listed).as_deref(), Some("27"));
        // An `A:` after other words, or in a list with no question, labels no answer.
        assert_eq!(answer("Choice A: 3"), None);
        assert_eq!(answer("The options:\n- A: 3\n- B: 4"), None);
        assert_eq!(answer("DATA: 3"), None);
    }

    #[test]
    fn hashes_and_bold() {
        assert_eq!(gsm8k("so\n#### 1,234\n"), Some("1,234"));
        assert_eq!(gsm8k("#### Step 2: compute\nx"), None);
        assert_eq!(bold("We get\nThe total is **42** dollars."), Some("42"));
        assert_eq!(bold("**Final Answer**\n5"), None);
        assert_eq!(bold("5. **Result**: The probability is 1/2"), None);
        assert_eq!(bold("The day is **Monday**"), None);
        // HTML bold is bold.
        assert_eq!(bold("We add.\n\n<b>11</b>"), Some("11"));
        assert_eq!(bold("We add.\n\n<strong>12 \\frac{3}{5}</strong>"), Some("12 \\frac{3}{5}"));
        assert_eq!(bold("We add.\n\nThe result: <B>7</B>."), Some("7"));
        assert_eq!(bold("<b>Step 2</b>: add\nso we stop"), None);
        assert_eq!(bold("We add.\n\n<b>Result</b>: 7"), None);
        // A bold span offered beside another is no marker.
        assert_eq!(bold("We add.\n\n<b>11</b> or <b>12</b>"), None);
        assert_eq!(bold("We add.\n\n**11** or **12**"), None);
        assert_eq!(bold("We add.\n\n**11** and **12**"), Some("12"));
    }
}

#[cfg(test)]
mod foreign_tests {
    use super::*;

    #[test]
    fn answer_phrases_of_other_languages() {
        let p = |s: &str| foreign_phrase(s).map(|(a, _)| a);
        assert_eq!(p("Die Antwort ist 42."), Some("42".into()), "Die Antwort ist 42.");
        assert_eq!(p("答えは42です。"), Some("42".into()), "答えは42です。");
        assert_eq!(p("答案为：42"), Some("42".into()), "答案为：42");
        assert_eq!(p("Đáp án: 42"), Some("42".into()), "Đáp án: 42");
        assert_eq!(p("Ответ: $7$"), Some("7".into()), "Ответ: $7$");
        assert_eq!(p("Die Antworten sind unklar."), None, "Die Antworten sind unklar.");
    }
}
