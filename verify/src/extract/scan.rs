//! Byte-level helpers shared by the strategies.
//!
//! Every delimiter the strategies look for is ASCII, so an index found by matching an ASCII byte is
//! always a `char` boundary and slicing there cannot panic. Indices computed any other way (length
//! caps) go through [`floor_boundary`]. Every helper is linear in the bytes it looks at.

use std::sync::OnceLock;

use memchr::memmem::Finder;

use super::tokens::{Kind, Lexer};
use crate::lexicon::{self, Class};

/// A forward `memmem` searcher for a fixed needle, built once. Forward search is SIMD-accelerated
/// (reverse search is not), so "the last occurrence" is found by one forward pass.
pub(crate) struct Needle {
    bytes: &'static [u8],
    finder: OnceLock<Finder<'static>>,
}

impl Needle {
    /// A searcher for `needle`, built on first use.
    pub(crate) const fn new(bytes: &'static [u8]) -> Needle {
        Needle { bytes, finder: OnceLock::new() }
    }

    fn finder(&self) -> &Finder<'static> {
        self.finder.get_or_init(|| Finder::new(self.bytes))
    }

    /// All non-overlapping occurrences, in order.
    pub(crate) fn all<'h>(&'static self, hay: &'h [u8]) -> impl Iterator<Item = usize> + 'h {
        self.finder().find_iter(hay)
    }

    /// The first occurrence.
    pub(crate) fn first(&'static self, hay: &[u8]) -> Option<usize> {
        self.finder().find(hay)
    }

    /// The last occurrence, found backwards from each occurrence of the needle's first byte (a
    /// text without that byte costs one vectorized pass). The needle cannot overlap itself (no
    /// proper prefix is also a suffix: `</think>`, `<!--`), so this is also the last of the
    /// non-overlapping occurrences [`Needle::all`] finds.
    pub(crate) fn last(&'static self, hay: &[u8]) -> Option<usize> {
        debug_assert!(!overlaps_itself(self.bytes), "{:?} overlaps itself", self.bytes);
        let first = *self.bytes.first()?;
        memchr::memrchr_iter(first, hay).find(|&k| hay[k..].starts_with(self.bytes))
    }
}

/// Whether a proper prefix of `needle` is also its suffix (`aba`, ```` ``` ````): two of its
/// occurrences can then overlap.
fn overlaps_itself(needle: &[u8]) -> bool {
    (1..needle.len()).any(|k| needle[..k] == needle[needle.len() - k..])
}

/// Where code stands in a text: fenced blocks (between two ```` ``` ````) and inline code (between
/// two backticks on one line). A marker there is mentioned, not used (`answer = solve()`).
pub(crate) struct Code {
    /// The fences, in order.
    fences: Vec<usize>,
    /// Every backtick, in order (none when the text has none).
    ticks: Vec<usize>,
}

/// Most backticks (and fences) recorded: a text with more is no response but an attack, and
/// markers after them are read as outside code (as without this reading).
const MAX_TICKS: usize = 4096;
/// How far along its line inline code is looked for around a byte (bytes, each side).
const MAX_INLINE_CODE_BYTES: usize = 256;

impl Code {
    /// The code of `text`: one pass for its backticks, one for its fences.
    pub(crate) fn of(text: &str) -> Code {
        static FENCE: Needle = Needle::new(b"```");
        let b = text.as_bytes();
        let ticks: Vec<usize> = memchr::memchr_iter(b'`', b).take(MAX_TICKS).collect();
        let fences = if ticks.is_empty() { Vec::new() } else { FENCE.all(b).take(MAX_TICKS).collect() };
        Code { fences, ticks }
    }

    /// Whether byte `at` of `text` lies in code: after an odd number of fences with one after
    /// it, or after an odd number of backticks of its line with one after it on the line
    /// (within [`MAX_INLINE_CODE_BYTES`]). Two binary searches and two bounded line scans.
    pub(crate) fn holds(&self, text: &str, at: usize) -> bool {
        if self.ticks.is_empty() {
            return false;
        }
        let before = self.fences.partition_point(|&f| f < at);
        if before % 2 == 1 && before < self.fences.len() {
            return !data_block(text, self.fences[before - 1]);
        }
        let b = text.as_bytes();
        let from = at.saturating_sub(MAX_INLINE_CODE_BYTES);
        let to = (at + MAX_INLINE_CODE_BYTES).min(b.len());
        let line_start = memchr::memrchr(b'\n', &b[from..at]).map_or(from, |k| from + k + 1);
        let line_end = memchr::memchr(b'\n', &b[at..to]).map_or(to, |k| at + k);
        let (first, next) = (self.ticks.partition_point(|&t| t < line_start), self.ticks.partition_point(|&t| t < at));
        (next - first) % 2 == 1 && self.ticks.get(next).is_some_and(|&t| t < line_end)
    }
}

/// Data formats whose fenced blocks hold a structured answer, not code (```` ```json ````).
const DATA_FORMATS: &[&str] = &["json", "jsonc", "json5", "jsonl", "yaml", "yml", "toml"];

/// Whether the fenced block opened at byte `fence` holds data, not code: its info string names a
/// data format (```` ```json ````), or it has none and its content opens a record (`{`). A
/// structured answer (`{"reasoning": ..., "answer": "600"}`) is the response's answer record.
fn data_block(text: &str, fence: usize) -> bool {
    let rest = &text[fence + 3..];
    let line_end = rest.find('\n').unwrap_or(rest.len());
    let info = rest[..line_end].trim();
    if info.is_empty() {
        return rest[line_end..].trim_start().starts_with('{');
    }
    let lang = info.split(|c: char| c.is_whitespace() || c == '{').next().unwrap_or("");
    DATA_FORMATS.iter().any(|f| lang.eq_ignore_ascii_case(f))
}

/// The largest `char` boundary of `s` that is `<= i`.
pub(crate) fn floor_boundary(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    let mut j = i;
    while j > 0 && !s.is_char_boundary(j) {
        j -= 1;
    }
    j
}

/// `s[..max]`, cut back to a `char` boundary.
pub(crate) fn cap(s: &str, max: usize) -> &str {
    &s[..floor_boundary(s, max)]
}

/// The last line of `s` with non-whitespace content, trimmed, and the byte offset where it starts.
pub(crate) fn last_line(s: &str) -> (usize, &str) {
    let t = s.trim_end();
    let start = memchr::memrchr(b'\n', t.as_bytes()).map_or(0, |i| i + 1);
    let line = &t[start..];
    let lead = line.len() - line.trim_start().len();
    (start + lead, line.trim())
}

/// Index of the `}` closing the `{` at `open`, counting nested braces and skipping escaped
/// characters (`\{`, `\}`, `\\`). `None` when the group is not closed.
pub(crate) fn matching_brace(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while i < b.len() {
        match memchr::memchr3(b'{', b'}', b'\\', &b[i..]) {
            None => return None,
            Some(off) => i += off,
        }
        match b[i] {
            b'\\' => i += 2,
            b'{' => {
                depth += 1;
                i += 1;
            }
            _ => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i);
                }
                i += 1;
            }
        }
    }
    None
}

/// ASCII case-insensitive: does `b[i..]` start with the lower-case `pat`?
pub(crate) fn starts_with_ci(b: &[u8], i: usize, pat: &[u8]) -> bool {
    b.len() >= i + pat.len() && b[i..i + pat.len()].iter().zip(pat).all(|(x, p)| x.to_ascii_lowercase() == *p)
}

/// ASCII case-insensitive: does the lower-case `pat` occur in `b`?
pub(crate) fn contains_ci(b: &[u8], pat: &[u8]) -> bool {
    if pat.is_empty() || b.len() < pat.len() {
        return pat.is_empty();
    }
    (0..=b.len() - pat.len()).any(|i| starts_with_ci(b, i, pat))
}

/// Plain-word statistics of a text, ignoring LaTeX commands and the brace groups that follow them
/// (`\text{ feet}`, `\begin{pmatrix}`): how many words of two or more ASCII letters, and whether
/// one of them is a typical prose word ("the", "is", "so", ...).
pub(crate) struct Words {
    pub count: usize,
    pub prose: bool,
}

/// Count the plain words of `s` (see [`Words`]), from its token stream. Linear.
pub(crate) fn words(s: &str) -> Words {
    let b = s.as_bytes();
    let mut out = Words { count: 0, prose: false };
    let mut lexer = Lexer::new(s);
    while let Some(t) = lexer.next() {
        match t.kind {
            Kind::Command => {
                // A command's brace groups are its arguments, not words (`\text{ feet}`).
                let mut i = t.range.end;
                while b.get(i) == Some(&b'{') {
                    match matching_brace(b, i) {
                        Some(close) => i = close + 1,
                        None => return out,
                    }
                }
                lexer.seek(i);
            }
            Kind::Word(classes) if t.is_ascii_word(s) => {
                // Apostrophes split a word here (`it's`: `it` and `s`).
                let w = t.text(s);
                let mut parts = w.split('\'').filter(|p| p.len() >= 2).peekable();
                let whole = parts.peek().is_some_and(|p| p.len() == w.len());
                for p in parts {
                    out.count += 1;
                    out.prose |= if whole { classes.has(Class::Prose) } else { lexicon::is(p, Class::Prose) };
                }
            }
            _ => {}
        }
    }
    out
}

/// True for bytes that may continue a word or an identifier.
pub(crate) fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_occurrence_of_a_needle() {
        static TAG: Needle = Needle::new(b"</think>");
        assert_eq!(TAG.last(b"a</think>b</think>c"), Some(10));
        assert_eq!(TAG.last(b"a</thin>b<</think"), None);
        assert_eq!(TAG.last(b""), None);
        assert!(overlaps_itself(b"```") && overlaps_itself(b"abca") && !overlaps_itself(b"<!--"));
    }

    #[test]
    fn code_fences_and_inline_code() {
        let t = "a `x = 1` b\n```\nanswer = 2\n```\nanswer: 3";
        let code = Code::of(t);
        assert!(code.holds(t, t.find("x =").unwrap()));
        assert!(code.holds(t, t.find("answer =").unwrap()));
        assert!(!code.holds(t, t.find("answer:").unwrap()));
        assert!(!code.holds(t, 0));
        // An unclosed fence or backtick holds nothing after it.
        let open = "```\nanswer = 2";
        assert!(!Code::of(open).holds(open, 4));
        let plain = "no code here";
        assert!(!Code::of(plain).holds(plain, 3));
    }

    #[test]
    fn braces_balance_and_escapes() {
        let b = br"{a{b}c\}d}e";
        assert_eq!(matching_brace(b, 0), Some(9));
        assert_eq!(matching_brace(br"{a{b}", 0), None);
        assert_eq!(matching_brace(br"{\\}", 0), Some(3));
    }

    #[test]
    fn boundaries() {
        let s = "aé€";
        assert_eq!(cap(s, 2), "a");
        assert_eq!(cap(s, 3), "aé");
        assert_eq!(cap(s, 100), s);
        assert_eq!(last_line("x\n  y z \n\n "), (4, "y z"));
        assert_eq!(last_line("abc"), (0, "abc"));
    }

    #[test]
    fn word_counts() {
        assert_eq!(words(r"14 \text{ right triangles}").count, 0);
        assert_eq!(words(r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}").count, 0);
        let w = words("So the answer is 5");
        assert_eq!(w.count, 4);
        assert!(w.prose);
        assert!(!words("no solution").prose);
    }

    #[test]
    fn data_fences_are_no_code() {
        let holds = |t: &str| Code::of(t).holds(t, t.find("answer").unwrap());
        assert!(!holds("```json\n{\"answer\": \"6\"}\n```"));
        assert!(!holds("```YAML\nanswer: 6\n```"));
        assert!(!holds("```\n{\"answer\": \"6\"}\n```"));
        assert!(holds("```python\nanswer = solve()\n```"));
        assert!(holds("```\nanswer = solve()\n```"));
    }
}
