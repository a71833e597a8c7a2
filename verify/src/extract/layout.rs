//! Answers in a layout of their own: a Markdown table, a label line, a heading.
//!
//! The last lines of a region may mark its answer with no box and no sentence:
//! - a **label line**: a line that opens with an answer label, then a separator (`:`, `=`, `—`,
//!   `→`, `⟶`, `=>`) and one value (`Final result = $-49$`, `Answer ⟶ $17000$`, `#### Result:
//!   $28$`); or a label alone (`## Final Answer`, `**Answer:**`, `Answer` above a definition `:
//!   27`) with the value lines under it: a math block, a bare value, or a list of values (`*
//!   $600$`). Heading markers, list markers and emphasis around a label are layout; so are
//!   blockquote markers (`> **Answer**` / `>` / `> $97$`) and HTML structure tags
//!   ([`STRUCTURE_TAGS`]: `<details open><summary><b>Answer</b></summary>` then `$31$` then
//!   `</details>`): a line of structure alone is a blank line.
//! - a **table** whose header or label cell is an answer label (`| Final Answer |`, `| Answer |
//!   27 |`, `| Case | Result |`): the value cells of a label's row, and of a label's column.
//!
//! An answer label is one to [`MAX_LABEL_WORDS`] words of the lexicon's `AnswerLabel`,
//! `AnswerWord` and `FinalWord` classes, one of them a noun of the first two (`Final Answer`,
//! `Result`, `Ergebnis`, `答案`), then at most a parenthetical (`Answer (alternative)`).
//!
//! A noun of the answer's quantity that is no answer label (`Total`, `Sum`: the lexicon's
//! `AnswerNoun`) labels rows and lines too, but marks no answer: after an answer, the values it
//! labels are [`Layout::named`], as is a summary's heading (a word of the lexicon's `Summary`, with
//! determiners and closing words between: `## TL;DR`, `### In a nutshell`, `Recap:`): a summary
//! restates the answer. So are those of answer and alternative labels and of a label's
//! column in a row that names no step (`| first reading | 3 |`, not `| Step 1 | 3 |`). A layout
//! after the answer adds its named values, and those the response did not write before, as
//! candidates: the rest recap givens and intermediate results.
//!
//! **Every value of the layout is a candidate**: a layout with several different values (two
//! answer rows, two list items under `### Answer`) is `ambiguous`, never its first value. A value
//! is one math block or a short text that is no sentence; a label followed by prose is no layout
//! (the answer phrases read it). Only the last [`MAX_LINES`] lines, within [`MAX_TAIL`] bytes, are
//! read, once each.

use std::ops::Range;

use super::delimited::block_at;
use super::scan::words;
use super::statement::hedges;
use super::tokens::{Kind, Lexer};
use crate::lexicon::Class;

/// How much of the end of a region is read for a layout (bytes).
const MAX_TAIL: usize = 2048;
/// How many of its last lines are read.
const MAX_LINES: usize = 24;
/// Most words of one label (`Final Answer`, `Correct final answer`).
const MAX_LABEL_WORDS: usize = 3;
/// Longest parenthetical after a label (`Answer (second interpretation)`, bytes).
const MAX_LABEL_NOTE: usize = 48;
/// Longest bare value (bytes); a math block may be longer.
const MAX_BARE_VALUE: usize = 80;
/// Most words of a bare value (`17000 dollars`).
const MAX_VALUE_WORDS: usize = 3;
/// Most values read from one layout.
const MAX_VALUES: usize = 16;

/// The separators between a label and its value, longest first.
const SEPARATORS: &[&str] = &["=>", "->", "⟹", "⇒", "⟶", "→", ":", "：", "=", "—", "–"];

/// An answer layout at the end of a region.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Where the layout starts in the region.
    pub start: usize,
    /// Its values (byte ranges of the region, in text order, raw: not yet cleaned).
    pub values: Vec<Range<usize>>,
    /// Whether a label names the answer (`Answer`, `Result`), not only an alternative to it
    /// (`Alternative: 6`): a layout of alternatives alone commits to nothing.
    pub answered: bool,
    /// The values whose row or line is labelled with a name of the answer's quantity (an answer
    /// label, `| Total | 11 |`, `3. Total: 8`) or of an alternative: a recap after the answer
    /// that names the answer's quantity states a value for it, even one written before.
    pub named: Vec<Range<usize>>,
}

/// The answer layout that ends `text`, if one does (see the module doc).
pub(crate) fn last(text: &str) -> Option<Layout> {
    if ends_in_prose(text) {
        return None;
    }
    let lines = tail_lines(text);
    let last = lines.iter().rposition(|r| !is_blank_or_rule(&text[r.clone()]))?;
    let lines = &lines[..=last];
    let mut layout = if text[lines[last].clone()].trim_start().starts_with('|') {
        table(text, lines)?
    } else {
        labelled(text, lines)?
    };
    layout.values.sort_by_key(|r| r.start);
    layout.values.dedup();
    layout.values.truncate(MAX_VALUES);
    (!layout.values.is_empty()).then_some(layout)
}

/// Whether the last line of `text` rules a layout out at once (the common case: a response that
/// ends in a sentence): no table row, no display block closing, no blank or structure line, and
/// neither a label nor a value (what [`labelled`] reads first, and stops at).
fn ends_in_prose(text: &str) -> bool {
    let t = text.trim_end();
    let start = memchr::memrchr(b'\n', t.as_bytes()).map_or(0, |k| k + 1);
    let line = t[start..].trim_start();
    if line.is_empty()
        || line.starts_with(['|', '>', '<', '$', '\\'])
        || line.ends_with("\\]")
        || is_blank_or_rule(line)
    {
        return false;
    }
    let at = t.len() - line.len();
    let body = at + layout_marks(line);
    let end = at + structure_end(line, body - at);
    label(&t[body..end]).is_none() && value(t, body..end).is_none()
}

/// The last [`MAX_LINES`] whole lines of `text` within [`MAX_TAIL`] bytes, as trimmed ranges, in
/// text order (a line cut by the window is not read).
fn tail_lines(text: &str) -> Vec<Range<usize>> {
    let b = text.as_bytes();
    let floor = text.len().saturating_sub(MAX_TAIL);
    let mut out: Vec<Range<usize>> = Vec::with_capacity(MAX_LINES);
    let mut end = text.len();
    while out.len() < MAX_LINES {
        let start = memchr::memrchr(b'\n', &b[..end]).map_or(0, |k| k + 1);
        if start < floor {
            break;
        }
        let line = &text[start..end];
        let lead = line.len() - line.trim_start().len();
        out.push(start + lead..start + line.trim_end().len().max(lead));
        if start == 0 {
            break;
        }
        end = start - 1;
    }
    out.reverse();
    out
}

/// Whether a line is blank, a horizontal rule (`---`, `***`, `___`), a heading's underline
/// (`===`), or structure alone: a blockquote's markers (`>`) and HTML block tags (`</details>`,
/// `<div>`, `<p>`).
fn is_blank_or_rule(line: &str) -> bool {
    let t = line.trim();
    let structure = t.starts_with(['>', '<']) && {
        let from = quote_and_tags(t);
        from >= structure_end(t, from)
    };
    structure
        || (t.len() != 1 && (t.bytes().all(|c| matches!(c, b'-' | b'*' | b'_' | b' ')) || t.bytes().all(|c| c == b'=')))
}

/// HTML tags that are structure or emphasis around a label or a value (`<details open>`,
/// `<summary>`, `<b>`), never part of it.
const STRUCTURE_TAGS: &[&str] =
    &["details", "summary", "div", "p", "blockquote", "section", "span", "center", "b", "strong", "em", "i", "u", "br"];
/// Longest HTML tag read, attributes included (bytes).
const MAX_TAG: usize = 160;

/// The length of the structure tag (see [`STRUCTURE_TAGS`]) that starts at byte `i` of `s`
/// (`<details open>`, `</summary>`, `<br/>`), if one does.
fn tag_at(s: &str, i: usize) -> Option<usize> {
    let b = s.as_bytes();
    if b.get(i) != Some(&b'<') {
        return None;
    }
    let mut j = i + 1 + usize::from(b.get(i + 1) == Some(&b'/'));
    let name = j;
    while b.get(j).is_some_and(u8::is_ascii_alphabetic) {
        j += 1;
    }
    if !STRUCTURE_TAGS.iter().any(|t| t.eq_ignore_ascii_case(&s[name..j])) {
        return None;
    }
    // Attributes, up to the closing `>` on the same line.
    let close = b[j..].iter().take(MAX_TAG).position(|&c| matches!(c, b'>' | b'<' | b'\n'))?;
    (b[j + close] == b'>' && (close == 0 || matches!(b[j], b' ' | b'/'))).then_some(j + close + 1 - i)
}

/// Where the text of a line starts after its blockquote markers (`> `, `>>`) and the structure
/// tags that open it (`<summary><b>`).
fn quote_and_tags(line: &str) -> usize {
    let b = line.as_bytes();
    let mut i = 0;
    loop {
        while b.get(i).is_some_and(|c| matches!(c, b' ' | b'\t' | b'>')) {
            i += 1;
        }
        match tag_at(line, i) {
            Some(len) => i += len,
            None => return i,
        }
    }
}

/// Where the text of a line (read from byte `from`) ends before the structure tags that close it
/// (`</b></summary>`).
fn structure_end(line: &str, from: usize) -> usize {
    let mut end = line.len();
    while end > from && line[from..end].ends_with('>') {
        let Some(open) = memchr::memrchr(b'<', &line.as_bytes()[from..end]).map(|k| from + k) else { break };
        if tag_at(line, open) != Some(end - open) {
            break;
        }
        end = from + line[from..open].trim_end().len();
    }
    end
}

/// Label lines and the value lines under their labels, read from the last line up.
fn labelled(text: &str, lines: &[Range<usize>]) -> Option<Layout> {
    let mut values: Vec<Range<usize>> = Vec::new();
    let mut pending: Vec<Range<usize>> = Vec::new();
    let (mut start, mut answered) = (None, false);
    let mut named: Vec<Range<usize>> = Vec::new();
    let mut k = lines.len();
    while k > 0 {
        k -= 1;
        let r = lines[k].clone();
        let line = &text[r.clone()];
        if is_blank_or_rule(line) {
            continue;
        }
        if let Some((opener, block)) = display_block(text, lines, k) {
            if start.is_some() {
                break;
            }
            pending.push(block);
            k = opener;
            continue;
        }
        let body = r.start + layout_marks(line);
        // Structure tags around a label or a value (`<summary><b>Answer</b></summary>`).
        let end = r.start + structure_end(line, body - r.start);
        match label(&text[body..end]) {
            Some((len, kind)) => {
                let rest = body + len..end;
                match value(text, rest.clone()) {
                    Some(v) if pending.is_empty() => {
                        named.push(v.clone());
                        values.push(v);
                    }
                    None if text[rest].trim().is_empty() && !pending.is_empty() => {
                        named.extend(pending.iter().cloned());
                        values.append(&mut pending);
                    }
                    _ => break,
                }
                answered |= kind == Label::Answer;
                start = Some(r.start);
            }
            None => {
                let Some(v) = value(text, body..end).filter(|_| start.is_none()) else { break };
                pending.push(v);
            }
        }
    }
    Some(Layout { start: start?, values, answered, named })
}

/// The length of the layout marks that open a line: spaces, a heading's `#`s, a list marker
/// (`-`, `*`, `+`, `1.`, `1)`), a quote's `>`, a definition's `:`, structure tags
/// (`<summary><b>`).
fn layout_marks(line: &str) -> usize {
    let b = line.as_bytes();
    let mut i = 0;
    loop {
        let before = i;
        if let Some(len) = tag_at(line, i) {
            i += len;
        }
        while b.get(i).is_some_and(|c| matches!(c, b' ' | b'\t' | b'#' | b'>')) {
            i += 1;
        }
        if matches!(b.get(i), Some(b'-' | b'+' | b'*' | b':')) && b.get(i + 1) == Some(&b' ') {
            i += 2;
        }
        let digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        if (1..=2).contains(&digits)
            && matches!(b.get(i + digits), Some(b'.' | b')'))
            && b.get(i + digits + 1) == Some(&b' ')
        {
            i += digits + 2;
        }
        if i == before {
            return i;
        }
    }
}

/// Emphasis and spaces around a label (`**Final answer:**`, `__Answer__`).
fn skip_emphasis(s: &str, mut i: usize) -> usize {
    let b = s.as_bytes();
    while b.get(i).is_some_and(|c| matches!(c, b' ' | b'\t' | b'*' | b'_')) {
        i += 1;
    }
    i
}

/// If `s` opens with an answer label (see the module doc) or a hedge cue in its place
/// (`Alternative:`), the length of the label with its emphasis, parenthetical and separator
/// (where its value starts), and what it names.
fn label(s: &str) -> Option<(usize, Label)> {
    let b = s.as_bytes();
    let mut i = skip_emphasis(s, 0);
    let (mut count, mut noun, mut hedge, mut quantity) = (0, false, false, false);
    let (mut summary, mut filler) = (false, false);
    while count < MAX_LABEL_WORDS {
        let mut lexer = Lexer::new(s);
        lexer.seek(i);
        let Some(t) = lexer.next().filter(|t| t.range.start == i && t.stands_alone(s)) else { break };
        let Kind::Word(classes) = t.kind else { break };
        let is_noun = classes.has(Class::AnswerLabel) || classes.has(Class::AnswerWord);
        // `Total`, `Sum`, `Count`: a noun of the answer's quantity that is no answer label.
        let names = classes.has(Class::AnswerNoun);
        // `Summary`, `TL;DR`, `In short`, `Recap`: a section that states the answer again.
        let sums = classes.has(Class::Summary);
        // `in`, `a` inside a summary's heading (`In a nutshell`).
        let fills = classes.has(Class::Determiner) || classes.has(Class::Closing);
        if !(is_noun || names || sums || hedges(classes) || classes.has(Class::FinalWord) || fills) {
            break;
        }
        noun |= is_noun;
        quantity |= names;
        summary |= sums;
        filler |= fills && !(is_noun || names || sums || hedges(classes));
        hedge |= hedges(classes);
        count += 1;
        i = skip_emphasis(s, t.range.end);
        if i == t.range.end {
            // `TL;DR`, `Kurz-Fassung`: a `;` or `-` between letters joins one label word.
            let joined = matches!(b.get(i), Some(b';' | b'-')) && b.get(i + 1).is_some_and(u8::is_ascii_alphabetic);
            if !joined {
                // No space after it: the label's words end here.
                break;
            }
            i += 1;
        }
    }
    // Fillers label nothing but a summary's heading.
    if !(noun || hedge || quantity || summary) || (filler && !summary) {
        return None;
    }
    if b.get(i) == Some(&b'(') {
        let close = b[i..].iter().take(MAX_LABEL_NOTE).position(|&c| c == b')')?;
        // `Answer (alternative)` names an alternative.
        hedge |= Lexer::new(&s[i..i + close]).any(|t| matches!(t.kind, Kind::Word(c) if hedges(c)));
        i = skip_emphasis(s, i + close + 1);
    }
    let sep = SEPARATORS.iter().find(|sep| s[i..].starts_with(**sep));
    if let Some(sep) = sep {
        i = skip_emphasis(s, i + sep.len());
    }
    // A separator ends the label, or the label ends its line or cell.
    // A summary's heading (`## TL;DR`) names no answer of its own, but restates it: a value under
    // it after an answer is stated for the answer's quantity.
    let kind = match (hedge, noun) {
        (true, _) => Label::Alternative,
        (false, true) => Label::Answer,
        (false, false) => Label::Quantity,
    };
    (sep.is_some() || s[i..].trim().is_empty()).then_some((i, kind))
}

/// What a label names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Label {
    /// The answer (`Final Answer`, `Result`, `Ergebnis`).
    Answer,
    /// An alternative to it (`Alternative`, `Answer (alternative)`, `Or`: the lexicon's hedge cues).
    Alternative,
    /// The answer's quantity, with no answer label (`Total`, `Sum`, `Final count`: the lexicon's
    /// `AnswerNoun`), or a summary's heading (`Summary`, `TL;DR`, `In short`: the lexicon's
    /// `Summary`): it marks no answer, but a value it labels after an answer is stated for the
    /// answer's quantity.
    Quantity,
}

/// The value in `text[r]`: one math block (its content) or a short bare value that is no
/// sentence. `None` for an empty span, prose, or several blocks.
fn value(text: &str, r: Range<usize>) -> Option<Range<usize>> {
    let s = &text[r.clone()];
    let t = s.trim_start_matches([' ', '\t', '*', '_']);
    let at = r.start + (s.len() - t.len());
    let t = t.trim_end_matches(['.', ',', ';', '*', '_', ' ', '\t']);
    if t.is_empty() {
        return None;
    }
    let b = t.as_bytes();
    if matches!(b[0], b'$' | b'\\') {
        if let Some(bl) = block_at(t, 0) {
            let closer = if t[bl.end..].starts_with("$$") || b[bl.end] == b'\\' { 2 } else { 1 };
            let after = &t[bl.end + closer..];
            // A unit after the block is read by the statement (`$5$ cm`).
            let plain = after.len() <= MAX_BARE_VALUE && !after.contains(['$', '\\']) && bare(after);
            return (plain || after.trim().is_empty()).then_some(at + bl.start..at + bl.end);
        }
    }
    (t.len() <= MAX_BARE_VALUE && !t.contains('$') && bare(t) && t.chars().any(|c| c.is_alphanumeric()))
        .then_some(at..at + t.len())
}

/// Whether `s` is no sentence: a few words, none of them prose.
fn bare(s: &str) -> bool {
    // Many runs of letters (LaTeX commands aside) make a sentence: no word needs reading then.
    let b = s.as_bytes();
    let letter_runs = (0..b.len())
        .filter(|&k| b[k].is_ascii_alphabetic() && (k == 0 || !(b[k - 1].is_ascii_alphabetic() || b[k - 1] == b'\\')))
        .count();
    if letter_runs > 2 * MAX_VALUE_WORDS + 2 {
        return false;
    }
    let w = words(s);
    !w.prose && w.count <= MAX_VALUE_WORDS
}

/// If line `k` closes a display block that opened on an earlier line (`$$` / `\]` alone on its
/// line), the opener's line and the block's content.
fn display_block(text: &str, lines: &[Range<usize>], k: usize) -> Option<(usize, Range<usize>)> {
    let line = &text[lines[k].clone()];
    if !(line == "$$" || line.ends_with("\\]")) || line.starts_with("\\[") {
        return None;
    }
    let opener = (k.saturating_sub(MAX_LINES)..k).rev().find(|&j| {
        let l = &text[lines[j].clone()];
        l.starts_with("$$") || l.starts_with("\\[")
    })?;
    let from = lines[opener].start;
    let bl = block_at(&text[from..lines[k].end], 0)?;
    let close = from + bl.end + 2;
    (close == lines[k].end && !text[from + bl.start..from + bl.end].trim().is_empty())
        .then_some((opener, from + bl.start..from + bl.end))
}

/// A Markdown table that ends the text: the value cells of its label rows and label columns.
fn table(text: &str, lines: &[Range<usize>]) -> Option<Layout> {
    let first = lines.iter().rposition(|r| !text[r.clone()].starts_with('|')).map_or(0, |k| k + 1);
    let rows: Vec<Vec<Range<usize>>> = lines[first..].iter().map(|r| cells(text, r.clone())).collect();
    let separator = rows.iter().position(|row| is_separator(text, row));
    let (mut values, mut answered, mut named) = (Vec::new(), false, Vec::new());
    let label_only = |c: &Range<usize>| {
        label(&text[c.clone()]).filter(|&(len, _)| text[c.start + len..c.end].trim().is_empty()).map(|(_, kind)| kind)
    };
    for (k, row) in rows.iter().enumerate() {
        if Some(k) == separator {
            continue;
        }
        // A label row: `| Answer | 27 |`, `| **Final answer** | $8$ |`.
        let mut filled = row.iter().filter(|c| !text[(*c).clone()].trim().is_empty());
        if let Some(kind) = filled.next().and_then(label_only) {
            let before = values.len();
            values.extend(filled.filter(|c| label_only(c).is_none()).filter_map(|c| value(text, c.clone())));
            named.extend(values[before..].iter().cloned());
            answered |= kind == Label::Answer && values.len() > before;
        }
    }
    // A label column: the body cells under a label of the header row (unless the header row is
    // itself a label row: `| Final answer | $8$ |`).
    if let Some(sep) = separator.filter(|&s| s > 0) {
        let header = &rows[sep - 1];
        let label_row = header.first().and_then(label_only).is_some()
            && header[1..].iter().any(|c| label_only(c).is_none() && value(text, c.clone()).is_some());
        for (j, h) in header.iter().enumerate().filter(|_| !label_row) {
            // A column's values are its rows' (`| Step 1 | 3 |` under `| Step | Result |`): a
            // name of the quantity alone over a column (`| Step | Total |`) labels no layout.
            let Some(kind) = label_only(h).filter(|&k| k != Label::Quantity) else { continue };
            let before = values.len();
            for row in &rows[sep + 1..] {
                if let Some(c) = row.get(j).filter(|c| label_only(c).is_none()) {
                    let Some(v) = value(text, c.clone()) else { continue };
                    // A row that names a step of the work (`| Step 1 | $3$ |`) holds an
                    // intermediate result; any other (`| first reading | $3$ |`) the column's.
                    if !row.first().is_some_and(|f| names_step(&text[f.clone()])) {
                        named.push(v.clone());
                    }
                    values.push(v);
                }
            }
            answered |= kind == Label::Answer && values.len() > before;
        }
    }
    Some(Layout { start: lines[first].start, values, answered, named })
}

/// Whether a cell names a step of the work (a word of the lexicon's `Step`: `Step 1`, `after the
/// first step`, `first intermediate result`).
fn names_step(cell: &str) -> bool {
    Lexer::new(cell).take(MAX_STEP_TOKENS).any(|t| matches!(t.kind, Kind::Word(c) if c.has(Class::Step)))
}

/// Most tokens of a row's first cell read for a step's name.
const MAX_STEP_TOKENS: usize = 16;

/// The cells of a table row (trimmed ranges), split at `|` outside math and escapes.
fn cells(text: &str, r: Range<usize>) -> Vec<Range<usize>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let (mut start, mut in_math, mut i) = (r.start, false, r.start);
    while i < r.end {
        match b[i] {
            b'\\' => i += 1,
            b'$' => in_math = !in_math,
            b'|' if !in_math => {
                out.push(start..i);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out.push(start..r.end);
    // The outer pipes leave an empty cell at each end.
    if text[out[0].clone()].trim().is_empty() {
        out.remove(0);
    }
    if out.last().is_some_and(|c| text[c.clone()].trim().is_empty()) {
        out.pop();
    }
    out.into_iter()
        .map(|c| {
            let s = &text[c.clone()];
            let lead = s.len() - s.trim_start().len();
            c.start + lead..c.start + s.trim_end().len().max(lead)
        })
        .collect()
}

/// Whether a row is a table's separator row (`|---|:---:|`).
fn is_separator(text: &str, row: &[Range<usize>]) -> bool {
    !row.is_empty()
        && row.iter().all(|c| {
            let t = &text[c.clone()];
            t.contains('-') && t.bytes().all(|x| matches!(x, b'-' | b':' | b' '))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values of the layout that ends `text`.
    fn values(text: &str) -> Vec<&str> {
        last(text).map(|l| l.values.into_iter().map(|r| &text[r]).collect()).unwrap_or_default()
    }

    #[test]
    fn label_lines() {
        assert_eq!(values("So x = 17000.\n\nAnswer ⟶ $17000$"), vec!["17000"]);
        assert_eq!(values("x = -49\n\nFinal result = $-49$"), vec!["-49"]);
        assert_eq!(values("...\n\nFinal: $4t$"), vec!["4t"]);
        assert_eq!(values("...\n\nSolution: $x$"), vec!["x"]);
        assert_eq!(values("...\n\nResult — 12"), vec!["12"]);
        assert_eq!(values("...\n\nAnswer\n: $27$"), vec!["27"]);
        assert_eq!(values("...\n\n**Final answer:** $8$ cm"), vec!["8"]);
        assert_eq!(values("...\n\nErgebnis: $5$"), vec!["5"]);
        assert_eq!(values("...\n\n答案：$5$"), vec!["5"]);
        assert_eq!(values("...\n\n- Answer (first reading): $2$\n- Answer (second reading): $3$"), vec!["2", "3"]);
        // Prose after a label, a label inside a sentence, a value with no label: no layout.
        assert!(last("...\n\nResult: we get $5$ apples.").is_none());
        assert!(last("Final Answer: The final answer is $5$. I hope it is correct.").is_none());
        assert!(last("The answer is: $5$").is_none());
        assert!(last("We compute the result = $5$").is_none());
        assert!(last("...\n\n#### 42").is_none());
        assert!(last("Answer the question:\n$5$").is_none());
        assert!(last("## Final Answer").is_none());
    }

    #[test]
    fn headings_and_lists_under_a_label() {
        assert_eq!(values("...\n\n#### Result: $28$"), vec!["28"]);
        assert_eq!(values("...\n\n## Final Answer\n\n$-2$"), vec!["-2"]);
        assert_eq!(values("...\n\n# Answer\n27"), vec!["27"]);
        assert_eq!(values("...\n\n### Final answer\n\n$$\n\\frac{1}{2}\n$$"), vec!["\n\\frac{1}{2}\n"]);
        assert_eq!(values("...\n\n**Answer**\n\\[ 7 \\]"), vec![" 7 "]);
        assert_eq!(values("...\n\nFinal Answer\n============\n\n$7$"), vec!["7"]);
        // Several values under one label are several candidates.
        assert_eq!(values("x = 600\n\n### Answer\n\n* $600$\n* $601$"), vec!["600", "601"]);
        assert_eq!(values("Answer:\n1. $5$\n2. $6$"), vec!["5", "6"]);
        assert_eq!(values("**Final answers:**\n- $5$\n- $6$"), vec!["5", "6"]);
        // Values above the label are reasoning.
        assert_eq!(values("$3$\n## Answer\n$5$"), vec!["5"]);
        // A list of steps under no label is no layout.
        assert!(last("Steps:\n1. $5$\n2. $6$").is_none());
    }

    #[test]
    fn a_name_of_the_quantity_labels_rows_and_lines_but_no_answer() {
        let t = "...\n\n| Step | Result |\n|---|---|\n| Step 1 | $3$ |\n| Total | $11$ |";
        let l = last(t).unwrap();
        let named: Vec<&str> = l.named.iter().map(|r| &t[r.clone()]).collect();
        assert!(named.contains(&"11") && !named.contains(&"3"), "{named:?}");
        let l = last("Recap:\n1. $5$\n2. $6$\n3. Total: $8$").unwrap();
        assert!(!l.answered && l.named.len() == 1);
        // A name of the quantity over a column labels nothing.
        assert!(last("| Item | Total |\n|---|---|\n| pens | $3$ |").is_none_or(|l| l.values.is_empty()));
    }

    #[test]
    fn tables() {
        assert_eq!(values("...\n\n| **Final answer** | $8$ |\n|---|---|"), vec!["8"]);
        assert_eq!(values("...\n\n| Final Answer |\n|:---:|\n| $-2$ |"), vec!["-2"]);
        assert_eq!(values("...\n\n| Quantity | Value |\n|---|---|\n| Answer | 27 |"), vec!["27"]);
        assert_eq!(values("Summary:\n\n| | |\n|---|---|\n| Result | $10$ |"), vec!["10"]);
        assert_eq!(values("| Case | Answer |\n|---|---|\n| first | $2$ |\n| second | $3$ |"), vec!["2", "3"]);
        assert_eq!(values("| Final answer |\n|---|\n| $1$ |\n| $2$ |"), vec!["1", "2"]);
        assert_eq!(
            values("| Quantity | Value |\n|---|---|\n| Answer | $1$ |\n| Answer (alternative) | $2$ |"),
            vec!["1", "2"]
        );
        // `|` inside math is no cell border.
        assert_eq!(values("| Answer | $|x| = 3$ |"), vec!["|x| = 3"]);
        // A table with no answer label is no layout.
        assert!(last("| n | square |\n|---|---|\n| 2 | 4 |").is_none());
        assert!(last("| Quantity | Value |\n|---|---|\n| speed | 5 |\n| time | 3 |").is_none());
    }

    #[test]
    fn alternatives_in_a_layout() {
        let l = last("| Answer | Alternative |\n|---|---|\n| $5$ | $6$ |").expect("a layout");
        assert!(l.answered && l.values.len() == 2);
        assert_eq!(values("| Answer | $5$ |\n| Alternative | $6$ |"), vec!["5", "6"]);
        assert_eq!(values("Final answer: $5$\nAlternatively: $6$"), vec!["5", "6"]);
        // Alternatives alone name no answer.
        let l = last("...\n\nAlternative: $6$").expect("a layout");
        assert!(!l.answered);
        let l = last("...\n\nAnswer (alternative): $6$").expect("a layout");
        assert!(!l.answered);
    }

    #[test]
    fn blockquotes_and_html_blocks_are_structure() {
        assert_eq!(values("...\n\n> **Answer**\n>\n> $97$"), vec!["97"]);
        assert_eq!(values("...\n\n<details open>\n<summary><b>Answer</b></summary>\n\n$31$\n\n</details>"), vec!["31"]);
        assert_eq!(values("...\n\n<div class=\"answer\">\n<p>Answer: $4$</p>\n</div>"), vec!["4"]);
        // A tag that is no structure is no layout mark; a summary's text is prose.
        assert!(last("...\n\n<answerx>Answer</answerx>\n$5$").is_none());
        assert!(
            last("<details><summary>Click to reveal the answer</summary>\n\nThe answer is 5.\n</details>").is_none()
        );
    }

    #[test]
    fn a_summary_heading_labels_values_stated_for_the_answer() {
        for t in [
            "...\n\n## TL;DR\n\n$3$",
            "...\n\n### In short\n$3$",
            "...\n\n**Recap:** $3$",
            "...\n\n## Zusammenfassung\n$3$",
        ] {
            let l = last(t).unwrap_or_else(|| panic!("{t}"));
            assert!(!l.answered && l.named.len() == 1, "{t}");
        }
        // Fillers alone label nothing; a summary in prose is no layout.
        assert!(last("...\n\nIn a: $3$").is_none());
        assert!(last("...\n\n**Summary:** putting it together, the value is $3$.").is_none());
    }

    #[test]
    fn any_text_is_safe() {
        for s in [
            "",
            "|",
            "||",
            "| Answer |",
            "Answer",
            "# \u{e9}\u{20ac}|$",
            "Answer: $",
            "| Answer | $5 |",
            "\\]",
            "$$",
            "<",
            "</",
            "<b",
            "> <details",
            "TL;",
            "</summary>é<",
        ] {
            let _ = last(s);
        }
        let long = format!("{}\n| Answer | 5 |", "é".repeat(5000));
        assert_eq!(values(&long), vec!["5"]);
    }
}
