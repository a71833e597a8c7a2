//! Throwaway audit: per row of a corpus, the extraction source, status and verdict.
use rlverify::{extract, Config, ExtractOptions, Gold};
use std::io::BufRead;
fn main() {
    let path = std::env::args().nth(1).expect("path");
    let cfg = Config::default();
    let f = std::io::BufReader::new(std::fs::File::open(&path).unwrap());
    for (i, line) in f.lines().enumerate() {
        let line = line.unwrap();
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        let resp = v.get("response").or(v.get("pred")).and_then(|x| x.as_str()).unwrap_or("");
        let gold = v["gold"].as_str().unwrap_or("");
        let g = Gold::new(gold, &cfg);
        let s = g.score(resp, &cfg);
        let src = extract(resp, &ExtractOptions { last_number_fallback: g.is_plain_number, ..Default::default() })
            .map(|a| a.source.as_str());
        println!(
            "{}",
            serde_json::json!({"i": i, "label": v.get("label").or(v.get("expected")), "src": src, "status": s.status.as_str(), "correct": s.correct, "ext": s.extracted, "rule": s.rule})
        );
    }
}
