"""verl, TRL and OpenRLHF adapters, called with the exact shapes their trainers use."""

import functools
import importlib.util
import pickle

import pytest

import rlverify
from rlverify import openrlhf, trl, verl

GOOD = "Let me think. 3 * 4 = 12, so the answer is $\\boxed{12}$."
BAD = "Let me think. 3 * 4 = 13, so the answer is $\\boxed{13}$."


# --- verl: custom_reward_function, called by NaiveRewardManager with keywords ---------------------

def _naive_reward_manager_call(compute_score, data_source, response_str, ground_truth, extra_info):
    """What verl's NaiveRewardManager does per response (keywords, dict result)."""
    score = compute_score(data_source=data_source, solution_str=response_str, ground_truth=ground_truth,
                          extra_info=extra_info)
    if isinstance(score, dict):
        return score["score"], {k: v for k, v in score.items()}
    return score, {}


def test_verl_compute_score():
    reward, extra = _naive_reward_manager_call(verl.compute_score, "lighteval/MATH", GOOD, "12", {"index": 3})
    assert reward == 1.0 and extra == {"score": 1.0, "acc": True, "pred": "12"}
    reward, extra = _naive_reward_manager_call(verl.compute_score, "openai/gsm8k", BAD, "12", None)
    assert reward == 0.0 and extra["acc"] is False and extra["pred"] == "13"
    reward, extra = _naive_reward_manager_call(verl.compute_score, "x", "no answer at all here", "12", None)
    assert (reward, extra["acc"], extra["pred"]) == (0.0, False, "")
    # Positional, as in verl's examples, and a non-string / several acceptable golds.
    assert verl.compute_score("gsm8k", GOOD, 12)["score"] == 1.0
    assert verl.compute_score("gsm8k", GOOD, ["11", "12"])["acc"] is True
    # reward_kwargs from the config arrive through functools.partial, as in verl's loader.
    signed = functools.partial(verl.compute_score, reward="signed")
    assert _naive_reward_manager_call(signed, "math", BAD, "12", None)[0] == -1.0
    with pytest.raises(ValueError, match="reward"):
        verl.compute_score("math", GOOD, "12", reward="ternary")


def _verl_call_with_kwargs(raw_fn, extra_kwargs, *args, **kwargs):
    """verl's loader (`verl.trainer.ppo.reward._call_with_kwargs`): config kwargs win over call kwargs."""
    return raw_fn(*args, **{**kwargs, **extra_kwargs})


def test_verl_ignores_keywords_it_adds_between_releases():
    # verl 0.9's reward loop with a reward model enabled (issue 20, point 1: TypeError before).
    fn = functools.partial(_verl_call_with_kwargs, verl.compute_score, {"reward": "signed"})
    extra = {"reward_router_address": "127.0.0.1:8000", "reward_model_tokenizer": object(), "next_release_kw": 1}
    info = {"index": 0, "num_turns": None, "rollout_reward_scores": {}}
    assert fn(data_source="math", solution_str=GOOD, ground_truth="12", extra_info=info, **extra)["score"] == 1.0
    assert fn(data_source="math", solution_str=BAD, ground_truth="12", extra_info=info, **extra)["score"] == -1.0
    out = verl.compute_score_batch(["math"] * 2, [GOOD, BAD], ["12", "12"], [{}, {}], **extra)
    assert [o["score"] for o in out] == [1.0, 0.0]
    # Bad values of rlverify's own options are still refused.
    with pytest.raises(ValueError, match="last_number"):
        verl.compute_score("math", GOOD, "12", last_number="sometimes", reward_router_address="x")
    with pytest.raises(ValueError, match="reward"):
        verl.compute_score_batch(["math"], [GOOD], ["12"], reward="ternary", reward_router_address="x")


def test_verl_missing_gold_is_invalid_not_the_text_none():
    assert verl.compute_score("math", "so \\boxed{None}", None) == {"score": 0.0, "acc": False, "pred": ""}
    assert verl.compute_score_batch(["math"], [GOOD], [None])[0]["acc"] is False


def test_verl_batch_reward_manager():
    out = verl.compute_score_batch(data_sources=["math"] * 3, solution_strs=[GOOD, BAD, GOOD],
                                   ground_truths=["12", "12", "13"], extra_infos=[None] * 3)
    assert [o["score"] for o in out] == [1.0, 0.0, 0.0]
    assert [o["pred"] for o in out] == ["12", "13", "12"]
    with pytest.raises(ValueError, match="length"):
        verl.compute_score_batch(["math"], [GOOD, BAD], ["12"])


# --- TRL: GRPOTrainer reward_funcs ----------------------------------------------------------------

def _grpo_call(fn, prompts, completions, **columns):
    """What GRPOTrainer does: keywords, dataset columns (minus prompt) as **kwargs."""
    return fn(prompts=prompts, completions=completions, completion_ids=[[1, 2]] * len(completions),
              trainer_state=None, **columns)


def test_trl_standard_completions():
    fn = trl.reward_function(gold_column="answer")
    rewards = _grpo_call(fn, ["What is 3*4?"] * 3, [GOOD, BAD, "I give up"], answer=["12", "12", "12"],
                         difficulty=["easy"] * 3)
    assert rewards == [1.0, 0.0, 0.0]
    assert fn.__name__ == "rlverify_answer"


def test_trl_conversational_completions_and_ungradable_rows():
    fn = trl.reward_function("solution", name="math_acc", reward="signed")
    prompts = [[{"role": "user", "content": "What is 3*4?"}]] * 5
    completions = [
        [{"role": "assistant", "content": GOOD}],
        [{"role": "assistant", "content": BAD}],
        [{"role": "assistant", "content": [{"type": "text", "text": GOOD}]}],
        [{"role": "assistant", "content": GOOD}],
        [{"role": "assistant", "content": GOOD}],
    ]
    rewards = _grpo_call(fn, prompts, completions, solution=["12", "12", "12", None, "  "])
    assert rewards == [1.0, -1.0, 1.0, None, None]
    assert fn.__name__ == "math_acc"
    assert trl.accuracy_reward(prompts=["q"], completions=[GOOD], solution=["12"]) == [1.0]


def test_trl_logs_answer_and_status_where_trl_lets_it():
    """TRL 1.x passes `log_extra` and `log_metric`: the completions table shows why a reward is 0."""
    logged = {}
    fn = trl.reward_function("answer")
    rewards = fn(prompts=["q"] * 4, completions=[GOOD, BAD, "", GOOD], completion_ids=[[1]] * 4,
                 trainer_state=None, answer=["12", "12", "12", None],
                 log_extra=lambda column, values: logged.setdefault(column, []).extend(values),
                 log_metric=lambda name, value: None)
    assert rewards == [1.0, 0.0, 0.0, None]
    assert logged == {"rlverify_answer_extracted": ["12", "13", "", ""],
                      "rlverify_answer_status": ["correct", "wrong", "no_answer", "no_gold"]}
    # Without `log_extra` (older TRL) nothing is logged and nothing fails.
    assert fn(prompts=["q"], completions=[GOOD], answer=["12"]) == [1.0]


def test_trl_errors():
    fn = trl.reward_function("answer")
    with pytest.raises(ValueError, match="answer") as e:
        _grpo_call(fn, ["q"], [GOOD], solution=["12"], log_extra=print, log_metric=print)
    assert "log_extra" not in str(e.value) and "solution" in str(e.value)
    with pytest.raises(ValueError, match="last_number"):
        trl.reward_function("answer", last_number="sometimes")
    with pytest.raises(ValueError, match="gold_column"):
        trl.reward_function("")


# --- OpenRLHF: --remote_rm_url reward_func.py -----------------------------------------------------

def _load_like_openrlhf(path):
    """OpenRLHF loads `reward_func` from the file given to --remote_rm_url."""
    spec = importlib.util.spec_from_file_location("reward_func", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.reward_func


def _values(x):
    return x.tolist() if hasattr(x, "tolist") else list(x)


def test_openrlhf_reward_func(tmp_path):
    path = tmp_path / "reward_func.py"
    path.write_text("from rlverify.openrlhf import reward_func\n")
    reward_func = _load_like_openrlhf(str(path))
    prompt = "<|im_start|>user\nWhat is 3*4? Example: \\boxed{13}<|im_end|>\n<|im_start|>assistant\n"
    queries = [prompt + GOOD + "<|im_end|>", prompt + BAD + "<|im_end|>", prompt + "hmm"]
    out = reward_func(queries, [prompt] * 3, ["12", "12", "12"])
    assert set(out) == {"rewards", "scores", "extra_logs"}
    assert _values(out["rewards"]) == [1.0, 0.0, 0.0]  # the prompt's \boxed{13} is not the answer
    assert _values(out["scores"]) == [1.0, 0.0, 0.0]
    assert _values(out["extra_logs"]["rlverify_accuracy"]) == [1.0, 0.0, 0.0]
    try:
        import torch
    except ImportError:
        assert isinstance(out["rewards"], list)
    else:
        assert isinstance(out["rewards"], torch.Tensor) and out["rewards"].dtype == torch.float32
    # Ray ships the function to its workers by pickling it.
    assert pickle.loads(pickle.dumps(reward_func)) is reward_func
    signed = openrlhf.make_reward_func(reward="signed")
    assert _values(signed(queries, [prompt] * 3, ["12", "12", "12"])["rewards"]) == [1.0, -1.0, -1.0]
    with pytest.raises(ValueError, match="length"):
        reward_func(queries, [prompt], ["12"])
    with pytest.raises(ValueError, match="reward"):
        openrlhf.make_reward_func(reward="ternary")


def test_adapters_agree_with_the_core():
    for gold, response in [("12", GOOD), ("12", BAD), ("\\frac12", "so \\boxed{0.5}")]:
        want = rlverify.score(gold, response).reward
        assert verl.compute_score("math", response, gold)["score"] == want
        assert trl.reward_function("g")(prompts=["p"], completions=[response], g=[gold]) == [want]
        assert _values(openrlhf.reward_func([response], [""], [gold])["rewards"]) == [want]
