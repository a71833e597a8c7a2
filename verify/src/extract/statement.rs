//! The final statement: the one builder of what a response commits to.
//!
//! A strategy of `extract` finds where the answer is marked and what the marker holds
//! ([`Found`]). [`build`] then reads the statement once, on the answer region: the values
//! offered after the answer (`alternatives`: a list continued, a hedge, a later value that
//! revises it, another candidate a self-assessment offers), an approximation right after it
//! (`approximation`: `\boxed{\frac56} (\approx 0.83)`, read into it as `\frac56 \approx 0.83`), a unit
//! or scale right after it (`$\boxed{12}$ m`, read into it), the other fields of its record
//! (`record`), the hedges inside each candidate, and
//! whether the response asserts it as its own (`assertion`). The result is an [`Answer`] of typed
//! [`Candidate`]s, each with the contract [`Rule`] that produced it, which the scorer reads
//! (together with the readings of its words: [`Answer::qualified`], [`Answer::bare_value`], the
//! choice label) without looking inside the extractor.
//!
//! Whether candidates are offered as alternatives rather than listed is decided by one predicate,
//! [`hedges`], on the token stream's lexicon classes: between boxes, in a list continued after
//! the answer, as a cue after it and inside its own text.

use super::rule::Rule;
use super::{alternatives, approximation, assertion, choice, clean, record, wording, Source};
use crate::lexicon::{Class, Classes};

/// One candidate of a final statement.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The candidate, cleaned.
    pub text: String,
    /// The contract rule that produced it.
    pub rule: Rule,
    /// Whether it is offered as an alternative to the candidates before it (`or`, a hedge, a
    /// later value) rather than listed with them (`,`, `and`).
    pub alternative: bool,
}

/// An extracted final answer: the candidates of the final statement.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// The answer as one string for the parser (several candidates joined by ", ").
    pub text: String,
    /// The candidates, in text order (one when the statement commits to one value).
    pub candidates: Vec<Candidate>,
    /// A plain value that restates the answer right after it (`$\frac{1}{}$ = 7`, `..., i.e.
    /// 7`): the scorer reads it only when the answer itself cannot be parsed.
    pub restated: Option<String>,
    /// Which strategy found it.
    pub source: Source,
    /// Why the response does not assert this answer as its own, when it does not (a box the
    /// sentence negates, questions or retracts; someone else's value; a format example; a
    /// property of the answer rather than the answer; a response that says it did not solve the
    /// problem): the scorer calls it `no_answer`.
    pub void: Option<Rule>,
}

/// The one hedge decision: whether a word offers what follows it as an alternative to what came
/// before (`or`, `perhaps`, `otherwise`, `oder`, `或`: the lexicon's `HedgeCue` class) rather
/// than listing it (`and`, `,`).
pub(crate) fn hedges(classes: Classes) -> bool {
    classes.has(Class::HedgeCue)
}

impl Answer {
    /// A single-candidate answer with this text (what the scorer tries in place of another).
    pub fn bare(text: &str, source: Source) -> Answer {
        Answer::single(text.to_string(), source)
    }

    /// One candidate, found by the marker of `source`.
    pub(crate) fn single(text: String, source: Source) -> Answer {
        let candidates = vec![Candidate { text: text.clone(), rule: Rule::Marker(source), alternative: false }];
        Answer { text, candidates, restated: None, source, void: None }
    }

    /// Several candidates found by the marker of `source` (one is a single answer); `hedged` when
    /// the marker offers them as alternatives (`\boxed{2} or \boxed{3}`, `(A) or (E)`).
    pub(crate) fn from_parts(parts: Vec<String>, source: Source, hedged: bool) -> Answer {
        let candidates = parts
            .into_iter()
            .enumerate()
            .map(|(k, text)| Candidate { text, rule: Rule::Marker(source), alternative: hedged && k > 0 })
            .collect();
        Answer::of(candidates, source)
    }

    /// The answer of these candidates.
    fn of(candidates: Vec<Candidate>, source: Source) -> Answer {
        let text = match candidates.as_slice() {
            [one] => one.text.clone(),
            many => many.iter().map(|c| c.text.as_str()).collect::<Vec<_>>().join(", "),
        };
        Answer { text, candidates, restated: None, source, void: None }
    }

    /// The candidates' texts when there are several, else empty.
    pub fn parts(&self) -> Vec<String> {
        match self.candidates.as_slice() {
            [_] | [] => Vec::new(),
            many => many.iter().map(|c| c.text.clone()).collect(),
        }
    }

    /// The rule that produced candidate `k`.
    pub fn rule_of(&self, k: usize) -> Rule {
        self.candidates.get(k).map_or(Rule::Marker(self.source), |c| c.rule)
    }

    /// Whether the candidates are offered as alternatives (never an ordered answer as a whole).
    pub fn hedged(&self) -> bool {
        self.candidates.len() > 1 && self.candidates.iter().any(|c| c.alternative)
    }

    /// Whether the words of a candidate change its value (`\text{less than } 7`, `7 \text{ or
    /// so}`): see the allow-lists of the wording.
    pub fn qualified(&self) -> bool {
        self.candidates.iter().any(|c| wording::wording(&c.text) == wording::Wording::Qualified)
    }

    /// The value of a plainly worded answer without its words (`12 apples` -> `12`), when words
    /// surround it.
    pub fn bare_value(&self) -> Option<&str> {
        wording::bare_value(&self.text)
    }

    /// The choice letter when the answer is only a choice label (`(C)`, `\text{C}`).
    pub fn choice_letter(&self) -> Option<char> {
        choice::choice_letter(&self.text)
    }

    /// A choice label and the option text after it (`(C) y = 2x + 1`).
    pub fn choice_label(&self) -> Option<(char, &str)> {
        choice::split_choice_label(&self.text)
    }

    /// Whether the answer is a sentence opened by the article `a` (`a tricky one`), not a choice.
    pub fn article_led(&self) -> bool {
        choice::article_led(&self.text)
    }
}

/// What a strategy found: the marker's answer in its region, and which parts of the statement
/// around it the builder reads.
pub(crate) struct Found<'a> {
    answer: Answer,
    region: &'a str,
    /// The answer's span in the region: the statement after it is read for alternatives.
    span: Option<(usize, usize)>,
    /// Read the other fields of a structured record after the span.
    fields: bool,
    /// Check that the response asserts the answer at the span.
    assertion: bool,
}

impl<'a> Found<'a> {
    /// An answer whose statement is not read further (`####`, bold, a choice line).
    pub(crate) fn new(answer: Answer, region: &'a str) -> Found<'a> {
        Found { answer, region, span: None, fields: false, assertion: false }
    }

    /// Read the statement after the answer at `start..end` for the values it offers beside it.
    pub(crate) fn statement(self, start: usize, end: usize) -> Found<'a> {
        Found { span: Some((start, end)), ..self }
    }

    /// Also read the other fields of the answer's structured record.
    pub(crate) fn fields(self) -> Found<'a> {
        Found { fields: true, ..self }
    }

    /// Also check that the response asserts the answer as its own.
    pub(crate) fn asserted(self) -> Found<'a> {
        Found { assertion: true, ..self }
    }

    /// Report the answer as found by `source` (an answer tag around what a strategy found).
    pub(crate) fn source(mut self, source: Source) -> Found<'a> {
        self.answer.source = source;
        self
    }
}

/// Build the final statement of what a strategy found (see the module doc): run once per response.
pub(crate) fn build(found: Found<'_>) -> Answer {
    let Found { mut answer, region, span, fields, assertion } = found;
    let mut changed = false;
    if let Some((start, end)) = span {
        let rest = alternatives::rest_after(region, start, end);
        answer.restated = alternatives::restated_value(rest);
        // An approximation right after a single value joins it; the statement goes on after it.
        let approximation = approximation::approximation_after(rest).filter(|_| answer.candidates.len() == 1);
        let statement = approximation.as_ref().map_or(rest, |(_, at)| &rest[*at..]);
        let (mut offered, mut hedged) =
            alternatives::alternatives_after(&answer.text, region.get(..start).unwrap_or(""), statement);
        // `$\boxed{75}$, i.e. $76$`: a plain number restated as another number offers that one (the
        // restated value of an answer that does not parse is only read in its place: `score`).
        if let (Some(v), [one]) = (&answer.restated, answer.candidates.as_slice()) {
            if plain_number(&one.text) && one.text.trim() != v && !offered.iter().any(|(o, _)| o == v) {
                offered.push((v.clone(), Rule::LaterValue));
                hedged = true;
            }
        }
        if let (Some((d, _)), [one]) = (&approximation, answer.candidates.as_mut_slice()) {
            one.text = format!("{} \\approx {d}", one.text);
            changed = true;
        } else {
            changed |= unit_after(&mut answer, rest);
        }
        changed |= words_in_parentheses(&mut answer);
        let added = offered.into_iter().filter_map(|(text, rule)| {
            let text = clean(&text);
            (!text.is_empty()).then_some(Candidate { text, rule, alternative: hedged })
        });
        changed |= extend(&mut answer, added, false);
        if fields {
            let fields = record::second_fields(region, end).into_iter().map(|f| clean(&f));
            let added = fields.map(|text| Candidate { text, rule: Rule::SecondField, alternative: true });
            changed |= extend(&mut answer, added, true);
        }
        if assertion {
            answer.void = assertion::void_of(region, start, end);
        }
    }
    changed |= split_hedges(&mut answer);
    if changed {
        // The restated value reads one unchanged candidate only.
        answer = Answer { void: answer.void, ..Answer::of(answer.candidates, answer.source) };
    }
    answer
}

/// Whether `t` is a plain decimal number (`75`, `-2.5`).
fn plain_number(t: &str) -> bool {
    let t = t.trim();
    let digits = t.strip_prefix('-').unwrap_or(t);
    !digits.is_empty()
        && digits.bytes().all(|c| c.is_ascii_digit() || c == b'.')
        && digits.bytes().any(|c| c.is_ascii_digit())
}

/// A unit or scale right after a single value (`$\boxed{12}$ m`, `\boxed{5} dozens of cookies`,
/// `The final answer is $8$ meters.`) is part of it, as if written inside it (`12 \text{ m}`):
/// the checker's unit rules then apply (README, the final-answer contract, units and scales).
/// Only a plain value takes one (a number, a fraction, a power of ten: no unit, percent, degree
/// or letter of its own), and only when the words stay plainly worded. Whether it changed.
fn unit_after(answer: &mut Answer, rest: &str) -> bool {
    let [one] = answer.candidates.as_mut_slice() else { return false };
    if !plain_value(&one.text) {
        return false;
    }
    let Some(unit) = alternatives::unit_after(rest) else { return false };
    let text = format!("{}{unit}", one.text);
    // One word that the wording reads as a unit is plain by construction; a longer phrase is
    // checked (`degrees Fahrenheit` is not read so yet).
    let word = unit.trim_start().strip_prefix("\\text{ ").and_then(|u| u.strip_suffix('}'));
    let one_word = word.is_some_and(|w| !w.contains(' ') && crate::units::is_unit_word(w, true));
    if !one_word && wording::wording(&text) != wording::Wording::Plain {
        return false;
    }
    one.text = text;
    true
}

/// A single answer that ends in a number in words in parentheses (`A: 12 (doce)`, `27 (o
/// veintiocho)`) is two candidates: the value and the words, compared by their values (a
/// restatement when they agree, `ambiguous` when not). Whether it split.
fn words_in_parentheses(answer: &mut Answer) -> bool {
    let [one] = answer.candidates.as_slice() else { return false };
    let Some((value, words, _)) = alternatives::parenthetical_number(&one.text) else { return false };
    let (value, words) = (value.to_string(), words.to_string());
    let rule = one.rule;
    answer.candidates = vec![
        Candidate { text: value, rule, alternative: false },
        Candidate { text: words, rule: Rule::Parenthetical, alternative: true },
    ];
    true
}

/// Commands a plain value is written with (`\frac{3}{4}`, `2 \times 10^{6}`, `\sqrt{2}`).
const VALUE_COMMANDS: &[&str] = &["frac", "dfrac", "tfrac", "sqrt", "times", "cdot", "pi", "left", "right"];

/// Whether `text` is a plain value: digits, with only arithmetic signs and the commands of
/// [`VALUE_COMMANDS`] around them; no word, unit, percent, degree or currency sign.
fn plain_value(text: &str) -> bool {
    use super::tokens::{Kind, Lexer};
    let mut digits = false;
    for t in Lexer::new(text) {
        match t.kind {
            Kind::Number => digits = true,
            Kind::Command if VALUE_COMMANDS.contains(&&t.text(text)[1..]) => {}
            Kind::Escape if matches!(t.text(text), "\\," | "\\!" | "\\;" | "\\ ") => {}
            Kind::Char('+' | '-' | '.' | ',' | '/' | '(' | ')' | '{' | '}' | '^' | '_') => {}
            _ => return false,
        }
    }
    digits
}

/// Add candidates to `answer` (non-empty ones; with `distinct`, only texts not there yet).
/// Whether any was added.
fn extend(answer: &mut Answer, added: impl Iterator<Item = Candidate>, distinct: bool) -> bool {
    let before = answer.candidates.len();
    for c in added {
        let repeated = distinct && answer.candidates.iter().any(|o| o.text == c.text);
        if !c.text.is_empty() && !repeated {
            answer.candidates.push(c);
        }
    }
    answer.candidates.len() > before
}

/// Split each candidate at its hedge words (`5 \text{ or } 6` is two candidates, `\text{(B) or
/// (D)}` two choices). Whether any was split.
fn split_hedges(answer: &mut Answer) -> bool {
    let mut changed = false;
    let mut out: Vec<Candidate> = Vec::with_capacity(answer.candidates.len());
    for c in &answer.candidates {
        let split: Vec<String> = if let Some(letters) = choice::choice_list(&c.text) {
            letters.iter().map(char::to_string).collect()
        } else if let Some(split) = alternatives::split_hedged(&c.text) {
            split.iter().map(|p| clean(p)).filter(|p| !p.is_empty()).collect()
        } else {
            out.push(c.clone());
            continue;
        };
        changed = true;
        for (j, text) in split.into_iter().enumerate() {
            let (rule, alternative) = if j == 0 { (c.rule, c.alternative) } else { (Rule::HedgeInside, true) };
            out.push(Candidate { text, rule, alternative });
        }
    }
    if !changed || out.is_empty() {
        // Nothing split, or nothing left after the split: the answer stays as it was.
        return false;
    }
    answer.candidates = out;
    true
}
