"""A drop-in for math-verify's ``parse`` and ``verify``, backed by rlverify.

Switch existing code with one line::

    # from math_verify import parse, verify
    from rlverify.compat import parse, verify

    gold = parse("$\\frac{1}{2}$")
    answer = parse(model_output)
    reward = float(verify(gold, answer))   # gold first, as in math-verify

As in math-verify, :func:`parse` returns a list: ``[Answer, str]`` (the parsed answer and its
text), or ``[]`` when the text has no answer. :class:`Answer` keeps the text it came from, so
:func:`verify` runs the whole rlverify pipeline on it (the same verdict as
``rlverify.verify(gold_text, model_output)``). Everything returned prints, compares, hashes and
pickles; no call uses signals or timeouts, so it works in any thread and process. math-verify's
tuning arguments (``extraction_config``, ``float_rounding``, ``timeout_seconds``, ...) are
accepted and ignored; rlverify's own options (``reward``, ``last_number``, ``truncated``) may be
given to :func:`verify` as keywords.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Union

from . import _rlverify

__all__ = ["Answer", "parse", "verify"]


@dataclass(frozen=True)
class Answer:
    """An answer found by :func:`parse`: the extracted ``answer`` and the ``text`` it came from."""

    answer: str
    text: str

    def __str__(self) -> str:
        return self.answer


def parse(pred: str, extraction_config: Any = None, fallback_mode: str = "first_match",
          extraction_mode: str = "any_match", parsing_timeout: Any = None,
          raise_on_error: bool = False, **_ignored: Any) -> List[Union[Answer, str]]:
    """Extract the final answer of ``pred``: ``[Answer, answer_text]``, or ``[]`` when none.

    A text with no explicit answer falls back to its last number, as math-verify's does.
    """
    if not isinstance(pred, str):
        raise TypeError(f"parse: pred must be a str, got {type(pred).__name__}")
    found = _rlverify.extract(pred) or _rlverify.extract(pred, last_number=True)
    if found is None:
        return []
    return [Answer(found, pred), found]


def _text_of(x: Any) -> Optional[str]:
    """The source text of a parse() result, an Answer, or a plain string."""
    if isinstance(x, Answer):
        return x.text
    if isinstance(x, str):
        return x
    if isinstance(x, (list, tuple)):
        for item in x:
            if isinstance(item, Answer):
                return item.text
        for item in x:
            if isinstance(item, str):
                return item
        return None
    if x is None:
        return None
    # A number or a sympy expression written by hand: compare its printed form.
    return str(x)


def verify(gold: Any, target: Any, float_rounding: int = 6, numeric_precision: int = 15,
           strict: bool = True, allow_set_relation_comp: bool = False, timeout_seconds: Any = None,
           raise_on_error: bool = False, **options: Any) -> bool:
    """True when ``target`` (a :func:`parse` result, an :class:`Answer` or a text) equals ``gold``.

    Gold first, as in math-verify. An empty parse on either side is False. Like math-verify, it
    reads an answer without a marker (the last expression or number): ``extract="lenient"`` is
    the default here, where rlverify's own functions are strict (a reward should use those).
    """
    g, t = _text_of(gold), _text_of(target)
    if g is None or t is None:
        return False
    options.setdefault("extract", "lenient")
    return _rlverify.verify(g, t, **options)
