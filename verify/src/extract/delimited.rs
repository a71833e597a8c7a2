//! Math blocks: `$..$`, `$$..$$`, `\(..\)`, `\[..\]`.
//!
//! One forward pass pairs the delimiters the way a LaTeX reader would (an opened block runs to
//! its own closer; `\$` is an escaped dollar, not a delimiter; `\\` is a line break). A block that
//! is never closed is not a block, and blocks with only whitespace inside are skipped.

/// A math block: the content's byte range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Block {
    pub start: usize,
    pub end: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Dollar,
    DoubleDollar,
    Paren,
    Bracket,
}

/// The first complete math block starting at byte `at` exactly (`at` must be on a delimiter).
pub(crate) fn block_at(text: &str, at: usize) -> Option<Block> {
    let b = text.as_bytes();
    let (mode, start) = opener(b, at)?;
    let end = closer(b, mode, start)?;
    Some(Block { start, end })
}

/// The delimiter opening a block at `i`, if any, and where its content starts.
fn opener(b: &[u8], i: usize) -> Option<(Mode, usize)> {
    match (b.get(i)?, b.get(i + 1)) {
        (b'$', Some(b'$')) => Some((Mode::DoubleDollar, i + 2)),
        (b'$', _) => Some((Mode::Dollar, i + 1)),
        (b'\\', Some(b'(')) => Some((Mode::Paren, i + 2)),
        (b'\\', Some(b'[')) => Some((Mode::Bracket, i + 2)),
        _ => None,
    }
}

/// Where the block of `mode` whose content starts at `from` ends (content end), or `None`.
fn closer(b: &[u8], mode: Mode, from: usize) -> Option<usize> {
    let mut i = from;
    while i < b.len() {
        i += memchr::memchr2(b'$', b'\\', &b[i..])?;
        match (b[i], mode) {
            (b'\\', Mode::Paren) if b.get(i + 1) == Some(&b')') => return Some(i),
            (b'\\', Mode::Bracket) if b.get(i + 1) == Some(&b']') => return Some(i),
            (b'\\', _) => i += 2,
            (_, Mode::Dollar) => return Some(i),
            (_, Mode::DoubleDollar) if b.get(i + 1) == Some(&b'$') => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// Length of the closing delimiter of `mode`.
fn closer_len(mode: Mode) -> usize {
    if mode == Mode::Dollar {
        1
    } else {
        2
    }
}

/// The last complete, non-blank math block of `text`. Linear: each byte is passed once.
pub(crate) fn last_block(text: &str) -> Option<Block> {
    last_delimited(text).map(|(_, block, _)| block)
}

/// Whether the text's last `$` closes a math block (`... is $5$`), not opens one that never closes
/// (`... gives the equation $`).
pub(crate) fn ends_with_closed_block(text: &str) -> bool {
    let t = text.trim_end();
    match last_delimited(t) {
        Some((_, _, after)) => after == t.len(),
        None => false,
    }
}

/// Whether `text` ends inside a math block it opened and never closed (`... so \( m = 1`): it was
/// cut off.
pub(crate) fn ends_inside_block(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    while let Some(off) = memchr::memchr2(b'$', b'\\', &b[i..]) {
        i += off;
        let Some((mode, start)) = opener(b, i) else {
            i = (i + 2).min(b.len());
            continue;
        };
        match closer(b, mode, start) {
            Some(end) => i = (end + closer_len(mode)).min(b.len()),
            None => return true,
        }
    }
    false
}

/// The last complete, non-blank math block of `text` as (offset of its opening delimiter, block,
/// offset just past its closing delimiter).
fn last_delimited(text: &str) -> Option<(usize, Block, usize)> {
    let b = text.as_bytes();
    let mut last = None;
    let mut i = 0;
    while i < b.len() {
        match memchr::memchr2(b'$', b'\\', &b[i..]) {
            None => break,
            Some(off) => i += off,
        }
        let open = i;
        let Some((mode, start)) = opener(b, i) else {
            i += 2; // an escape (`\$`, `\\`) or another command
            continue;
        };
        match closer(b, mode, start) {
            Some(end) => {
                i = end + closer_len(mode);
                if !text[start..end].trim().is_empty() {
                    last = Some((open, Block { start, end }, i));
                }
            }
            // Unclosed: nothing after it can pair up differently, stop here.
            None => break,
        }
    }
    last
}

/// Most blocks joined into one answer by [`joined_values`].
const MAX_JOINED: usize = 16;

/// The blocks of values joined by connectors that end with `last`, in text order:
/// `$4$ and $5$ and $6$`, `$8, 3$ or $5$`, `$1$, $2$`. Going back from `last`, an earlier block
/// joins when only `,`, "and", "or" (and spaces) separate the two and neither holds a relation
/// (`so $x = 2$ and $y = 3$` stays `y = 3`: the last statement, not a list). Just `[last]`
/// otherwise. Linear in the text before each joined block, at most [`MAX_JOINED`] blocks.
pub(crate) fn joined_values(text: &str, last: Block) -> Vec<Block> {
    let mut out = vec![last];
    // Blocks join when they are alike: values, or equations of the same name (`$x = 2$ or
    // $x = 3$` is the list `x = 2, x = 3`; `$x = 2$ and $y = 3$` stays `y = 3`).
    let shape = |b: &Block| block_shape(&text[b.start..b.end]);
    let Some(want) = shape(&last) else { return out };
    let is_value = |b: &Block| shape(b).as_deref() == Some(want.as_str());
    let b = text.as_bytes();
    let mut cur = last;
    while out.len() < MAX_JOINED {
        // The opening delimiter of `cur`.
        let open = match (cur.start.checked_sub(2).map(|i| &b[i..cur.start]), b.get(cur.start.wrapping_sub(1))) {
            (Some(b"$$"), _) | (Some(b"\\("), _) | (Some(b"\\["), _) => cur.start - 2,
            (_, Some(b'$')) => cur.start - 1,
            _ => break,
        };
        // The previous block, and between the two only `,` then `and`/`or` (one or both).
        let Some((_, prev, after)) = last_delimited(&text[..open]) else { break };
        let gap = &text[after..open];
        let mut tokens = super::tokens::Lexer::new(gap).peekable();
        let comma = tokens.next_if(|t| t.kind == super::tokens::Kind::Char(',')).is_some();
        let word = tokens.next_if(|t| matches!(t.text(gap), "and" | "or") && t.stands_alone(gap)).is_some();
        if !(comma || word) || tokens.next().is_some() {
            break;
        }
        if !is_value(&prev) || text[prev.start..prev.end].trim().is_empty() {
            break;
        }
        out.push(prev);
        cur = prev;
    }
    out.reverse();
    out
}

/// What a block holds, for [`joined_values`]: `""` for a value (no relation), the name for an
/// equation `name = value` with one `=` and a one-letter name (optionally subscripted), `None`
/// otherwise.
pub(crate) fn block_shape(s: &str) -> Option<String> {
    if !has_relation(s) {
        return Some(String::new());
    }
    let (name, value) = s.split_once('=')?;
    let name = name.trim();
    let mut chars = name.chars();
    let first = chars.next()?;
    let rest = chars.as_str();
    let simple = first.is_ascii_alphabetic()
        && (rest.is_empty()
            || rest
                .strip_prefix('_')
                .is_some_and(|r| r.chars().all(|c| c.is_ascii_alphanumeric() || c == '{' || c == '}')));
    (simple && !has_relation(value)).then(|| name.to_string())
}

/// Whether a relation (`=`, `<`, `>`, `\le`, `\ge`, `\ne`, `\in`) stands outside braces (a
/// subscript `\sum_{j=1}` is not one).
fn has_relation(s: &str) -> bool {
    let b = s.as_bytes();
    let mut depth = 0usize;
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'{' => depth += 1,
            b'}' => depth = depth.saturating_sub(1),
            b'=' | b'<' | b'>' if depth == 0 => return true,
            b'\\' if depth == 0 => {
                let r = &b[i + 1..];
                for cmd in [b"le".as_slice(), b"ge", b"ne", b"in", b"approx", b"leq", b"geq", b"neq"] {
                    if r.starts_with(cmd) && !r.get(cmd.len()).is_some_and(u8::is_ascii_alphabetic) {
                        return true;
                    }
                }
            }
            _ => {}
        }
    }
    false
}

/// How far after a block the `?` that ends its sentence is looked for (bytes).
const MAX_QUESTION_TAIL: usize = 60;

/// How far back the start of a block's sentence is looked for (bytes).
const MAX_SENTENCE_LOOKBACK: usize = 160;

/// What the last math block of a text is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LastBlock {
    /// The text has no complete, non-blank block.
    None,
    /// The last block, which may be an answer.
    Answer(Block),
    /// The last block is asked about (see [`last_answer_block`]).
    Question,
}

/// The last math block of `text`, or [`LastBlock::Question`] when that block is asked about: its
/// sentence ends with `?` right after it (`What is $x+y$?`, `What is $n$ equal to?`), or it is the first block of a sentence that starts with a
/// task word (`Evaluate $..$.`, `Find $m+n$.`) and has no `=` in it. Earlier blocks are not taken
/// instead: they belong to the question or to the reasoning before it; a response that only
/// repeats its problem statement has no answer (the caller also skips its later fallbacks, which
/// would otherwise pick a number of the statement).
pub(crate) fn last_answer_block(text: &str) -> LastBlock {
    let last = last_delimited(text);
    match last {
        None => LastBlock::None,
        // A "block" of English sentences is text between two unpaired dollars (`$f(\` cut off
        // mid-formula, a price), not math.
        Some((_, block, _)) if is_prose(&text[block.start..block.end]) => LastBlock::None,
        Some((open, block, after)) if is_question(text, open, after, &text[block.start..block.end]) => {
            LastBlock::Question
        }
        Some((_, block, _)) => LastBlock::Answer(block),
    }
}

/// Three or more plain words, one of them a typical prose word (`\text{..}` groups not counted).
fn is_prose(content: &str) -> bool {
    let w = super::scan::words(content);
    w.count >= 3 && w.prose
}

/// Whether the block `content`, delimited at `open..after`, is asked about (see [`last_answer_block`]).
fn is_question(text: &str, open: usize, after: usize, content: &str) -> bool {
    // The rest of the sentence, up to a few words and no further math, ends with `?`
    // (`... between $100$ and $1000$?`, `What is $n$ equal to?`).
    let rest = &text[after..super::scan::floor_boundary(text, after + MAX_QUESTION_TAIL)];
    if let Some(k) = rest.find(['?', '.', '!', '\n', '$', '\\']) {
        if rest.as_bytes()[k] == b'?' {
            return true;
        }
    }
    if content.contains('=') {
        return false;
    }
    let from = super::scan::floor_boundary(text, open.saturating_sub(MAX_SENTENCE_LOOKBACK));
    let before = &text[from..open];
    let sentence = match before.rfind(['.', '?', '!', '\n', ':']) {
        Some(k) => &before[k + 1..],
        None if from == 0 => before,
        None => return false,
    };
    let sentence = sentence.trim_start();
    !sentence.contains(['$', '\\'])
        && sentence.starts_with(|c: char| c.is_ascii_uppercase())
        && super::tokens::phrase_at(sentence, 0, crate::lexicon::Class::TaskWord)
            .is_some_and(|len| sentence.as_bytes().get(len) == Some(&b' '))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last(s: &str) -> Option<&str> {
        last_block(s).map(|bl| &s[bl.start..bl.end])
    }

    #[test]
    fn kinds() {
        assert_eq!(last("a $x$ b $y+1$ c"), Some("y+1"));
        assert_eq!(last(r"so \(\frac12\)."), Some(r"\frac12"));
        assert_eq!(last("\\[ 5 \\]\n"), Some(" 5 "));
        assert_eq!(last("$$ 9 $$"), Some(" 9 "));
        assert_eq!(last(r"costs \$5 and \$6"), None);
        assert_eq!(last(r"$\$5$"), Some(r"\$5"));
        assert_eq!(last("$x$ and $ $"), Some("x"));
        assert_eq!(last("$x$ and $y"), Some("x"));
        assert_eq!(last(r"\[ a \\ b \]"), Some(r" a \\ b "));
    }

    fn answer(s: &str) -> Option<&str> {
        match last_answer_block(s) {
            LastBlock::Answer(bl) => Some(&s[bl.start..bl.end]),
            LastBlock::Question => Some("QUESTION"),
            LastBlock::None => None,
        }
    }

    #[test]
    fn questions_are_not_answers() {
        let echo = "Evaluate $\\lceil (3.6)^2 \\rceil - ( \\lceil 3.6 \\rceil ) ^2$. Propel\nEvaluate $\\lceil (3.6)^2 \\rceil - ( \\lceil 3.6 \\rceil ) ^2$.";
        assert_eq!(answer(echo), Some("QUESTION"));
        assert_eq!(answer("What is $x+y$?"), Some("QUESTION"));
        assert_eq!(answer("We have $y = 2$. What is $x+y$ ?"), Some("QUESTION"));
        assert_eq!(answer("Let $ABC$ be a triangle with $AB = 5$. Find $m+n$."), Some("QUESTION"));
        assert_eq!(answer("no math here"), None);
        assert_eq!(answer("What is $n$ equal to?"), Some("QUESTION"));
        assert_eq!(answer("How many are there between $100$ and $1000$? \\boxed{}."), Some("QUESTION"));
        assert_eq!(answer("So it is $5$. Is that right? Yes"), Some("5"));
        assert_eq!(answer("so $x = 2$ and $y = 3$. This gives us $f(1 + f(\\"), Some("y = 3"));
        assert_eq!(answer("costs $5 and then we have this much left: $3"), None);
        assert_eq!(
            answer("$x = 5 \\text{ is the value of the answer}$"),
            Some("x = 5 \\text{ is the value of the answer}")
        );
        assert_eq!(answer("Simplify $(-k + 4) + (-2 + 3k)$.\n\nSo we get $2k + 2$."), Some("2k + 2"));
        assert_eq!(answer("Simplify $\\frac{2}{4}$ to get $\\frac12$."), Some("\\frac12"));
        assert_eq!(answer("Find $x$: we solve and get $x = 5$"), Some("x = 5"));
        assert_eq!(answer("Let $x$ be the count. Then the count is $12$."), Some("12"));
        assert_eq!(answer("Compute $3 + 4 = 7$."), Some("3 + 4 = 7"));
        assert_eq!(answer("the value is $5$"), Some("5"));
    }
}
