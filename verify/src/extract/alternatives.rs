//! The final statement: every value a response commits to at its end, not only the first.
//!
//! A committed answer holds exactly one candidate. A hedge offers a second one beside it, and
//! the candidates are collected here so the scorer can see them all (several distinct candidates
//! are `ambiguous`, unless the gold is a list or set they form as a whole):
//!
//! - **Inside the answer** ([`split_hedged`]): `5 \text{ or } 6`, `5\text{, possibly } 6`,
//!   `\text{(B) or (D)}`, `\text{either } 5 \text{ or } 6` are two candidates each. Text inside an
//!   answer is part of it: it is never dropped.
//! - **After the answer, in its statement** ([`alternatives_after`]): the rest of the answer's
//!   paragraph is read for values offered beside it, `, or perhaps $6$`, `(or $6$ when n is odd)`,
//!   `; otherwise $9$`, `\; \text{(or } 6\text{)}`, `. It could also be 6.`, and for values that
//!   continue a list right after it (`$2$ and $3$`, `$2$, $3$`; same shape only, so `$5$, and
//!   $5 < 6$ confirms it` adds nothing).
//! - **In an aside right after the answer** (a parenthesis, a square bracket or a dash, on the
//!   answer's line; a value inside a condition there, `(the same if zero counts)`, is the
//!   condition's):
//!   its value, past a short lead-in (`(that is, fourteen)`, `(i.e. ١٤)`, `— in words, eight
//!   hundred`, `(or possibly XCI)`): the same value restates the answer, another is an
//!   alternative. An aside that gives a reason, negates, qualifies or calls a value wrong offers
//!   none.
//! - **What follows a value on an answer phrase's line** ([`tail_after_value`]): an aside, a
//!   clause or a remark that stands apart from it (read as above; a closing remark with no value,
//!   `Good luck!`, adds nothing), or words that qualify it (`I think`, `Not sure`): part of the
//!   answer.
//!
//! - **In a later sentence that states a value for the answer's quantity** (`later`): `Checking
//!   again, the count must be $15$.`, `The code gives $15$.`, `If the book counts it
//!   differently, it is 15.`, `Espera, en realidad es $15$.`: a second candidate; and in a
//!   self-assessment that offers another (`Runner-up: $15$`, `I'd put 70% on $14$ and 30% on
//!   $15$`). A check that confirms the answer states the
//!   answer again and adds nothing; givens and intermediate results recapped are other
//!   quantities; a harness's `<|...|>` separators are no statement.
//!
//! A hedge is a cue word (the lexicon's `HedgeCue` class: `or`, `otherwise`, `perhaps`, `quizás`,
//! `vielleicht`, `peut-être`, `возможно`, `可能`, `あるいは`, ...) followed, with only filler words and
//! commas between (`HedgeFiller`: `be`, `also`, `the answer is`, `是`, ...),
//! by a value: a math block, a box, a number, a choice label, a numeral of another script (`١١`,
//! `Ⅻ`), a Roman numeral in capitals (`or XCI`, read by its value), or a number word (`maybe
//! eleven`; a word that is also English only after a hedge of its own language: `oder elf`). A cue followed by anything else (`could be verified`,
//! `or not`) offers no value. An `or` inside a justification (`because 6 is odd or even`) offers
//! none either: after a `Justification` word an `or` joins reasons, not answers.
//!
//! The statement's tokens are the token stream's, with a hyphenated word of the lexicon as one
//! word (`runner-up`, `peut-être`), the lexicon's words read inside a run of a script written
//! without spaces (`可能` in `也可能是`, the characters between them as unknown words) and that
//! script's punctuation (`，`, `。`, `（`) as punctuation.
//!
//! Each candidate comes with the [`Rule`] that produced it (`list_continuation`, `parenthetical`,
//! `hedge`, `hedge_inside`, `later_value`, `other_candidate`), which the scorer reports.
//!
//! Cost: one pass over at most [`MAX_STATEMENT_BYTES`] (and [`MAX_STATEMENT_TOKENS`]) after the
//! answer.

use super::delimited::{block_at, block_shape};
use super::later;
use super::rule::Rule;
use super::scan::{floor_boundary, is_word_byte, matching_brace};
use super::statement::hedges;
use super::tokens::{latin_letter, Kind, Lexer, Token, TEXT_COMMANDS};
use crate::lexicon::{self, Class, Classes};
use std::ops::Range;

/// How much text after an answer is read for alternatives (bytes).
const MAX_STATEMENT_BYTES: usize = 1200;
/// Most alternatives collected (a longer run is no statement).
const MAX_ALTERNATIVES: usize = 16;
/// Most tokens of the statement read.
const MAX_STATEMENT_TOKENS: usize = 4 * MAX_ALTERNATIVES + 64;

/// One token of a statement.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok<'a> {
    /// A word, lower-cased (borrowed when it already is), with its lexicon classes.
    Word(std::borrow::Cow<'a, str>, Classes),
    /// A value: its text (block or box content, a number, a choice letter).
    Value(String),
    /// `.`, `!`, `?` ending a sentence.
    SentenceEnd,
    /// `,` / `;`.
    Comma,
    /// `(`: a parenthetical starts.
    Open,
    /// `=`: what follows is the value of what precedes.
    Equals,
    /// `:`: what follows states something of its own (a reason before it ends there).
    Colon,
    /// `%` after a value (`70%`): a share, not a value of its own.
    Percent,
    /// A harness's separator (`<|code|>`), or a code fence never closed: what follows is no
    /// statement in words.
    Break,
    /// A fenced code block, read whole: the value it prints when it is an output block of one
    /// value (```` ```output\n28\n``` ````).
    Code(Option<String>),
    /// Anything else (a parenthesis, an operator, a command): no meaning here.
    Other,
}

/// The statement's tokens of `s` (read from the token stream), at most `limit` of them.
fn tokenize(s: &str, limit: usize) -> Vec<Tok<'_>> {
    tokenize_reach(s, limit).0
}

/// [`tokenize`], with where each token starts in `s` and the byte of `s` the tokens reach
/// (`s.len()` when they read it all).
fn tokenize_reach(s: &str, limit: usize) -> (Vec<Tok<'_>>, Vec<usize>, usize) {
    let b = s.as_bytes();
    let mut starts: Vec<usize> = Vec::new();
    let mut out = Vec::new();
    let mut lexer = Lexer::new(s);
    // Inside a parenthesis (its depth), or after a dash up to the sentence's end: an aside.
    let (mut parens, mut dashed) = (0usize, false);
    let mut reach = 0;
    while out.len() < limit {
        // Where the last token, or the block read as one (math, code, markup), ended.
        let prev_end = lexer.position();
        let Some(t) = lexer.next() else {
            // The tokens of the last lexer token start where it did, too.
            starts.resize(out.len(), reach);
            reach = s.len();
            break;
        };
        let Range { start: i, end } = t.range.clone();
        // The tokens of the last lexer token start where it did.
        starts.resize(out.len(), reach);
        reach = i;
        if dashed && b[prev_end.min(i)..i].contains(&b'\n') {
            // A dash's aside ends with its line.
            dashed = false;
        }
        let gap = &b[prev_end.min(i)..i];
        if gap.iter().filter(|&&c| c == b'\n').count() >= 2
            && gap.iter().all(u8::is_ascii_whitespace)
            && !matches!(out.last(), None | Some(Tok::SentenceEnd))
        {
            // A blank line ends a sentence (`He beat 16 people` then `Result of the verification:
            // $5$.`).
            out.push(Tok::SentenceEnd);
        }
        let offered = offers(s, i, out.last(), parens > 0 || dashed);
        match if offered { number_words_at(s, &t, out.last()) } else { None } {
            Some(NumberWords::Words(words)) => {
                // `(vingt-sept)`, `or cuarenta y cinco`: a number in words is one word.
                lexer.seek(i + words.len());
                let classes = if words.contains([' ', '-']) { Classes::default() } else { lexicon::classes(words) };
                out.push(Tok::Word(std::borrow::Cow::Owned(words.to_lowercase()), classes));
                continue;
            }
            Some(NumberWords::Homograph(len, value)) => {
                // `oder elf`, `o once`: a word of the hedge's language, by its value.
                lexer.seek(i + len);
                out.push(Tok::Value(value.to_string()));
                continue;
            }
            None => {}
        }
        if offered && t.is_ascii_word(s) {
            if let Some(v) = roman_numeral_at(s, &t) {
                // `, or XCI`, `(or possibly CXXXIII)`: a Roman numeral in capitals, by its value.
                out.push(Tok::Value(v.to_string()));
                continue;
            }
        }
        match t.kind {
            // An em dash, or a spaced en dash, opens an aside like a parenthesis (`— in words,
            // ten`, `– perhaps XXVIII`).
            Kind::Char('—') => {
                dashed = true;
                out.push(Tok::Open);
            }
            Kind::Char('–') if s[..i].ends_with(' ') && s[end..].starts_with(' ') => {
                dashed = true;
                out.push(Tok::Open);
            }
            Kind::Char('(') if !(matches!(b.get(i + 1), Some(b'A'..=b'E')) && b.get(i + 2) == Some(&b')')) => {
                parens += 1;
                out.push(Tok::Open);
            }
            // A square bracket opens an aside like a parenthesis (`\boxed{24} [$25$ if order
            // matters]`).
            Kind::Char('[') => {
                parens += 1;
                out.push(Tok::Open);
            }
            Kind::Char(')' | ']') => parens = parens.saturating_sub(1),
            // Markdown emphasis (`**If order matters:** $28$`) is no token: a label reads as its
            // words.
            Kind::Char(c @ ('*' | '_')) if b.get(end) == Some(&(c as u8)) || (i > 0 && b[i - 1] == c as u8) => {}
            // `(i.e. ten)`, `(d.h. zehn)`: inside a parenthesis, the dot of an abbreviation (after a
            // word of one or two letters) closes a lead-in like a comma, not a sentence.
            Kind::Char('.') if parens > 0 && matches!(out.last(), Some(Tok::Word(w, _)) if w.chars().count() <= 2) => {
                out.push(Tok::Comma)
            }
            Kind::Char('{' | '}' | '~') => {}
            // Markdown emphasis (`(possibly **7**)`, `*27* or _28_`) is markup around a value.
            Kind::Char('*' | '_') => match super::tokens::emphasis_at(s, i) {
                Some(n) => lexer.seek(i + n),
                None => out.push(Tok::Other),
            },
            // A calculator annotation (`= <<72-54=18>>18`) repeats the math before it: no
            // statement.
            Kind::Char('<') if annotation_end(b, i).is_some() => lexer.seek(annotation_end(b, i).unwrap_or(end)),
            Kind::Char('<') if markup_end(b, i).is_some() => {
                // A markup or template token (`<|endofblock|>`, `<br>`, `</answer>`) ends a
                // sentence; a harness's own separator (`<|...|>`) ends the statement in words.
                out.push(if b.get(i + 1) == Some(&b'|') { Tok::Break } else { Tok::SentenceEnd });
                lexer.seek(markup_end(b, i).unwrap_or(end));
            }
            Kind::Char('`') if b[i..].starts_with(b"```") => match memchr::memmem::find(&b[i + 3..], b"```") {
                // A code block is no statement in words; what it prints is a result.
                Some(k) => {
                    out.push(Tok::Code(printed_value(&s[i + 3..i + 3 + k])));
                    lexer.seek(i + 3 + k + 3);
                }
                None => {
                    out.push(Tok::Break);
                    lexer.seek(b.len());
                }
            },
            // `=$<<600+400=1000>>1000`: a currency sign before a calculator annotation opens no
            // math.
            Kind::Char('$') if annotation_end(b, end).is_some() => {}
            Kind::Char('$') | Kind::Escape if matches!(&b[i..end], b"$" | b"\\(" | b"\\[") => match block_at(s, i) {
                Some(bl) => {
                    out.push(Tok::Value(s[bl.start..bl.end].trim().to_string()));
                    let close = if &b[bl.end..(bl.end + 2).min(b.len())] == b"$$" || b[i] == b'\\' { 2 } else { 1 };
                    lexer.seek(bl.end + close);
                }
                None => {
                    out.push(Tok::Other);
                    lexer.seek(i + 1);
                }
            },
            Kind::Escape if &b[i..end] == b"\\%" => out.push(Tok::Percent),
            // `\;`, `\,`, `\\` are spacing.
            Kind::Escape => {}
            Kind::Command => {
                let name = &s[i + 1..end];
                let boxed = super::boxed::is_box_command(name) && b.get(end) == Some(&b'{');
                if let Some(close) = matching_brace(b, end).filter(|_| boxed) {
                    out.push(Tok::Value(s[end + 1..close].trim().to_string()));
                    lexer.seek(close + 1);
                } else if !TEXT_COMMANDS.contains(&name) {
                    // A text command's braces are transparent; any other command is no word.
                    out.push(Tok::Other);
                }
            }
            // `-13`, and `−13` with the Unicode minus sign: a signed number.
            Kind::Char('-' | '−') if b.get(end).is_some_and(u8::is_ascii_digit) => {
                let number = lexer.next().map_or(end, |n| n.range.end);
                out.push(number_at(s, i, number, &mut lexer));
            }
            Kind::Number => out.push(number_at(s, i, end, &mut lexer)),
            Kind::Char('(') if matches!(b.get(i + 1), Some(b'A'..=b'E')) && b.get(i + 2) == Some(&b')') => {
                out.push(Tok::Value((b[i + 1] as char).to_string()));
                lexer.seek(i + 3);
            }
            Kind::Word(classes) if t.is_ascii_word(s) => {
                let w = &s[i..end];
                if w.len() == 1 && matches!(b[i], b'A'..=b'E') && !b.get(end).is_some_and(|c| is_word_byte(*c)) {
                    // A bare choice letter (`A or E`); `A` as an article starts a sentence of words.
                    let article =
                        w == "A" && b.get(end) == Some(&b' ') && b.get(end + 1).is_some_and(u8::is_ascii_lowercase);
                    if !article {
                        out.push(Tok::Value(w.to_string()));
                        continue;
                    }
                }
                if let Some(joined) = hyphenated(s, i, end) {
                    // `runner-up`, `peut-être`: a hyphenated word of the lexicon is one word.
                    out.push(Tok::Word(
                        std::borrow::Cow::Owned(s[i..joined].to_lowercase()),
                        lexicon::classes(&s[i..joined]),
                    ));
                    lexer.seek(joined);
                    continue;
                }
                let lower = if w.bytes().any(|c| c.is_ascii_uppercase()) {
                    std::borrow::Cow::Owned(w.to_ascii_lowercase())
                } else {
                    std::borrow::Cow::Borrowed(w)
                };
                out.push(Tok::Word(lower, classes));
            }
            // A numeral of another script or form (`١١`, `Ⅻ`, `½`) is a value like `11`.
            Kind::Numeral => out.push(Tok::Value(s[i..end].to_string())),
            // A run of a script written without spaces (`其实应该是`, `입니다`): the lexicon's words in
            // it, and the characters between them as words it does not know.
            Kind::Word(_) if s[i..].starts_with(lexicon::unspaced) => {
                let (len, classes) = lexicon::leading_word(&s[i..end]).unwrap_or_else(|| {
                    let unknown = s[i..end]
                        .char_indices()
                        .skip(1)
                        .find(|&(k, _)| lexicon::leading_word(&s[i + k..end]).is_some())
                        .map_or(end - i, |(k, _)| k);
                    (unknown, Classes::default())
                });
                out.push(Tok::Word(std::borrow::Cow::Borrowed(&s[i..i + len]), classes));
                lexer.seek(i + len);
            }
            // A word of another script that the lexicon reads (`или`, `أو`), or of the Latin
            // script (`être`); another is nothing the statement reads, one character at a time.
            Kind::Word(classes) if !classes.is_empty() || s[i..].starts_with(latin_letter) => {
                out.push(Tok::Word(std::borrow::Cow::Owned(s[i..end].to_lowercase()), classes))
            }
            Kind::Word(_) => out.extend(s[i..end].chars().map(|_| Tok::Other)),
            // Punctuation of scripts written without spaces (`，`, `。`, `（`).
            Kind::Char('，' | '、' | '；') => out.push(Tok::Comma),
            Kind::Char('。' | '！' | '？') => out.push(Tok::SentenceEnd),
            Kind::Char('（') => out.push(Tok::Open),
            Kind::Char('：') => out.push(Tok::Colon),
            Kind::Char('）') => {}
            // A hyphen inside a word (`peut-être`, `brute-force`) joins its parts.
            Kind::Char('-')
                if i > 0 && b[i - 1].is_ascii_alphabetic() && b.get(end).is_some_and(u8::is_ascii_alphabetic) => {}
            Kind::Char('%') => out.push(Tok::Percent),
            Kind::Char('.' | '!' | '?') if b.get(end).is_none_or(|n| n.is_ascii_whitespace() || *n == b'$') => {
                dashed = false;
                out.push(Tok::SentenceEnd)
            }
            Kind::Char(',' | ';') => out.push(Tok::Comma),
            Kind::Char('=') => out.push(Tok::Equals),
            Kind::Char(':') => out.push(Tok::Colon),
            Kind::Char('.') => {}
            Kind::Char(_) => out.push(Tok::Other),
        }
    }
    starts.resize(out.len(), reach.min(s.len()));
    out.truncate(limit);
    starts.truncate(limit);
    (out, starts, reach)
}

/// The end of a hyphenated word of the lexicon whose first part spans `start..end` (`runner-up`,
/// `peut-être`): one lookup, only where a hyphen and a letter follow a word.
fn hyphenated(s: &str, start: usize, end: usize) -> Option<usize> {
    let after = s.get(end..)?.strip_prefix('-')?;
    let len = after.find(|c: char| !c.is_alphabetic()).unwrap_or(after.len());
    let joined = end + 1 + len;
    (len > 0 && joined - start <= lexicon::MAX_WORD_BYTES && !lexicon::classes(&s[start..joined]).is_empty())
        .then_some(joined)
}

/// Whether a value may be offered at byte `at` of `s`, after the token `before`: inside an
/// aside (`aside`), or right after `(`, a dash, `,`, `=`, `:` or a hedge cue or filler (`(o
/// veintiocho)`, `or perhaps twenty-eight`, `in words: ten`).
fn offers(s: &str, at: usize, before: Option<&Tok<'_>>, aside: bool) -> bool {
    aside
        || match before {
            Some(Tok::Open | Tok::Comma | Tok::Equals) => true,
            Some(Tok::Word(_, c)) => c.has(Class::HedgeCue) || c.has(Class::HedgeFiller) || c.has(Class::Restating),
            _ => false,
        }
        || s[..at].trim_end().ends_with(':')
}

/// A number in words read at a word token.
enum NumberWords<'a> {
    /// Its text (`vingt-sept`, `siebenundzwanzig`, `cuarenta y cinco`, `двадцать семь`, `二十七`).
    Words(&'a str),
    /// A word that is also an English word, after a hedge of its language (`oder elf`): its length
    /// and value.
    Homograph(usize, u64),
}

/// The number in words that starts at the word token `t` of `s` (where a value may be offered:
/// see [`offers`]).
fn number_words_at<'a>(s: &'a str, t: &Token, before: Option<&Tok<'_>>) -> Option<NumberWords<'a>> {
    if !matches!(t.kind, Kind::Word(_)) || s[..t.range.start].ends_with(|c: char| c.is_alphanumeric()) {
        return None;
    }
    let text = &s[t.range.start..];
    // A word run on into letters is another word (`onceover`): `leading` stops at a word's end.
    if let Some((len, _)) = crate::number_words::leading(text) {
        return Some(NumberWords::Words(&text[..len]));
    }
    let Some(Tok::Word(cue, c)) = before else { return None };
    if !c.has(Class::HedgeCue) {
        return None;
    }
    let (len, v) = crate::number_words::homograph_after(cue, text)?;
    Some(NumberWords::Homograph(len, v))
}

/// The value of the Roman numeral in capitals at the word token `t` of `s` (`XCI`, `XIV`): a
/// word of two letters or more, or one of `I`, `V`, `X`, `L`, `M` that ends its clause (`, or
/// I.`; never `I could`). `C` and `D` alone are choice letters.
fn roman_numeral_at(s: &str, t: &Token) -> Option<u64> {
    let w = t.text(s);
    if !t.stands_alone(s) || !w.bytes().all(|c| c.is_ascii_uppercase()) {
        return None;
    }
    if w.len() == 1 {
        let ends = s[t.range.end..]
            .trim_start_matches([' ', '$'])
            .chars()
            .next()
            .is_none_or(|c| matches!(c, '.' | ',' | ';' | ')' | '!' | '?' | '\n'));
        if !ends || matches!(w, "C" | "D") {
            return None;
        }
    }
    crate::numerals::roman_value(w)
}

/// The value an output block prints (`output\n28\n`: `28`), when the block is one and prints one
/// number.
fn printed_value(block: &str) -> Option<String> {
    let body = block.strip_prefix("output")?.trim();
    let number = body.strip_prefix('-').unwrap_or(body);
    let plain = !number.is_empty() && number.bytes().all(|c| c.is_ascii_digit() || c == b'.');
    (plain && number.as_bytes()[0].is_ascii_digit()).then(|| body.to_string())
}

/// Longest calculator annotation (`<<72-54=18>>`, bytes).
const MAX_ANNOTATION: usize = 96;

/// The end of the calculator annotation at `i` (`<<72-54=18>>`: math in double angle brackets on
/// one line, with an `=`), if one stands there.
fn annotation_end(b: &[u8], i: usize) -> Option<usize> {
    if !b[i..].starts_with(b"<<") {
        return None;
    }
    let body = &b[i + 2..b.len().min(i + 2 + MAX_ANNOTATION)];
    let k = memchr::memmem::find(body, b">>")?;
    (body[..k].contains(&b'=') && !body[..k].iter().any(|&c| matches!(c, b'\n' | b'<' | b'>'))).then_some(i + 2 + k + 2)
}

/// The end of the markup or template token (`<|endofblock|>`, `<br>`) at `i`, if one stands there.
fn markup_end(b: &[u8], i: usize) -> Option<usize> {
    let k = b[i..].iter().take(40).position(|&x| x == b'>')?;
    b[i + 1..i + k].iter().all(|x| x.is_ascii_alphanumeric() || matches!(x, b'|' | b'/' | b'_')).then_some(i + k + 1)
}

/// The number `start..end` (its sign included) as a value; glued to a word (`2nd`, `3x`) it is
/// part of a word or a formula, and the lexer moves past it.
fn number_at<'a>(s: &str, start: usize, end: usize, lexer: &mut Lexer<'_>) -> Tok<'a> {
    let b = s.as_bytes();
    if b.get(end).is_some_and(|c| is_word_byte(*c) && !c.is_ascii_digit()) {
        let glued = end + b[end..].iter().take_while(|c| is_word_byte(**c)).count();
        lexer.seek(glued);
        return Tok::Other;
    }
    Tok::Value(s[start..end].to_string())
}

/// The statement after an answer: the rest of the response, at most [`MAX_STATEMENT_BYTES`]. A
/// hedge in a later paragraph (`\boxed{39}\n\nChris has 39 left.\n\n39 or 40`) still offers
/// its value beside the answer.
fn statement(rest: &str) -> &str {
    &rest[..floor_boundary(rest, MAX_STATEMENT_BYTES.min(rest.len()))]
}

/// Values offered beside an answer in the rest of its statement (`rest` starts right after the
/// answer), each with the rule that offered it. `answer` is the answer's own text, for the shape
/// of a list continuation; `before` the response before it, for what a later value is said of
/// (`later`). Also says whether any of them is offered as an alternative (`or`, a hedge, a later
/// value) rather than listed (`,`, `and`).
pub(crate) fn alternatives_after(answer: &str, before: &str, rest: &str) -> (Vec<(String, Rule)>, bool) {
    let rest_all = rest;
    let rest = statement(rest);
    let (toks, starts, reach) = tokenize_reach(rest, MAX_STATEMENT_TOKENS);
    // An aside on the answer's own line belongs to it; one in a later paragraph is read with its
    // value right after its `(` only (`\n\n(Recall that the problem gives 55.)` is a recap).
    let on_line = rest.find(['(', '[', '—', '–']).is_some_and(|k| !rest[..k].contains('\n'));
    let (mut out, mut hedged) = alternatives_in(answer, &toks, on_line);
    let mut later = later::later_values(&toks, later::Spans { text: rest, starts: &starts }, answer, before);
    // A statement too far after the answer for the window (an early answer, then the
    // derivation; a check that walks through the steps again): the last paragraph of the
    // response is read as a later statement too, when the statement's bytes or its tokens ran out
    // before its end (the window may cut the paragraph itself: `... the final count comes to`).
    if rest_all.len() > reach {
        let from = floor_boundary(rest_all, rest_all.len().saturating_sub(MAX_LAST_PARAGRAPH_BYTES));
        let window = &rest_all[from..];
        let start = window.trim_end().rfind("\n\n").map_or(0, |k| k + 2);
        let last = &window[start..];
        let (toks, starts, _) = tokenize_reach(last, MAX_STATEMENT_TOKENS);
        let closing = later::later_values(&toks, later::Spans { text: last, starts: &starts }, answer, before);
        later.last_restates = closing.last_restates.or(later.last_restates);
        later.values.extend(closing.values);
    }
    // A derivation or a check after the answer that ends by stating the answer's own value
    // again: the values its plain statements gave on the way are its steps, not other answers
    // (a revision, a doubt or an offer of candidates still offers its values).
    let closes = later.last_restates == Some(true);
    for (v, rule, plain) in later.values {
        if closes && plain {
            continue;
        }
        if out.len() < MAX_ALTERNATIVES && v != answer.trim() && !out.iter().any(|(o, _)| *o == v) {
            out.push((v, rule));
            hedged = true;
        }
    }
    (out, hedged)
}

/// Most bytes of the last paragraph read when it lies past the statement's window.
const MAX_LAST_PARAGRAPH_BYTES: usize = 400;

/// The text after an answer that spans `start..end` of `text`, without the delimiter that closes
/// a math block opened right before the answer (`$\boxed{92}$ (possibly $93$)`: the `$` after
/// the box closes the one before it, it opens nothing).
pub(crate) fn rest_after(text: &str, start: usize, end: usize) -> &str {
    let end = end.min(text.len());
    let rest = &text[end..];
    let trimmed = rest.trim_start();
    let before = text[..start.min(end)].trim_end();
    for (open, close) in [("$$", "$$"), ("\\(", "\\)"), ("\\[", "\\]"), ("$", "$")] {
        if before.ends_with(open) && trimmed.starts_with(close) {
            return &trimmed[close.len()..];
        }
    }
    // An answer inside a math block opened earlier (`$m-n=9-5=\boxed{4}$.`): the delimiter after
    // it closes that block.
    for (open, close) in [("\\(", "\\)"), ("\\[", "\\]")] {
        if trimmed.starts_with(close) && before.rfind(open) > before.rfind(close) {
            return &trimmed[close.len()..];
        }
    }
    if trimmed.starts_with("$$") && before.matches("$$").count() % 2 == 1 {
        return &trimmed[2..];
    }
    if trimmed.starts_with('$') && !trimmed.starts_with("$$") {
        let line = &before[before.rfind('\n').map_or(0, |k| k + 1)..];
        let dollars = line.match_indices('$').filter(|&(k, _)| !line[..k].ends_with('\\')).count();
        if dollars % 2 == 1 {
            return &trimmed[1..];
        }
    }
    rest
}

/// How the text that follows a value on its answer line (`A: 14 (that is, fourteen)`, `The
/// answer is 6 Good luck!`) stands to it: the one judge of what follows a value that an answer
/// phrase reads as the rest of its line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tail {
    /// An aside (a parenthesis, a dash), a clause after a comma or a remark of its own (a
    /// capitalised sentence run on without a period) that holds a value or holds no word that
    /// hedges or qualifies one: the value alone is the answer, and the statement after it is
    /// read as after any answer (an aside's value restates it or is an alternative; a closing
    /// remark adds nothing).
    Apart,
    /// Such a tail that holds no value but a word that hedges or qualifies one (`(approximately)`,
    /// `I think`, `Not sure`, `, at least`): part of the answer, whose wording judges it.
    Qualifies,
    /// Words that continue the value (`dozen`, `apples`, `or 7`, `at least`): the answer's text
    /// runs on, read as before.
    Continues,
}

/// Most bytes of an answer line read after its value.
const MAX_TAIL_BYTES: usize = 300;

/// How `tail` (the rest of an answer's line, right after its value) stands to the value: see
/// [`Tail`]. One pass over at most [`MAX_TAIL_BYTES`].
pub(crate) fn tail_after_value(tail: &str) -> Tail {
    let t = tail.trim_start_matches([' ', '\t']);
    let spaced = t.len() < tail.len();
    let mut chars = t.chars();
    let Some(first) = chars.next() else { return Tail::Continues };
    let aside = matches!(first, '(' | '—') || (first == '–' && spaced);
    // `, which ...`: a clause after a comma (a list of values, `1, 2`, continues).
    let clause = matches!(first, ',' | ';') && chars.as_str().trim_start().starts_with(|c: char| c.is_alphabetic());
    // A sentence run on without a period (`Good luck!`), in a script without case too (`つまり
    // $75$ です`, `所以结果是 $75$`), or an emoji.
    let uncased = first.is_alphabetic() && !first.is_lowercase() && !first.is_uppercase();
    let remark = spaced && (first.is_uppercase() || uncased || crate::numerals::is_symbol(first));
    if !(aside || clause || remark) {
        return Tail::Continues;
    }
    let line = &t[..t.find('\n').unwrap_or(t.len())];
    let line = &line[..floor_boundary(line, MAX_TAIL_BYTES.min(line.len()))];
    let toks = tokenize(line, MAX_STATEMENT_TOKENS);
    let valued = toks.iter().any(|t| match t {
        Tok::Value(_) | Tok::Code(Some(_)) => true,
        Tok::Word(w, _) => crate::number_words::value(w).is_some(),
        _ => false,
    });
    let qualifying = |c: &Classes| {
        c.has(Class::HedgeCue)
            || c.has(Class::NegationOrModal)
            || c.has(Class::Negation)
            || c.has(Class::GiveUp)
            || c.has(Class::Denial)
    };
    // In a remark of its own, a condition hedges the value only when it opens the remark (`If I
    // read it right.`); later it conditions the remark (`Let me know if anything is unclear.`).
    // A unit or scale in an aside, or among a clause's first words, says what the value counts
    // (`(in thousands)`, `, in dozens`): the wording reads it with the value. (A remark's first
    // word is read as a unit after the answer by the statement: `6 Dozen`.)
    let unit_reach = if aside {
        MAX_STATEMENT_TOKENS
    } else if clause {
        3
    } else {
        0
    };
    // `(the same if order matters)`: a word of sameness says the value holds under the
    // condition after it, which then qualifies nothing.
    let condition = toks
        .iter()
        .position(|t| matches!(t, Tok::Word(_, c) if c.has(Class::Sameness)))
        .and_then(|s| {
            toks[s..].iter().position(|t| matches!(t, Tok::Word(_, c) if c.has(Class::Hypothesis))).map(|h| s + h)
        })
        .unwrap_or(usize::MAX);
    let qualifies = toks.iter().enumerate().any(|(k, t)| match t {
        Tok::Word(_, c) if remark && k > 0 && c.has(Class::Hypothesis) => false,
        Tok::Word(..) if k >= condition => false,
        Tok::Word(w, c) => qualifying(c) || (k < unit_reach && crate::units::lookup(w).is_some()),
        _ => false,
    });
    if qualifies && !valued {
        Tail::Qualifies
    } else {
        Tail::Apart
    }
}

/// A plain value that restates an answer right after it: `= 7`, `, i.e. 7`, `, which is 7`,
/// `(that is, 7)`. Only a number (with its sign and decimals) counts.
pub(crate) fn restated_value(rest: &str) -> Option<String> {
    let t = rest.trim_start().trim_start_matches(['$', ')']).trim_start();
    let t = ["=", ", i.e.", "i.e.", ", which is", ", that is,", "(that is,", "(i.e."]
        .iter()
        .find_map(|p| t.strip_prefix(p))?
        // `, i.e., 7`
        .trim_start_matches(',')
        .trim_start()
        .trim_start_matches('$')
        .trim_start();
    let end = t
        .char_indices()
        .find(|&(k, c)| {
            !(c.is_ascii_digit()
                || (k == 0 && c == '-')
                || (c == '.' && t[k + 1..].starts_with(|d: char| d.is_ascii_digit())))
        })
        .map_or(t.len(), |(k, _)| k);
    let v = &t[..end];
    v.bytes().any(|c| c.is_ascii_digit()).then(|| v.to_string())
}

/// Most bytes of a unit phrase read after an answer (`metres per second squared`).
const MAX_UNIT_BYTES: usize = 48;
/// Most words of a unit phrase read after an answer (`square metres per second`).
const MAX_UNIT_WORDS: usize = 4;

/// The unit or scale that the words right after an answer name (`rest` starts right after its
/// closing delimiter), as the LaTeX to append to the answer: ` \text{ dozens}` for `$\boxed{5}$
/// dozens of cookies`, ` \text{ m²}` for `\boxed{12} \text{ m}^2`. Read on the answer's own line:
/// closing delimiters and spacing (`$`, `\)`, `\,`), then either a text command (`\text{ km/h}`,
/// `\mathrm{m}`) or prose words up to punctuation, of which the longest leading phrase that the
/// unit registry resolves (`square metres`, `miles per hour`, `dozens`) is the unit; the words
/// after it say what the question counts (`of cookies`). A word that is also a function or a
/// common word (`in`, `min`, `am`) is a unit in prose only when it ends the clause (`\boxed{90}
/// min.`, not `\boxed{5} in total`); `a` never is (`\boxed{3} a day`). `None` when no unit
/// follows (`apples`, `more`, a new sentence, a new line).
pub(crate) fn unit_after(rest: &str) -> Option<String> {
    const SKIPPED: &[&str] = &["$$", "$", "\\)", "\\]", "\\,", "\\;", "\\:", "\\!", "\\ ", "~"];
    let mut t = rest;
    loop {
        let s = t.trim_start_matches([' ', '\t']);
        match SKIPPED.iter().find_map(|p| s.strip_prefix(p)) {
            Some(r) => t = r,
            None => {
                t = s;
                break;
            }
        }
    }
    if let Some(cmd) = t.strip_prefix('\\') {
        // A text command right after the answer: its words are the unit (`\text{ km/h}^2`).
        let name_len = cmd.bytes().take_while(u8::is_ascii_alphabetic).count();
        if !TEXT_COMMANDS.contains(&&cmd[..name_len]) || cmd.as_bytes().get(name_len) != Some(&b'{') {
            return None;
        }
        let open = 1 + name_len;
        let close = matching_brace(t.as_bytes(), open)?;
        let content = &t[open + 1..close];
        if content.contains(['\\', '{', '}']) || content.len() > MAX_UNIT_BYTES {
            return None;
        }
        let words: Vec<&str> = content.split_whitespace().take(MAX_UNIT_WORDS).collect();
        return longest_unit(&words, unit_power(&t[close + 1..]), true, false);
    }
    // Prose: letters, spaces, `/` and unit signs, up to punctuation or the line's end.
    let t = &t[..floor_boundary(t, MAX_UNIT_BYTES.min(t.len()))];
    let (end, stop) = t
        .char_indices()
        .find(|&(_, c)| !(c.is_alphabetic() || matches!(c, ' ' | '/' | '°' | '²' | '³' | '¢')))
        .map_or((t.len(), None), |(k, c)| (k, Some(c)));
    let words: Vec<&str> = t[..end].split_whitespace().collect();
    // The clause ends after the words: punctuation, a delimiter or the line's end follows them.
    let clause_ends = words.len() <= MAX_UNIT_WORDS
        && stop.is_none_or(|c| {
            matches!(c, '.' | ',' | ';' | ':' | '!' | '?' | ')' | ']' | '$' | '<' | '\n' | '\r' | '\\')
        });
    let words = &words[..words.len().min(MAX_UNIT_WORDS)];
    longest_unit(words, "", false, clause_ends)
}

/// An answer that ends in a number in words in parentheses (`12 (doce)`, `27 (o veintiocho)`,
/// `5 (five)`): the value before them and the words, without a hedge cue or filler that opens
/// them (the words are then offered as an alternative: the second part is `true`).
pub(crate) fn parenthetical_number(text: &str) -> Option<(&str, &str, bool)> {
    let t = text.trim_end().strip_suffix(')')?;
    let open = t.rfind('(')?;
    let before = t[..open].trim_end();
    if before.is_empty() || !before.bytes().any(|c| c.is_ascii_digit()) || before.ends_with('\\') {
        return None;
    }
    let mut inner = t[open + 1..].trim();
    let mut cue = false;
    for _ in 0..3 {
        let first = inner.split_whitespace().next()?;
        let classes = lexicon::classes(first);
        if classes.has(Class::HedgeCue) || classes.has(Class::HedgeFiller) {
            cue |= classes.has(Class::HedgeCue);
            inner = inner[first.len()..].trim_start();
        } else {
            break;
        }
    }
    crate::number_words::value(inner).is_some().then_some((before, inner, cue))
}

/// A power right after a unit (`^2`, `^{3}`, `²`): `²` or `³`, else `""`.
fn unit_power(after: &str) -> &'static str {
    const POWERS: &[(&str, &str)] = &[("^2", "²"), ("^{2}", "²"), ("²", "²"), ("^3", "³"), ("^{3}", "³"), ("³", "³")];
    POWERS.iter().find(|(mark, _)| after.starts_with(mark)).map_or("", |(_, power)| power)
}

/// The unit that the longest leading run of `words` names (with `power` after them), as the LaTeX
/// to append. A word that is also a function or a common word (`in`, `min`, `am`) counts only
/// `in_text` or when the clause `ends` after it; the article `a` and `I` never.
fn longest_unit(words: &[&str], power: &str, in_text: bool, ends: bool) -> Option<String> {
    // A phrase of several words only after the first word of a unit's name of several words or
    // before `per` (`square feet`, `degrees Fahrenheit`, `miles per hour`): one lookup otherwise.
    let first = *words.first()?;
    let longer =
        words.len() > 1 && (crate::units::starts_longer_unit(first) || words[1] == "per" || first.contains('/'));
    let most = if longer { words.len() } else { 1 };
    (1..=most).rev().find_map(|n| {
        // One word alone (the common case) is looked up as it is, without building a phrase.
        let joined;
        let phrase = if n == 1 && power.is_empty() {
            first
        } else {
            joined = format!("{}{power}", words[..n].join(" "));
            joined.as_str()
        };
        crate::units::lookup(phrase)?;
        let w = words[0];
        let letter = w.chars().count() == 1;
        let word_like = n == 1 && power.is_empty() && !letter && !crate::units::is_unit_word(w, false);
        if n == 1 && (matches!(w, "a" | "A" | "I") || (word_like && !(in_text || (ends && n == words.len())))) {
            return None;
        }
        Some(format!(" \\text{{ {phrase}}}"))
    })
}

/// [`alternatives_after`] on the tokens of the statement.
fn alternatives_in(answer: &str, toks: &[Tok<'_>], on_line: bool) -> (Vec<(String, Rule)>, bool) {
    let mut out: Vec<(String, Rule)> = Vec::new();
    // 1. A list continued right after the answer: connectors then values of the same kind (a
    // value, or an equation naming one: `$x = 2$ and $y = 3$`).
    let kind = |v: &str| block_shape(v).map(|s| s.is_empty());
    let shape = kind(answer);
    let mut hedged = false;
    let mut k = 0;
    loop {
        let mut j = k;
        let mut joined = false;
        let mut or = false;
        while let Some(t) = toks.get(j) {
            match t {
                Tok::Comma => joined = true,
                Tok::Word(_, c) if c.has(Class::ListConnector) => {
                    joined = true;
                    or |= hedges(*c);
                }
                _ => break,
            }
            j += 1;
        }
        match toks.get(j) {
            Some(Tok::Value(v)) if joined && shape.is_some() && kind(v) == shape => {
                out.push((v.clone(), Rule::ListContinuation));
                hedged |= or;
                k = j + 1;
                if out.len() >= MAX_ALTERNATIVES {
                    return (out, hedged);
                }
            }
            _ => break,
        }
    }
    let listed = out.len();
    // 2. An aside right after the answer (a parenthesis or a dash) that offers or restates a
    // value: `$81$ ($64$ if ...)`, `(eleven?)`, `(that is, fourteen)`, `— in words, ١٤`.
    if toks.get(k) == Some(&Tok::Open) {
        let reach = if on_line { MAX_ASIDE_LEAD } else { 1 };
        if let Some((v, next)) = aside_value(toks, k + 1, reach) {
            out.push((v, Rule::Parenthetical));
            k = next;
        }
    }
    // 3. Hedges in the rest of the statement.
    let mut justifying = false;
    while k < toks.len() && out.len() < MAX_ALTERNATIVES {
        match &toks[k] {
            Tok::SentenceEnd | Tok::Break | Tok::Code(_) => justifying = false,
            Tok::Value(v) if !justifying && offered(toks, k + 1) => {
                out.push((v.clone(), Rule::Hedge));
            }
            Tok::Value(v) => {
                // A value that hedges inside its own math (`\frac{16}{27} or -4`).
                if let Some(parts) = split_hedged(v) {
                    out.extend(parts.into_iter().skip(1).map(|p| (p, Rule::HedgeInside)));
                }
            }
            Tok::Word(w, _) if w == "if" && matches!(toks.get(k + 1), Some(Tok::Word(n, _)) if n == "not") => {
                // `$11$ — if not, $13$`.
                if let Some((v, next)) = value_after_cue(toks, k + 2) {
                    out.push((v, Rule::Hedge));
                    k = next;
                    continue;
                }
            }
            Tok::Word(w, classes) => {
                if classes.has(Class::Justification) {
                    justifying = true;
                } else if hedges(*classes) && !(w == "or" && justifying) {
                    if let Some((v, next)) = value_after_cue(toks, k + 1) {
                        out.push((v, Rule::Hedge));
                        k = next;
                        continue;
                    }
                }
            }
            _ => {}
        }
        k += 1;
    }
    let hedged = hedged || out.len() > listed;
    (out, hedged)
}

/// Most tokens of an aside read before its value.
const MAX_ASIDE_LEAD: usize = 10;
/// Most words of an aside's lead-in before its value that no comma closes (`(i.e. ten)`, `(in
/// Roman numerals XIV)`).
const MAX_LEAD_WORDS: usize = 3;

/// The value an aside offers or restates (`from` is the token after its `(` or dash): its first
/// value (a math block, a number, a numeral of any script or system, a number in words), after
/// hedge cues and fillers (`or possibly`), words that restate (`that is`, `namely`, `in words`),
/// a lead-in clause closed by a comma, `:` or `=` (`in Thai digits, ๑๔`), or a few other words.
/// An aside that gives a reason (`since 2 + 4 = 6`), negates (`not 15`), qualifies (`about 7`,
/// `up from 5`), states a domain (`for n = 3`) or a function (`mod 7`), calls a value wrong
/// (`a common wrong answer is 13`) or reports someone else's offers none. At most `reach`
/// tokens are read; with the index after the value.
fn aside_value(toks: &[Tok<'_>], from: usize, reach: usize) -> Option<(String, usize)> {
    let mut lead = 0;
    // Inside a condition (`if zero counts, ...`) up to its comma: a value there is the
    // condition's (`(the same if zero counts as a valid value)` offers no `zero`).
    let mut condition = false;
    for (k, t) in toks.iter().enumerate().skip(from).take(reach) {
        match t {
            Tok::Value(_) if condition => {}
            Tok::Word(w, _) if condition && crate::number_words::value(w).is_some() => {}
            // After a lead-in, a value an operator follows is an operand (`(= 2 \times 7)`): the
            // aside computes the answer, it offers no other value.
            Tok::Value(_) if k > from && matches!(toks.get(k + 1), Some(Tok::Other | Tok::Equals)) => return None,
            Tok::Value(v) => return Some((v.clone(), k + 1)),
            Tok::Word(w, _) if crate::number_words::value(w).is_some() => return Some((w.to_string(), k + 1)),
            Tok::Word(_, c) if c.has(Class::HedgeCue) || c.has(Class::HedgeFiller) || c.has(Class::Restating) => {}
            Tok::Word(_, c) if c.has(Class::Hypothesis) => (lead, condition) = (0, true),
            Tok::Word(..) if condition => {}
            Tok::Word(_, c)
                if c.has(Class::Justification)
                    || c.has(Class::Reason)
                    || c.has(Class::NegationOrModal)
                    || c.has(Class::Negation)
                    || c.has(Class::DomainOpener)
                    || c.has(Class::MathWord)
                    || c.has(Class::Denial)
                    || c.has(Class::ThirdParty)
                    || c.has(Class::Report) =>
            {
                return None
            }
            Tok::Word(..) => {
                lead += 1;
                if lead > MAX_LEAD_WORDS {
                    return None;
                }
            }
            Tok::Comma => (lead, condition) = (0, false),
            Tok::Equals if !condition => lead = 0,
            Tok::Other | Tok::Equals => {}
            _ => return None,
        }
    }
    None
}

/// The right side of the last top-level `=` of a math block (`2 \cdot 7 = 14` -> `14`).
pub(super) fn right_side(v: &str) -> Option<&str> {
    let mut depth = 0i32;
    let mut at = None;
    for (k, c) in v.char_indices() {
        match c {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => depth -= 1,
            '=' if depth == 0 => at = Some(k),
            _ => {}
        }
    }
    at.map(|k| v[k + 1..].trim()).filter(|r| !r.is_empty())
}

/// Whether the words right after a value (from token `from`) offer it as a possibility:
/// `is also possible`, `would also work`, `is valid too`.
fn offered(toks: &[Tok<'_>], from: usize) -> bool {
    for t in toks.iter().skip(from).take(4) {
        match t {
            Tok::Word(_, c) if c.has(Class::Offering) => return true,
            Tok::Word(w, c) if c.has(Class::HedgeFiller) || matches!(&**w, "may" | "too") => {}
            _ => return false,
        }
    }
    false
}

/// The value right after a cue at token `from`, with only fillers (and commas, parentheses, a
/// condition such as `if leading zeros are excluded,`) between: the value and the index after it.
fn value_after_cue(toks: &[Tok<'_>], from: usize) -> Option<(String, usize)> {
    let mut k = from;
    let mut steps = 0;
    while let Some(t) = toks.get(k) {
        match t {
            Tok::Value(v) => return Some((v.clone(), k + 1)),
            // `(maybe eleven)`: a number word is a value; `one` before a word is a filler (`or
            // one of them`), not before the clause's end (`, or one.`).
            Tok::Word(w, c)
                if crate::number_words::value(w).is_some()
                    && !(c.has(Class::HedgeFiller) && matches!(toks.get(k + 1), Some(Tok::Word(..)))) =>
            {
                return Some((w.to_string(), k + 1))
            }
            Tok::Word(_, c) if c.has(Class::HedgeFiller) => {}
            Tok::Colon => {}
            Tok::Word(w, _) if matches!(&**w, "if" | "when" | "unless" | "for") => {
                // A condition up to its comma: `alternatively, if zeros are excluded, $192$`.
                let comma = toks[k..].iter().take(16).position(|t| *t == Tok::Comma)?;
                k += comma;
            }
            // `или, возможно, $7$`: commas may stand anywhere between a cue and its value.
            Tok::Comma => {}
            Tok::Other | Tok::Open | Tok::Equals if k == from || toks.get(k - 1) == Some(&Tok::Comma) => {}
            _ => return None,
        }
        k += 1;
        steps += 1;
        if steps > 8 {
            return None;
        }
    }
    None
}

/// The candidates of one answer whose text offers several with hedge words (see the module doc):
/// `None` when the text has no hedge word, so it is one candidate. The parts are cleaned of the
/// text-command wrappers and punctuation around them.
pub(crate) fn split_hedged(answer: &str) -> Option<Vec<String>> {
    if !has_hedge_word(answer) {
        return None;
    }
    let flat = unwrap_text_commands(answer);
    let mut parts: Vec<String> = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for t in Lexer::new(&flat) {
        match (t.kind, t.text(&flat)) {
            // Braces count, escaped or not: `\{b \mid b \le -1 \text{ or } b = 3\}` is one set.
            (Kind::Char('{'), _) | (Kind::Escape, "\\{") => depth += 1,
            (Kind::Char('}'), _) | (Kind::Escape, "\\}") => depth = depth.saturating_sub(1),
            (Kind::Word(classes), _) if depth == 0 && hedges(classes) && is_hedge_word(&t, &flat) => {
                // A cue with no value after it (`5 \text{ or more}`) leaves its words as a
                // candidate of their own: the answer is not the value alone.
                parts.push(flat[start..t.range.start].to_string());
                start = t.range.end;
            }
            _ => {}
        }
    }
    parts.push(flat[start..].to_string());
    let parts: Vec<String> = parts.iter().map(|p| clean_part(p)).filter(|p| !p.is_empty()).collect();
    // A hedge word inside braces (`\{b \mid b \le -1 \text{ or } b = 3\}`) splits nothing, and
    // one with a value on one side only (`\text{maybe } 5`, `5 \text{ probably}`) offers no
    // second one: the answer stays whole, and its wording qualifies it.
    (parts.len() >= 2).then_some(parts)
}

/// `\text{ or }` -> ` or `: the text commands of an answer unwrapped, so hedge words and the values
/// around them stand at the same level.
fn unwrap_text_commands(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut closers: Vec<usize> = Vec::new();
    while i < b.len() {
        if b[i] == b'\\' {
            let start = i + 1;
            let mut j = start;
            while j < b.len() && b[j].is_ascii_alphabetic() {
                j += 1;
            }
            if TEXT_COMMANDS.contains(&&s[start..j]) && b.get(j) == Some(&b'{') {
                if let Some(close) = matching_brace(b, j) {
                    closers.push(close);
                    out.push(' ');
                    i = j + 1;
                    continue;
                }
            }
        }
        if closers.last() == Some(&i) {
            closers.pop();
            out.push(' ');
            i += 1;
            continue;
        }
        let ch = s[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// A part of a hedged answer without the punctuation, spacing and parentheses a split leaves.
fn clean_part(p: &str) -> String {
    let mut t = p.trim();
    for _ in 0..8 {
        let before = t.len();
        t = t.trim_matches(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':' | '~' | '—' | '–'));
        for sp in [r"\;", r"\,", r"\quad", r"\qquad", r"\ "] {
            t = t.strip_prefix(sp).unwrap_or(t).trim();
            t = t.strip_suffix(sp).unwrap_or(t).trim();
        }
        // A parenthesis the split opened or closed: `5 (` / `6 )`.
        let opens = t.matches('(').count();
        let closes = t.matches(')').count();
        if opens > closes {
            if let Some(r) = t.strip_suffix('(') {
                t = r;
            } else if let Some(r) = t.strip_prefix('(') {
                t = r;
            }
        } else if closes > opens {
            if let Some(r) = t.strip_suffix(')') {
                t = r;
            } else if let Some(r) = t.strip_prefix(')') {
                t = r;
            }
        }
        if t.len() == before {
            break;
        }
    }
    t.to_string()
}

/// Whether a hedge cue stands in `s` as a whole word (not a command name): one pass over its
/// tokens, no allocation.
fn has_hedge_word(s: &str) -> bool {
    Lexer::new(s).any(|t| matches!(t.kind, Kind::Word(c) if hedges(c)) && is_hedge_word(&t, s) && t.stands_alone(s))
}

/// Whether the word token `t` of `s` can be a hedge word inside an answer: ASCII letters, not
/// glued to a letter, digit or backslash before it.
fn is_hedge_word(t: &Token, s: &str) -> bool {
    let b = s.as_bytes();
    t.is_ascii_word(s) && !t.range.start.checked_sub(1).is_some_and(|k| is_word_byte(b[k]) || b[k] == b'\\')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alts(answer: &str, rest: &str) -> Vec<String> {
        alternatives_after(answer, "", rest).0.into_iter().map(|(v, _)| v).collect()
    }

    #[test]
    fn asides_in_square_brackets_and_conditions() {
        assert_eq!(alts("24", " [$25$ if order matters]."), vec!["25"]);
        assert_eq!(alts("24", " [that is, twenty-five]"), vec!["twenty-five"]);
        // A number word inside a condition is the condition's, no offered value.
        assert!(alts("76", " (the same if zero counts as a valid value).").is_empty());
        assert!(alts("76", " (the same if two of them coincide).").is_empty());
        assert_eq!(alts("76", " (or, if zero counts, $77$)."), vec!["77"]);
        // A label in bold reads as its words.
        assert_eq!(alts("24", "\n\n**If order matters:** $25$"), vec!["25"]);
        assert_eq!(alts("24", "\n\n**Inclusive interpretation:** $25$"), vec!["25"]);
    }

    #[test]
    fn a_condition_after_a_word_of_sameness_qualifies_nothing() {
        assert_eq!(tail_after_value(" (the same if reflections count as different)"), Tail::Apart);
        assert_eq!(tail_after_value(" (unchanged if zero is allowed)"), Tail::Apart);
        assert_eq!(tail_after_value(" (if I read it right)"), Tail::Qualifies);
        assert_eq!(tail_after_value(" (probably the same if order matters)"), Tail::Qualifies);
    }

    #[test]
    fn hedges_after_an_answer() {
        assert_eq!(alts("5", ", or perhaps $6$."), vec!["6"]);
        assert_eq!(alts("5", " (or $6$ when n is odd)."), vec!["6"]);
        assert_eq!(alts("5", "; otherwise $9$"), vec!["9"]);
        assert_eq!(alts("5", r" \; \text{(or } 6\text{)}"), vec!["6"]);
        assert_eq!(alts("5", ". It could also be 6."), vec!["6"]);
        assert_eq!(alts("5", " or \\boxed{6}"), vec!["6"]);
        assert_eq!(alts("A", " or (E)"), vec!["E"]);
        assert_eq!(alts("5", ", but it might be $7$ instead"), vec!["7"]);
        assert_eq!(alts("68", " degrees for Donny to drink it.<|endofblock|><|text|>68 or 69"), vec!["69"]);
        let text = "Bill needs $\\boxed{92}$ (possibly $93$) bottles.";
        let (start, end) = (text.find("\\boxed").unwrap(), text.find("}$").unwrap() + 1);
        assert_eq!(alts("92", rest_after(text, start, end)), vec!["93"]);
        assert_eq!(alts("81", " ($64$ if repetition is not allowed)."), vec!["64"]);
        let text = "So $m-n=9-5=\\boxed{4}$, or perhaps $5$.";
        let (start, end) = (text.find("\\boxed").unwrap(), text.find("}$").unwrap() + 1);
        assert_eq!(alts("4", rest_after(text, start, end)), vec!["5"]);
        assert_eq!(alts("10", ", though I'd also accept 12."), vec!["12"]);
        assert_eq!(alts("256", "; alternatively, if leading zeros are excluded, $192$."), vec!["192"]);
        assert_eq!(alts("2\\sqrt{3}", ", though $2\\sqrt{2}$ is also possible"), vec!["2\\sqrt{2}"]);
        assert!(alts("5", " (in centimetres).").is_empty());
    }

    #[test]
    fn lists_continue_only_with_the_same_shape() {
        assert_eq!(alts("2", " and $3$."), vec!["3"]);
        assert_eq!(alts("2", ", $3$, $4$"), vec!["3", "4"]);
        assert_eq!(alts("x = 2", " or $x = 3$"), vec!["x = 3"]);
        assert!(alts("5", ", and $5 < 6$ confirms it.").is_empty());
        let listed = ("y = 3".to_string(), Rule::ListContinuation);
        assert_eq!(alternatives_after("x = 2", "", " and $y = 3$"), (vec![listed], false));
        assert_eq!(alternatives_after("2", "", " or $3$"), (vec![("3".to_string(), Rule::ListContinuation)], true));
    }

    #[test]
    fn justifications_and_non_values_are_not_hedges() {
        assert!(alts("5", " because 6 is odd or even.").is_empty());
        assert!(alts("5", ". This could be verified by substitution.").is_empty());
        assert!(alts("5", ". I hope it is correct.").is_empty());
        assert!(alts("5", " since 2 + 3 = 5 or so.").is_empty());
        assert!(alts("5", "\n\nOr we could try 6 next time.").is_empty());
        assert!(alts("5", ", which is either correct or not.").is_empty());
    }

    #[test]
    fn later_values_in_sentences_that_revisit_the_result() {
        assert_eq!(alts("14", ". Checking again, the count must be $15$."), vec!["15"]);
        assert_eq!(alts("14", ".\n\nActually, after a recount it is 15."), vec!["15"]);
        assert_eq!(alts("36", ", but I get $32$."), vec!["32"]);
        assert_eq!(alts("7", ". Edit: $x = 8$ instead."), vec!["8"]);
        // A check that confirms the answer, a value after a justification or a negation.
        assert!(alts("14", ". Checking again: $3 + 11 = 14$.").is_empty());
        assert!(alts("14", ". This is correct because there are 6 ways.").is_empty());
        assert!(alts("15", ". Recount: it is 15, not 14.").is_empty());
        // Values in sentences that do not revisit the result are other quantities.
        assert!(alts("14", ". He gave away 6 of them, which is 2 more than Sue.").is_empty());
        assert_eq!(alts("14", ". The correct total is 15."), vec!["15"]);
        assert_eq!(alts("14", ". Double-checking, 15."), vec!["15"]);
        assert!(alts("14", ". Checking again: 3 + 11 = 14.").is_empty());
        assert_eq!(alts("10", " (eleven?)"), vec!["eleven"]);
        assert!(alts("14", ".\n\nFind the correct pair: $a = 44$, so $b^2 = 85$.").is_empty());
        // Code and a harness's separators after the answer are no statement in words.
        assert!(alts("3", ".\n```python\n# recount\nx = 5\n```").is_empty());
    }

    #[test]
    fn asides_restate_or_offer_a_value_past_their_lead_in() {
        assert_eq!(alts("14", " (that is, fourteen)"), vec!["fourteen"]);
        assert_eq!(alts("14", " (that is, fifteen)"), vec!["fifteen"]);
        assert_eq!(alts("14", " (i.e. fourteen)"), vec!["fourteen"]);
        assert_eq!(alts("800", " — in words, eight hundred"), vec!["eight hundred"]);
        assert_eq!(alts("14", " (in Thai digits, ๑๕)"), vec!["๑๕"]);
        assert_eq!(alts("14", " (namely ١٤)"), vec!["١٤"]);
        assert_eq!(alts("27", " — perhaps XXVIII."), vec!["28"]);
        assert_eq!(alts("132", " (or possibly CXXXIII)."), vec!["133"]);
        // Reasons, negations, bounds, domains and values called wrong are no offer.
        for rest in [
            " (since 2 + 4 = 6)",
            " (not 15)",
            " (up from 5)",
            " (for n = 3)",
            " (mod 7)",
            ".\n\n(A common wrong answer is $13$, from rounding up.)",
            ".\n\n(Recall that the problem gives 55 and 4.)",
            " (in centimetres)",
            " (= 2 \\times 7)",
            " (that is, 2 + 12)",
        ] {
            assert!(alts("14", rest).is_empty(), "{rest}");
        }
    }

    #[test]
    fn roman_numerals_and_homographs_where_a_value_is_offered() {
        assert_eq!(alts("90", " , or XCI"), vec!["91"]);
        assert_eq!(alts("0", " , or I."), vec!["1"]);
        assert!(alts("5", ", or I could be wrong.").is_empty());
        assert!(alts("5", ". Part II is next.").is_empty());
        assert_eq!(alts("0", " , or one."), vec!["one"]);
        assert!(alts("5", ", or one of them.").is_empty());
        assert_eq!(alts("10", " (oder elf)"), vec!["11"]);
        assert_eq!(alts("10", " (o once)"), vec!["11"]);
        assert_eq!(alts("0", " (ou un)"), vec!["1"]);
        assert!(alts("10", " (or once we simplify)").is_empty());
    }

    #[test]
    fn what_follows_a_value_on_its_answer_line() {
        for apart in [
            " (that is, fourteen)",
            " — in words, ١٤",
            " (or fifteen)",
            " Good luck with your studies!",
            " Hope that helps! 😊",
            " Let me know if anything is unclear.",
            ", so she has 14 apples.",
            " 🙂",
        ] {
            assert_eq!(tail_after_value(apart), Tail::Apart, "{apart}");
        }
        for qualifies in [
            " I think",
            " Not sure",
            " Probably.",
            ", at least",
            " (approximately)",
            " If I read it right.",
            " (in thousands)",
            " (dozen)",
            ", in thousands",
        ] {
            assert_eq!(tail_after_value(qualifies), Tail::Qualifies, "{qualifies}");
        }
        for continues in [" dozen", " apples", " or 15", " at least", " maybe 15", ", 15", "%", ""] {
            assert_eq!(tail_after_value(continues), Tail::Continues, "{continues}");
        }
    }

    #[test]
    fn hedges_in_other_languages() {
        for rest in [
            " (o quizás $4$)",
            " (oder vielleicht $4$)",
            " (vielleicht auch $4$)",
            " (ou peut-être $4$)",
            " (или, возможно, $4$)",
            " (o forse $4$)",
            " (ou talvez $4$)",
            " (あるいは $4$).",
            "（也可能是 $4$）.",
            " (아마 $4$).",
            " (ربما $4$).",
            " (sinon $4$).",
        ] {
            assert_eq!(alts("3", rest), vec!["4"], "{rest}");
        }
        // A cue with no value after it, or a restatement in another language, offers nothing.
        for rest in [
            " (peut-être pas).",
            ".

Donc le résultat est bien $3$.",
            ".

所以结果是 $3$。",
            " (quizás).",
        ] {
            assert!(alts("3", rest).is_empty(), "{rest}");
        }
    }

    #[test]
    fn numerals_of_other_scripts_and_words_are_values() {
        assert_eq!(alts("10", " (maybe eleven)"), vec!["eleven"]);
        assert_eq!(alts("10", " or ١١"), vec!["١١"]);
        assert_eq!(alts("4", ", or perhaps Ⅴ."), vec!["Ⅴ"]);
    }

    #[test]
    fn units_right_after_an_answer() {
        let u = |rest: &str| unit_after(rest);
        assert_eq!(u(" dozens of cookies.").as_deref(), Some(" \\text{ dozens}"));
        assert_eq!(u("$ m.").as_deref(), Some(" \\text{ m}"));
        assert_eq!(u("\\) m long.").as_deref(), Some(" \\text{ m}"));
        assert_eq!(u(" square feet.").as_deref(), Some(" \\text{ square feet}"));
        assert_eq!(u(" miles per hour").as_deref(), Some(" \\text{ miles per hour}"));
        assert_eq!(u(" km/h, as computed").as_deref(), Some(" \\text{ km/h}"));
        assert_eq!(u(" \\text{ cm}^2$.").as_deref(), Some(" \\text{ cm²}"));
        assert_eq!(u("\\,\\mathrm{kg}").as_deref(), Some(" \\text{ kg}"));
        assert_eq!(u(" min.").as_deref(), Some(" \\text{ min}"));
        assert_eq!(u(" hours.<|endofblock|>").as_deref(), Some(" \\text{ hours}"));
        for rest in [
            " apples.",
            " more 12-ounce cans",
            " a day.",
            " in total.",
            ".\n\nMeters",
            "\nmeters",
            " and \\boxed{6}",
            " \\text{ or } 6",
            " is the answer.",
        ] {
            assert_eq!(u(rest), None, "{rest}");
        }
    }

    #[test]
    fn hedged_answers_split() {
        assert_eq!(split_hedged(r"5 \text{ or } 6"), Some(vec!["5".to_string(), "6".to_string()]));
        assert_eq!(split_hedged(r"5\text{, possibly 6}"), Some(vec!["5".to_string(), "6".to_string()]));
        assert_eq!(split_hedged(r"\text{(B) or (D)}"), Some(vec!["(B)".to_string(), "(D)".to_string()]));
        assert_eq!(split_hedged(r"\text{either } 5 \text{ or } 6"), Some(vec!["5".to_string(), "6".to_string()]));
        assert_eq!(split_hedged(r"5 \text{ or more}"), Some(vec!["5".to_string(), "more".to_string()]));
        assert_eq!(split_hedged(r"x = 2 \text{ or } x = 3"), Some(vec!["x = 2".to_string(), "x = 3".to_string()]));
        assert_eq!(split_hedged(r"5 \text{ (or } 6\text{)}"), Some(vec!["5".to_string(), "6".to_string()]));
        assert_eq!(split_hedged(r"\frac{1}{2}"), None);
        // A hedge word with a value on one side only keeps the answer whole (its wording
        // qualifies it).
        assert_eq!(split_hedged(r"\text{maybe } 5"), None);
        assert_eq!(split_hedged(r"5 \text{ probably}"), None);
        assert_eq!(split_hedged("1 — or"), None);
        assert_eq!(split_hedged(r"\text{ordinary}"), None);
        assert_eq!(split_hedged(r"\sin x \cdot \cos x"), None);
    }
}
