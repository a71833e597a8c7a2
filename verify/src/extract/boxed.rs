//! `\boxed{..}` / `\fbox{..}` / `\framebox[w][pos]{..}` / `\boxed 5`: the last box, or the last
//! run of boxes that together form a list answer.
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
//!
//! **Parts rule.** Going on back from the first box of that run, an earlier box joins it when
//! each of the two is labelled with another part of the question ([`part_label`]: `**Part 1:**
//! $\boxed{4097}$` then `**Part 2:** $\boxed{4096}$`, `for part (a), ... $\boxed{6}$; for part
//! (b), it is $\boxed{5}$`, `(a)` / `(b)` opening their lines): a response that answers parts
//! it invented gives one candidate per part, never the last part's alone. Steps (`Step 2:`) are
//! no parts, and a box with no part label ends the run.

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

/// The box commands, without the backslash (`\framebox[w][pos]{x}` and `\fbox{x}` frame a value
/// as `\boxed{x}` does).
const COMMANDS: [&[u8]; 3] = [b"boxed", b"fbox", b"framebox"];

/// Whether `name` (without the backslash) is a box command.
pub(crate) fn is_box_command(name: &str) -> bool {
    COMMANDS.contains(&name.as_bytes())
}

/// Longest optional argument skipped after a box command (`\framebox[2cm][c]{x}`, bytes).
const MAX_OPTIONAL_ARG: usize = 32;

/// After a box command at `b[..at]`, the index past its optional arguments (`[2cm][c]`): none
/// spans a line or holds a brace, and each is at most [`MAX_OPTIONAL_ARG`] bytes.
pub(crate) fn skip_optional_args(b: &[u8], mut at: usize) -> usize {
    for _ in 0..2 {
        if b.get(at) != Some(&b'[') {
            break;
        }
        let end = (at + 1 + MAX_OPTIONAL_ARG).min(b.len());
        match b[at + 1..end].iter().position(|&c| matches!(c, b']' | b'[' | b'{' | b'}' | b'\n')) {
            Some(k) if b[at + 1 + k] == b']' => at += k + 2,
            _ => break,
        }
    }
    at
}

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
        // `\boxed` has the backslash right before `box`, `\fbox` one byte earlier, `\framebox` six.
        for start in [p.checked_sub(1), p.checked_sub(2), p.checked_sub(6)].into_iter().flatten() {
            if b[start] == b'\\' && box_command_at(b, start).is_some() {
                return Some(start);
            }
        }
        from = p + 3;
    }
    None
}

/// All top-level complete boxes of `b`, in text order, or `None` when the text ends inside an open
/// box. Linear in `b.len()`: a search for the next box command outside boxes, a scan of braces
/// and backslashes inside them.
fn top_level_boxes(b: &[u8]) -> Option<Vec<Box_>> {
    // Open boxes: (span start, content start, brace depth outside the box).
    let mut open: Vec<(usize, usize, usize)> = Vec::new();
    let mut done: Vec<Box_> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        // Outside every box only the next box command matters: braces are counted from the
        // box's own opening (a box closes where the depth returns to its opening's).
        if open.is_empty() {
            let Some(next) = first_box(&b[i..]) else { break };
            i += next;
            depth = 0;
        }
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
                let mut j = skip_optional_args(b, after);
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
    Boxes::of(text).last_run()
}

/// The boxes of a text, scanned once: its top-level complete boxes, or none when the text ends
/// inside a box that never closes.
pub(crate) struct Boxes<'t> {
    text: &'t str,
    found: Option<Vec<Box_>>,
}

impl<'t> Boxes<'t> {
    pub(crate) fn of(text: &'t str) -> Boxes<'t> {
        Boxes { text, found: top_level_boxes(text.as_bytes()) }
    }

    /// Whether the text ends inside a box that never closes (`... \boxed{5}. Or \boxed{6`): its
    /// final answer was never finished, so it has none (an earlier complete box is not it).
    pub(crate) fn ends_open(&self) -> bool {
        self.found.is_none()
    }

    /// [`last_boxes_and_span`].
    pub(crate) fn last_run(&self) -> (Vec<&'t str>, std::ops::Range<usize>, bool) {
        let text = self.text;
        let Some(boxes) = &self.found else {
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
        // Parts: boxes each labelled with another part of the question (`**Part 1:** $\boxed{4}$`
        // then `**Part 2:** $\boxed{3}$`) answer the parts, all of them, not the last one alone.
        let first = nonempty.len() - run.len();
        let mut labels = Vec::new();
        for k in (0..first).rev() {
            let (bx, next) = (nonempty[k], run[run.len() - 1]);
            if labels.is_empty() {
                match part_label(&text[bx.span_end..next.span_start]) {
                    Some(label) => labels.push(label),
                    None => break,
                }
            }
            let from = if k == 0 { 0 } else { nonempty[k - 1].span_end };
            let Some(label) = part_label(&text[from..bx.span_start]) else { break };
            if labels.len() > MAX_PARTS || labels.iter().any(|l| l.eq_ignore_ascii_case(label)) {
                break;
            }
            labels.push(label);
            run.push(*bx);
        }
        run.reverse();
        let contents = run.iter().map(|bx| &text[bx.content_start..bx.content_end]).collect();
        (contents, last.span_start..last.span_end, hedged)
    }
}

/// Most parts read as the answers of one question's parts.
const MAX_PARTS: usize = 8;
/// How far before a box the label of its part is looked for (bytes).
const MAX_PART_REACH: usize = 300;

/// The part of a question that the box after `before` answers: the id of the last part label in
/// the end of `before` (the text since the previous box): a word of the lexicon's `PartWord`
/// class and its id (`Part 2`, `part (b)`, `Teil II`, `Question 3`), or an enumerator that opens a
/// line or follows the previous box (`(a)`, `b)`, `c.`, `(ii)`, `(2)`; a lower-case letter or
/// roman numeral, or a number in parentheses: `2.` and `2)` number steps). Linear in
/// [`MAX_PART_REACH`].
fn part_label(before: &str) -> Option<&str> {
    let from = super::scan::floor_boundary(before, before.len().saturating_sub(MAX_PART_REACH));
    let b = before.as_bytes();
    let tokens: Vec<_> = Lexer::new(&before[from..]).collect();
    let at = |k: usize| tokens.get(k).map(|t| (t.kind, t.range.start + from..t.range.end + from));
    let mut found = None;
    for k in 0..tokens.len() {
        let Some((kind, range)) = at(k) else { break };
        let id = |j: usize| at(j).filter(|(kind, _)| matches!(kind, Kind::Word(_) | Kind::Number));
        match kind {
            Kind::Word(classes) if classes.has(crate::lexicon::Class::PartWord) => {
                // `Part 2`, `Part B`, `part (b)`.
                let label = match (at(k + 1), id(k + 2), at(k + 3)) {
                    (Some((Kind::Char('('), _)), Some((_, r)), Some((Kind::Char(')'), _))) => Some(r),
                    _ => id(k + 1).map(|(_, r)| r),
                };
                if let Some(r) = label.filter(|r| r.len() <= 4) {
                    found = Some(r);
                }
            }
            Kind::Char('(') if opens_line(b, range.start) => {
                if let (Some((_, r)), Some((Kind::Char(')'), _))) = (id(k + 1), at(k + 2)) {
                    if enumerator(&before[r.clone()], true) {
                        found = Some(r);
                    }
                }
            }
            Kind::Word(_) | Kind::Number
                if opens_line(b, range.start)
                    && matches!(at(k + 1), Some((Kind::Char(')' | '.'), _)))
                    && enumerator(&before[range.clone()], false) =>
            {
                found = Some(range);
            }
            _ => {}
        }
    }
    found.map(|r| &before[r])
}

/// Whether byte `at` of `b` opens a line or follows the previous box: only spaces, markdown
/// markup and closing math (`**`, `#`, `-`, `$`, `;`) between it and a line break or the start.
fn opens_line(b: &[u8], at: usize) -> bool {
    let lead = b[..at].iter().rev().take_while(|c| matches!(c, b' ' | b'\t' | b'*' | b'#' | b'>' | b'-' | b'$' | b';'));
    let k = at - lead.count();
    k == 0 || b[k - 1] == b'\n'
}

/// Whether `id` enumerates parts on its own: a lower-case letter `a`-`h` or roman numeral up to
/// `viii`, or (`in_parens` only) a number up to 99.
fn enumerator(id: &str, in_parens: bool) -> bool {
    let roman = ["i", "ii", "iii", "iv", "v", "vi", "vii", "viii"];
    matches!(id.as_bytes(), [b'a'..=b'h'])
        || roman.contains(&id)
        || (in_parens && (1..=2).contains(&id.len()) && id.bytes().all(|c| c.is_ascii_digit()))
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
    fn frames_with_options() {
        assert_eq!(last_boxes(r"so \framebox{194}."), vec!["194"]);
        assert_eq!(last_boxes(r"\framebox[2cm][c]{7}"), vec!["7"]);
        assert_eq!(last_boxes(r"\boxed{3} then \fbox{ 4 }"), vec![" 4 "]);
        assert!(last_boxes(r"\frameboxes{7}").is_empty());
    }

    #[test]
    fn parts_are_all_answers() {
        fn parts(t: &str) -> Vec<&str> {
            last_boxes(t).into_iter().map(str::trim).collect()
        }
        assert_eq!(parts("**Part 1:** $\\boxed{4097}$\n\n**Part 2:** $\\boxed{4096}$"), vec!["4097", "4096"]);
        assert_eq!(
            parts("For part (a), the answer is $\\boxed{6}$; for part (b), it is $\\boxed{5}$."),
            vec!["6", "5"]
        );
        assert_eq!(parts("(a) We get $\\boxed{6}$.\n\n(b) Then $\\boxed{5}$."), vec!["6", "5"]);
        assert_eq!(parts("a. We get $\\boxed{6}$.\nb. Then $\\boxed{5}$."), vec!["6", "5"]);
        assert_eq!(parts("Question 1: $\\boxed{6}$.\n\nQuestion 2: $\\boxed{5}$."), vec!["6", "5"]);
        assert_eq!(parts("Teil I: $\\boxed{1}$\nTeil II: $\\boxed{2}$\nTeil III: $\\boxed{3}$"), vec!["1", "2", "3"]);
        // Steps, a repeated label and a function's argument are no parts.
        assert_eq!(parts("Step 1: $\\boxed{6}$.\n\nStep 2: so $\\boxed{5}$."), vec!["5"]);
        assert_eq!(parts("1. We get $\\boxed{6}$.\n2. So $\\boxed{5}$."), vec!["5"]);
        assert_eq!(parts("Part 1: $\\boxed{6}$.\n\nPart 1 again: $\\boxed{5}$."), vec!["5"]);
        assert_eq!(parts("We get f(a) = \\boxed{6}. Then f(b) = \\boxed{5}."), vec!["5"]);
        // A box with no part label before the labelled ones ends the parts.
        assert_eq!(parts("So $\\boxed{9}$.\n\n(a) $\\boxed{6}$.\n\n(b) $\\boxed{5}$."), vec!["6", "5"]);
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
