"""verl's own reward loading (`load_reward_manager` from a `custom_reward_function` config) and
reward managers, with the rlverify verl adapter. Skipped when verl is not installed."""

import pytest

verl = pytest.importorskip("verl", reason="verl is not installed (verify/python/frameworks/venvs.sh)")
np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")
OmegaConf = pytest.importorskip("omegaconf").OmegaConf

from verl import DataProto  # noqa: E402
from verl.trainer.ppo.reward import load_reward_manager  # noqa: E402

GOOD, BAD = "so the answer is $\\boxed{12}$.", "so the answer is $\\boxed{13}$."


class CharTokenizer:
    """One token per character (0 is padding); `decode` is all a reward manager asks of it."""

    def encode(self, text):
        return [ord(c) for c in text]

    def decode(self, ids, skip_special_tokens=True):
        return "".join(chr(int(i)) for i in ids if int(i) != 0)


def batch(responses, golds, prompt="What is 3*4?"):
    tok = CharTokenizer()
    p = tok.encode(prompt)
    width = max(len(r) for r in responses)
    rows = [tok.encode(r) + [0] * (width - len(r)) for r in responses]
    mask = [[1] * len(p) + [1] * len(r) + [0] * (width - len(r)) for r in responses]
    return DataProto.from_dict(
        tensors={"prompts": torch.tensor([p] * len(responses)), "responses": torch.tensor(rows),
                 "attention_mask": torch.tensor(mask)},
        non_tensors={"data_source": np.array(["math"] * len(responses), dtype=object),
                     "reward_model": np.array([{"ground_truth": g} for g in golds], dtype=object),
                     "extra_info": np.array([{"index": k} for k in range(len(responses))], dtype=object)},
    )


def config(tmp_path, name, manager="naive", **reward_kwargs):
    path = tmp_path / "my_reward.py"
    path.write_text("from rlverify.verl import compute_score, compute_score_batch\n")
    return OmegaConf.create({"reward": {
        "custom_reward_function": {"path": str(path), "name": name, "reward_kwargs": reward_kwargs},
        "reward_manager": {"source": "register", "name": manager, "module": None},
        "reward_model": {"enable": False}, "sandbox_fusion": None}})


@pytest.mark.parametrize("router", [None, "127.0.0.1:9"])
def test_reward_loop_naive_manager(tmp_path, router):
    """verl 0.9's reward loop: with a reward model enabled it adds `reward_router_address=` and
    `reward_model_tokenizer=` to every call (issue 20, point 1: a TypeError before)."""
    manager = load_reward_manager(config(tmp_path, "compute_score", reward="signed"), CharTokenizer(),
                                  reward_router_address=router, reward_model_tokenizer=None)
    results = []
    for response, gold in [(GOOD, "12"), (BAD, "12"), (GOOD, None)]:
        out = manager.loop.run_until_complete(manager.run_single(batch([response], [gold])))
        results.append((out["reward_score"], out["reward_extra_info"]["acc"], out["reward_extra_info"]["pred"]))
    assert results == [(1.0, True, "12"), (-1.0, False, "13"), (-1.0, False, "")]


def test_reward_loop_rejects_bad_option_values(tmp_path):
    manager = load_reward_manager(config(tmp_path, "compute_score", reward="ternary"), CharTokenizer(),
                                  reward_router_address="127.0.0.1:9", reward_model_tokenizer=None)
    with pytest.raises(ValueError, match="reward"):
        manager.loop.run_until_complete(manager.run_single(batch([GOOD], ["12"])))


def test_batch_reward_manager(tmp_path):
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.workers.reward_manager.batch import BatchRewardManager

    fn = get_custom_reward_fn(config(tmp_path, "compute_score_batch"))
    manager = BatchRewardManager(CharTokenizer(), num_examine=0, compute_score=fn)
    out = manager(batch([GOOD, BAD, GOOD], ["12", "12", ["11", "12"]]), return_dict=True)
    assert out["reward_tensor"].sum(dim=-1).tolist() == [1.0, 0.0, 1.0]
    assert list(out["reward_extra_info"]["pred"]) == ["12", "13", "12"]
