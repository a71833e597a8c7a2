//! What may follow a committed answer, and what voids it (the contract's point 5): the values
//! that the sentences after the answer state for the answer's own quantity.
//!
//! After its answer a response may restate it, check it, recap the givens and the intermediate
//! results it used, and close with pleasantries. A later sentence voids the commitment when it
//! **states a different value for the same quantity**: that value is a second candidate (rule
//! `later_value`), and the scorer calls different candidates `ambiguous`.
//!
//! A value is **stated** when a stating word (`is`, `gives`, `returns`, `comes to`), `=`, or the
//! revising word that opens its sentence (`Edit: 15`) stands right before it, when it is the right
//! side of an equation, or when an output block after the answer prints it (```` ```output ````).
//! It is not stated inside a reason or a condition (`because there are 6 ways`; a condition that
//! opens its sentence ends at its comma: `If the book counts it differently, it is $7$` states 7;
//! any reason ends at a colon: `..., which is a common mistake: the value is $10$` states 10),
//! after a negation (`not 14`), or as an operand (`3 + 11`). Code is no statement in words.
//!
//! What a stated value is said of is the **head** of its clause's subject: the last word before
//! the stating verb that names something.
//!
//! | head | example | a different value is a candidate |
//! |---|---|---|
//! | the answer: an answer noun, a computation, a check (`Verification`), the answer's own left side | `the count is`, `the brute-force count is`, `the code gives`, `the program returns`, `So the check gives`, `This re-derivation yields`, `$m - n = 5$` after `$m - n = \boxed{4}$` | always |
//! | a pronoun, or nothing | `it is`, `you would get`, `we found`, `I disagree and get` | unless the response wrote that value before its answer (an intermediate result or a given, recapped) and the sentence supposes no other reading |
//! | a noun of the answer's own sentence | `the total cost is` after `the total cost is $\boxed{27}$`, `the number of boxes is` after `fills $\boxed{12}$ boxes` | the same |
//! | another noun, or math | `the problem gives`, `the data were`, `the roots of $P(x)$ are`, `$9 + 5 = 14$` | never |
//!
//! A label that names the answer's quantity or a check, with no verb and no value before its
//! colon (`Result of the verification: $28$`, `Total: $8$`), states the value right after it for
//! the answer (not a list, a part of the answer's own list, or a value under a condition: `Check:
//! 3 if x = 1`). A **line repeated word for word** from before the answer (a check that walks
//! through the derivation again) states nothing new: its values are givens or intermediate
//! results, whatever its words (`Therefore, Emma should complete 72 - 54 = 18 vlogs.`).
//!
//! After `I`/`we`, a word the lexicon does not know is their verb, not another head (`I disagree
//! and get $28$`). A sentence that **supposes another reading** of the problem (a word of the
//! lexicon's `OtherReading`: `If your book counts it differently, it is $7$`, `under another
//! convention`; or a hedge cue in the condition that opens it: `If your teacher means something
//! else`) offers an alternative: a value it states for a pronoun counts even when written before.
//! So do a modal main clause after a condition that opens the sentence (`Note: if order matters,
//! you'd get $13$`), a noun of another reading as the head (`that version gives $13$`: the answer's
//! quantity), a value that opens its clause after lead words only (`(Unless the problem wants the
//! inclusive count — then $13$.)`), and the value right after the colon of a label that is a
//! condition with no value of its own or names another reading (`**If order matters:** $13$`,
//! `(Alternative reading, with ordered pairs: $13$.)`; Markdown emphasis is no token). A value
//! that opens its sentence or aside after lead words and is followed by a condition (`P.S. $13$
//! if ...`, `[$13$ if order matters]`) is offered too.
//!
//! A sentence that **revisits the result** (a word of the lexicon's `Revision` class: `actually`,
//! `again`, `recount`, `edit`, `but`, `should`, `disagree`, ..., a word of fault: `a frequent
//! slip`, or an answer noun called the true one: `the correct total`) makes every value it states
//! a candidate, whatever its head; there a copula states a value too (`eigentlich ist es $28$`,
//! `en realidad es $28$`, `其实应该是 $28$`). The class holds the revising words of every language
//! whose answer phrases the lexicon reads; the statement's tokens read the lexicon's words inside a
//! run of a script written without spaces (`其实` in `其实应该是`).
//!
//! A sentence that is a **self-assessment offering candidates** makes every value it gives a
//! candidate (rule `other_candidate`), but its shares of belief: one with a word of the lexicon's
//! `Candidacy` (`the other candidate is`, `Runner-up:`, `backup`, `torn between`), or one that
//! splits belief over values (a share beside a word of `Belief`: `my credence is 0.6 for $27$ and
//! 0.4 for $28$`; a percentage placed on the answer or a part of it: `70% on $27$ and 30% on $28$`,
//! `$27$ (65%), $28$ (35%)`). A share is a percentage, the value right after a word of belief
//! with only a verb, a copula or a modal word between (`Certainty: 9/10`, `credence is about
//! 0.6`), or a value placed on another (`0.4 for $28$`); `Confidence: 95%.` and `I'm 95% sure the
//! answer is $27$.` offer nothing. Two kinds of stated
//! value are never the response's own: one whose subject calls it wrong (`A common wrong answer is
//! $28$`), and one that a third party obtained (the lexicon's `ThirdParty`: `A friend got $28$`,
//! `the textbook says`) when its sentence rejects it (a word of denial, `not right`, or the answer
//! after it: `..., but that misses a step; the answer stays $27$`). A third party's value that
//! the response does not reject is a value like any other (`A friend got $28$, and I agree.`).
//!
//! A sentence about **another problem** states no value of the answer: a formula in a variable
//! the answer does not use (`the count becomes $\frac{n(n+1)}{2}$` after `\boxed{55}`: a formula
//! has an operator, a power, a fraction or brackets beside its letters) is a generalization, and a
//! sentence that sets a parameter to a value the response never wrote before (`which for $n = 10$
//! is $55$`; in a condition, `if`, `for`, `when`, never a reason, `since $n = 10$`), or that has a
//! word of the lexicon's `Generality` (`More generally`, `In general`) and states such a formula,
//! is about another instance: its values are not candidates, but one an answer noun states (`For
//! $n = 10$, the count is $28$` stays a candidate: when in doubt, wrong). A sentence that
//! **rejects the values it names** (the lexicon's `Exclusion`, `fail`, `rejected`, `ruled out`, or
//! a negated word of `Fitting`, `neither satisfies`) offers none of them, even with a word of
//! candidacy (`The other candidates, $41$ and $44$, fail the conditions`). A sentence of **doubt
//! between values** (a negated `Accomplish` word or a `GiveUp` word, `I cannot tell`, `not sure`,
//! `unsure`, with an alternation, `or`) offers every value it names, inside its `whether` too
//! (rule `hedge`): `I cannot tell whether the answer is $4$ or $5$`.
//!
//! A statement whose **last sentence that states a value states the answer's own** (an early
//! answer, then a derivation or a check that ends on it again) states its steps: the values its
//! plain statements gave on the way are no candidates, while a revision, a doubt or an offer of
//! candidates on the way still offers its value ([`Later::last_restates`]).
//!
//! Cost: one pass over the statement's tokens. The text before the answer is read only for a value
//! whose head is a pronoun or a noun, or an equation: one byte search for the value, the answer's
//! sentence read once.

use super::alternatives::{right_side, Tok};
use super::rule::Rule;
use super::scan::floor_boundary;
use super::statement::hedges;
use super::tokens;
use crate::lexicon::{Class, Classes};

/// Most words of a revising cue before its value (`Double-checking the shelves, 15.`).
const MAX_CUE_WORDS: usize = 5;
/// How far back the answer's own sentence is read for its words (bytes).
const MAX_SENTENCE_BYTES: usize = 300;
/// Most words of the answer's own sentence read.
const MAX_SENTENCE_WORDS: usize = 48;
/// How far back the left side of the answer's own equation is read (bytes).
const MAX_NAME_BYTES: usize = 80;

/// What a stated value is said of (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Head {
    /// The answer's quantity: an answer noun, a computation, the answer's own left side.
    Answer,
    /// A pronoun, or no subject at all.
    Pronoun,
    /// A noun: the word at this token.
    Noun(usize),
    /// Math, or an equation about something else.
    Other,
}

/// A value stated in a sentence after the answer.
struct Stated {
    /// The value as a self-assessment reads it (`None` for a share of belief: `95%`).
    offered: Option<String>,
    /// The value as a sentence that revisits the result states it.
    revised: Option<String>,
    /// The value as any sentence states it, with what it is said of.
    said: Option<(String, Head)>,
    /// A third party obtained it (`A friend got`).
    third_party: bool,
    /// Its subject calls it wrong (`A common wrong answer is`).
    denied: bool,
    /// It is a formula in a variable the answer does not use (`$\frac{n(n+1)}{2}$` after
    /// `\boxed{55}`): a generalization, the value of another problem.
    formula: bool,
    /// The value as a sentence of doubt offers it (`I cannot tell whether it is $27$ or $28$`).
    doubted: Option<String>,
}

/// What a sentence says of the problem it speaks of, and of the values it names (see
/// [`Scope::other_problem`]).
#[derive(Clone, Copy, Default)]
struct Scope {
    /// A word of generality (`More generally`, `In general`).
    general: bool,
    /// A formula in a variable the answer does not use was stated.
    formula: bool,
    /// A parameter is set to a value the response never wrote before its answer (`for $n =
    /// 10$`): another instance of the problem.
    parameter: bool,
    /// It rejects the values it names (`fail`, `rejected`, `excluded`, `neither satisfies`).
    excludes: bool,
    /// It says the response does not know (`I cannot tell`, `not sure`, `unsure`).
    doubt: bool,
    /// It joins values as alternatives (`or`, `either`).
    alternation: bool,
}

impl Scope {
    /// Whether the sentence speaks of another problem than the one asked: it sets a parameter to
    /// another value (`which for $n = 10$ is $55$`), or it generalizes (a word of generality) and
    /// states a formula in a free variable. Its values are not the answer's.
    fn other_problem(self) -> bool {
        self.parameter || (self.general && self.formula)
    }

    /// Whether the sentence doubts between values (`I cannot tell whether the answer is $27$ or
    /// $28$`): like a hedge, it offers every value it names.
    fn doubts(self) -> bool {
        self.doubt && self.alternation
    }
}

/// What a sentence says of the values it states, beyond their heads.
#[derive(Clone, Copy, Default)]
struct Reading {
    /// It revisits the result (`Actually, ...`, `the correct total is`).
    revisits: bool,
    /// It rejects a third party's value (`..., but that misses a step`).
    rejects: bool,
    /// It supposes another reading of the problem: it names one (`If your book counts it
    /// differently, it is 7`, `under the other interpretation`: the lexicon's `OtherReading`), or
    /// the condition that opens it offers one (`If your teacher means something else, ...`), so a
    /// value it states for a pronoun is an alternative answer, even one written before the answer.
    other_reading: bool,
}

/// What a sentence says of the response's belief in its answer (see [`Belief::offers`]).
#[derive(Clone, Copy, Default)]
struct Belief {
    /// A word of candidacy (`the other candidate`, `backup`, `torn between`).
    candidacy: bool,
    /// A word of belief (`confidence`, `credence`, `sure`).
    belief: bool,
    /// A share of belief: a percentage, or the value right after a word of belief (`Certainty:
    /// 9/10`, `my credence is about 0.6`).
    shares: bool,
    /// A percentage placed on the answer itself (`70% on $x$`, `$x$ (65%)`).
    on_answer: bool,
    /// Right after a word of belief, with only a colon, a verb or a modal word since: the next
    /// value is its share.
    open: bool,
}

impl Belief {
    /// Whether the sentence is a self-assessment that offers candidates: it names another
    /// candidate, or it splits belief (shares beside a word of belief, or a percentage placed on
    /// the answer). Every value it gives, but its shares, is then a candidate.
    fn offers(self) -> bool {
        self.candidacy || (self.shares && self.belief) || self.on_answer
    }
}

/// The response before the answer, read lazily.
struct Before<'a> {
    text: &'a str,
    answer: &'a str,
    /// The lower-cased words of the answer's own sentence, once read.
    words: Option<Vec<String>>,
}

impl<'a> Before<'a> {
    /// Whether the response wrote the value `v` before its answer, as a value of its own (not a
    /// part of a longer number: `28` is not in `128` or `2.28`).
    fn wrote(&self, v: &str) -> bool {
        let v = v.trim();
        if v.is_empty() {
            return false;
        }
        let (b, n) = (self.text.as_bytes(), v.as_bytes());
        let number = |c: u8| c.is_ascii_digit();
        let glued_before = |k: usize| {
            k.checked_sub(1).is_some_and(|j| {
                number(b[j]) || (matches!(b[j], b'.' | b',') && j.checked_sub(1).is_some_and(|i| number(b[i])))
            })
        };
        let glued_after = |k: usize| {
            b.get(k)
                .is_some_and(|&c| number(c) || (matches!(c, b'.' | b',') && b.get(k + 1).is_some_and(|&d| number(d))))
        };
        memchr::memmem::find_iter(b, n).any(|k| !glued_before(k) && !glued_after(k + n.len()))
    }

    /// Whether `word` is a word of the answer's own sentence (a plural reads as its singular).
    fn in_answer_sentence(&mut self, word: &str) -> bool {
        let text = self.text;
        let words = self.words.get_or_insert_with(|| {
            tokens::ascii_words(answer_sentence(text))
                .take(MAX_SENTENCE_WORDS)
                .map(|(w, _)| singular(&w.to_ascii_lowercase()).to_string())
                .collect()
        });
        let word = word.to_ascii_lowercase();
        words.iter().any(|w| w == singular(&word))
    }

    /// The head of an equation whose left side is `left`: the answer's when it is the left side
    /// of the answer's own equation (`m - n` in `$m - n = \boxed{4}$` or in `\boxed{m - n = 4}`).
    fn equation_head(&self, left: &str) -> Head {
        let name = answer_name(self.answer, self.text);
        if !name.is_empty() && compact(left) == name {
            Head::Answer
        } else {
            Head::Other
        }
    }
}

/// The text the statement's tokens were read from, and where each of them starts in it.
#[derive(Clone, Copy)]
pub(super) struct Spans<'a> {
    pub text: &'a str,
    pub starts: &'a [usize],
}

/// Shortest line (bytes) whose repetition after the answer reads as a recap of the derivation.
const MIN_REPEATED_LINE: usize = 24;
/// Longest stretch of a line read around a value (bytes, each side).
const MAX_LINE_BYTES: usize = 400;

/// Lines of the derivation repeated after the answer, read once per line.
struct Repeated<'a> {
    before: &'a str,
    /// The last line read (its start in the statement) and whether the response wrote it before.
    line: Option<(usize, bool)>,
}

impl Repeated<'_> {
    /// Whether the value at token `k` lies in a line that the response wrote word for word before
    /// its answer (a check or a recap that walks through the derivation again: `Therefore, Emma
    /// should complete 72 - 54 = 18 vlogs.`): it states a given or an intermediate result again,
    /// nothing new.
    fn at(&mut self, spans: Spans<'_>, k: usize) -> bool {
        let Some(&at) = spans.starts.get(k) else { return false };
        let (text, b) = (spans.text, spans.text.as_bytes());
        let at = at.min(b.len());
        let lo = at.saturating_sub(MAX_LINE_BYTES);
        let start = b[lo..at].iter().rposition(|&c| c == b'\n').map_or(lo, |j| lo + j + 1);
        if let Some((s, repeated)) = self.line.filter(|&(s, _)| s == start) {
            debug_assert_eq!(s, start);
            return repeated;
        }
        let hi = (at + MAX_LINE_BYTES).min(b.len());
        let end = b[at..hi].iter().position(|&c| c == b'\n').map_or(hi, |j| at + j);
        let (start, end) = (floor_boundary(text, start), floor_boundary(text, end));
        let line = text[start..end].trim();
        let repeated =
            line.len() >= MIN_REPEATED_LINE && memchr::memmem::find(self.before.as_bytes(), line.as_bytes()).is_some();
        self.line = Some((start, repeated));
        repeated
    }
}

/// Whether the response wrote the value `v` before its answer (`before`), as a value of its own:
/// a recap after the answer that repeats it states a given or an intermediate result.
pub(super) fn wrote_before(before: &str, v: &str) -> bool {
    Before { text: before, answer: "", words: None }.wrote(v)
}

/// The values stated after an answer for the answer's quantity (see the module doc): `toks` are
/// the statement's tokens after the answer, `answer` the answer's text, `before` the response
/// before it. Each is a candidate beside the answer; the scorer compares them.
pub(super) fn later_values(toks: &[Tok<'_>], spans: Spans<'_>, answer: &str, before: &str) -> Later {
    let mut repeated = Repeated { before, line: None };
    let mut before = Before { text: before, answer, words: None };
    let answer = answer.trim();
    let mut out: Vec<(String, Rule, bool)> = Vec::new();
    let mut last_restates = None;
    let mut belief = Belief::default();
    let mut scope = Scope::default();
    // The last word that opened a reason or a condition opened a condition (`if`, `for`).
    let mut conditional = false;
    let mut sentence: Vec<Stated> = Vec::new();
    // The sentence: it revisits the result; it rejects a third party's value; a reason or a
    // condition holds the words (`fronted`: it opened the sentence and ends at its comma); a verb
    // or a value was read.
    let (mut revisits, mut rejects, mut justifying, mut fronted, mut begun) = (false, false, false, false, false);
    // It supposes another reading (see [`Reading`]).
    let mut other_reading = false;
    // Only lead words (`P.S.`, `Note:`, `Or`) since the sentence or its aside began; the last word
    // names another reading (`if the problem means`).
    let (mut lead_only, mut reading_cue) = (true, false);
    // Only lead words (`then`, `so`) since the clause began at a comma, a dash, a bracket or a
    // colon: in a sentence that supposes another reading, a value there is offered for it
    // (`(Unless the problem wants the inclusive count — then $13$.)`).
    let mut clause_lead = true;
    // A condition opened the sentence and ended at its comma (`If order matters, ...`): a modal
    // main clause after it (`you'd get`, `it would be`) states a value under another reading.
    let mut supposed = false;
    // A value was read in the sentence; the token after a label's colon, when the label is a
    // condition or names another reading (`**If order matters:** $13$`, `(Alternative reading,
    // with ordered pairs: $13$.)`).
    let (mut valued, mut labelled) = (false, None::<usize>);
    // The token after a label's colon, when the label names the answer's quantity or a check
    // (`Result of the verification: $28$`, `Total: $8$`): its value is stated for the answer.
    let mut named = None::<usize>;
    // The subject's last naming word names the answer's quantity or a check (`Result`, `Total`,
    // `verification`), not a computation (`Output:` prints what its code gives).
    let mut naming = false;
    let mut words = 0;
    // The clause's subject is the response itself (`I`, `we`): a word the lexicon does not know
    // after it is a verb or an adverb (`I disagree and get`), not another head.
    let mut own_subject = false;
    // The clause that `we`/`I` opened right after an answer noun may describe it (`the value we
    // were asked for is`).
    let (mut sought_after, mut described) = (false, false);
    // The word before is a restating word that opened its clause (`i.e.`, `つまり`).
    let mut restating_cue = false;
    // Where the sentence's tokens start.
    let mut sentence_from = 0;
    // The condition that opened the sentence is a supposition (`if`, `suppose`); it holds a value.
    // It speaks of what the problem admits (`Admission`).
    let (mut hypothesis, mut condition_valued, mut admits) = (false, false, false);
    // The clause: the head of its subject, a third party in it, a word of denial in it, its verb
    // read.
    let (mut head, mut third_party, mut denied, mut verb) = (Head::Pronoun, false, false, false);
    // The words right before the current token: a stating or revising word (`stating`, as a
    // revising sentence reads it), a verb (`asserting`), a negation, a word calling a value true.
    let (mut stating, mut asserting, mut negated, mut verity, mut to_after) = (false, false, false, false, false);
    // `$\frac{14}{}$ = 7`: a chain that continues the answer restates it, up to its clause's end.
    let mut chained = matches!(toks.first(), Some(Tok::Equals));
    let end = Tok::SentenceEnd;
    for (k, t) in toks.iter().chain(std::iter::once(&end)).enumerate() {
        // A number in words that a stating word states and that ends its clause (`The total
        // comes to three.`, `the answer is five`) is a value; elsewhere it is a word (`one of`).
        let in_words;
        let t = match t {
            Tok::Word(w, _)
                if stating && matches!(toks.get(k + 1), None | Some(Tok::SentenceEnd | Tok::Comma | Tok::Break)) =>
            {
                match crate::number_words::value(w) {
                    Some(n) => {
                        in_words = Tok::Value(n.to_string());
                        &in_words
                    }
                    None => t,
                }
            }
            _ => t,
        };
        match t {
            Tok::SentenceEnd | Tok::Code(_) | Tok::Break => {
                // `Hmm. 13?`: a value that ends a question alone, after a few words that state
                // nothing, questions the answer with another value.
                if let Some(v) = questioned_value(toks, spans, sentence_from, k) {
                    let v = right_side(v).unwrap_or(v).trim();
                    if v != answer {
                        out.push((v.to_string(), Rule::Hedge, false));
                        last_restates = Some(false);
                    }
                }
                sentence_from = k + 1;
                let read = Reading { revisits, rejects, other_reading };
                // A sentence that rejects the values it names offers none of them (`The other
                // candidates, $41$ and $44$, fail the conditions`).
                let offers = belief.offers() && !scope.excludes;
                let (doubts, other_problem) = (scope.doubts() && !scope.excludes, scope.other_problem());
                // The sentence states the answer's own value; it states another.
                let (mut restates, mut other) = (false, false);
                for s in sentence.drain(..) {
                    if s.denied || (s.third_party && read.rejects) {
                        continue;
                    }
                    restates |= s.said.as_ref().is_some_and(|(v, _)| v == answer);
                    let plain = !(doubts || offers || read.revisits);
                    let value = if doubts {
                        s.doubted.map(|v| (v, Rule::Hedge))
                    } else if offers {
                        s.offered.map(|v| (v, Rule::OtherCandidate))
                    } else if read.revisits {
                        s.revised.map(|v| (v, Rule::LaterValue))
                    } else if s.formula || (other_problem && !matches!(s.said, Some((_, Head::Answer)))) {
                        // A generalization or another instance of the problem: another problem's
                        // value (an answer noun that states one still names the answer's).
                        None
                    } else {
                        s.said
                            .and_then(|(v, h)| counts(&mut before, &v, h, toks, read).then_some((v, Rule::LaterValue)))
                    };
                    if let Some((v, rule)) = value.filter(|(v, _)| v != answer) {
                        other = true;
                        out.push((v, rule, plain));
                    }
                }
                if restates || other {
                    last_restates = Some(restates && !other);
                }
                (belief, scope, conditional) = (Belief::default(), Scope::default(), false);
                if let Tok::Code(Some(printed)) = t {
                    // What the response's own code prints after the answer is a result for it.
                    last_restates = Some(printed == answer);
                    out.push((printed.clone(), Rule::LaterValue, false));
                }
                if matches!(t, Tok::Break) {
                    break;
                }
                (revisits, rejects, justifying, fronted, begun, words, chained) =
                    (false, false, false, false, false, 0, false);
                (other_reading, own_subject, lead_only, reading_cue) = (false, false, true, false);
                (sought_after, described, hypothesis, condition_valued, admits) = (false, false, false, false, false);
                restating_cue = false;
                (clause_lead, valued, labelled, supposed, named) = (true, false, None, false, None);
                (head, third_party, denied, verb) = (Head::Pronoun, false, false, false);
                (stating, asserting, negated, verity, to_after) = (false, false, false, false, false);
            }
            Tok::Word(w, classes) => {
                let c = *classes;
                words += 1;
                // `Actually, ...`, `the correct total is`: a revising word, or an answer noun
                // called the true one.
                // A word of fault (`a frequent slip`) revisits it too.
                revisits |= c.has(Class::Revision) || c.has(Class::Fault) || (verity && c.has(Class::AnswerNoun));
                admits |= fronted && justifying && c.has(Class::Admission);
                // A word of fault after a third party's value rejects it (`A friend got $13$,
                // but that is a mistake`).
                rejects |= c.has(Class::Denial)
                    || (negated && c.has(Class::Verity))
                    || (c.has(Class::Fault) && sentence.iter().any(|s| s.third_party));
                verity = c.has(Class::Verity);
                scope.general |= c.has(Class::Generality);
                if c.has(Class::Reason) || c.has(Class::Hypothesis) || c.has(Class::DomainOpener) {
                    // `if`, `for`, `with`, `when` open a condition; `since`, `because` a reason.
                    conditional = c.has(Class::Hypothesis) || c.has(Class::DomainOpener);
                }
                // `fail`, `rejected`, `ruled out`, `neither satisfies`: the sentence rejects the
                // values it names (`rule` only with `out` after it).
                let ruled = !w.to_ascii_lowercase().starts_with("rule")
                    || matches!(toks.get(k + 1), Some(Tok::Word(o, _)) if o.eq_ignore_ascii_case("out"));
                scope.excludes |= (c.has(Class::Exclusion) && ruled) || (negated && c.has(Class::Fitting));
                // `I cannot tell`, `not sure`, `unsure`: the response does not know.
                scope.doubt |= (negated && c.has(Class::Accomplish)) || c.has(Class::GiveUp);
                scope.alternation |= hedges(c) && !c.has(Class::Candidacy);
                negated = c.has(Class::Negation);
                // `under the other interpretation`; `If your teacher means something else, ...`: a
                // hedge cue in the condition that opens the sentence.
                other_reading |= c.has(Class::OtherReading)
                    || (fronted && justifying && hedges(c))
                    || (supposed && !justifying && c.has(Class::NegationOrModal) && !c.has(Class::Negation));
                reading_cue = c.has(Class::OtherReading);
                // `, i.e. $76$`, `つまり $76$`: a restating word that opens its clause says the value
                // right after it of the answer (another value is a second candidate).
                restating_cue = c.has(Class::Restating) && clause_lead;
                lead_only &= (c.has(Class::Revision) || c.has(Class::HedgeCue) || c.has(Class::Justification))
                    && !c.has(Class::Verification);
                clause_lead &= c.has(Class::Revision)
                    || c.has(Class::HedgeCue)
                    || c.has(Class::Justification)
                    || c.has(Class::PhraseFiller);
                // An exception (`unless`) names another reading: what follows it is stated, not a
                // reason, and so is a relative clause that goes on with it (`unless zero counts,
                // in which case it is 13`).
                if c.has(Class::Reason) && !c.has(Class::OtherReading) && !(other_reading && c.has(Class::ClauseWord)) {
                    if !justifying && !begun {
                        fronted = true;
                        (hypothesis, condition_valued, admits) = (c.has(Class::Hypothesis), false, false);
                    }
                    justifying = true;
                }
                belief.candidacy |= c.has(Class::Candidacy);
                belief.belief |= c.has(Class::Belief);
                // `Certainty: 9/10`, `my credence is about 0.6`: a verb, a copula or a modal word
                // keeps a word of belief open for its share; a noun (`the answer`) closes it.
                let links = (c.has(Class::Stating) && !c.has(Class::AnswerNoun))
                    || c.has(Class::Copula)
                    || c.has(Class::NegationOrModal)
                    || c.has(Class::Metadata);
                belief.open = c.has(Class::Belief) || (belief.open && links);
                if c.has(Class::ClauseWord) && !c.has(Class::Justification) && w != "then" {
                    // `that`, `we`, `but`, `as`: a new clause, with a subject of its own; right
                    // after an answer noun, `we`/`I` may open a clause that describes it (`the
                    // value we were asked for`: a word of `Sought` then keeps the noun the head).
                    sought_after = !verb && head == Head::Answer && c.has(Class::FirstPerson);
                    described = false;
                    (head, third_party, denied, verb, asserting) = (Head::Pronoun, false, false, false, false);
                    own_subject = false;
                }
                described |= sought_after && c.has(Class::Sought);
                let c = possessive(w, c);
                // After `I`/`we`, a word the lexicon does not know is their verb.
                let own_verb = own_subject && c.is_empty();
                if !verb && !own_verb {
                    (head, third_party, denied) = subject(head, third_party, denied, c, k);
                    if head != Head::Answer || c.has(Class::Computation) {
                        naming = false;
                    } else if [Class::AnswerNoun, Class::AnswerWord, Class::Verification].iter().any(|&x| c.has(x)) {
                        naming = true;
                    }
                    own_subject |= c.has(Class::FirstPerson);
                }
                // A third party's report states what it got (`A friend says $13$`): a value
                // like any other unless the sentence rejects it.
                let verb_word = (c.has(Class::Stating) && w != "of")
                    || (to_after && w == "to")
                    || (third_party && c.has(Class::Report));
                to_after = c.has(Class::ToAfter);
                if c.has(Class::Negation) {
                    (stating, asserting) = (false, false);
                } else if verb_word
                    || [Class::Stating, Class::Revision, Class::Copula, Class::AnswerWord].iter().any(|&x| c.has(x))
                {
                    stating = true;
                    if verb_word {
                        (verb, asserting, begun) = (true, true, true);
                    }
                } else if !c.has(Class::HedgeFiller) {
                    (stating, asserting) = (false, false);
                }
            }
            Tok::Value(v) => {
                begun = true;
                condition_valued |= fronted && justifying;
                let right = right_side(v);
                // A value followed by an operator is an operand (`3 + 11 = 14`), not a result; a
                // percentage is a share.
                let operator = matches!(toks.get(k + 1), Some(Tok::Other | Tok::Equals));
                let operand = operator || toks.get(k + 1) == Some(&Tok::Percent);
                let share = share(toks, k, v, answer, &mut belief);
                // The value as a self-assessment reads it: any value but a share or an operand.
                let offered = (!justifying && !negated && !share && !chained && !operator)
                    .then(|| right.unwrap_or(v).to_string());
                // The value as a sentence of doubt offers it, inside its `whether` too.
                let doubted = (!negated && !share && !chained && !operand).then(|| right.unwrap_or(v).to_string());
                let formula = right.is_none() && free_variable(v, answer);
                scope.formula |= formula;
                // `for $n = 10$`: a parameter set to a value the response never wrote before.
                // Not in a reason (`since $n = 10$`): a given.
                scope.parameter |= (!justifying || conditional)
                    && right.is_some_and(|r| parameter(left_side(v), r, answer) && !before.wrote(r));
                // `Double-checking, 15.`, `Edit: 15`: the first value right after the cue.
                let opening = revisits && !sentence.iter().any(|s| s.revised.is_some()) && words <= MAX_CUE_WORDS;
                let theirs = sentence.iter().any(|s| s.third_party && (s.revised.is_some() || s.said.is_some()));
                if !negated && right.unwrap_or(v).trim() == answer && theirs {
                    // The answer again (`...; ours is $27$`): whatever a third party got, it is not
                    // the response's.
                    rejects = true;
                }
                if !justifying && !negated && !operand {
                    let revised = (stating || opening || right.is_some()).then(|| right.unwrap_or(v).to_string());
                    let said = match right {
                        // `the sum is $3 + 4 = 7$`: the right side, said of the subject's head.
                        Some(r) if asserting && head == Head::Answer => Some((r.to_string(), Head::Answer)),
                        // An equation names what it is the value of; one that names the answer
                        // reads as the answer does (`$m - n = 5$`).
                        Some(_) => Some((v.clone(), before.equation_head(left_side(v)))),
                        // `12 if you count the endpoints`, `(22 if they are included)`: a value
                        // that opens its sentence or aside, after lead words only, under a
                        // condition; `if the problem means 12`: a value right after a word of
                        // another reading. Both are offered for the answer's quantity.
                        // `(Unless the problem wants the inclusive count — then 13.)`: a value
                        // that opens its clause in a sentence that supposes another reading; and
                        // the value of a label that is a condition or names another reading.
                        // Not a list (`Total: 1, 2, 3`), nor a part of the answer's own list,
                        // nor a value under a condition (`Check: 3 if x = 1`).
                        None if named == Some(k)
                            && !conditioned(toks.get(k + 1))
                            && (toks.get(k + 1) != Some(&Tok::Comma)
                                || !matches!(toks.get(k + 2), Some(Tok::Value(_))))
                            && !of_answer(v, answer) =>
                        {
                            Some((v.clone(), Head::Answer))
                        }
                        None if restating_cue => Some((v.clone(), Head::Answer)),
                        None if (lead_only && conditioned(toks.get(k + 1)))
                            || reading_cue
                            || (other_reading && clause_lead && !revisits)
                            || labelled == Some(k) =>
                        {
                            other_reading = true;
                            Some((v.clone(), Head::Answer))
                        }
                        // `the value we were asked for is $4$`: said of the answer noun.
                        None => asserting.then(|| (v.clone(), if described { Head::Answer } else { head })),
                    }
                    .filter(|_| !chained);
                    let subject = said.is_none() && !verb && right.is_none();
                    if (revised.is_some() || said.is_some() || offered.is_some()) && !repeated.at(spans, k) {
                        sentence.push(Stated { offered, revised, said, third_party, denied, formula, doubted });
                    }
                    if subject {
                        // Math in the subject (`the roots of $P(x)$ are`).
                        head = before.equation_head(v);
                    } else {
                        // What follows a stated value is a new subject (`..., and Sue got 5`).
                        (head, third_party, denied, verb) = (Head::Pronoun, false, false, false);
                    }
                } else {
                    if doubted.is_some() && !repeated.at(spans, k) {
                        let (offered, revised, said) = (None, None, None);
                        sentence.push(Stated { offered, revised, said, third_party, denied, formula, doubted });
                    }
                    if !verb && right.is_none() {
                        head = before.equation_head(v);
                    }
                }
                (stating, asserting, to_after, lead_only, reading_cue) = (false, false, false, false, false);
                restating_cue = false;
                (clause_lead, valued) = (false, true);
            }
            Tok::Comma | Tok::Open => {
                // An aside opens with its own lead (`(22 if ...)`).
                lead_only = *t == Tok::Open;
                (reading_cue, clause_lead) = (false, true);
                // A new clause; a reason or a condition that opened the sentence ends here.
                chained = false;
                belief.open = false;
                if fronted {
                    (justifying, fronted, supposed) = (false, false, true);
                    // `If reflections count as different, it's $3$`: a supposition about what
                    // the problem admits (a word of `Admission`), with no value of its own,
                    // supposes another reading of it (`If we substitute it back, ...` is a check).
                    other_reading |= hypothesis && admits && !condition_valued;
                }
                (head, third_party, denied, verb, own_subject) = (Head::Pronoun, false, false, false, false);
                (stating, asserting, negated, to_after) = (false, false, false, false);
            }
            Tok::Colon => {
                // A label that is a condition with no value of its own (`If order matters:`), or
                // that names another reading (`Alternative reading, with ordered pairs:`): the
                // value right after it is offered for that reading.
                if !valued && !revisits && ((fronted && justifying) || other_reading) {
                    other_reading = true;
                    labelled = Some(k + 1);
                }
                // A label that names the answer's quantity or a check, with no verb and no value
                // of its own (`Result of the verification:`, `Total:`): the value right after it
                // is stated for the answer.
                if !valued && !verb && head == Head::Answer && naming {
                    named = Some(k + 1);
                }
                // `..., which is a common mistake: the value is 10`: a reason or a condition ends
                // at a colon, and what follows states something of its own.
                (justifying, fronted, clause_lead) = (false, false, true);
            }
            Tok::Equals => {
                (stating, asserting, negated, to_after, verb, begun) = (true, true, false, false, true, true);
                belief.open = false;
            }
            Tok::Other | Tok::Percent => {
                (stating, asserting, negated, to_after, lead_only, reading_cue) =
                    (false, false, false, false, false, false);
                restating_cue = false;
                clause_lead = false;
                belief.open = false;
            }
        }
    }
    Later { values: out, last_restates }
}

/// The value of a question that ends at token `end` (a `?`) and holds one value, right before
/// it, after at most [`MAX_CUE_WORDS`] interjections, hedges or revising words (`Hmm. 13?`, `Or
/// rather 13?`, `Wait, 13?`).
fn questioned_value<'t>(toks: &'t [Tok<'_>], spans: Spans<'_>, from: usize, end: usize) -> Option<&'t str> {
    let question = spans.starts.get(end).is_some_and(|&at| spans.text[at..].starts_with('?'));
    if !question || end == 0 || end <= from || !matches!(toks.get(end), Some(Tok::SentenceEnd)) {
        return None;
    }
    let Some(Tok::Value(v)) = toks.get(end - 1) else { return None };
    let lead = &toks[from..end - 1];
    // Interjections (words the lexicon does not know: `Hmm`, `Um`), hedges and revising words
    // (`Or`, `Maybe`, `Wait`); a question word asks about a value (`What about 5?`) instead.
    let lead_word = |c: &Classes| c.is_empty() || c.has(Class::HedgeCue) || c.has(Class::Revision);
    let quiet = lead.iter().all(|t| matches!(t, Tok::Comma) || matches!(t, Tok::Word(_, c) if lead_word(c)));
    (quiet && lead.len() <= MAX_CUE_WORDS).then_some(v.as_str())
}

/// The values a statement after the answer offers ([`later_values`]).
pub(super) struct Later {
    /// Each value, its rule, and whether a plain statement gave it (a value said of the answer, a
    /// pronoun or a noun: not a revision, a doubt, an offer of candidates or a program's output).
    pub values: Vec<(String, Rule, bool)>,
    /// Whether the last sentence that states a value states the answer's own and no other
    /// (`None`: no sentence states one).
    pub last_restates: Option<bool>,
}

/// Whether `left = right` sets a parameter: its left side is one letter, not a letter of the
/// answer, and its right side a number (`n = 10`).
fn parameter(left: &str, right: &str, answer: &str) -> bool {
    let left = left.trim().trim_start_matches('$').trim();
    let right = right.trim().trim_end_matches('$').trim();
    let mut l = left.chars();
    let letter = matches!((l.next(), l.next()), (Some(c), None) if c.is_ascii_alphabetic());
    letter
        && !variables(answer).contains(&left.as_bytes()[0])
        && !right.is_empty()
        && right.bytes().all(|c| c.is_ascii_digit() || c == b'.')
}

/// Most bytes of a value read for its variables.
const MAX_FORMULA_BYTES: usize = 200;

/// The one-letter variables of a formula: ASCII letters that stand alone (not in a word, a
/// command's name or a text group), but `e` and `i`, which are constants.
fn variables(v: &str) -> Vec<u8> {
    let b = &v.as_bytes()[..floor_boundary(v, v.len().min(MAX_FORMULA_BYTES))];
    let mut out = Vec::new();
    let mut k = 0;
    while k < b.len() {
        if b[k] == b'\\' {
            let name = b[k + 1..].iter().take_while(|c| c.is_ascii_alphabetic()).count();
            let cmd = &b[k + 1..k + 1 + name];
            k += 1 + name.max(1);
            // `\text{ m}`, `\mathrm{cm}`: words, not variables.
            if matches!(cmd, b"text" | b"mathrm" | b"textrm" | b"mbox" | b"operatorname" | b"textbf" | b"textit")
                && b.get(k) == Some(&b'{')
            {
                k += b[k..].iter().position(|&c| c == b'}').map_or(b.len() - k, |j| j + 1);
            }
            continue;
        }
        if b[k].is_ascii_alphabetic() {
            let run = b[k..].iter().take_while(|c| c.is_ascii_alphabetic()).count();
            if run == 1 && !matches!(b[k], b'e' | b'i') {
                out.push(b[k]);
            }
            k += run;
            continue;
        }
        k += 1;
    }
    out
}

/// Whether `v` is a formula in a variable the answer does not use (`\frac{n(n+1)}{2}`, `2^n`
/// after `\boxed{55}`): a generalization to other parameters, not a value for the problem asked.
/// A formula has an operator, a power, a fraction or brackets beside its letters, so a number
/// with a unit letter (`28 m`) is none.
fn free_variable(v: &str, answer: &str) -> bool {
    let vars = variables(v);
    let shaped = v.bytes().any(|c| matches!(c, b'+' | b'-' | b'^' | b'(' | b'/' | b'*')) || v.contains("\\frac");
    shaped && !vars.is_empty() && {
        let own = variables(answer);
        vars.iter().any(|c| !own.contains(c))
    }
}

/// Whether the token after a value opens a condition on it (`if`, `unless`, `assuming`: the
/// lexicon's `Hypothesis`, or a word of reason that is also modal): `12 if you count the
/// endpoints` offers 12 under another reading.
fn conditioned(next: Option<&Tok<'_>>) -> bool {
    matches!(next, Some(Tok::Word(_, c))
        if c.has(Class::Hypothesis) || (c.has(Class::Reason) && c.has(Class::NegationOrModal)))
}

/// Whether the value `v` at token `k` is a share of belief rather than a value: a percentage
/// (`70%`, `65\%`, `70 percent`), the value right after a word of belief (`Certainty: 9/10`), or a
/// value placed on another one (`0.4 for $y$`). Notes in `belief` what the share says: a
/// percentage placed on the answer itself (`70% on $x$`, `$x$ (65%)`) splits belief over values.
fn share(toks: &[Tok<'_>], k: usize, v: &str, answer: &str, belief: &mut Belief) -> bool {
    let is_answer =
        |t: Option<&Tok<'_>>| matches!(t, Some(Tok::Value(x)) if of_answer(right_side(x).unwrap_or(x), answer));
    let sign = match toks.get(k + 1) {
        Some(Tok::Percent) => 1,
        Some(Tok::Word(_, c)) if c.has(Class::PercentWord) => 1,
        _ => 0,
    };
    let percent = sign == 1 || v.trim_end().ends_with('%');
    // The value the share is placed on: after a word of staking (`on`, `for`), or right after a
    // percentage (`70% $x$`).
    let after = k + 1 + sign;
    let after = after.min(toks.len());
    let staked = match toks.get(after) {
        Some(Tok::Word(_, c)) if c.has(Class::Staking) => Some(after + 1),
        Some(Tok::Value(_)) if percent => Some(after),
        _ => None,
    }
    .filter(|&j| matches!(toks.get(j), Some(Tok::Value(_))));
    let bracketed = k >= 2 && toks[k - 1] == Tok::Open && matches!(toks[k - 2], Tok::Value(_));
    // The value a percentage is placed on: the next one in its clause, with only words between
    // (`70% on $x$`, `70% chance it's $x$`), or the one before its brackets (`$x$ (65%)`).
    let placed = toks[after..].iter().take(MAX_CUE_WORDS + 1).find(|t| !matches!(t, Tok::Word(..)));
    let opened = std::mem::take(&mut belief.open);
    belief.shares |= percent || opened;
    belief.on_answer |= percent && (is_answer(placed) || (bracketed && is_answer(toks.get(k - 2))));
    percent || opened || staked.is_some()
}

/// Whether `v` is the answer or one of its parts (`(-20, -1)` of `(1, 2), (-20, -1)`): the
/// answer's text split at its top-level commas.
fn of_answer(v: &str, answer: &str) -> bool {
    let v = v.trim();
    let mut depth = 0i32;
    let mut start = 0;
    for (k, c) in answer.char_indices().chain(std::iter::once((answer.len(), ','))) {
        match c {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                if answer[start..k].trim() == v {
                    return true;
                }
                start = k + 1;
            }
            _ => {}
        }
    }
    false
}

/// The subject's head, third party and denial after a word with `classes` at token `k`, read
/// before the clause's verb.
fn subject(head: Head, third_party: bool, denied: bool, classes: Classes, k: usize) -> (Head, bool, bool) {
    let denied = denied || classes.has(Class::Denial);
    if classes.has(Class::ThirdParty) {
        (Head::Pronoun, true, denied)
    } else if classes.has(Class::AnswerNoun)
        || classes.has(Class::Computation)
        || classes.has(Class::AnswerWord)
        // `the check gives`, `This re-derivation yields`: a check's result is the answer's.
        || classes.has(Class::Verification)
        || (classes.has(Class::OtherReading) && !classes.has(Class::Reason))
    {
        // `that version gives`, `the other interpretation is`: the answer under another reading.
        (Head::Answer, third_party, denied)
    } else if classes.has(Class::Pronoun) {
        (Head::Pronoun, third_party, denied)
    } else if !FUNCTION.iter().any(|&c| classes.has(c)) {
        // A word the lexicon knows only as a noun or not at all (`problem`, `data`, `roots`).
        (Head::Noun(k), third_party, denied)
    } else {
        (head, third_party, denied)
    }
}

/// The classes of a possessive (`friend's`, `students'`) the lexicon does not know: its
/// owner's (a third party's answer is theirs).
fn possessive(w: &str, classes: Classes) -> Classes {
    if !classes.is_empty() {
        return classes;
    }
    match w.strip_suffix("'s").or_else(|| w.strip_suffix('\'')) {
        Some(owner) if !owner.is_empty() => crate::lexicon::classes(owner),
        _ => classes,
    }
}

/// The classes of words that name nothing: a subject's head is never one of them.
const FUNCTION: &[Class] = &[
    Class::HedgeFiller,
    Class::HedgeCue,
    Class::NegationOrModal,
    Class::Negation,
    Class::Revision,
    Class::Verity,
    Class::Reason,
    Class::Justification,
    Class::Hypothesis,
    Class::ListConnector,
    Class::ClauseWord,
    Class::PhraseFiller,
    Class::ConclusionOpener,
    Class::Stating,
    Class::ToAfter,
    Class::ByAfter,
    Class::Offering,
    Class::DomainOpener,
    Class::Closing,
    Class::Report,
    Class::Instruction,
    Class::InstructionLead,
    Class::Accomplish,
    Class::GiveUp,
    Class::Retraction,
    Class::Copula,
    Class::FinalWord,
    Class::Conclusive,
    Class::TaskWord,
    Class::Denial,
    // `included`, `allowed`, `counts`: a verb of what the problem admits, no head.
    Class::Admission,
];

/// Whether a value stated outside a revising sentence, said of `head`, is a candidate for the
/// answer's quantity (see the module doc's table).
fn counts(before: &mut Before<'_>, v: &str, head: Head, toks: &[Tok<'_>], read: Reading) -> bool {
    match head {
        Head::Answer => true,
        Head::Pronoun => read.other_reading || !before.wrote(v),
        // A noun in a sentence that supposes another reading (`that version gives 13`): a
        // candidate unless the response wrote the value before.
        Head::Noun(_) if read.other_reading && !before.wrote(v) => true,
        Head::Noun(k) => match toks.get(k) {
            Some(Tok::Word(w, _)) => {
                // The answer's sentence: before it, and after it up to its end (`... fills
                // $\boxed{12}$ boxes.`).
                let w = singular(w);
                let own = toks.iter().take_while(|t| !matches!(t, Tok::SentenceEnd | Tok::Code(_) | Tok::Break));
                let after = own.take(k).any(|t| matches!(t, Tok::Word(o, _) if singular(o) == w));
                (after || before.in_answer_sentence(w)) && !before.wrote(v)
            }
            _ => false,
        },
        Head::Other => false,
    }
}

/// The sentence of the answer: the end of `before`, back to the last sentence end or blank line
/// (display math on lines of its own stays in it).
fn answer_sentence(before: &str) -> &str {
    let from = floor_boundary(before, before.len().saturating_sub(MAX_SENTENCE_BYTES));
    let window = &before[from..];
    let b = window.as_bytes();
    let start = (0..b.len())
        .rev()
        .find(|&k| {
            (b[k] == b'\n' && k >= 1 && b[k - 1] == b'\n')
                || (matches!(b[k], b'.' | b'!' | b'?') && b.get(k + 1).is_some_and(u8::is_ascii_whitespace))
        })
        .map_or(0, |k| k + 1);
    &window[start..]
}

/// A word without its plural `s` (`integers` -> `integer`).
fn singular(w: &str) -> &str {
    match w.strip_suffix('s') {
        Some(s) if s.len() >= 3 => s,
        _ => w,
    }
}

/// `s` without whitespace and math delimiters, for comparing left sides.
fn compact(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace() && *c != '$').collect()
}

/// The left side of an equation: before its first top-level `=`.
fn left_side(v: &str) -> &str {
    let mut depth = 0i32;
    for (k, c) in v.char_indices() {
        match c {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => depth -= 1,
            '=' if depth == 0 => return &v[..k],
            _ => {}
        }
    }
    v
}

/// The left side of the answer's own equation, compacted: of the answer (`m - n = 4`) or of the
/// math right before it (`$m-n=9-5=\boxed{4}$`); empty when it has none.
fn answer_name(answer: &str, before: &str) -> String {
    if answer.contains('=') {
        return compact(left_side(answer));
    }
    let from = floor_boundary(before, before.len().saturating_sub(MAX_NAME_BYTES));
    let mut t = before[from..].trim_end();
    for opener in ["\\boxed{", "$$", "$", "\\(", "\\["] {
        t = t.strip_suffix(opener).unwrap_or(t).trim_end();
    }
    let Some(t) = t.strip_suffix('=') else { return String::new() };
    let start = t.rfind(['$', '\n', '(', '[']).map_or(0, |k| k + 1);
    compact(left_side(&t[start..]))
}

#[cfg(test)]
mod tests {
    use super::super::alternatives::alternatives_after;

    /// The later values after `answer` in `response` (`answer` is its last occurrence there).
    fn later(response: &str, answer: &str) -> Vec<String> {
        let at = response.rfind(answer).unwrap();
        let rest = response[at + answer.len()..].trim_start_matches(['}', '$']);
        alternatives_after(answer, &response[..at], rest).0.into_iter().map(|(v, _)| v).collect()
    }

    /// The later values after the box `\boxed{27}` of `response`.
    fn after_box(response: &str) -> Vec<String> {
        let at = response.find("\\boxed{27}").unwrap();
        let rest = response[at + "\\boxed{27}".len()..].trim_start_matches('$');
        alternatives_after("27", &response[..at], rest).0.into_iter().map(|(v, _)| v).collect()
    }

    #[test]
    fn a_different_value_for_the_answer_after_it() {
        let b = "So there are $\\boxed{27}$ pens.";
        for (tail, value) in [
            ("\n\n```python\nprint(count())\n```\n```output\n28\n```\nThe brute-force count is $28$.", "28"),
            ("\n\nLet me verify:\n```python\nprint(result)\n```\nThe code gives $28$.", "28"),
            ("\n\nRunning it:\n```python\nanswer = solve()\n```\nSo the program returns $28$.", "28"),
            (
                "\n\nHope this helps! Though if the problem meant the other case, the answer would be $28$ instead.",
                "28",
            ),
            ("\n\nHappy to help! (If your book counts it differently, it is $28$.)", "28"),
            ("\n\nJust note that under the other interpretation you would get $28$.", "28"),
            ("\n\nNote: with the given values 3 and 5, the result should be $28$.", "28"),
            ("\n\nLet me recount: it comes to $28$.", "28"),
            ("\n\n[Edit: corrected to $28$.]", "28"),
            ("\n\nA friend got $28$, and I agree.", "28"),
            ("\n\nWe get $27$, and a friend got $28$, which I agree with.", "28"),
            // A colon ends a reason; a word the lexicon does not know after `I` is a verb.
            ("\n\nThat box holds what many write, which is a common mistake: the value is $28$.", "28"),
            ("\n\nI personally get $28$.", "28"),
        ] {
            assert_eq!(later(&format!("{b}{tail}"), "27"), vec![value.to_string()], "{tail}");
        }
    }

    #[test]
    fn a_value_that_alone_ends_a_question_questions_the_answer() {
        let b = "So there are $\\boxed{27}$ pens.";
        for tail in [" Hmm. 28?", "\n\nOr 28?", "\n\nWait, maybe 28?"] {
            assert_eq!(after_box(&format!("{b}{tail}")), vec!["28"], "{tail}");
        }
        for tail in [" Hmm. 27?", "\n\nWhat about 28? It fails the condition.", "\n\nIs it 28? No, it is 27."] {
            assert!(!after_box(&format!("{b}{tail}")).contains(&"28".to_string()), "{tail}");
        }
    }

    #[test]
    fn a_number_in_words_that_ends_its_clause_is_stated() {
        let b = "So there are $\\boxed{27}$ pens.\n\n";
        assert_eq!(after_box(&format!("{b}The total comes to twelve.")), vec!["12"]);
        assert_eq!(after_box(&format!("{b}Double-checking, the count is five, not more.")), vec!["5"]);
        // The answer in words restates it; a number word that goes on is a word (`one of`).
        assert!(after_box(&format!("{b}The count is one of the largest here.")).is_empty());
        assert!(after_box(&format!("{b}In words, the total is twenty-seven.")).iter().all(|v| v == "27"));
    }

    #[test]
    fn a_supposition_about_what_the_problem_admits_is_another_reading() {
        // Values written before the answer, stated after a supposition that opens the sentence.
        let b = "We list 28 shapes and drop one reflection, and 9 = 2x + 3 gives $\\boxed{27}$.\n\n";
        for tail in [
            "N.B. If reflections count as different, it's $28$.",
            "P.S. If the order matters, it is $28$.",
            "Note that if the empty set is included, we get $28$.",
        ] {
            assert_eq!(after_box(&format!("{b}{tail}")), vec!["28"], "{tail}");
        }
        // A supposition with a value of its own, or about nothing the problem admits, is a check.
        for tail in ["If we substitute $x = 3$, we get $9$.", "If we substitute it back, we get $9$."] {
            assert!(after_box(&format!("{b}{tail}")).is_empty(), "{tail}");
        }
    }

    #[test]
    fn a_clause_that_describes_the_answer_noun_keeps_it_the_head() {
        // `we` after an answer noun opens a clause that describes it when a word of `Sought`
        // follows: the value is said of the answer, even one written before.
        let b = "We had 28 pens and gave one away, so there are $\\boxed{27}$ pens.\n\n";
        assert_eq!(after_box(&format!("{b}In summary, the value we were asked for is $28$.")), vec!["28"]);
        assert_eq!(after_box(&format!("{b}The number I was asked to find is $28$.")), vec!["28"]);
        // Without one, `we` opens a clause of its own: a value written before is a recap.
        assert!(after_box(&format!("{b}The number we started with is $28$.")).is_empty());
    }

    #[test]
    fn a_derivation_that_ends_on_the_answer_states_its_steps() {
        // An early answer, then the derivation: its plain statements are steps when its last
        // statement gives the answer again, and another value when it ends on that value.
        let b =
            "**Answer:** $\\boxed{27}$\n\nWe count the red apples: we get $20$.\nThen the green ones: we get $7$.\n\n";
        assert!(after_box(&format!("{b}Thus we get $27$.")).is_empty());
        assert!(after_box(&format!("{b}The count is $27$. Hope this helps!")).is_empty());
        assert_eq!(after_box(&format!("{b}Thus we get $28$.")), vec!["20", "7", "28"]);
        // A revision, a doubt or an offer of candidates on the way still offers its value.
        let revised = format!("{b}Actually the count is $28$.\n\nThus we get $27$.");
        assert_eq!(after_box(&revised), vec!["28"]);
        let offered = format!("{b}My runner-up is $28$.\n\nThus we get $27$.");
        assert_eq!(after_box(&offered), vec!["28"]);
    }

    #[test]
    fn a_block_on_its_own_paragraph_ends_its_sentence() {
        // A check that repeats a display line, then states its result on a label line: the block
        // and the label are two sentences (the label has no value before its colon).
        let b = "So $x + 20 = 47$ and $x = \\boxed{27}$.\n\nLet me verify this.\n\n";
        for block in ["\\[x = 27\\]", "$$x = 27$$", "$y = 7$", "```python\nprint(27)\n```"] {
            // (The block's own `x = 27` restates the answer: the checker finds it equal.)
            let other = format!("{b}{block}\n\nResult of the verification: $28$.");
            assert!(after_box(&other).contains(&"28".to_string()), "{block}");
            let same = format!("{b}{block}\n\nResult of the verification: $27$.");
            assert!(after_box(&same).iter().all(|v| v.contains("27") && !v.contains("28")), "{block}");
        }
        // A block inside a sentence is still part of it: no value before the colon is read.
        let inline = format!("{b}With $y = 7$ in hand, the check is done.");
        assert!(after_box(&inline).is_empty());
    }

    #[test]
    fn another_reading_or_a_revision_states_a_value_written_before() {
        let b = "We had 28 pens and gave one away, so there are $\\boxed{27}$ pens.";
        for tail in [
            "\n\nHappy to help! (If your book counts it differently, it is $28$.)",
            "\n\nCheers! (Under another convention, you get $28$.)",
            "\n\nGlad to help! (If your teacher means something else, it is $28$.)",
            "\n\nSome say $27$. I disagree and get $28$.",
            "\n\nThat was a slip; we obtain $28$.",
        ] {
            assert_eq!(later(&format!("{b}{tail}"), "27"), vec!["28".to_string()], "{tail}");
        }
        for tail in [
            // A check or a recap of a value written before states no other reading.
            "\n\nIf we add back the pen, we get $28$.",
            "\n\nIf we plug in $n = 3$, we get $28$.",
            "\n\nNote: we started from $28$ pens.",
            "\n\nI started from $28$.",
        ] {
            assert!(later(&format!("{b}{tail}"), "27").is_empty(), "{tail}");
        }
    }

    #[test]
    fn what_may_follow_an_answer() {
        let b = "We have 3 boxes and 5 bags, so 15 pens in all, plus 12 more: there are $\\boxed{27}$ pens.";
        for tail in [
            // Givens and intermediate results recapped, checks that confirm, pleasantries.
            "\n\n(Recall that the problem gives 3 and 5.)",
            "\n\n(Recall that the problem gives 66 and 200.)",
            "\n\nNote: we used the given values 3 and 5 above.",
            "\n\nThe data were 3 and 5; nothing else was needed.",
            "\n\nAlong the way we found 15, which was only an intermediate step.",
            "\n\n(The value 15 above is an intermediate result, not the answer.)",
            "\n\nRemember that 15 was just a partial result.",
            "\n\nCheck: $15 + 12 = 27$.",
            "\n\n```python\nprint(count())\n```\n```output\n27\n```\nThe brute-force count is $27$.",
            "\n\nI hope this helps!",
            // Someone else's value, rejected.
            "\n\nA friend got $28$ here, but that misses a step; the answer stays $27$.",
            "\n\n(A common wrong answer is $28$, from forgetting a case.)",
            "\n\nSome solutions online give $28$, which double-counts; ours is $27$.",
            // Another quantity.
            "\n\nThe roots of $P(x)$ are $-2$ and $-3$, so we have $-2 - 3 = -5$.",
            "\n\nSince the roots are $-2$ and $-3$, we have $-2 - 3 = -5$.",
        ] {
            assert!(later(&format!("{b}{tail}"), "27").is_empty(), "{tail}");
        }
    }

    #[test]
    fn revisions_in_other_languages() {
        let b = "So there are $\\boxed{27}$ pens.";
        for tail in [
            "\n\nNon, en fait c'est $28$.",
            "\n\nAttendez, je me suis trompé : c'est $28$.",
            "\n\nMoment, eigentlich ist es $28$.",
            "\n\nWarte, ich habe mich verrechnet, die richtige Antwort ist $28$.",
            "\n\nEspera, en realidad es $28$.",
            "\n\nAspetta, in realtà è $28$.",
            "\n\nEspere, na verdade é $28$.",
            "\n\nПодождите, на самом деле получается $28$.",
            "\n\n等等，其实应该是 $28$。",
            "\n\n我重新计算了一下，结果是 $28$。",
            "\n\n待って、実は $28$ です。",
            "\n\n잠깐, 사실은 $28$ 입니다.",
            "\n\nWait, I made an error, it's $28$.",
        ] {
            assert_eq!(after_box(&format!("{b}{tail}")), vec!["28".to_string()], "{tail}");
        }
        for tail in [
            // The same value restated or checked in another language.
            "\n\nDonc le résultat est bien $27$.",
            "\n\nProbe: Einsetzen ergibt wieder $27$.",
            "\n\n验证：代入后仍得 $27$。",
            "\n\nПроверка: подстановка снова даёт $27$.",
        ] {
            assert!(after_box(&format!("{b}{tail}")).is_empty(), "{tail}");
        }
    }

    #[test]
    fn another_candidate_a_self_assessment_offers() {
        let b = "So there are $\\boxed{27}$ pens.";
        for tail in [
            "\n\nConfidence: medium; the other candidate is $28$.",
            "\n\n**Confidence:** moderate. I'm torn between $27$ and $28$, leaning $27$.",
            "\n\nI'd put 70% on $27$ and 30% on $28$.",
            "\n\nConfidence breakdown: $27$ (65%), $28$ (35%).",
            "\n\nMy credence is about 0.6 for $27$ and 0.4 for $28$.",
            "\n\nI'd say 70% chance it's $27$ and 30% it's $28$.",
            "\n\nRunner-up: $28$.",
            "\n\nMy backup would be $28$.",
            "\n\nCandidat de secours : $28$.",
        ] {
            assert_eq!(after_box(&format!("{b}{tail}")), vec!["28".to_string()], "{tail}");
        }
        for tail in [
            // A share of belief is no value of the answer.
            "\n\nConfidence: 95%.",
            "\n\nCertainty: 9/10.",
            "\n\nConfidence score: 0.9",
            "\n\nI'm 95% sure the answer is $27$.",
            "\n\nI'd put about 90% on this answer.",
            // A percentage placed on another quantity splits no belief.
            "\n\nRecall that the tax was 8% on $100$ of goods.",
        ] {
            assert!(after_box(&format!("{b}{tail}")).is_empty(), "{tail}");
        }
    }

    #[test]
    fn a_value_offered_for_another_reading_after_the_answer() {
        // 28 is written before the answer: a value offered for another reading counts all the same.
        let b = "We had 28 pens and gave one away, so there are $\\boxed{27}$ pens.";
        for tail in [
            "\n\n**If zero counts as a valid value:** $28$",
            "\n\n(Alternative reading, with ordered pairs: $28$.)",
            "\n\n**Inclusive interpretation:** $28$",
            "\n\nNote: if order matters, you'd get $28$.",
            "\n\n(Unless the problem wants the inclusive count — then $28$.)",
            "\n\nThis holds unless the problem asks for ordered pairs: that version gives $28$.",
        ] {
            assert_eq!(later(&format!("{b}{tail}"), "27"), vec!["28".to_string()], "{tail}");
        }
        let b = "So there are $\\boxed{27}$ pens.";
        for tail in ["\n\nN.B. If order matters, it's $28$.", "\n\nIf the endpoints count: $28$"] {
            assert_eq!(later(&format!("{b}{tail}"), "27"), vec!["28".to_string()], "{tail}");
        }
        for tail in [
            // A condition that holds a value of its own labels a check; the same value restated.
            "\n\nIf we plug in $n = 3$: $28$",
            "\n\n**If order matters:** $27$",
            "\n\nIf order matters, you'd still get $27$.",
            "\n\n(Unless the problem wants the inclusive count — then still $27$.)",
            // A condition that opens a recap of a value written before, in the indicative.
            "\n\nIf we add back the pen, we get $28$.",
        ] {
            let b = "We had 28 pens and gave one away, so there are $\\boxed{27}$ pens.";
            assert!(later(&format!("{b}{tail}"), "27").is_empty(), "{tail}");
        }
    }

    #[test]
    fn the_last_paragraph_past_the_window_is_read() {
        let derivation = "We add the pens of each box in turn, one box after another. ".repeat(30);
        let b = format!("**Answer:** $\\boxed{{27}}$\n\n{derivation}");
        assert_eq!(after_box(&format!("{b}\n\nSo the final count is $28$.")), vec!["28".to_string()]);
        assert!(after_box(&format!("{b}\n\nSo the final count is $27$.")).is_empty());
        assert!(after_box(&format!("{b}\n\nI hope this helps!")).is_empty());
    }

    #[test]
    fn a_check_or_a_label_naming_the_quantity_states_its_value() {
        let b = "We had 28 pens and gave one away, so there are $\\boxed{27}$ pens.";
        for tail in [
            "\n\nSo the check gives $28$.",
            "\n\nThis re-derivation yields $28$.",
            "\n\nResult of the verification: $28$.",
            "\n\nWe had 28 pens.\n\nTotal: $28$",
        ] {
            assert_eq!(later(&format!("{b}{tail}"), "27"), vec!["28".to_string()], "{tail}");
        }
        for tail in [
            // A check under a condition, a printed list, a line of the derivation repeated.
            "\n\nCheck: $28$ if no pen is given away.",
            "\n\nLet me verify.\n\nWe had 28 pens and gave one away, so 27 are left.",
            "\n\nNote: we started from $28$ pens.",
        ] {
            let b = "We had 28 pens and gave one away, so 27 are left.\n\nThere are $\\boxed{27}$ pens.";
            assert!(later(&format!("{b}{tail}"), "27").is_empty(), "{tail}");
        }
    }

    #[test]
    fn a_generalization_doubt_or_rejection_after_the_answer() {
        let b = "So there are $\\boxed{27}$ pens.";
        for tail in [
            // Another problem: a formula in a free variable, a parameter set to another value.
            "\n\nMore generally, for $n$ items the count becomes $\\frac{n(n+1)}{2}$, which for $n = 10$ is $55$.",
            "\n\nIn general, the count is $2^n$.",
            "\n\nFor $n = 10$, it is $55$.",
            // Values the sentence rejects.
            "\n\n(The other candidates, $26$ and $29$, fail the conditions and were rejected.)",
            "\n\nNote that $26$ and $29$ came up too, but neither satisfies all the conditions.",
        ] {
            assert!(after_box(&format!("{b}{tail}")).is_empty(), "{tail}");
        }
        for (tail, value) in [
            // A revision, an answer noun, a reason that states a given: still candidates.
            ("\n\nActually, the count is $2n+1$.", "2n+1"),
            ("\n\nFor $n = 10$, the count is $28$.", "28"),
            ("\n\nIt is $28$, since $n = 10$.", "28"),
            // Doubt between values offers them all; a rejected candidate is no rejection of another.
            ("\n\nSorry, I cannot tell whether the answer is $27$ or $28$.", "28"),
            ("\n\nThe other candidate is $28$.", "28"),
        ] {
            assert_eq!(after_box(&format!("{b}{tail}")), vec![value.to_string()], "{tail}");
        }
    }

    #[test]
    fn the_answers_own_equation_names_it() {
        let b = "So $m-n=9-5=\\boxed{4}$.";
        assert_eq!(later(&format!("{b} Note: $m - n = 5$."), "4"), vec!["m - n = 5"]);
        assert!(later(&format!("{b} Note: $9 - 5 = 4$ and $2 + 3 = 5$."), "4").is_empty());
    }
}
