"""The frameworks' exact call shapes, without the frameworks (these run in CI).

Each test reproduces what one framework's reward client does, read from its source (OpenRLHF
0.11.2 `openrlhf/utils/agent.py` and `trainer/ppo_utils/samples_generator.py`, OpenRLHF 0.8.x
`trainer/ppo_utils/experience_maker_async.py`, slime `slime/rollout/rm_hub/__init__.py`), with the
standard library only. The tests beside this file run the frameworks' own code when it is
installed (verify/python/frameworks/venvs.sh).
"""

import asyncio
import json
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from rlverify import openrlhf

PROMPT = "<|im_start|>user\nWhat is 3*5? Put the answer in \\boxed{}.<|im_end|>\n<|im_start|>assistant\n"


def post_json(url, payload, timeout=120):
    """`session.post(url, json=payload)` then `raise_for_status()` and `.json()`."""
    req = urllib.request.Request(url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read())


def openrlhf_request(url, query, prompt, label):
    """OpenRLHF >= 0.10: `_fetch_rewards_via_http` for one sample, 5 tries a second apart, then no
    reward (None) and no error. Returns (reward, scores, extra_logs, failed tries)."""
    failures = 0
    for _ in range(5):
        try:
            info = post_json(url, {"query": [query], "prompts": [prompt], "labels": [label]})
            return info.get("rewards"), info.get("scores"), info.get("extra_logs") or {}, failures
        except (urllib.error.URLError, OSError):
            failures += 1
    return None, None, {}, failures


def test_openrlhf_single_sample_requests(serve):
    server = serve()
    url = server.url + "/get_reward"
    # Decoded with special tokens kept: the end-of-turn token, and a turn the model invented.
    cases = [
        ("A: 15<|im_end|>", "15", [1.0]),
        ("\\boxed{15}<|im_end|>\n<|im_start|>user\nAnd 2*4?<|im_end|>\n<|im_start|>assistant\n\\boxed{8}", "15", [1.0]),
        ("\\boxed{16}</s>", "15", [0.0]),
        ("\\boxed{15}<|im_end|>", None, [0.0]),  # a sample without a label: scored, not dropped
    ]
    for response, label, want in cases:
        reward, scores, logs, failures = openrlhf_request(url, PROMPT + response, PROMPT, label)
        assert (reward, failures) == (want, 0), response
        assert scores == want
        # samples_generator: `info[key] = torch.tensor([value])` for each log: one number each.
        assert logs and all(isinstance(v, list) and len(v) == 1 for v in logs.values()), logs
    assert openrlhf_request(url, PROMPT + "\\boxed{15}", PROMPT, None)[2]["invalid_gold"] == [1.0]


def test_openrlhf_burst_gets_every_reward(serve):
    """OpenRLHF's async rollout: one request per sample, all at once, each on its own connection."""
    server = serve("--max-in-flight", "2")
    url = server.url + "/get_reward"
    n = 200
    with ThreadPoolExecutor(max_workers=n) as pool:
        results = list(pool.map(
            lambda k: openrlhf_request(url, PROMPT + f"so \\boxed{{{k}}}<|im_end|>", PROMPT, str(k if k % 3 else k + 1)),
            range(n)))
    lost = [k for k, r in enumerate(results) if r[0] is None]
    retried = [k for k, r in enumerate(results) if r[3]]
    assert (lost, retried) == ([], [])
    assert [r[0] for r in results] == [[1.0] if k % 3 else [0.0] for k in range(n)]


def test_openrlhf_08_without_extra_logs(serve):
    """OpenRLHF 0.8.x reads each log with `.item()`, which lists lack: `--no-extra-logs`."""
    server = serve("--no-extra-logs")
    info = post_json(server.url + "/get_reward", {"query": [PROMPT + "\\boxed{15}"], "prompts": [PROMPT], "labels": ["15"]})
    assert info == {"rewards": [1.0], "scores": [1.0]}
    # What 0.8.x does with the answer: `torch.tensor([output["reward"]])`, then the logs.
    for key, value in info.get("extra_logs", {}).items():
        value.item()


def test_openrlhf_reward_func_file(tmp_path):
    """OpenRLHF >= 0.10 with a `.py` reward: `asyncio.to_thread(reward_func, [query], [prompt], [label])`."""
    path = tmp_path / "reward_func.py"
    path.write_text("from rlverify.openrlhf import reward_func\n")
    import importlib.util

    spec = importlib.util.spec_from_file_location("reward_func", str(path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    async def fetch(queries, prompts, labels):
        tasks = [asyncio.to_thread(module.reward_func, [q], [p], [label]) for q, p, label in zip(queries, prompts, labels)]
        return await asyncio.gather(*tasks)

    responses = ["A: 15</s>", "\\boxed{15}<|eot_id|>\\boxed{8}", "\\boxed{8}<|im_end|>", "\\boxed{15}"]
    labels = ["15", "15", "15", None]
    infos = asyncio.run(fetch([PROMPT + r for r in responses], [PROMPT] * 4, labels))
    values = [float(list(i["rewards"])[0]) for i in infos]
    assert values == [1.0, 1.0, 0.0, 0.0]
    quiet = openrlhf.make_reward_func(extra_logs=False)([PROMPT + "\\boxed{15}"], [PROMPT], ["15"])
    assert set(quiet) == {"rewards", "scores"}


def test_slime_remote_rm(serve):
    """slime `remote_rm`: `{"prompt", "response", "label"}` per sample, the whole JSON answer is
    the reward, an HTTP error is retried (for minutes) and then raised."""
    server = serve()
    url = server.url + "/slime"
    chat = [{"role": "user", "content": "What is 3*5?"}]
    cases = [
        ("What is 3*5?", "so \\boxed{15}", "15", 1.0),
        (chat, "The answer is 15.<|im_end|>", "15", 1.0),
        ("q", "\\boxed{15}", None, 0.0),  # `Sample.label` defaults to None
        ("q", "\\boxed{14}<|endoftext|>", 15, 0.0),
    ]
    for prompt, response, label, want in cases:
        reward = post_json(url, {"prompt": prompt, "response": response, "label": label})
        assert isinstance(reward, float) and reward == want, (response, label)
    # A request that is malformed as a whole is still a 400 naming the field.
    with pytest.raises(urllib.error.HTTPError) as e:
        post_json(url, {"prompt": "q", "response": ["not", "a", "string"], "label": "1"})
    assert e.value.code == 400 and "`response`" in json.loads(e.value.read())["error"]
