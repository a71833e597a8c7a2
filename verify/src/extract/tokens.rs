//! One token stream for the final-answer contract: a text as words, numbers, LaTeX commands and
//! single characters, each with its byte range; a word carries its classes from the one lexicon
//! (`crate::lexicon`). The final statement (`statement`), the wording of an answer (`wording`),
//! the plain-word counts (`scan`), the connectors between boxes (`boxed`), the assertion checks
//! (`assertion`), the answer phrases and their lexicon phrases ([`phrase_at`], `tagged`), the
//! choice mentions and their connectors (`choice`) and the connectors between math blocks
//! (`delimited`) all read this stream, so a word is the same word everywhere. (The searches that
//! find where to look, `memmem` for a phrase, `memchr` for a delimiter, stay byte searches: a
//! whole response is never lexed.)
//!
//! - A **word** is a run of letters of the Latin script with inner apostrophes (`don't`,
//!   `quizás`, `être`, `realtà`), or a run of letters of another script (`答案`, `ответ`). A run
//!   of a script written without spaces (Han, kana, Hangul) is one word here; the final statement
//!   reads the lexicon's words inside it ([`crate::lexicon::leading_word`]).
//! - A **number** is a run of ASCII digits with an inner `.`, `,` or `/` before a digit
//!   (`1,234.5`, `3/4`); a **numeral** a run of numerals of another script or form (`١١`, `Ⅻ`).
//! - `\name` is a **command**; `\` and one other character an **escape** (`\,`, `\{`, `\$`).
//! - Anything else but ASCII whitespace is one **character** of its own.
//!
//! Cost: linear, no allocation (a word of another script is lower-cased for its lookup). A
//! reader that takes a group whole (a math block, a box) moves on with [`Lexer::seek`]. Every
//! range ends at a `char` boundary.

use std::ops::Range;

use super::scan::is_word_byte;
use crate::lexicon::{self, Class, Classes};
use crate::numerals;

/// Text commands whose braces hold words (`\text{ or }`, `\mbox{apples}`).
pub(crate) const TEXT_COMMANDS: &[&str] =
    &["text", "textbf", "textit", "textrm", "textnormal", "mbox", "hbox", "emph", "mathrm"];

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A word, with its lexicon classes (empty when the lexicon does not know it).
    Word(Classes),
    /// ASCII digits (`1,234.5`).
    Number,
    /// Numerals of another script or form (`١١`, `Ⅻ`, `½`).
    Numeral,
    /// `\name` (the range covers the backslash).
    Command,
    /// `\` and one character that is not a letter.
    Escape,
    /// Any other character.
    Char(char),
}

/// One token and where it stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    pub kind: Kind,
    pub range: Range<usize>,
}

impl Token {
    /// The token's text in the `text` it was read from.
    pub(crate) fn text<'a>(&self, text: &'a str) -> &'a str {
        &text[self.range.clone()]
    }

    /// Whether it is a word of ASCII letters (and apostrophes).
    pub(crate) fn is_ascii_word(&self, text: &str) -> bool {
        matches!(self.kind, Kind::Word(_)) && text.as_bytes()[self.range.start].is_ascii_alphabetic()
    }

    /// Whether it stands alone as a word: no letter, digit, `_` or backslash right before it and
    /// no letter, digit or `_` right after it (`or` in `5 or 6`, not in `5or` or `\or`).
    pub(crate) fn stands_alone(&self, text: &str) -> bool {
        let b = text.as_bytes();
        let before = self.range.start.checked_sub(1).map(|k| b[k]);
        !before.is_some_and(|c| is_word_byte(c) || c == b'\\')
            && !b.get(self.range.end).is_some_and(|c| is_word_byte(*c))
    }
}

/// The token stream of a text.
#[derive(Clone)]
pub(crate) struct Lexer<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Lexer<'a> {
    /// The tokens of `text`, from its start.
    pub(crate) fn new(text: &'a str) -> Lexer<'a> {
        Lexer { text, at: 0 }
    }

    /// Continue at byte `at` (a `char` boundary past the last token read).
    pub(crate) fn seek(&mut self, at: usize) {
        self.at = at.min(self.text.len());
    }

    /// Where the next token is looked for: past the last token read, or where [`Lexer::seek`] moved.
    pub(crate) fn position(&self) -> usize {
        self.at
    }
}

impl Iterator for Lexer<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        let (s, b) = (self.text, self.text.as_bytes());
        let mut i = self.at;
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let c = *b.get(i)?;
        let run = |from: usize, keep: &dyn Fn(usize) -> bool| {
            let mut j = from;
            while j < b.len() && keep(j) {
                j += 1;
            }
            j
        };
        let (kind, end) = if c == b'\\' {
            let j = run(i + 1, &|j| b[j].is_ascii_alphabetic());
            if j > i + 1 {
                (Kind::Command, j)
            } else {
                (Kind::Escape, i + 1 + s[i + 1..].chars().next().map_or(0, char::len_utf8))
            }
        } else if c.is_ascii_digit() {
            let sep = |j: usize| matches!(b[j], b'.' | b',' | b'/') && b.get(j + 1).is_some_and(u8::is_ascii_digit);
            (Kind::Number, run(i, &|j| b[j].is_ascii_digit() || sep(j)))
        } else if c.is_ascii_alphabetic() || s[i..].starts_with(latin_letter) {
            // Latin letters, with their diacritics (`quizás`, `être`) and inner apostrophes.
            let mut j = run(i, &|j| b[j].is_ascii_alphabetic() || b[j] == b'\'');
            while b.get(j).is_some_and(|&x| x >= 0x80) {
                match s[j..].chars().next() {
                    Some(ch) if latin_letter(ch) => {
                        j = run(j + ch.len_utf8(), &|j| b[j].is_ascii_alphabetic() || b[j] == b'\'')
                    }
                    _ => break,
                }
            }
            (Kind::Word(lexicon::classes(&s[i..j])), j)
        } else if c >= 0x80 {
            let ch = s[i..].chars().next().unwrap_or(' ');
            let chars_while = |keep: &dyn Fn(char) -> bool| {
                i + s[i..].chars().take_while(|&c| keep(c)).map(char::len_utf8).sum::<usize>()
            };
            if numerals::is_other_numeral(ch) {
                (Kind::Numeral, chars_while(&numerals::is_other_numeral))
            } else if ch.is_alphabetic() {
                let j = chars_while(&|c| !c.is_ascii() && c.is_alphabetic() && !numerals::is_other_numeral(c));
                (Kind::Word(lexicon::classes(&s[i..j])), j)
            } else {
                (Kind::Char(ch), i + ch.len_utf8())
            }
        } else {
            (Kind::Char(c as char), i + 1)
        };
        self.at = end;
        Some(Token { kind, range: i..end })
    }
}

/// Whether `c` is a letter of the Latin script beyond ASCII (`á`, `ê`, `ø`, `ự`; not `µ`, `×`).
pub(crate) fn latin_letter(c: char) -> bool {
    matches!(c, '\u{c0}'..='\u{24f}' | '\u{1e00}'..='\u{1eff}') && c.is_alphabetic()
}

/// Longest markdown emphasis delimiter run (`***`, `___`: bold italics).
const MAX_EMPHASIS_RUN: usize = 3;
/// How far along its line an emphasis delimiter's partner is looked for (bytes).
const MAX_EMPHASIS_SPAN: usize = 200;

/// The length of the run of `*` or `_` that starts at byte `at` of `b` (1 to [`MAX_EMPHASIS_RUN`]),
/// when it starts the run (the byte before is another) and is no longer; 0 otherwise.
fn emphasis_run(b: &[u8], at: usize) -> usize {
    let Some(&c) = b.get(at).filter(|c| matches!(c, b'*' | b'_')) else { return 0 };
    if at > 0 && b[at - 1] == c {
        return 0;
    }
    let n = b[at..].iter().take(MAX_EMPHASIS_RUN + 1).take_while(|&&x| x == c).count();
    if n > MAX_EMPHASIS_RUN {
        0
    } else {
        n
    }
}

/// Whether the run `at..at + n` can open emphasis: it starts a word (nothing but whitespace,
/// punctuation or the start of the text before it; not `\*`, `^*`, `x_`, `2*`) and text follows.
fn opens_emphasis(b: &[u8], at: usize, n: usize) -> bool {
    let before_ok = at == 0 || !(b[at - 1].is_ascii_alphanumeric() || matches!(b[at - 1], b'\\' | b'^' | b'_' | b'*'));
    before_ok && b.get(at + n).is_some_and(|c| !c.is_ascii_whitespace())
}

/// Whether the run `at..at + n` can close emphasis: text before it, and it ends a word (nothing
/// but whitespace, punctuation or the end after it; not `2*3`, `x_1`, `a_{n}`, `x^*`).
fn closes_emphasis(b: &[u8], at: usize, n: usize) -> bool {
    let before_ok = at > 0 && !b[at - 1].is_ascii_whitespace() && !matches!(b[at - 1], b'\\' | b'^');
    let after = b.get(at + n);
    before_ok && !after.is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'{' | b'_' | b'*' | b'\\'))
}

/// Markdown emphasis (`*x*`, `_x_`, `**x**`, `__x__`, `***x***`, `___x___`) is markup, never part
/// of a value: the length of the emphasis delimiter run at byte `at` of `text`, when it is one.
/// Only paired delimiters at word boundaries are: a run that opens a word and whose equal run
/// closes a word later on its line, or one that closes a word and whose equal run opens one
/// earlier on its line (each looked for within [`MAX_EMPHASIS_SPAN`] bytes). A `*` between
/// operands (`2*3`, `a * b`, `x^*`) or a `_` of a subscript (`x_1`, `a_{n}`) is none.
pub(crate) fn emphasis_at(text: &str, at: usize) -> Option<usize> {
    let b = text.as_bytes();
    let n = emphasis_run(b, at);
    if n == 0 {
        return None;
    }
    let c = b[at];
    let same = |k: usize| b[k] == c && emphasis_run(b, k) == n;
    if opens_emphasis(b, at, n) {
        let end = (at + n + MAX_EMPHASIS_SPAN).min(b.len());
        let line = memchr::memchr(b'\n', &b[at + n..end]).map_or(end, |k| at + n + k);
        if (at + n + 1..line).any(|k| same(k) && closes_emphasis(b, k, n)) {
            return Some(n);
        }
    }
    if closes_emphasis(b, at, n) {
        let from = at.saturating_sub(MAX_EMPHASIS_SPAN);
        let line = memchr::memrchr(b'\n', &b[from..at]).map_or(from, |k| from + k + 1);
        if (line..at.saturating_sub(n)).rev().any(|k| same(k) && opens_emphasis(b, k, n)) {
            return Some(n);
        }
    }
    None
}

/// The length of a markdown emphasis run at byte `at` of `text` that can close emphasis (ends a
/// word: `27*.`, `27** (maybe`), for a reader that knows the run opened before it; `None` for
/// a `*` between operands (`2*3`) or a subscript's `_` (`x_1`).
pub(crate) fn closing_emphasis(text: &str, at: usize) -> Option<usize> {
    let b = text.as_bytes();
    let n = emphasis_run(b, at);
    (n > 0 && closes_emphasis(b, at, n)).then_some(n)
}

/// The text of `s` inside one pair of markdown emphasis delimiters that wraps it whole (`*27*`,
/// `_27_`, `***27***`), trimmed; `None` when none wraps it.
pub(crate) fn inside_emphasis(s: &str) -> Option<&str> {
    let b = s.as_bytes();
    let n = emphasis_run(b, 0);
    if n == 0 || b.len() <= 2 * n {
        return None;
    }
    let close = b.len() - n;
    let wraps = b[close..].iter().all(|&x| x == b[0])
        && b[close - 1] != b[0]
        && opens_emphasis(b, 0, n)
        && closes_emphasis(b, close, n);
    wraps.then(|| s[n..close].trim())
}

/// Most words of one phrase in the lexicon (`as a result`).
const MAX_PHRASE_WORDS: usize = 3;

/// The length of the longest phrase of `class` that starts at byte `at` of `text`: one to
/// [`MAX_PHRASE_WORDS`] word tokens of ASCII letters, single spaces between, the last one
/// ending a word (no digit or `_` right after it).
pub(crate) fn phrase_at(text: &str, at: usize, class: Class) -> Option<usize> {
    let b = text.as_bytes();
    let mut lexer = Lexer::new(text);
    lexer.seek(at);
    let mut found = None;
    let mut next_at = at;
    for _ in 0..MAX_PHRASE_WORDS {
        let Some(t) = lexer.next().filter(|t| t.range.start == next_at && t.is_ascii_word(text)) else { break };
        if b.get(t.range.end).is_some_and(|c| is_word_byte(*c)) {
            break;
        }
        if lexicon::is_bytes(&b[at..t.range.end], class) {
            found = Some(t.range.end - at);
        }
        if b.get(t.range.end) != Some(&b' ') {
            break;
        }
        next_at = t.range.end + 1;
    }
    found
}

/// Whether `text` holds only tokens that `keep` accepts (none is also all).
pub(crate) fn all_tokens(text: &str, keep: impl Fn(&Token) -> bool) -> bool {
    Lexer::new(text).all(|t| keep(&t))
}

/// The words of `text` (ASCII letters with inner apostrophes, never a command's name), in order,
/// each with its classes (read as the caller takes them).
pub(crate) fn ascii_words(text: &str) -> impl Iterator<Item = (&str, Classes)> {
    Lexer::new(text).filter_map(move |t| match t.kind {
        Kind::Word(c) if t.is_ascii_word(text) => Some((t.text(text), c)),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<(&str, &'static str)> {
        Lexer::new(s)
            .map(|t| {
                let k = match t.kind {
                    Kind::Word(_) => "word",
                    Kind::Number => "number",
                    Kind::Numeral => "numeral",
                    Kind::Command => "command",
                    Kind::Escape => "escape",
                    Kind::Char(_) => "char",
                };
                (t.text(s), k)
            })
            .collect()
    }

    #[test]
    fn tokens_with_ranges() {
        assert_eq!(
            kinds(r"It's 1,234.5 \text{or} \, 答案 ١١!"),
            vec![
                ("It's", "word"),
                ("1,234.5", "number"),
                (r"\text", "command"),
                ("{", "char"),
                ("or", "word"),
                ("}", "char"),
                (r"\,", "escape"),
                ("答案", "word"),
                ("١١", "numeral"),
                ("!", "char"),
            ]
        );
        assert_eq!(
            kinds("3x, 5."),
            vec![("3", "number"), ("x", "word"), (",", "char"), ("5", "number"), (".", "char")]
        );
        assert_eq!(kinds("\\"), vec![("\\", "escape")]);
        let t = Lexer::new("so 5or 6").nth(1).unwrap();
        assert_eq!(t.range, 3..4);
        let or = Lexer::new("5 or 6").nth(1).unwrap();
        assert!(matches!(or.kind, Kind::Word(c) if c.has(Class::HedgeCue)) && or.stands_alone("5 or 6"));
        assert!(!Lexer::new("5or").nth(1).unwrap().stands_alone("5or"));
    }

    #[test]
    fn latin_words_keep_their_diacritics() {
        let words: Vec<&str> =
            Lexer::new("o quizás être realtà µm 3×4").map(|t| &"o quizás être realtà µm 3×4"[t.range]).collect();
        assert_eq!(words, vec!["o", "quizás", "être", "realtà", "µ", "m", "3", "×", "4"]);
        assert!(matches!(Lexer::new("quizás").next().unwrap().kind, Kind::Word(c) if c.has(Class::HedgeCue)));
        assert!(matches!(Lexer::new("Realtà").next().unwrap().kind, Kind::Word(c) if c.has(Class::Revision)));
    }

    #[test]
    fn phrases_of_a_class() {
        let s = "So as a result, x";
        assert_eq!(phrase_at(s, 3, Class::ConclusionOpener), Some("as a result".len()));
        assert_eq!(phrase_at(s, 0, Class::ConclusionOpener), Some(2));
        // A phrase ends a word and takes single spaces only.
        assert_eq!(phrase_at("So1 x", 0, Class::ConclusionOpener), None);
        assert_eq!(phrase_at("as  a result", 0, Class::ConclusionOpener), None);
        assert!(all_tokens(r", or \text{and} /", |t| !matches!(t.kind, Kind::Number)));
    }

    #[test]
    fn emphasis_is_paired_delimiters_at_word_boundaries() {
        let at = |s: &str, k: usize| emphasis_at(s, k);
        assert_eq!(at("*27* (maybe 28)", 0), Some(1));
        assert_eq!(at("*27* (maybe 28)", 3), Some(1));
        assert_eq!(at("so **7**.", 3), Some(2));
        assert_eq!(at("so **7**.", 6), Some(2));
        assert_eq!(at("***7***", 0), Some(3));
        assert_eq!(at("or _28_, x", 3), Some(1));
        // Multiplication, a lone star, subscripts, a conjugate: no emphasis.
        assert_eq!(at("2*3*4", 1), None);
        assert_eq!(at("2*3*4", 3), None);
        assert_eq!(at("a * b * c", 2), None);
        assert_eq!(at("x^* and y^*", 2), None);
        assert_eq!(at("x_1 and y_2", 1), None);
        assert_eq!(at("a_{n} and b_{n}", 1), None);
        assert_eq!(at("*27", 0), None);
        assert_eq!(at("****5****", 0), None);
        assert_eq!(at("*27\n28*", 0), None);
        assert_eq!(inside_emphasis("*27*"), Some("27"));
        assert_eq!(inside_emphasis("___x___"), Some("x"));
        assert_eq!(inside_emphasis("**27*"), None);
        assert_eq!(inside_emphasis("*2*3"), None);
        assert_eq!(closing_emphasis("27* (maybe", 2), Some(1));
        assert_eq!(closing_emphasis("2*3", 1), None);
    }

    #[test]
    fn words_are_looked_up_once() {
        let w: Vec<_> = ascii_words(r"The answer \is not 5").collect();
        assert_eq!(w.iter().map(|w| w.0).collect::<Vec<_>>(), vec!["The", "answer", "not"]);
        assert!(w[2].1.has(Class::Negation));
    }
}
