//! `rlbench score` and `rlverify score` read rows through one reader (`rlverify::input`): the same
//! lines are skipped with the same messages, the same gold and responses are taken from each row
//! (field names and their order), and every response gets the verdict `rlverify` gives it. The one
//! difference is deliberate: rlbench needs a problem to group a one-response row into (an id or a
//! prompt), rlverify does not.

use rlbench::score::score_reader_observed;
use rlverify::input::{parse_line, FieldSpec, InputError, JsonLines};
use rlverify::{score, Config};
use std::io::Cursor;

/// Rows of every shape both tools read, and lines both must skip.
fn fixture() -> Vec<u8> {
    let lines: [&[u8]; 17] = [
        // Both `gold` and `answer`: the first of the gold fields wins in both tools.
        br#"{"id": "both", "gold": "4", "answer": "5", "response": "so \\boxed{4}"}"#,
        br#"{"id": "both", "gold": "4", "answer": "5", "response": "so \\boxed{5}"}"#,
        // Response field order: `response` before `completion`.
        br#"{"id": "order", "gold": "7", "response": "\\boxed{7}", "completion": "\\boxed{8}"}"#,
        // TRL chat completions, verl's `uid` and nested ground truth.
        br#"{"uid": "u1", "reward_model": {"ground_truth": "12"}, "completion": [{"role": "assistant", "content": "It is \\boxed{12}."}]}"#,
        br#"{"uid": "u1", "reward_model": {"ground_truth": "12"}, "completion": [{"role": "assistant", "content": "It is \\boxed{13}."}]}"#,
        // vLLM `outputs` and OpenAI `choices`: K responses in one row.
        br#"{"question_id": "v", "gold": "\\frac12", "outputs": [{"text": "\\boxed{0.5}", "finish_reason": "stop"}, {"text": "\\boxed{2}", "finish_reason": "length"}]}"#,
        br#"{"problem_id": "o", "target": "3", "choices": [{"message": {"content": "\\boxed{3}"}}, {"message": {"content": null}}]}"#,
        // A list-valued prediction (Qwen eval dumps).
        br#"{"idx": 9, "gt": "x+1", "pred": ["\\boxed{1+x}", "\\boxed{x}"]}"#,
        // No id: grouped by prompt in rlbench.
        br#"{"prompt": "What is 2+2?", "gold": "4", "response": "\\boxed{4}"}"#,
        br#"{"prompt": "What is 2+2?", "gold": "4", "response": "\\boxed{22}"}"#,
        // Python's json.dumps writes NaN: read as null, the row is still graded.
        br#"{"id": "nan", "gold": "2", "response": "\\boxed{2}", "logprob": NaN}"#,
        // Lines both tools skip, each with its own message.
        br#"{"id": "bad-json", "gold": "1", "response": "1""#,
        b"{\"id\": \"utf8\", \"gold\": \"1\", \"response\": \"\xff\"}",
        br#"{"id": "no-gold", "response": "\boxed{1}"}"#,
        br#"{"id": "no-response", "gold": "1"}"#,
        br#"{"id": "wrong-type", "gold": "1", "response": 17}"#,
        // rlverify grades it; rlbench has no problem to put it in.
        br#"{"gold": "1", "response": "\\boxed{1}"}"#,
    ];
    let mut out = Vec::new();
    for (k, line) in lines.iter().enumerate() {
        out.extend_from_slice(line);
        // A blank line between some rows: skipped, never renumbered.
        out.extend_from_slice(if k % 5 == 2 { b"\r\n\n" } else { b"\n" });
    }
    out
}

#[test]
fn rlbench_and_rlverify_read_rows_alike() {
    let data = fixture();
    let fields = FieldSpec::default();
    let cfg = Config::default();

    // rlverify score's path: each non-blank line through `parse_line`, each response scored.
    let mut verify_errors = Vec::new();
    let mut no_group_lines = Vec::new();
    let mut verdicts = Vec::new();
    let mut lines = JsonLines::new(Cursor::new(data.clone()));
    while let Some(line) = lines.next_line().expect("in-memory read") {
        match parse_line(&line.bytes, &fields) {
            Ok(rec) => {
                let groupable = rec.group_key().is_some() || rec.responses.as_slice().len() > 1;
                for r in rec.responses.as_slice() {
                    if groupable {
                        verdicts.push((r.clone(), score(r, &rec.gold, &cfg).correct));
                    }
                }
                if !groupable {
                    no_group_lines.push(line.number);
                }
            }
            Err(e) => verify_errors.push((line.number, e.to_string())),
        }
    }

    // rlbench score's path, observing each scored sample in input order.
    let mut observed = Vec::new();
    let scored = score_reader_observed(Cursor::new(data), cfg.clone(), &fields, 3, |_| {}, &mut |_, r| {
        observed.push((r.extracted.clone(), r.correct))
    })
    .expect("in-memory read");

    // The same lines are skipped, with the same messages; the only extra rlbench errors are the
    // rows it cannot group, and they say why.
    let bench_errors: Vec<(u64, String)> = scored.errors.iter().map(|e| (e.line, e.message.clone())).collect();
    let no_group = InputError::no_group(&fields).to_string();
    let (grouping, reading): (Vec<_>, Vec<_>) = bench_errors.into_iter().partition(|(_, m)| *m == no_group);
    assert_eq!(reading, verify_errors);
    assert_eq!(grouping.iter().map(|(n, _)| *n).collect::<Vec<_>>(), no_group_lines);
    assert_eq!(verify_errors.len(), 5, "{verify_errors:#?}");
    assert_eq!(no_group_lines.len(), 1);
    assert!(verify_errors.iter().any(|(_, m)| m.contains("UTF-8")), "{verify_errors:#?}");

    // Every response rlverify grades, rlbench grades the same way, in the same order.
    assert_eq!(observed.len(), verdicts.len());
    for ((response, expected), (extracted, correct)) in verdicts.iter().zip(&observed) {
        assert_eq!(correct, expected, "{response:?} (rlbench extracted {extracted:?})");
    }
    let right: Vec<bool> = verdicts.iter().map(|(_, c)| *c).collect();
    assert_eq!(
        right,
        [true, false, true, true, false, true, false, true, false, true, false, true, false, true],
        "the gold and response fields picked from each row"
    );

    // Problems: both(2) order(1) u1(2) v(2) o(2) 9(2) prompt(2) nan(1) -> 8 problems, 14 samples.
    assert_eq!(scored.summary.all.n_problems, 8);
    assert_eq!((scored.grouped_by_prompt, scored.prompt_problems), (2, 1));
    assert_eq!(scored.lines, 17);
}
