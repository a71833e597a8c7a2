"""verl reward functions backed by rlverify.

In the trainer config (``custom_reward_function``)::

    custom_reward_function.path=my_reward.py      # my_reward.py: from rlverify.verl import compute_score
    custom_reward_function.name=compute_score
    # optional rlverify options: +custom_reward_function.reward_kwargs.reward=signed

verl calls ``compute_score(data_source=..., solution_str=..., ground_truth=..., extra_info=...,
**reward_kwargs)`` once per response (NaiveRewardManager) and uses ``result["score"]`` as the
reward; the other keys (``acc``, ``pred``) go to ``reward_extra_info``, as with verl's own math
scorers. ``compute_score_batch`` is the same for verl's BatchRewardManager (plural argument names,
one list back), scored in parallel with the GIL released.

verl adds keyword arguments between releases (0.9 passes ``reward_router_address`` and
``reward_model_tokenizer`` when a reward model is enabled): keywords that are not rlverify options
are accepted and ignored; a bad value of an rlverify option still raises ValueError. A missing
gold (``None``) scores 0, never a parse of the text ``"None"``.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from . import _rlverify

__all__ = ["compute_score", "compute_score_batch"]


def _golds(ground_truth: Any) -> List[str]:
    """A gold as a list of acceptable answers (verl datasets sometimes store several); a missing
    one is the empty gold, which rlverify scores ``invalid_gold``."""
    if ground_truth is None:
        return [""]
    if isinstance(ground_truth, str):
        return [ground_truth]
    if isinstance(ground_truth, (list, tuple)) or type(ground_truth).__name__ == "ndarray":
        return ["" if g is None else str(g) for g in ground_truth] or [""]
    return [str(ground_truth)]


def _options(kwargs: Dict[str, Any]) -> Dict[str, Any]:
    """The rlverify options among verl's keyword arguments; the others are verl's and ignored."""
    return {k: v for k, v in kwargs.items() if k in _rlverify.OPTIONS}


def _result(scores: Sequence[_rlverify.Score]) -> Dict[str, Any]:
    best = max(scores, key=lambda s: (s.correct, s.reward)) if scores else None
    if best is None:
        return {"score": 0.0, "acc": False, "pred": ""}
    return {"score": float(best.reward), "acc": bool(best.correct), "pred": best.extracted or ""}


def compute_score(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Optional[dict] = None,
                  **kwargs: Any) -> Dict[str, Any]:
    """Score one response: ``{"score": reward, "acc": correct, "pred": extracted answer}``.

    rlverify's options (``reward``, ``extract``, ``last_number``, ``truncated``,
    ``format_reward``) come as keywords (verl's ``reward_kwargs``); any other keyword verl passes
    (``reward_router_address``, ...) is ignored, as are ``data_source`` and ``extra_info``.
    """
    options = _options(kwargs)
    return _result([_rlverify.score(g, solution_str, **options) for g in _golds(ground_truth)])


def compute_score_batch(data_sources: Sequence[Any], solution_strs: Sequence[str], ground_truths: Sequence[Any],
                        extra_infos: Optional[Sequence[Any]] = None, threads: Optional[int] = None,
                        **kwargs: Any) -> List[Dict[str, Any]]:
    """Score many responses at once (verl's BatchRewardManager convention), in order; keywords as
    for :func:`compute_score`."""
    options = _options(kwargs)
    if len(solution_strs) != len(ground_truths):
        raise ValueError(f"solution_strs and ground_truths differ in length: {len(solution_strs)} and {len(ground_truths)}")
    owners: List[int] = []
    golds: List[str] = []
    responses: List[str] = []
    for i, (response, gt) in enumerate(zip(solution_strs, ground_truths)):
        for g in _golds(gt):
            owners.append(i)
            golds.append(g)
            responses.append(response)
    scores = _rlverify.score_batch(golds, responses, threads, **options)
    per_item: List[List[_rlverify.Score]] = [[] for _ in solution_strs]
    for i, s in zip(owners, scores):
        per_item[i].append(s)
    return [_result(s) for s in per_item]
