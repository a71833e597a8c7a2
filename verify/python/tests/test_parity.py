"""Identical verdicts to `rlverify score` on the dev corpus, with default and non-default options."""

import json
import subprocess

import pytest

import rlverify


@pytest.mark.parametrize(
    "flags, options",
    [([], {}), (["--reward", "signed", "--format-reward=0.25", "--truncated", "lenient", "--last-number", "never"],
                dict(reward="signed", format_reward=0.25, truncated="lenient", last_number="never"))],
)
def test_same_verdicts_as_the_cli(corpus_rows, rlverify_bin, flags, options, tmp_path):
    lines = [json.dumps({"response": r["response"], "gold": r["gold"]}) for r in corpus_rows]
    src = tmp_path / "rows.jsonl"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = subprocess.run([rlverify_bin, "score", str(src), "-q", *flags], check=True, capture_output=True, text=True)
    cli = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(cli) == len(corpus_rows)
    py = rlverify.score_batch([r["gold"] for r in corpus_rows], [r["response"] for r in corpus_rows], **options)
    mismatches = []
    for k, (c, p) in enumerate(zip(cli, py)):
        got = (p.correct, p.reward, p.status, p.extracted, p.limit, p.format_ok)
        want = (c["correct"], c["reward"], c["status"], c["extracted"], c.get("limit"), c.get("format_ok"))
        if got != want:
            mismatches.append((k, want, got))
    assert not mismatches, f"{len(mismatches)} rows differ, first: {mismatches[:3]}"
    # The one-item functions agree with the batch.
    for r, p in list(zip(corpus_rows, py))[:300]:
        assert rlverify.score(r["gold"], r["response"], **options) == p
        assert rlverify.verify(r["gold"], r["response"], **options) is p.correct
