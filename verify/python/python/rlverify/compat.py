"""A drop-in for math-verify's ``parse`` and ``verify``, backed by rlverify.

Switch existing code with one line::

    # from math_verify import LatexExtractionConfig, parse, verify
    from rlverify.compat import LatexExtractionConfig, parse, verify

    gold = parse("$\\frac{1}{2}$")
    answer = parse(model_output)
    reward = float(verify(gold, answer))   # gold first, as in math-verify

As in math-verify, :func:`parse` returns a list: ``[Answer, str]`` (the parsed answer and its
text), or ``[]`` when the text has no answer. :class:`Answer` keeps the text it came from, so
:func:`verify` runs the whole rlverify pipeline on it (the same verdict as
``rlverify.verify(gold_text, model_output)``); an answer that stands for a number converts with
``float()``, ``int()`` and ``complex()``. Everything returned prints, compares, hashes and pickles;
no call uses signals or timeouts, so it works in any thread and process.

math-verify's configuration classes import from here and map where rlverify has the same switch
(``try_extract_without_anchor``: read answers without a marker; ``ExprExtractionConfig``: fall back
to the last number); what has no counterpart (``boxed_match_priority``, ``normalization_config``,
``StringExtractionConfig.strings``, ``float_rounding``, ``timeout_seconds``, ...) is accepted and
ignored, with one warning per setting that differs from math-verify's default. rlverify's own
options (``reward``, ``last_number``, ``truncated``) may be given to :func:`verify` as keywords.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, fields
from typing import Any, List, Literal, Optional, Sequence, Tuple, Union

from . import _rlverify

__all__ = [
    "Answer",
    "ExprExtractionConfig",
    "LatexExtractionConfig",
    "LatexNormalizationConfig",
    "StringExtractionConfig",
    "parse",
    "verify",
]


@dataclass(frozen=True)
class LatexNormalizationConfig:
    """math-verify's ``LatexNormalizationConfig``: accepted; rlverify normalizes LaTeX its own way."""

    basic_latex: bool = True
    units: bool = False
    malformed_operators: bool = False
    nits: bool = False
    boxed: Literal["all", "last", "none"] = "all"
    equations: bool = False


def _latex_default_normalization() -> LatexNormalizationConfig:
    return LatexNormalizationConfig(basic_latex=True, units=True, malformed_operators=True, nits=True, boxed="all",
                                    equations=False)


@dataclass(frozen=True)
class LatexExtractionConfig:
    """math-verify's ``LatexExtractionConfig``.

    ``try_extract_without_anchor=True`` (the default) reads LaTeX answers without a marker
    (rlverify's ``extract="lenient"``); False reads only committed answers (``"strict"``).
    ``boxed_match_priority`` and ``normalization_config`` have no counterpart: rlverify always
    takes the last committed answer, a box included.
    """

    try_extract_without_anchor: bool = True
    boxed_match_priority: int = 50
    normalization_config: LatexNormalizationConfig = field(default_factory=_latex_default_normalization)


@dataclass(frozen=True)
class ExprExtractionConfig:
    """math-verify's ``ExprExtractionConfig``: plain expressions and numbers.

    With ``try_extract_without_anchor=True`` (the default) a text without any other answer
    answers its last number (rlverify's ``last_number`` fallback).
    """

    try_extract_without_anchor: bool = True


@dataclass(frozen=True)
class StringExtractionConfig:
    """math-verify's ``StringExtractionConfig`` (choice letters).

    rlverify reads a choice named in the last line whatever the letter set, so ``strings`` and
    ``lowercase`` have no counterpart; ``try_extract_without_anchor`` maps as for LaTeX.
    """

    strings: Tuple[str, ...] = ("A", "B", "C", "D")
    try_extract_without_anchor: bool = True
    lowercase: bool = True


_DEFAULT_CONFIG = (LatexExtractionConfig(), ExprExtractionConfig())
_warned: set = set()


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warnings.warn(f"rlverify.compat: {message}", UserWarning, stacklevel=3)


def _unmapped(config: Any, mapped: Sequence[str]) -> None:
    """Warns once per setting of ``config`` that differs from math-verify's default and does not map."""
    default = type(config)()
    for f in fields(config):
        if f.name not in mapped and getattr(config, f.name) != getattr(default, f.name):
            _warn_once(f"{type(config).__name__}.{f.name}",
                       f"{type(config).__name__}.{f.name} has no rlverify counterpart and is ignored")


def _extraction(extraction_config: Any) -> Tuple[str, bool]:
    """The rlverify extraction mode and last-number fallback that math-verify's configs ask for."""
    if extraction_config is None:
        extraction_config = _DEFAULT_CONFIG
    if not isinstance(extraction_config, (list, tuple)):
        extraction_config = [extraction_config]
    lenient, last_number = False, False
    for config in extraction_config:
        if isinstance(config, ExprExtractionConfig):
            last_number = last_number or config.try_extract_without_anchor
        elif isinstance(config, (LatexExtractionConfig, StringExtractionConfig)):
            lenient = lenient or config.try_extract_without_anchor
            _unmapped(config, ["try_extract_without_anchor"])
        elif type(config).__name__ in ("LatexExtractionConfig", "ExprExtractionConfig", "StringExtractionConfig"):
            # math-verify's own classes: read the same fields.
            anchorless = bool(getattr(config, "try_extract_without_anchor", True))
            if type(config).__name__ == "ExprExtractionConfig":
                last_number = last_number or anchorless
            else:
                lenient = lenient or anchorless
        else:
            raise TypeError(f"parse: extraction_config items must be extraction configs, got {type(config).__name__}")
    return ("lenient" if lenient else "strict"), last_number


@dataclass(frozen=True)
class Answer:
    """An answer found by :func:`parse`: the extracted ``answer`` and the ``text`` it came from.

    An answer that stands for a number (``0.5``, ``\\frac{1}{2}``, ``2\\sqrt{2}``, ``50\\%``,
    ``3+4i``) converts with ``float()``, ``int()`` (truncating, exact for integers) and
    ``complex()``; anything else (a set, an interval, an equation, text) raises TypeError, as a
    sympy object that is not a number does.
    """

    answer: str
    text: str

    def __str__(self) -> str:
        return self.answer

    def _number(self, kind: str) -> Tuple[float, float, Optional[str]]:
        v = _rlverify.value(self.answer)
        if v is None:
            raise TypeError(f"cannot convert {self.answer!r} to {kind}: it does not stand for a number")
        return v

    def _real(self, kind: str) -> Tuple[float, Optional[str]]:
        re, im, exact = self._number(kind)
        if im != 0.0:
            raise TypeError(f"cannot convert the complex number {self.answer!r} to {kind}")
        return re, exact

    def __float__(self) -> float:
        return self._real("float")[0]

    def __int__(self) -> int:
        re, exact = self._real("int")
        return int(exact) if exact is not None else int(re)

    def __complex__(self) -> complex:
        re, im, _ = self._number("complex")
        return complex(re, im)


def parse(pred: str, extraction_config: Any = None, fallback_mode: str = "first_match",
          extraction_mode: str = "any_match", parsing_timeout: Any = None,
          raise_on_error: bool = False, **_ignored: Any) -> List[Union[Answer, str]]:
    """Extract the final answer of ``pred``: ``[Answer, answer_text]``, or ``[]`` when none.

    With math-verify's default configs (LaTeX and expressions, without anchors) an answer without
    a marker is read, and a text with no other answer falls back to its last number.
    """
    if not isinstance(pred, str):
        raise TypeError(f"parse: pred must be a str, got {type(pred).__name__}")
    mode, last_number = _extraction(extraction_config)
    found = _rlverify.extract(pred, extract=mode)
    if found is None and last_number:
        found = _rlverify.extract(pred, last_number=True, extract=mode)
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
