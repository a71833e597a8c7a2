//! The scoring pipeline: extract -> parse -> compare, for one response against one gold answer.
//!
//! The gold answer goes through the same extraction path as the response (it may be a bare answer
//! or a whole reference solution with a `\boxed{}`), is parsed once ([`Gold`]), and can then be
//! compared with any number of responses, from any number of threads.

use crate::ast::Expr;
use crate::equiv::{equivalent, Decision, EquivOptions, Verdict};
use crate::extract::{extract, Answer, ExtractOptions, Rule, Source};
use crate::latex::{parse, ParseError};
use crate::limits::{Budget, LimitKind, Limits};

/// What a reward looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RewardKind {
    /// 1 for correct, 0 otherwise.
    #[default]
    Binary,
    /// 1 for correct, -1 otherwise.
    Signed,
}

/// When to fall back to the last number of a response that has no explicit final answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LastNumber {
    /// With `--extract lenient`, when the gold answer is a plain number (the GSM8K convention);
    /// never in strict mode.
    #[default]
    Auto,
    /// Always, also in strict mode (an explicit opt-in).
    Always,
    /// Never.
    Never,
}

/// What a response cut off mid-derivation (no final-answer marker, last line unfinished) answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Truncated {
    /// Nothing: an unfinished response has no answer (its last formula is a step, not a result).
    #[default]
    NoAnswer,
    /// Its last math block (or last number), as for a finished response without a marker.
    Lenient,
}

/// Which readings of a response count as its answer (see the final-answer contract in
/// `verify/README.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Extraction {
    /// Only a committed answer: a box, an answer tag, an answer phrase, `####`, a bold or choice
    /// final line, or a response that is nothing but an answer. Anything else is `no_answer`.
    #[default]
    Strict,
    /// Also the last math block of the text, the last number (see [`LastNumber`]) and an answer in
    /// the reasoning before `</think>`: for base models that never mark an answer. Risk: a
    /// response that gives up (`I tried 3, 8 and 11 but could not finish.`) is read as answering
    /// its last number, so a policy trained on this reward learns to end on a guess.
    Lenient,
}

/// Everything that changes a verdict. `Config::default()` is what the CLI, bench and trainer use.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// The cost bounds of one call.
    pub limits: Limits,
    /// The equivalence options (decimal digits, tolerances).
    pub equiv: EquivOptions,
    /// How a verdict becomes a reward.
    pub reward: RewardKind,
    /// Which readings count as an answer (strict by default).
    pub extract: Extraction,
    /// When the lenient reading falls back to the last number (`Always` also in strict mode).
    pub last_number: LastNumber,
    /// What a response that stops mid-derivation answers (see [`Truncated`]).
    pub truncated: Truncated,
}

/// The outcome class of one scored response.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// The final answer equals the gold.
    Correct,
    /// It does not.
    Wrong,
    /// No final answer could be found in the response.
    NoAnswer,
    /// An answer was found but could not be parsed (and did not match as text).
    Unparsable,
    /// A cost bound was hit; see [`Score::limit`].
    Limit,
    /// The final statement offers several different candidates (a hedge: `5, or perhaps 6`);
    /// see [`Score::candidates`]. Never rewarded.
    Ambiguous,
    /// The gold answer cannot be read (empty, or it does not parse): never rewarded, counted
    /// apart in reports so a bad dataset row shows up.
    InvalidGold,
}

impl Status {
    /// Every status, in the order reports list them.
    pub const ALL: [Status; 7] = [
        Status::Correct,
        Status::Wrong,
        Status::NoAnswer,
        Status::Ambiguous,
        Status::Unparsable,
        Status::Limit,
        Status::InvalidGold,
    ];

    /// Stable snake_case name for JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Correct => "correct",
            Status::Wrong => "wrong",
            Status::NoAnswer => "no_answer",
            Status::Unparsable => "unparsable",
            Status::Limit => "limit",
            Status::Ambiguous => "ambiguous",
            Status::InvalidGold => "invalid_gold",
        }
    }
}

/// The result of scoring one response.
#[derive(Clone, Debug, PartialEq)]
pub struct Score {
    /// Whether the final answer equals the gold.
    pub correct: bool,
    /// 1/0 or 1/-1 according to [`RewardKind`].
    pub reward: f64,
    /// The outcome class.
    pub status: Status,
    /// The answer string extracted from the response, if any.
    pub extracted: Option<String>,
    /// Which bound was hit when `status` is `Limit`.
    pub limit: Option<LimitKind>,
    /// The rule that decided the comparison (e.g. "exact", "decimal_tolerance", "text").
    pub rule: &'static str,
    /// The candidates of the final statement when it offers several (`ambiguous`), else empty.
    pub candidates: Vec<String>,
}

/// A gold answer, extracted and parsed once.
#[derive(Clone, Debug)]
pub struct Gold {
    /// The gold as given.
    pub raw: String,
    /// The extracted gold answer text.
    pub answer: String,
    /// The parsed gold, or why it could not be parsed.
    pub parsed: Result<Expr, ParseError>,
    /// Whether the gold is a plain number (turns on the last-number fallback in `Auto` mode).
    pub is_plain_number: bool,
    /// The choice letter when the gold is a multiple-choice label (`C`, `(C)`, `\text{C}`).
    choice: Option<char>,
    /// Why the gold cannot be read, when it cannot (see [`Status::InvalidGold`]).
    pub invalid: Option<&'static str>,
    /// Whether the gold is a list or set of values (`2, 3`, `\{1, 2\}`, `\pm 2`, a union):
    /// several candidates may then form it as a whole.
    pub is_collection: bool,
    /// Whether the gold is one ordered object of several values (a point, an interval, a
    /// matrix): listed candidates (`$x = 2$ and $y = 3$`) may form it as a whole.
    pub is_ordered: bool,
    /// The limits the gold was parsed under: a response whose answer text is the gold's parses
    /// the same way under the same limits, so the gold's parse is reused for it.
    parse_limits: Limits,
}

impl Gold {
    /// Extract and parse a gold answer.
    pub fn new(gold: &str, cfg: &Config) -> Gold {
        // A gold is trusted and never cut off: every reading counts, and its last math block
        // counts whatever its last character.
        let gold_opts = ExtractOptions { truncated_fallback: true, lenient: true, ..ExtractOptions::default() };
        // A gold no marker can read (a number, `\frac{1}{2}`) is read whole, without the strategies.
        let answer = crate::extract::plain_gold(gold)
            .unwrap_or_else(|| extract(gold, &gold_opts).map(|a| a.text).unwrap_or_else(|| gold.trim().to_string()));
        let parsed = parse(&answer, &cfg.limits);
        let is_plain_number = is_plain_number(&answer);
        let choice = Answer::bare(&answer, Source::Whole).choice_letter();
        let invalid = invalid_gold(gold, &answer, &parsed);
        let is_collection = parsed.as_ref().is_ok_and(is_collection);
        let is_ordered =
            parsed.as_ref().is_ok_and(|e| matches!(e, Expr::Tuple(_) | Expr::Interval { .. } | Expr::Matrix(_)));
        Gold {
            raw: gold.to_string(),
            answer,
            parsed,
            is_plain_number,
            choice,
            invalid,
            is_collection,
            is_ordered,
            parse_limits: cfg.limits.clone(),
        }
    }

    /// Score one response against this gold.
    pub fn score(&self, response: &str, cfg: &Config) -> Score {
        self.score_explained(response, cfg).score
    }

    /// Parse one extracted answer and compare it with the gold.
    /// `budget` is shared by every answer tried for one response, so the alternatives never
    /// multiply the cost bound of a call.
    fn judge(&self, answer: &Answer, cfg: &Config, budget: &mut Budget) -> Judged {
        let parsed = if answer.text == self.answer && cfg.limits == self.parse_limits {
            self.parsed.clone()
        } else {
            parse(&answer.text, &cfg.limits)
        };
        let decision = match (&self.parsed, &parsed) {
            (Ok(g), Ok(p)) => Some(equivalent(g, p, &cfg.equiv, budget)),
            _ => None,
        };
        let (status, rule, limit) = match (&decision, &parsed, &self.parsed) {
            (Some(Decision { verdict: Verdict::Equal, rule }), _, _) => (Status::Correct, *rule, None),
            (Some(Decision { verdict: Verdict::Limit(k), rule }), _, _) => (Status::Limit, *rule, Some(*k)),
            (Some(Decision { verdict: Verdict::NotEqual, rule }), Ok(p), Ok(g)) => {
                // Text equality may only rescue a comparison where a side is text: two parsed
                // expressions that differ stay different (`\sqrt{2}3` is not `\sqrt{23}`).
                let texty = matches!(p, Expr::Text(_)) || matches!(g, Expr::Text(_));
                if texty && same_text(&self.answer, &answer.text) {
                    (Status::Correct, "text", None)
                } else if let Some(rule) = text_with_one_number(g, p, cfg, budget) {
                    (Status::Correct, rule, None)
                } else {
                    (Status::Wrong, *rule, None)
                }
            }
            // Unreachable: a decision exists only when both sides parsed.
            (Some(Decision { rule, .. }), _, _) => (Status::Wrong, *rule, None),
            (None, Err(ParseError::Limit(k)), _) | (None, _, Err(ParseError::Limit(k))) => {
                (Status::Limit, "limit", Some(*k))
            }
            (None, _, _) => {
                if same_text(&self.answer, &answer.text) {
                    (Status::Correct, "text", None)
                } else if parsed.is_err() {
                    (Status::Unparsable, "unparsable", None)
                } else {
                    // The gold did not parse but the response did: compare as text only.
                    (Status::Wrong, "text", None)
                }
            }
        };
        Judged { answer: answer.clone(), parsed, decision, status, rule, limit }
    }

    /// Score one response and keep the intermediate results (for `rlverify check --explain`).
    pub fn score_explained(&self, response: &str, cfg: &Config) -> Explained {
        let mut out = Explained {
            score: Score {
                correct: false,
                reward: reward_of(false, cfg.reward),
                status: Status::NoAnswer,
                extracted: None,
                limit: None,
                rule: "none",
                candidates: Vec::new(),
            },
            answer: None,
            parsed: None,
            decision: None,
        };
        if let Some(why) = self.invalid {
            // The model is not to blame for a bad dataset row: 0, also with signed rewards.
            out.score.reward = 0.0;
            out.score.status = Status::InvalidGold;
            out.score.rule = why;
            return out;
        }
        if response.len() > cfg.limits.max_response_bytes {
            out.score.status = Status::Limit;
            out.score.limit = Some(LimitKind::ResponseTooLong);
            out.score.rule = "limit";
            return out;
        }
        let lenient = cfg.extract == Extraction::Lenient;
        let opts = ExtractOptions {
            lenient,
            last_number_fallback: match cfg.last_number {
                LastNumber::Auto => lenient && self.is_plain_number,
                LastNumber::Always => true,
                LastNumber::Never => false,
            },
            truncated_fallback: cfg.truncated == Truncated::Lenient,
            ..ExtractOptions::default()
        };
        let Some(answer) = extract(response, &opts) else {
            return out;
        };
        if let Some(void) = answer.void {
            // The response does not assert its marked answer as its own (a negated, questioned or
            // retracted box, someone else's value, a format example, a problem it says it did not
            // solve): no committed answer, so nothing extracted (`--explain` still shows it).
            out.score.rule = void.as_str();
            out.answer = Some(answer);
            return out;
        }
        let mut budget = Budget::new(&cfg.limits);
        let judged = self.judge_statement(&answer, cfg, &mut budget);
        let Judged { answer, parsed, decision, status, rule, limit } = judged;
        out.score.extracted = Some(answer.text.clone());
        let correct = status == Status::Correct;
        out.score.correct = correct;
        out.score.reward = reward_of(correct, cfg.reward);
        out.score.status = status;
        out.score.limit = limit;
        out.score.rule = rule;
        if status == Status::Ambiguous {
            out.score.candidates = answer.parts();
        }
        out.answer = Some(answer);
        out.parsed = Some(parsed);
        out.decision = decision;
        out
    }

    /// Judge a final statement: one candidate is the answer; several are `ambiguous` unless the
    /// gold is a collection they form as a whole (a list or set; a point or interval only when
    /// the candidates are listed, never offered as alternatives), or every one of them equals the
    /// gold (a value restated: `\boxed{5}` twice, `$\frac12$, or $0.5$`).
    fn judge_statement(&self, answer: &Answer, cfg: &Config, budget: &mut Budget) -> Judged {
        let candidates = &answer.candidates;
        if candidates.len() > 1 {
            if self.is_collection || (self.is_ordered && !answer.hedged()) {
                let whole = self.judge_candidate(answer, cfg, budget);
                if whole.status == Status::Correct || self.is_collection {
                    return whole;
                }
            }
            let mut last = None;
            for (k, c) in candidates.iter().enumerate() {
                let single = Answer::bare(&c.text, answer.source);
                let j = self.judge_candidate(&single, cfg, budget);
                if j.status != Status::Correct {
                    let status = if matches!(j.status, Status::Limit) { Status::Limit } else { Status::Ambiguous };
                    // The rule that offered the first candidate that differs (`hedge`, `later_value`,
                    // ...), or `several_candidates` when the marker itself gave several.
                    let rule = match answer.rule_of(k.max(1)) {
                        Rule::Marker(_) => Rule::SeveralCandidates,
                        rule => rule,
                    };
                    return Judged { answer: answer.clone(), status, rule: rule.as_str(), ..j };
                }
                last = Some(j);
            }
            if let Some(j) = last {
                return Judged { answer: answer.clone(), rule: Rule::Restated.as_str(), ..j };
            }
        }
        self.judge_candidate(answer, cfg, budget)
    }

    /// Judge one candidate (or a collection answer as a whole): its wording, then the parse and
    /// the comparison, with the multiple-choice readings of a labelled option.
    fn judge_candidate(&self, answer: &Answer, cfg: &Config, budget: &mut Budget) -> Judged {
        // Words the gold itself has are no qualifier (`\text{Monday}` in both).
        let qualified = answer.qualified();
        if qualified && !same_text(&self.answer, &answer.text) {
            // `\text{less than } 7`, `7 \text{ or so}`: the words change the value.
            return Judged::rejected(answer, "a value with words that qualify it", Rule::Qualified);
        }
        if self.choice.is_some() && answer.article_led() {
            // `The answer is a tricky one`: the article that opens a sentence names no choice.
            return Judged::rejected(answer, "a sentence, not a choice label", Rule::NotAChoice);
        }
        let judged = self.judge(answer, cfg, budget);
        if judged.status == Status::Correct {
            return judged;
        }
        // `The final answer is $\frac{1}{}$ = 7`: a plain value restating an answer that cannot be
        // parsed.
        if judged.status == Status::Unparsable {
            if let Some(v) = &answer.restated {
                let alt = Answer::bare(v, answer.source);
                let j = self.judge(&alt, cfg, budget);
                if j.status == Status::Correct {
                    return Judged { answer: answer.clone(), ..j };
                }
            }
        }
        // `five`, `٤٢`, `４２`: a number written in words or in another script, by its value.
        if let Some(n) = crate::numerals::ascii_number(&answer.text) {
            let j = self.judge(&Answer::bare(n.as_str(), answer.source), cfg, budget);
            if j.status == Status::Correct {
                return Judged { answer: answer.clone(), ..j };
            }
            // `five apples` -> `5 apples` -> `5`, with the allow-lists of the words (never a unit
            // the parser read: `five minutes` is not `5`).
            let read_a_unit = j.parsed.as_ref().is_ok_and(crate::units::has_unit);
            let words = Answer::bare(n.as_str(), answer.source);
            if let Some(value) = words.bare_value().filter(|_| !read_a_unit) {
                let j = self.judge(&Answer::bare(value, answer.source), cfg, budget);
                if j.status == Status::Correct {
                    return Judged { answer: answer.clone(), ..j };
                }
            }
        }
        // `12 apples`, `the 100th day`: the value without the words the allow-lists accepted (a
        // unit the parser read is no such word: `3 \text{ minutes}` is not `3`).
        let read_a_unit = judged.parsed.as_ref().is_ok_and(crate::units::has_unit);
        if let Some(value) = answer.bare_value().filter(|_| !read_a_unit) {
            let alt = Answer::bare(value, answer.source);
            let j = self.judge(&alt, cfg, budget);
            if j.status == Status::Correct {
                return Judged { answer: answer.clone(), ..j };
            }
        }
        // A multiple-choice gold (`C`) against a labelled answer (`(C) y = 2x + 1`): the
        // label; another gold against it: the option text (`y = 2x + 1`).
        if let Some((letter, option)) = answer.choice_label() {
            if self.choice.is_none() {
                let alt = Answer::bare(option.trim(), answer.source);
                let j = self.judge(&alt, cfg, budget);
                if j.status == Status::Correct {
                    return j;
                }
            } else if Some(letter) == self.choice {
                return Judged {
                    answer: answer.clone(),
                    parsed: Ok(Expr::Sym(letter.to_string())),
                    decision: None,
                    status: Status::Correct,
                    rule: "choice_letter",
                    limit: None,
                };
            }
        }
        judged
    }
}

/// One extracted answer, parsed and compared.
struct Judged {
    answer: Answer,
    parsed: Result<Expr, ParseError>,
    decision: Option<Decision>,
    status: Status,
    rule: &'static str,
    limit: Option<LimitKind>,
}

impl Judged {
    /// `answer` is wrong by a contract rule, before any parse: `why` says what it is instead.
    fn rejected(answer: &Answer, why: &str, rule: Rule) -> Judged {
        Judged {
            answer: answer.clone(),
            parsed: Err(ParseError::Syntax { message: why.into(), position: 0 }),
            decision: None,
            status: Status::Wrong,
            rule: rule.as_str(),
            limit: None,
        }
    }
}

/// A whole-text prediction that states one number against a numeric gold: `\text{Bo earns
/// \$12.}` against `12`. The text must hold exactly one number, and its words must leave that
/// number as stated (the allow-lists of [`wording`]: a stating word before it, units or counted
/// nouns after it); the number is then compared like any answer.
fn text_with_one_number(g: &Expr, p: &Expr, cfg: &Config, budget: &mut Budget) -> Option<&'static str> {
    let Expr::Text(t) = p else { return None };
    if !matches!(g, Expr::Num(_) | Expr::Neg(_) | Expr::Div(..))
        || t.len() > 200
        || Answer::bare(t, Source::Whole).qualified()
    {
        return None;
    }
    let mut number: Option<&str> = None;
    for w in t.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '!' | '?' | '(' | ')')) {
        let w = w.trim_matches(|c: char| matches!(c, '.' | ':' | '$' | '"' | '\'' | '\\'));
        if w.bytes().any(|b| b.is_ascii_digit()) {
            let numeric = w.bytes().all(|b| b.is_ascii_digit() || b == b'.');
            if number.is_some() || !numeric {
                return None;
            }
            number = Some(w);
        }
    }
    let n = parse(number?, &cfg.limits).ok()?;
    (equivalent(g, &n, &cfg.equiv, budget).verdict == Verdict::Equal).then_some("text_number")
}

/// Why a gold cannot be read, if it cannot: it is empty, or it is malformed text that no
/// comparison can trust (control characters, as when a JSON layer turned `\f` of `\frac` into a
/// form feed; unbalanced braces). A gold that is well formed but does not parse (`3:4:5`,
/// `\cotx`) is still compared as text.
fn invalid_gold(raw: &str, answer: &str, parsed: &Result<Expr, ParseError>) -> Option<&'static str> {
    if answer.trim().is_empty() {
        return Some("empty");
    }
    if crate::latex::has_eaten_backslash(raw) || raw.chars().any(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\r'))
    {
        return Some("control_characters");
    }
    if parsed.is_ok() {
        return None;
    }
    let (mut depth, mut escaped) = (0i64, false);
    for c in answer.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return Some("unbalanced_braces");
        }
    }
    (depth != 0).then_some("unbalanced_braces")
}

/// Whether a parsed gold is a collection of values that several candidates may form as a whole:
/// a list, a set, `\pm`, a union of intervals or sets, or a list of equations.
fn is_collection(e: &Expr) -> bool {
    match e {
        Expr::List(_) | Expr::Set(_) | Expr::Union(_) | Expr::PlusMinus(..) => true,
        Expr::Relation { terms, .. } => terms.iter().any(is_collection),
        _ => false,
    }
}

/// A score with the steps that led to it.
#[derive(Clone, Debug)]
pub struct Explained {
    /// The score.
    pub score: Score,
    /// The extracted answer of the response.
    pub answer: Option<Answer>,
    /// How the extracted answer parsed.
    pub parsed: Option<Result<Expr, ParseError>>,
    /// The comparison, when both sides parsed.
    pub decision: Option<Decision>,
}

/// Score one response against one gold answer (extracts and parses the gold each call; use
/// [`Gold`] to score many responses against the same gold).
pub fn score(response: &str, gold: &str, cfg: &Config) -> Score {
    Gold::new(gold, cfg).score(response, cfg)
}

/// True when `pred` (a response or a bare answer) is equivalent to `gold` under the default config.
pub fn check(gold: &str, pred: &str) -> bool {
    score(pred, gold, &Config::default()).correct
}

fn reward_of(correct: bool, kind: RewardKind) -> f64 {
    match (correct, kind) {
        (true, _) => 1.0,
        (false, RewardKind::Binary) => 0.0,
        (false, RewardKind::Signed) => -1.0,
    }
}

/// A plain number: optional sign, digits with optional thousands separators, optional decimals.
fn is_plain_number(s: &str) -> bool {
    let t = s.trim().trim_start_matches(['-', '+', '−']);
    let t = t.trim_start_matches('$').trim_end_matches('$');
    !t.is_empty()
        && t.chars().any(|c| c.is_ascii_digit())
        && t.chars().all(|c| c.is_ascii_digit() || c == ',' || c == '.')
}

/// Text comparison after normalisation: case, whitespace, `\text{}`-style wrappers, braces, `$`,
/// and trailing sentence punctuation. Inner punctuation is kept (`3.6` is not `36`).
pub(crate) fn same_text(a: &str, b: &str) -> bool {
    fn norm(s: &str) -> String {
        let mut s = s.to_string();
        for wrapper in ["\\textbf", "\\text", "\\mathrm", "\\mbox"] {
            s = s.replace(wrapper, "");
        }
        let out: String = s
            .chars()
            .filter(|c| !c.is_whitespace() && !matches!(c, '{' | '}' | '$' | '\\'))
            .flat_map(|c| c.to_lowercase())
            .collect();
        out.trim_end_matches(['.', ',', ';']).to_string()
    }
    let (na, nb) = (norm(a), norm(b));
    !na.is_empty() && na == nb
}

/// Source of an extracted answer, re-exported for callers that report it.
pub type AnswerSource = Source;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_numbers() {
        assert!(is_plain_number("42"));
        assert!(is_plain_number("-1,234.5"));
        assert!(!is_plain_number("x"));
        assert!(!is_plain_number("\\frac{1}{2}"));
        assert!(!is_plain_number(""));
    }

    #[test]
    fn text_comparison_keeps_inner_punctuation() {
        assert!(same_text("5am", "5\\text{am}"));
        assert!(same_text("Monday.", "\\text{monday}"));
        assert!(!same_text("36", "3.6"));
        assert!(!same_text("", ""));
    }

    #[test]
    fn truncated_responses_follow_the_config() {
        let steps: String = (1..=30).map(|k| format!("## Step {k}: we simplify the expression and go on.\n")).collect();
        let cut = format!("{steps}## Step 31: so $m = 3$.\n## Step 32: Then we divide both sides by");
        let finished = format!("{steps}## Step 31: so $m = 3$.");
        let strict = Config::default();
        let lenient = Config { truncated: Truncated::Lenient, ..Config::default() };
        assert_eq!(strict.truncated, Truncated::NoAnswer);
        let s = score(&cut, "3", &strict);
        assert_eq!((s.correct, s.status), (false, Status::NoAnswer));
        let lenient = Config { extract: Extraction::Lenient, ..lenient };
        assert!(score(&cut, "3", &lenient).correct);
        // A step that ends the text is no committed answer (strict), the last block (lenient).
        assert_eq!(score(&finished, "3", &strict).status, Status::NoAnswer);
        assert!(score(&finished, "3", &lenient).correct);
        // A marked answer counts whatever comes after it.
        assert!(score(&format!("{steps}so \\boxed{{3}}. Then we check that"), "3", &strict).correct);
    }

    #[test]
    fn invalid_gold_is_never_rewarded_nor_penalised() {
        let signed = Config { reward: RewardKind::Signed, ..Config::default() };
        for gold in ["", "  ", "\\frac{1}{2", "\u{c}rac{1}{2}"] {
            let s = score("\\boxed{1}", gold, &signed);
            assert_eq!((s.status, s.correct, s.reward), (Status::InvalidGold, false, 0.0), "{gold:?}");
        }
        // Well formed but not parsable: compared as text.
        assert!(score("3:4:5", "3:4:5", &Config::default()).correct);
    }

    #[test]
    fn a_property_of_the_answer_is_no_answer() {
        let cfg = Config::default();
        for response in [
            "We add the digits. The sum of the digits of the answer is 9.",
            "We add the digits. So the sum of the digits of the answer is $\\boxed{9}$.",
        ] {
            let s = score(response, "9", &cfg);
            assert_eq!((s.correct, s.status, s.rule), (false, Status::NoAnswer, "property"), "{response}");
        }
        for response in ["We add the digits. The answer is 9.", "We add the digits. The value of the answer is 9."] {
            assert!(score(response, "9", &cfg).correct, "{response}");
        }
    }

    #[test]
    fn signed_reward() {
        assert_eq!(reward_of(false, RewardKind::Signed), -1.0);
        assert_eq!(reward_of(true, RewardKind::Signed), 1.0);
        assert_eq!(reward_of(false, RewardKind::Binary), 0.0);
    }
}
