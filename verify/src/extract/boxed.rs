//! `\boxed{..}` / `\fbox{..}` / `\boxed 5`: the last box, or the last run of boxes that together
//! form a list answer.
//!
//! One forward pass from the first box opening tracks brace depth with a stack of open boxes
//! (escaped `\{`, `\}`, `\\` do not count), so the cost is linear whatever the input: a million
//! `\boxed{` openings cost one pass. A box nested in another complete box is part of the outer one.
//!
//! **Truncation.** When the text ends inside a box (a `\boxed{` that never closes, typically a
//! response cut off while writing its answer), there is no boxed answer at all: earlier boxes are
//! reasoning, not the final answer, and the other strategies get their chance.
//!
//! **List rule.** Going back from the last box, an earlier box joins the answer when the text
//! between the two is only a connector: at most [`MAX_SEPARATOR`] bytes, no sentence end
//! (`.` + space, `:`, `?`, `!`), no prose word ("then", "so", "wait", ...) and at most two plain
//! words besides `and`/`or` (LaTeX commands such as `\quad`, `\text{and}`, `\)`, `$` and
//! punctuation are free). So `$\boxed{2}$ and $\boxed{3}$`, `\boxed{1}, \boxed{2}` and
//! `\boxed{a} \quad \text{and} \quad \boxed{b}` are lists, while boxes earlier in the reasoning
//! (`... \boxed{4}. So ... \boxed{5}`) are not joined.
//! Repeated parts are kept (`\boxed{3}, \boxed{3}` is `3, 3`; the scorer also tries the list
//! without repeats, so it still matches a gold `3`); empty boxes are ignored.

use super::scan::{words, Needle};
use super::statement;
use super::tokens::{Kind, Lexer};

/// Longest text between two boxes that still counts as a connector (bytes).
const MAX_SEPARATOR: usize = 64;

/// A complete box: the whole span (from `\` to after `}`) and its content.
#[derive(Clone, Copy, Debug)]
struct Box_ {
    span_start: usize,
    span_end: usize,
    content_start: usize,
    content_end: usize,
}

/// The box commands, without the backslash.
const COMMANDS: [&[u8]; 2] = [b"boxed", b"fbox"];

/// If `b[i]` is the backslash of a box command, the index after the command name.
fn box_command_at(b: &[u8], i: usize) -> Option<usize> {
    for cmd in COMMANDS {
        let end = i + 1 + cmd.len();
        if b.len() >= end && &b[i + 1..end] == cmd && !b.get(end).is_some_and(|c| c.is_ascii_alphabetic()) {
            return Some(end);
        }
    }
    None
}

/// The first possible box command in `b` (a cheap pre-filter: most texts have none).
fn first_box(b: &[u8]) -> Option<usize> {
    static BOX: Needle = Needle::new(b"box");
    let mut from = 0;
    while let Some(off) = BOX.first(&b[from..]) {
        let p = from + off;
        // `\boxed` has the backslash right before `box`, `\fbox` one byte earlier.
        for start in [p.checked_sub(1), p.checked_sub(2)].into_iter().flatten() {
            if b[start] == b'\\' && box_command_at(b, start).is_some() {
                return Some(start);
            }
        }
        from = p + 3;
    }
    None
}

/// All top-level complete boxes of `b`, in text order, or `None` when the text ends inside an open
/// box. Linear in `b.len()`.
fn top_level_boxes(b: &[u8]) -> Option<Vec<Box_>> {
    let Some(first) = first_box(b) else {
        return Some(Vec::new());
    };
    // Open boxes: (span start, content start, brace depth outside the box).
    let mut open: Vec<(usize, usize, usize)> = Vec::new();
    let mut done: Vec<Box_> = Vec::new();
    let mut depth = 0usize;
    let mut i = first;
    while i < b.len() {
        match memchr::memchr3(b'{', b'}', b'\\', &b[i..]) {
            None => break,
            Some(off) => i += off,
        }
        match b[i] {
            b'\\' => {
                // `\\boxed` is a JSON- or string-escaped `\boxed`: the same command.
                if b.get(i + 1) == Some(&b'\\') && box_command_at(b, i + 1).is_some() {
                    i += 1;
                }
                let Some(after) = box_command_at(b, i) else {
                    i += 2; // escape pair or another command's backslash
                    continue;
                };
                let mut j = after;
                while j < b.len() && matches!(b[j], b' ' | b'\t') {
                    j += 1;
                }
                if b.get(j) == Some(&b'{') {
                    open.push((i, j + 1, depth));
                    depth += 1;
                    i = j + 1;
                } else if j > after && j < b.len() {
                    // Space form `\boxed 5`: one token, up to whitespace or a math delimiter.
                    let end = b[j..]
                        .iter()
                        .position(|c| c.is_ascii_whitespace() || matches!(c, b'$' | b'\\' | b'}' | b'{'))
                        .map_or(b.len(), |k| j + k);
                    if end > j {
                        push_done(Box_ { span_start: i, span_end: end, content_start: j, content_end: end }, &mut done);
                    }
                    i = end.max(j);
                } else {
                    i = after;
                }
            }
            b'{' => {
                depth += 1;
                i += 1;
            }
            _ => {
                if depth > 0 {
                    depth -= 1;
                    if open.last().is_some_and(|o| o.2 == depth) {
                        if let Some((span_start, content_start, _)) = open.pop() {
                            push_done(Box_ { span_start, span_end: i + 1, content_start, content_end: i }, &mut done);
                        }
                    }
                }
                i += 1;
            }
        }
    }
    open.is_empty().then_some(done)
}

/// Record a complete box; boxes recorded earlier that lie inside it were nested: drop them.
fn push_done(bx: Box_, done: &mut Vec<Box_>) {
    while done.last().is_some_and(|d| d.span_start > bx.span_start) {
        done.pop();
    }
    done.push(bx);
}

/// Does the text between two boxes only join them (see the module doc)?
fn is_connector(sep: &str) -> bool {
    if sep.len() > MAX_SEPARATOR {
        return false;
    }
    let b = sep.as_bytes();
    for (k, &c) in b.iter().enumerate() {
        match c {
            b':' | b'?' | b'!' => return false,
            b'.' if b.get(k + 1).is_none_or(|n| n.is_ascii_whitespace()) => return false,
            _ => {}
        }
    }
    // Plain words other than the connectors `and` / `or`.
    let w = words(sep);
    !w.prose && w.count.saturating_sub(connectors(sep).0) <= 2
}

/// The standalone words `and` / `or` of a separator (outside LaTeX commands), and whether a word
/// of it offers an alternative (`or`, `perhaps`: [`statement::hedges`]) rather than lists.
fn connectors(sep: &str) -> (usize, bool) {
    let (mut n, mut hedged) = (0, false);
    for t in Lexer::new(sep) {
        let Kind::Word(classes) = t.kind else { continue };
        let w = t.text(sep);
        if !t.stands_alone(sep) {
            continue;
        }
        n += usize::from(w.eq_ignore_ascii_case("and") || w.eq_ignore_ascii_case("or"));
        hedged |= statement::hedges(classes);
    }
    (n, hedged)
}

/// The final boxed answer of `text`: the contents of the last run of joined boxes (see the module
/// doc), raw (not yet cleaned), in text order, duplicates included. Empty when there is no box or
/// the text ends inside an unclosed box.
#[cfg(test)]
pub(crate) fn last_boxes(text: &str) -> Vec<&str> {
    last_boxes_and_span(text).0
}

/// [`last_boxes`], and the span of the last box (`0..0` when there is none).
/// The flag says whether a connector offers an alternative (`or`) rather than lists.
pub(crate) fn last_boxes_and_span(text: &str) -> (Vec<&str>, std::ops::Range<usize>, bool) {
    let Some(boxes) = top_level_boxes(text.as_bytes()) else {
        return (Vec::new(), 0..0, false);
    };
    let nonempty: Vec<&Box_> =
        boxes.iter().filter(|bx| !text[bx.content_start..bx.content_end].trim().is_empty()).collect();
    let Some(last) = nonempty.last() else {
        return (Vec::new(), 0..0, false);
    };
    let mut run = vec![**last];
    let mut hedged = false;
    for bx in nonempty.iter().rev().skip(1) {
        let next = run[run.len() - 1];
        let sep = &text[bx.span_end..next.span_start];
        if !is_connector(sep) {
            break;
        }
        hedged |= connectors(sep).1;
        run.push(**bx);
    }
    run.reverse();
    let contents = run.iter().map(|bx| &text[bx.content_start..bx.content_end]).collect();
    (contents, last.span_start..last.span_end, hedged)
}

/// Whether `text` ends inside a box that never closes (`... \boxed{5}. Or \boxed{6`): its final
/// answer was never finished, so it has none (an earlier complete box is not it).
pub(crate) fn ends_in_open_box(text: &str) -> bool {
    top_level_boxes(text.as_bytes()).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_and_escaped() {
        assert_eq!(last_boxes(r"\boxed{\frac{1}{2}}"), vec![r"\frac{1}{2}"]);
        assert_eq!(last_boxes(r"\boxed{\{1, 2\}}"), vec![r"\{1, 2\}"]);
        assert_eq!(last_boxes(r"\boxed{\boxed{5}}"), vec![r"\boxed{5}"]);
        assert!(last_boxes(r"\boxed{3} then \boxed{4").is_empty());
        assert_eq!(last_boxes(r"\boxed{3} then \boxed{4}"), vec!["4"]);
        assert!(last_boxes(r"\boxed{4").is_empty());
        assert_eq!(last_boxes(r"\boxed 5."), vec!["5."]);
        assert_eq!(last_boxes(r"\fbox{7}"), vec!["7"]);
        assert_eq!(last_boxes(r"$\\boxed{35 cm} ++++++ \\boxed{4}$"), vec!["35 cm", "4"]);
        assert!(last_boxes(r"\boxedx{7}").is_empty());
    }

    #[test]
    fn connectors() {
        assert!(is_connector("$ and $"));
        assert!(is_connector(r" \quad \text{and} \quad "));
        assert!(is_connector(" papers and "));
        assert!(is_connector(", "));
        assert!(!is_connector(" no no no no no "));
        assert!(!is_connector(". So the value is "));
        assert!(!is_connector(": "));
        assert!(!is_connector(" then "));
        assert!(!is_connector(" wait, "));
    }
}
