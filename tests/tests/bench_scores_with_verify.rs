//! rlbench scores generations through rlverify: the per-problem correct counts behind its Avg@K and
//! Pass@k are exactly the verdicts `rlverify::score` gives the same responses.

use rl_tests::shared_file;
use rlbench::score::{GenRow, GenSample, Scorer};
use rlverify::{score, Config};
use serde_json::Value;
use std::collections::BTreeMap;

#[test]
fn bench_metrics_follow_verifier_verdicts() {
    let Some(path) = shared_file("corpora/real_generations_dev.jsonl") else { return };
    let text = std::fs::read_to_string(&path).expect("readable corpus");
    let cfg = Config::default();
    // Pool the responses of every model to a problem: (suite, problem id) -> (gold, responses).
    let mut problems: BTreeMap<(String, String), (String, Vec<String>)> = BTreeMap::new();
    for line in text.lines().take(1500) {
        let v: Value = serde_json::from_str(line).expect("corpus lines are JSON");
        let field = |k: &str| v[k].as_str().unwrap_or_default().to_string();
        let entry =
            problems.entry((field("suite"), field("problem_id"))).or_insert_with(|| (field("gold"), Vec::new()));
        entry.1.push(field("response"));
    }
    // Only problems with the same number of samples, so that Pass@k covers them all.
    let k = 2;
    let problems: Vec<_> = problems.into_iter().filter(|(_, (_, r))| r.len() >= k).collect();
    assert!(problems.len() > 50, "too few problems with {k} responses: {}", problems.len());

    let mut expected_avg = 0.0;
    let mut expected_pass2 = 0.0;
    let mut rows = Vec::new();
    for ((suite, id), (gold, responses)) in &problems {
        let c = responses[..k].iter().filter(|r| score(r, gold, &cfg).correct).count();
        expected_avg += c as f64 / k as f64;
        expected_pass2 += if c > 0 { 1.0 } else { 0.0 };
        rows.push(GenRow {
            id: id.clone(),
            gold: gold.clone(),
            suite: Some(suite.clone()),
            samples: responses[..k]
                .iter()
                .map(|r| GenSample { sample: None, response: r.clone(), finish_reason: None, tokens: None })
                .collect(),
        });
    }
    let n = problems.len() as f64;
    let mut scorer = Scorer::new(cfg);
    scorer.push(rows);
    let summary = scorer.finish();
    assert_eq!(summary.all.n_problems, problems.len());
    assert!((summary.all.avg - expected_avg / n).abs() < 1e-12, "avg {} vs {}", summary.all.avg, expected_avg / n);
    let pass2 = summary.all.get("pass@2").expect("pass@2 reported");
    assert!((pass2 - expected_pass2 / n).abs() < 1e-12, "pass@2 {pass2} vs {}", expected_pass2 / n);
    // Pass@1 is Avg@K (the unbiased estimator at k = 1).
    let pass1 = summary.all.get("pass@1").expect("pass@1 reported");
    assert!((pass1 - summary.all.avg).abs() < 1e-12);
}
