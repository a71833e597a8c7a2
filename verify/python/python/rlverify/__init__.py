"""rlverify: fast, exact, signal-free math answer verification for RL with verifiable rewards.

>>> import rlverify
>>> rlverify.verify("1/2", r"so \\boxed{0.5}")
True
>>> rlverify.score("42", "The answer is 41.").status
'wrong'

The core (extraction, LaTeX parsing, exact equivalence, bounded cost) is the Rust library of the
`rlverify` CLI; every call releases the GIL, uses no signals and is safe from any thread and in
forked or spawned worker processes. Options are the flags of `rlverify score`, as keywords:

- ``reward="binary"`` (1/0) or ``"signed"`` (1/-1);
- ``last_number="auto"`` (fall back to the last number when the gold is a plain number),
  ``"always"`` or ``"never"``;
- ``truncated="no-answer"`` (a response cut off mid-derivation answers nothing) or ``"lenient"``;
- ``format_reward=None`` (off), ``True`` (weight 0.5) or a weight: ``reward = accuracy + W *
  format_ok`` for ``<think>..</think><answer>..</answer>`` responses.

Modules: :mod:`rlverify.compat` (a drop-in for ``math_verify.parse``/``verify``),
:mod:`rlverify.verl`, :mod:`rlverify.trl` and :mod:`rlverify.openrlhf` (reward functions in each
trainer's calling convention).
"""

from ._rlverify import OPTIONS, Score, __version__, extract, score, score_batch, verify

__all__ = ["OPTIONS", "Score", "__version__", "extract", "score", "score_batch", "verify"]
