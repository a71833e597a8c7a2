//! A short, seeded fuzz run inside `cargo test` (the long runs are `examples/fuzz.rs`; the
//! mutator and the properties are in `tests/fuzzer/mod.rs`, shared by both).
//!
//! The run is deterministic: case `i` is a pure function of the seed, `i` and the seed pool. One
//! test uses only the built-in seeds (it runs anywhere); the other adds the dev corpora and the
//! benchmarks' answers from the read-only shared folder and is skipped with a message when the
//! folder is missing (a failure when `CI` is set). `RLVERIFY_FUZZ_CASES` sets the number of cases of each.
//!
//! No property here is timed tightly: the `slow` bound is 30 s per call (a debug build on a busy
//! machine stays far below it; only a call the step budget does not bound can reach it).

mod fuzzer;

use fuzzer::{builtin_seeds, case, check_case, describe, CheckOptions, Rng, Seeds};
use std::time::Duration;

const SEED: u64 = 0x005e_ed0f_f022;

fn cases() -> u64 {
    std::env::var("RLVERIFY_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1500)
}

fn run(seeds: &Seeds, n: u64) {
    let mut failures = Vec::new();
    for i in 0..n {
        let c = case(seeds, SEED, i);
        let opts = CheckOptions { max_call: Duration::from_secs(30), fresh_thread: i % 50 == 0 };
        if let Err(f) = check_case(&c, &opts) {
            failures.push(format!("case {i}: {f}\n  {}", describe(&c)));
        }
    }
    assert!(failures.is_empty(), "{} of {n} cases failed:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn fuzz_builtin_seeds() {
    run(&builtin_seeds(), cases());
}

#[test]
fn fuzz_corpora_seeds() {
    let mut seeds = builtin_seeds();
    // The shared-data guard (a skip notice, or a failure under CI), unless a folder is named.
    if std::env::var_os("RLVERIFY_SHARED_DIR").is_none() && rl_tests::shared_path("corpora").is_none() {
        return;
    }
    let dir = Seeds::shared_dir();
    assert!(seeds.load_shared(&dir) > 0, "no corpora under {}", dir.display());
    run(&seeds, cases());
}

/// The run is reproducible: a case depends only on the seed and its index.
#[test]
fn cases_are_a_function_of_seed_and_index() {
    let seeds = builtin_seeds();
    for i in [0, 1, 17, 999_999] {
        assert_eq!(case(&seeds, SEED, i), case(&seeds, SEED, i));
    }
    let distinct: std::collections::HashSet<String> =
        (0..200).map(|i| case(&seeds, SEED, i)).map(|c| format!("{}\u{0}{}", c.gold, c.response)).collect();
    assert!(distinct.len() > 190, "only {} distinct cases of 200", distinct.len());
}

/// The mutations change their input, keep UTF-8 valid (they work on `String`), reach the shapes
/// they are meant to (huge exponents, deep nesting, boxes, matrices, unicode) and stay bounded.
#[test]
fn mutations_are_varied_and_bounded() {
    let seeds = builtin_seeds();
    let mut rng = Rng::new(7);
    let mut changed = 0;
    let mut seen = std::collections::HashSet::new();
    let mut all = String::new();
    for k in 0..2000 {
        let a = &seeds.answers[k % seeds.answers.len()];
        let m = fuzzer::mutate(a, &seeds, &mut rng);
        assert!(m.len() <= 1 << 17, "mutant of {a:?} has {} bytes", m.len());
        changed += usize::from(&m != a);
        if m.len() < 2000 {
            all.push_str(&m);
        }
        seen.insert(m);
    }
    assert!(changed > 1900, "only {changed} of 2000 mutants differ from their seed");
    assert!(seen.len() > 1800, "only {} distinct mutants of 2000", seen.len());
    for shape in ["98765432", "\\frac{", "\\boxed{", "\\begin{pmatrix}", "\\pm", "\\left(", "\\text{", "{{{{{"] {
        assert!(all.contains(shape), "no short mutant contains {shape:?}");
    }
    assert!(!all.is_ascii(), "no mutant contains non-ASCII text");
}

/// The checks themselves: a caught panic is reported with its message, an inconsistent score or
/// an unboxable answer is recognised, and closed exact expressions are told from the rest.
#[test]
fn the_checks_can_fail() {
    let err = fuzzer::catch(|| -> u8 { panic!("boom {}", 42) }).unwrap_err();
    assert!(err.contains("boom 42"), "{err}");
    assert_eq!(fuzzer::catch(|| 5), Ok(5));
    assert!(fuzzer::boxable("\\frac{1}{2}"));
    for bad in ["{", "}{", "\\boxed{1}", "$1$", "5.", " 5", "a</think>b", "1\\\\"] {
        assert!(!fuzzer::boxable(bad), "{bad:?} is not boxable");
    }
    let cfg = rlverify::Config::default();
    let p = |s: &str| rlverify::parse(s, &cfg.limits).unwrap();
    assert!(fuzzer::closed_exact(&p("\\frac{\\sqrt{8}}{3!} + \\pi")));
    for open in ["x + 1", "0.5", "28\\%", "30^\\circ", "(1, 2)", "\\text{yes}", "f(2)"] {
        assert!(!fuzzer::closed_exact(&p(open)), "{open:?} is not closed and exact");
    }
    // A case that holds every property passes.
    let ok = fuzzer::Case { gold: "\\frac12".into(), response: "so $\\boxed{0.5}$".into(), variant: 0 };
    let opts = CheckOptions { max_call: Duration::from_secs(30), fresh_thread: true };
    assert_eq!(check_case(&ok, &opts), Ok(()));
}
