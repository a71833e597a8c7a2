"""End-of-turn tokens (issue 20, point 6): frameworks decode with special tokens kept (OpenRLHF sends
`A: 15</s>`). The core cuts the response at the first end-of-turn token; every Python path goes
through it: score, verify, score_batch, extract, the compat layer and the three adapters."""

import pytest

import rlverify
from rlverify import compat, openrlhf, trl, verl

# (response, right for the gold 15): the token ends the answer; what follows is another turn.
CASES = [
    ("A: 15</s>", True),
    ("The answer is $15$.<|eot_id|><|end_of_text|>", True),
    ("so \\boxed{15}<|im_end|>\n<|im_start|>user\nAnd 2*4?<|im_end|>\n<|im_start|>assistant\n\\boxed{8}", True),
    ("\\boxed{15}<end_of_turn>\n<start_of_turn>user\n\\boxed{8}", True),
    ("\\boxed{16}<|im_end|>\n<|im_start|>assistant\n\\boxed{15}", False),
    ("\\boxed{16}<｜end▁of▁sentence｜>\\boxed{15}", False),
]
RESPONSES = [r for r, _ in CASES]
WANT = [1.0 if ok else 0.0 for _, ok in CASES]


@pytest.mark.parametrize("response, ok", CASES)
def test_score_verify_extract(response, ok):
    assert rlverify.verify("15", response) is ok
    assert rlverify.score("15", response).correct is ok
    assert (rlverify.extract(response) == "15") is ok


def test_score_batch():
    assert [s.reward for s in rlverify.score_batch(["15"] * len(CASES), RESPONSES)] == WANT
    assert [s.reward for s in rlverify.score_batch(["15"] * len(CASES), RESPONSES, threads=1)] == WANT


def test_compat():
    for response, ok in CASES:
        assert compat.verify(compat.parse("$15$"), compat.parse(response)) is ok, response


def test_verl():
    assert [verl.compute_score("math", r, "15")["score"] for r in RESPONSES] == WANT
    out = verl.compute_score_batch(["math"] * len(CASES), RESPONSES, ["15"] * len(CASES), [None] * len(CASES))
    assert [o["score"] for o in out] == WANT


def test_trl():
    fn = trl.reward_function("answer")
    chats = [[{"role": "assistant", "content": r}] for r in RESPONSES]
    assert fn(prompts=["q"] * len(CASES), completions=RESPONSES, answer=["15"] * len(CASES)) == WANT
    assert fn(prompts=["q"] * len(CASES), completions=chats, answer=["15"] * len(CASES)) == WANT


def test_openrlhf():
    prompt = "<|im_start|>user\nWhat is 3*5?<|im_end|>\n<|im_start|>assistant\n"
    out = openrlhf.reward_func([prompt + r for r in RESPONSES], [prompt] * len(CASES), ["15"] * len(CASES))
    rewards = out["rewards"]
    assert (rewards.tolist() if hasattr(rewards, "tolist") else list(rewards)) == WANT


def test_format_reward_before_end_of_turn_tokens():
    s = rlverify.score("15", "<think>3*5=15</think><answer>\\boxed{15}</answer><|im_end|>", format_reward=True)
    assert (s.format_ok, s.reward) == (True, 1.5)
