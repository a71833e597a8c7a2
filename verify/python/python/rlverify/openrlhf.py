"""OpenRLHF's custom reward function backed by rlverify.

Write a one-line file and hand it to OpenRLHF as the remote reward (``--reward.remote_url
reward_func.py --data.label_key answer`` since OpenRLHF 0.10; ``--remote_rm_url reward_func.py
--label_key answer`` before)::

    # reward_func.py
    from rlverify.openrlhf import reward_func

OpenRLHF calls ``reward_func(queries, prompts, labels)``: ``queries`` are the decoded prompt +
response texts, ``prompts`` the prompts and ``labels`` the gold answers. The response is the query
after its prompt. It returns ``{"rewards": tensor, "scores": tensor, "extra_logs": {...}}``:
``rewards`` for the advantages, ``scores`` (1/0 correctness) for dynamic filtering, and the
accuracy in ``extra_logs``. torch is imported when first needed; without torch the same dict
holds lists. A missing label (``None``) is rlverify's ``invalid_gold``: reward 0.
``make_reward_func(extra_logs=False)`` leaves ``extra_logs`` out.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence

from . import _rlverify

__all__ = ["reward_func", "make_reward_func"]


def _response(query: str, prompt: Optional[str]) -> str:
    """The response part of ``query`` (prompt + response)."""
    if prompt:
        if query.startswith(prompt):
            return query[len(prompt):]
        at = query.rfind(prompt)
        if at >= 0:
            return query[at + len(prompt):]
    return query


def _as_tensor(values: List[float]) -> Any:
    try:
        import torch
    except ImportError:
        return values
    return torch.tensor(values, dtype=torch.float32)


def _grade(queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any], threads: Optional[int],
           options: Dict[str, Any], extra_logs: bool = True) -> Dict[str, Any]:
    if not (len(queries) == len(prompts) == len(labels)):
        raise ValueError(f"queries, prompts and labels differ in length: {len(queries)}, {len(prompts)}, {len(labels)}")
    responses = [_response(q, p) for q, p in zip(queries, prompts)]
    golds = ["" if g is None else str(g) for g in labels]
    scores = _rlverify.score_batch(golds, responses, threads, **options)
    correct = [1.0 if s.correct else 0.0 for s in scores]
    out = {"rewards": _as_tensor([float(s.reward) for s in scores]), "scores": _as_tensor(correct)}
    if extra_logs:
        out["extra_logs"] = {"rlverify_accuracy": _as_tensor(correct)}
    return out


def reward_func(queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any], **_: Any) -> Dict[str, Any]:
    """Grade ``queries`` (prompt + response) against ``labels`` with rlverify's defaults (1/0 reward)."""
    return _grade(queries, prompts, labels, None, {})


def make_reward_func(threads: Optional[int] = None, extra_logs: bool = True,
                     **options: Any) -> Callable[..., Dict[str, Any]]:
    """An OpenRLHF ``reward_func`` with rlverify options (``reward="signed"``, ``format_reward=...``).

    ``extra_logs=False`` leaves ``extra_logs`` out of the result (OpenRLHF 0.8.x reads each log
    with ``.item()`` and fails on anything but one-sample batches).
    """
    _rlverify.score("0", "0", **options)  # validates the options

    def reward_func(queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any], **_: Any) -> Dict[str, Any]:
        return _grade(queries, prompts, labels, threads, options, extra_logs)

    return reward_func
