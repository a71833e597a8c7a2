//! A grammar-aware fuzzer for `rlverify` on stable Rust, shared by `tests/fuzz.rs` (a short
//! seeded run inside `cargo test`) and `examples/fuzz.rs` (long runs with a time budget).
//!
//! **Inputs.** A [`Case`] is a gold answer, a response and a configuration variant. Case `i` of a
//! run with seed `s` is a pure function of `(s, i)` and the seed pool ([`case`]), so any failing or
//! aborting input can be rebuilt from its index. The pool holds a built-in list of answers and
//! responses ([`builtin_seeds`]) and, when the read-only shared folder is present, the dev corpora's
//! golds, predictions and responses and the benchmarks' answers ([`Seeds::load_shared`]). Cases
//! are built by:
//! - mutating an answer (1 to 6 stacked mutations) and scoring it, bare or inside a response
//!   template, against the original or a mutated gold;
//! - mutating a real response (mutations biased towards its end, where the answer is);
//! - scoring two unrelated answers against each other;
//! - generating a random expression from a small LaTeX grammar ([`gen_expr`]) and a mutant of it.
//!
//! The mutations ([`mutate`]) know LaTeX: they delete, duplicate, swap and replace brace groups,
//! wrap a group or a span in templates (`\frac{}{}`, `\sqrt`, `^{...}` with huge exponents,
//! `\boxed`, `\left(..\right)`, intervals, sets, tuples, matrices, `\pm`, relations, set-builder,
//! `\text{}`), nest deeply, unbalance delimiters, insert tokens (commands, operators, unicode, chat
//! markers), replace numbers by long digit strings, swap operators, splice two inputs, and mutate
//! bytes (then read as lossy UTF-8).
//!
//! **Checks** ([`check_case`]); each failure names the property:
//! - `panic`: no call of `Gold::new`, `score`, `check`, `extract`, `parse` or `equivalent` panics
//!   (each call runs under `catch_unwind`).
//! - `slow`: no scoring call takes longer than [`CheckOptions::max_call`]. The verifier's cost is
//!   bounded by its step budget and caps (`limits.rs`: about 10 ms per comparison), so a generous
//!   bound only catches work the budget does not cover. A call over the bound is timed again three
//!   times and reported only if every run is over it (machine load does not report).
//! - `invariants`: a `Score` is consistent: `correct` iff status `correct`; the reward is 1 when
//!   correct and 0 (binary) or -1 (signed) otherwise; `limit` is set iff status `limit`;
//!   `extracted` is `None` iff status `no_answer`.
//! - `deterministic`: extraction twice gives the same answer; a `Gold` scored again, and `score`
//!   from scratch (which builds a new `Gold`), give the same `Score`; in a sample of cases, the
//!   same `Score` on a fresh thread (the constants cache of `equivalent` is thread-local and must
//!   not change a verdict).
//! - `check_agrees`: `check(gold, response)` is `score(response, gold, &Config::default()).correct`.
//! - `self_equal`: a gold that parses equals itself: scoring the gold text as a response is
//!   `correct` whenever the response's extraction finds the gold's own answer text, asserted (the two
//!   extractions differ only in their fallback options).
//! - `boxed_self`: a gold that parses is matched by a response that is its answer in a box,
//!   `\boxed{answer}`, when the answer is a plain answer ([`boxable`]: balanced braces, no box, math
//!   delimiter, tag or chat marker of its own, no trailing text the cleaning would strip).
//! - `symmetric`: for two closed exact expressions (integers, constants, arithmetic, radicals,
//!   functions, logs, factorials, binomials; no free symbols, decimals, percent or degrees), where
//!   the documented rules are symmetric, swapping gold and prediction never turns `Equal` into
//!   `NotEqual` or back (a `Limit` on one side is allowed: budgets run out at different places).

// The test and the example each use part of this module.
#![allow(dead_code)]

use rlverify::{
    check, equivalent, extract, score, Budget, Config, Expr, ExtractOptions, Gold, LastNumber, RewardKind, Score,
    Status, Truncated, Verdict,
};
use serde_json::Value;
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Once;
use std::time::{Duration, Instant};

// ---- random numbers ------------------------------------------------------------------------

/// The fuzzer's generator: rlbase's SplitMix64 (small, fast, every seed gives a good stream).
#[derive(Clone, Debug)]
pub struct Rng(rlbase::SplitMix64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(rlbase::SplitMix64::new(seed))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        self.0.below(n)
    }

    /// True with probability `1/n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// Small numbers often, large ones sometimes: `0..max` with a log-uniform bias.
    pub fn size(&mut self, max: usize) -> usize {
        let bits = usize::BITS - max.leading_zeros();
        let cap = 1usize << self.below(bits as usize + 1);
        self.below(cap.min(max).max(1))
    }
}

// ---- seeds ---------------------------------------------------------------------------------

/// The seed pool: answers (golds, predictions, benchmark answers) and (gold, response) pairs.
#[derive(Clone, Debug, Default)]
pub struct Seeds {
    pub answers: Vec<String>,
    pub responses: Vec<(String, String)>,
}

/// Built-in seeds, so the fuzzer runs without the shared folder: the answer shapes the verifier
/// handles, and short responses in the formats it extracts from.
pub fn builtin_seeds() -> Seeds {
    let answers = [
        "42",
        "-7",
        "0",
        "3.14",
        "0.000001",
        "1,234,567",
        "\\frac{1}{2}",
        "\\dfrac{-3}{4}",
        "2\\sqrt{3}",
        "\\sqrt[3]{16}",
        "\\frac{\\sqrt{5}-1}{2}",
        "x^2+2x+1",
        "(x+1)^2",
        "\\pi",
        "2\\pi r",
        "e^{i\\pi}",
        "\\ln 2",
        "\\log_2 8",
        "\\sin\\left(\\frac{\\pi}{6}\\right)",
        "\\arctan(1)",
        "10!",
        "\\binom{10}{3}",
        "28\\%",
        "30^\\circ",
        "45°",
        "5 \\text{ cm}",
        "\\$12.50",
        "3 \\pm \\sqrt{2}",
        "\\pm 1",
        "(1, 2)",
        "(-\\infty, 3] \\cup (5, \\infty)",
        "[0, 1)",
        "\\{1, 2, 3\\}",
        "\\{2\\pm\\sqrt3, 1\\}",
        "\\emptyset",
        "1, 2, 3",
        "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}",
        "\\begin{bmatrix} x \\\\ y \\end{bmatrix}",
        "x = 5",
        "y = 2x + 1",
        "-3 \\le y \\le 5",
        "y \\in [-3,5]",
        "x < 2 \\text{ or } x > 4",
        "\\{t \\mid -2<t<2\\}",
        "f(x) = 3x",
        "P_1:P_2 = 3:8",
        "\\frac{AM}{MB} = \\frac{2}{\\sqrt5}",
        "\\text{Monday}",
        "\\text{(C)}",
        "C",
        "\\textbf{(C)}\\ 250",
        "7^{\\mathrm{th}}",
        "\\lfloor x \\rfloor",
        "|t|",
        "\\max(t, 0)",
        "1^{(3^{98765432})}",
        "2^{2^{2^{2^{2}}}}",
        "(10^{5000})!",
        "\\binom{1000000000}{5}",
        "0.\\overline{3}",
        "1.5 \\times 10^{-7}",
        "\\infty",
        "i",
        "3+4i",
        "\\sqrt{-4}",
        "\\frac{1}{0}",
        "0^0",
        "k e^{-x} + C",
        "\\prod_{j=1}^m\\bigl(j\\bigr)",
        "\\sum_{k=1}^{n} k",
        "\\int_0^1 x\\,dx",
    ];
    let responses = [
        ("5", "So the answer is $\\boxed{5}$."),
        ("\\frac{1}{2}", "<think>Let me compute. 1/2?</think>\nThe final answer is $\\frac{1}{2}$."),
        ("18", "She sells 16 - 3 - 4 = 9 eggs, so 9 * 2 = 18 dollars.\n#### 18"),
        ("(1,2)", "<answer> \\boxed{(1,2)} </answer>"),
        ("C", "Checking each option, the correct option is (C)."),
        ("2, 3", "We try $x = 2$: it works, so \\boxed{2} and \\boxed{3}."),
        ("12", "The total is **12**."),
        ("3", "**Final Answer**\n\\[\n\\boxed{3}\n\\]"),
        ("x = 4", "Answer: $x = 4$"),
        ("17", "$17$ and $\\prod_{j=1}^m\\bigl(j\\bigr)$"),
        ("4,5,6", "$4$ and $5$ and $6$"),
        ("9", "The answer is 9<|im_end|><|im_start|>user Another problem \\boxed{8}"),
    ];
    Seeds {
        answers: answers.iter().map(|s| s.to_string()).collect(),
        responses: responses.iter().map(|(g, r)| (g.to_string(), r.to_string())).collect(),
    }
}

impl Seeds {
    /// The default location of the read-only shared folder (beside the workspace), or
    /// `RLVERIFY_SHARED_DIR`.
    pub fn shared_dir() -> PathBuf {
        match std::env::var_os("RLVERIFY_SHARED_DIR") {
            Some(dir) => PathBuf::from(dir),
            None => rl_tests::shared_dir(),
        }
    }

    /// Add the dev corpora's golds, predictions and responses and the benchmarks' answers found
    /// under `dir` (missing files are skipped). Returns how many seeds were added.
    pub fn load_shared(&mut self, dir: &Path) -> usize {
        let before = self.answers.len() + self.responses.len();
        let rows = |path: PathBuf| -> Vec<Value> {
            let Ok(text) = std::fs::read_to_string(path) else { return Vec::new() };
            text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
        };
        let field = |row: &Value, f: &str| row.get(f).and_then(Value::as_str).map(str::to_string);
        let corpora = dir.join("corpora");
        for row in rows(corpora.join("verifier_cases_dev.jsonl")) {
            if let (Some(g), Some(p)) = (field(&row, "gold"), field(&row, "pred")) {
                self.answers.push(g.clone());
                if p.len() > 300 {
                    self.responses.push((g, p));
                } else {
                    self.answers.push(p);
                }
            }
        }
        for row in rows(corpora.join("real_generations_dev.jsonl")) {
            if let (Some(g), Some(r)) = (field(&row, "gold"), field(&row, "response")) {
                self.answers.push(g.clone());
                self.responses.push((g, r));
            }
        }
        if let Ok(entries) = std::fs::read_dir(dir.join("data/benchmarks")) {
            let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
            paths.sort();
            for path in paths.into_iter().filter(|p| p.extension().is_some_and(|e| e == "jsonl")) {
                for row in rows(path) {
                    if let Some(a) = field(&row, "answer") {
                        self.answers.push(a);
                    }
                }
            }
        }
        self.answers.sort();
        self.answers.dedup();
        self.answers.len() + self.responses.len() - before
    }
}

// ---- cases ---------------------------------------------------------------------------------

/// One fuzz input.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub gold: String,
    pub response: String,
    /// Which configuration scores it ([`config`]); 0 is `Config::default()`.
    pub variant: u8,
}

/// Number of configuration variants.
pub const VARIANTS: u8 = 6;

/// The configuration of a variant: the default, and the switches a caller can set.
pub fn config(variant: u8) -> Config {
    let mut cfg = Config::default();
    match variant {
        1 => cfg.reward = RewardKind::Signed,
        2 => cfg.last_number = LastNumber::Always,
        3 => cfg.last_number = LastNumber::Never,
        4 => cfg.truncated = Truncated::Lenient,
        5 => {
            cfg.equiv.percent_as_unit = false;
            cfg.limits.max_steps = 20_000;
        }
        _ => {}
    }
    cfg
}

/// Longest text a mutation may produce (bytes); responses may already be longer.
const MAX_LEN: usize = 1 << 17;

/// Case `index` of the run with `seed`: a pure function of its arguments.
pub fn case(seeds: &Seeds, seed: u64, index: u64) -> Case {
    let mut rng = Rng::new(seed ^ index.wrapping_mul(0xD6E8_FEB8_6659_FD93));
    rng.next_u64();
    let variant = if rng.one_in(6) { 1 + rng.below(VARIANTS as usize - 1) as u8 } else { 0 };
    let answer = |rng: &mut Rng| -> String {
        if seeds.answers.is_empty() || rng.one_in(8) {
            gen_expr(rng, 3)
        } else {
            rng.pick(&seeds.answers).clone()
        }
    };
    let mode = if seeds.responses.is_empty() { rng.below(7) } else { rng.below(10) };
    let (gold, response) = match mode {
        // A mutated answer, bare or in a response, against its original or a mutant.
        0..=4 => {
            let a = answer(&mut rng);
            let gold = if rng.one_in(5) { mutate(&a, seeds, &mut rng) } else { a.clone() };
            let mut pred = mutate(&a, seeds, &mut rng);
            if rng.one_in(3) {
                pred = wrap_response(&pred, &mut rng);
            }
            (gold, pred)
        }
        // Two unrelated answers (also exercises the `NotEqual` paths and symmetry).
        5 => {
            let a = answer(&mut rng);
            let b = answer(&mut rng);
            let b = if rng.one_in(2) { mutate(&b, seeds, &mut rng) } else { b };
            (a, b)
        }
        // A generated expression and a mutant of it.
        6 => {
            let a = gen_expr(&mut rng, 4);
            let b = mutate(&a, seeds, &mut rng);
            if rng.one_in(2) {
                (a, b)
            } else {
                (b, a)
            }
        }
        // A real response, mutated mostly near its end.
        _ => {
            let (g, r) = rng.pick(&seeds.responses).clone();
            let gold = if rng.one_in(8) { mutate(&g, seeds, &mut rng) } else { g };
            let mut r = r;
            for _ in 0..1 + rng.below(4) {
                r = mutate_response(&r, seeds, &mut rng);
            }
            (gold, r)
        }
    };
    Case { gold, response, variant }
}

/// Put an answer in one of the response formats extraction knows.
fn wrap_response(a: &str, rng: &mut Rng) -> String {
    match rng.below(10) {
        0 => format!("So the answer is $\\boxed{{{a}}}$."),
        1 => format!("<think>Let me think. Maybe 4?</think>\nThe final answer is ${a}$."),
        2 => format!("<answer>{a}</answer>"),
        3 => format!("Work.\n#### {a}"),
        4 => format!("The total is **{a}**."),
        5 => format!("We get \\[{a}\\] and so \\boxed{{{a}}} and \\boxed{{{a}}}"),
        6 => format!("Answer: {a}"),
        7 => format!("{}Thus $m = {a}$ and then we", "## Step: we simplify and go on.\n".repeat(40)),
        8 => format!("$${a}$$"),
        _ => format!("\\({a}\\)"),
    }
}

// ---- mutations -----------------------------------------------------------------------------

/// Tokens inserted at random places.
#[rustfmt::skip]
const TOKENS: &[&str] = &[
    "\\frac{", "}{", "}", "{", "\\sqrt", "\\sqrt[3]{", "^{", "^{98765432}", "^{-1}", "_{", "\\boxed{", "\\fbox{",
    "\\left(", "\\right)", "\\left[", "\\right]", "\\left|", "\\right|", "\\left.", "\\right.", "(", ")", "[", "]",
    "\\{", "\\}", "\\pm", "\\mp", "\\cup", "\\cap", "\\setminus", "\\infty", "-\\infty", "\\text{", "\\mathrm{",
    "\\textbf{", "\\mbox{", "\\begin{pmatrix}", "\\end{pmatrix}", "\\begin{cases}", "\\end{cases}", "&", "\\\\", ",",
    ";", ":", "=", "<", ">", "\\le", "\\geq", "\\neq", "\\approx", "\\in", "\\mid", "+", "-", "*", "/", "!", "%",
    "\\%", "^\\circ", "^{\\circ}", "°", "'", "\\prime", "\\pi", "e", "i", "x", "y", "n", "k", "C", "\\alpha", "\\sin",
    "\\cos", "\\tan", "\\log", "\\log_2", "\\ln", "\\exp", "\\lfloor", "\\rfloor", "\\lceil", "\\rceil", "|",
    "\\cdot", "\\times", "\\div", "\\dfrac", "\\tfrac", "\\binom{", "\\displaystyle", "\\,", "\\quad", "\\ ", "~",
    "$", "$$", "\\(", "\\)", "\\[", "\\]", "</think>", "<think>", "<answer>", "</answer>", "####", "**",
    "The final answer is ", "Answer: ", " and ", " or ", "\\text{ or }", "\\text{ and }", "<|im_end|>",
    "<|im_start|>", "\n", " ", "\t", ".", "...", "\\ldots", "\\dots", "\\overline{", "\\bar", "\\hat", "\\vec",
    "\\operatorname{", "\\mathbb{R}", "\\emptyset", "\\varnothing", "\\sum_{k=1}^{n}", "\\prod", "\\int", "\\lim",
    "\\bigl(", "\\bigr)", "\\Big(", "\\Big)", "\\#", "\\$", "\\&", "\\_", "\\\\\\", "\\", "\\unknowncommand", "−",
    "×", "÷", "√", "π", "∞", "≤", "≥", "≠", "∅", "∪", "²", "³", "½", "٣", "𝟙", "\u{200b}", "\u{301}", "\u{0}",
    "\u{feff}", "\u{202e}", "ｘ", "１", "é", "日本", "🙂",
];

/// Templates for wrapping: `#` is replaced by the wrapped text (first) or by fragments (next).
const TEMPLATES: &[&str] = &[
    "\\frac{#}{#}",
    "\\dfrac{#}{#}",
    "\\sqrt{#}",
    "\\sqrt[#]{#}",
    "{#}^{#}",
    "#^{98765432}",
    "{#}^{(3^{98765432})}",
    "#^{-#}",
    "\\boxed{#}",
    "\\boxed{\\boxed{#}}",
    "\\left(#\\right)",
    "\\left[#\\right)",
    "\\left\\{#\\right\\}",
    "(#)",
    "{#}",
    "[#, #)",
    "(#, #]",
    "(-\\infty, #]",
    "\\{#, #\\}",
    "(#, #)",
    "(#, #, #)",
    "#, #",
    "#; #",
    "# \\pm #",
    "\\pm #",
    "\\begin{pmatrix} # & # \\\\ # & # \\end{pmatrix}",
    "\\begin{bmatrix} # \\\\ # \\end{bmatrix}",
    "\\text{#}",
    "\\text{ # }",
    "\\mathrm{#}",
    "# \\text{ or } #",
    "x \\in #",
    "x = #",
    "# = #",
    "# < x \\le #",
    "#:#",
    "\\{x \\mid # < x < #\\}",
    "# \\cup #",
    "\\lfloor # \\rfloor",
    "|#|",
    "\\left|#\\right|",
    "#!",
    "\\binom{#}{#}",
    "#\\%",
    "#^\\circ",
    "\\log_{#} #",
    "\\sin(#)",
    "\\sin^{-1} #",
    "e^{#}",
    "#_{#}",
    "f(#)",
    "\\max(#, #)",
    "#\\,\\text{cm}",
    "$#$",
    "\\(#\\)",
    "# and #",
];

/// Numbers a mutation writes.
fn number(rng: &mut Rng) -> String {
    match rng.below(12) {
        0 => "0".to_string(),
        1 => "1".to_string(),
        2 => "-1".to_string(),
        3 => rng.below(1000).to_string(),
        4 => format!("{}.{}", rng.below(100), rng.below(1000)),
        5 => format!("0.{}1", "0".repeat(rng.size(400))),
        6 => {
            let n = 1 + rng.size(5000);
            (0..n).map(|k| if k == 0 { '1' } else { char::from(b'0' + rng.below(10) as u8) }).collect()
        }
        7 => rng.pick(&["98765432", "18446744073709551617", "1e308", "1.5e-7", "10^{100}", "2^{64}"]).to_string(),
        8 => format!("{}/{}", rng.below(100), rng.below(100)),
        9 => format!("0.{}", "9".repeat(1 + rng.size(60))),
        10 => rng.next_u64().to_string(),
        _ => format!("{},{:03},{:03}", rng.below(1000), rng.below(1000), rng.below(1000)),
    }
}

/// A random expression from a small LaTeX grammar.
pub fn gen_expr(rng: &mut Rng, depth: usize) -> String {
    if depth == 0 || rng.one_in(4) {
        return match rng.below(6) {
            0 | 1 => number(rng),
            2 => rng.pick(&["x", "y", "n", "t", "a", "b", "k", "\\alpha", "x_1"]).to_string(),
            3 => rng.pick(&["\\pi", "e", "i", "\\infty", "\\sqrt{2}", "\\emptyset"]).to_string(),
            4 => rng.below(10).to_string(),
            _ => rng.pick(&["\\text{yes}", "\\text{Monday}", "C", "(B)", "\\mathrm{cm}"]).to_string(),
        };
    }
    let d = depth - 1;
    let sub = |rng: &mut Rng| gen_expr(rng, d);
    match rng.below(22) {
        0 => format!("{} + {}", sub(rng), sub(rng)),
        1 => format!("{} - {}", sub(rng), sub(rng)),
        2 => format!("{} \\cdot {}", sub(rng), sub(rng)),
        3 => format!("\\frac{{{}}}{{{}}}", sub(rng), sub(rng)),
        4 => format!("{{{}}}^{{{}}}", sub(rng), sub(rng)),
        5 => format!("\\sqrt{{{}}}", sub(rng)),
        6 => format!("\\sqrt[{}]{{{}}}", rng.below(5), sub(rng)),
        7 => format!("\\{}\\left({}\\right)", rng.pick(&["sin", "cos", "tan", "ln", "log", "exp", "arctan"]), sub(rng)),
        8 => format!("({}, {})", sub(rng), sub(rng)),
        9 => format!("\\{{{}, {}\\}}", sub(rng), sub(rng)),
        10 => format!("{}{}, {}{}", rng.pick(&["(", "["]), sub(rng), sub(rng), rng.pick(&[")", "]"])),
        11 => format!("{} \\pm {}", sub(rng), sub(rng)),
        12 => format!("x {} {}", rng.pick(&["=", "<", "\\le", ">", "\\ge", "\\ne"]), sub(rng)),
        13 => {
            format!("\\begin{{pmatrix}} {} & {} \\\\ {} & {} \\end{{pmatrix}}", sub(rng), sub(rng), sub(rng), sub(rng))
        }
        14 => format!("{}!", sub(rng)),
        15 => format!("\\binom{{{}}}{{{}}}", sub(rng), sub(rng)),
        16 => format!("{}\\%", sub(rng)),
        17 => format!("{}^\\circ", sub(rng)),
        18 => format!("|{}|", sub(rng)),
        19 => format!("\\lfloor {} \\rfloor", sub(rng)),
        20 => format!("{} \\cup {}", sub(rng), sub(rng)),
        _ => format!("{}, {}", sub(rng), sub(rng)),
    }
}

/// The nearest char boundary at or before `i`.
fn floor_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A random char boundary of `s` (biased towards the end for long texts when `tail` is set).
fn position(s: &str, rng: &mut Rng, tail: bool) -> usize {
    if s.is_empty() {
        return 0;
    }
    let i = if tail && s.len() > 600 && !rng.one_in(3) { s.len() - 1 - rng.below(600) } else { rng.below(s.len() + 1) };
    floor_boundary(s, i)
}

/// A random span `start..end` at char boundaries.
fn span(s: &str, rng: &mut Rng, tail: bool) -> (usize, usize) {
    let a = position(s, rng, tail);
    let len = rng.size(64.min(s.len() - a + 1));
    (a, floor_boundary(s, a + len))
}

/// The balanced brace groups of `s` as (index of `{`, index of `}`), escaped braces excluded; at
/// most 4096 (or those in the last 4 kB for `tail`).
fn brace_groups(s: &str, tail: bool) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    let from = if tail && b.len() > 4096 { floor_boundary(s, b.len() - 4096) } else { 0 };
    let mut stack = Vec::new();
    let mut out = Vec::new();
    let mut i = from;
    while i < b.len() && out.len() < 4096 {
        match b[i] {
            b'\\' => i += 1,
            b'{' => stack.push(i),
            b'}' => {
                if let Some(o) = stack.pop() {
                    out.push((o, i));
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// A fragment to fill a template hole: a group of the input, a number, a symbol or an expression.
fn fragment(s: &str, seeds: &Seeds, rng: &mut Rng) -> String {
    match rng.below(5) {
        0 => {
            let groups = brace_groups(s, true);
            if groups.is_empty() {
                number(rng)
            } else {
                let (o, c) = *rng.pick(&groups);
                s[o + 1..c].to_string()
            }
        }
        1 => number(rng),
        2 => gen_expr(rng, 2),
        3 if !seeds.answers.is_empty() => rng.pick(&seeds.answers).clone(),
        _ => rng.pick(&["x", "1", "2", "-1", "\\pi", "n", "0", "\\infty"]).to_string(),
    }
}

/// Fill `template`: its first `#` is `inner`, the others fragments.
fn fill(template: &str, inner: &str, s: &str, seeds: &Seeds, rng: &mut Rng) -> String {
    let mut out = String::new();
    for (k, part) in template.split('#').enumerate() {
        if k == 1 {
            out.push_str(inner);
        } else if k > 1 {
            out.push_str(&fragment(s, seeds, rng));
        }
        out.push_str(part);
    }
    out
}

fn replace_range(s: &str, a: usize, b: usize, with: &str) -> String {
    let mut out = String::with_capacity(s.len() + with.len());
    out.push_str(&s[..a]);
    out.push_str(with);
    out.push_str(&s[b..]);
    out
}

/// One mutation of `s` (`tail`: prefer the end of a long text).
fn mutate_once(s: &str, seeds: &Seeds, rng: &mut Rng, tail: bool) -> String {
    match rng.below(20) {
        // Brace groups: delete, duplicate, swap, replace the content.
        0..=3 => {
            let groups = brace_groups(s, tail);
            if groups.is_empty() {
                return mutate_once(s, seeds, rng, tail);
            }
            let (o, c) = *rng.pick(&groups);
            match rng.below(5) {
                0 => replace_range(s, o, c + 1, ""),
                1 => replace_range(s, o, o, &s[o..=c]),
                2 => replace_range(s, o + 1, c, &fragment(s, seeds, rng)),
                3 => {
                    let (o2, c2) = *rng.pick(&groups);
                    let (first, second) = if c < o2 { ((o, c), (o2, c2)) } else { ((o2, c2), (o, c)) };
                    if first.1 >= second.0 {
                        return replace_range(s, o, c + 1, &s[o2..=c2]);
                    }
                    let mut out = String::new();
                    out.push_str(&s[..first.0]);
                    out.push_str(&s[second.0..=second.1]);
                    out.push_str(&s[first.1 + 1..second.0]);
                    out.push_str(&s[first.0..=first.1]);
                    out.push_str(&s[second.1 + 1..]);
                    out
                }
                _ => replace_range(s, o, o + 1, ""),
            }
        }
        // Wrap a group, a span or everything in a template.
        4..=7 => {
            let (a, b) = match rng.below(3) {
                0 => (0, s.len()),
                1 => {
                    let groups = brace_groups(s, tail);
                    if groups.is_empty() {
                        span(s, rng, tail)
                    } else {
                        let (o, c) = *rng.pick(&groups);
                        (o + 1, c)
                    }
                }
                _ => span(s, rng, tail),
            };
            let t = rng.pick(TEMPLATES);
            let filled = fill(t, &s[a..b], s, seeds, rng);
            replace_range(s, a, b, &filled)
        }
        // Insert a token or a few.
        8..=10 => {
            let mut out = s.to_string();
            for _ in 0..1 + rng.size(4) {
                let p = position(&out, rng, tail);
                out.insert_str(p, rng.pick::<&str>(TOKENS));
            }
            out
        }
        // Deep nesting.
        11 => {
            let n = if rng.one_in(4) { 1 + rng.size(5000) } else { 1 + rng.size(100) };
            let (open, close) = *rng.pick(&[
                ("{", "}"),
                ("(", ")"),
                ("\\frac{1}{", "}"),
                ("\\sqrt{", "}"),
                ("\\boxed{", "}"),
                ("\\left(", "\\right)"),
                ("[", "]"),
                ("-", ""),
                ("2^{", "}"),
                ("\\{", "\\}"),
            ]);
            let (a, b) = if rng.one_in(2) { (0, s.len()) } else { span(s, rng, tail) };
            let mut inner = open.repeat(n);
            inner.push_str(&s[a..b]);
            if !rng.one_in(5) {
                inner.push_str(&close.repeat(n));
            }
            replace_range(s, a, b, &inner)
        }
        // Replace a number by another.
        12 => {
            let b = s.as_bytes();
            let digits: Vec<usize> = (0..b.len()).filter(|&i| b[i].is_ascii_digit()).collect();
            if digits.is_empty() {
                let p = position(s, rng, tail);
                return replace_range(s, p, p, &number(rng));
            }
            let start = *rng.pick(&digits);
            let mut end = start;
            while end < b.len() && (b[end].is_ascii_digit() || b[end] == b'.') {
                end += 1;
            }
            replace_range(s, start, end, &number(rng))
        }
        // Swap an operator.
        13 => {
            const OPS: &[&str] = &["+", "-", "=", "<", ">", "/", "*", ",", "^", "_", "\\cdot", "\\pm", "\\le", ";"];
            let b = s.as_bytes();
            let ops: Vec<usize> = (0..b.len()).filter(|&i| b"+-=<>/*,^_;".contains(&b[i])).collect();
            if ops.is_empty() {
                return mutate_once(s, seeds, rng, tail);
            }
            let p = *rng.pick(&ops);
            replace_range(s, p, p + 1, rng.pick::<&str>(OPS))
        }
        // Delete a delimiter or a span; unbalance.
        14 => {
            let b = s.as_bytes();
            let delims: Vec<usize> = (0..b.len()).filter(|&i| b"{}()[]$|".contains(&b[i])).collect();
            if !delims.is_empty() && rng.one_in(2) {
                let p = *rng.pick(&delims);
                return replace_range(s, p, p + 1, "");
            }
            let (a, e) = span(s, rng, tail);
            replace_range(s, a, e, "")
        }
        // Splice with another seed: insert a piece, or prefix + suffix.
        15 => {
            let other = fragment(s, seeds, rng);
            if rng.one_in(2) {
                let p = position(s, rng, tail);
                replace_range(s, p, p, &other)
            } else {
                let p = position(s, rng, tail);
                let q = floor_boundary(&other, rng.below(other.len() + 1));
                format!("{}{}", &s[..p], &other[q..])
            }
        }
        // Repeat a span.
        16 => {
            let (a, e) = span(s, rng, tail);
            let n = 1 + rng.size(1000);
            replace_range(s, a, e, &s[a..e].repeat(n))
        }
        // Truncate.
        17 => {
            let p = position(s, rng, tail);
            s[..p].to_string()
        }
        // Bytes: flip, insert random bytes, overwrite (read back as lossy UTF-8).
        _ => {
            let mut b = s.as_bytes().to_vec();
            for _ in 0..1 + rng.size(8) {
                let p = if tail && b.len() > 600 { b.len() - rng.below(600) } else { rng.below(b.len() + 1) };
                match rng.below(3) {
                    0 if p < b.len() => b[p] ^= 1 << rng.below(8),
                    1 => b.insert(p, rng.next_u64() as u8),
                    _ => b.insert(p, *rng.pick(b"{}()[]\\$^_&%#~ \n0123456789")),
                }
            }
            String::from_utf8_lossy(&b).into_owned()
        }
    }
}

/// 1 to 6 stacked mutations of an answer.
pub fn mutate(s: &str, seeds: &Seeds, rng: &mut Rng) -> String {
    let mut out = s.to_string();
    for _ in 0..1 + rng.size(6) {
        out = mutate_once(&out, seeds, rng, false);
        if out.len() > MAX_LEN {
            out.truncate(floor_boundary(&out, MAX_LEN));
        }
    }
    out
}

/// One mutation of a response, biased towards its end.
pub fn mutate_response(s: &str, seeds: &Seeds, rng: &mut Rng) -> String {
    let mut out = mutate_once(s, seeds, rng, true);
    if out.len() > s.len().max(MAX_LEN) {
        out.truncate(floor_boundary(&out, s.len().max(MAX_LEN)));
    }
    out
}

// ---- checks --------------------------------------------------------------------------------

/// What [`check_case`] checks beyond the always-on properties.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// A scoring call slower than this is timed again and reported if it stays slower.
    pub max_call: Duration,
    /// Also score the case on a fresh thread (the thread-local cache must not change verdicts).
    pub fresh_thread: bool,
}

/// A property that failed on a case.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// The property (`panic`, `slow`, `invariants`, ...; see the module doc).
    pub property: &'static str,
    pub detail: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.property, self.detail)
    }
}

thread_local! {
    static QUIET: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Install (once) a panic hook that keeps the message of a panic caught by [`catch`] instead of
/// printing it; other panics print as usual.
fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let caught = QUIET.with(|q| {
                let mut q = q.borrow_mut();
                match q.as_mut() {
                    Some(msg) => {
                        *msg = info.to_string();
                        true
                    }
                    None => false,
                }
            });
            if !caught {
                previous(info);
            }
        }));
    });
}

/// Run `f`, turning a panic into its message.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    install_hook();
    QUIET.with(|q| *q.borrow_mut() = Some(String::new()));
    let r = catch_unwind(AssertUnwindSafe(f));
    let msg = QUIET.with(|q| q.borrow_mut().take()).unwrap_or_default();
    r.map_err(|_| msg)
}

/// Run `f` under [`catch`] and time it; a panic is a `panic` failure naming `what`.
fn timed<T>(what: &str, f: impl FnOnce() -> T) -> Result<(T, Duration), Failure> {
    let t = Instant::now();
    let r = catch(f).map_err(|msg| Failure { property: "panic", detail: format!("{what}: {msg}") })?;
    Ok((r, t.elapsed()))
}

fn fail(property: &'static str, detail: String) -> Result<(), Failure> {
    Err(Failure { property, detail })
}

/// The extraction options `score` uses for a response against `gold` under `cfg`.
fn response_options(gold: &Gold, cfg: &Config) -> ExtractOptions {
    ExtractOptions {
        last_number_fallback: match cfg.last_number {
            LastNumber::Auto => gold.is_plain_number,
            LastNumber::Always => true,
            LastNumber::Never => false,
        },
        truncated_fallback: cfg.truncated == Truncated::Lenient,
        ..ExtractOptions::default()
    }
}

/// Whether `answer` comes back unchanged from `\boxed{answer}`: balanced unescaped braces, no box,
/// math delimiter, tag, chat marker or `</think>` of its own, and nothing at its ends that the
/// answer cleaning strips (surrounding space, a trailing `.`, `,`, `;`, `\\`, `\,`, `\quad`, `**`).
pub fn boxable(answer: &str) -> bool {
    const MARKERS: &[&str] = &[
        "\\boxed",
        "\\fbox",
        "$",
        "\\(",
        "\\)",
        "\\[",
        "\\]",
        "<think>",
        "</think>",
        "<answer>",
        "</answer>",
        "<|",
        "<｜",
        "####",
        "**",
        "\\displaystyle",
    ];
    if answer.trim() != answer || answer.is_empty() || MARKERS.iter().any(|m| answer.contains(m)) {
        return false;
    }
    if answer.ends_with(['.', ',', ';', '\\']) || answer.ends_with("\\,") || answer.ends_with("\\quad") {
        return false;
    }
    let b = answer.as_bytes();
    let mut depth = 0i64;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => {}
        }
        i += 1;
    }
    depth == 0 && answer.chars().all(|c| !c.is_control() || c == '\n' || c == '\t')
}

/// A closed exact expression: no free symbols, decimals, percent, degrees, text or structure, so
/// the documented comparison rules are symmetric.
pub fn closed_exact(e: &Expr) -> bool {
    use rlverify::ast::{Constant, Func};
    match e {
        Expr::Num(n) => n.decimals.is_none(),
        Expr::Const(c) => !matches!(c, Constant::Infinity),
        Expr::Neg(a) | Expr::Factorial(a) => closed_exact(a),
        Expr::Add(v) | Expr::Mul(v) => v.iter().all(closed_exact),
        Expr::Div(a, b) | Expr::Pow(a, b) | Expr::Binom(a, b) => closed_exact(a) && closed_exact(b),
        Expr::Root { index, radicand } => closed_exact(index) && closed_exact(radicand),
        Expr::Log { base, arg } => closed_exact(base) && closed_exact(arg),
        Expr::Func(f, args) => !matches!(f, Func::Other(_)) && args.iter().all(closed_exact),
        _ => false,
    }
}

fn short(s: &str) -> String {
    if s.len() <= 200 {
        format!("{s:?}")
    } else {
        let a = floor_boundary(s, 100);
        let b = floor_boundary(s, s.len() - 80);
        format!("{:?}...({} bytes)...{:?}", &s[..a], s.len(), &s[b..])
    }
}

/// Check every property of the module doc on one case; the first failure is returned.
pub fn check_case(case: &Case, opts: &CheckOptions) -> Result<(), Failure> {
    let cfg = config(case.variant);
    let (gold, response) = (case.gold.as_str(), case.response.as_str());

    // Score, timed, and the slow-call check (timed again so that load alone reports nothing).
    let ((g, ex), took) = timed("score", || {
        let g = Gold::new(gold, &cfg);
        let ex = g.score_explained(response, &cfg);
        (g, ex)
    })?;
    if took > opts.max_call {
        let again = (0..3).map(|_| {
            let t = Instant::now();
            let _ = catch(|| score(response, gold, &cfg));
            t.elapsed()
        });
        if let Some(best) = again.min().filter(|d| *d > opts.max_call) {
            return fail(
                "slow",
                format!("score took {} ms (bound {} ms)", best.as_millis(), opts.max_call.as_millis()),
            );
        }
    }
    let s = ex.score.clone();
    invariants(&s, &cfg)?;

    // Determinism: the same gold again, `score` from scratch, extraction twice.
    let (again, _) = timed("score (again)", || g.score(response, &cfg))?;
    if again != s {
        return fail("deterministic", format!("Gold::score gave {s:?} then {again:?}"));
    }
    let (fresh, _) = timed("score (fresh)", || score(response, gold, &cfg))?;
    if fresh != s {
        return fail("deterministic", format!("Gold::score gave {s:?}, score gave {fresh:?}"));
    }
    let ropts = response_options(&g, &cfg);
    let (e1, _) = timed("extract", || extract(response, &ropts))?;
    let (e2, _) = timed("extract (again)", || extract(response, &ropts))?;
    if e1 != e2 {
        return fail("deterministic", format!("extract gave {e1:?} then {e2:?}"));
    }
    if opts.fresh_thread {
        let (r, c) = (response.to_string(), gold.to_string());
        let cfg2 = cfg.clone();
        let other = std::thread::spawn(move || catch(|| score(&r, &c, &cfg2))).join();
        match other {
            Ok(Ok(o)) if o == s => {}
            Ok(Ok(o)) => return fail("deterministic", format!("{s:?} here, {o:?} on a fresh thread")),
            _ => return fail("panic", "score on a fresh thread".to_string()),
        }
    }

    // `check` is `score(..).correct` under the default configuration.
    if case.variant == 0 {
        let (c, _) = timed("check", || check(gold, response))?;
        if c != s.correct {
            return fail("check_agrees", format!("check says {c}, score says {s:?}"));
        }
    }

    // The gold equals itself, bare and boxed.
    if g.parsed.is_ok() {
        let gopts = response_options(&g, &cfg);
        let (own, _) = timed("extract (gold as response)", || extract(gold, &gopts))?;
        if own.is_some_and(|a| a.text == g.answer && a.void.is_none()) {
            let (s_self, _) = timed("score (gold against itself)", || g.score(gold, &cfg))?;
            if s_self.status != Status::Correct {
                return fail("self_equal", format!("gold against itself: {s_self:?}"));
            }
        }
        if boxable(&g.answer) {
            let boxed = format!("\\boxed{{{}}}", g.answer);
            let (s_box, _) = timed("score (boxed gold)", || g.score(&boxed, &cfg))?;
            if !matches!(s_box.status, Status::Correct | Status::Limit) {
                return fail("boxed_self", format!("{} against its gold: {s_box:?}", short(&boxed)));
            }
        }
    }

    // Symmetry of closed exact comparisons.
    if let (Ok(ge), Some(Ok(pe))) = (&g.parsed, &ex.parsed) {
        if closed_exact(ge) && closed_exact(pe) {
            let (fwd, back) = timed("equivalent (both ways)", || {
                let fwd = equivalent(ge, pe, &cfg.equiv, &mut Budget::new(&cfg.limits));
                let back = equivalent(pe, ge, &cfg.equiv, &mut Budget::new(&cfg.limits));
                (fwd, back)
            })?
            .0;
            let limit = |v: Verdict| matches!(v, Verdict::Limit(_));
            if !limit(fwd.verdict) && !limit(back.verdict) && fwd.verdict != back.verdict {
                return fail("symmetric", format!("gold {ge} vs pred {pe}: {fwd:?}; swapped: {back:?}"));
            }
        }
    }
    Ok(())
}

/// The `invariants` property of a `Score`.
fn invariants(s: &Score, cfg: &Config) -> Result<(), Failure> {
    let want_reward = match (s.correct, cfg.reward) {
        _ if s.status == Status::InvalidGold => 0.0,
        (true, _) => 1.0,
        (false, RewardKind::Binary) => 0.0,
        (false, RewardKind::Signed) => -1.0,
    };
    let ok = s.correct == (s.status == Status::Correct)
        && s.reward == want_reward
        && s.limit.is_some() == (s.status == Status::Limit)
        && s.extracted.is_none() == matches!(s.status, Status::NoAnswer | Status::InvalidGold)
        && (s.status == Status::Ambiguous) == (s.candidates.len() > 1)
        && (s.status != Status::InvalidGold || !s.correct);
    if ok {
        Ok(())
    } else {
        fail("invariants", format!("{s:?}"))
    }
}

// ---- saved inputs --------------------------------------------------------------------------

/// A failing case as one JSON object (what the example saves and replays).
pub fn to_json(case: &Case, failure: Option<&Failure>, seed: u64, index: u64) -> Value {
    serde_json::json!({
        "gold": case.gold,
        "response": case.response,
        "variant": case.variant,
        "property": failure.map(|f| f.property),
        "detail": failure.map(|f| f.detail.clone()),
        "seed": seed,
        "index": index,
    })
}

/// Read a case saved by [`to_json`].
pub fn from_json(v: &Value) -> Option<Case> {
    Some(Case {
        gold: v.get("gold")?.as_str()?.to_string(),
        response: v.get("response")?.as_str()?.to_string(),
        variant: v.get("variant").and_then(Value::as_u64).unwrap_or(0) as u8,
    })
}

/// A short description of a case for reports.
pub fn describe(case: &Case) -> String {
    format!("gold {} response {} variant {}", short(&case.gold), short(&case.response), case.variant)
}
