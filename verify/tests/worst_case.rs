//! A generated worst-case corpus: every input must come back from `score` with a status (any
//! status), never a panic, a hang or a stack overflow, on a thread with a small stack.
//!
//! Each pathological text is scored as a response (against gold `42`), as a gold (against response
//! `42`) and against itself. Every call runs on a thread with a 512 KiB stack named after the case,
//! so a stack overflow aborts with the case's name. The corpus also goes through a rayon pool with
//! the same stack size and must give the same verdicts (rewards must be reproducible).
//! Speed is not tested here; `rlverify bench` measures it.

use rayon::prelude::*;
use rlverify::{score, Config, Score, Status};

/// Stack size of every scoring thread.
const STACK: usize = 512 * 1024;

/// One pathological text.
struct Case {
    name: String,
    text: String,
    /// The text clearly does not denote 42, so scoring it against gold `42` must not be correct.
    not_42: bool,
}

fn case(name: impl Into<String>, text: impl Into<String>, not_42: bool) -> Case {
    Case { name: name.into(), text: text.into(), not_42 }
}

/// Deterministic pseudo-random bytes (xorshift64).
fn junk_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.max(1);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn nested(open: &str, inner: &str, close: &str, depth: usize) -> String {
    format!("{}{inner}{}", open.repeat(depth), close.repeat(depth))
}

fn big_int(digits: usize) -> String {
    format!("1{}", "0".repeat(digits - 1))
}

fn corpus() -> Vec<Case> {
    let mut v = vec![
        // Deep nesting.
        case("open braces x100k", "{".repeat(100_000), true),
        case("close braces x100k", "}".repeat(100_000), true),
        case("balanced braces x100k", nested("{", "1", "}", 100_000), true),
        case("unclosed frac x10k", "\\frac{".repeat(10_000), true),
        case("nested frac x10k", nested("\\frac{", "1", "}{2}", 10_000), true),
        case("open parens x50k", "(".repeat(50_000), true),
        case("balanced parens x50k", nested("(", "1", ")", 50_000), true),
        case("boxed parens x50k", format!("\\boxed{{{}}}", nested("(", "1", ")", 50_000)), true),
        case("brackets x50k", nested("[", "1", "]", 50_000), true),
        case("left right x10k", nested("\\left(", "1", "\\right)", 10_000), true),
        case("set braces x10k", nested("\\{", "1", "\\}", 10_000), true),
        case("sqrt nested x5000", nested("\\sqrt{", "2", "}", 5_000), true),
        case("sqrt index nested x5000", nested("\\sqrt[", "3", "]{2}", 5_000), true),
        case("sin nested x10k", nested("\\sin(", "1", ")", 10_000), true),
        case("exponent tower x10k", format!("{}2", "2^{".repeat(10_000)) + &"}".repeat(10_000), true),
        case("boxed nested x5000", nested("\\boxed{", "1", "}", 5_000), true),
        case("pmatrix nested x1000", nested("\\begin{pmatrix}", "1", "\\end{pmatrix}", 1_000), true),
        // Huge numbers.
        case("2^2^2^100", "2^{2^{2^{100}}}", true),
        case("10^10^10", "10^{10^{10}}", true),
        case("boxed 10^10^10", "The answer is $\\boxed{10^{10^{10}}}$.", true),
        case("right-assoc tower 2^2^2^2^2^2", "2^2^2^2^2^2", true),
        case("9^9^9^9", "9^{9^{9^{9}}}", true),
        case("negative huge exponent", "2^{-10^{10}}", true),
        case("decimal huge exponent", "1.0000001^{10^{12}}", true),
        case("e^10^10", "e^{10^{10}}", true),
        case("x^10^10", "x^{10^{10}}", true),
        case("(-1)^10^18", "(-1)^{10^{18}}", true),
        case("1 over 10^10^10", "\\frac{1}{10^{10^{10}}}", true),
        case("100000!", "100000!", true),
        case("(10^9)!", "(10^{9})!", true),
        case("factorial chain", format!("3{}", "!".repeat(1_000)), true),
        case("(100!)!", "(100!)!", true),
        case("double factorial", "10000!!", true),
        case("huge binomial", "\\binom{10^{9}}{5 \\cdot 10^{8}}", true),
        case("10k-digit integer", big_int(10_000), true),
        case("boxed 10k-digit integer", format!("so \\boxed{{{}}}", big_int(10_000)), true),
        case("10k-digit decimal", format!("0.{}", "3".repeat(10_000)), true),
        case("1e100000", "1e100000", true),
        case("1e-100000", "1e-100000", true),
        case("10^-10000", "10^{-10000}", true),
        case("1.5^1000000", "1.5^{1000000}", true),
        case("division by zero", "\\frac{1}{0}", true),
        case("zero over zero", "0/0", true),
        case("zero to the zero", "0^0", true),
        case("zero to minus one", "0^{-1}", true),
        case("infinity minus infinity", "\\infty - \\infty", true),
        case("log of zero", "\\log 0", true),
        case("ln of minus one", "\\ln(-1)", true),
        case("tan of pi/2", "\\tan(\\pi/2)", true),
        // Long flat expressions.
        case("sum of 100k ones", format!("{}1", "1+".repeat(99_999)), true),
        case("sum of 50k symbols", format!("{}x", "x+".repeat(49_999)), true),
        case("alternating sum 100k", "1-1+".repeat(25_000) + "0", true),
        case("product of 10k twos", format!("{}2", "2\\cdot ".repeat(9_999)), true),
        case("sum of 10k fracs", format!("{}\\frac{{1}}{{2}}", "\\frac{1}{2}+".repeat(9_999)), true),
        case("relation chain 10k", format!("{}x", "x=".repeat(10_000)), true),
        case("list of 100k", (0..100_000).map(|k| k.to_string()).collect::<Vec<_>>().join(", "), true),
        case(
            "set of 20k",
            format!("\\{{{}\\}}", (0..20_000).map(|k| k.to_string()).collect::<Vec<_>>().join(",")),
            true,
        ),
        case(
            "matrix 300x300",
            format!("\\begin{{pmatrix}}{}\\end{{pmatrix}}", vec!["1&".repeat(299) + "1"; 300].join("\\\\")),
            true,
        ),
        case("polynomial power", "(x+1)^{1000000}", true),
        case("polynomial product", "(x+1)(x+2)".repeat(2_000), true),
        // Many boxes and tags.
        case("boxed openings x5000", "\\boxed{".repeat(5_000), true),
        case("many closed boxes x10k", "\\boxed{1} ".repeat(10_000), true),
        case("boxed without braces x100k", "\\boxed".repeat(100_000), true),
        case("answer tags x10k", "<answer>".repeat(10_000), true),
        case("nested answer tags", nested("<answer>", "1", "</answer>", 5_000), true),
        case("gsm8k markers x10k", "#### ".repeat(10_000), true),
        case("final answer phrases x10k", "The final answer is ".repeat(10_000), true),
        case("dollars x100k", "$".repeat(100_000), true),
        case("display math x20k", "\\[".repeat(20_000), true),
        case("backslashes x100k", "\\".repeat(100_000), true),
        case("carets x100k", "^".repeat(100_000), true),
        case("frac without braces x10k", "\\frac".repeat(10_000), true),
        case("sqrt without braces x10k", "\\sqrt".repeat(10_000), true),
        case("pathological braces", "}{".repeat(50_000), true),
        case("brace soup", "{}}{{}{}}}{{{".repeat(10_000), true),
        case("empty boxes x10k", "\\boxed{}".repeat(10_000), true),
        case("unknown commands x10k", "\\foo{".repeat(10_000), true),
        case("text 1MB", format!("\\text{{{}}}", "a".repeat(1 << 20)), true),
        // Junk and encodings.
        case("binary junk 64KiB", lossy(&junk_bytes(64 << 10, 7)), true),
        case("boxed binary junk", format!("\\boxed{{{}}}", lossy(&junk_bytes(4 << 10, 11))), true),
        case("NUL bytes x10k", "\0".repeat(10_000), true),
        case("NUL inside box", "\\boxed{4\u{0}2}", false),
        case("NUL around answer", "\0\0 answer: 42 \0\0", false),
        case("invalid UTF-8", lossy(&[0xff, 0xfe, 0xfd, b'4', 0x80, b'2', 0xc0, 0xaf, 0xed, 0xa0, 0x80]), false),
        case("lone continuation bytes", lossy(&[0x80; 10_000]), true),
        case("combining marks x50k", "1\u{0301}".repeat(50_000), true),
        case("RTL and zero-width", "\u{202e}\u{200b}\\boxed{\u{2067}1\u{200d}}\u{2069}", true),
        case("astral plane chars", "𝟒𝟐𝟙".repeat(10_000), false),
        case("empty", "", true),
        case("whitespace only", " \n\t\r ".repeat(1_000), true),
    ];
    // Megabyte responses: under and over the response size cap.
    let filler = "Let us compute step by step, carefully. ".repeat((1 << 20) / 40);
    v.push(case("1 MB response, boxed at the end", format!("{filler}\\boxed{{7}}"), true));
    v.push(case("1 MB response, no answer", filler.clone(), true));
    v.push(case("5 MB response", format!("{}\\boxed{{7}}", filler.repeat(5)), true));
    v.push(case("1 MB of digits", "9".repeat(1 << 20), true));
    v.push(case("1 MB single box", format!("\\boxed{{{}}}", "1+".repeat(1 << 19)), true));
    v
}

/// Pairs that must never be scored correct, whatever limits are hit on the way.
fn must_not_match() -> Vec<(&'static str, String, String)> {
    let n = big_int(10_000);
    let n_plus_1 = format!("1{}1", "0".repeat(9_998));
    vec![
        ("tower vs tower + 1", "2^{2^{2^{100}}}".into(), "2^{2^{2^{100}}}+1".into()),
        ("10^10^10 vs + 1", "10^{10^{10}}".into(), "10^{10^{10}}+1".into()),
        ("10^10^10 vs 10^10^11", "10^{10^{10}}".into(), "10^{10^{11}}".into()),
        ("100000! vs 100001!", "100000!".into(), "100001!".into()),
        ("(10^9)! vs (10^9+1)!", "(10^{9})!".into(), "(10^{9}+1)!".into()),
        ("1/2004! vs 1/2006!", "\\frac{1}{2004!}".into(), "\\frac{1}{2006!}".into()),
        ("10k digits vs 10k digits + 1", n.clone(), n_plus_1),
        ("sqrt nest of 2 vs of 3", nested("\\sqrt{", "2", "}", 5_000), nested("\\sqrt{", "3", "}", 5_000)),
        ("100k ones vs 99999", format!("{}1", "1+".repeat(99_999)), "99999".into()),
        ("huge exponent vs zero", "2^{-10^{10}}".into(), "0".into()),
        ("huge power vs infinity", "10^{10^{10}}".into(), "\\infty".into()),
    ]
}

/// Invariants every score must satisfy, whatever its verdict.
fn check_invariants(what: &str, s: &Score) {
    assert_eq!(s.correct, s.status == Status::Correct, "{what}: correct vs status {:?}", s.status);
    assert_eq!(s.reward, if s.correct { 1.0 } else { 0.0 }, "{what}: binary reward");
    assert_eq!(s.limit.is_some(), s.status == Status::Limit, "{what}: limit set iff status is limit");
    if s.status == Status::NoAnswer {
        assert!(s.extracted.is_none(), "{what}: no_answer with an extracted answer");
    }
}

/// The three scores of one case: as response, as gold, against itself.
fn score_case(c: &Case, cfg: &Config) -> [Score; 3] {
    [score(&c.text, "42", cfg), score("42", &c.text, cfg), score(&c.text, &c.text, cfg)]
}

/// Run `f` on a fresh thread with the small stack, named after the case.
fn on_small_stack<T: Send + 'static>(name: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let handle = std::thread::Builder::new()
        .name(format!("worst-case: {name}"))
        .stack_size(STACK)
        .spawn(f)
        .unwrap_or_else(|e| panic!("cannot spawn a thread for {name}: {e}"));
    handle.join().unwrap_or_else(|_| panic!("`{name}` panicked (see the message above)"))
}

#[test]
fn every_case_returns_a_status_on_a_small_stack() {
    for c in corpus() {
        let name = c.name.clone();
        let not_42 = c.not_42;
        let scores = on_small_stack(&name, move || score_case(&c, &Config::default()));
        for (role, s) in ["as response", "as gold", "against itself"].iter().zip(&scores) {
            check_invariants(&format!("{name} {role}"), s);
        }
        if not_42 {
            assert!(!scores[0].correct, "`{name}` scored correct against gold 42: {:?}", scores[0]);
            assert!(!scores[1].correct, "response 42 scored correct against gold `{name}`: {:?}", scores[1]);
        }
    }
}

#[test]
fn huge_values_never_match_different_ones() {
    for (name, a, b) in must_not_match() {
        let scores = on_small_stack(name, move || {
            let cfg = Config::default();
            [score(&a, &b, &cfg), score(&b, &a, &cfg)]
        });
        for s in &scores {
            check_invariants(name, s);
            assert!(!s.correct, "`{name}` was scored correct: {s:?}");
        }
    }
}

#[test]
fn rayon_gives_the_same_verdicts_as_one_thread() {
    let cases = corpus();
    let cfg = Config::default();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).stack_size(STACK).build().expect("build a rayon pool");
    let parallel: Vec<[Score; 3]> = pool.install(|| cases.par_iter().map(|c| score_case(c, &cfg)).collect());
    let serial: Vec<[Score; 3]> = cases.iter().map(|c| score_case(c, &cfg)).collect();
    for ((c, p), s) in cases.iter().zip(&parallel).zip(&serial) {
        assert_eq!(p, s, "`{}` scored differently in the pool", c.name);
    }
}
