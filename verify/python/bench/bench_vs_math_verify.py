"""rlverify.score_batch vs math-verify's parse/verify loop, same rows, one process.

    python verify/python/bench/bench_vs_math_verify.py ../shared/corpora/real_generations_dev.jsonl

Needs the rlverify wheel and math-verify (`pip install math-verify`) in the same environment.
Each row is one `(gold, response)` pair (`gold`/`response` fields, or `--gold-field` /
`--response-field`). math-verify runs the usual way: `verify(parse(gold), parse(response))` in a
plain loop in the main thread, where its `signal.alarm` timeouts work; it has no thread-parallel
mode (its timeouts do nothing off the main thread), so its "all cores" figure is not measured.
Prints a Markdown table for BENCHMARKS.md: items/s and CPU seconds (the median pass of --repeat
for rlverify, one pass for math-verify, which is slow), and how often the two verdicts agree.
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time

import rlverify


def load(path, gold_field, response_field, label_field):
    rows, labels = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                obj = json.loads(line)
                rows.append((str(obj[gold_field]), str(obj[response_field])))
                label = obj.get(label_field)
                labels.append(label if isinstance(label, bool) else None)
    return rows, labels


def rate(n, secs):
    return n / secs if secs > 0 else float("inf")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input")
    ap.add_argument("--gold-field", default="gold")
    ap.add_argument("--response-field", default="response")
    ap.add_argument("--label-field", default="label", help="a true/false verdict to compare with, where present")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="the all-cores run (default: all)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N rows (0: all)")
    ap.add_argument("--skip-math-verify", action="store_true")
    args = ap.parse_args()
    rows, labels = load(args.input, args.gold_field, args.response_field, args.label_field)
    if args.limit:
        rows, labels = rows[: args.limit], labels[: args.limit]
    golds = [g for g, _ in rows]
    responses = [r for _, r in rows]
    n = len(rows)

    results = []
    verdicts = {}
    for threads in (1, args.threads):
        passes = []
        for _ in range(args.repeat):
            c, t = time.process_time(), time.perf_counter()
            scores = rlverify.score_batch(golds, responses, threads)
            passes.append((time.perf_counter() - t, time.process_time() - c))
        verdicts["rlverify"] = [s.correct for s in scores]
        wall, cpu = sorted(passes)[len(passes) // 2]
        results.append((f"rlverify.score_batch, {threads} thread{'s' if threads > 1 else ''}", wall, cpu))
    passes = []
    for _ in range(args.repeat):
        c, t = time.process_time(), time.perf_counter()
        loop = [rlverify.verify(g, r) for g, r in rows]
        passes.append((time.perf_counter() - t, time.process_time() - c))
    results.append(("rlverify.verify in a Python loop, 1 thread", *sorted(passes)[len(passes) // 2]))
    assert loop == verdicts["rlverify"]

    if not args.skip_math_verify:
        import logging

        from math_verify import parse, verify

        logging.disable(logging.CRITICAL)  # math-verify logs every timeout and parse failure
        out = []
        c, t = time.process_time(), time.perf_counter()
        for g, r in rows:
            try:
                out.append(bool(verify(parse(g), parse(r))))
            except Exception:  # noqa: BLE001 - count a crash as a wrong verdict, as trainers do
                out.append(False)
        results.append(("math-verify parse/verify loop, 1 thread (main)", time.perf_counter() - t, time.process_time() - c))
        verdicts["math-verify"] = out

    base = {name: wall for name, wall, _ in results}.get("math-verify parse/verify loop, 1 thread (main)")
    print(f"{n} rows of `{os.path.basename(args.input)}`, one process; Python {platform.python_version()}, "
          f"rlverify {rlverify.__version__}, {os.cpu_count()} cores")
    print()
    print("| scorer | items/s | wall s | CPU s | vs math-verify |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, secs, cpu in results:
        speedup = f"{base / secs:,.0f}x" if base else "-"
        print(f"| {name} | {rate(n, secs):,.0f} | {secs:.3f} | {cpu:.3f} | {speedup} |")
    if "math-verify" in verdicts:
        a, b = verdicts["rlverify"], verdicts["math-verify"]
        same = sum(x == y for x, y in zip(a, b))
        print()
        print(f"verdicts agree on {same}/{n} rows ({100 * same / n:.1f}%); correct: rlverify {sum(a)}, "
              f"math-verify {sum(b)}")
    labelled = [k for k, label in enumerate(labels) if label is not None]
    if labelled:
        agree = ", ".join(
            f"{name} {sum(verdicts[name][k] == labels[k] for k in labelled)}" for name in verdicts
        )
        print(f"agreement with the `{args.label_field}` field on its {len(labelled)} labelled rows: {agree}")


if __name__ == "__main__":
    sys.exit(main())
