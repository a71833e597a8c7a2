//! The mutation engine (issue 30, point 3; `tests/mutation/`): right responses of the dev
//! corpora rewritten by families of operators into variants that must be wrong or must stay
//! right, measured per family against a committed floor (`tests/data/mutation_floor.json`).
//!
//! - `cargo test -p rlverify --test mutations -- --nocapture` prints the per-family and
//!   per-operator tables (the Markdown of BENCHMARKS.md).
//! - `RLVERIFY_UPDATE_MUTATION_FLOOR=1 cargo test -p rlverify --test mutations` rewrites the floor
//!   from the current run (after a change that should move it).
//! - `RLVERIFY_MUTATION_CASES=N` sets the variants per operator (default 100);
//!   `RLVERIFY_MUTATION_DUMP=1` writes every variant the verifier got wrong to
//!   `target/tmp/mutation/misses.jsonl`.
//!
//! Each family module also holds a unit test per operator on a fixed base.

mod mutation;

use mutation::measure::{self, Tally};
use mutation::{base, families, floor, report, Expect, Split};
use serde_json::json;
use std::collections::HashSet;
use std::io::Write;

/// Variants per operator unless `RLVERIFY_MUTATION_CASES` says otherwise.
const PER_OPERATOR: usize = 100;

#[test]
fn engine_has_enough_families_and_operators() {
    let all = families::all();
    let operators: Vec<_> = all.iter().flat_map(|f| f.operators.iter()).collect();
    assert!(all.len() >= 12, "{} families (at least 12)", all.len());
    assert!(operators.len() >= 40, "{} operators (at least 40)", operators.len());
    let mut names = HashSet::new();
    for f in all {
        assert!(names.insert(f.name), "family name {} used twice", f.name);
        assert!(!f.operators.is_empty() && !f.why.is_empty(), "family {} has no operators or no reason", f.name);
    }
    for op in &operators {
        assert!(names.insert(op.name), "operator name {} used twice", op.name);
    }
    for split in [Split::Dev, Split::HeldOut] {
        assert!(all.iter().filter(|f| f.split == split).count() >= 5, "fewer than 5 {} families", split.as_str());
    }
    for expect in [Expect::Wrong, Expect::Right] {
        assert!(operators.iter().filter(|op| op.expect == expect).count() >= 15, "fewer than 15 {expect:?} operators");
    }
}

fn per_operator() -> usize {
    std::env::var("RLVERIFY_MUTATION_CASES")
        .ok()
        .map(|v| v.parse().unwrap_or_else(|e| panic!("RLVERIFY_MUTATION_CASES={v:?}: {e}")))
        .unwrap_or(PER_OPERATOR)
}

/// The last `n` characters of `s`.
fn tail(s: &str, n: usize) -> &str {
    let mut start = s.len().saturating_sub(n);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// Up to `n` variants of `family` the verifier got wrong, printed.
fn examples(tallies: &[Tally], family: &str, n: usize) -> String {
    let misses = tallies.iter().filter(|t| t.family.name == family).flat_map(|t| t.misses.iter().map(move |m| (t, m)));
    misses
        .take(n)
        .map(|(t, m)| {
            format!(
                "  [{}] {} (must be {:?}) gold {:?}, status {}, extracted {:?}, rule {}\n    ...{:?}",
                t.operator.name,
                m.origin,
                t.operator.expect,
                m.variant.gold,
                m.score.status.as_str(),
                m.score.extracted,
                m.score.rule,
                tail(&m.variant.response, 300)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn dump(tallies: &[Tally]) {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mutation");
    std::fs::create_dir_all(&dir).expect("create target/tmp/mutation");
    let path = dir.join("misses.jsonl");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).expect("create misses.jsonl"));
    for t in tallies {
        for m in &t.misses {
            let row = json!({
                "family": t.family.name, "operator": t.operator.name, "expect": format!("{:?}", t.operator.expect),
                "origin": m.origin, "gold": m.variant.gold, "response": m.variant.response,
                "status": m.score.status.as_str(), "extracted": m.score.extracted, "rule": m.score.rule,
            });
            writeln!(file, "{row}").expect("write misses.jsonl");
        }
    }
    eprintln!("every miss: {}", path.display());
}

#[test]
fn families_hold_their_floor() {
    let Some(bases) = base::load() else { return };
    assert!(bases.len() >= 500, "only {} bases in the dev corpora (at least 500)", bases.len());
    let tallies = measure::run(&bases, per_operator());
    let from_cases = bases.iter().filter(|b| b.origin.starts_with("verifier_cases_dev")).count();
    eprintln!(
        "mutation engine: {} bases ({} of real_generations_dev, {from_cases} of verifier_cases_dev), up to {} \
         variants per operator\n\n{}\n{}",
        bases.len(),
        bases.len() - from_cases,
        per_operator(),
        report::family_table(&tallies),
        report::operator_table(&tallies)
    );
    if std::env::var_os("RLVERIFY_MUTATION_DUMP").is_some() {
        dump(&tallies);
    }
    let idle: Vec<_> = tallies.iter().filter(|t| t.variants < 3).map(|t| t.operator.name).collect();
    assert!(idle.is_empty(), "operators that applied to fewer than 3 bases: {idle:?}");
    if std::env::var_os(floor::UPDATE_VAR).is_some() {
        floor::write(&tallies);
        eprintln!("rewrote {}", floor::path().display());
        return;
    }
    let Some(committed) = floor::read() else {
        panic!("no floor at {}: run with {}=1 to write it", floor::path().display(), floor::UPDATE_VAR);
    };
    let mut problems = Vec::new();
    for family in families::all() {
        let now = floor::Counts::of(&tallies, family.name);
        let Some(then) = floor::counts(&committed, family.name) else {
            problems.push(format!("{}: not in the floor file", family.name));
            continue;
        };
        let worse = now.regressions(&then);
        if !worse.is_empty() {
            problems.push(format!("{}: {}\n{}", family.name, worse.join("; "), examples(&tallies, family.name, 4)));
        }
    }
    let known: HashSet<&str> = families::all().iter().map(|f| f.name).collect();
    problems.extend(
        committed
            .keys()
            .filter(|k| !known.contains(k.as_str()))
            .map(|k| format!("{k}: in the floor file, not in the engine")),
    );
    assert!(
        problems.is_empty(),
        "mutation families below their floor ({}):\n{}\n\nIf the change is deliberate (a family the verifier now \
         gets right, a new operator), rewrite the floor: {}=1 cargo test -p rlverify --test mutations",
        floor::path().display(),
        problems.join("\n"),
        floor::UPDATE_VAR
    );
}
