//! Where the model's turn ends: the first special token that ends it or opens another turn.
//!
//! Frameworks decode with special tokens kept (OpenRLHF sends `A: 15</s>`), models that run past
//! their turn invent the next one (`... is $\frac{5}{3}$. <|im_start|>user Another problem ...
//! \boxed{8}`, Llama 4's `<|eot|>` then a made-up exchange), and harnesses append their own
//! separators (`\boxed{4} hours.<|endofblock|><|text|>4<|endofblock|>`). Either way the answer is
//! what comes before the first such token: whatever follows it is not the model's answer.
//!
//! Special tokens are told by their shape, not by a list of templates: `<|name|>` and
//! `<｜name｜>` (DeepSeek's full-width bars), `[/NAME]` and `[NAME_WITH_UNDERSCORES]` (Mistral),
//! and the few bare tags that only their spelling tells from HTML (`</s>`, `<eos>`, `<pad>`,
//! Gemma's `<end_of_turn>`, `[INST]`). Such a marker ends the response when
//! - its name says so: an end, end-of-turn or padding token, or a role (`<|im_end|>`,
//!   `<|eot|>`, `<|endoftext|>`, `<|END_OF_TURN_TOKEN|>`, `<|finetune_right_pad_id|>`,
//!   `<｜User｜>`, `<|assistant|>`); or
//! - it is followed by a role header (`user`, `Assistant:`), also after header tokens
//!   (`<|start_header_id|>user`); or
//! - nothing but markers and spaces follow it.
//!
//! A marker followed at once by one that opens a block of the same turn (`<|endofblock|><|text|>`,
//! `<|endofblock|><|execution|>`: a tool harness's code, output and text blocks) separates blocks:
//! the pair reads as a blank line, so the harness's echo of the answer after it
//! (`\boxed{4} hours.<|endofblock|><|text|>4<|endofblock|>`) is a line of its own, and a hedge
//! there is still read. A short last block after such a run ([`turn_and_echo`]) is the harness's
//! echo of the answer: the extractor reads the answer before it, and the echo as a restatement
//! (the same value) or a second candidate (another value: `A: 16<|eob|><|answer|>\boxed{15}`
//! is `ambiguous`, never 15). A marker that is none of these (`the delimiter <|sep|>
//! splits the input`) is text and cuts nothing. Markers before any text (a template prefix, left
//! padding) are skipped. The search is one `memchr` pass over the opening bytes `<` and `[`; each
//! candidate reads at most [`MAX_RUN`] markers after it.

use std::borrow::Cow;
use std::ops::Range;

/// Turn and padding tokens whose shape is an ordinary tag: they count only as spelled here.
const BARE_TOKENS: &[&str] = &["</s>", "<eos>", "<pad>", "<end_of_turn>", "<start_of_turn>", "[INST]", "[PAD]"];

/// Parts of a marker's name (lower case, separators `_`, `▁`, `-` left out) that say it ends the
/// turn, the text or the message, pads it, or opens another turn or header. A name that ends in
/// `end` or `start` (`end`, `im_end`, `im_start`) also does; `endofblock` ends a block of the
/// turn, not the turn.
const END_NAMES: &[&str] = &[
    "eot",
    "eos",
    "eom",
    "pad",
    "stop",
    "return",
    "endoftext",
    "endofturn",
    "endofsentence",
    "endofmessage",
    "endofresponse",
    "endofanswer",
    "endofgeneration",
    "endofoutput",
    "endofsequence",
    "endofcompletion",
    "eod",
    "startofturn",
    "startheader",
];

/// Chat roles: a marker named by one, or followed by one as a header, opens another turn.
const ROLES: &[&str] = &["user", "assistant", "system", "human", "model", "tool", "developer", "ipython"];

/// The most markers read after one to tell what follows it.
const MAX_RUN: usize = 16;

/// The longest marker name read.
const MAX_NAME: usize = 64;

/// A special-token-shaped marker at byte `p` of `s`: its length, its name, and whether its shape
/// alone ends a turn (a listed bare token, a bracket token).
fn marker_at(s: &str, p: usize) -> Option<(usize, &str, bool)> {
    let rest = &s[p..];
    // Every marker opens with `<` or `[` and a byte that only markers take there: most `<` and
    // `[` of math text (`x < 3`, `\[`, `[0, 1]`) are ruled out by two bytes.
    let plausible = match rest.as_bytes() {
        [b'<', next, ..] => matches!(next, b'|' | b'/' | b'e' | b'p' | b's' | 0xEF),
        [b'[', next, ..] => *next == b'/' || next.is_ascii_uppercase(),
        _ => false,
    };
    if !plausible {
        return None;
    }
    if let Some(t) = BARE_TOKENS.iter().find(|t| rest.starts_with(*t)) {
        return Some((t.len(), t.trim_matches(|c| matches!(c, '<' | '>' | '/' | '[' | ']')), true));
    }
    for (open, close) in [("<|", "|>"), ("<｜", "｜>")] {
        if let Some(inner) = rest.strip_prefix(open) {
            let window = super::scan::cap(inner, MAX_NAME);
            let name = &window[..window.as_bytes().windows(close.len()).position(|w| w == close.as_bytes())?];
            let token_like = !name.is_empty()
                && name.bytes().any(|b| b.is_ascii_alphabetic())
                && !name.contains(|c: char| {
                    c.is_whitespace() || matches!(c, '<' | '>' | '|' | '｜' | '$' | '\\' | '{' | '}' | '(' | ')')
                });
            return token_like.then_some((open.len() + name.len() + close.len(), name, false));
        }
    }
    // `[/INST]`, `[TOOL_CALLS]`: never an area `[ABC]` or a citation `[12]`.
    let inner = rest.strip_prefix('[')?;
    let close = inner.as_bytes().iter().take(MAX_NAME).position(|&b| b == b']')?;
    let name = &inner[..close];
    let caps = name.trim_start_matches('/');
    let shaped = caps.len() >= 3
        && caps.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
        && (name.starts_with('/') || caps.contains('_'));
    shaped.then_some((close + 2, caps, true))
}

/// Whether a marker's name is a role (`<|user|>`, `<｜Assistant｜>`).
fn names_a_role(name: &str) -> bool {
    let mut buf = [0u8; MAX_NAME];
    let lower = ascii_lowered(name.bytes(), &mut buf);
    ROLES.iter().any(|w| holds(lower, w))
}

/// `bytes` (at most [`MAX_NAME`] of them) with ASCII letters lowered, in `buf`: marker names are
/// read against ASCII words, so no other letter needs lowering.
fn ascii_lowered(bytes: impl Iterator<Item = u8>, buf: &mut [u8; MAX_NAME]) -> &[u8] {
    let mut n = 0;
    for (d, b) in buf.iter_mut().zip(bytes) {
        *d = b.to_ascii_lowercase();
        n += 1;
    }
    &buf[..n]
}

/// Whether the short `name` holds `word`.
fn holds(name: &[u8], word: &str) -> bool {
    name.windows(word.len()).any(|w| w == word.as_bytes())
}

/// Whether a marker's name says a turn, a text or padding ends there, or another turn starts
/// (`<|eot_id|>`, `<|im_end|>`, `<|im_start|>`).
fn names_an_end(name: &str) -> bool {
    let mut buf = [0u8; MAX_NAME];
    // `▁` is the bytes E2 96 81, and no other character is made of those alone; the bytes of
    // other letters stay, and no ASCII word holds them.
    let joined = ascii_lowered(name.bytes().filter(|b| !matches!(b, b'_' | b'-' | 0xE2 | 0x96 | 0x81)), &mut buf);
    joined.ends_with(b"end") || joined.ends_with(b"start") || END_NAMES.iter().any(|w| holds(joined, w))
}

/// Whether `after` (the text right after a marker) opens another turn: a role header, or nothing
/// but markers and spaces up to the end.
fn opens_another_turn(s: &str, mut at: usize) -> bool {
    for run in 0..MAX_RUN {
        let rest = s[at..].trim_start();
        at = s.len() - rest.len();
        if rest.is_empty() {
            return true;
        }
        if let Some((len, name, _)) = marker_at(s, at) {
            if names_a_role(name) {
                return true;
            }
            at += len;
            continue;
        }
        let word_len = rest.bytes().take_while(|b| b.is_ascii_alphabetic()).count();
        // A role word ends a header at a colon, a line end or a marker; after a header marker
        // (`<|im_start|>user `) also at a space.
        let header_end = match rest.as_bytes().get(word_len) {
            None | Some(b':' | b'\n' | b'\r' | b'<' | b'|') => true,
            Some(b' ') => run > 0,
            _ => false,
        };
        return header_end && ROLES.iter().any(|r| rest[..word_len].eq_ignore_ascii_case(r));
    }
    false
}

/// Whether another marker that opens a block of the same turn follows at once (`<|text|>`,
/// `<|execution|>`): the marker at hand then separates two blocks of one turn.
fn block_follows(s: &str, at: usize) -> bool {
    let rest = s[at..].trim_start();
    let next = s.len() - rest.len();
    marker_at(s, next).is_some_and(|(len, name, ends)| {
        !ends && !names_an_end(name) && !names_a_role(name) && !opens_another_turn(s, next + len)
    })
}

/// Where the model's turn is in `response`: where its text starts, where it ends, and the block
/// separators between (see [`model_turn`]).
fn turn_bounds(response: &str) -> (usize, usize, Vec<Range<usize>>) {
    let b = response.as_bytes();
    let mut text_at = 0;
    loop {
        while text_at < b.len() && b[text_at].is_ascii_whitespace() {
            text_at += 1;
        }
        match marker_at(response, text_at) {
            Some((len, ..)) if text_at < b.len() => text_at += len,
            _ => break,
        }
    }
    let mut end = response.len();
    let mut separators: Vec<Range<usize>> = Vec::new();
    let mut from = text_at;
    while let Some(off) = memchr::memchr2(b'<', b'[', &b[from..]) {
        let p = from + off;
        if let Some((len, name, ends)) = marker_at(response, p) {
            let after = p + len;
            let opens_block = separators.last().is_some_and(|r| response[r.end..p].trim().is_empty());
            if opens_block || block_follows(response, after) {
                separators.push(p..after);
                from = after;
                continue;
            }
            if ends || names_an_end(name) || names_a_role(name) || opens_another_turn(response, after) {
                end = p;
                break;
            }
        }
        from = p + 1;
    }
    separators.retain(|r| r.end <= end);
    (text_at, end, separators)
}

/// `response[text_at..end]` with each separator read as a line break.
fn joined<'a>(response: &'a str, text_at: usize, end: usize, separators: &[Range<usize>]) -> Cow<'a, str> {
    if separators.is_empty() {
        return Cow::Borrowed(&response[text_at..end]);
    }
    let mut out = String::with_capacity(end - text_at);
    let mut at = text_at;
    for r in separators {
        out.push_str(&response[at..r.start]);
        out.push('\n');
        at = r.end;
    }
    out.push_str(&response[at..end]);
    Cow::Owned(out)
}

/// `response` from where its text starts (markers before it and the spaces around them are
/// skipped) up to the first marker that ends the turn (module doc), with each run of block
/// separators (`<|endofblock|><|text|>`) read as a blank line.
pub(crate) fn model_turn(response: &str) -> Cow<'_, str> {
    let (text_at, end, separators) = turn_bounds(response);
    joined(response, text_at, end, &separators)
}

/// The longest last block read as the harness's echo of the answer (bytes).
const MAX_ECHO_BYTES: usize = 200;

/// The model's turn ([`model_turn`]) and, when its last block is a harness's echo, the turn
/// before that block and the echo.
pub(crate) type TurnAndEcho<'a> = (Cow<'a, str>, Option<(Cow<'a, str>, &'a str)>);

/// [`model_turn`] of `response`, and the turn split before its last block when that block is a
/// harness's echo of the answer: one short line after a run of block separators that follows
/// text of its own
/// (`... so \boxed{4} hours.<|endofblock|><|text|>4<|endofblock|>`, `A: 16<|eob|><|answer|>
/// \boxed{15}`). The extractor reads the answer in the text before it and the echo as a
/// restatement of that answer: the same value restates it, another value is a second candidate.
pub(crate) fn turn_and_echo(response: &str) -> TurnAndEcho<'_> {
    let (text_at, end, separators) = turn_bounds(response);
    let turn = joined(response, text_at, end, &separators);
    let Some(last) = separators.last() else { return (turn, None) };
    // The first separator of the last run.
    let mut first = separators.len() - 1;
    while first > 0 && response[separators[first - 1].end..separators[first].start].trim().is_empty() {
        first -= 1;
    }
    let echo = response[last.end..end].trim();
    let before = &response[text_at..separators[first].start];
    let short_line = !echo.is_empty() && echo.len() <= MAX_ECHO_BYTES && !echo.contains('\n');
    let split = (short_line && !before.trim().is_empty())
        .then(|| (joined(response, text_at, separators[first].start, &separators[..first]), echo));
    (turn, split)
}

#[cfg(test)]
mod tests {
    use super::{model_turn, turn_and_echo};

    fn echo_split(s: &str) -> Option<(std::borrow::Cow<'_, str>, &str)> {
        turn_and_echo(s).1
    }

    #[test]
    fn cuts_at_the_first_end_token_after_text() {
        assert_eq!(model_turn("A: 15</s>"), "A: 15");
        assert_eq!(model_turn("The answer is $5$.<|eot_id|><|eot_id|>"), "The answer is $5$.");
        assert_eq!(model_turn("so 3<|im_end|>\n<|im_start|>user\nnext \\boxed{8}"), "so 3");
        assert_eq!(model_turn("x <end_of_turn>\n<start_of_turn>user"), "x ");
        assert_eq!(model_turn("7<|return|>"), "7");
        assert_eq!(model_turn("7<|end|><|endoftext|>"), "7");
        assert_eq!(model_turn("7 <eos><pad><pad>"), "7 ");
        assert_eq!(model_turn("7<|eom_id|>"), "7");
        assert_eq!(model_turn("7<｜end▁of▁sentence｜>"), "7");
        assert_eq!(model_turn("7<|END_OF_TURN_TOKEN|>"), "7");
        assert_eq!(model_turn("7 [INST] next question"), "7 ");
    }

    #[test]
    fn tokens_of_no_list_end_the_turn_by_their_shape() {
        // An end-of-turn name no template list carries, then an invented turn.
        assert_eq!(
            model_turn("so $\\boxed{6}$.<|eot|><|header_start|>user<|header_end|>\n\\boxed{9}"),
            "so $\\boxed{6}$."
        );
        assert_eq!(model_turn("it is 6<|stop_sequence|> more \\boxed{2}"), "it is 6");
        // A marker of any name followed by a role header, by another marker, or by nothing.
        assert_eq!(model_turn("it is 6.<|sep|>\nUser: and 7? Assistant: \\boxed{7}"), "it is 6.");
        assert_eq!(model_turn("\\boxed{4} hours.<|block|><|text|>4<|block|>"), "\\boxed{4} hours.\n\n4");
        assert_eq!(
            model_turn("so \\boxed{4} hours.<|endofblock|><|text|>4<|endofblock|>"),
            "so \\boxed{4} hours.\n\n4"
        );
        assert_eq!(model_turn("so 6 <｜Assistant｜> \\boxed{2}"), "so 6 ");
        assert_eq!(model_turn("so 6<|turn_sep|>  "), "so 6");
        assert_eq!(model_turn("so 6 [/INST] \\boxed{1}"), "so 6 ");
        assert_eq!(model_turn("so 6 [TOOL_CALLS] [{\"x\": 1}]"), "so 6 ");
    }

    #[test]
    fn separators_of_blocks_read_as_line_breaks() {
        let blocks = "x = 3 * 5<|endofblock|><|execution|>15<|endofblock|><|text|>So \\boxed{15} apples.";
        let lines = "x = 3 * 5\n\n15\n\nSo \\boxed{15} apples.";
        assert_eq!(
            model_turn(&format!("{blocks}<|endofblock|><|text|>15 or 16<|endofblock|>")),
            format!("{lines}\n\n15 or 16")
        );
        assert_eq!(model_turn(blocks), lines);
    }

    #[test]
    fn a_short_last_block_is_the_harness_echo() {
        let (own, echo) = echo_split("so \\boxed{4} hours.<|endofblock|><|text|>4<|endofblock|>").unwrap();
        assert_eq!((own.as_ref(), echo), ("so \\boxed{4} hours.", "4"));
        let blocks = "x = 3 * 5<|endofblock|><|execution|>15<|endofblock|><|text|>So \\boxed{15}.<|eob|><|answer|>16";
        let (own, echo) = echo_split(blocks).unwrap();
        assert_eq!((own.as_ref(), echo), ("x = 3 * 5\n\n15\n\nSo \\boxed{15}.", "16"));
        // No separator, a long or many-line last block, or nothing before it: no echo.
        assert!(echo_split("so \\boxed{4}<|im_end|>").is_none());
        assert!(echo_split("<|text|>4<|endofblock|>").is_none());
        assert!(echo_split("x = 3<|endofblock|><|text|>So it is\n\\boxed{3}.<|endofblock|>").is_none());
    }

    #[test]
    fn markers_that_are_text_cut_nothing() {
        for text in [
            "The tokenizer joins fields with <|sep|> between them, so \\boxed{3}.",
            "$a < b$ and [1, 2]",
            "<answer>3</answer>",
            "The area [ABC] is \\boxed{12}.",
            "By [12], $0<|x|<1$, so \\boxed{1}.",
            "$|a|<|b|$ so the answer is \\boxed{2}",
            "Let <|x|> denote the user's guess, so \\boxed{5}",
        ] {
            assert_eq!(model_turn(text), text);
        }
    }

    #[test]
    fn leading_tokens_and_lookalikes_cut_nothing() {
        assert_eq!(model_turn("<|im_start|>assistant\nThe answer is 4<|im_end|>"), "assistant\nThe answer is 4");
        assert_eq!(model_turn("  </s> 4"), "4");
        assert_eq!(model_turn("<pad><pad>  5"), "5");
        assert_eq!(model_turn(""), "");
        assert_eq!(model_turn("  "), "");
    }
}
