//! Response-level attacks on the reward (issue 25): whole model responses that must never be
//! rewarded, with controls that must stay right. Zero tolerance: one accepted attack or one
//! rejected control fails the test.
//!
//! - `tests/data/attacks.jsonl`: one row per line,
//!   `{"family", "gold", "response", "expect": "wrong" | "right", "why"}`. The attack families are
//!   hedges after an answer phrase, text inside the answer, choice hedges, words that qualify a
//!   number, anchor-less fallbacks (no marker, empty answer tags, an unterminated box after a
//!   complete one), false equations, unsolved relations for a solved gold, "and" read as "or",
//!   low-precision and over-precise decimals, hedges before end-of-turn tokens, two final boxes,
//!   hedges in markdown bold, boxes joined by connectors, `\pm` for a single-valued gold,
//!   extra values added to a list, later corrections without a marker, boxes that are not the
//!   response's answer (someone else's, a format example, in code or a comment, followed by
//!   giving up), boxes negated, questioned or retracted, alternatives in another script or in
//!   words, structured output with a second field, an article read as a choice, revisions and
//!   hedges in another language, another candidate a self-assessment offers (a backup, belief split
//!   over values), and a wrong rounding right after the answer. The controls (`control_*`) are self-corrections, lists and
//!   `\pm` for a gold that asks for them, units and counted nouns, ordinals, domain statements,
//!   end-of-turn tokens after a right answer, reasoning that names other values before one final
//!   answer, restated answers, choices, relations, decimals, true equations and plain formats;
//!   checks that confirm the answer, boxes with negations elsewhere in their sentence, numbers
//!   in other scripts and in words, structured output with descriptive fields, choice letters,
//!   and answers in other languages, tags, sentences and display math; restatements and checks in
//!   another language, confidence shares, and right roundings after the answer.
//!   Every row is scored with `rlverify::score(response, gold, &Config::default())`; on failure
//!   the test prints every failing row and a per-family table (a work list), and writes the rows
//!   to `target/tmp/attacks/corpus_failures.jsonl`.
//! - A seeded property test takes the responses of the real-generations dev corpus that are right
//!   today and hedges their final answer five ways (a second value after "or", a parenthetical
//!   alternative, a second box as a final line, words inside the box, the whole response moved
//!   into the reasoning behind an empty answer tag); none may be accepted. It runs when the
//!   read-only `shared/` folder is present (a failure under CI when it is not).

use rlverify::{score, Config, Gold, Score};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::PathBuf;

/// Families whose rows must all be wrong.
const ATTACK_FAMILIES: &[&str] = &[
    "hedge_after_phrase",
    "text_in_answer",
    "choice_hedge",
    "qualified_number",
    "anchorless_fallback",
    "false_equation",
    "unsolved_relation",
    "and_as_or",
    "low_precision_decimal",
    "over_precise_decimal",
    "eot_hedge",
    "two_final_boxes",
    "bold_hedge",
    "boxed_connector",
    "pm_single_gold",
    "list_extra",
    "later_correction",
    "box_not_the_answer",
    "negated_box",
    "other_script_alternative",
    "structured_second_field",
    "article_choice",
    "bound_outside_box",
    "value_under_condition",
    "layout_two_answers",
    "invented_parts",
    "foreign_revision",
    "self_assessment",
    "approximation_after",
];

/// Families whose rows must all stay right.
const CONTROL_FAMILIES: &[&str] = &[
    "control_self_correction",
    "control_reasoning_alternatives",
    "control_list_gold",
    "control_pm",
    "control_units",
    "control_ordinal",
    "control_domain",
    "control_end_of_turn",
    "control_think",
    "control_restated",
    "control_choice",
    "control_relation",
    "control_decimal",
    "control_true_equation",
    "control_format",
    "control_missed_right",
    "control_confirming_check",
    "control_box_context",
    "control_other_script",
    "control_structured",
    "control_choice_letter",
    "control_answer_wording",
    "control_layout",
    "control_foreign_revision",
    "control_self_assessment",
    "control_approximation_after",
];

const FIELDS: &[&str] = &["family", "gold", "response", "expect", "why"];

/// One corpus row.
struct Row {
    line: usize,
    family: String,
    gold: String,
    response: String,
    /// True for "wrong" (an attack), false for "right" (a control).
    attack: bool,
    why: String,
}

fn corpus_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/attacks.jsonl")
}

fn out_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("attacks");
    std::fs::create_dir_all(&dir).expect("create target/tmp/attacks");
    dir
}

fn write_jsonl(name: &str, rows: &[Value]) -> PathBuf {
    let path = out_dir().join(name);
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).expect("create a failures file"));
    for row in rows {
        writeln!(file, "{row}").expect("write a failure row");
    }
    file.flush().expect("flush a failures file");
    path
}

/// Read and validate the corpus: every line a JSON object with exactly the five string fields,
/// `expect` one of "wrong"/"right", a known family of the matching kind, no two rows with the
/// same gold and response. Panics with every problem found.
fn load_corpus() -> Vec<Row> {
    let text = std::fs::read_to_string(corpus_path()).expect("tests/data/attacks.jsonl is part of the repository");
    let mut rows = Vec::new();
    let mut problems = Vec::new();
    let mut seen: HashSet<(String, String)> = HashSet::new();
    for (k, line) in text.lines().enumerate() {
        let n = k + 1;
        if line.trim().is_empty() {
            problems.push(format!("attacks.jsonl:{n}: blank line"));
            continue;
        }
        let value: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                problems.push(format!("attacks.jsonl:{n}: invalid JSON: {e}"));
                continue;
            }
        };
        let Some(obj) = value.as_object() else {
            problems.push(format!("attacks.jsonl:{n}: not a JSON object"));
            continue;
        };
        for key in obj.keys().filter(|k| !FIELDS.contains(&k.as_str())) {
            problems.push(format!("attacks.jsonl:{n}: unknown field `{key}`"));
        }
        let field = |f: &str| obj.get(f).and_then(Value::as_str).filter(|s| !s.trim().is_empty()).map(str::to_string);
        let (Some(family), Some(gold), Some(response), Some(expect), Some(why)) =
            (field("family"), field("gold"), field("response"), field("expect"), field("why"))
        else {
            problems.push(format!("attacks.jsonl:{n}: each of {FIELDS:?} must be a non-empty string"));
            continue;
        };
        let attack = match expect.as_str() {
            "wrong" => true,
            "right" => false,
            other => {
                problems.push(format!("attacks.jsonl:{n}: expect must be \"wrong\" or \"right\", found {other:?}"));
                continue;
            }
        };
        let known = if attack { ATTACK_FAMILIES } else { CONTROL_FAMILIES };
        if !known.contains(&family.as_str()) {
            problems.push(format!(
                "attacks.jsonl:{n}: family {family:?} is not a known {} family",
                if attack { "attack (expect wrong)" } else { "control (expect right)" }
            ));
        }
        if !seen.insert((gold.clone(), response.clone())) {
            problems.push(format!("attacks.jsonl:{n}: duplicate of an earlier row (same gold and response)"));
        }
        rows.push(Row { line: n, family, gold, response, attack, why });
    }
    assert!(problems.is_empty(), "tests/data/attacks.jsonl is malformed:\n{}", problems.join("\n"));
    rows
}

#[test]
fn attack_corpus_is_well_formed() {
    let rows = load_corpus();
    let attacks = rows.iter().filter(|r| r.attack).count();
    let controls = rows.len() - attacks;
    assert!(attacks >= 300, "only {attacks} attack rows (at least 300)");
    assert!(controls >= 100, "only {controls} control rows (at least 100)");
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &rows {
        *count.entry(r.family.as_str()).or_default() += 1;
    }
    let mut thin = Vec::new();
    for (families, least) in [(ATTACK_FAMILIES, 8), (CONTROL_FAMILIES, 4)] {
        for f in families {
            let n = count.get(f).copied().unwrap_or(0);
            if n < least {
                thin.push(format!("{f}: {n} rows (at least {least})"));
            }
        }
    }
    assert!(thin.is_empty(), "families without enough rows:\n{}", thin.join("\n"));
}

/// Per-family counts of the corpus run.
#[derive(Default)]
struct FamilyTally {
    rows: usize,
    failed: usize,
}

fn family_table(tally: &BTreeMap<(bool, String), FamilyTally>) -> String {
    let mut out = String::from("| family | expect | rows | failing |\n|---|---|---|---|\n");
    for ((attack, family), t) in tally {
        let expect = if *attack { "wrong" } else { "right" };
        out.push_str(&format!("| {family} | {expect} | {} | {} |\n", t.rows, t.failed));
    }
    let sum = |attack: bool| {
        tally.iter().filter(|((a, _), _)| *a == attack).fold((0, 0), |(r, f), (_, t)| (r + t.rows, f + t.failed))
    };
    let (ar, af) = sum(true);
    let (cr, cf) = sum(false);
    out.push_str(&format!("| all attacks | wrong | {ar} | {af} accepted |\n"));
    out.push_str(&format!("| all controls | right | {cr} | {cf} rejected |\n"));
    out
}

fn score_json(s: &Score) -> Value {
    json!({
        "correct": s.correct,
        "status": s.status.as_str(),
        "extracted": s.extracted,
        "rule": s.rule,
    })
}

#[test]
fn attack_corpus_zero_tolerance() {
    let rows = load_corpus();
    let cfg = Config::default();
    let mut tally: BTreeMap<(bool, String), FamilyTally> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut printed = Vec::new();
    for r in &rows {
        let s = score(&r.response, &r.gold, &cfg);
        let t = tally.entry((r.attack, r.family.clone())).or_default();
        t.rows += 1;
        // An attack fails when it is accepted; a control fails when it is not.
        if s.correct == r.attack {
            t.failed += 1;
            let what = if r.attack { "ACCEPTED (must be wrong)" } else { "REJECTED (must be right)" };
            printed.push(format!(
                "attacks.jsonl:{} [{}] {what}: {}\n  gold:     {:?}\n  response: {:?}\n  score:    {s:?}",
                r.line, r.family, r.why, r.gold, r.response
            ));
            failures.push(json!({
                "line": r.line,
                "family": r.family,
                "expect": if r.attack { "wrong" } else { "right" },
                "why": r.why,
                "gold": r.gold,
                "response": r.response,
                "score": score_json(&s),
            }));
        }
    }
    let table = family_table(&tally);
    eprintln!("attack corpus: {} rows\n{table}", rows.len());
    if failures.is_empty() {
        return;
    }
    let path = write_jsonl("corpus_failures.jsonl", &failures);
    eprintln!("{}", printed.join("\n"));
    let accepted = failures.iter().filter(|f| f["expect"] == "wrong").count();
    let rejected = failures.len() - accepted;
    panic!(
        "{accepted} attacks accepted and {rejected} controls rejected of {} rows (each failing row and the per-family \
         table above; the rows also in {})",
        rows.len(),
        path.display()
    );
}

// ---------------------------------------------------------------------------------------------
// Property test: hedged variants of right responses of the dev corpus.

/// The seeded generator of the property test (rlbase's SplitMix64: the stream never changes).
type Rng = rlbase::SplitMix64;

/// At most this many right responses are hedged, each with every hedge that fits it: all of the
/// dev corpus's right responses (1,832 today; under a second in a debug build).
/// `RLVERIFY_ATTACK_CASES` sets another bound.
const MAX_RESPONSES: usize = 5000;

/// The real-generations dev corpus as `(gold, response)` pairs, or `None` with a notice when the
/// read-only `shared/` folder is missing (a failure under CI).
fn dev_corpus() -> Option<Vec<(String, String)>> {
    let path = match std::env::var_os("RLVERIFY_CORPORA_DIR") {
        Some(d) => PathBuf::from(d).join("real_generations_dev.jsonl"),
        None => rl_tests::shared_file("corpora/real_generations_dev.jsonl")?,
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let rows = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|r| {
            let gold = r.get("gold").and_then(Value::as_str)?.to_string();
            let response = r.get("response").and_then(Value::as_str)?.to_string();
            Some((gold, response))
        })
        .collect();
    Some(rows)
}

/// The span of the content of the last `\boxed{...}` of `text` (between its braces), when its
/// braces balance.
fn last_box_content(text: &str) -> Option<(usize, usize)> {
    let start = text.rfind("\\boxed{")? + "\\boxed{".len();
    let mut depth = 1usize;
    for (i, b) in text.bytes().enumerate().skip(start) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some((start, i));
                }
            }
            _ => {}
        }
    }
    None
}

/// Where the final answer `x` stands in `response`.
enum Site {
    /// The content of the last box is `x`: the span of the whole `\boxed{x}`, and of the math
    /// block around it when the box is alone in one (`$\boxed{x}$`).
    Boxed(usize, usize, Option<(usize, usize, &'static str, &'static str)>),
    /// `x` alone in a math block (`$x$`, `$$x$$`, `\(x\)`): the span of the block and its
    /// delimiters.
    Delimited(usize, usize, &'static str, &'static str),
    /// `x` in plain text: its span.
    Plain(usize, usize),
}

/// True when the text after the final answer is a short closing remark (no digit, no box, at
/// most 200 bytes), so a hedge inserted right after the answer is part of the final statement.
fn closing_tail(tail: &str) -> bool {
    tail.len() <= 200 && !tail.bytes().any(|b| b.is_ascii_digit()) && !tail.contains("\\boxed")
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'.' || b == b'_'
}

/// Locate the final answer `x` in `response`: the last box when its content is `x`, otherwise the
/// last occurrence of `x` between non-word characters; `None` when `x` is not found, or when
/// more than a short closing remark follows it.
fn find_site(response: &str, x: &str) -> Option<Site> {
    if x.is_empty() {
        return None;
    }
    if let Some((s, e)) = last_box_content(response) {
        if response[s..e].trim() == x && closing_tail(&response[e + 1..]) {
            let (bs, be) = (s - "\\boxed{".len(), e + 1);
            let block = match delimited(response, bs, be) {
                Some(Site::Delimited(ds, de, o, c)) => Some((ds, de, o, c)),
                _ => None,
            };
            return Some(Site::Boxed(bs, be, block));
        }
    }
    let bytes = response.as_bytes();
    let mut end = response.len();
    while let Some(i) = response[..end].rfind(x) {
        let j = i + x.len();
        let before_ok = i == 0 || !is_word_byte(bytes[i - 1]);
        let after_ok = j == bytes.len()
            || !is_word_byte(bytes[j])
            || (bytes[j] == b'.' && !bytes.get(j + 1).is_some_and(u8::is_ascii_digit));
        if before_ok && after_ok {
            if !closing_tail(&response[j..]) {
                return None;
            }
            return Some(delimited(response, i, j).unwrap_or(Site::Plain(i, j)));
        }
        if i == 0 {
            break;
        }
        // Search again left of this occurrence's last character (a char boundary).
        end = i + x.len() - x.chars().last().map_or(1, char::len_utf8);
    }
    None
}

/// The math block around `response[i..j]` when it holds nothing else (spaces aside).
fn delimited(response: &str, i: usize, j: usize) -> Option<Site> {
    let before = response[..i].trim_end_matches(' ');
    let after = response[j..].trim_start_matches(' ');
    let (open, close) = [("$$", "$$"), ("\\(", "\\)"), ("$", "$")]
        .into_iter()
        .find(|(o, c)| before.ends_with(o) && after.starts_with(c))?;
    let start = before.len() - open.len();
    let end = response.len() - after.len() + close.len();
    Some(Site::Delimited(start, end, open, close))
}

/// A multiple-choice letter written as `C`, `(C)`, `\text{C}` or `\text{(C)}`.
fn choice_letter(x: &str) -> Option<char> {
    let t = x.trim();
    let t = t.strip_prefix("\\text{").and_then(|t| t.strip_suffix('}')).unwrap_or(t).trim();
    let t = t.strip_prefix('(').and_then(|t| t.strip_suffix(')')).unwrap_or(t).trim();
    let mut chars = t.chars();
    match (chars.next(), chars.next()) {
        (Some(c @ 'A'..='E'), None) => Some(c),
        _ => None,
    }
}

/// Another value `y` for the hedge: not `x`, and wrong against the gold on its own (boxed and
/// bare). A neighbour of an integer answer, the next letter of a choice, or a fixed value.
fn alternative(x: &str, gold: &Gold, cfg: &Config, rng: &mut Rng) -> Option<String> {
    let mut candidates = Vec::new();
    let integer = x.trim().replace(',', "");
    let integer = integer.strip_suffix(".0").or_else(|| integer.strip_suffix(".00")).unwrap_or(&integer);
    if let Ok(n) = integer.parse::<i64>() {
        candidates.push((n + 1).to_string());
        candidates.push((n - 1).to_string());
    }
    if let Some(c) = choice_letter(x) {
        let next = (b'A' + (c as u8 - b'A' + 1) % 5) as char;
        candidates.push(next.to_string());
    }
    let fixed = ["7", "13", "\\frac{2}{9}", "2\\sqrt{5}", "-4", "0.25"];
    let first = rng.below(fixed.len());
    candidates.extend((0..fixed.len()).map(|k| fixed[(first + k) % fixed.len()].to_string()));
    candidates.into_iter().find(|y| {
        y.trim() != x.trim() && !gold.score(&format!("\\boxed{{{y}}}"), cfg).correct && !gold.score(y, cfg).correct
    })
}

const HEDGES: &[&str] = &["a_or_value", "b_parenthetical", "c_second_box", "d_words_in_box", "e_empty_answer_tag"];

/// The hedged variant of `response` of hedge kind `kind`, or `None` when it does not fit.
fn hedge(kind: &str, response: &str, site: Option<&Site>, x: &str, y: &str, rng: &mut Rng) -> Option<String> {
    let splice = |s: usize, e: usize, new: String| format!("{}{new}{}", &response[..s], &response[e..]);
    match kind {
        "a_or_value" => match site? {
            Site::Boxed(_, _, Some((ds, de, o, c))) => {
                let boxed = &response[*ds + o.len()..*de - c.len()];
                Some(splice(*ds, *de, format!("{o}{boxed}{c} or {o}\\boxed{{{y}}}{c}")))
            }
            Site::Boxed(s, e, None) => {
                Some(splice(*s, *e, format!("{} \\text{{ or }} \\boxed{{{y}}}", &response[*s..*e])))
            }
            Site::Delimited(s, e, o, c) => Some(splice(*s, *e, format!("{o}{x}{c} or {o}{y}{c}"))),
            Site::Plain(s, e) => Some(splice(*s, *e, format!("{x} or {y}"))),
        },
        "b_parenthetical" => {
            let word = rng.pick(&["or", "possibly", "or perhaps", "maybe"]);
            match site? {
                Site::Boxed(_, _, Some((ds, de, o, c))) => {
                    let boxed = &response[*ds + o.len()..*de - c.len()];
                    Some(splice(*ds, *de, format!("{o}{boxed}{c} ({word} {o}{y}{c})")))
                }
                Site::Boxed(s, e, None) => {
                    Some(splice(*s, *e, format!("{} \\text{{ ({word} }}{y}\\text{{)}}", &response[*s..*e])))
                }
                Site::Delimited(s, e, o, c) => Some(splice(*s, *e, format!("{o}{x}{c} ({word} {o}{y}{c})"))),
                Site::Plain(s, e) => Some(splice(*s, *e, format!("{x} ({word} {y})"))),
            }
        }
        "c_second_box" => Some(format!("{}\n\n\\boxed{{{y}}}", response.trim_end())),
        "d_words_in_box" => {
            let inside = match rng.below(3) {
                0 => format!("{x} \\text{{ or }} {y}"),
                1 => format!("{x}\\text{{, possibly }} {y}"),
                _ => format!("{x} \\text{{ (or {y})}}"),
            };
            match site? {
                Site::Boxed(s, e, _) => Some(splice(*s, *e, format!("\\boxed{{{inside}}}"))),
                Site::Delimited(s, e, o, c) => Some(splice(*s, *e, format!("{o}{inside}{c}"))),
                Site::Plain(..) => None,
            }
        }
        "e_empty_answer_tag" => {
            let reasoning = response.replace("<think>", "").replace("</think>", "");
            let tag = rng.pick(&["<answer></answer>", "<answer> </answer>", "<answer>\n</answer>"]);
            Some(format!("<think>\n{}\n</think>\n{tag}", reasoning.trim()))
        }
        _ => unreachable!("unknown hedge {kind}"),
    }
}

#[derive(Default)]
struct HedgeTally {
    applied: usize,
    accepted: usize,
    not_applicable: usize,
}

/// The last `n` characters of `s` (on a char boundary).
fn tail(s: &str, n: usize) -> &str {
    let mut start = s.len().saturating_sub(n);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

#[test]
fn hedged_right_responses_are_never_accepted() {
    let Some(corpus) = dev_corpus() else { return };
    let cfg = Config::default();
    let limit = std::env::var("RLVERIFY_ATTACK_CASES")
        .ok()
        .map(|v| v.parse().unwrap_or_else(|e| panic!("RLVERIFY_ATTACK_CASES={v:?}: {e}")))
        .unwrap_or(MAX_RESPONSES);
    let mut rng = Rng::new(0x2525_a77a_c4ed_0025);
    // A seeded shuffle, then the first `limit` responses that are right today.
    let mut order: Vec<usize> = (0..corpus.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let mut tally: BTreeMap<&str, HedgeTally> = HEDGES.iter().map(|h| (*h, HedgeTally::default())).collect();
    let mut failures = Vec::new();
    // `RLVERIFY_ATTACK_DUMP=1` writes every hedged variant (to read what the hedges look like).
    let dump = std::env::var_os("RLVERIFY_ATTACK_DUMP").is_some();
    let mut all = Vec::new();
    let (mut used, mut no_alternative) = (0usize, 0usize);
    for &i in &order {
        if used == limit {
            break;
        }
        let (gold_text, response) = &corpus[i];
        let gold = Gold::new(gold_text, &cfg);
        let base = gold.score(response, &cfg);
        let Some(x) = base.extracted.as_deref().filter(|_| base.correct) else { continue };
        let x = x.trim();
        let Some(y) = alternative(x, &gold, &cfg, &mut rng) else {
            no_alternative += 1;
            continue;
        };
        used += 1;
        let site = find_site(response, x);
        for &kind in HEDGES {
            let t = tally.get_mut(kind).expect("every hedge kind has a tally");
            let Some(hedged) = hedge(kind, response, site.as_ref(), x, &y, &mut rng) else {
                t.not_applicable += 1;
                continue;
            };
            t.applied += 1;
            let s = gold.score(&hedged, &cfg);
            if dump {
                all.push(
                    json!({"hedge": kind, "gold": gold_text, "response": tail(&hedged, 400), "score": score_json(&s)}),
                );
            }
            if s.correct {
                t.accepted += 1;
                failures.push(json!({
                    "hedge": kind,
                    "gold": gold_text,
                    "answer": x,
                    "alternative": y,
                    "response": hedged,
                    "score": score_json(&s),
                }));
            }
        }
    }
    let mut table = String::from("| hedge | applied | accepted | not applicable |\n|---|---|---|---|\n");
    for (kind, t) in &tally {
        table.push_str(&format!("| {kind} | {} | {} | {} |\n", t.applied, t.accepted, t.not_applicable));
    }
    eprintln!(
        "hedged dev responses: {used} right responses hedged ({no_alternative} skipped: no wrong alternative value)\n{table}"
    );
    if dump {
        eprintln!("every hedged variant: {}", write_jsonl("hedged_all.jsonl", &all).display());
    }
    assert!(used >= 500, "only {used} right responses of the dev corpus could be hedged (at least 500)");
    if failures.is_empty() {
        return;
    }
    let path = write_jsonl("hedged_failures.jsonl", &failures);
    // Up to 8 examples per hedge kind; every accepted variant is in the file.
    for &kind in HEDGES {
        for f in failures.iter().filter(|f| f["hedge"] == kind).take(8) {
            let response = f["response"].as_str().unwrap_or_default();
            eprintln!(
                "[{kind}] gold {} answer {} alternative {}: accepted {}\n  ...{:?}",
                f["gold"],
                f["answer"],
                f["alternative"],
                f["score"],
                tail(response, 240)
            );
        }
    }
    panic!(
        "{} hedged variants of right responses accepted (the table and examples above; all in {})",
        failures.len(),
        path.display()
    );
}
