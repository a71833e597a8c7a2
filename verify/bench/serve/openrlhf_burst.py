"""OpenRLHF's own remote-reward client against a reward server, in bursts (BENCHMARKS.md).

Runs OpenRLHF's ``SingleTurnAgentExecutor.execute`` (openrlhf >= 0.10, the code that asks a remote
reward model during rollouts) once per sample, all samples of a burst at once, as OpenRLHF's async
rollout does: each sample is its own HTTP request on its own connection, retried 5 times a second
apart on any error, and a sample whose retries all fail silently gets no reward. Generation is
stood in for by an engine that answers each prompt with a recorded response from a JSONL corpus
(``response`` and ``gold`` rows) followed by ``<|im_end|>``, and a character tokenizer, so the
queries are prompt + response + end-of-turn token, decoded with special tokens kept.

For each burst size it prints one Markdown row: samples, rewards lost (no reward after the
client's retries), rewards that differ from one batched request of the same samples, items/s over
the burst, and the p50/p99/max time of one sample's reward (from its request to its reward).

    .venv-frameworks/main/bin/python verify/bench/serve/openrlhf_burst.py \\
        --url http://127.0.0.1:5000/get_reward --file ../shared/corpora/real_generations_dev.jsonl \\
        --bursts 64,1000,3000
"""

import argparse
import asyncio
import json
import resource
import time
import urllib.request
from types import SimpleNamespace

import torch
from openrlhf.utils.agent import SingleTurnAgentExecutor

END_OF_TURN = "<|im_end|>"


class CharTokenizer:
    """One token per character: decoding gives back exactly the text, special tokens kept."""

    def __call__(self, text, add_special_tokens=False, return_tensors=None):
        return {"input_ids": torch.tensor([[ord(c) for c in text]])}

    def decode(self, ids, skip_special_tokens=False):
        return "".join(map(chr, ids))


class RecordedEngine:
    """Stands in for vLLM: answers each prompt with its recorded response, then ``end``."""

    def __init__(self, responses, end=END_OF_TURN):
        self.responses = responses
        self.end = end

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        text = self.responses["".join(map(chr, prompt_token_ids))] + self.end
        out = SimpleNamespace(token_ids=[ord(c) for c in text], text=text, finish_reason="stop", logprobs=None)
        return SimpleNamespace(outputs=[out])


def samples(path, n):
    rows = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    rows = [r for r in rows if isinstance(r.get("response"), str) and r.get("gold") is not None]
    out = []
    for k in range(n):
        row = rows[k % len(rows)]
        prompt = (f"<|im_start|>user\nProblem {k} ({row.get('problem_id')}): put the final answer in "
                  f"\\boxed{{}}.<|im_end|>\n<|im_start|>assistant\n")
        out.append((prompt, row["response"], row["gold"] if isinstance(row["gold"], str) else json.dumps(row["gold"])))
    return out


def batched_rewards(url, items):
    """The same samples in one request: what every burst must agree with."""
    body = json.dumps({"query": [p + r + END_OF_TURN for p, r, _ in items], "prompts": [p for p, _, _ in items],
                       "labels": [g for _, _, g in items]}).encode()
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as resp:
        return json.loads(resp.read())["rewards"]


async def rollout(remote, items, end=END_OF_TURN):
    """OpenRLHF's async rollout: `execute` for every (prompt, response, label) at once, the reward
    asked of ``remote`` (a URL, or a ``.py`` file with ``reward_func``). (output, seconds) each."""
    executor = SingleTurnAgentExecutor(remote_rm_url=remote)
    engine = RecordedEngine({p: r for p, r, _ in items}, end)
    tokenizer = CharTokenizer()
    params = SimpleNamespace(max_tokens=1 << 20, logprobs=None)

    async def one(prompt, label):
        start = time.perf_counter()
        out = await executor.execute(prompt, label, params, 1 << 22, tokenizer, engine)
        return out, time.perf_counter() - start

    return await asyncio.gather(*(one(p, g) for p, _, g in items))


async def burst(url, items):
    start = time.perf_counter()
    results = await rollout(url, items)
    return [(out["reward"], secs) for out, secs in results], time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True)
    ap.add_argument("--file", required=True, help="JSONL rows with `response` and `gold`")
    ap.add_argument("--bursts", default="64,1000,3000", help="comma-separated burst sizes")
    ap.add_argument("--label", default="rlverify serve")
    args = ap.parse_args()
    # A burst is one socket per sample in this process.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print("| server | samples | rewards lost | rewards differing | items/s | p50 ms | p99 ms | max ms |")
    print("|---|---|---|---|---|---|---|---|")
    for n in [int(x) for x in args.bursts.split(",")]:
        items = samples(args.file, n)
        want = batched_rewards(args.url, items)
        results, wall = asyncio.run(burst(args.url, items))
        lost = sum(1 for r, _ in results if r is None)
        got = [None if r is None else (r[0] if isinstance(r, list) else float(r)) for r, _ in results]
        differ = sum(1 for g, w in zip(got, want) if g is not None and g != w)
        lat = sorted(t for _, t in results)
        pct = lambda q: lat[min(len(lat) - 1, max(0, int(q * len(lat) + 0.999999) - 1))] * 1e3
        print(f"| {args.label} | {n} | {lost} | {differ} | {n / wall:.0f} | {pct(0.5):.0f} | {pct(0.99):.0f} | "
              f"{lat[-1] * 1e3:.0f} |", flush=True)


if __name__ == "__main__":
    main()
