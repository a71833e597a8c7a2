//! Final-answer extraction: find the answer a model committed to at the end of a full response.
//!
//! This module implements the final-answer contract of `verify/README.md`: the answer is the last
//! committed answer outside the reasoning, a committed answer has a marker, it holds exactly one
//! candidate ([`Answer::candidates`] lists them all when the final statement offers several; the
//! scorer calls several different ones `ambiguous`), and text inside it is part of it
//! (`wording`: allow-lists of what may surround a value).
//!
//! Layout: `turn` cuts the response at the first end-of-turn token and `escapes` reads doubly
//! escaped LaTeX; the strategies below find where the answer is marked; `statement` is the one
//! builder of the final statement, run once on the answer region: it reads the values offered
//! beside the answer (`alternatives`: hedges, list continuations, later values that revise it,
//! other candidates a self-assessment offers, in every language the lexicon reads), an
//! approximation right after it (`approximation`: read into it as `answer \approx d`), the other
//! fields of a structured answer (`record`) and whether the response asserts it as its
//! own (`assertion`: not negated, questioned, retracted, someone else's, an example, a property
//! of the answer, or given up on: [`Answer::void`]), and returns typed [`Candidate`]s, each with
//! the contract [`Rule`] that produced it. Every module reads text through one token stream
//! (`tokens`: words with their classes from the crate's one lexicon, `crate::lexicon`, numbers,
//! commands and characters with byte ranges), and one predicate (`statement::hedges`) decides
//! whether a word offers an alternative.
//!
//! Strategy 7 reads a last sentence without marker words by structure (`concluding`): one value,
//! where a stating or result verb states it, a conclusive word of the lexicon, nothing after it
//! but units, counted nouns, closing words and a role naming the answer (`as the final count`),
//! and no question, hedge, bound, negation, supposition, condition, report or second value.
//!
//! [`extract`] runs a fixed list of strategies and returns the first that finds something. The
//! order (strongest marker first) is:
//!
//! | # | strategy | module | example | [`Source`] |
//! |---|----------|--------|---------|------------|
//! | 0 | answer region | here | text after the last `</think>`, up to an end-of-turn token | – |
//! | 1 | answer tag | `tagged` | `<answer> \boxed{3} </answer>`, `<final_answer>`, `<result>` (empty: no answer) | `AnswerTag` |
//! | 2 | last box / list of boxes / parts | `boxed` | `\boxed{2} and \boxed{3}`, `\fbox{3}`, `\framebox[2cm]{3}`, `**Part 1:** $\boxed{4}$ ... **Part 2:** $\boxed{3}$` | `Boxed` |
//! | 3 | answer phrase | `tagged` | "The final answer is $5$.", "Answer: D", `"answer": "13"`, `A: 45`, `Die Antwort ist 5`, `答案：5` | `FinalAnswerPhrase` / `AnswerColon` |
//! | 4 | GSM8K | `tagged` | `#### 1,234` | `Gsm8k` |
//! | 5 | layout | `layout` | `\| Answer \| 27 \|`, `Final result = $-49$`, `#### Result: $28$`, `## Final Answer` then `$8$`, `### Answer` then `* $600$` | `Layout` |
//! | 6 | bold / emphasis | `tagged` | `The total is **42**.`, `__42__`, `***42***`, `<b>42</b>`, `<strong>42</strong>` (last line, or right after "answer"; not `**12** or **13**`); on the last line also italics and LaTeX emphasis around a value: `*42*`, `_42_`, `$\underline{42}$`, `$\mathbf{1210}$` | `Bold` |
//! | 7 | choice in the last line | `choice` | `So the correct option is (C).` | `Choice` |
//! | 8 | concluding last sentence | `tagged`, `concluding` | `This leaves $42$, $44$ or $45$; taking the greatest, we get $45$.`, `Therefore, the pair is $(7, 6)$.`, `The area is $36$.`, `Altogether, the farmer has 86 animals.`, `This gives $7$ as the final count.`, `The total comes to forty-nine.`, `Putting everything together:` then `\[42\]`, `..., the quantity asked for is` then `\[75\]` | `Conclusion` |
//! | 9 | whole short text | here | `\frac{1}{2}`, `(3, \infty)`, `\text{Monday}` | `Whole` |
//! | 10 | last math block (lenient) | `delimited` | `$..$`, `$$..$$`, `\(..\)`, `\[..\]` | `MathDelimiters` |
//! | 11 | last number (lenient, opt-in) | `number` | `... so 18 eggs.` | `LastNumber` |
//!
//! Strategies 10 and 11, and answers inside the reasoning other than a box that ends it, run only
//! with [`ExtractOptions::lenient`] (`--extract lenient`). After the strategy that found the
//! answer, the rest of the response is read for the alternatives a hedge offers beside it.
//!
//! Decisions, taken from the corpora (`real_generations_dev.jsonl`, `verifier_cases_dev.jsonl`):
//! - **Reasoning region.** Text after the last `</think>` is the answer region. A marked answer
//!   (strategies 1-8) there wins; otherwise a box in the reasoning before it (a summary cut off
//!   mid-sentence does not outvote the `\boxed{}` that ends the reasoning); then the unmarked
//!   strategies 9-11 after `</think>`; then, with `lenient` only, all strategies in the reasoning
//!   (without the whole-text one). An empty answer tag or a final box never closed after
//!   `</think>` is no answer. With no `</think>` (e.g. a response cut inside an unclosed `<think>`)
//!   the whole text is searched.
//! - **Turn tokens.** The response ends at the first end-of-turn, end-of-text or padding token of
//!   the common chat templates (`turn`): what follows is not the model's answer.
//! - **Questions are not answers.** When the last math block is asked about (`Evaluate $..$.`,
//!   `What is $x+y$?`), the unmarked strategies find nothing: a response that only repeats its
//!   problem statement has no answer (not the statement's last number).
//! - **Truncated boxes.** A text that ends inside an unclosed `\boxed{` has no answer at all: its
//!   final answer was never finished, and the earlier boxes are reasoning.
//! - **Truncated responses.** A region of at least 1000 bytes whose last character ends no
//!   sentence, formula or list (`... ## Step 18: Then we divide both sides by`) was cut off
//!   mid-derivation: the choice line, the concluding sentence and the lenient readings find nothing
//!   in it (its last formula, `m = 3` from step 17, is a step, not a result), so an unfinished
//!   response is never rewarded. Marked answers (1-6) still count. [`ExtractOptions::truncated_fallback`] (`Config::truncated =
//!   Lenient`, `--truncated lenient`) restores the old reading. See [`looks_truncated`].
//! - **Values spread over math blocks.** `$4$ and $5$ and $6$`: blocks of values joined only by
//!   `,`/"and"/"or" are one list answer (`delimited::joined_values`).
//! - **Answer tags before boxes.** In the `<answer>` prompt format the tag *is* the answer; a box
//!   outside the tag belongs to the reasoning. The tag content goes through strategies 2-10
//!   itself (so `<answer>\boxed{3}</answer>` is `3`), reported as `AnswerTag`. When the tag content
//!   yields nothing, the other strategies run on the whole region.
//! - **Lists of boxes** follow the connector rule documented in `boxed`: boxes joined only by
//!   commas, "and"/"or", `\quad`, `$`, ... form one answer (`parts`), earlier boxes in the
//!   reasoning do not.
//! - **Layouts** (`layout`): a table, label line or heading that ends the region and labels its
//!   answer (`| Final Answer |` over `| $-2$ |`, `Answer ⟶ $17000$`, `## Final Answer` then
//!   `$8$`) is a marker; every value it holds is a candidate, so two answer rows or two list items
//!   under `### Answer` are `ambiguous`. Read after strategies 2-4: a layout after their answer adds
//!   its values as later candidates (`\boxed{2}` then a table answering 2 and 3 is `ambiguous`;
//!   so is `\boxed{2}` then `## TL;DR` over `$3$`, or `A: 160` then a `<details>` block labelled
//!   `Answer` over `$161$`: blockquote markers and HTML block tags are structure it reads through);
//!   an answer phrase that is the label of a layout that reads other values (`Answer:` over a
//!   list) gives way to it.
//! - **Parts** (`boxed`): boxes each labelled with another part of the question (`Part 1`,
//!   `part (b)`, `(a)` opening a line) are the parts' answers, all candidates: a response that
//!   invents parts and boxes a different value for each answers none of them alone. Boxes in steps
//!   (`Step 2: ... \boxed{5}`) are no parts.
//! - **The last phrase wins**, whatever its wording ("Final Answer: The final answer is $5$" is
//!   `5`). A phrase is followed by its math (`$..$`, `\[..\]`, a box) or by the rest of its sentence.
//!   A number that opens that sentence is the answer alone when what follows it on its line stands
//!   apart (an aside, a clause after a comma, a remark of its own: `A: 14 (that is, fourteen)`,
//!   `A: 6 Good luck!`; the statement then reads it), and the sentence is the answer when that
//!   only qualifies it (`A: 6 I think`): `alternatives::tail_after_value` is the one judge.
//!   Answer phrases and tags inside code (`answer = solve()`) are mentioned, never the answer.
//! - **Choice letters** are reported bare: an answer that is only `(B)`, `\text{(B)}`,
//!   `\textbf{(B)}`, ... becomes `B` whatever strategy found it (the gold goes through the same
//!   path, so `\text{(C)}` golds compare as `C`).
//! - **Cleaning** trims, drops surrounding `$`/`$$`/`\(..\)`/`\[..\]`, one trailing `.`, `,`, `;`,
//!   trailing `\\`, `\,`, `\quad` and markdown emphasis (`**`, paired `*x*`, `_x_`, `***x***`).
//!   Emphasis is markup, never part of a value, wherever a value is read (answer phrases, `A:`
//!   lines, bold and italic spans, the values a statement offers): only paired delimiters at word
//!   boundaries are emphasis (`tokens::emphasis_at`), so `2*3`, `x^*`, `x_1` stay math. LaTeX
//!   emphasis commands around a value (`\underline{3}`, `\mathbf{3\sqrt{13}}`) are dropped by the
//!   LaTeX reader (`latex::normalize`). Equations (`x = 5`), units, `\text{}` and
//!   `\displaystyle` are left to the parser and the checker.
//!
//! **Cost.** Every strategy is one or two linear passes (`memchr`/`memmem`, a brace-depth stack for
//! boxes, a delimiter state machine for math blocks); nothing rescans. Inputs of any size and
//! content (unbalanced braces, a million `\boxed{`, NUL bytes, any UTF-8) are handled without
//! panics: all slicing happens at ASCII delimiters or at checked `char` boundaries.

mod alternatives;
mod approximation;
mod assertion;
mod boxed;
mod choice;
mod concluding;
mod delimited;
mod escapes;
mod later;
mod layout;
mod number;
mod record;
mod rule;
mod scan;
mod statement;
mod tagged;
#[cfg(test)]
mod tests;
mod tokens;
mod turn;
pub(crate) use turn::model_turn;
mod wording;

pub use rule::Rule;
use statement::Found;
pub use statement::{Answer, Candidate};
use std::collections::HashSet;

/// Where an extracted answer came from (the strategy order is in the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// `\boxed{..}` / `\fbox{..}` / `\framebox{..}` (the last one, or several joined into a list,
    /// or the boxes of a question's parts).
    Boxed,
    /// `<answer>...</answer>`.
    AnswerTag,
    /// "The final answer is ...".
    FinalAnswerPhrase,
    /// "Answer: ...".
    AnswerColon,
    /// GSM8K `#### 42`.
    Gsm8k,
    /// Markdown bold `**...**` (HTML bold too), or on the last line italics (`*42*`, `_42_`) or a
    /// LaTeX emphasis command around a value (`$\underline{42}$`).
    Bold,
    /// The last `$...$`, `\(...\)`, `\[...\]`, `$$...$$` block.
    MathDelimiters,
    /// A multiple-choice letter (A)-(E).
    Choice,
    /// The last number in the text (fallback).
    LastNumber,
    /// The whole (short) text taken as the answer: bare LaTeX with no delimiters.
    Whole,
    /// The concluding last sentence: `Therefore, the ordered pair is $(7, 6)$.`
    Conclusion,
    /// A layout that ends the response: a table, label line or heading with an answer label
    /// (`| Answer | 27 |`, `Final result = $-49$`, `## Final Answer` then `$8$`).
    Layout,
}

impl Source {
    /// Stable snake_case name for JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Boxed => "boxed",
            Source::AnswerTag => "answer_tag",
            Source::FinalAnswerPhrase => "final_answer_phrase",
            Source::AnswerColon => "answer_colon",
            Source::Gsm8k => "gsm8k",
            Source::Bold => "bold",
            Source::MathDelimiters => "math_delimiters",
            Source::Choice => "choice",
            Source::LastNumber => "last_number",
            Source::Whole => "whole",
            Source::Conclusion => "conclusion",
            Source::Layout => "layout",
        }
    }
}

/// Extraction switches.
#[derive(Clone, Debug)]
pub struct ExtractOptions {
    /// Also read answers the response never marked: the last math block, and an answer in the
    /// reasoning before `</think>` when nothing after it commits to one. Off by default (a
    /// response without a marker has no answer); for base-model evaluations that never mark one.
    pub lenient: bool,
    /// Fall back to the last number in the text when nothing else matched.
    pub last_number_fallback: bool,
    /// Accept a whole short response with no delimiters as bare LaTeX.
    pub whole_fallback: bool,
    /// Let a response cut off mid-derivation answer with its choice line, concluding sentence or
    /// (with `lenient`) its last math block or number. Off by default: see [`looks_truncated`].
    pub truncated_fallback: bool,
}

impl Default for ExtractOptions {
    fn default() -> Self {
        ExtractOptions { lenient: false, last_number_fallback: false, whole_fallback: true, truncated_fallback: false }
    }
}

/// Shortest text that [`looks_truncated`] may call cut off: a shorter one is a terse answer
/// (`I choose option D`, `we get 5 overall`), not a derivation that ran out of tokens.
const MIN_TRUNCATED_BYTES: usize = 1000;

/// Whether a response region stops mid-derivation (at least [`MIN_TRUNCATED_BYTES`] long, and its
/// last visible character ends no sentence,
/// formula or list (`... we get $10m^2 = 36$.\n## Step 23: Divide both sides by`, `... = \frac{4 +
/// 5 \cdot 0}{5`). A finished text ends with `.`, `!`, `?`, a closing bracket or brace, `$`,
/// `\]`, `\)`, a quote or markdown `*`/`` ` ``; a bare number at the end (`... is 18`) counts as
/// finished when its line is short (an answer line), not when it closes a long line of work.
pub fn looks_truncated(text: &str) -> bool {
    let t = text.trim_end();
    if t.len() < MIN_TRUNCATED_BYTES {
        return false;
    }
    let Some(last) = t.chars().last() else { return false };
    if last == '$' {
        // `... is $5$` is finished; `... gives the equation $` opened a formula it never wrote.
        return !delimited::ends_with_closed_block(t);
    }
    if matches!(last, '.' | '!' | '?' | ')' | ']' | '}' | '*' | '`' | '\'' | '"' | '>' | '|' | '%') {
        return false;
    }
    if !last.is_ascii() && !last.is_alphabetic() {
        // A unit or currency sign (`m²`, `€`, `°`) ends a value.
        return false;
    }
    if last.is_ascii_digit() {
        // `The answer is 18`: a short last line that ends with a number is an answer line.
        let line = t.rsplit('\n').next().unwrap_or(t);
        return line.len() > 80 || line.contains(['=', '+', '*', '^', '\\']);
    }
    true
}

/// Extract the final answer of `response` (see the module doc for the contract, the strategies
/// and their order). `None` when the response commits to no answer.
///
/// ```
/// use rlverify::{extract, ExtractOptions, Source};
/// let opts = ExtractOptions::default();
/// let a = extract("We try $x = 2$: it works, so \\boxed{2} and \\boxed{3}.", &opts);
/// assert_eq!(a.as_ref().map(|a| (a.text.as_str(), a.source)), Some(("2, 3", Source::Boxed)));
/// assert_eq!(a.map(|a| a.parts()), Some(vec!["2".to_string(), "3".to_string()]));
/// let b = extract("<think>maybe 4</think>\nThe final answer is $5$.", &opts);
/// assert_eq!(b.map(|b| b.text), Some("5".to_string()));
/// // A hedge is two candidates, never the first one alone.
/// let c = extract("The answer is $5$, or perhaps $6$.", &opts);
/// assert_eq!(c.map(|c| c.parts()), Some(vec!["5".to_string(), "6".to_string()]));
/// ```
pub fn extract(response: &str, opts: &ExtractOptions) -> Option<Answer> {
    let (turn, echo) = turn::turn_and_echo(response);
    if let Some((own, echo)) = echo {
        // A harness's echo after the answer restates it: another value there is a second
        // candidate; with no answer before it, the echo is read as part of the turn.
        if let Some(mut answer) = extract_turn(&own, opts) {
            if let Some(echoed) = extract_turn(echo, opts) {
                add_later_values(&mut answer, echoed.candidates);
            }
            return Some(answer);
        }
    }
    extract_turn(&turn, opts)
}

/// Add `later` values to `answer` as candidates a later statement offers: those that equal no
/// candidate yet (`\$75.00` then `75.00` restates it).
fn add_later_values(answer: &mut Answer, later: Vec<Candidate>) {
    let before = answer.candidates.len();
    for c in later {
        let same = |o: &Candidate| o.text == c.text || crate::check(&o.text, &c.text);
        if !answer.candidates[..before].iter().any(same) {
            answer.candidates.push(Candidate { text: c.text, rule: Rule::LaterValue, alternative: true });
        }
    }
    if answer.candidates.len() > before {
        answer.text = answer.candidates.iter().map(|c| c.text.as_str()).collect::<Vec<_>>().join(", ");
        answer.restated = None;
    }
}

/// The answer of one model turn (its end-of-turn tokens already cut).
fn extract_turn(turn: &str, opts: &ExtractOptions) -> Option<Answer> {
    let unescaped = escapes::single_escaped(turn);
    let response: &str = &unescaped;
    static THINK_END: scan::Needle = scan::Needle::new(b"</think>");
    let found = match THINK_END.last(response.as_bytes()) {
        Some(p) => {
            let (reasoning, after) = (&response[..p], &response[p + "</think>".len()..]);
            after_reasoning(reasoning, after, opts)
        }
        None => extract_region(response, opts, true),
    };
    found.map(statement::build)
}

/// The answer of a response with a reasoning part (`<think>...</think>` then `after`).
fn after_reasoning<'a>(reasoning: &'a str, after: &'a str, opts: &ExtractOptions) -> Option<Found<'a>> {
    // A marked answer (tag, box, phrase, `####`, bold, choice line) after the reasoning.
    let after_boxes = boxed::Boxes::of(after);
    if let Some(a) = marked(after, &after_boxes, opts, true) {
        return Some(a);
    }
    // An answer tag that holds nothing, or a final box never closed, is no answer: never a
    // fallback into the reasoning (a policy would move its answer there).
    if tagged::answer_tag_named(after).is_some() || after_boxes.ends_open() {
        return None;
    }
    // A box that ends the reasoning, when the text after it commits to nothing (a summary cut
    // off mid-sentence does not outvote the `\boxed{116}` that ends the reasoning).
    let (boxes, span, hedged) = boxed::last_boxes_and_span(reasoning);
    if let Some(a) = from_boxes(&boxes, hedged) {
        return Some(Found::new(a, reasoning).statement(span.start, span.end).fields().asserted());
    }
    if let Some(a) = unmarked(after, opts) {
        return Some(a);
    }
    if opts.lenient {
        let no_whole = ExtractOptions { whole_fallback: false, ..opts.clone() };
        return extract_region(reasoning, &no_whole, true);
    }
    None
}

/// Most boxes of a list answer whose repeats are kept (`\boxed{3}, \boxed{3}`); longer runs
/// count each part once.
const MAX_REPEATED_PARTS: usize = 16;
/// Longest text taken whole as a bare answer (bytes).
const MAX_WHOLE_BYTES: usize = 200;
/// Longest answer-tag content taken as is when no strategy recognises anything in it (bytes).
const MAX_TAG_CONTENT_BYTES: usize = 300;

/// Run the strategies on one region of the response.
fn extract_region<'a>(text: &'a str, opts: &ExtractOptions, with_tag: bool) -> Option<Found<'a>> {
    let boxes = boxed::Boxes::of(text);
    if boxes.ends_open() {
        // The final box was never closed: the answer was never finished.
        return None;
    }
    if let Some(a) = marked(text, &boxes, opts, with_tag) {
        return Some(a);
    }
    if with_tag && tagged::answer_tag_named(text).is_some() {
        // `<answer></answer>`: the answer the format asks for is empty.
        return None;
    }
    unmarked(text, opts)
}

/// The marked strategies: an answer the model marked as such (tag, box, phrase, `####`, bold, a
/// choice named in the last line), with the alternatives its statement offers.
fn marked<'a>(text: &'a str, boxes: &boxed::Boxes<'a>, opts: &ExtractOptions, with_tag: bool) -> Option<Found<'a>> {
    if with_tag {
        if let Some(content) = tagged::answer_tag_named(text) {
            let inner = ExtractOptions { whole_fallback: true, ..opts.clone() };
            if let Some(found) = extract_region(content, &inner, false) {
                return Some(found.source(Source::AnswerTag));
            }
            let t = clean(content);
            if !t.is_empty() && t.len() <= MAX_TAG_CONTENT_BYTES {
                return Some(Found::new(Answer::single(t, Source::AnswerTag), content));
            }
            return None;
        }
    }
    let (boxes, span, hedged) = boxes.last_run();
    // A layout that ends the text (a table, label line or heading: `layout`): later than the
    // answer another marker found, its values are later candidates; holding that answer (an
    // answer phrase that is its label) and reading other values (`Answer:` over a list), or with
    // no other marker, it is the answer when a label names one.
    // Read only when asked for: most answers end the text, with no line after them.
    let layout_cell = std::cell::OnceCell::new();
    let layout = || layout_cell.get_or_init(|| layout::last(text)).as_ref();
    // A recap after the answer: a value the response wrote before its answer is a given or an
    // intermediate result (`| Step 1 | $3$ |`), unless its row or line names the answer's
    // quantity or an alternative (`| Total | $11$ |`, `3. Total: $8$`).
    let later_layout = |a: &mut Answer, end: usize| {
        if !line_after(text, end) {
            return;
        }
        if let Some(l) = layout().filter(|l| l.start >= end) {
            let recap = |r: &std::ops::Range<usize>| {
                !l.named.contains(r) && later::wrote_before(&text[..end], &clean(&text[r.clone()]))
            };
            let values = l.values.iter().filter(|r| !recap(r)).cloned().collect();
            let l = layout::Layout { values, named: Vec::new(), ..*l };
            add_later_values(a, layout_candidates(text, &l, Rule::LaterValue));
        }
    };
    let answered = || layout().filter(|l| l.answered);
    let inside = |end: usize, raw: &str| {
        let other = |l: &&layout::Layout| match l.values.as_slice() {
            [one] => clean(&text[one.clone()]) != clean(raw),
            _ => true,
        };
        answered().filter(|l| l.start < end).filter(other)
    };
    let with_unit;
    let boxes = match (boxes.as_slice(), unit_after_box(&text[span.end..])) {
        ([one], Some(unit)) if !one.trim_end().ends_with('%') => {
            with_unit = format!("{one}{unit}");
            vec![with_unit.as_str()]
        }
        _ => boxes,
    };
    if let Some(mut a) = from_boxes(&boxes, hedged) {
        later_layout(&mut a, span.end);
        return Some(Found::new(a, text).statement(span.start, span.end).fields().asserted());
    }
    if let Some((raw, kind, end)) = tagged::phrase(text) {
        let source = match kind {
            tagged::Phrase::Final => Source::FinalAnswerPhrase,
            tagged::Phrase::Colon => Source::AnswerColon,
        };
        if let Some(l) = inside(end, &raw) {
            return Some(from_layout(text, l));
        }
        if let Some(mut a) = cleaned(&raw, source) {
            later_layout(&mut a, end);
            return Some(Found::new(a, text).statement(end, end).fields().asserted());
        }
    }
    if let Some((raw, end)) = tagged::foreign_phrase(text) {
        if let Some(l) = inside(end, &raw) {
            return Some(from_layout(text, l));
        }
        if let Some(mut a) = cleaned(&raw, Source::FinalAnswerPhrase) {
            later_layout(&mut a, end);
            return Some(Found::new(a, text).statement(end, end).fields().asserted());
        }
    }
    if let Some(raw) = tagged::gsm8k(text) {
        if let Some(mut a) = cleaned(strip_currency(raw), Source::Gsm8k) {
            later_layout(&mut a, raw.as_ptr() as usize - text.as_ptr() as usize + raw.len());
            return Some(Found::new(a, text));
        }
    }
    if let Some(l) = answered() {
        return Some(from_layout(text, l));
    }
    if let Some(raw) = tagged::bold(text) {
        if let Some(a) = cleaned(raw, Source::Bold) {
            // The statement after the closing marker is read as after a box: a hedge or a later
            // value beside a bold answer (`**11**, or perhaps 12`) is a candidate, a negation or
            // a question voids it.
            let start = raw.as_ptr() as usize - text.as_ptr() as usize;
            let end = tagged::bold_close(text, start + raw.len());
            return Some(Found::new(a, text).statement(start, end).asserted());
        }
    }
    if opts.truncated_fallback || !looks_truncated(text) {
        let letters = choice::last_line_choices(text);
        if !letters.is_empty() {
            let parts: Vec<String> = letters.iter().map(char::to_string).collect();
            return Some(Found::new(Answer::from_parts(parts, Source::Choice, true), text));
        }
        // `A. Because ...`, `B is the only valid option`: the response opens with its choice; a
        // concluding sentence that states a value still wins over it.
        let opening = choice::opening_choice(text);
        if let Some((raw, end)) = tagged::conclusion(text) {
            let states_value = raw.bytes().any(|c| c.is_ascii_digit() || matches!(c, b'\\' | b'=' | b'^'));
            if let Some(a) = cleaned(&raw, Source::Conclusion).filter(|_| states_value || opening.is_none()) {
                return Some(Found::new(a, text).statement(end, end));
            }
        }
        if let Some((raw, _)) = tagged::introduced_display(text) {
            if let Some(a) = cleaned(&raw, Source::Conclusion) {
                return Some(Found::new(a, text));
            }
        }
        if let Some(c) = opening {
            return Some(Found::new(Answer::single(c.to_string(), Source::Choice), text));
        }
    }
    None
}

/// The readings without a marker. By default only a bare answer: a whole short text that is an
/// answer and nothing else (`\frac{1}{2}`, `(3, \infty)`, `\text{Monday}`). With
/// [`ExtractOptions::lenient`], also the last math block and the last number.
fn unmarked<'a>(text: &'a str, opts: &ExtractOptions) -> Option<Found<'a>> {
    if !opts.truncated_fallback && looks_truncated(text) {
        // Cut off mid-derivation with no marker: its last formula is a step, not its answer. A
        // short bare answer (`\frac{1}{2}`, `x^2`, a gold) is still taken whole.
        if opts.whole_fallback {
            return whole(text).map(|a| Found::new(a, text));
        }
        return None;
    }
    let last_block = delimited::last_answer_block(text);
    if last_block == delimited::LastBlock::Question {
        // The text ends by asking (an echo of the problem): its numbers are not an answer.
        return None;
    }
    if opts.whole_fallback {
        if let Some(a) = whole(text) {
            return Some(Found::new(a, text));
        }
    }
    if opts.lenient {
        match last_block {
            delimited::LastBlock::Answer(bl) => {
                // `$4$ and $5$ and $6$`, `$8, 3$ or $5$`: values in blocks joined by connectors.
                let joined = delimited::joined_values(text, bl);
                let parts: Vec<String> =
                    joined.iter().map(|b| clean(&text[b.start..b.end])).filter(|t| !t.is_empty()).collect();
                if parts.len() > 1 {
                    return Some(Found::new(Answer::from_parts(parts, Source::MathDelimiters, false), text));
                }
                if let Some(a) = cleaned(&text[bl.start..bl.end], Source::MathDelimiters) {
                    return Some(Found::new(a, text).statement(bl.start, bl.end));
                }
            }
            delimited::LastBlock::Question | delimited::LastBlock::None => {}
        }
    }
    if opts.last_number_fallback {
        return number::last_number(text).map(|n| Found::new(Answer::single(n, Source::LastNumber), text));
    }
    None
}

/// Whether a line of text begins after byte `end` (past the delimiters and punctuation that close
/// the answer: `\]`, `$$`, `.`): a layout after the answer needs one.
fn line_after(text: &str, end: usize) -> bool {
    let rest = text.get(end..).unwrap_or("");
    let content = rest.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '$' | '.' | '\\' | ']' | ')'));
    !content.is_empty() && rest[..rest.len() - content.len()].contains('\n') || content.contains('\n')
}

/// The candidates of a layout's values, each with `rule`.
fn layout_candidates(text: &str, l: &layout::Layout, rule: Rule) -> Vec<Candidate> {
    let texts = l.values.iter().map(|r| clean(&text[r.clone()])).filter(|t| !t.is_empty());
    texts.map(|text| Candidate { text, rule, alternative: rule != Rule::Marker(Source::Layout) }).collect()
}

/// What a layout found: its values, listed (several different ones are `ambiguous`), with the
/// statement read after the last one.
fn from_layout<'a>(text: &'a str, l: &layout::Layout) -> Found<'a> {
    let parts = layout_candidates(text, l, Rule::Marker(Source::Layout)).into_iter().map(|c| c.text).collect();
    let last = l.values.last().map_or(l.start..l.start, Clone::clone);
    Found::new(Answer::from_parts(parts, Source::Layout, false), text).statement(last.start, last.end).asserted()
}

/// The length of the optional arguments after a box command (`[2cm][c]` in `\framebox[2cm][c]{x}`),
/// for the LaTeX reader.
pub(crate) fn skip_box_options(after: &str) -> usize {
    boxed::skip_optional_args(after.as_bytes(), 0)
}

/// The cleaned `raw` as an answer, `None` when nothing is left.
fn cleaned(raw: &str, source: Source) -> Option<Answer> {
    let t = clean(raw);
    (!t.is_empty()).then(|| Answer::single(t, source))
}

/// A percent sign right after the one box (`$\\boxed{25}\\%$`, `\\boxed{25} percent`), as the text
/// to append to its value: it is part of the boxed value. (A unit word after a box is not: it
/// names what the question counts, `\\boxed{5} dozens`, `\\boxed{50} cents` for the golds 5 and
/// 50.)
fn unit_after_box(after: &str) -> Option<&'static str> {
    let rest = after.trim_start();
    let percent = ["\\%", "%", "\\text{\\%}", "\\text{ \\%}", "percent"].iter().any(|p| rest.starts_with(p));
    percent.then_some("\\%")
}

/// The answer made of the final boxes: cleaned, empty ones dropped. Repeats are kept in a list of
/// at most [`MAX_REPEATED_PARTS`] boxes (`\boxed{3}` and `\boxed{3}` may answer `3, 3`); the
/// scorer also tries the list without them ([`Answer::without_repeats`]), so `\boxed{5}
/// \boxed{5}` still answers `5`.
fn from_boxes(raw: &[&str], hedged: bool) -> Option<Answer> {
    let mut parts: Vec<String> = Vec::with_capacity(raw.len());
    for r in raw {
        let t = clean(r);
        if !t.is_empty() {
            parts.push(t);
        }
    }
    if parts.len() > MAX_REPEATED_PARTS {
        // A long run of boxes is no list of repeated values: count each part once.
        let mut seen: HashSet<String> = HashSet::with_capacity(parts.len());
        parts.retain(|t| seen.insert(t.clone()));
    }
    (!parts.is_empty()).then(|| Answer::from_parts(parts, Source::Boxed, hedged))
}

/// A whole short text with no sentence structure is the answer itself (bare LaTeX).
fn whole(text: &str) -> Option<Answer> {
    let t = text.trim();
    if t.is_empty()
        || t.len() > MAX_WHOLE_BYTES
        || t.contains("\n\n")
        || t.contains("think>")
        || t.contains(r"\boxed")
        || t.contains(r"\fbox")
        || t.contains(r"\framebox")
    {
        return None;
    }
    let w = scan::words(t);
    if w.prose || w.count > 4 {
        return None;
    }
    // Words in another script (`שלום $x$ עולם`) are prose too.
    let mut run = 0;
    for c in t.chars() {
        let greek = ('\u{370}'..='\u{3ff}').contains(&c);
        run = if c.is_alphabetic() && !c.is_ascii() && !greek { run + 1 } else { 0 };
        if run >= 3 {
            return None;
        }
    }
    // Stray `$` in a bare answer are noise (`x+$ $y`); escaped `\$` stays.
    let mut s = String::with_capacity(t.len());
    let mut prev = '\0';
    for c in t.chars() {
        if c != '$' || prev == '\\' {
            s.push(c);
        }
        prev = c;
    }
    cleaned(&s, Source::Whole)
}

/// The answer of a gold that no marked strategy can read: ASCII, no letter outside a LaTeX
/// command, none of the characters a marker needs (`<`, `|`, `*`, `_`, `#`, `$`, a line break), no
/// box and no emphasis command (`\frac{1}{2}`, `(3, \infty)`, `-\sqrt{2}`). It is read whole, as
/// [`extract`] would after trying every strategy: `None` for any other gold.
pub(crate) fn plain_gold(gold: &str) -> Option<String> {
    // A plain number (most golds) is its own answer.
    let t = gold.trim();
    let number = t.bytes().next().is_some_and(|c| c.is_ascii_digit() || c == b'-')
        && t.bytes().last().is_some_and(|c| c.is_ascii_digit())
        && t.bytes().all(|c| c.is_ascii_digit() || matches!(c, b'-' | b'.' | b','));
    if number {
        return Some(t.to_string());
    }
    let b = gold.as_bytes();
    let marker_free =
        gold.is_ascii() && !b.iter().any(|c| matches!(c, b'<' | b'|' | b'*' | b'_' | b'#' | b'$' | b'\n' | b'\r'));
    let letters_in_commands = (0..b.len())
        .all(|k| !b[k].is_ascii_alphabetic() || (k > 0 && (b[k - 1] == b'\\' || b[k - 1].is_ascii_alphabetic())));
    const MARKED_COMMANDS: &[&str] = &[
        "boxed",
        "fbox",
        "framebox",
        "underline",
        "mathbf",
        "textbf",
        "boldsymbol",
        "bm",
        "emph",
        "textit",
        "mathit",
        "text",
    ];
    // Its letters are all in commands, so a command's name found is the command.
    let marked = || MARKED_COMMANDS.iter().any(|c| gold.contains(c));
    if !(marker_free && letters_in_commands) || marked() || gold.contains("\\\\") {
        return None;
    }
    whole(gold).map(|a| a.text)
}

/// `$1,234` -> `1,234` (a GSM8K answer may carry a currency sign).
fn strip_currency(s: &str) -> &str {
    let t = s.trim();
    match t.strip_prefix('$') {
        Some(rest) if !rest.contains('$') => rest,
        _ => t,
    }
}

/// `\boxed{x}` -> `x` when the box is the whole text (a box inside a box).
fn unwrap_box(t: &str) -> &str {
    for cmd in [r"\boxed", r"\fbox", r"\framebox"] {
        if let Some(r) = t.strip_prefix(cmd) {
            let r = &r[boxed::skip_optional_args(r.as_bytes(), 0)..];
            let r = r.trim_start();
            if r.starts_with('{') && scan::matching_brace(r.as_bytes(), 0) == Some(r.len() - 1) {
                return r[1..r.len() - 1].trim();
            }
        }
    }
    t
}

/// `~~15~~ 12` -> ` 12`: markdown strikethrough retracts the text it strikes.
fn without_struck_text(raw: &str) -> std::borrow::Cow<'_, str> {
    let tilde_pair = |from: usize| {
        memchr::memchr_iter(b'~', &raw.as_bytes()[from..])
            .map(|k| from + k)
            .find(|&k| raw.as_bytes().get(k + 1) == Some(&b'~'))
    };
    let Some(open) = tilde_pair(0) else { return std::borrow::Cow::Borrowed(raw) };
    match tilde_pair(open + 2) {
        Some(close) => {
            let rest = without_struck_text(&raw[close + 2..]).into_owned();
            std::borrow::Cow::Owned(format!("{}{}", &raw[..open], rest))
        }
        None => std::borrow::Cow::Borrowed(raw),
    }
}

/// Trailing LaTeX spacing that carries no meaning at the end of an answer.
const TRAILING_SPACING: &[&str] = &[r"\\", r"\,", r"\;", r"\!", r"\quad", r"\qquad", "\\"];

/// The rest of `t` after a leading `\text{..}` group of words of the lexicon's `Exact` class
/// only (`\text{exactly } \text{C}`, `\text{precisely } 9`), when something follows it.
fn after_exactness_text(t: &str) -> Option<&str> {
    let inner = t.strip_prefix("\\text{")?;
    let close = inner.find('}')?;
    let (words, rest) = (&inner[..close], inner[close + 1..].trim_start());
    let exact =
        !words.contains('{') && words.split_whitespace().all(|w| crate::lexicon::is(w, crate::lexicon::Class::Exact));
    (exact && !words.trim().is_empty() && !rest.is_empty()).then_some(rest)
}

/// Normalise an extracted answer: trim; drop surrounding `$`, `$$`, `\(..\)`, `\[..\]`, markdown
/// emphasis (`**`, `*`, `_`, `__`, `***`, `___`: `tokens::inside_emphasis`) and HTML bold
/// (`<b>..</b>`, `<strong>..</strong>`);
/// drop one trailing `.` (not `...`), `,`, `;` and trailing spacing commands, and a leading text
/// of exactness words (`\text{exactly } \text{C}`); report a lone choice letter bare
/// (`\text{(B)}` -> `B`).
pub(crate) fn clean(raw: &str) -> String {
    let struck = without_struck_text(raw);
    let mut t = struck.trim();
    // Each round removes at least one wrapper; a few rounds cover every real answer and keep
    // adversarial inputs (`****...`) linear.
    for _ in 0..8 {
        let before = t.len();
        t = unwrap_box(t);
        for (open, close) in [
            ("$$", "$$"),
            ("$", "$"),
            (r"\(", r"\)"),
            (r"\[", r"\]"),
            ("**", "**"),
            ("__", "__"),
            ("<b>", "</b>"),
            ("<strong>", "</strong>"),
            ("<B>", "</B>"),
            ("<STRONG>", "</STRONG>"),
        ] {
            if t.len() >= open.len() + close.len() {
                if let Some(inner) = t.strip_prefix(open).and_then(|r| r.strip_suffix(close)) {
                    let escaped_close = open == "$" && inner.ends_with('\\');
                    if !inner.contains(open) && !escaped_close {
                        t = inner.trim();
                    }
                }
            }
        }
        if let Some(inner) = tokens::inside_emphasis(t) {
            // `*27*`, `_27_`, `***27***`: emphasis is markup, never part of the value.
            t = inner;
        }
        if let Some(rest) = after_exactness_text(t) {
            // `\text{exactly } \text{C}`: a word that asserts exactness changes nothing.
            t = rest;
        }
        if let Some(r) = t.strip_prefix("**") {
            t = r.trim_start();
        }
        if let Some(r) = t.strip_suffix("**") {
            t = r.trim_end();
        }
        for sp in TRAILING_SPACING {
            if let Some(r) = t.strip_suffix(sp) {
                if !r.ends_with('\\') {
                    t = r.trim_end();
                }
            }
        }
        if let Some(r) = t.strip_suffix([',', ';', '—', '–', '。', '．']) {
            t = r.trim_end();
        }
        if let Some(r) = t.strip_suffix(" -") {
            t = r.trim_end();
        }
        if let Some(r) = t.strip_suffix('.') {
            if !r.ends_with('.') && !r.ends_with('\\') {
                t = r.trim_end();
            }
        }
        if t.len() == before {
            break;
        }
    }
    match choice::choice_letter(t) {
        Some(c) => c.to_string(),
        None => t.to_string(),
    }
}
