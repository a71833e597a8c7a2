//! Whether the response asserts a committed answer as its own.
//!
//! A marker (a box, an answer phrase) commits an answer only in the response's own voice, in a
//! sentence that states it. The marker commits nothing when:
//! - it is **mentioned, not used**: inside a code block, inline code, an HTML or LaTeX comment, or
//!   a quotation (right around it, or opened earlier in its paragraph: `The problem says: "put
//!   your answer in a box, e.g. $\boxed{5}$".`), or shown as a format or an example (`for example
//!   $\boxed{5}$`, `a box, e.g. $\boxed{5}$`, `such as $\boxed{5}$`, `Sample output:
//!   $\boxed{5}$`, `Put your answer in $\boxed{N}$`), or in a blockquote that its lines or the
//!   line introducing it present as such (`The instructions say:` then `> $\boxed{5}$`; a
//!   blockquote alone is the response's own): [`Rule::Mentioned`];
//! - its sentence **gives someone else's value**, and no `I`/`we` adopts it: a reporting verb
//!   after a third party or a name (`My friend claims it is $\boxed{36}$`), a verb of answering
//!   whose subject is a third party (`Many students answer $\boxed{9}$ here`), or a third
//!   party's answer (`My classmate's answer was $\boxed{27}$`): [`Rule::Attributed`];
//! - its sentence **negates** or excludes it (`The answer is not $\boxed{3}$`, `$\boxed{3}$ is
//!   wrong`, `$\boxed{3}$ is not the answer`, `This rules out $\boxed{3}$`), or a relative clause
//!   after it calls it an error (`$\boxed{9}$ here, which is a common mistake`):
//!   [`Rule::Negated`];
//! - its sentence **asks** about it (`Is the answer $\boxed{3}$?`): [`Rule::Questioned`];
//! - the next sentence **takes it back** (`$\boxed{3}$. No, ...`, `Scratch that.`, `That is a
//!   common mistake.`): [`Rule::Retracted`];
//! - its sentence or a later one says the problem **was not solved** (`I could not finish; this is
//!   a guess.`, `I'm not sure.`): [`Rule::Disowned`].
//!
//! The words are classes of the lexicon (`Negation`, `Report`, `Answering`, `ThirdParty`,
//! `Mention`, `Exemplifying`, `Fault`, `Retraction`, `GiveUp`, ...), never phrases. Cost: one look at a bounded window around the answer
//! ([`MAX_SENTENCE_BYTES`] before, [`MAX_AFTER_BYTES`] after), plus one count of code fences.

use super::rule::Rule;
use super::scan::{floor_boundary, Needle};
use super::tokens;
use crate::lexicon::{self, Class, Classes};

/// How far back the sentence of an answer is read (bytes).
const MAX_SENTENCE_BYTES: usize = 300;
/// How much text after an answer is read for a retraction or a statement of giving up (bytes).
const MAX_AFTER_BYTES: usize = 800;
/// How many words after an answer are read for a statement of giving up.
const MAX_WORDS_AFTER: usize = 32;
/// How many words before an answer may negate it (`is definitely not`).
const NEGATION_REACH: usize = 3;
/// How many words after a negation may say what it denies (`not entirely sure`).
const GIVE_UP_REACH: usize = 3;
/// How many words between the stating verb and a value may make it a bound (`is at least`,
/// `is no more than`).
const BOUND_REACH: usize = 3;
/// How many words right after a value may make it a bound (`or more`, `give or take`).
const BOUND_AFTER_REACH: usize = 3;
/// How far after a value a number makes a bound word an approximation of it (bytes).
const APPROXIMATION_BYTES: usize = 40;

/// Why the response does not assert the answer at `start..end` of `text`, if it does not.
pub(crate) fn void_of(text: &str, start: usize, end: usize) -> Option<Rule> {
    let (start, end) = (floor_boundary(text, start), floor_boundary(text, end.max(start)));
    if start < end && (in_code_or_comment(text, start) || quoted(text, start, end) || in_quotation(text, start, end)) {
        return Some(Rule::Mentioned);
    }
    let before = sentence_before(text, start);
    // Each word of the sentence is looked up once.
    let words_before = words(before);
    let after = &text[end..floor_boundary(text, end + MAX_AFTER_BYTES)];
    // The sentence goes on after the math that holds the answer closes (`\[\boxed{3}\]? No`).
    let after = closed(after);
    // A harness's own separator (`<|endofblock|>`) ends the response's words.
    let after = memchr::memmem::find(after.as_bytes(), b"<|").map_or(after, |k| &after[..k]);
    let (own_rest, later) = split_sentence(after);
    if ends_as_question(own_rest) {
        return Some(Rule::Questioned);
    }
    // The rest of the answer's own sentence, read once for every check below.
    let own_words = first_words(own_rest, MAX_WORDS_AFTER);
    // A negation binds the value only within its clause (`with no two adjacent: $\boxed{5}$`).
    // The clause's words are the sentence's words that start in it (each word read once).
    let clause_start = before.len() - before.rsplit([',', ':', ';', '=']).next().unwrap_or(before).len();
    let offset = |w: &Word<'_>| w.text.as_ptr() as usize - before.as_ptr() as usize;
    let clause = &words_before[words_before.partition_point(|w| offset(w) < clause_start)..];
    if negates(clause) || excludes(clause) || denied_after(&own_words) {
        return Some(Rule::Negated);
    }
    if bounds(clause, own_rest, &own_words, rounding(&text[start..end])) {
        return Some(Rule::Bounded);
    }
    // `If the answer were $\boxed{5}$, ...`: a supposition states nothing.
    if clause.first().is_some_and(|w| w.is(Class::Hypothesis)) {
        return Some(Rule::Mentioned);
    }
    // `$\boxed{9}$ here, which is a common mistake`: a relative clause calls it an error.
    let rest_words = &own_words[..own_words.len().min(RELATIVE_REACH + MAX_FAULT_WORDS + 2)];
    let opener = rest_words.iter().take(RELATIVE_REACH).position(opens_relative);
    if opener.is_some_and(|k| characterizes(&rest_words[k..])) {
        return Some(Rule::Negated);
    }
    if of_the_answer(clause) {
        return Some(Rule::Property);
    }
    if instructs(&words_before) {
        return Some(Rule::Mentioned);
    }
    if words_before.iter().any(|w| w.is(Class::Mention))
        || abbreviated_mention(before)
        || exemplified(before, &words_before)
    {
        return Some(Rule::Mentioned);
    }
    // A blockquote is read whole, with the line that introduces it (`The instructions say:`).
    if let Some(quote) = blockquote(text, start) {
        let quote_words = words(quote);
        if quote_words.iter().any(|w| w.is(Class::Mention)) || abbreviated_mention(quote) {
            return Some(Rule::Mentioned);
        }
        if attributed(&quote_words, &[], true) {
            return Some(Rule::Attributed);
        }
    }
    if attributed(&words_before, clause, counted(&own_words)) && !adopted(&own_words) {
        return Some(Rule::Attributed);
    }
    // Only what follows the answer is the response's comment on it: the words before it often
    // restate the problem (`the minimum number of guesses is`).
    let words_after = first_words(after, MAX_WORDS_AFTER);
    if gives_up(&words_after) {
        return Some(Rule::Disowned);
    }
    if retracts(later) {
        return Some(Rule::Retracted);
    }
    None
}

/// A word with its classes, looked up once.
#[derive(Clone, Copy)]
struct Word<'a> {
    text: &'a str,
    classes: Classes,
}

impl Word<'_> {
    fn is(&self, class: Class) -> bool {
        self.classes.has(class)
    }
}

/// Whether the words before a value negate it: a negation in the verb group of the last stating
/// verb of its clause (`is not`, `cannot be`, `is definitely not`), or, with no stating verb,
/// among the last [`NEGATION_REACH`] words (`definitely isn't`). A negation earlier in the
/// subject (`the values for which it is not defined is`) does not.
fn negates(clause: &[Word<'_>]) -> bool {
    let negation = |w: &Word<'_>| w.is(Class::Negation);
    match clause.iter().rposition(|w| w.is(Class::Stating)) {
        Some(verb) => {
            let auxiliary = |k: usize| clause.get(k).is_some_and(|w| w.is(Class::NegationOrModal));
            clause[verb + 1..].iter().any(negation)
                || (verb >= 1 && negation(&clause[verb - 1]))
                || (verb >= 2 && auxiliary(verb - 1) && negation(&clause[verb - 2]))
        }
        None => clause[clause.len().saturating_sub(NEGATION_REACH)..].iter().any(negation),
    }
}

/// Whether the sentence makes the value a bound or an approximation of the answer rather than
/// the answer, as the same words inside the box would (`\boxed{\text{at least } 11}`):
/// - between the clause's last stating verb and the value (or among its last [`BOUND_REACH`]
///   words without one): a bound adverb (`at least`, `approximately`, `roughly`, `höchstens`),
///   `at` before a bound noun (`at minimum`), or a comparative that is no conclusion word (`over`,
///   `more than`, `up to`); a bound noun elsewhere names the quantity (`the maximum is`);
/// - right after the value: a bound adverb (`$\boxed{11}$ at most`, `(approximately)`), or `or`
///   before a comparative (`or more`, `or fewer`, `or so`, `more or less`, `give or take`); a
///   bound adverb before a number restates the value's rounding (`(approximately 8.49)`), which the
///   approximation rule judges.
///
/// An approximation word before or after a decimal with a fractional part (`approximately
/// $\boxed{16386.16}$`) states a rounding, not a bound: the decimal rules judge it (`rounding`).
fn bounds(clause: &[Word<'_>], own_rest: &str, own_words: &[Word<'_>], rounding: bool) -> bool {
    let adverb =
        |w: &Word<'_>| w.is(Class::Bound) && !w.is(Class::BoundNoun) && !(rounding && w.is(Class::Approximating));
    let at_noun =
        |ws: &[Word<'_>], k: usize| ws[k].is(Class::BoundNoun) && k >= 1 && ws[k - 1].text.eq_ignore_ascii_case("at");
    let from = match clause.iter().rposition(|w| w.is(Class::Stating)) {
        Some(verb) => verb + 1,
        None => clause.len().saturating_sub(BOUND_REACH),
    };
    let comparative = |w: &Word<'_>| w.is(Class::Comparative) && !w.is(Class::Conclusive) && !w.is(Class::Stating);
    let before = (from.max(clause.len().saturating_sub(BOUND_REACH))..clause.len())
        .any(|k| adverb(&clause[k]) || at_noun(clause, k) || comparative(&clause[k]));
    if before {
        return true;
    }
    let after = &own_words[..own_words.len().min(BOUND_AFTER_REACH)];
    // An approximation that gives a number (`(approximately 8.4853)`) restates the value's
    // rounding: the approximation rule judges it, not this one.
    let head = &own_rest[..floor_boundary(own_rest, APPROXIMATION_BYTES.min(own_rest.len()))];
    let restates_rounding = head.bytes().any(|b| b.is_ascii_digit());
    let adverb_after =
        !restates_rounding && after.iter().take(2).enumerate().any(|(k, w)| adverb(w) || at_noun(after, k));
    let or_comparative = after.windows(2).any(|p| p[0].text.eq_ignore_ascii_case("or") && p[1].is(Class::Comparative));
    adverb_after || or_comparative
}

/// Whether an answer's text holds a decimal with a fractional part (`16386.16`, `\boxed{0.25}`):
/// a value written as a rounding.
fn rounding(answer: &str) -> bool {
    let b = answer.as_bytes();
    (1..b.len().saturating_sub(1)).any(|k| b[k] == b'.' && b[k - 1].is_ascii_digit() && b[k + 1].is_ascii_digit())
}

/// Whether the last words before a value exclude it: an exclusion verb among the last
/// [`NEGATION_REACH`] words (`This rules out $\boxed{3}$`, `which eliminates`; `rule` only with
/// `out` after it).
fn excludes(clause: &[Word<'_>]) -> bool {
    let from = clause.len().saturating_sub(NEGATION_REACH);
    (from..clause.len()).any(|k| {
        clause[k].is(Class::Exclusion)
            && (!clause[k].text.to_ascii_lowercase().starts_with("rule")
                || clause.get(k + 1).is_some_and(|w| w.text.eq_ignore_ascii_case("out")))
    })
}

/// `after` without the delimiter that closes the math holding the answer (`\]`, `\)`, `$$`,
/// `$`, after spacing), when one stands first.
fn closed(after: &str) -> &str {
    let t = after.trim_start();
    ["\\]", "\\)", "$$", "$"].iter().find_map(|c| t.strip_prefix(c)).unwrap_or(after)
}

/// Most words between `of` and the answer noun it governs (`of your final answer`).
const MAX_OF_GAP: usize = 2;
/// Most words between the answer noun and the value (`of the answer is exactly`).
const MAX_VERB_WORDS: usize = 3;

/// Whether the clause before a value states a property of the answer rather than the answer: its
/// subject ends in `of` and an answer noun (`the sum of the digits of the answer is`, `the square
/// of the result equals`), with a head before `of` that is no answer noun itself (`the value of
/// the answer is` states the answer), and only a few words, one of them a stating verb, after it.
fn of_the_answer(clause: &[Word<'_>]) -> bool {
    let answer_noun = |w: &Word<'_>| w.is(Class::AnswerNoun) && w.is(Class::AnswerTagName) && !w.is(Class::FinalWord);
    let Some(k) = clause.iter().rposition(answer_noun) else { return false };
    let verb = &clause[k + 1..];
    if verb.is_empty() || verb.len() > MAX_VERB_WORDS || !verb.iter().any(|w| w.is(Class::Stating)) {
        return false;
    }
    let from = k.saturating_sub(MAX_OF_GAP + 1);
    let Some(of) = (from..k).rev().find(|&j| clause[j].text.eq_ignore_ascii_case("of")) else { return false };
    of >= 1 && !clause[of - 1].is(Class::AnswerNoun)
}

/// Whether the sentence is an instruction: its verb opens it (`Put your answer in ...`) or follows
/// a lead (`please box`, `remember to write`); a verb after a plain `to` is the problem's own
/// (`has left to write`).
fn instructs(words: &[Word<'_>]) -> bool {
    let lead = |k: usize| words[k].is(Class::InstructionLead);
    words.iter().enumerate().any(|(k, w)| {
        w.is(Class::Instruction)
            && (k == 0 || lead(k - 1) || (k >= 2 && words[k - 1].text.eq_ignore_ascii_case("to") && lead(k - 2)))
    })
}

/// Most words between a third party and its verb of answering (`Many students often answer`).
const MAX_SUBJECT_GAP: usize = 2;

/// Whether the sentence before a value (`words`; `clause`, its last clause) gives someone else's
/// value, and no `I`/`we` adopts it: a reporting verb right after a third party (`my teacher
/// claims`, `they say`) or a name (`Bob thinks`); a verb of answering or reporting whose subject
/// is a third party and which governs the value (`Many students answer $\boxed{9}$`, not `the
/// students who answered is`); or a third party's answer (`My classmate's answer was`, `the
/// book's result is`). Neither of the last two when the value counts what follows it
/// (`answered $\boxed{45}$ questions`, `Bob's answer sheet has $\boxed{3}$ marks`: `counted`).
fn attributed(words: &[Word<'_>], clause: &[Word<'_>], counted: bool) -> bool {
    if words.iter().any(|w| w.is(Class::FirstPerson)) {
        return false;
    }
    let third_party = |w: &Word<'_>| {
        w.is(Class::ThirdParty) || (w.text.starts_with(|c: char| c.is_ascii_uppercase()) && w.text.len() > 1)
    };
    let reported = words.windows(2).any(|p| p[1].is(Class::Report) && third_party(&p[0]));
    let verb = clause.iter().rposition(|w| w.is(Class::Answering) || w.is(Class::Report));
    let answered = !counted
        && verb.is_some_and(|v| {
            !clause[v + 1..].iter().any(|w| w.is(Class::Stating))
                && clause[..v]
                    .iter()
                    .rev()
                    .take(MAX_SUBJECT_GAP + 1)
                    .any(|w| owner(w).is_some_and(|c| c.has(Class::ThirdParty)) || w.is(Class::ThirdParty))
        });
    let answer_noun = |w: &Word<'_>| w.is(Class::AnswerNoun) && w.is(Class::AnswerTagName) && !w.is(Class::FinalWord);
    let owned = clause.iter().enumerate().any(|(k, w)| {
        let owns = owner(w).is_some_and(|c| c.has(Class::ThirdParty))
            || (w.text.starts_with(|c: char| c.is_ascii_uppercase()) && owner(w).is_some_and(Classes::is_empty));
        owns && clause[k + 1..].iter().take(MAX_OF_GAP + 1).any(answer_noun)
    });
    reported || answered || (owned && !counted)
}

/// Whether the rest of the answer's sentence adopts a value given by someone else in the
/// response's own voice (`..., and I agree`): an `I`/`we`, and no word that revises, negates or
/// denies (`..., but I get 28`).
fn adopted(rest: &[Word<'_>]) -> bool {
    rest.iter().any(|w| w.is(Class::FirstPerson))
        && !rest
            .iter()
            .any(|w| w.is(Class::Revision) || w.is(Class::Negation) || w.is(Class::Denial) || w.is(Class::Fault))
}

/// The classes of the owner of a possessive the lexicon does not know (`classmate's`,
/// `students'`): `None` for any other word.
fn owner(w: &Word<'_>) -> Option<Classes> {
    if !w.classes.is_empty() {
        return None;
    }
    let base = w.text.strip_suffix("'s").or_else(|| w.text.strip_suffix('\''))?;
    (!base.is_empty()).then(|| lexicon::classes(base))
}

/// Whether the value counts what follows it (`$\boxed{45}$ questions`, `$\boxed{3}$ apples`):
/// its next word is a plural or a counted noun.
fn counted(own_words: &[Word<'_>]) -> bool {
    own_words.first().is_some_and(|w| {
        w.is(Class::SingularNoun)
            || (w.text.len() > 3 && w.text.ends_with('s') && !w.is(Class::NotPlural) && w.classes.is_empty())
    })
}

/// Most words after the answer before a relative word that may characterize it (`here, which`).
const RELATIVE_REACH: usize = 3;
/// Most words between the verb of a characterizing clause and its word of fault (`is a very
/// common mistake`).
const MAX_FAULT_WORDS: usize = 4;

/// Whether a word opens a clause about what precedes it: a pronoun other than `I`/`we` (`that`,
/// `this`, `it`) or a relative word (`which`).
fn opens_relative(w: &Word<'_>) -> bool {
    (w.is(Class::Pronoun) && !w.is(Class::FirstPerson) && !w.is(Class::ThirdParty))
        || (w.is(Class::Reason) && w.is(Class::ClauseWord))
}

/// Whether `words` (from a pronoun or a relative word) call what precedes them an error: a
/// stating verb (`is`, `would be`), then within [`MAX_FAULT_WORDS`] words a word of fault or of
/// denial before any negation (`which is a common mistake`, `That is an error`, `which is wrong`;
/// not `which is not a mistake`).
fn characterizes(words: &[Word<'_>]) -> bool {
    if !words.first().is_some_and(opens_relative) {
        return false;
    }
    let modal = usize::from(words.get(1).is_some_and(|w| w.is(Class::NegationOrModal) && !w.is(Class::Negation)));
    if !words.get(1 + modal).is_some_and(|w| w.is(Class::Stating)) {
        return false;
    }
    words[2 + modal..]
        .iter()
        .take(MAX_FAULT_WORDS)
        .take_while(|w| !w.is(Class::Negation))
        .any(|w| w.is(Class::Fault) || w.is(Class::Denial))
}

/// Most words between an abbreviation that mentions (`e.g.`) and the value it introduces.
const MENTION_REACH: usize = 4;

/// Whether an abbreviation of the lexicon's `Mention` class (two single letters joined by a dot:
/// `e.g.`, `z.B.`) introduces the value at the end of `s`: at most [`MENTION_REACH`] words and no
/// clause break between them (`a box, e.g. $\boxed{5}$`, `e.g., \boxed{5}`; not `e.g. by
/// symmetry, the total is`).
fn abbreviated_mention(s: &str) -> bool {
    let b = s.as_bytes();
    let letter = |k: usize| b.get(k).is_some_and(u8::is_ascii_alphabetic);
    let at = (1..b.len().saturating_sub(1)).rev().find(|&k| {
        b[k] == b'.' && letter(k - 1) && letter(k + 1) && !(k >= 2 && letter(k - 2)) && !letter(k + 2) && {
            let w = [b[k - 1].to_ascii_lowercase(), b'.', b[k + 1].to_ascii_lowercase()];
            std::str::from_utf8(&w).is_ok_and(|w| lexicon::is(w, Class::Mention))
        }
    });
    at.is_some_and(|k| {
        let between = s[k + 2..].trim_start_matches(['.', ',', ':', ' ']);
        !between.contains([',', ';', ':']) && first_words(between, MENTION_REACH + 1).len() <= MENTION_REACH
    })
}

/// Whether the sentence before a value presents it as a sample: it opens with a word of the
/// lexicon's `Exemplifying` class and a colon introduces the value (`Sample output: ...`), or the
/// words right before it are one (`such as $\boxed{5}$`).
fn exemplified(before: &str, words: &[Word<'_>]) -> bool {
    if words.first().is_some_and(|w| w.is(Class::Exemplifying)) && before.contains(':') {
        return true;
    }
    match words {
        [.., a, b] if b.text.eq_ignore_ascii_case("as") => {
            let phrase = format!("{} {}", a.text, b.text);
            lexicon::is(&phrase, Class::Exemplifying) && before.trim_end_matches(['$', ' ']).ends_with(b.text)
        }
        _ => false,
    }
}

/// The blockquote that holds byte `at` (its line opens with `>`): its earlier lines and the line
/// that introduces it with a colon, at most [`MAX_SENTENCE_BYTES`] before `at`.
fn blockquote(text: &str, at: usize) -> Option<&str> {
    let from = floor_boundary(text, at.saturating_sub(MAX_SENTENCE_BYTES));
    let window = &text[from..at];
    let mut start = window.rfind('\n').map_or(0, |k| k + 1);
    if !window[start..].trim_start().starts_with('>') {
        return None;
    }
    while start > 0 {
        let prev_start = window[..start - 1].rfind('\n').map_or(0, |k| k + 1);
        let prev = &window[prev_start..start - 1];
        if prev.trim_start().starts_with('>') {
            start = prev_start;
            continue;
        }
        if prev.trim_end().ends_with(':') {
            start = prev_start;
        }
        break;
    }
    Some(&window[start..])
}

/// Whether byte `at` lies in a fenced code block (an odd number of fences before it and one after
/// it), inline code, or an HTML or LaTeX comment.
fn in_code_or_comment(text: &str, at: usize) -> bool {
    static FENCE: Needle = Needle::new(b"```");
    let b = text.as_bytes();
    let backticks = memchr::memchr(b'`', b).is_some();
    if backticks && FENCE.all(&b[..at]).count() % 2 == 1 && FENCE.first(&b[at..]).is_some() {
        return true;
    }
    let line_start = memchr::memrchr(b'\n', &b[..at]).map_or(0, |k| k + 1);
    let line = &text[line_start..at];
    let line_end = memchr::memchr(b'\n', &b[at..]).map_or(b.len(), |k| at + k);
    if backticks && line.bytes().filter(|&c| c == b'`').count() % 2 == 1 && b[at..line_end].contains(&b'`') {
        return true;
    }
    let trimmed = line.trim_start();
    if trimmed.starts_with('%') || trimmed.starts_with("//") {
        return true;
    }
    static OPEN: Needle = Needle::new(b"<!--");
    static CLOSE: Needle = Needle::new(b"-->");
    match OPEN.last(&b[..at]) {
        Some(open) => CLOSE.first(&b[open..at]).is_none(),
        None => false,
    }
}

/// Pairs of quotation marks, opening and closing (straight double quotes are counted instead).
const QUOTES: &[(char, char)] = &[('“', '”'), ('„', '“'), ('«', '»'), ('「', '」'), ('『', '』')];

/// Whether the answer at `start..end` stands inside a quotation that opened earlier in its
/// paragraph (or its line, when the paragraph starts beyond [`MAX_SENTENCE_BYTES`]) and closes
/// after it on its line (`The problem says: "put your answer in a box, e.g. $\boxed{5}$".`). A
/// JSON value (`"answer": "..."`) is no quotation.
fn in_quotation(text: &str, start: usize, end: usize) -> bool {
    let from = floor_boundary(text, start.saturating_sub(MAX_SENTENCE_BYTES));
    let window = &text[from..start];
    let paragraph = match window.rfind("\n\n") {
        Some(k) => &window[k + 2..],
        None if from == 0 => window,
        None => match window.rfind('\n') {
            Some(k) => &window[k + 1..],
            None => return false,
        },
    };
    let after = &text[end..floor_boundary(text, end + MAX_SENTENCE_BYTES)];
    let line_after = &after[..after.find('\n').unwrap_or(after.len())];
    let straight = paragraph.matches('"').count() % 2 == 1 && line_after.contains('"') && {
        let opening = paragraph.rfind('"').unwrap_or(0);
        let lead = paragraph[..opening].trim_end();
        !(lead.ends_with(':') && lead[..lead.len() - 1].trim_end().ends_with('"'))
    };
    // The curly and angled marks are not ASCII: an ASCII paragraph holds none.
    straight
        || !paragraph.is_ascii()
            && QUOTES.iter().any(|&(open, close)| {
                paragraph.rfind(open).is_some_and(|o| paragraph.rfind(close).is_none_or(|c| c < o))
                    && line_after.contains(close)
            })
}

/// Whether the answer at `start..end` stands between quotation marks (`"$\boxed{5}$"`).
fn quoted(text: &str, start: usize, end: usize) -> bool {
    const OPENING: &[char] = &['"', '“', '„', '«', '‘', '「', '\''];
    const CLOSING: &[char] = &['"', '”', '»', '’', '」', '\''];
    let before = text[..start].trim_end_matches(['$', ' ']);
    let after = text[end..].trim_start_matches(['$', ' ']);
    before.ends_with(OPENING) && after.starts_with(CLOSING)
}

/// The sentence before byte `at`: back to the last sentence end or line break (the dot of an
/// abbreviation, `e.g.`, ends none).
fn sentence_before(text: &str, at: usize) -> &str {
    let from = floor_boundary(text, at.saturating_sub(MAX_SENTENCE_BYTES));
    let window = &text[from..at];
    let b = window.as_bytes();
    let start = (0..b.len())
        .rev()
        .find(|&k| {
            b[k] == b'\n'
                || (matches!(b[k], b'.' | b'!' | b'?')
                    && b.get(k + 1).is_some_and(u8::is_ascii_whitespace)
                    && !abbreviation_end(b, k))
        })
        .map_or(0, |k| k + 1);
    &window[start..]
}

/// Whether the `.` at `k` of `b` ends an abbreviation of single letters (`e.g.`, `i.e.`, `z.B.`).
fn abbreviation_end(b: &[u8], k: usize) -> bool {
    let letter = |j: usize| b.get(j).is_some_and(u8::is_ascii_alphabetic);
    k >= 3 && b[k] == b'.' && letter(k - 1) && b[k - 2] == b'.' && letter(k - 3) && !(k >= 4 && letter(k - 4))
}

/// The rest of the answer's own sentence and the text after it.
fn split_sentence(after: &str) -> (&str, &str) {
    let b = after.as_bytes();
    for k in 0..b.len() {
        let ends = match b[k] {
            b'\n' => true,
            b'.' | b'!' | b'?' => b.get(k + 1).is_none_or(|c| c.is_ascii_whitespace() || *c == b'$'),
            _ => false,
        };
        if ends {
            return (&after[..k + 1], &after[k + 1..]);
        }
    }
    (after, "")
}

/// Whether the answer's sentence ends with a question mark (`Is it $\boxed{3}$?`).
fn ends_as_question(own_rest: &str) -> bool {
    own_rest.trim_end().ends_with('?')
}

/// Whether the words right after the answer deny it (`$\boxed{3}$ is wrong`, `is not correct`,
/// `is not the answer`: a negation before a word of truth or of solving, or before the answer
/// noun with only fillers between).
fn denied_after(words: &[Word<'_>]) -> bool {
    let first = &words[..words.len().min(4)];
    let denies = |n: &Word<'_>| {
        n.is(Class::Verity) || n.is(Class::Accomplish) || (n.is(Class::AnswerNoun) && n.is(Class::AnswerTagName))
    };
    first.iter().enumerate().any(|(k, x)| {
        x.is(Class::Denial)
            || (x.is(Class::Negation)
                && first[k + 1..].iter().find(|n| !n.is(Class::HedgeFiller) || denies(n)).is_some_and(denies))
    })
}

/// Whether the sentence after the answer opens by taking it back: a retraction word, which for
/// `no` and `not` must stand alone (`No.`, `No, ...`, not `No other value works`).
/// `Just kidding`, `Never mind` and `That is wrong.` take it back too (a retraction word second,
/// or a denial among the first words of a sentence without a value), and so does a sentence
/// that calls it an error (`That is a common mistake: ...`, see [`characterizes`]).
fn retracts(later: &str) -> bool {
    let t = later.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '*' | '_' | '>' | '-'));
    let len = t.bytes().take_while(|c| c.is_ascii_alphabetic()).count();
    let word = &t[..len];
    let (next, _) = split_sentence(t);
    let w = first_words(next, 2);
    if lexicon::is(word, Class::Retraction) {
        // A negation retracts alone (`No.`, `No, ...`) or with another retraction word (`Never
        // mind`), not when it opens a statement (`No other value works`).
        let bare = lexicon::is(word, Class::Negation);
        return !bare
            || t[len..].starts_with(['.', ',', '!', ';'])
            || w.get(1).is_some_and(|second| second.is(Class::Retraction));
    }
    w.get(1).is_some_and(|second| second.is(Class::Retraction) && !second.is(Class::Negation))
        || (!next.bytes().any(|c| c.is_ascii_digit()) && denied_after(&first_words(next, 4)))
        || characterizes(&first_words(next, MAX_FAULT_WORDS + 3))
}

/// Whether words say the problem was not solved: a word of giving up (`guess`, `unsolved`), or
/// a negation shortly before a word of solving or knowing (`not sure`, `could not finish`).
fn gives_up(words: &[Word<'_>]) -> bool {
    words.iter().enumerate().any(|(k, w)| {
        w.is(Class::GiveUp)
            || (w.is(Class::Negation) && words[k + 1..].iter().take(GIVE_UP_REACH).any(|n| n.is(Class::Accomplish)))
    })
}

/// The words of `s` (the token stream's ASCII words), each with its classes.
fn words(s: &str) -> Vec<Word<'_>> {
    first_words(s, usize::MAX)
}

/// The first `limit` [`words`] of `s` (the scan stops there).
fn first_words(s: &str, limit: usize) -> Vec<Word<'_>> {
    tokens::ascii_words(s).take(limit).map(|(text, classes)| Word { text, classes }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn void(text: &str, value: &str) -> Option<Rule> {
        let start = text.rfind(value).unwrap();
        void_of(text, start, start + value.len())
    }

    #[test]
    fn asserted_answers() {
        let b = r"\boxed{5}";
        for t in [
            r"So the answer is $\boxed{5}$.",
            r"The number of integers not divisible by 3 is $\boxed{5}$.",
            r"We cannot have $x = 2$, so $\boxed{5}$.",
            r"Thus $\boxed{5}$. No other value works.",
            r"I think the answer is $\boxed{5}$.",
            r"We want to find the area, which is $\boxed{5}$.",
            r"The number of pages she has left to write is $\boxed{5}$.",
            r"The ways to pick 3 boys to give a talk is $\boxed{5}$.",
            r"If we count both cases, we get $\boxed{5}$.",
            r"Ways with no two adjacent: $\boxed{5}$.",
            r"The number of values for which it is not defined is $\boxed{5}$.",
            r"The number of people who think horse 7 wins is $\boxed{5}$.",
            r"The minimum number of guesses you need is $\boxed{5}$.",
            "```\nx = 1\n```\n```output\n5\n```\nSo the total is $\\boxed{5}$.",
            r"Therefore $\boxed{5}$ (not 4).",
            r"What is the answer? $\boxed{5}$",
            r"The value of the answer is $\boxed{5}$.",
            r"The sum of the digits of 23 is $\boxed{5}$.",
            r"The number of solutions is $\boxed{5}$.",
            r"The rules give $\boxed{5}$.",
            r"So $\boxed{5}$ is not a multiple of 3, as required.",
            "Thus:\n\\[\n\\boxed{5}\n\\]\n\nThis is the answer.",
            r"The maximum is $\boxed{5}$.",
            r"Thus, the least value is $\boxed{5}$.",
            r"and so $\boxed{5}$.",
            r"So we need $\boxed{5}$ more marbles.",
            r"So the answer is $\boxed{5}$ (approximately 5.0).",
            r"The number is at most 6, and in fact exactly $\boxed{5}$.",
            // Someone else's value the response adopts, or counts of what a third party did.
            r"My classmate's answer was $\boxed{5}$, and I agree.",
            r"The student answered $\boxed{5}$ questions correctly.",
            r"Bob's answer sheet has $\boxed{5}$ marks.",
            r"The number of students who answered is $\boxed{5}$.",
            r"Each friend paid $\boxed{5}$ dollars.",
            // A word of fault that does not call the answer one.
            r"So $\boxed{5}$, which is not a mistake.",
            r"So $\boxed{5}$. A common mistake is to forget the empty set.",
            r"The error in the estimate is $\boxed{5}$.",
            // An example or a quotation elsewhere in the sentence, a blockquote of the answer.
            r"We find, e.g. by symmetry, that the total is $\boxed{5}$.",
            r#"The word "five" is written $\boxed{5}$."#,
            r#"{"answer": "The total is $\boxed{5}$"}"#,
            "> **Final answer:** $\\boxed{5}$",
            r"The sample mean is $\boxed{5}$.",
        ] {
            assert_eq!(void(t, b), None, "{t}");
        }
    }

    #[test]
    fn answers_not_asserted() {
        let b = r"\boxed{5}";
        for (t, rule) in [
            (r"The answer is not $\boxed{5}$.", Rule::Negated),
            (r"It definitely isn't $\boxed{5}$.", Rule::Negated),
            (r"The total cannot be $\boxed{5}$.", Rule::Negated),
            (r"Bob thinks it is $\boxed{5}$.", Rule::Attributed),
            (r"$\boxed{5}$ is wrong.", Rule::Negated),
            (r"Is the answer $\boxed{5}$?", Rule::Questioned),
            (r"Could it be $\boxed{5}$? Hmm.", Rule::Questioned),
            (r"So $\boxed{5}$. No, that double counts.", Rule::Retracted),
            (r"So $\boxed{5}$. Scratch that.", Rule::Retracted),
            (r"So $\boxed{5}$. Just kidding.", Rule::Retracted),
            (r"So $\boxed{5}$. Never mind, that was wrong.", Rule::Retracted),
            (r"So $\boxed{5}$. That is wrong.", Rule::Retracted),
            (r"So $\boxed{5}$ (not really).", Rule::Negated),
            (r"On reflection, $\boxed{5}$ is not the answer.", Rule::Negated),
            (r"This rules out $\boxed{5}$ as the answer.", Rule::Negated),
            (r"Which eliminates $\boxed{5}$.", Rule::Negated),
            ("The answer is:\n\\[\n\\boxed{5}\n\\]? No", Rule::Questioned),
            ("The answer is:\n\\[\n\\boxed{5}\n\\]... no, scratch that", Rule::Retracted),
            (r"My teacher claims it is $\boxed{5}$.", Rule::Attributed),
            (r"Write your result in the form $\boxed{5}$.", Rule::Mentioned),
            (r"For example, $\boxed{5}$.", Rule::Mentioned),
            (r"For example, if the result were five, you would type $\boxed{5}$.", Rule::Mentioned),
            (r"If the answer were $\boxed{5}$, the sum would be odd.", Rule::Mentioned),
            (r"Remember to write the result as $\boxed{5}$.", Rule::Mentioned),
            ("```\nprint('\\boxed{5}')\n```", Rule::Mentioned),
            (r"Use `\boxed{5}` for the answer.", Rule::Mentioned),
            ("<!-- \\boxed{5} -->", Rule::Mentioned),
            (r#"The key says "$\boxed{5}$"."#, Rule::Mentioned),
            (r"So $\boxed{5}$. I could not solve the second part, so this is a guess.", Rule::Disowned),
            (r"So $\boxed{5}$. I'm not sure about this.", Rule::Disowned),
            (r"So the sum of the digits of the answer is $\boxed{5}$.", Rule::Property),
            (r"The square of the result is $\boxed{5}$.", Rule::Property),
            (r"There are at least $\boxed{5}$ ways.", Rule::Bounded),
            (r"The answer is over $\boxed{5}$.", Rule::Bounded),
            (r"The count is up to $\boxed{5}$.", Rule::Bounded),
            (r"So the answer is roughly $\boxed{5}$.", Rule::Bounded),
            (r"Es sind mindestens $\boxed{5}$.", Rule::Bounded),
            (r"We need at minimum $\boxed{5}$ moves.", Rule::Bounded),
            (r"The answer is $\boxed{5}$ or more.", Rule::Bounded),
            (r"The answer is $\boxed{5}$ at most.", Rule::Bounded),
            (r"So the answer is $\boxed{5}$, give or take.", Rule::Bounded),
            (r"So the answer is $\boxed{5}$ (approximately).", Rule::Bounded),
            (r"So the answer is $\boxed{5}$, more or less.", Rule::Bounded),
            (r"So the answer is $\boxed{5}$ or so.", Rule::Bounded),
            // A third party answers, or owns the answer.
            (r"Many students answer $\boxed{5}$ here.", Rule::Attributed),
            (r"My classmate's answer was \boxed{5}. I disagree and get $6$.", Rule::Attributed),
            (r"The students' result is $\boxed{5}$.", Rule::Attributed),
            (r"The textbook's answer is $\boxed{5}$, but I get $6$.", Rule::Attributed),
            ("My teacher says:\n> $\\boxed{5}$", Rule::Attributed),
            // A relative clause or the next sentence calls it an error.
            (r"Many students answer $\boxed{5}$ here, which is a common mistake: the value is 6.", Rule::Negated),
            (r"So $\boxed{5}$, which would be wrong.", Rule::Negated),
            (r"So $\boxed{5}$. That is a classic error: the count is 6.", Rule::Retracted),
            // A quotation opened earlier, an example abbreviation, a sample.
            (r#"The problem says: "put your answer in a box, e.g. $\boxed{5}$"."#, Rule::Mentioned),
            (r#"The prompt asked: “end with \boxed{5} on its own line”."#, Rule::Mentioned),
            (r"It goes at the very end, e.g. $\boxed{5}$.", Rule::Mentioned),
            (r"It goes at the very end, z.B. $\boxed{5}$.", Rule::Mentioned),
            (r"Sample output: $\boxed{5}$", Rule::Mentioned),
            (r"Answers such as $\boxed{5}$ are common.", Rule::Mentioned),
            ("The instructions say:\n> Give it like this:\n> $\\boxed{5}$", Rule::Mentioned),
        ] {
            assert_eq!(void(t, b), Some(rule), "{t}");
        }
    }

    #[test]
    fn an_approximation_of_a_decimal_is_its_rounding() {
        let b = r"\boxed{16386.16}";
        for t in [r"So it is worth approximately $\boxed{16386.16}$ dollars.", r"So it is about $\boxed{16386.16}$."] {
            assert_eq!(void(t, b), None, "{t}");
        }
        for t in [r"So it is worth at least $\boxed{16386.16}$ dollars.", r"So it is over $\boxed{16386.16}$."] {
            assert_eq!(void(t, b), Some(Rule::Bounded), "{t}");
        }
        assert_eq!(void(r"So there are approximately $\boxed{5}$ of them.", r"\boxed{5}"), Some(Rule::Bounded));
    }
}
