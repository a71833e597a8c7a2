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
    let b = text.as_bytes();
    let mut last = None;
    let mut i = 0;
    while i < b.len() {
        match memchr::memchr2(b'$', b'\\', &b[i..]) {
            None => break,
            Some(off) => i += off,
        }
        let Some((mode, start)) = opener(b, i) else {
            i += 2; // an escape (`\$`, `\\`) or another command
            continue;
        };
        match closer(b, mode, start) {
            Some(end) => {
                if !text[start..end].trim().is_empty() {
                    last = Some(Block { start, end });
                }
                i = end + closer_len(mode);
            }
            // Unclosed: nothing after it can pair up differently, stop here.
            None => break,
        }
    }
    last
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
}
