//! The Rust snippets of the READMEs compile and run (issue 20, point 9). Each README block marked
//! `<!-- ci: compiled in verify/tests/readme.rs -->` must appear verbatim between a `README:` pair
//! of comments below; `verify/python/tests/test_readme.py` checks that it does.

#[test]
#[rustfmt::skip] // the README's alignment of comments
fn library_example() {
    // README: begin
    use rlverify::{Config, Gold};
    let cfg = Config::default();
    let gold = Gold::new("\\frac{1}{2}", &cfg);          // extract + parse once per problem
    let s = gold.score("... so $\\boxed{0.5}$", &cfg);  // Score { correct, reward, status, extracted, .. }
    assert!(s.correct);
    // README: end
}
