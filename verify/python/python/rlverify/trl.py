"""TRL reward functions backed by rlverify (``GRPOTrainer(reward_funcs=...)``).

::

    from rlverify.trl import reward_function
    trainer = GRPOTrainer(model=..., reward_funcs=[reward_function(gold_column="answer")], ...)

TRL calls a reward function as ``f(prompts=..., completions=..., completion_ids=..., **columns)``
where ``columns`` holds the batch's dataset columns (one value per completion). The completions
are strings (standard datasets) or chat messages (conversational ones: a list of
``{"role": ..., "content": ...}`` per completion, graded on the last assistant message). The gold
answer is read from the column you name. A row without a gold answer (``None`` or blank) or
without completion text gets ``None``, which TRL skips for that reward function.

Where the installed TRL passes ``log_extra`` (TRL 1.x), the function also logs, per completion,
the extracted answer and rlverify's status (``correct``, ``wrong``, ``no_answer``, ``ambiguous``,
``invalid_gold``, ...) as the columns ``<name>_extracted`` and ``<name>_status`` of the completions
table, so a reward of 0 says why.
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional

from . import _rlverify

__all__ = ["reward_function", "accuracy_reward"]

#: Keywords GRPOTrainer passes besides the dataset columns.
_TRL_KEYWORDS = ("completion_ids", "trainer_state", "log_extra", "log_metric", "environments")


def _completion_text(completion: Any) -> Optional[str]:
    """The text of a completion: a string, or the last assistant message of a chat."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    if not isinstance(completion, (list, tuple)):
        return None
    messages = [m for m in completion if isinstance(m, dict)]
    assistant = [m for m in messages if m.get("role", "assistant") == "assistant"]
    if not assistant:
        return None
    content = assistant[-1].get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        # Multimodal parts: [{"type": "text", "text": "..."}, ...].
        texts = [p.get("text") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "".join(texts) if texts else None
    return None


def reward_function(gold_column: str = "solution", *, name: Optional[str] = None, threads: Optional[int] = None,
                    **options: Any) -> Callable[..., List[Optional[float]]]:
    """A TRL reward function that grades completions against the dataset column ``gold_column``.

    ``options`` are rlverify's (``reward``, ``last_number``, ``truncated``, ``format_reward``) and
    are checked now: a bad value raises ValueError here, not in the middle of training. ``name``
    is the function's ``__name__``, which TRL logs as ``rewards/<name>``.
    """
    if not isinstance(gold_column, str) or not gold_column:
        raise ValueError("gold_column: must be a non-empty column name")
    _rlverify.score("0", "0", **options)  # validates the options

    def reward(prompts: Any = None, completions: Any = None, **kwargs: Any) -> List[Optional[float]]:
        if completions is None:
            raise ValueError("completions: TRL passes the batch's completions; got None")
        if gold_column not in kwargs:
            columns = sorted(k for k in kwargs if k not in _TRL_KEYWORDS)
            raise ValueError(f"gold_column: the batch has no column '{gold_column}' (columns: {columns})")
        golds = kwargs[gold_column]
        if len(golds) != len(completions):
            raise ValueError(f"{gold_column}: {len(golds)} values for {len(completions)} completions")
        rows, gs, rs = [], [], []
        for i, (gold, completion) in enumerate(zip(golds, completions)):
            text = _completion_text(completion)
            gold_text = None if gold is None else str(gold)
            if text is None or gold_text is None or not gold_text.strip():
                continue
            rows.append(i)
            gs.append(gold_text)
            rs.append(text)
        out: List[Optional[float]] = [None] * len(completions)
        answers: List[str] = [""] * len(completions)
        statuses: List[str] = ["no_gold"] * len(completions)
        for i, s in zip(rows, _rlverify.score_batch(gs, rs, threads, **options)):
            out[i] = float(s.reward)
            answers[i] = s.extracted or ""
            statuses[i] = s.status
        log_extra = kwargs.get("log_extra")
        if callable(log_extra):
            log_extra(f"{reward.__name__}_extracted", answers)
            log_extra(f"{reward.__name__}_status", statuses)
        return out

    reward.__name__ = name or f"rlverify_{gold_column}"
    reward.__qualname__ = reward.__name__
    reward.__doc__ = f"rlverify accuracy reward against the dataset column '{gold_column}'."
    return reward


#: Accuracy reward against the ``solution`` column (the column TRL's own ``accuracy_reward`` reads).
accuracy_reward = reward_function("solution", name="rlverify_accuracy")
