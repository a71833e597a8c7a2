//! A concluding statement without an answer marker (part of strategy 8 of `extract`): the last
//! sentence states one value in the response's own voice with a conclusive word (`This gives $7$
//! as the final count.`, `The total comes to forty-nine.`, `In total, we get $\frac{3}{2}$.`), or
//! a lead-in states that the display after it is the result (`Collecting the results, the
//! quantity asked for is` then `\[75\]`).
//!
//! A sentence is read on the token stream, by structure and lexicon classes, never by phrase:
//! - **one value**: a math block, a number (`-3`, `50%`) or a number in words (`forty-nine`); a
//!   math block without digits before the value is a symbol of the subject (`the value of $x$ is
//!   $5$`); any other number is a second value, and the sentence states nothing;
//! - **stated**: right after a stating or result verb (`is`, `makes`, `gives`, `obtain`), after a
//!   `to` or `of` that such a verb governs (`comes to`, `brings the total to`, `has a total of`),
//!   after `at`, `in` or `with` right after a result verb or its particle (`stands at`, `results
//!   in`, `end up with`),
//!   after `:` or `=` that follow words, or first in its clause before a copula that names it the
//!   answer (`$90$ is the value we were asked for`); equality words (`exactly`) and fillers
//!   (`therefore`) may stand between;
//! - **after it**: only what leaves it as stated (units, counted nouns, closing words: the
//!   allow-list of `wording`), then at most a role that names the answer (`as the final count`,
//!   `is the value asked for`: a word of `AnswerNoun`, `FinalWord`, `Conclusive` or `Sought`);
//! - **conclusive**: a word of the lexicon's `Conclusive`, `FinalWord`, `ConclusionOpener`,
//!   `Sought` or `ResultVerb` classes (`total`, `final`, `altogether`, `asked`, `comes`);
//! - **asserted**: no question mark or `;`, no word that hedges, bounds, negates, supposes,
//!   states a condition or a reason, reports, revisits, gives up, instructs or mentions (`or`,
//!   `about`, `least`, `not`, `if`, `because`, `claims`, `wait`, `stuck`, `put`, `example`), no
//!   LaTeX outside math, and no imperative opening it (`Let`, `Find`).
//!
//! A last clause may also pick one value from a list the sentence gave before it
//! ([`picked_value`]: `This leaves $42$, $44$ or $45$; taking the greatest, we get $45$.`): the
//! pick concludes; the list may join its values with `or`, the clause must assert.
//!
//! So `We need 5 more steps to finish.` (no conclusive word, `more` after the value), `Let's check
//! with n = 5.`, `Is the total 7?`, `Suppose the total is 7.` and `The total is 7 or 8.` state
//! nothing. Cost: one pass over a sentence of at most a few hundred bytes.

use std::ops::Range;

use super::delimited::block_at;
use super::tokens::{Kind, Lexer};
use crate::lexicon::{Class, Classes};

/// Most tokens of a sentence read (a concluding sentence is short).
const MAX_ITEMS: usize = 96;
/// Most words of the role after a value (`as the final count`, `is the value we were asked for`).
const MAX_ROLE_WORDS: usize = 10;

/// One piece of a sentence.
#[derive(Clone, Debug, PartialEq)]
enum Item {
    /// A word with its classes.
    Word(Classes, Range<usize>),
    /// A value: a math block (`math`, with or without digits), a number or a number in words.
    Value { range: Range<usize>, math: bool, digits: bool },
    /// Any other character.
    Punct(char),
}

/// The words that keep a sentence from asserting a value of its own.
const BLOCKING: &[Class] = &[
    Class::HedgeCue,
    Class::NegationOrModal,
    Class::Negation,
    Class::Hypothesis,
    Class::Reason,
    Class::GiveUp,
    Class::Report,
    Class::Revision,
    Class::Denial,
    Class::Instruction,
    Class::Mention,
    Class::Exclusion,
    Class::Retraction,
    Class::Bound,
];

/// The words that make a sentence conclude.
const CONCLUSIVE: &[Class] =
    &[Class::Conclusive, Class::FinalWord, Class::ConclusionOpener, Class::Sought, Class::ResultVerb];

/// The words of a role that name the answer (`as the final count`).
const NAMING: &[Class] = &[Class::AnswerNoun, Class::FinalWord, Class::Conclusive, Class::Sought];

fn has_any(c: Classes, classes: &[Class]) -> bool {
    classes.iter().any(|&k| c.has(k))
}

/// The byte range (in `sentence`) of the one value a concluding last sentence states, delimiters
/// included (`$\frac{3}{2}$`, `forty-nine`, `50%`). See the module doc.
pub(crate) fn stated_value(sentence: &str) -> Option<Range<usize>> {
    let finished = sentence.trim_end().trim_end_matches('*');
    if !finished.ends_with(['.', '!', '。', '！']) {
        // A sentence that never ended (`Combining like terms, we get $2k + 2$`) states nothing.
        return None;
    }
    let body = finished.trim_end_matches(['.', '!', '。', '！']).trim_end();
    if body.contains(['?', '？', ';']) {
        return None;
    }
    let items = items(body)?;
    if !asserted(body, &items) || !items.iter().any(|i| matches!(i, Item::Word(c, _) if has_any(*c, CONCLUSIVE))) {
        return None;
    }
    let v = (0..items.len()).find(|&k| {
        matches!(items[k], Item::Value { .. }) && (stated_before(body, &items, k) || named_after(&items, k))
    })?;
    let other_value = items.iter().enumerate().any(|(k, item)| match item {
        Item::Value { math, digits, range } if k != v => {
            // A symbol of the subject (`the value of $x$`), or `one` as a pronoun (`the final one`).
            let symbol = k < v && *math && !digits;
            !(symbol || body[range.clone()].eq_ignore_ascii_case("one"))
        }
        _ => false,
    });
    if other_value || !after_value(body, &items[v + 1..], stated_before(body, &items, v)) {
        return None;
    }
    match &items[v] {
        Item::Value { range, .. } => Some(range.clone()),
        _ => None,
    }
}

/// The byte range (in `body`, a sentence without its final `.`) of the value its last clause picks
/// from a list that the sentence gave before it (`This leaves $42$, $44$ or $45$; taking the
/// greatest, we get $45$`, `Among $0.15$, $7$ and $13$, the smallest that works is $0.15$`): the
/// clause after the last `;` or `,` states one value (after a stating or result verb, nothing
/// after it but what leaves it stated) that repeats one of at least two values before it.
/// Picking from the list is what concludes: the list itself may join its values with `or`, but
/// no other word may keep it from being asserted, and the clause asserts (no hedge, bound,
/// negation, condition, ...). A list with no pick (`the answer is one of $3$, $5$ or $7$`) or
/// a pick of a value the list does not hold states nothing.
pub(crate) fn picked_value(body: &str) -> Option<Range<usize>> {
    if body.contains(['?', '？']) {
        return None;
    }
    let items = items(body)?;
    let c = items.iter().rposition(|i| matches!(i, Item::Punct(';' | ',')))?;
    let (list, clause) = (&items[..c], &items[c + 1..]);
    let mut values = clause.iter().enumerate().filter(|(_, i)| matches!(i, Item::Value { .. }));
    let (v, _) = values.next()?;
    if values.next().is_some() || clause.first().is_some_and(|i| matches!(i, Item::Value { .. })) {
        return None;
    }
    let blocks = |i: &Item, allow_list: bool| match i {
        Item::Word(c, _) => has_any(*c, BLOCKING) && !(allow_list && c.has(Class::ListConnector)),
        _ => false,
    };
    let first_is_task = matches!(items.first(), Some(Item::Word(c, _)) if c.has(Class::TaskWord));
    if first_is_task || list.iter().any(|i| blocks(i, true)) || clause.iter().any(|i| blocks(i, false)) {
        return None;
    }
    if !stated_before(body, clause, v) || !after_value(body, &clause[v + 1..], true) {
        return None;
    }
    let Item::Value { range, .. } = &clause[v] else { return None };
    let content = |r: &Range<usize>| body[r.clone()].trim_matches(|c: char| c == '$' || c.is_whitespace());
    let picked = content(range);
    let listed: Vec<&str> = list
        .iter()
        .filter_map(|i| if let Item::Value { range, .. } = i { Some(content(range)) } else { None })
        .collect();
    (listed.len() >= 2 && listed.contains(&picked)).then(|| range.clone())
}

/// Whether a lead-in sentence (the text before a final display, its `:` removed by the caller
/// when `colon`) presents the display as its result: it concludes, asserts, holds no value, and
/// ends with `:` or a stating word (`the quantity asked for is`, `the total comes to`).
pub(crate) fn introduces_result(lead_in: &str, colon: bool) -> bool {
    let body = lead_in.trim_end();
    if body.contains(['?', '？', ';']) {
        return false;
    }
    let Some(items) = items(body) else { return false };
    if !asserted(body, &items) || !items.iter().any(|i| matches!(i, Item::Word(c, _) if has_any(*c, CONCLUSIVE))) {
        return false;
    }
    if colon {
        return true;
    }
    // A value in the lead-in would be a second one (`Adding 3 gives`).
    !items.iter().any(|i| matches!(i, Item::Value { .. })) && stated_before(body, &items, items.len())
}

/// The sentence as words, values and characters; `None` when it holds LaTeX outside math or is
/// too long to be a concluding sentence.
fn items(s: &str) -> Option<Vec<Item>> {
    let b = s.as_bytes();
    let mut out: Vec<Item> = Vec::new();
    let mut lexer = Lexer::new(s);
    while let Some(t) = lexer.next() {
        if out.len() >= MAX_ITEMS {
            return None;
        }
        let Range { start: i, end: j } = t.range;
        match t.kind {
            Kind::Char('$') | Kind::Escape if b[i] == b'$' || matches!(b.get(i + 1), Some(b'(' | b'[')) => {
                if let Some(bl) = block_at(s, i) {
                    let rest = &s[bl.end..];
                    let close = if rest.starts_with("$$") || rest.starts_with('\\') { 2 } else { 1 };
                    let content = &s[bl.start..bl.end];
                    if content.trim().is_empty() {
                        return None;
                    }
                    let digits = content.bytes().any(|c| c.is_ascii_digit());
                    out.push(Item::Value { range: i..bl.end + close, math: true, digits });
                    lexer.seek(bl.end + close);
                } else if !(b[i] == b'$' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
                    // A `$` before a digit with no closer is a currency sign.
                    return None;
                }
            }
            // `\$`, `\,`: a currency sign or spacing.
            Kind::Escape => {}
            Kind::Command => return None,
            Kind::Number | Kind::Numeral => {
                let minus = |k: usize| s[..k].ends_with(['-', '−']);
                let start = if minus(i) { i - s[..i].chars().next_back().map_or(0, char::len_utf8) } else { i };
                if start < i {
                    out.pop();
                }
                let end = if s[j..].starts_with('%') {
                    j + 1
                } else if s[j..].starts_with("\\%") {
                    j + 2
                } else {
                    j
                };
                out.push(Item::Value { range: start..end, math: false, digits: true });
                lexer.seek(end);
            }
            Kind::Word(c) => match number_phrase(s, i) {
                Some(len) => {
                    out.push(Item::Value { range: i..i + len, math: false, digits: false });
                    lexer.seek(i + len);
                }
                None => out.push(Item::Word(c, i..j)),
            },
            Kind::Char(c) => out.push(Item::Punct(c)),
        }
    }
    Some(out)
}

/// The length of a number in words that starts at byte `at` (`forty-nine`, `two hundred ten`),
/// ending a word.
fn number_phrase(s: &str, at: usize) -> Option<usize> {
    let (len, _) = crate::number_words::leading(&s[at..])?;
    let phrase = s[at..at + len].trim_end_matches([' ', '-']);
    let ends_word = !s[at + phrase.len()..].starts_with(|c: char| c.is_alphanumeric());
    (ends_word && crate::number_words::value(phrase).is_some()).then_some(phrase.len())
}

/// No question, hedge, bound, negation, supposition, condition, report, revision or instruction
/// (see [`BLOCKING`]) and no imperative first word. A particle of a change (`up`, the lexicon's
/// `ByAfter`) bounds only before `to` (`up to 7`, not `Summing up, ...`).
fn asserted(s: &str, items: &[Item]) -> bool {
    let blocks = |k: usize| match &items[k] {
        Item::Word(c, _) if c.has(Class::ByAfter) && c.has(Class::NegationOrModal) => {
            items.get(k + 1).and_then(|i| word(s, i)).is_some_and(|(w, _)| w.eq_ignore_ascii_case("to"))
        }
        Item::Word(c, _) => has_any(*c, BLOCKING),
        _ => false,
    };
    let first_is_task = matches!(items.first(), Some(Item::Word(c, _)) if c.has(Class::TaskWord));
    !first_is_task && !(0..items.len()).any(blocks)
}

/// The lower-cased-insensitive text of a word item.
fn word<'s>(s: &'s str, item: &Item) -> Option<(&'s str, Classes)> {
    match item {
        Item::Word(c, r) => Some((&s[r.clone()], *c)),
        _ => None,
    }
}

/// Whether the item at `k` (a value, or the end of a lead-in) stands where a verb states it:
/// right after a stating or result verb, a `to`/`of` that one governs, or `:`/`=` after words,
/// with fillers, equality words and commas between.
fn stated_before(s: &str, items: &[Item], k: usize) -> bool {
    let skippable = |item: &Item| match item {
        Item::Punct(',') => true,
        Item::Word(c, _) => c.has(Class::PhraseFiller) || c.has(Class::Exact),
        _ => false,
    };
    let Some(j) = (0..k).rev().find(|&j| !skippable(&items[j])) else { return false };
    let governed_by = |classes: &[Class], but: &str| {
        items[..j].iter().filter_map(|i| word(s, i)).any(|(w, c)| has_any(c, classes) && !w.eq_ignore_ascii_case(but))
    };
    match &items[j] {
        Item::Punct(':' | '=') => j > 0 && matches!(items[j - 1], Item::Word(..)),
        Item::Word(c, r) => {
            let w = &s[r.clone()];
            let after_result_verb =
                j > 0 && matches!(items[j - 1], Item::Word(p, _) if p.has(Class::ResultVerb) || p.has(Class::ByAfter));
            if w.eq_ignore_ascii_case("to") {
                governed_by(&[Class::Stating, Class::ToAfter, Class::ResultVerb], "to")
            } else if ["at", "in", "with"].iter().any(|p| w.eq_ignore_ascii_case(p)) {
                // `stands at 12`, `results in 12`, `we end up with 12`.
                after_result_verb
            } else if w.eq_ignore_ascii_case("of") {
                // `has a total of 7`, not `the total of 5 items`.
                governed_by(&[Class::Stating, Class::ResultVerb], "of")
            } else {
                c.has(Class::Stating) || c.has(Class::ResultVerb)
            }
        }
        _ => false,
    }
}

/// Whether the value at `k` opens its clause (`Hence $90$ is ...`, `So 7 is ...`) and a copula
/// follows it: the role after it must then name the answer ([`after_value`]).
fn named_after(items: &[Item], k: usize) -> bool {
    let opens = k == 0
        || matches!(items[k - 1], Item::Punct(','))
        || matches!(items[k - 1], Item::Word(c, _) if c.has(Class::ConclusionOpener) || c.has(Class::Conclusive));
    opens && matches!(items.get(k + 1), Some(Item::Word(c, _)) if c.has(Class::Stating))
}

/// Whether what follows the value leaves it as stated: plain words (units, counted nouns, closing
/// words), then at most a role naming the answer (`as the final count`, `is the value asked
/// for`); with `stated` false (the value opens its clause), the role is required.
fn after_value(s: &str, after: &[Item], stated: bool) -> bool {
    let mut words: Vec<&str> = Vec::with_capacity(after.len());
    let mut role_at = None;
    for (k, item) in after.iter().enumerate() {
        let Some((w, c)) = word(s, item) else { return false };
        if w.eq_ignore_ascii_case("as") || c.has(Class::Stating) {
            role_at = Some(k);
            break;
        }
        words.push(w);
    }
    if !super::wording::plain_after_words(&words) {
        return false;
    }
    let Some(r) = role_at else { return stated };
    if !stated && r > 0 {
        return false;
    }
    // The role's head, after its determiners, names the answer (`as the final count`, not `as a
    // lower bound on the final count`).
    let role = &after[r + 1..];
    let head = role.iter().find(|i| !matches!(i, Item::Word(c, _) if c.has(Class::Determiner)));
    role.len() <= MAX_ROLE_WORDS
        && role.iter().all(|i| matches!(i, Item::Word(..)))
        && matches!(head, Some(Item::Word(c, _)) if has_any(*c, NAMING))
}

/// Whether a last sentence asserts what it says (see [`stated_value`]'s conditions: no question,
/// hedge, bound, negation, supposition, condition, report, revision or instruction); a sentence
/// with LaTeX outside math is not read and counts as asserting.
pub(crate) fn asserts(sentence: &str) -> bool {
    let body = sentence.trim_end();
    !body.contains(['?', '？']) && items(body).is_none_or(|items| asserted(body, &items))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(s: &str) -> Option<&str> {
        stated_value(s).map(|r| &s[r])
    }

    #[test]
    fn concluding_sentences_state_their_value() {
        for (s, v) in [
            ("This gives $7$ as the final count.", "$7$"),
            ("The total comes to forty-nine.", "forty-nine"),
            ("The total comes to zero.", "zero"),
            ("The total comes to two hundred twenty-seven.", "two hundred twenty-seven"),
            ("Altogether, that makes $\\frac{2}{3}$.", "$\\frac{2}{3}$"),
            ("In total, we get $\\frac{3}{2}$.", "$\\frac{3}{2}$"),
            ("Hence $90$ is the value we were asked for.", "$90$"),
            ("So 12 is our answer.", "12"),
            ("That brings the overall count to 12 apples.", "12"),
            ("Overall, the farm has a total of 86 animals.", "86"),
            ("The final tally: $-4$.", "$-4$"),
            ("So the value of $x$ we want is, therefore, exactly $5$.", "$5$"),
            ("Summing up, the result is 50%.", "50%"),
            ("**The final count is $12$.**", "$12$"),
            ("The remaining amount comes to \\$12 in all.", "12"),
            ("Together they have 7 marbles left.", "7"),
            ("The final count stands at 42.", "42"),
            ("In the end, she is left with 42 apples altogether.", "42"),
            ("Adding everything up, we end up with 42 marbles in total.", "42"),
            ("The overall count works out to $42$.", "$42$"),
            ("The quantity we were asked for equals $\\sqrt{2}$.", "$\\sqrt{2}$"),
        ] {
            assert_eq!(value(s), Some(v), "{s}");
        }
    }

    #[test]
    fn a_clause_that_picks_from_a_list_states_its_value() {
        let picked = |s: &str| picked_value(s).map(|r| s[r].to_string());
        assert_eq!(picked("This leaves $42$, $44$ or $45$; taking the greatest, we get $45$").as_deref(), Some("$45$"));
        assert_eq!(picked("Among $0.15$, $7$ and $13$, the smallest that works is $0.15$").as_deref(), Some("$0.15$"));
        for s in [
            // No pick, a pick the list does not hold, a hedged or negated pick, one value only.
            "The answer is one of $3$, $5$ or $7$",
            "This leaves $42$, $44$ or $45$; taking the greatest, we get $46$",
            "This leaves $42$, $44$ or $45$; perhaps we get $45$",
            "This leaves $42$, $44$ or $45$; we do not get $45$",
            "If it is $3$ or $5$, we get $5$",
            "We found $5$, so we get $5$",
            "This leaves $42$, $44$ or $45$, depending on which condition binds",
            "Is it $3$, $5$ or $7$, we get $5$?",
        ] {
            assert_eq!(picked(s), None, "{s}");
        }
    }

    #[test]
    fn mentions_questions_and_hedges_state_nothing() {
        for s in [
            "Let's check with n = 5.",
            "We need 5 more steps to finish.",
            "Is the total 7?",
            "Suppose the total is 7.",
            "If the total is 7, we stop.",
            "The total is 7 or 8.",
            "The total comes to about seven.",
            "The final count is at least 7.",
            "The total comes to 7 because 3 + 4 = 7.",
            "Adding 3 and 4 gives a total of 7.",
            "This gives 7.5 and 8 as the final counts.",
            "We will now compute the total of 5 items.",
            "We still need to check whether the total is 42.",
            "Next, we compute the final total for 42 items.",
            "The final total was 42 before the discount.",
            "The final total is 42, assuming no discounts.",
            "We got the final total with 5 steps.",
            "My friend claims the total is 7.",
            "Wait, the total comes to 7.",
            "I am stuck; the total so far is 7.",
            "The area is 7 square units.",
            "Find the total of $7$.",
            "The final answer is not $7$.",
            "This gives $7$ as a lower bound.",
            "This gives $7$ as a lower bound on the final count.",
            "My friend says the final total comes to $7$.",
            "The total comes to $7$ when n is odd.",
            "Combining like terms, we get $2k + 2$",
            "The total comes to up to 7 apples.",
        ] {
            assert_eq!(value(s), None, "{s}");
        }
    }

    #[test]
    fn assertions() {
        assert!(asserts("The area is $36$."));
        assert!(asserts("Summing up, the area is $36$."));
        assert!(!asserts("Suppose the area is $36$."));
        assert!(!asserts("Is the area $36$?"));
        assert!(!asserts("My friend says the total comes to 7."));
        assert!(!asserts("Find the area of $36$ tiles."));
    }

    #[test]
    fn lead_ins_that_introduce_a_result() {
        assert!(introduces_result("Collecting the results, the quantity asked for is", false));
        assert!(introduces_result("The total comes to", false));
        assert!(introduces_result("Putting everything together", true));
        assert!(!introduces_result("Adding 3 and 4 gives", false));
        assert!(!introduces_result("The total might be", false));
        assert!(!introduces_result("We then compute", false));
        assert!(!introduces_result("Is the final result", false));
        assert!(!introduces_result("If the total is", false));
    }
}
