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
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from . import _rlverify

__all__ = ["compute_score", "compute_score_batch"]


def _golds(ground_truth: Any) -> List[str]:
    """A gold as a list of acceptable answers (verl datasets sometimes store several)."""
    if isinstance(ground_truth, str):
        return [ground_truth]
    if isinstance(ground_truth, (list, tuple)) or type(ground_truth).__name__ == "ndarray":
        return [str(g) for g in ground_truth]
    return [str(ground_truth)]


def _result(scores: Sequence[_rlverify.Score]) -> Dict[str, Any]:
    best = max(scores, key=lambda s: (s.correct, s.reward)) if scores else None
    if best is None:
        return {"score": 0.0, "acc": False, "pred": ""}
    return {"score": float(best.reward), "acc": bool(best.correct), "pred": best.extracted or ""}


def compute_score(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Optional[dict] = None,
                  **options: Any) -> Dict[str, Any]:
    """Score one response: ``{"score": reward, "acc": correct, "pred": extracted answer}``.

    ``options`` are rlverify's (``reward``, ``last_number``, ``truncated``, ``format_reward``);
    ``data_source`` and ``extra_info`` are accepted and not used (every source is math).
    """
    return _result([_rlverify.score(g, solution_str, **options) for g in _golds(ground_truth)])


def compute_score_batch(data_sources: Sequence[Any], solution_strs: Sequence[str], ground_truths: Sequence[Any],
                        extra_infos: Optional[Sequence[Any]] = None, threads: Optional[int] = None,
                        **options: Any) -> List[Dict[str, Any]]:
    """Score many responses at once (verl's BatchRewardManager convention), in order."""
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
